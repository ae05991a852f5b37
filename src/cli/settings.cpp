#include "cordon/settings.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>

namespace cordon {

namespace {

constexpr bool kProfile = true;
constexpr bool kCliOnly = false;

}  // namespace

// The option table, one entry per key in the order --help lists them: longer than a function
// should be, and clearer whole.
const std::vector<KeyInfo>& all_keys() {  // NOLINT(readability-function-size)
    using T = KeyType;
    // name, type, metavar, help, profile_ok, arity
    static const std::vector<KeyInfo> keys = {
        // filesystem
        {"workdir", T::String, "DIR",
         "the writable project root (default: current directory, or its git repository's top; 'none': nothing "
         "writable)",
         kProfile, 1},
        {"workdir-readonly", T::Bool, "", "show the workdir read-only (nothing writable)", kProfile, 0},
        {"rw", T::List, "PATH", "expose PATH read-write", kProfile, 1},
        {"ro", T::List, "PATH", "expose PATH read-only", kProfile, 1},
        {"hide", T::List, "PATH", "make PATH appear empty (directories) or empty and unreadable (files)", kProfile, 1},
        {"tmpfs", T::List, "PATH", "mount a private, size-bounded tmpfs on PATH", kProfile, 1},
        {"tmpfs-size", T::Size, "SIZE", "size bound of every tmpfs (default 1G)", kProfile, 1},
        {"protect", T::List, "RELPATH", "keep RELPATH inside the workdir read-only, even if it does not exist yet",
         kProfile, 1},
        {"protect-existing", T::List, "RELPATH", "keep RELPATH inside the workdir read-only if it exists", kProfile, 1},
        {"placeholder-content", T::PairList, "RELPATH TEXT",
         "what the placeholder of a missing protected file holds (default: nothing)", kProfile, 2},
        {"private-home", T::Bool, "", "replace HOME with an empty private directory", kProfile, 0},
        {"bind", T::Ops, "SRC DEST", "bind-mount host SRC on DEST read-write", kProfile, 2},
        {"bind-try", T::Ops, "SRC DEST", "like --bind, ignored if SRC does not exist", kProfile, 2},
        {"ro-bind", T::Ops, "SRC DEST", "bind-mount host SRC on DEST read-only", kProfile, 2},
        {"ro-bind-try", T::Ops, "SRC DEST", "like --ro-bind, ignored if SRC does not exist", kProfile, 2},
        {"dev-bind", T::Ops, "SRC DEST", "bind-mount host SRC on DEST, devices allowed", kProfile, 2},
        {"dev-bind-try", T::Ops, "SRC DEST", "like --dev-bind, ignored if SRC does not exist", kProfile, 2},
        {"proc", T::Ops, "DEST", "mount a fresh procfs on DEST", kProfile, 1},
        {"dev", T::Ops, "DEST", "mount a minimal /dev on DEST", kProfile, 1},
        {"dir", T::Ops, "DEST", "create directory DEST", kProfile, 1},
        {"symlink", T::Ops, "SRC DEST", "create symlink DEST pointing to SRC", kProfile, 2},
        {"remount-ro", T::Ops, "DEST", "remount DEST read-only", kProfile, 1},
        {"mount-tmpfs", T::Ops, "DEST",
         "mount an empty tmpfs on DEST, in order with the other primitives (bwrap's --tmpfs)", kProfile, 1},
        {"perms", T::Ops, "OCTAL", "mode of the next --dir or --mount-tmpfs (default 0755)", kProfile, 1},
        {"chdir", T::String, "DIR", "working directory inside the jail (default: the current directory)", kProfile, 1},
        // network and identity
        {"net", T::String, "none|host", "network: none (loopback only, default) or host", kProfile, 1},
        {"allow-host", T::List, "HOST[:PORT]",
         "let connections to HOST (a name, *.DOMAIN or an address range) on PORT (default 80 and 443) through the "
         "jail's network filter (repeatable)",
         kProfile, 1},
        {"ssh-agent", T::List, "HOST[:PORT]",
         "give the jail an SSH agent that signs only for sessions with HOST (its key from your known_hosts; PORT "
         "default 22), and let SSH to it through (repeatable; HOST,HOST... too)",
         kProfile, 1},
        {"ssh-agent-key", T::List, "FILE.pub", "the keys of your agent the jail's may use (repeatable; default: all)",
         kProfile, 1},
        {"uid", T::UInt, "N", "user id inside the jail (default: the caller's)", kProfile, 1},
        {"gid", T::UInt, "N", "group id inside the jail (default: the caller's)", kProfile, 1},
        {"hostname", T::String, "NAME", "hostname inside the jail", kProfile, 1},
        // environment
        {"clearenv", T::Bool, "", "start from an empty environment", kProfile, 0},
        {"setenv", T::PairList, "NAME VALUE", "set an environment variable", kProfile, 2},
        {"unsetenv", T::List, "NAME", "remove an environment variable", kProfile, 1},
        {"env-strip", T::List, "PATTERN", "remove variables whose name matches PATTERN (glob, any case)", kProfile, 1},
        {"env-strip-words", T::List, "WORD",
         "remove variables with WORD among their name's words (split at _, digits, case changes)", kProfile, 1},
        {"env-strip-except", T::List, "PATTERN",
         "names the env-strip rules leave (glob, any case; values still checked)", kProfile, 1},
        {"env-strip-except-plain", T::PairList, "PATTERN KIND",
         "names the env-strip rules leave when the value is plainly KIND: flag (a boolean, a number up to 999) or "
         "fingerprint (a PGP key's)",
         kProfile, 2},
        {"env-strip-url-passwords", T::Bool, "",
         "remove variables whose value is a URL with a password (scheme://user:password@host)", kProfile, 0},
        {"env-strip-secret-values", T::Bool, "",
         "remove variables whose value holds credentials: headers, private keys, tokens, JWTs, git's", kProfile, 0},
        {"env-pass", T::List, "NAME", "keep a variable that the environment rules would remove (any case)", kProfile,
         1},
        // limits
        {"memory", T::Size, "SIZE", "memory limit of the whole jail (cgroup v2 memory.max; swap off)", kProfile, 1},
        {"memory-swap", T::String, "SIZE|max", "swap the jail may use besides --memory (default 0)", kProfile, 1},
        {"pids", T::UInt, "N", "at most N processes and threads for the command (cgroup v2 pids.max)", kProfile, 1},
        {"cpus", T::String, "N.N", "CPU time limit in cores, e.g. 0.5 or 2 (cgroup v2 cpu.max)", kProfile, 1},
        {"limits", T::String, "required|best-effort", "a limit that cannot be applied: error (default) or warning",
         kProfile, 1},
        {"timeout", T::Duration, "DURATION", "kill the jail after DURATION (exit 124)", kProfile, 1},
        {"rlimit", T::List, "NAME=SOFT[:HARD]", "set a resource limit (core dumps are off unless set)", kProfile, 1},
        // security
        {"isolation", T::String, "auto|namespaces|landlock",
         "the jail: namespaces, or where they are refused a Landlock jail with a warning (default: auto)", kProfile, 1},
        {"allow-userns", T::Bool, "", "allow nested user namespaces (for root: then no xattr is written)", kProfile, 0},
        {"allow-ptrace", T::Bool, "", "allow ptrace and process_vm_* between jailed processes", kProfile, 0},
        {"cap-add", T::List, "CAP",
         "keep capability CAP inside the jail's user namespace (CAP_SETFCAP: no xattr is written)", kProfile, 1},
        {"new-session", T::Bool, "", "run the command in a new session (no controlling terminal)", kProfile, 0},
        {"as-pid-1", T::Bool, "", "the command is pid 1 of the jail, with no init of cordon's (as bubblewrap's)",
         kCliOnly, 0},
        {"argv0", T::String, "NAME", "argv[0] the command is given (COMMAND is still the program run)", kCliOnly, 1},
        {"seccomp", T::String, "NAME|PATH", "syscall policy (default: default)", kProfile, 1},
        {"require-layers", T::Bool, "", "exit 125, nothing run, unless the jail proves each layer from inside",
         kProfile, 0},
        // policy
        {"policy", T::List, "NAME|PATH", "command policy to check the command against (repeatable; default: default)",
         kProfile, 1},
        {"exec-checks", T::String, "auto|required|off",
         "check every exec inside the jail with the command policy (default: auto)", kProfile, 1},
        {"on-deny", T::String, "error|kill", "what an exec denied inside the jail does (default: error)", kProfile, 1},
        // output
        {"status-json", T::String, "PATH|fd:N", "write a JSON status object at the end", kProfile, 1},
        {"audit", T::String, "PATH|fd:N", "append every exec decision inside the jail as a JSON line", kProfile, 1},
    };
    return keys;
}

const KeyInfo* find_key(const std::string& name) {
    for (const auto& k : all_keys()) {
        if (name == k.name) return &k;
    }
    return nullptr;
}

MountRequest mount_request(const std::string& key, std::vector<std::string> args) {
    using K = MountRequest::Kind;
    MountRequest r;
    std::string_view name = key;
    r.optional = name.size() > 4 && name.substr(name.size() - 4) == "-try";
    if (r.optional) name.remove_suffix(4);
    for (K kind :
         {K::Bind, K::RoBind, K::DevBind, K::Proc, K::Dev, K::Dir, K::Symlink, K::RemountRo, K::Tmpfs, K::Perms}) {
        if (mount_request_name(kind) == name) r.kind = kind;
    }
    r.dest = std::move(args.back());
    if (args.size() == 2) r.source = std::move(args.front());
    return r;
}

void merge_layer(SettingsLayer& base, const SettingsLayer& top) {
    for (const auto& [key, value] : top.values) {
        auto it = base.values.find(key);
        if (it == base.values.end() || it->second.index() != value.index()) {
            base.values[key] = value;
        } else if (auto* list = std::get_if<std::vector<std::string>>(&it->second)) {
            const auto& add = std::get<std::vector<std::string>>(value);
            list->insert(list->end(), add.begin(), add.end());
        } else if (auto* pairs = std::get_if<std::vector<PairValue>>(&it->second)) {
            const auto& add = std::get<std::vector<PairValue>>(value);
            pairs->insert(pairs->end(), add.begin(), add.end());
        } else if (auto* ops = std::get_if<std::vector<OpValue>>(&it->second)) {
            const auto& add = std::get<std::vector<OpValue>>(value);
            ops->insert(ops->end(), add.begin(), add.end());
        } else {
            it->second = value;
        }
        if (auto w = top.where.find(key); w != top.where.end()) {
            base.where[key] = w->second;
        } else if (!std::holds_alternative<std::vector<std::string>>(value) &&
                   !std::holds_alternative<std::vector<PairValue>>(value) &&
                   !std::holds_alternative<std::vector<OpValue>>(value)) {
            base.where.erase(key);  // a scalar TOP replaced: no longer where BASE set it
        }
    }
    for (const auto& [key, origins] : top.item_where) {
        auto& dst = base.item_where[key];
        dst.insert(dst.end(), origins.begin(), origins.end());
    }
}

std::optional<std::string> get_string(const SettingsLayer& l, const std::string& key) {
    auto it = l.values.find(key);
    if (it == l.values.end()) return std::nullopt;
    if (auto* s = std::get_if<std::string>(&it->second)) return *s;
    return std::nullopt;
}

bool get_bool(const SettingsLayer& l, const std::string& key, bool fallback) {
    auto it = l.values.find(key);
    if (it == l.values.end()) return fallback;
    if (auto* b = std::get_if<bool>(&it->second)) return *b;
    return fallback;
}

std::optional<uint64_t> get_uint(const SettingsLayer& l, const std::string& key) {
    auto it = l.values.find(key);
    if (it == l.values.end()) return std::nullopt;
    if (auto* u = std::get_if<uint64_t>(&it->second)) return *u;
    return std::nullopt;
}

std::optional<Quantity> get_quantity(const SettingsLayer& l, const std::string& key) {
    auto it = l.values.find(key);
    if (it == l.values.end()) return std::nullopt;
    if (auto* q = std::get_if<Quantity>(&it->second)) return *q;
    return std::nullopt;
}

std::vector<std::string> get_list(const SettingsLayer& l, const std::string& key) {
    auto it = l.values.find(key);
    if (it == l.values.end()) return {};
    if (auto* v = std::get_if<std::vector<std::string>>(&it->second)) return *v;
    return {};
}

std::vector<PairValue> get_pairs(const SettingsLayer& l, const std::string& key) {
    auto it = l.values.find(key);
    if (it == l.values.end()) return {};
    if (auto* v = std::get_if<std::vector<PairValue>>(&it->second)) return *v;
    return {};
}

std::vector<OpValue> get_ops(const SettingsLayer& l) {
    auto it = l.values.find("ops");
    if (it == l.values.end()) return {};
    if (auto* v = std::get_if<std::vector<OpValue>>(&it->second)) return *v;
    return {};
}

Result<Quantity> parse_quantity(KeyType type, const std::string& text) {
    CORDON_ASSIGN_OR_RETURN(const uint64_t value, type == KeyType::Size ? parse_size(text) : parse_duration_ms(text));
    return Quantity{value, text};
}

Result<uint64_t> parse_size(const std::string& text) {
    if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) {
        return make_error("invalid size '" + text + "'", "expected a number with an optional K, M, G or T suffix");
    }
    size_t pos = 0;
    uint64_t n = 0;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
        uint64_t d = static_cast<uint64_t>(text[pos] - '0');
        if (n > (UINT64_MAX - d) / 10) return make_error("invalid size '" + text + "'", "too large");
        n = n * 10 + d;
        ++pos;
    }
    std::string suffix = text.substr(pos);
    if (suffix.size() == 2 && (suffix[1] == 'B' || suffix[1] == 'b')) suffix.pop_back();
    if (suffix == "iB") suffix.clear();
    int shift = 0;
    if (suffix.empty() || suffix == "B" || suffix == "b")
        shift = 0;
    else if (suffix == "K" || suffix == "k")
        shift = 10;
    else if (suffix == "M" || suffix == "m")
        shift = 20;
    else if (suffix == "G" || suffix == "g")
        shift = 30;
    else if (suffix == "T" || suffix == "t")
        shift = 40;
    else
        return make_error("invalid size '" + text + "'", "unknown suffix '" + suffix + "' (use K, M, G or T)");
    if (shift > 0 && n > (UINT64_MAX >> shift)) return make_error("invalid size '" + text + "'", "too large");
    return n << shift;
}

Result<uint64_t> parse_duration_ms(const std::string& text) {
    auto bad = [&](const std::string& why) {
        return make_error("invalid duration '" + text + "'", why + " (examples: 90s, 10m, 1h30m, 500ms)");
    };
    if (text.empty()) return bad("empty");
    uint64_t total = 0;
    size_t pos = 0;
    bool any = false;
    while (pos < text.size()) {
        if (!std::isdigit(static_cast<unsigned char>(text[pos]))) return bad("expected a number");
        uint64_t n = 0;
        while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
            n = n * 10 + static_cast<uint64_t>(text[pos] - '0');
            if (n > 100000000000ULL) return bad("too large");
            ++pos;
        }
        std::string unit;
        while (pos < text.size() && std::isalpha(static_cast<unsigned char>(text[pos]))) unit += text[pos++];
        uint64_t mult = 0;
        if (unit.empty() || unit == "s")
            mult = 1000;
        else if (unit == "ms")
            mult = 1;
        else if (unit == "m")
            mult = uint64_t{60} * 1000;
        else if (unit == "h")
            mult = uint64_t{3600} * 1000;
        else if (unit == "d")
            mult = uint64_t{24} * 3600 * 1000;
        else
            return bad("unknown unit '" + unit + "'");
        if (unit.empty() && (any || pos != text.size())) return bad("a unit is needed between numbers");
        if (n > (UINT64_MAX - total) / mult) return bad("too large");
        total += n * mult;
        any = true;
    }
    if (!any || total == 0) return bad("must be greater than zero");
    return total;
}

}  // namespace cordon

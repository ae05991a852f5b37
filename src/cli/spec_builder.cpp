#include "cordon/spec_builder.hpp"

#include <fcntl.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cordon/env_filter.hpp"
#include "cordon/fd.hpp"
#include "cordon/git_config.hpp"
#include "cordon/net.hpp"
#include "cordon/outcome.hpp"
#include "cordon/paths.hpp"
#include "cordon/profile.hpp"
#include "spec_steps.hpp"

namespace cordon {

HostInfo current_host() {
    HostInfo h;
    h.uid = ::getuid();
    h.gid = ::getgid();
    char buf[PATH_MAX];
    if (::getcwd(buf, sizeof buf)) h.cwd = buf;
    if (const char* home = std::getenv("HOME"); home && *home) {
        h.home = home;
    } else if (auto pw = passwd_entry(h.uid)) {
        h.home = pw->home;
    }
    // Like HOME, from the environment; without it, profile_vars() reads the password database
    // only if a profile uses ${USER}.
    if (const char* user = std::getenv("USER"); user && *user) h.user = user;
    for (char** e = environ; e && *e; ++e) h.environ.emplace_back(*e);
    return h;
}

namespace {

const std::vector<std::string>& system_dirs() {
    static const std::vector<std::string> dirs = {
        "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",  "/boot", "/dev", "/proc", "/sys",
        "/run", "/var", "/opt",  "/srv", "/root",  "/snap",  "/nix",    "/home", "/tmp",  "/mnt", "/media"};
    return dirs;
}

bool path_exists(const std::string& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0;
}

}  // namespace

bool is_unsafe_workdir(const std::string& dir, const std::string& home) {
    if (dir == "/") return true;
    if (!home.empty() && path_at_or_under(home, dir)) return true;  // HOME itself or an ancestor
    for (const auto& sys : system_dirs()) {
        if (dir == sys) return true;
    }
    // Everything below the system trees proper (but not project dirs under /home, /tmp, /srv, ...).
    static const std::vector<std::string> deep = {"/usr",    "/bin", "/sbin", "/lib", "/lib32", "/lib64",
                                                  "/libx32", "/etc", "/boot", "/dev", "/proc",  "/sys"};
    for (const auto& d : deep) {
        if (path_at_or_under(dir, d)) return true;
    }
    return false;
}

namespace {

// COMMAND, or -c SCRIPT through /bin/sh.
void set_command(const CliRequest& cli, Spec& s) {
    if (cli.script) {
        s.argv = {"/bin/sh", "-c", *cli.script};
        s.via_shell = true;
    } else {
        s.argv = cli.command;
    }
}

// --uid, --gid, --hostname, --isolation and --net.
Status set_identity_and_network(const SettingsLayer& merged, const HostInfo& host, Spec& s) {
    s.uid = static_cast<uid_t>(get_uint(merged, "uid").value_or(host.uid));
    s.gid = static_cast<gid_t>(get_uint(merged, "gid").value_or(host.gid));
    s.hostname = get_string(merged, "hostname");
    if (s.hostname && (s.hostname->empty() || s.hostname->size() > 64)) {
        return make_error("--hostname", "invalid value '" + *s.hostname + "': must be 1 to 64 characters");
    }
    const std::string isolation = get_string(merged, "isolation").value_or("auto");
    if (isolation == "auto")
        s.isolation = Isolation::Auto;
    else if (isolation == "namespaces")
        s.isolation = Isolation::Namespaces;
    else if (isolation == "landlock")
        s.isolation = Isolation::Landlock;
    else
        return make_error("--isolation", "invalid value '" + isolation + "': expected auto, namespaces or landlock");
    std::string net = get_string(merged, "net").value_or("none");
    if (net == "host")
        s.share_net = true;
    else if (net != "none")
        return make_error("--net", "invalid value '" + net + "': expected none or host");
    return {};
}

// --allow-host (and CORDON_TEST_RESOLVE). A --net given on the command line decides over the
// profiles' allow-host lists (none: no network at all; host: the whole network); given there
// together with --allow-host it is an error, and so is a profile's net = "host" under
// allow-host entries.
Status set_allowed_hosts(const CliRequest& cli, const SettingsLayer& merged, Spec& s) {
    const auto cli_net = get_string(cli.layer, "net");
    const auto cli_hosts = get_list(cli.layer, "allow-host");
    if (cli_net && !cli_hosts.empty()) {
        return make_error("--allow-host", "conflicts with --net " + *cli_net +
                                              ": --allow-host keeps the jail's own network and lets only the named "
                                              "hosts through");
    }
    const auto entries = get_list(merged, "allow-host");
    if (entries.empty() || cli_net) return {};
    if (s.share_net) {
        return make_error("--allow-host",
                          "a profile sets net = \"host\" and allow-host entries: drop one (--net host "
                          "on the command line gives the whole network)");
    }
    for (const auto& e : entries) {
        CORDON_ASSIGN_OR_RETURN(AllowHost rule, parse_allow_host(e));
        s.allow_hosts.push_back(std::move(rule));
    }
    if (proxy_port(s.allow_hosts) == 0)
        return make_error("--allow-host", "the entries take every port the proxy can use");
    return {};
}

// CORDON_TEST_RESOLVE=NAME=ADDRESS,...: the tests' names for their loopback servers, where the
// network is filtered (--allow-host, --ssh-agent).
Status set_test_resolve(const HostInfo& host, Spec& s) {
    if (s.allow_hosts.empty()) return {};
    for (const auto& kv : host.environ) {
        if (kv.rfind("CORDON_TEST_RESOLVE=", 0) != 0) continue;
        std::string_view list = std::string_view(kv).substr(20);
        while (!list.empty()) {
            const std::string_view item = list.substr(0, list.find(','));
            list.remove_prefix(std::min(list.size(), item.size() + 1));
            const size_t eq = item.find('=');
            auto name = normalize_host_name(item.substr(0, eq));
            if (eq == std::string_view::npos || !name) {
                return make_error("CORDON_TEST_RESOLVE",
                                  "invalid entry '" + std::string(item) + "': expected NAME=ADDRESS");
            }
            s.test_resolve.emplace_back(*name, std::string(item.substr(eq + 1)));
        }
    }
    return {};
}

// --allow-host: the proxy variables, both cases, for the tools that read them.
void set_proxy_environment(Spec& s) {
    if (s.allow_hosts.empty()) return;
    const std::string proxy = "http://127.0.0.1:" + std::to_string(proxy_port(s.allow_hosts));
    const std::pair<const char*, std::string> vars[] = {
        {"http_proxy", proxy},
        {"https_proxy", proxy},
        {"all_proxy", proxy},
        {"no_proxy", "localhost,127.0.0.1,::1"},
    };
    for (const auto& [lower_name, value] : vars) {
        std::string upper_name = lower_name;
        for (char& c : upper_name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        for (const std::string& name : {std::string(lower_name), upper_name}) {
            std::erase_if(s.env, [&](const std::string& kv) { return kv.rfind(name + "=", 0) == 0; });
            s.env.push_back(name + "=" + value);
        }
    }
}

// The path list KEY, absolute and normalised; --ro and --rw paths named on the command line
// must exist.
Result<std::vector<std::string>> normalized_paths(const CliRequest& cli, const SettingsLayer& merged,
                                                  const HostInfo& host, const std::string& key) {
    std::vector<std::string> out;
    auto cli_list = get_list(cli.layer, key);
    for (const auto& p : get_list(merged, key)) {
        if (p.empty()) return make_error("--" + key, "empty path");
        out.push_back(normalize_path(p, host.cwd));
    }
    for (const auto& p : cli_list) {
        std::string n = normalize_path(p, host.cwd);
        if ((key == "ro" || key == "rw") && !path_exists(n)) {
            return make_error("--" + key, "'" + p + "' does not exist");
        }
    }
    return out;
}

// --ro, --rw, --hide and --tmpfs.
Status set_paths(const CliRequest& cli, const SettingsLayer& merged, const HostInfo& host, Spec& s) {
    CORDON_ASSIGN_OR_RETURN(s.ro, normalized_paths(cli, merged, host, "ro"));
    CORDON_ASSIGN_OR_RETURN(s.rw, normalized_paths(cli, merged, host, "rw"));
    CORDON_ASSIGN_OR_RETURN(s.hide, normalized_paths(cli, merged, host, "hide"));
    CORDON_ASSIGN_OR_RETURN(s.tmpfs, normalized_paths(cli, merged, host, "tmpfs"));
    return {};
}

// --protect, --protect-existing and --placeholder-content: paths relative to the workdir.
Status set_protected_paths(const SettingsLayer& merged, Spec& s) {
    for (const char* key : {"protect", "protect-existing"}) {
        for (const auto& rel : get_list(merged, key)) {
            if (rel.empty() || rel[0] == '/' || rel.find("..") != std::string::npos) {
                return make_error(std::string("--") + key,
                                  "invalid value '" + rel + "': must be a path relative to the workdir, without '..'");
            }
            (std::string(key) == "protect" ? s.protect : s.protect_existing).push_back(rel);
        }
    }
    for (const auto& [rel, text] : get_pairs(merged, "placeholder-content")) {
        if (rel.empty() || rel[0] == '/' || rel.find("..") != std::string::npos) {
            return make_error("--placeholder-content",
                              "invalid path '" + rel + "': must be a path relative to the workdir, without '..'");
        }
        s.placeholder_content.emplace_back(normalize_path(rel, "/").substr(1), text);
    }
    return {};
}

// The private HOME and /tmp, cordon's own configuration and cache directories, --tmpfs-size.
Status set_private_dirs(const SettingsLayer& merged, const HostInfo& host, Spec& s) {
    s.private_home = get_bool(merged, "private-home");
    if (std::string config = config_home(host.home); !config.empty()) {
        s.config_dir = normalize_path(config, "/") + "/cordon";
    }
    if (std::string cache = cache_home(host.home); !cache.empty()) {
        s.cache_dir = normalize_path(cache, "/") + "/cordon";
    }
    s.private_tmp = "/tmp/cordon-" + std::to_string(host.uid);
    if (auto sz = get_quantity(merged, "tmpfs-size")) {
        if (sz->value < 4096) return make_error("--tmpfs-size", "invalid value '" + sz->text + "': at least 4K");
        s.tmpfs_size = sz->value;
    }
    return {};
}

// --perms OCTAL: a mode of at most 07777, as bubblewrap reads it.
Result<mode_t> perms_mode(const std::string& text, const std::string& origin) {
    if (text.empty() || text.size() > 5 || text.find_first_not_of("01234567") != std::string::npos) {
        return make_error("--perms",
                          "invalid value '" + text + "': expected an octal mode such as 0700 (" + origin + ")");
    }
    const unsigned long mode = std::stoul(text, nullptr, 8);
    if (mode > 07777) return make_error("--perms", "invalid value '" + text + "': at most 07777 (" + origin + ")");
    return static_cast<mode_t>(mode);
}

// Which file (or the command line) ORIGIN is in: "dir/p.toml:3:1" is "dir/p.toml".
std::string_view origin_source(std::string_view origin) {
    for (int field = 0; field < 2; ++field) {
        const size_t colon = origin.rfind(':');
        if (colon == std::string_view::npos ||
            origin.find_first_not_of("0123456789", colon + 1) != std::string_view::npos || colon + 1 == origin.size()) {
            return origin;
        }
        origin = origin.substr(0, colon);
    }
    return origin;
}

// The bwrap-style primitives, in order; a --perms becomes the mode of the op after it, in the
// same file or on the command line.
Status set_mount_requests(const SettingsLayer& merged, const HostInfo& host, Spec& s) {
    std::optional<mode_t> perms;
    std::string perms_origin;
    for (auto& [request, origin] : get_ops(merged)) {
        using K = MountRequest::Kind;
        if (perms && origin_source(origin) != origin_source(perms_origin)) {
            return make_error("--perms", "is not followed by --dir or --mount-tmpfs (" + perms_origin + ")");
        }
        if (perms && request.kind != K::Dir && request.kind != K::Tmpfs) {
            return make_error("--perms", "applies to the --dir or --mount-tmpfs right after it, not to --" +
                                             mount_request_option(request) + " (" + perms_origin + ")");
        }
        if (request.kind == K::Perms) {
            CORDON_ASSIGN_OR_RETURN(perms, perms_mode(request.dest, origin));
            perms_origin = origin;
            continue;
        }
        request.mode = std::exchange(perms, std::nullopt);
        if (request.dest.empty() || (mount_request_has_source(request.kind) && request.source.empty())) {
            return make_error("--" + mount_request_option(request), "empty path (" + origin + ")");
        }
        // DEST is always inside the jail; a relative DEST is relative to the jail's root. A bind's
        // SRC is the host's; a symlink's target is kept as written.
        request.dest = normalize_path(request.dest, "/");
        if (request.kind == K::Bind || request.kind == K::RoBind || request.kind == K::DevBind) {
            request.source = normalize_path(request.source, host.cwd);
        }
        s.mount_requests.push_back(std::move(request));
    }
    if (perms) return make_error("--perms", "is not followed by --dir or --mount-tmpfs (" + perms_origin + ")");
    return {};
}

// --cap-add NAME: "net_raw", "NET_RAW" and "CAP_NET_RAW" are one capability.
Status add_capabilities(const SettingsLayer& merged, Spec& s) {
    for (const auto& name : get_list(merged, "cap-add")) {
        std::string lower;
        for (char ch : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (lower.rfind("cap_", 0) != 0) lower = "cap_" + lower;
        cap_value_t cap = 0;
        if (::cap_from_name(lower.c_str(), &cap) != 0) {
            return make_error("--cap-add", "unknown capability '" + name + "'");
        }
        s.cap_keep.push_back(cap);
        s.cap_keep_names.push_back(lower);
    }
    return {};
}

// --allow-userns, --allow-ptrace, --new-session, --cap-add and --seccomp.
Status set_security(const SettingsLayer& merged, Spec& s) {
    s.allow_userns = get_bool(merged, "allow-userns");
    s.allow_ptrace = get_bool(merged, "allow-ptrace");
    s.new_session = get_bool(merged, "new-session");
    s.as_pid_1 = get_bool(merged, "as-pid-1");
    if (s.as_pid_1 && s.isolation == Isolation::Landlock) return make_error("--as-pid-1", kAsPid1Landlock);
    s.argv0 = get_string(merged, "argv0");
    CORDON_TRY(add_capabilities(merged, s));
    s.seccomp = get_string(merged, "seccomp").value_or("default");
    s.require_layers = get_bool(merged, "require-layers");
    return {};
}

// CORDON_TEST_LAYER_FAIL=NAME[,NAME]: the tests' way to see a layer fail its check (it only
// makes the report say so; the jail is built as ever). CORDON_TEST_RESOLV_CONF=PATH: the name
// servers the proxy asks (net_resolve.cpp).
void set_test_hooks(const HostInfo& host, Spec& s) {
    for (const auto& kv : host.environ) {
        if (kv.rfind("CORDON_TEST_RESOLV_CONF=", 0) == 0) s.test_resolv_conf = kv.substr(24);
        if (kv.rfind("CORDON_TEST_LAYER_FAIL=", 0) != 0) continue;
        for (uint32_t bit = 1; bit <= LayerCheck::kLast; bit <<= 1) {
            if (kv.find(LayerCheck::name(bit)) != std::string::npos) s.test_layer_fail |= bit;
        }
    }
}

}  // namespace

std::optional<OutputTarget> parse_output_target(std::string_view text) {
    if (text.empty()) return std::nullopt;
    if (text.rfind("fd:", 0) != 0) return OutputTarget{std::string(text), -1};
    const std::string_view n = text.substr(3);
    if (n.empty() || n.find_first_not_of("0123456789") != std::string_view::npos || n.size() > 6) return std::nullopt;
    int fd = 0;
    std::from_chars(n.data(), n.data() + n.size(), fd);
    return OutputTarget{std::string(text), fd};
}

namespace {

// An output target: PATH or fd:N.
Result<std::optional<OutputTarget>> output_target(const SettingsLayer& merged, const char* key) {
    auto text = get_string(merged, key);
    if (!text) return std::optional<OutputTarget>{};
    auto target = parse_output_target(*text);
    if (!target) return make_error(std::string("--") + key, "invalid value '" + *text + "': expected PATH or fd:N");
    return target;
}

// --status-json and --audit.
Status set_outputs(const SettingsLayer& merged, RunOptions& o) {
    CORDON_ASSIGN_OR_RETURN(o.status_json, output_target(merged, "status-json"));
    CORDON_ASSIGN_OR_RETURN(o.audit, output_target(merged, "audit"));
    return {};
}

// --exec-checks auto|required|off and --on-deny error|kill.
Status set_exec_checks(const SettingsLayer& merged, Spec& s, RunOptions& o) {
    const std::string mode = get_string(merged, "exec-checks").value_or("auto");
    if (mode == "auto") {
        s.exec_checks = Spec::ExecChecks::Auto;
    } else if (mode == "required") {
        s.exec_checks = Spec::ExecChecks::Required;
    } else if (mode == "off") {
        s.exec_checks = Spec::ExecChecks::Off;
    } else {
        return make_error("--exec-checks", "invalid value '" + mode + "': expected auto, required or off");
    }
    const std::string on_deny = get_string(merged, "on-deny").value_or("error");
    if (on_deny != "error" && on_deny != "kill") {
        return make_error("--on-deny", "invalid value '" + on_deny + "': expected error or kill");
    }
    o.kill_on_deny = on_deny == "kill";
    return {};
}

}  // namespace

namespace {

Result<ResolvedRun> build_spec_steps(const CliRequest& cli, const SettingsLayer& merged, const HostInfo& host) {
    ResolvedRun run;
    Spec& s = run.spec;
    RunOptions& o = run.options;
    s.host_uid = host.uid;
    s.host_gid = host.gid;
    s.home = host.home;
    o.dry_run = cli.dry_run;
    s.no_profile = cli.no_profile;
    // The order of the steps decides which of several bad values is reported.
    set_command(cli, s);
    CORDON_TRY(set_identity_and_network(merged, host, s));
    CORDON_TRY(set_allowed_hosts(cli, merged, s));
    CORDON_TRY(spec_steps::set_ssh_agent(merged, host, s));
    CORDON_TRY(set_test_resolve(host, s));
    CORDON_TRY(set_paths(cli, merged, host, s));
    CORDON_TRY(set_protected_paths(merged, s));
    CORDON_TRY(set_private_dirs(merged, host, s));
    CORDON_TRY(set_mount_requests(merged, host, s));
    CORDON_TRY(spec_steps::set_workdir(merged, host, s, o));
    spec_steps::set_chdir(merged, host, s);
    CORDON_TRY(spec_steps::set_environment(merged, host, s, o));
    set_proxy_environment(s);
    spec_steps::set_agent_environment(s);
    spec_steps::note_hidden_program(host, s, o);
    CORDON_TRY(spec_steps::set_limits(merged, s));
    CORDON_TRY(set_security(merged, s));
    set_test_hooks(host, s);
    CORDON_TRY(set_outputs(merged, o));
    CORDON_TRY(set_exec_checks(merged, s, o));
    s.no_policy = cli.no_policy;
    s.policies = get_list(merged, "policy");
    o.profiles = cli.profiles;
    return run;
}

}  // namespace

// A bad value is named where it was written: "--net" for the command line, "FILE:LINE:COL" and
// the key for a profile's.
Result<ResolvedRun> build_spec(const CliRequest& cli, const SettingsLayer& merged, const HostInfo& host) {
    auto run = build_spec_steps(cli, merged, host);
    if (run || run.error().what.rfind("--", 0) != 0) return run;
    Error& e = run.error();
    const std::string key = e.what.substr(2);
    const auto at = merged.where.find(key);
    if (at == merged.where.end() || cli.layer.values.count(key) != 0) return run;
    e.why = "'" + key + "': " + e.why;
    e.what = at->second;
    return run;
}

std::string auto_profile(const CliRequest& cli, const HostInfo& host) {
    if (cli.script || cli.command.empty()) return "default";
    const std::string& cmd = cli.command[0];
    std::string base(path_basename(cmd));
    // The executable, as the host's PATH finds it.
    std::string exe;
    if (cmd.find('/') != std::string::npos) {
        exe = normalize_path(cmd, host.cwd);
    } else {
        std::string path = "/usr/local/bin:/usr/bin:/bin";
        for (const auto& kv : host.environ) {
            if (kv.rfind("PATH=", 0) == 0) path = kv.substr(5);
        }
        size_t start = 0;
        while (start <= path.size()) {
            size_t end = path.find(':', start);
            if (end == std::string::npos) end = path.size();
            std::string candidate = normalize_path(path.substr(start, end - start) + "/" + cmd, host.cwd);
            if (::access(candidate.c_str(), X_OK) == 0) {
                exe = candidate;
                break;
            }
            start = end + 1;
        }
    }
    if (exe.empty()) return "default";
    // An executable the caller (or the payload, through the workdir) could replace does not get
    // to choose its own, possibly more permissive, profile.
    char real[PATH_MAX];
    std::string resolved = real_path(exe, real) ? std::string(real) : exe;
    const std::string dir(path_parent(resolved));
    // Trusted: root-owned, not group/world-writable (file and directory), and not inside the
    // current directory, HOME or a temporary directory (root can write anywhere, so access(2)
    // alone cannot tell).
    auto root_owned = [](const std::string& p) {
        struct stat st {};
        return ::stat(p.c_str(), &st) == 0 && st.st_uid == 0 && (st.st_mode & 022) == 0;
    };
    auto under = [](const std::string& p, const std::string& d) { return !d.empty() && d != "/" && path_under(p, d); };
    if (!root_owned(resolved) || !root_owned(dir) || under(resolved, host.cwd) || under(resolved, host.home) ||
        under(resolved, "/tmp") || under(resolved, "/var/tmp") || under(resolved, "/dev/shm")) {
        return "default";
    }
    if (base != "auto" && base.find('.') != 0 && find_profile(base)) return base;
    return "default";
}

Result<ResolvedRun> resolve_spec(const CliRequest& cli, const HostInfo& host) {
    SettingsLayer merged;
    std::vector<std::string> names;
    if (!cli.no_profile) {
        std::string workdir = get_string(cli.layer, "workdir").value_or(host.cwd);
        Vars vars = profile_vars(host.home, host.user, host.uid, normalize_path(workdir, host.cwd));
        names = cli.profiles.empty() ? std::vector<std::string>{"default"} : cli.profiles;
        for (auto& name : names) {
            if (name == "auto") name = auto_profile(cli, host);
        }
        CORDON_ASSIGN_OR_RETURN(merged, load_profiles(names, vars));
    }
    merge_layer(merged, cli.layer);
    auto run = build_spec(cli, merged, host);
    if (run && !cli.no_profile) run->options.profiles = names;
    return run;
}

}  // namespace cordon

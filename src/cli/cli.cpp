#include "cordon/cli.hpp"

#include <sys/random.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <utility>

#include "cordon/version.hpp"

namespace cordon {

namespace {

const char* kDescription =
    "cordon runs COMMAND inside a jail: user, mount, pid, network, ipc and uts namespaces,\n"
    "a read-only system, a writable project directory, a private HOME and /tmp, no network,\n"
    "a seccomp filter and no capabilities.\n\n"
    "  cordon [OPTIONS] [--] COMMAND [ARG...]\n"
    "  cordon [OPTIONS] -c SCRIPT\n"
    "  cordon check [--policy P]... [--static] [--json]\n"
    "               (-c SCRIPT | --batch FILE [-z] | [--] COMMAND [ARG...])\n"
    "  cordon policy test FILE|NAME|--built-in...\n"
    "  cordon profile list | cordon profile show NAME [--json]\n"
    "  cordon doctor [--json]\n"
    "  cordon completion bash|zsh|fish\n"
    "  cordon bwrap ARGS...   (or as `bwrap`, a symlink: bubblewrap's command line and behaviour)\n\n"
    "The command line (or every command in SCRIPT) is checked against the command policy\n"
    "before anything of it runs; a denial prints the rule and exits 126.\n\n"
    "Exit status: the command's own; 128+N if killed by signal N; 124 timeout;\n"
    "125 cordon failed; 126 denied by the command policy or not executable; 127 not found.\n"
    "Subcommands (check, policy, profile, doctor, completion, bwrap) are recognised only as the first\n"
    "argument. `cordon completion SHELL` prints the completion script for SHELL (installed\n"
    "with cordon; profile names complete after -p).";

// No line of --help is wider than kHelpWidth; option names take the first kNameColumn columns.
constexpr std::size_t kHelpWidth = 100;
constexpr std::size_t kNameColumn = 34;

// TEXT with a newline in place of the last space before every WIDTH columns (a longer word
// stays whole).
std::string wrap_words(const std::string& text, std::size_t width) {
    std::string out;
    std::size_t line = 0;  // columns used on out's last line
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = std::min(text.find(' ', pos), text.size());
        std::size_t word = end - pos;
        if (line > 0 && line + 1 + word > width) {
            out += '\n';
            line = 0;
        } else if (line > 0) {
            out += ' ';
            ++line;
        }
        out.append(text, pos, word);
        line += word;
        pos = end + 1;
    }
    return out;
}

// CLI11's formatter with each option's description wrapped to fit kHelpWidth. The table keeps
// one line per description, as the shell completions show it.
class HelpFormatter final : public CLI::Formatter {
public:
    HelpFormatter() { column_width(kNameColumn); }
    std::string make_option_desc(const CLI::Option* opt) const override {
        return wrap_words(CLI::Formatter::make_option_desc(opt), kHelpWidth - kNameColumn);
    }
};

// cordon's own options, bound to where parse_command_line_full reads them.
struct RunFlags {
    bool help = false;
    bool version = false;
    bool quiet = false;
    int verbose = 0;
    std::vector<std::string> profiles;
    std::optional<std::string> script;
};

// The options that say how cordon runs rather than what the jail is; --help lists them first.
void add_run_options(CLI::App& app, RunFlags& flags, CliRequest& req) {
    app.add_flag("-h,--help", flags.help, "print this help and exit");
    app.add_flag("--version", flags.version, "print the version and exit");
    app.add_option("-c", flags.script, "run SCRIPT with /bin/sh -c inside the jail")->type_name("SCRIPT");
    app.add_option("-p,--profile", flags.profiles, "profile NAME or PATH (repeatable; later layers win)")
        ->type_name("NAME|PATH")
        ->take_all()
        ->expected(1)
        ->allow_extra_args(false);
    app.add_flag("--no-profile", req.no_profile, "start from an empty root (bwrap semantics)");
    app.add_flag("--no-policy", req.no_policy, "do not check the command policy");
    app.add_flag("--dry-run", req.dry_run, "print the resolved jail and run nothing");
    app.add_flag("-v,--verbose", flags.verbose, "print a one-line summary of the jail before running");
    app.add_flag("-q,--quiet", flags.quiet, "print only errors, and what was moved aside after the run");
}

// The jail options worth registering with CLI11 for one command line. CLI11 checks each new
// option against every earlier one, so registering all ~50 jail options costs time in proportion
// to the square of their number. The jail options have long names only and CLI11 matches them
// whole (no abbreviations), so an option can only take effect when its "--NAME" or "--NAME=" is
// an argument: register just those. Over-registering (a name that belongs to COMMAND's
// arguments) changes nothing; --help needs them all.
struct NamedOptions {
    std::set<std::string_view> names;  // views into the arguments
    bool all = false;                  // -h or --help: every option

    [[nodiscard]] bool has(std::string_view name) const { return all || names.count(name) > 0; }
};

NamedOptions options_named(const std::vector<std::string>& args) {
    NamedOptions named;
    for (const auto& a : args) {
        if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
            named.names.insert(
                std::string_view(a).substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2));
        } else if (a.size() > 1 && a[0] == '-' && a[1] != '-' && a.find('h') != std::string::npos) {
            named.all = true;  // -h, possibly in a cluster such as -qh
        }
    }
    named.all = named.all || named.names.count("help") > 0;
    return named;
}

// The jail options as CLI11 leaves them: raw values per key, typed and checked by
// fill_jail_layer so that messages can name option and value.
struct JailOptions {
    std::map<std::string, std::vector<std::string>> raw;
    std::map<std::string, bool> flags;
    std::map<const CLI::Option*, const KeyInfo*> key_of;
};

bool is_repeatable(KeyType type) {
    return type == KeyType::List || type == KeyType::PairList || type == KeyType::Ops;
}

// One CLI11 option for each key of all_keys() that NAMED has, in the table's (--help's) order.
void add_jail_options(CLI::App& app, const NamedOptions& named, JailOptions& jail) {
    for (const auto& key : all_keys()) {
        if (!named.has(key.name)) continue;
        std::string name = std::string("--") + key.name;
        CLI::Option* opt = nullptr;
        if (key.type == KeyType::Bool) {
            opt = app.add_flag(name, jail.flags[key.name], key.help);
        } else {
            opt = app.add_option(name, jail.raw[key.name], key.help)->type_name(key.metavar);
            opt->expected(key.arity)->allow_extra_args(false);
            opt->multi_option_policy(is_repeatable(key.type) ? CLI::MultiOptionPolicy::TakeAll
                                                             : CLI::MultiOptionPolicy::TakeLast);
        }
        opt->group("Jail options");
        jail.key_of[opt] = &key;
    }
}

// The words cordon's options take, as getopt and bubblewrap read them: an option's values are the
// words that follow it, as many as it takes, whatever they are (--setenv CFLAGS -O2; a path
// "--no-policy" is a path); --NAME=VALUE gives the first in place; short options cluster, -c and
// -p taking the rest of the word or the next one (-qc SCRIPT, -pNAME). F(i, name, first, count)
// for each option at ARGS[i] that takes values: NAME without dashes ("c", "setenv"), its values
// ARGS[first, first + count) (a value given in place is not among them: count is one less).
template <class F>
void walk_options(const std::vector<std::string>& args, F f) {
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--" || a.size() < 2 || a[0] != '-') return;  // the command
        size_t count = 0;
        std::string name;
        if (a[1] != '-') {
            const size_t at = a.find_first_of("cp", 1);
            if (at == std::string::npos) continue;
            name = a.substr(at, 1);
            count = at == a.size() - 1 ? 1 : 0;
        } else {
            const size_t eq = a.find('=');
            name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
            int arity = 0;
            if (name == "profile") {
                arity = 1;
            } else if (const KeyInfo* key = find_key(name); key && key->type != KeyType::Bool) {
                arity = key->arity;
            }
            count = static_cast<size_t>(std::max(0, arity - (eq == std::string::npos ? 0 : 1)));
        }
        count = std::min(count, args.size() - i - 1);
        f(i, name, i + 1, count);
        i += count;
    }
}

// CLI11 would take any value that begins with '-' for an option: each such value is stood in for
// by a token, unique to this run, put back by unshield_values.
struct ShieldedValues {
    std::vector<std::string> args;
    std::map<std::string, std::string> originals;  // token -> value

    void unshield(std::string& v) const {
        if (auto it = originals.find(v); it != originals.end()) v = it->second;
    }
};

ShieldedValues shield_values(const std::vector<std::string>& args) {
    ShieldedValues out{args, {}};
    uint64_t nonce = 0;
    if (::getrandom(&nonce, sizeof nonce, 0) != sizeof nonce) nonce = static_cast<uint64_t>(::getpid());
    walk_options(args, [&](size_t, const std::string&, size_t first, size_t count) {
        for (size_t i = first; i < first + count; ++i) {
            std::string& v = out.args[i];
            if (v.empty() || v[0] != '-') continue;
            std::string token =
                "\x01"
                "cordon-value-" +
                std::to_string(nonce) + "-" + std::to_string(i);
            out.originals.emplace(token, std::exchange(v, token));
        }
    });
    return out;
}

void unshield_values(JailOptions& jail, RunFlags& flags, const ShieldedValues& shielded) {
    if (shielded.originals.empty()) return;
    for (auto& [name, values] : jail.raw) {
        for (auto& v : values) shielded.unshield(v);
    }
    for (auto& p : flags.profiles) shielded.unshield(p);
    if (flags.script) shielded.unshield(*flags.script);
}

Status parse_reversed(CLI::App& app, const std::vector<std::string>& args) {
    std::vector<std::string> argv_rev(args.rbegin(), args.rend());  // CLI11 takes the arguments last first
    try {
        app.parse(argv_rev);
    } catch (const CLI::ParseError& e) {
        std::string what = e.what();
        return make_error("invalid command line", what + " (see cordon --help)");
    }
    return {};
}

// COMMAND from what CLI11 left over: without the "--" that ended cordon's options. CLI11 hands
// an unknown option to the prefix command; a COMMAND starting with '-' is only accepted after "--".
Result<std::vector<std::string>> command_of(std::vector<std::string> remaining, const std::vector<std::string>& args) {
    if (!remaining.empty() && remaining.front() == "--") {
        remaining.erase(remaining.begin());
    } else if (!remaining.empty() && remaining.front().size() > 1 && remaining.front()[0] == '-') {
        bool after_dashes = false;
        for (size_t i = 0; i + 1 < args.size(); ++i) {
            if (args[i] == "--" && args[i + 1] == remaining.front()) after_dashes = true;
        }
        if (!after_dashes) {
            return make_error(remaining.front(),
                              "unknown option (see cordon --help; put COMMAND after -- if it starts with '-')");
        }
    }
    return remaining;
}

// Occurrence IDX of a repeatable key (List, PairList or Ops), whose values CLI11 collected in
// VALS: appended to the layer, or for Ops to OPS (the primitives keep their order across keys).
Status add_occurrence(const KeyInfo& key, const std::string& optname, const std::vector<std::string>& vals, size_t idx,
                      SettingsLayer& layer, std::vector<OpValue>& ops) {
    size_t a = static_cast<size_t>(key.arity);
    // CLI11's parse_order() lists an option once per value, not once per occurrence.
    if (vals.size() % a != 0) return make_error(optname, std::string("expects ") + key.metavar);
    if (idx % a != 0) return {};
    idx /= a;
    std::vector<std::string> occ(vals.begin() + static_cast<long>(idx * a),
                                 vals.begin() + static_cast<long>((idx + 1) * a));
    if (key.type == KeyType::Ops) {
        ops.push_back(OpValue{mount_request(key.name, std::move(occ)), "command line"});
    } else if (key.type == KeyType::PairList) {
        auto& v = layer.values.try_emplace(key.name, std::vector<PairValue>{}).first->second;
        std::get<std::vector<PairValue>>(v).emplace_back(occ[0], occ[1]);
        layer.item_where[key.name].push_back(optname);
    } else {
        auto& v = layer.values.try_emplace(key.name, std::vector<std::string>{}).first->second;
        std::get<std::vector<std::string>>(v).push_back(occ[0]);
        layer.item_where[key.name].push_back(optname);
    }
    return {};
}

// A scalar key's last value, converted to its type.
Status set_scalar(const KeyInfo& key, const std::string& optname, const std::string& val, SettingsLayer& layer) {
    switch (key.type) {
        case KeyType::UInt: {
            uint64_t n = 0;
            bool okv = !val.empty() && val.size() < 11;
            for (char ch : val) okv = okv && ch >= '0' && ch <= '9';
            if (okv) n = std::stoull(val);
            if (!okv || n > 0xFFFFFFFEULL)
                return make_error(optname, "invalid value '" + val + "': expected a non-negative integer");
            layer.values[key.name] = n;
            break;
        }
        case KeyType::Size:
        case KeyType::Duration: {
            auto q = parse_quantity(key.type, val);
            if (!q) return make_error(optname, q.error().what + ": " + q.error().why);
            layer.values[key.name] = std::move(*q);
            break;
        }
        default:
            layer.values[key.name] = val;
    }
    layer.where[key.name] = optname;
    return {};
}

// The jail options in the order they were given, typed, into the command line's layer.
Status fill_jail_layer(const CLI::App& app, const JailOptions& jail, SettingsLayer& layer) {
    std::vector<OpValue> ops;
    std::map<const CLI::Option*, size_t> seen;
    for (const CLI::Option* opt : app.parse_order()) {
        auto it = jail.key_of.find(opt);
        if (it == jail.key_of.end()) continue;
        const KeyInfo& key = *it->second;
        std::string optname = std::string("--") + key.name;
        size_t idx = seen[opt]++;
        if (key.type == KeyType::Bool) {
            layer.values[key.name] = jail.flags.at(key.name);  // --NAME=false is false
        } else if (is_repeatable(key.type)) {
            CORDON_TRY(add_occurrence(key, optname, jail.raw.at(key.name), idx, layer, ops));
        } else {
            CORDON_TRY(set_scalar(key, optname, jail.raw.at(key.name).back(), layer));
        }
    }
    if (!ops.empty()) layer.values["ops"] = ops;
    return {};
}

// Exactly one of -c SCRIPT and COMMAND; neither only with --dry-run.
Status check_command_or_script(const CliRequest& req) {
    if (req.script && !req.command.empty()) {
        return make_error("-c", "a SCRIPT and a COMMAND were both given; use one");
    }
    if (!req.script && req.command.empty() && !req.dry_run) {
        return make_error("invalid command line",
                          "no COMMAND given (usage: cordon [OPTIONS] [--] COMMAND [ARG...], see cordon --help)");
    }
    return {};
}

}  // namespace

Result<CliRequest> parse_command_line(const std::vector<std::string>& args) {
    // The most common form, `cordon [-q|-v]... -- COMMAND [ARG...]`, needs no option table:
    // what CLI11 returns for it is known (a unit test holds the two equal). Anything else goes
    // through CLI11.
    size_t i = 0;
    bool quiet = false;
    int verbose = 0;
    for (; i < args.size() && args[i] != "--"; ++i) {
        if (args[i] == "-q" || args[i] == "--quiet")
            quiet = true;
        else if (args[i] == "-v" || args[i] == "--verbose")
            ++verbose;
        else
            break;
    }
    if (i + 1 < args.size() && args[i] == "--") {
        CliRequest req;
        req.layer.origin = "command line";
        req.verbosity = quiet ? -1 : verbose;
        req.command.assign(args.begin() + static_cast<long>(i) + 1, args.end());
        return req;
    }
    return parse_command_line_full(args);
}

std::optional<std::string> option_value_in(const std::vector<std::string>& args, std::string_view name) {
    std::optional<std::string> found;
    walk_options(args, [&](size_t i, const std::string& n, size_t first, size_t count) {
        if (found || n != name) return;
        const std::string& a = args[i];
        if (const size_t eq = a.find('='); eq != std::string::npos && a[1] == '-') {
            found = a.substr(eq + 1);
        } else if (count > 0) {
            found = args[first];
        }
    });
    return found;
}

Result<CliRequest> parse_command_line_full(const std::vector<std::string>& args,
                                           const std::function<void(const CLI::App&)>& inspect) {
    CliRequest req;
    CLI::App app(kDescription, "cordon");
    app.prefix_command();  // the first positional starts COMMAND; the rest is its argv
    app.set_help_flag();   // handled below so that --help never runs anything
    app.set_version_flag();
    app.formatter(std::make_shared<HelpFormatter>());
    RunFlags flags;
    add_run_options(app, flags, req);
    JailOptions jail;
    add_jail_options(app, options_named(args), jail);
    if (inspect) inspect(app);
    const ShieldedValues shielded = shield_values(args);
    CORDON_TRY(parse_reversed(app, shielded.args));
    unshield_values(jail, flags, shielded);

    req.help = flags.help;
    req.version = flags.version;
    if (flags.help) {
        req.help_text = app.help();
        return req;
    }
    if (flags.version) return req;
    req.profiles = flags.profiles;
    req.script = flags.script;
    req.verbosity = flags.quiet ? -1 : flags.verbose;
    CORDON_ASSIGN_OR_RETURN(req.command, command_of(app.remaining(), args));
    req.layer.origin = "command line";
    CORDON_TRY(fill_jail_layer(app, jail, req.layer));
    CORDON_TRY(check_command_or_script(req));
    return req;
}

}  // namespace cordon

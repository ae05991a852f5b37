#include "cordon/cli.hpp"

#include <CLI/CLI.hpp>
#include <map>
#include <set>
#include <string_view>

#include "cordon/version.hpp"

namespace cordon {

namespace {

const char* kDescription =
    "cordon runs COMMAND inside a jail: user, mount, pid, network, ipc and uts namespaces,\n"
    "a read-only system, a writable project directory, a private HOME and /tmp, no network,\n"
    "a seccomp filter and no capabilities.\n\n"
    "  cordon [OPTIONS] [--] COMMAND [ARG...]\n"
    "  cordon [OPTIONS] -c SCRIPT\n"
    "  cordon check [--policy P]... [--json] (-c SCRIPT | [--] COMMAND [ARG...])\n"
    "  cordon policy test FILE|NAME|--built-in...\n"
    "  cordon profile list | cordon profile show NAME [--json]\n"
    "  cordon doctor [--json]\n"
    "  cordon completion bash|zsh|fish\n\n"
    "The command line (or every command in SCRIPT) is checked against the command policy\n"
    "before anything of it runs; a denial prints the rule and exits 126.\n\n"
    "Exit status: the command's own; 128+N if killed by signal N; 124 timeout;\n"
    "125 cordon failed; 126 denied by the command policy or not executable; 127 not found.\n"
    "Subcommands (check, policy, profile, doctor, completion) are recognised only as the first\n"
    "argument. `cordon completion SHELL` prints the completion script for SHELL (installed\n"
    "with cordon; profile names complete after -p).";

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

Result<CliRequest> parse_command_line_full(const std::vector<std::string>& args,
                                           const std::function<void(const CLI::App&)>& inspect) {
    CliRequest req;
    CLI::App app(kDescription, "cordon");
    app.prefix_command();  // the first positional starts COMMAND; the rest is its argv
    app.set_help_flag();   // handled below so that --help never runs anything
    app.set_version_flag();
    app.get_formatter()->column_width(34);

    bool help = false, version = false, quiet = false;
    int verbose = 0;
    std::vector<std::string> profiles;
    std::optional<std::string> script;
    app.add_flag("-h,--help", help, "print this help and exit");
    app.add_flag("--version", version, "print the version and exit");
    app.add_option("-c", script, "run SCRIPT with /bin/sh -c inside the jail")->type_name("SCRIPT");
    app.add_option("-p,--profile", profiles, "profile NAME or PATH (repeatable; later layers win)")
        ->type_name("NAME|PATH")
        ->take_all()
        ->expected(1)
        ->allow_extra_args(false);
    app.add_flag("--no-profile", req.no_profile, "start from an empty root (bwrap semantics)");
    app.add_flag("--no-policy", req.no_policy, "do not check the command policy");
    app.add_flag("--dry-run", req.dry_run, "print the resolved jail and run nothing");
    app.add_flag("-v,--verbose", verbose, "print a one-line summary of the jail before running");
    app.add_flag("-q,--quiet", quiet, "print only errors");

    // CLI11 checks each new option against every earlier one, so registering all ~50 jail
    // options costs more than the rest of start-up together. The jail options have long names
    // only and CLI11 matches them whole (no abbreviations), so an option can only take effect
    // when its "--NAME" or "--NAME=" is an argument: register just those. Over-registering (a
    // name that belongs to COMMAND's arguments) changes nothing; --help needs them all.
    std::set<std::string_view> mentioned;
    bool all = false;
    for (const auto& a : args) {
        if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
            mentioned.insert(
                std::string_view(a).substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2));
        } else if (a.size() > 1 && a[0] == '-' && a[1] != '-' && a.find('h') != std::string::npos) {
            all = true;  // -h, possibly in a cluster such as -qh
        }
    }
    all = all || mentioned.count("help") > 0;

    // Raw values per key; typed and checked below so messages can name option and value.
    std::map<std::string, std::vector<std::string>> raw;
    std::map<std::string, bool> flags;
    std::map<const CLI::Option*, const KeyInfo*> option_key;
    for (const auto& key : all_keys()) {
        if (!all && mentioned.count(key.name) == 0) continue;
        std::string name = std::string("--") + key.name;
        CLI::Option* opt = nullptr;
        if (key.type == KeyType::Bool) {
            opt = app.add_flag(name, flags[key.name], key.help);
        } else {
            opt = app.add_option(name, raw[key.name], key.help)->type_name(key.metavar);
            opt->expected(key.arity)->allow_extra_args(false);
            if (key.type == KeyType::List || key.type == KeyType::PairList || key.type == KeyType::Ops) {
                opt->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
            } else {
                opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
            }
        }
        opt->group(key.available ? "Jail options" : "Not yet available");
        option_key[opt] = &key;
    }

    if (inspect) inspect(app);
    std::vector<std::string> argv_rev(args.rbegin(), args.rend());
    try {
        app.parse(argv_rev);
    } catch (const CLI::ParseError& e) {
        std::string what = e.what();
        return make_error("invalid command line", what + " (see cordon --help)");
    }
    req.help = help;
    req.version = version;
    if (help) {
        req.help_text = app.help();
        return req;
    }
    if (version) return req;
    req.profiles = profiles;
    req.script = script;
    req.verbosity = quiet ? -1 : verbose;
    req.command = app.remaining();
    if (!req.command.empty() && req.command.front() == "--") {
        req.command.erase(req.command.begin());
    } else if (!req.command.empty() && req.command.front().size() > 1 && req.command.front()[0] == '-') {
        // CLI11 hands an unknown option to the prefix command; a COMMAND starting with '-'
        // is only accepted after "--".
        bool after_dashes = false;
        for (size_t i = 0; i + 1 < args.size(); ++i) {
            if (args[i] == "--" && args[i + 1] == req.command.front()) after_dashes = true;
        }
        if (!after_dashes) {
            return make_error(req.command.front(),
                              "unknown option (see cordon --help; put COMMAND after -- if it starts with '-')");
        }
    }

    Layer& layer = req.layer;
    layer.origin = "command line";
    std::vector<OpValue> ops;
    std::map<const CLI::Option*, size_t> seen;
    for (const CLI::Option* opt : app.parse_order()) {
        auto it = option_key.find(opt);
        if (it == option_key.end()) continue;
        const KeyInfo& key = *it->second;
        std::string optname = std::string("--") + key.name;
        if (!key.available) {
            return make_error(optname,
                              "exec-time policy enforcement and audit logs are not available in this "
                              "version of cordon; refusing to run without them");
        }
        size_t idx = seen[opt]++;
        if (key.type == KeyType::Bool) {
            layer.values[key.name] = true;
            continue;
        }
        const auto& vals = raw[key.name];
        size_t a = static_cast<size_t>(key.arity);
        if (key.type == KeyType::List || key.type == KeyType::PairList || key.type == KeyType::Ops) {
            // CLI11's parse_order() lists an option once per value, not once per occurrence.
            if (vals.size() % a != 0) return make_error(optname, std::string("expects ") + key.metavar);
            if (idx % a != 0) continue;
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
            continue;
        }
        const std::string& val = vals.back();
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
    }
    if (!ops.empty()) layer.values["ops"] = ops;

    if (req.script && !req.command.empty()) {
        return make_error("-c", "a SCRIPT and a COMMAND were both given; use one");
    }
    if (!req.script && req.command.empty() && !req.dry_run) {
        return make_error("invalid command line",
                          "no COMMAND given (usage: cordon [OPTIONS] [--] COMMAND [ARG...], see cordon --help)");
    }
    return req;
}

}  // namespace cordon

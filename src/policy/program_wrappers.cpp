// Programs that run a command given in their arguments, beyond the shells, sudo, env, xargs and
// find of wrappers.cpp: most are described by a table of their option syntax, a few (a command
// as shell text, options after an operand) by their own rules.
#include <algorithm>
#include <span>
#include <unordered_map>

#include "cordon/paths.hpp"
#include "wrapper_args.hpp"

namespace cordon::policy {
namespace {

using namespace wrap;

// getopt options, then COMMAND [ARG...].
struct Simple {
    std::string_view name;
    Opts opts;
    size_t skip;                               // operands before the command (timeout DURATION, chroot DIR)
    std::string_view no_cmd = {};              // short flags after which there is no command (strace -p)
    std::vector<std::string_view> chdir = {};  // options naming the directory the command runs in
};

// The table of cordon-policy(5)'s wrappers. Each option list follows the program's --help; an
// option missing here that takes an argument would make its argument look like the command.
// A table, one entry per program: longer than a function should be, and clearer whole.
std::span<const Simple> simple_table() {  // NOLINT(readability-function-size)
    static const Simple table[] = {
        {"nice", {"n", {"adjustment"}}, 0},
        {"nohup", {"", {}}, 0},
        {"timeout", {"ks", {"kill-after", "signal"}}, 1},
        {"time", {"fo", {"format", "output"}}, 0},
        {"stdbuf", {"ioe", {"input", "output", "error"}}, 0},
        {"ionice", {"cnpPu", {"class", "classdata", "pid", "pgid", "uid"}}, 0, "pPu"},
        {"chrt", {"TPD", {"sched-runtime", "sched-period", "sched-deadline"}}, 1, "pm"},
        {"taskset", {"", {}}, 1, "p"},
        {"setsid", {"", {}}, 0},
        {"command", {"", {}}, 0, "vV"},
        {"builtin", {"", {}}, 0},
        {"pkexec", {"", {"user"}}, 0},
        {"nocache", {"", {}}, 0},
        {"unbuffer", {"", {}}, 0},
        {"chronic", {"", {}}, 0},
        {"flatpak-spawn", {"", {"directory", "env", "forward-fd"}}, 0, {}, {"--directory"}},
        {"strace",
         {"abeEIoOpPsSuUX", {"output",       "attach",
                             "trace",        "signal",
                             "env",          "user",
                             "string-limit", "columns",
                             "trace-path",   "summary-sort-by",
                             "detach-on",    "abbrev",
                             "verbose",      "raw",
                             "read",         "write",
                             "fault",        "inject",
                             "status",       "quiet",
                             "decode-fds",   "const-print-style"}},
         0,
         "p"},
        {"ltrace", {"aADeFlnopsuwx", {"output", "library", "config", "align", "indent"}}, 0, "p"},
        {"unshare",
         {"RwSG",
          {"root", "wd", "setuid", "setgid", "map-user", "map-group", "map-users", "map-groups", "propagation",
           "setgroups", "monotonic", "boottime"}},
         0,
         {},
         {"-w", "--wd"}},
        {"nsenter", {"tSGW", {"target", "setuid", "setgid", "wdns"}, "muinpCUTrw"}, 0, {}, {"-w", "--wd"}},
        {"chroot", {"", {"userspec", "groups"}}, 1},
        {"prlimit", {"op", {"pid", "output"}, "cdefilmnqrstuvxy"}, 0, "p"},
        {"setpriv",
         {"",
          {"ambient-caps", "inh-caps", "bounding-set", "ruid", "euid", "rgid", "egid", "reuid", "regid", "groups",
           "securebits", "pdeathsig", "selinux-label", "apparmor-profile", "landlock-access", "landlock-rule",
           "seccomp-filter"}},
         0,
         "d"},
        {"systemd-run",
         {"HMupE", {"host",
                    "machine",
                    "unit",
                    "property",
                    "description",
                    "slice",
                    "service-type",
                    "uid",
                    "gid",
                    "nice",
                    "working-directory",
                    "setenv",
                    "path-property",
                    "socket-property",
                    "on-active",
                    "on-boot",
                    "on-startup",
                    "on-unit-active",
                    "on-unit-inactive",
                    "on-calendar",
                    "timer-property"}},
         0,
         "S",
         {"--working-directory"}},
        {"run0",
         {"ugD", {"user", "group", "nice", "chdir", "setenv", "unit", "property", "description", "slice"}},
         0,
         {},
         {"-D", "--chdir"}},
        {"systemd-inhibit", {"", {"what", "who", "why", "mode"}}, 0},
        {"faketime", {"", {"date-prog"}}, 1},
        {"torsocks", {"upaP", {"user", "pass", "address", "port"}}, 0},
        {"proxychains", {"f", {}}, 0},
        {"proxychains4", {"f", {}}, 0},
        {"tsocks", {"", {}}, 0},
        {"catchsegv", {"", {}}, 0},
        {"valgrind", {"", {}}, 0},
        {"xvfb-run", {"efnpsw", {"error-file", "auth-file", "server-num", "xauth-protocol", "server-args", "wait"}}, 0},
        {"dbus-run-session", {"", {"config-file", "dbus-daemon"}}, 0},
        {"numactl", {"ipmNCP", {"interleave", "preferred", "membind", "cpunodebind", "physcpubind"}}, 0, "sH"},
        {"cgexec", {"g", {}}, 0},
        {"trickle", {"wtlnduLP", {}}, 0},
        {"chpst", {"uUbe/nlLmdopfc", {}}, 0},
        {"setuidgid", {"", {}}, 1},
        {"envuidgid", {"", {}}, 1},
        {"envdir", {"", {}}, 1},
        {"setlock", {"", {}}, 1},
        {"softlimit", {"madosplfcrt", {}}, 0},
        {"sshpass", {"fdpP", {}}, 0},
        {"firejail", {"", {}}, 0},
        {"ssh-agent", {"aEPtO", {}}, 0},
        {"fakeroot", {"lsib", {"lib", "faked"}}, 0},
        {"fakechroot", {"ldec", {"lib", "environment", "config-dir", "elfloader"}}, 0},
        {"eatmydata", {"", {}}, 0},
        {"ccache", {"dFMoX", {"dir", "max-files", "max-size", "set-config", "config-path", "recompress"}}, 0},
        {"distcc", {"", {}}, 0},
        {"linux32", {"", {}}, 0},
        {"linux64", {"", {}}, 0},
        {"i386", {"", {}}, 0},
        {"x86_64", {"", {}}, 0},
        {"bunx", {"", {}}, 0},
    };
    return table;
}

Unwrapped simple(const Simple& w, const Argv& argv) {
    Parsed p = parse_opts(argv, w.opts);
    if (p.unknown) return unanalyzable(std::string(w.name) + " options are not known statically");
    for (char c : w.no_cmd) {
        if (has_flag(p, c)) return {};
    }
    const Field* dir = nullptr;
    for (auto name : w.chdir) {
        if (const Field* d = value_of(p, {name}); d && !is_word(*d, "")) dir = d;
    }
    return inner(rest(argv, p.next + w.skip), dir);
}

// flock [OPTIONS] FILE COMMAND [ARG...] | flock [OPTIONS] FILE -c COMMAND: a shell runs COMMAND.
Unwrapped flock(const Argv& argv) {
    Parsed p = parse_opts(argv, {"wEc", {"timeout", "wait", "conflict-exit-code", "command"}});
    if (p.unknown) return unanalyzable("flock options are not known statically");
    if (const Field* c = value_of(p, {"-c", "--command"})) return script(*c);
    size_t cmd = p.next + 1;  // after the lock file
    if (cmd + 1 < argv.size() && (is_word(argv[cmd], "-c") || is_word(argv[cmd], "--command"))) {
        return script(argv[cmd + 1]);
    }
    return inner(rest(argv, cmd));
}

// script [OPTIONS] [FILE]: options may follow the file (GNU); -c COMMAND runs in a shell.
Unwrapped script_program(const Argv& argv) {
    Parsed p = parse_permuted(
        argv, {"IOBTmEoc",
               {"log-in", "log-out", "log-io", "log-timing", "logging-format", "echo", "output-limit", "command"},
               "t"});
    if (const Field* c = value_of(p, {"-c", "--command"})) return script(*c);
    if (p.unknown) return unanalyzable("script options are not known statically");
    return stdin_shell();  // the shell it starts reads what script reads
}

// runuser -u USER [--] COMMAND [ARG...], or su-style runuser [-] [USER] with -c COMMAND.
Unwrapped runuser(const Argv& argv) {
    const Opts opts{"ugGwcs",
                    {"user", "group", "supp-group", "whitelist-environment", "command", "session-command", "shell"}};
    Parsed p = parse_opts(argv, opts);
    if (p.unknown) return unanalyzable("runuser options are not known statically");
    if (value_of(p, {"-u", "--user"})) return inner(rest(argv, p.next));
    const Parsed all = parse_permuted(argv, opts);
    if (const Field* c = value_of(all, {"-c", "--command", "--session-command"})) return script(*c);
    return stdin_shell();
}

// doas [-nL] [-C CONFIG] [-u USER] [-s | COMMAND [ARG...]]; -s starts a shell.
Unwrapped doas(const Argv& argv) {
    Parsed p = parse_opts(argv, {"Cu", {}});
    if (p.unknown) return unanalyzable("doas options are not known statically");
    if (p.next >= argv.size() && has_flag(p, 's')) return stdin_shell();
    if (value_of(p, {"-C"})) return {};  // checks a configuration file
    return inner(rest(argv, p.next));
}

// sg [-] GROUP [-c] COMMAND: /bin/sh runs COMMAND.
Unwrapped sg(const Argv& argv) {
    size_t i = 1;
    if (i < argv.size() && is_word(argv[i], "-")) ++i;
    ++i;  // the group
    if (i < argv.size() && is_word(argv[i], "-c")) ++i;
    if (i >= argv.size()) return {};
    return script(argv[i]);
}

// gdb ... --args PROGRAM [ARG...]
Unwrapped gdb(const Argv& argv) {
    for (size_t i = 1; i < argv.size(); ++i) {
        if (is_word(argv[i], "--args")) return inner(rest(argv, i + 1));
    }
    return {};
}

// capsh [OPTIONS] -- [ARG...]: bash (or --shell=PROGRAM) runs with ARGs (capsh -- -c 'TEXT').
Unwrapped capsh(const Argv& argv) {
    Field shell = Field::lit("bash");  // --shell=PROGRAM runs PROGRAM instead
    for (size_t i = 1; i < argv.size(); ++i) {
        if (argv[i].starts_with("--shell=")) shell = argv[i].drop_prefix(8);
        if (!is_word(argv[i], "--")) continue;
        Argv bash{shell};
        for (auto& f : rest(argv, i + 1)) bash.push_back(f);
        return inner(std::move(bash));
    }
    return {};
}

// entr [-acdnprsz] UTILITY [ARG...]; with -s, UTILITY is shell text.
Unwrapped entr(const Argv& argv) {
    Parsed p = parse_opts(argv, {"", {}});
    if (p.unknown) return unanalyzable("entr options are not known statically");
    if (has_flag(p, 's')) return p.next < argv.size() ? script(argv[p.next]) : Unwrapped{};
    return inner(rest(argv, p.next));
}

// at / batch read the commands to run later from standard input, unless -f FILE names them.
Unwrapped at(const Argv& argv) {
    Parsed p = parse_opts(argv, {"qftT", {}});
    if (value_of(p, {"-f"}) || has_flag(p, 'l') || has_flag(p, 'd') || has_flag(p, 'r') || has_flag(p, 'c')) {
        return {};
    }
    Unwrapped u;
    u.kind = Unwrapped::Kind::StdinScript;
    return u;
}

// setarch ARCH [OPTIONS] [COMMAND [ARG...]]
Unwrapped setarch(const Argv& argv) {
    if (argv.size() < 2 || argv[1].starts_with("-")) return {};
    Parsed p = parse_opts(argv, {"", {}}, 2);
    if (p.unknown) return unanalyzable("setarch options are not known statically");
    return inner(rest(argv, p.next));
}

// bwrap [OPTIONS] COMMAND [ARG...]: its options take zero to three arguments.
Unwrapped bwrap(const Argv& argv) {
    static constexpr std::pair<std::string_view, size_t> takes[] = {
        {"--args", 1},
        {"--uid", 1},
        {"--gid", 1},
        {"--hostname", 1},
        {"--chdir", 1},
        {"--setenv", 2},
        {"--unsetenv", 1},
        {"--lock-file", 1},
        {"--sync-fd", 1},
        {"--bind", 2},
        {"--bind-try", 2},
        {"--dev-bind", 2},
        {"--dev-bind-try", 2},
        {"--ro-bind", 2},
        {"--ro-bind-try", 2},
        {"--remount-ro", 1},
        {"--exec-label", 1},
        {"--file-label", 1},
        {"--proc", 1},
        {"--dev", 1},
        {"--tmpfs", 1},
        {"--mqueue", 1},
        {"--dir", 1},
        {"--file", 2},
        {"--bind-data", 2},
        {"--ro-bind-data", 2},
        {"--symlink", 2},
        {"--seccomp", 1},
        {"--add-seccomp-fd", 1},
        {"--block-fd", 1},
        {"--userns-block-fd", 1},
        {"--info-fd", 1},
        {"--json-status-fd", 1},
        {"--cap-add", 1},
        {"--cap-drop", 1},
        {"--perms", 1},
        {"--size", 1},
        {"--chmod", 2},
        {"--userns", 1},
        {"--userns2", 1},
        {"--pidns", 1},
        {"--argv0", 1},
        {"--overlay-src", 1},
        {"--overlay", 3},
        {"--tmp-overlay", 1},
        {"--ro-overlay", 1},
    };
    const Field* dir = nullptr;
    size_t i = 1;
    while (i < argv.size() && argv[i].starts_with("--")) {
        if (!argv[i].is_static()) return unanalyzable("bwrap options are not known statically");
        const std::string t = argv[i].static_text();
        if (t == "--") {
            ++i;
            break;
        }
        auto it = std::find_if(std::begin(takes), std::end(takes), [&](const auto& e) { return e.first == t; });
        size_t n = it == std::end(takes) ? 0 : it->second;
        if (t == "--chdir" && i + 1 < argv.size()) dir = &argv[i + 1];
        i += 1 + n;
    }
    return inner(rest(argv, i), dir);
}

// npx [OPTIONS] PACKAGE [ARG...] runs a package's program; -c/--call TEXT runs shell text.
Unwrapped npx(const Argv& argv) {
    Parsed p = parse_opts(argv, {"pc", {"package", "call", "cache", "userconfig", "registry"}});
    if (p.unknown) return unanalyzable("npx options are not known statically");
    if (const Field* c = value_of(p, {"-c", "--call"})) return script(*c);
    return inner(rest(argv, p.next));
}

bool is_parallel_separator(const Field& f) {
    return is_word(f, ":::") || is_word(f, "::::") || is_word(f, ":::+") || is_word(f, "::::+");
}

// The values parallel substitutes: the words after :::, or something unknown (:::: FILE, stdin).
Argv parallel_inputs(const Argv& argv, size_t i) {
    Argv inputs;
    bool from_file = i >= argv.size();
    while (i < argv.size()) {
        const bool words = is_word(argv[i], ":::") || is_word(argv[i], ":::+");
        from_file = from_file || !words;
        for (++i; i < argv.size() && !is_parallel_separator(argv[i]); ++i) {
            if (words) inputs.push_back(argv[i]);
        }
    }
    if (from_file) inputs.push_back(Field::unknown("<input>"));
    return inputs;
}

// One command line of parallel for INPUT: {} is the input, {.}, {/} and the like something derived
// from it; without a replacement string the input is the last argument.
Argv parallel_line(const Argv& cmd, const Field& input) {
    Argv line;
    bool replaced = false;
    for (const auto& word : cmd) {
        Field f = substitute(word, "{}", input);
        replaced = replaced || f.static_text() != word.static_text() || f.has_unknown() != word.has_unknown();
        bool derived = word.is_static() && word.static_text().find('{') != std::string::npos &&
                       word.static_text().find('}') != std::string::npos && f.static_text() == word.static_text();
        line.push_back(derived ? Field::unknown(word.static_text()) : std::move(f));
        replaced = replaced || derived;
    }
    if (!replaced) line.push_back(input);
    return line;
}

// parallel [OPTIONS] [COMMAND] (::: ARGS | :::: FILES | stdin): a shell runs COMMAND once per
// input; without COMMAND each input is a command.
Unwrapped parallel(const Argv& argv) {
    Parsed p = parse_opts(
        argv,
        {"jSadINnPLEs", {"jobs",         "sshlogin",  "arg-file", "delimiter", "max-args",      "max-replace-args",
                         "max-procs",    "max-lines", "eof",      "timeout",   "retries",       "joblog",
                         "results",      "tmpdir",    "workdir",  "env",       "halt",          "memfree",
                         "load",         "delay",     "colsep",   "basefile",  "transfer-file", "return",
                         "sshloginfile", "termseq",   "tagstring"}});
    if (p.unknown) return unanalyzable("parallel options are not known statically");
    size_t sep = p.next;
    while (sep < argv.size() && !is_parallel_separator(argv[sep])) ++sep;
    Argv cmd(argv.begin() + static_cast<std::ptrdiff_t>(std::min(p.next, argv.size())),
             argv.begin() + static_cast<std::ptrdiff_t>(sep));
    std::vector<Argv> lines;
    for (const auto& input : parallel_inputs(argv, sep)) {
        lines.push_back(cmd.empty() ? Argv{input} : parallel_line(cmd, input));
    }
    bool known = std::all_of(lines.begin(), lines.end(), [](const Argv& l) {
        return std::all_of(l.begin(), l.end(), [](const Field& f) { return f.is_static(); });
    });
    if (!known) {
        Unwrapped u;
        u.kind = Unwrapped::Kind::Argv;
        u.argvs = std::move(lines);
        return u;
    }
    std::string text;
    for (const auto& l : lines) text += join(l, 0).static_text() + "\n";
    return script(Field::lit(text));
}

// trap [--] ACTION SIGNAL...: the shell runs ACTION, shell text, when SIGNAL comes.
Unwrapped trap(const Argv& argv) {
    size_t i = 1;
    if (i < argv.size() && is_word(argv[i], "--")) ++i;
    if (i + 1 >= argv.size() || is_word(argv[i], "-") || (argv[i].is_static() && argv[i].starts_with("-"))) {
        return {};
    }
    Unwrapped u = script(argv[i]);
    u.same_shell = true;
    return u;
}

// Development tools whose subcommand runs a program from the project's environment:
// `poetry run CMD`, `uv run CMD`, `bundle exec CMD`, ...
struct Runner {
    std::string_view name, subcommand;
    Opts opts;
    std::vector<std::string_view> chdir = {};
};

std::span<const Runner> runner_table() {
    static const Runner table[] = {
        {"poetry", "run", {"CP", {"directory", "project"}}, {"-C", "--directory"}},
        {"pipenv", "run", {"", {}}},
        {"uv",
         "run",
         {"pw",
          {"with", "python", "project", "directory", "env-file", "extra", "group", "package", "index", "from",
           "with-requirements", "with-editable"}},
         {"--directory"}},
        {"pdm", "run", {"p", {"project"}}},
        {"hatch", "run", {"", {}}},
        {"rye", "run", {"", {}}},
        {"pipx", "run", {"", {"spec", "python", "index-url"}}},
        {"bundle", "exec", {"", {"gemfile"}}},
        {"conda", "run", {"np", {"name", "prefix", "cwd"}}, {"--cwd"}},
        {"mamba", "run", {"np", {"name", "prefix", "cwd"}}, {"--cwd"}},
        {"micromamba", "run", {"np", {"name", "prefix", "cwd"}}, {"--cwd"}},
        {"npm", "exec", {"", {"package", "call"}}},
        {"pnpm", "exec", {"C", {"dir"}}, {"-C", "--dir"}},
        {"pnpm", "dlx", {"", {"package"}}},
        {"yarn", "dlx", {"p", {"package"}}},
        {"yarn", "exec", {"", {}}},
    };
    return table;
}

Unwrapped runner(const Argv& argv, std::string_view prog) {
    if (argv.size() < 2 || !argv[1].is_static()) return {};
    const std::string sub = argv[1].static_text();
    for (const auto& r : runner_table()) {
        if (r.name != prog || r.subcommand != sub) continue;
        Parsed p = parse_opts(argv, r.opts, 2);
        if (p.unknown) return unanalyzable(std::string(prog) + " options are not known statically");
        if (const Field* c = value_of(p, {"--call"})) return script(*c);
        const Field* dir = nullptr;
        for (auto name : r.chdir) {
            if (const Field* d = value_of(p, {name})) dir = d;
        }
        return inner(rest(argv, p.next), dir);
    }
    return {};
}

// The dynamic loader run as a program: ld.so [OPTIONS] PROGRAM [ARG...] maps PROGRAM into its
// own process (no second exec), with glibc's and musl's options that take a value.
const Simple& loader() {
    static const Simple table{
        "ld.so",
        {"",
         {"library-path", "inhibit-rpath", "audit", "preload", "argv0", "glibc-hwcaps-prepend", "glibc-hwcaps-mask"}},
        0};
    return table;
}

// The loader's options that list or check the program, or print, and run nothing.
constexpr std::string_view kLoaderRunsNone[] = {"list", "verify", "list-tunables", "list-diagnostics",
                                                "help", "version"};

// The program the loader maps, and what its --argv0 NAME makes it (ld.so --argv0 git-clean git).
Unwrapped loader_program(const Argv& argv) {
    Parsed p = parse_opts(argv, loader().opts);
    if (p.unknown) return unanalyzable("ld.so options are not known statically");
    for (std::string_view only : kLoaderRunsNone) {
        if (has_long(p, only)) return {};
    }
    return inner_named(rest(argv, p.next), value_of(p, {"--argv0"}), "the loader's --argv0");
}

}  // namespace

size_t loader_operand(const std::vector<std::string>& argv) {
    size_t i = 1;
    while (i < argv.size() && argv[i].rfind("--", 0) == 0) {
        if (argv[i] == "--") return i + 1;
        const std::string_view name = std::string_view(argv[i]).substr(2);
        if (std::find(std::begin(kLoaderRunsNone), std::end(kLoaderRunsNone), name) != std::end(kLoaderRunsNone))
            return argv.size();
        const auto& takes = loader().opts.long_arg;
        i += std::find(takes.begin(), takes.end(), name) != takes.end() ? 2 : 1;
    }
    return i;
}

namespace {

// Which table knows PROG: one lookup for every command checked, most of which are no wrapper.
struct Known {
    Unwrapped (*special)(const Argv&) = nullptr;
    const Simple* simple = nullptr;
    bool runner = false;
};

const Known* known(std::string_view prog) {
    static const auto index = [] {
        static constexpr std::pair<std::string_view, Unwrapped (*)(const Argv&)> special[] = {
            {"flock", flock},       {"script", script_program},
            {"runuser", runuser},   {"sg", sg},
            {"gdb", gdb},           {"capsh", capsh},
            {"entr", entr},         {"at", at},
            {"batch", at},          {"setarch", setarch},
            {"bwrap", bwrap},       {"npx", npx},
            {"parallel", parallel}, {"git", git},
            {"trap", trap},         {"doas", doas},
        };
        std::unordered_map<std::string_view, Known> m;
        for (const auto& [name, fn] : special) m[name].special = fn;
        for (const auto& w : simple_table()) m[w.name].simple = &w;
        for (const auto& r : runner_table()) m[r.name].runner = true;
        return m;
    }();
    auto it = index.find(prog);
    return it == index.end() ? nullptr : &it->second;
}

}  // namespace

Unwrapped unwrap_program(std::string_view prog, const Argv& argv) {
    const Known* k = known(prog);
    if (!k) return is_loader_name(prog) ? loader_program(argv) : Unwrapped{};
    if (k->special) return k->special(argv);
    if (k->simple) return simple(*k->simple, argv);
    return runner(argv, prog);
}

}  // namespace cordon::policy

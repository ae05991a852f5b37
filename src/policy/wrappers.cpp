// Programs that run another program: what they run, read from their own option syntax.
#include <algorithm>
#include <cstring>
#include <initializer_list>

#include "cordon/paths.hpp"
#include "cordon/policy/analyze.hpp"
#include "wrapper_args.hpp"

namespace cordon::policy {

namespace {

using namespace wrap;

Unwrapped env(const Argv& argv) {
    Parsed p = parse_opts(argv, {"uCS", {"unset", "chdir", "split-string"}});
    if (p.unknown) return unanalyzable("env options are not known statically");
    size_t i = p.next;
    if (i < argv.size() && argv[i].is_static() && argv[i].static_text() == "-") ++i;
    Argv cmd;
    if (const Field* s = value_of(p, {"-S", "--split-string"})) {
        cmd = split_words(*s);
        // GNU env stops reading its options at -S: what follows its string are the command's
        // arguments, "-rf" among them.
        for (size_t k = 1; k < argv.size() && argv[k].is_static(); ++k) {
            const std::string t = argv[k].static_text();
            const bool cluster = t.size() >= 2 && t[0] == '-' && t[1] != '-' && t.find('S') != std::string::npos;
            if (t == "--split-string" || (cluster && t.back() == 'S')) {  // its string is the next word
                i = k + 2;
                break;
            }
            if (cluster || t.rfind("--split-string=", 0) == 0) {
                i = k + 1;
                break;
            }
        }
        i = std::min(i, argv.size());
    }
    // NAME=VALUE: a variable that the command may run as a command is checked as shell text.
    std::vector<Argv> commands;
    for (; i < argv.size() && is_env_assignment(argv[i]); ++i) {
        const std::string& t = argv[i].pieces[0].text;
        if (is_command_variable(std::string_view(t).substr(0, t.find('=')))) {
            commands.push_back(shell_text(argv[i].drop_prefix(t.find('=') + 1)));
        }
    }
    for (auto& f : rest(argv, i)) cmd.push_back(f);
    Unwrapped u = inner(std::move(cmd), value_of(p, {"-C", "--chdir"}));
    if (commands.empty()) return u;
    u.kind = Unwrapped::Kind::Argv;
    for (auto& c : commands) u.argvs.push_back(std::move(c));
    return u;
}

Unwrapped sudo(const Argv& argv) {
    Parsed p = parse_opts(argv, {"CDghpRrTtUu",
                                 {"close-from", "chdir", "group", "host", "prompt", "chroot", "role", "type",
                                  "command-timeout", "other-user", "user"}});
    if (p.unknown) return unanalyzable("sudo options are not known statically");
    if (has_flag(p, 'e') || has_flag(p, 'l') || has_flag(p, 'v') || has_flag(p, 'V') || has_long(p, "edit") ||
        has_long(p, "list")) {
        return {};
    }
    const size_t cmd = skip_assignments(argv, p.next);
    const bool shell = has_flag(p, 's') || has_flag(p, 'i') || has_long(p, "shell") || has_long(p, "login");
    if (cmd >= argv.size() && shell) return stdin_shell();
    return inner(rest(argv, cmd), value_of(p, {"-D", "--chdir"}));
}

bool is_stdin_path(const Field& f) {
    if (!f.is_static()) return false;
    std::string t = f.static_text();
    return t == "/dev/stdin" || t == "/dev/fd/0" || t == "/proc/self/fd/0";
}

// source FILE / . FILE: a file's commands run as execs and are checked then; standard input is
// read here and now.
Unwrapped source(const Argv& argv) {
    size_t i = 1;
    if (i < argv.size() && argv[i].is_static() && argv[i].static_text() == "--") ++i;
    if (i >= argv.size()) return {};
    if (!is_stdin_path(argv[i])) return script_file();
    Unwrapped u;
    u.kind = Unwrapped::Kind::StdinScript;
    u.positional = rest(argv, i + 1);
    return u;
}

Unwrapped shell(const Argv& argv) {
    // sh [-abefhimnuvxlc] [-o opt] [+o opt] [--login ...] [-c SCRIPT [NAME [ARG...]]] | [FILE [ARG...]]
    bool dash_c = false, dash_s = false;
    size_t i = 1;
    while (i < argv.size()) {
        if (!argv[i].is_static()) {
            if (argv[i].starts_with("-")) return unanalyzable("shell options are not known statically");
            break;
        }
        std::string t = argv[i].static_text();
        if (t == "--" || t == "-") {
            ++i;
            break;
        }
        if (t.size() < 2 || (t[0] != '-' && t[0] != '+')) break;
        if (t[1] == '-') {
            if (t == "--rcfile" || t == "--init-file") ++i;
            if (t == "--command") dash_c = true;  // some shells spell -c this way
            ++i;
            continue;
        }
        bool takes_next = false;
        for (size_t k = 1; k < t.size(); ++k) {
            if (t[k] == 'c') dash_c = true;
            if (t[k] == 's' && t[0] == '-') dash_s = true;
            if (t[k] == 'o' || t[k] == 'O') takes_next = true;
        }
        i += takes_next ? 2 : 1;
    }
    if (!dash_c && (dash_s || i >= argv.size())) {
        Unwrapped u;
        u.kind = Unwrapped::Kind::StdinScript;
        u.positional = rest(argv, i);
        return u;
    }
    if (!dash_c && is_stdin_path(argv[i])) {
        Unwrapped u;
        u.kind = Unwrapped::Kind::StdinScript;
        u.positional = rest(argv, i + 1);
        return u;
    }
    if (!dash_c) return script_file();  // its commands are checked at exec time inside the jail
    if (i >= argv.size()) return {};
    Unwrapped u;
    u.kind = Unwrapped::Kind::Script;
    u.script = argv[i];
    u.positional = rest(argv, i + 1);
    return u;
}

Unwrapped su(const Argv& argv) {
    Parsed p = parse_permuted(
        argv, {"csgGw", {"command", "session-command", "shell", "group", "supp-group", "whitelist-environment"}});
    const Field* c = value_of(p, {"-c", "--command", "--session-command"});
    if (!c) return stdin_shell();
    return script(*c);
}

Unwrapped watch(const Argv& argv) {
    Parsed p = parse_opts(argv, {"nq", {"interval"}, "d"});
    if (p.unknown) return unanalyzable("watch options are not known statically");
    if (p.next >= argv.size()) return {};
    if (has_flag(p, 'x') || has_long(p, "exec")) return inner(rest(argv, p.next));
    Unwrapped u;
    u.kind = Unwrapped::Kind::Script;
    u.script = join(argv, p.next);
    return u;
}

Unwrapped eval(const Argv& argv) {
    if (argv.size() < 2) return {};
    Unwrapped u;
    u.kind = Unwrapped::Kind::Script;
    u.script = join(argv, 1);
    u.same_shell = true;
    return u;
}

Unwrapped xargs(const Argv& argv) {
    Parsed p = parse_opts(
        argv, {"adEILnPs", {"arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var"}, "eil"});
    if (p.unknown) return unanalyzable("xargs options are not known statically");
    Argv cmd = rest(argv, p.next);
    if (cmd.empty()) cmd.push_back(Field::lit("echo"));
    Field from_stdin = Field::unknown("<stdin>");
    std::string repl;
    if (const Field* r = value_of(p, {"-I", "-i", "--replace"})) {
        repl = r->static_text();
        if (repl.empty()) repl = "{}";
    } else if (has_long(p, "replace")) {
        repl = "{}";
    }
    if (repl.empty()) {
        cmd.push_back(from_stdin);
    } else {
        for (size_t i = 1; i < cmd.size(); ++i) cmd[i] = substitute(cmd[i], repl, from_stdin);
    }
    return inner(std::move(cmd));
}

bool find_takes_arg(std::string_view p) {
    static constexpr std::string_view one[] = {
        "-name",     "-iname",     "-path",   "-ipath",  "-wholename", "-iwholename", "-regex",   "-iregex",
        "-type",     "-xtype",     "-user",   "-group",  "-uid",       "-gid",        "-perm",    "-size",
        "-mtime",    "-atime",     "-ctime",  "-mmin",   "-amin",      "-cmin",       "-anewer",  "-cnewer",
        "-samefile", "-inum",      "-links",  "-fstype", "-lname",     "-ilname",     "-used",    "-maxdepth",
        "-mindepth", "-regextype", "-printf", "-fprint", "-fprint0",   "-fls",        "-context", "-files0-from"};
    if (p.substr(0, 6) == "-newer") return true;
    return std::find(std::begin(one), std::end(one), p) != std::end(one);
}

bool find_is_filter(std::string_view p) {
    static constexpr std::string_view neutral[] = {"-depth",
                                                   "-d",
                                                   "-xdev",
                                                   "-mount",
                                                   "-follow",
                                                   "-noleaf",
                                                   "-ignore_readdir_race",
                                                   "-noignore_readdir_race",
                                                   "-daystart",
                                                   "-warn",
                                                   "-nowarn",
                                                   "-regextype",
                                                   "-maxdepth",
                                                   "-mindepth",
                                                   "-print",
                                                   "-print0",
                                                   "-printf",
                                                   "-fprint",
                                                   "-fprint0",
                                                   "-fprintf",
                                                   "-ls",
                                                   "-fls",
                                                   "-delete",
                                                   "-exec",
                                                   "-execdir",
                                                   "-ok",
                                                   "-okdir",
                                                   "-quit",
                                                   "-true",
                                                   "-a",
                                                   "-and",
                                                   "-o",
                                                   "-or",
                                                   ",",
                                                   "(",
                                                   ")"};
    return std::find(std::begin(neutral), std::end(neutral), p) == std::end(neutral);
}

// What find's expression selects, from a first pass over it.
struct FindScope {
    bool filtered = false;   // tests select only some files
    bool min_depth = false;  // -mindepth N with N > 0: the start paths themselves are not visited
};

FindScope find_scope(const Argv& argv, size_t k) {
    FindScope scope;
    for (; k < argv.size(); ++k) {
        if (!argv[k].is_static()) continue;
        std::string t = argv[k].static_text();
        if (t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir") {
            while (k + 1 < argv.size() && !(argv[k + 1].is_static() &&
                                            (argv[k + 1].static_text() == ";" || argv[k + 1].static_text() == "+"))) {
                ++k;
            }
            ++k;
            continue;
        }
        if (find_is_filter(t)) scope.filtered = true;
        if (t == "-mindepth" && k + 1 < argv.size()) {
            scope.min_depth = !(argv[k + 1].is_static() && argv[k + 1].static_text() == "0");
        }
        if (t == "-fprintf") ++k;
        if (find_takes_arg(t)) ++k;
    }
    return scope;
}

// find START... -exec CMD {} ;: CMD runs on some file under each start (an unknown), and, when
// no test selects files, certainly on every one of them: on START itself (or, with -mindepth,
// on every child of START, spelled START/*).
void find_exec(const Argv& cmd, const Argv& starts, const FindScope& scope, Unwrapped& u) {
    auto with = [&](const Field& value) {
        Argv c = cmd;
        for (size_t k = 1; k < c.size(); ++k) c[k] = substitute(c[k], "{}", value);
        return c;
    };
    bool uses = std::any_of(cmd.begin() + 1, cmd.end(), [](const Field& f) {
        return std::any_of(f.pieces.begin(), f.pieces.end(), [](const Piece& p) {
            return p.kind == Piece::Kind::Lit && p.text.find("{}") != std::string::npos;
        });
    });
    for (const auto& s : starts) {
        if (!scope.filtered && uses) {
            Field every = s;
            if (scope.min_depth) {
                bool slash =
                    !s.pieces.empty() && s.pieces.back().kind == Piece::Kind::Lit && s.pieces.back().text.back() == '/';
                every.add(Piece::Kind::Lit, slash ? "" : "/");
                every.add(Piece::Kind::Glob, "*");
            }
            u.argvs.push_back(with(every));
        }
        Field some = s;
        if (scope.filtered) some.add(Piece::Kind::Lit, "/");
        some.pieces.push_back({Piece::Kind::Unknown, "{}"});
        u.argvs.push_back(with(some));
    }
}

Unwrapped find(const Argv& argv) {
    size_t i = 1;
    Argv starts;
    for (; i < argv.size(); ++i) {
        const Field& f = argv[i];
        if (f.is_static()) {
            std::string t = f.static_text();
            if ((t.size() > 1 && t[0] == '-') || t == "(" || t == "!") break;
        }
        starts.push_back(f);
    }
    if (starts.empty()) starts.push_back(Field::lit("."));
    const FindScope scope = find_scope(argv, i);
    Unwrapped u;
    for (; i < argv.size(); ++i) {
        if (!argv[i].is_static()) continue;
        std::string t = argv[i].static_text();
        if (t == "-delete") {
            for (const auto& s : starts) {
                Argv rm{Field::lit("rm"), Field::lit("-f")};
                if (!scope.filtered) rm.insert(rm.begin() + 1, Field::lit("-r"));
                Field each = s;
                if (scope.filtered) {
                    each.add(Piece::Kind::Lit, "/");
                    each.pieces.push_back({Piece::Kind::Unknown, "{}"});
                }
                rm.push_back(std::move(each));
                u.argvs.push_back(std::move(rm));
            }
        } else if (t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir") {
            Argv cmd;
            for (++i; i < argv.size(); ++i) {
                if (argv[i].is_static()) {
                    std::string a = argv[i].static_text();
                    if (a == ";" || (a == "+" && !cmd.empty())) break;
                }
                cmd.push_back(argv[i]);
            }
            if (!cmd.empty()) find_exec(cmd, starts, scope, u);
        } else if (find_takes_arg(t)) {
            ++i;
        } else if (t == "-fprintf") {
            i += 2;
        }
    }
    if (!u.argvs.empty()) u.kind = Unwrapped::Kind::Argv;
    return u;
}

// busybox's nuke DIR...: each argument is removed as rm -r -f removes it (nuke reads no
// options, not even "--").
Unwrapped nuke(const Argv& argv) {
    Argv rm{Field::lit("rm"), Field::lit("-r"), Field::lit("-f"), Field::lit("--")};
    rm.insert(rm.end(), argv.begin() + 1, argv.end());
    return inner(std::move(rm));
}

// exec [-cl] [-a NAME] [COMMAND [ARG...]], the shell's builtin: COMMAND runs with NAME as its
// argv[0], which busybox and git read as what to be (exec -a rm busybox -rf DIR).
Unwrapped exec_builtin(const Argv& argv) {
    Parsed p = parse_opts(argv, {"a", {}});
    if (p.unknown) return unanalyzable("exec options are not known statically");
    return inner_named(rest(argv, p.next), value_of(p, {"-a"}), "exec -a");
}

}  // namespace

std::string_view basename(std::string_view path) {
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    return path_basename(path);
}

bool is_multicall(std::string_view prog) {
    return prog.starts_with("busybox") || prog.starts_with("toybox");
}

Unwrapped unwrap(const std::vector<Field>& argv) {
    if (argv.empty() || !argv[0].is_static()) return {};
    std::string prog0 = argv[0].static_text();
    std::string_view prog = basename(prog0);
    if (is_multicall(prog)) {
        // Their own options (--help, --list, --install) run nothing; any other first argument is
        // the applet, by its last path component (busybox -/rm is rm; -rf names none).
        if (argv.size() < 2 || (argv[1].starts_with("-") && argv[1].static_text().find('/') == std::string::npos))
            return {};
        return inner(rest(argv, 1));
    }
    if (prog == "env") return env(argv);
    if (prog == "sudo") return sudo(argv);
    if (prog == "su") return su(argv);
    if (prog == "eval") return eval(argv);
    if (prog == "watch") return watch(argv);
    if (prog == "source" || prog == ".") return source(argv);
    if (prog == "xargs") return xargs(argv);
    if (prog == "find") return find(argv);
    if (prog == "nuke") return nuke(argv);
    if (prog == "exec") return exec_builtin(argv);
    static constexpr std::string_view shells[] = {"sh",  "bash", "dash", "zsh",  "ksh",   "mksh",
                                                  "ash", "yash", "posh", "lksh", "rbash", "hush"};
    if (std::find(std::begin(shells), std::end(shells), prog) != std::end(shells)) return shell(argv);
    return unwrap_program(prog, argv);
}

std::string quote_argv(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) {
        if (!out.empty()) out.push_back(' ');
        bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-_./=:,+@%^", c);
        });
        if (plain) {
            out += a;
            continue;
        }
        out.push_back('\'');
        for (char c : a) {
            if (c == '\'')
                out += "'\\''";
            else
                out.push_back(c);
        }
        out.push_back('\'');
    }
    return out;
}

}  // namespace cordon::policy

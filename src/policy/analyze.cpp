// Walks a parsed script the way the shell would run it, with what can be known statically:
// variables assigned literally, positional parameters of sh -c, the working directory after cd,
// the text a shell reads from a here-document. Everything else is an Unknown piece, never a guess.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>

#include "cordon/policy/analyze.hpp"
#include "cordon/policy/names.hpp"
#include "scope.hpp"
#include "wrapper_args.hpp"

namespace cordon::policy {
namespace {

constexpr int kMaxNesting = 16;  // sh -c inside sh -c inside ...
constexpr size_t kMaxInvocations = 100000;
constexpr size_t kMaxCalls = 256;  // function and alias uses walked again, in a whole script

struct ActiveFunction {
    std::string name;
    std::string text;
    int async_base;
};

// Where a command's standard input comes from, as far as a shell reading a script from it cares.
struct Stdin {
    enum class Kind : unsigned char { Inherited, File, Text, Unknown };
    Kind kind = Kind::Inherited;
    std::string text;
};

bool is_output(const std::string& op) {
    return op == ">" || op == ">>" || op == ">|" || op == "<>" || op == "&>" || op == "&>>" || op == ">&";
}

// The literal text of a word without expansions, if it has one.
std::optional<std::string> literal(const Word& w) {
    std::string out;
    for (const auto& p : w) {
        if (p.kind != WordPart::Kind::Lit) return std::nullopt;
        out += p.text;
    }
    return out;
}

// What `echo ARGS` or `printf TEXT` writes, when its arguments are literal.
std::optional<std::string> static_output(const Node& n) {
    if (n.kind != Node::Kind::Simple || n.words.empty() || !n.redirs.empty()) return std::nullopt;
    auto prog = literal(n.words[0]);
    if (!prog || (*prog != "echo" && *prog != "printf")) return std::nullopt;
    std::string out;
    size_t i = 1;
    if (*prog == "echo") {
        while (i < n.words.size() && (literal(n.words[i]) == "-n" || literal(n.words[i]) == "-e")) ++i;
    }
    for (; i < n.words.size(); ++i) {
        auto w = literal(n.words[i]);
        if (!w) return std::nullopt;
        if (!out.empty() || i > 1) out += ' ';
        out += *w;
    }
    if (*prog == "printf") {
        std::string decoded;
        for (size_t k = 0; k < out.size(); ++k) {
            if (out[k] == '\\' && k + 1 < out.size() && out[k + 1] == 'n') {
                decoded += '\n';
                ++k;
            } else {
                decoded += out[k];
            }
        }
        return decoded;
    }
    return out + "\n";
}

class Analyzer {
public:
    Analyzer(std::vector<Invocation>& out, std::string_view home)
        : out_(out), home_(home), run_([this](const std::vector<Node>& ns, Scope& sc) { nodes(ns, sc); }) {}

    Scope fresh_scope(std::string_view cwd) const {
        Scope sc;
        sc.cwd = cwd.empty() || cwd[0] != '/' ? Pattern{{Tok::Kind::Any, 0}} : literal_pattern(cwd);
        sc.vars["HOME"] = home_;
        if (!cwd.empty()) sc.vars["PWD"] = std::string(cwd);
        return sc;
    }

    void nodes(const std::vector<Node>& ns, Scope& sc) {
        for (const auto& n : ns) node(n, sc);
    }

    void script_text(std::string_view text, Scope& sc, const std::string& label) {
        auto parsed = parse_script(text);
        if (!parsed) {
            unanalyzable(
                std::string(text), sc,
                fmt::format("{}cannot parse the script: {}: {}", label, parsed.error().what, parsed.error().why));
            return;
        }
        nodes(*parsed, sc);
    }

    void command(std::vector<Field> argv, Scope& sc, const std::string& text, std::vector<Field> writes, int nest,
                 const Stdin& in);
    // What the wrapper PROG runs (U, unwrap()'s answer for it), checked as its own commands.
    void wrapped(Unwrapped u, const std::string& prog, Scope& sc, const std::string& text, int nest, const Stdin& in);

private:
    std::vector<Invocation>& out_;
    std::string home_;
    RunSubstitution run_;
    int async_ = 0;
    int script_depth_ = 0;
    std::vector<ActiveFunction> functions_;                                    // definitions being walked
    std::map<std::string, std::shared_ptr<const Node>, std::less<>> defined_;  // functions by name
    std::map<std::string, std::string, std::less<>> aliases_;                  // known alias texts
    std::vector<std::string> calling_;                                         // uses being walked
    size_t calls_ = 0;
    Stdin pipe_in_;  // stdin of the pipeline element being analysed
    // Inside what busybox or toybox run in their own process (in_process_ deep), and whether
    // the next command is the applet one of them runs.
    int in_process_ = 0;
    bool applet_next_ = false;

    void push(Invocation inv) {
        inv.in_process = inv.in_process || in_process_ > 0;
        if (out_.size() < kMaxInvocations) {
            out_.push_back(std::move(inv));
        } else if (out_.size() == kMaxInvocations) {
            Invocation stop;
            stop.unanalyzable = true;
            stop.text = inv.text;
            stop.why = "too many commands to analyse";
            out_.push_back(std::move(stop));
        }
    }

    // A node that only redirects (a compound command's or an assignment-only command's
    // redirections): its writes are checked like a command's.
    void push_writes(std::vector<Field> writes, const Scope& sc, const std::string& text) {
        if (writes.empty()) return;
        Invocation inv;
        inv.cwd = sc.cwd;
        inv.writes = std::move(writes);
        inv.text = text;
        push(std::move(inv));
    }

    void unanalyzable(std::string text, const Scope& sc, std::string why) {
        Invocation inv;
        inv.cwd = sc.cwd;
        inv.text = std::move(text);
        inv.unanalyzable = true;
        inv.why = std::move(why);
        push(std::move(inv));
    }

    std::vector<Field> expand(const Word& w, Scope& sc, bool split) { return expand_word(w, sc, split, run_); }

    std::vector<Field> expand_words(const std::vector<Word>& words, Scope& sc) {
        std::vector<Field> out;
        for (const auto& w : words) {
            for (const auto& b : brace_expand(w)) {
                for (auto& f : expand(b, sc, true)) out.push_back(std::move(f));
            }
        }
        return out;
    }

    void node(const Node& n, Scope& sc) {
        if (n.background) {  // runs asynchronously, in a subshell
            Subshell sub(sc);
            ++async_;
            run(n, sc);
            --async_;
            return;
        }
        run(n, sc);
    }

    void run(const Node& n, Scope& sc) {
        using K = Node::Kind;
        Stdin in = std::exchange(pipe_in_, Stdin{});
        switch (n.kind) {
            case K::Simple:
                simple(n, sc, in);
                break;
            case K::Pipeline:
                if (n.kids.size() > 1) {
                    ++async_;
                    for (size_t i = 0; i < n.kids.size(); ++i) {
                        Subshell sub(sc);
                        if (i > 0) {
                            auto text = static_output(n.kids[i - 1]);
                            pipe_in_ = text ? Stdin{Stdin::Kind::Text, *text} : Stdin{Stdin::Kind::Unknown, {}};
                        }
                        node(n.kids[i], sc);
                        pipe_in_ = {};
                    }
                    --async_;
                } else {
                    pipe_in_ = in;
                    nodes(n.kids, sc);
                }
                break;
            case K::Subshell: {
                Subshell sub(sc);
                nodes(n.kids, sc);
                break;
            }
            case K::For: {
                auto items = expand_words(n.words, sc);
                auto v = static_value(items);
                sc.set(n.name, v && !n.words.empty() ? v : std::nullopt);
                nodes(n.kids, sc);
                break;
            }
            case K::Case:
                for (const auto& w : n.words) expand(w, sc, false);
                nodes(n.kids, sc);
                break;
            case K::Function: {
                // Checked where it is defined, with what is known there, and again where it is used.
                functions_.push_back({n.name, n.text, async_});
                {
                    Subshell sub(sc);
                    nodes(n.kids, sc);
                }
                functions_.pop_back();
                defined_[n.name] = std::make_shared<const Node>(n);
                break;
            }
            case K::Arith:
                break;
            case K::AndOr:
            case K::List:
            case K::Group:
            case K::If:
            case K::Loop:
                nodes(n.kids, sc);
                break;
        }
        if (n.kind != K::Simple) {
            Stdin ignored;
            push_writes(redirections(n, sc, ignored), sc, n.text);
        }
    }

    // Output targets of N's redirections; IN learns about here-documents and input files.
    std::vector<Field> redirections(const Node& n, Scope& sc, Stdin& in) {
        std::vector<Field> writes;
        for (const auto& r : n.redirs) {
            if (r.heredoc) {
                auto body = static_value(expand(*r.heredoc, sc, false));
                in = body ? Stdin{Stdin::Kind::Text, *body} : Stdin{Stdin::Kind::Unknown, {}};
                continue;
            }
            auto fields = expand(r.target, sc, false);
            if (r.op == "<<<") {
                auto v = static_value(fields);
                in = v ? Stdin{Stdin::Kind::Text, *v + "\n"} : Stdin{Stdin::Kind::Unknown, {}};
            } else if (r.op == "<" || r.op == "<&" || r.op == "<>") {
                in = Stdin{Stdin::Kind::File, {}};
            }
            if (!is_output(r.op)) continue;
            for (auto& f : fields) {
                bool fd = f.is_static() && !f.static_text().empty() &&
                          f.static_text().find_first_not_of("0123456789-") == std::string::npos;
                if (!fd) writes.push_back(std::move(f));
            }
        }
        return writes;
    }

    void simple(const Node& n, Scope& sc, Stdin in) {
        std::vector<Field> argv = expand_words(n.words, sc);
        std::vector<std::pair<std::string, std::optional<std::string>>> assigned;
        for (const auto& a : n.assigns) {
            if (a.is_array) {
                for (const auto& w : a.array) expand(w, sc, true);
                assigned.emplace_back(a.name, std::nullopt);
            } else {
                assigned.emplace_back(a.name, static_value(expand(a.value, sc, false)));
            }
        }
        for (const auto& [name, value] : assigned) command_variable(name, value, sc, n.text);
        auto writes = redirections(n, sc, in);
        if (argv.empty()) {
            for (auto& [name, value] : assigned) sc.set(name, value);
            push_writes(std::move(writes), sc, n.text);
            return;
        }
        command(argv, sc, n.text, std::move(writes), 0, in);
        argv0_from_zsh(argv, assigned, sc, n.text, in);
        builtin_effects(argv, sc, n.text);
    }

    // zsh runs an external command with $ARGV0 as its argv[0] (ARGV0=rm busybox -rf DIR): the
    // command is judged as exec -a ARGV0 is, wherever the variable is set (any shell's).
    void argv0_from_zsh(const std::vector<Field>& argv,
                        const std::vector<std::pair<std::string, std::optional<std::string>>>& assigned, Scope& sc,
                        const std::string& text, const Stdin& in) {
        std::optional<std::optional<std::string>> argv0;
        for (const auto& [name, value] : assigned) {
            if (name == "ARGV0") argv0 = value;
        }
        if (auto known = sc.get("ARGV0"); !argv0 && known) argv0 = known;  // set earlier, to a known value
        if (!argv0 || (*argv0 && (*argv0)->empty())) return;
        std::vector<Field> named{Field::lit("exec"), Field::lit("-a"),
                                 *argv0 ? Field::lit(**argv0) : Field::unknown("$ARGV0")};
        named.insert(named.end(), argv.begin(), argv.end());
        command(std::move(named), sc, text, {}, 0, in);
    }

    void builtin_effects(const std::vector<Field>& argv, Scope& sc, const std::string& text) {
        if (!argv[0].is_static()) return;
        std::string prog = argv[0].static_text();
        if (prog == "cd" || prog == "pushd" || prog == "chdir") {
            const Field* target = nullptr;
            for (size_t i = 1; i < argv.size(); ++i) {
                if (argv[i].is_static() && argv[i].static_text().size() > 1 && argv[i].starts_with("-")) continue;
                target = &argv[i];
                break;
            }
            Field dest = target ? *target : Field::lit(sc.get("HOME").value_or(home_));
            if (dest.is_static() && dest.static_text() == "-") {
                auto old = sc.get("OLDPWD");
                dest = old ? Field::lit(*old) : Field::unknown("$OLDPWD");
            }
            sc.set("OLDPWD", to_string(sc.cwd));
            sc.cwd = resolve_path(dest, sc.cwd).path;
            bool known =
                std::all_of(sc.cwd.begin(), sc.cwd.end(), [](const Tok& t) { return t.kind == Tok::Kind::Ch; });
            sc.set("PWD", known ? std::optional(to_string(sc.cwd)) : std::nullopt);
        } else if (prog == "popd") {
            sc.cwd = Pattern{{Tok::Kind::Any, 0}};
            sc.set("PWD", std::nullopt);
        } else if (prog == "export" || prog == "local" || prog == "declare" || prog == "typeset" ||
                   prog == "readonly" || prog == "alias") {
            for (size_t i = 1; i < argv.size(); ++i) {
                const Field& f = argv[i];
                if (f.pieces.empty() || f.pieces[0].kind != Piece::Kind::Lit) continue;
                const std::string& t = f.pieces[0].text;
                size_t eq = t.find('=');
                if (eq == std::string::npos || eq == 0) continue;
                Field value = f.drop_prefix(eq + 1);
                if (prog != "alias") {
                    auto known = value.is_static() ? std::optional(value.static_text()) : std::nullopt;
                    command_variable(t.substr(0, eq), known, sc, text);
                    sc.set(t.substr(0, eq), known);
                } else if (value.is_static()) {
                    // An alias may run later (sh expands them): check its text now, and where it is used.
                    aliases_[t.substr(0, eq)] = value.static_text();
                    Subshell sub(sc);
                    nested_script(value.static_text(), sc, text, "alias: ");
                } else {
                    unanalyzable(text, sc, "the value of an alias is not known statically");
                }
            }
        } else if (prog == "unset") {
            bool functions = argv.size() > 1 && argv[1].is_static() && argv[1].static_text() == "-f";
            for (size_t i = 1; i < argv.size(); ++i) {
                if (!argv[i].is_static() || argv[i].starts_with("-")) continue;
                sc.set(argv[i].static_text(), "");
                if (functions) defined_.erase(argv[i].static_text());
            }
        } else if (prog == "unalias") {
            for (size_t i = 1; i < argv.size(); ++i) {
                if (argv[i].is_static() && argv[i].static_text() == "-a") aliases_.clear();
                if (argv[i].is_static()) aliases_.erase(argv[i].static_text());
            }
        } else if (prog == "read" || prog == "mapfile" || prog == "readarray" || prog == "getopts" ||
                   prog == "printf") {
            for (size_t i = 1; i < argv.size(); ++i) {
                if (argv[i].is_static()) sc.set(argv[i].static_text(), std::nullopt);
            }
        } else if (prog == "set" && argv.size() > 1 && argv[1].is_static() && argv[1].static_text() == "--") {
            sc.positional.resize(1);
            for (size_t i = 2; i < argv.size(); ++i) {
                sc.positional.push_back(argv[i].is_static() ? std::optional(argv[i].static_text()) : std::nullopt);
            }
            sc.positional_known = true;
        } else if (prog == "shift") {
            size_t n = 1;
            if (argv.size() > 1) {
                if (!argv[1].is_static()) {
                    sc.positional_known = false;
                    sc.positional.clear();
                    return;
                }
                n = static_cast<size_t>(std::atoi(argv[1].static_text().c_str()));
            }
            for (size_t i = 0; i < n && sc.positional.size() > 1; ++i) sc.positional.erase(sc.positional.begin() + 1);
        }
    }

    // A function or an alias named WORD runs its body in this shell with ARGV's operands as
    // "$@" (an alias is text followed by them): its commands are checked again with those
    // values, and name the use they come from. Both are, when a word is both.
    void call(const std::string& word, const std::vector<Field>& argv, Scope& sc, const std::string& text) {
        auto fn = defined_.find(word);
        auto alias = aliases_.find(word);
        if (fn == defined_.end() && alias == aliases_.end()) return;
        if (std::find(calling_.begin(), calling_.end(), word) != calling_.end()) return;  // recursion
        if (++calls_ > kMaxCalls) {
            unanalyzable(text, sc, "too many function and alias uses to analyse");
            return;
        }
        std::shared_ptr<const Node> body = fn == defined_.end() ? nullptr : fn->second;
        std::optional<std::string> alias_text;
        if (alias != aliases_.end()) alias_text = alias->second + " \"$@\"";
        std::vector<std::optional<std::string>> positional{sc.positional.empty() ? std::nullopt : sc.positional[0]};
        for (size_t i = 1; i < argv.size(); ++i) {
            positional.push_back(argv[i].is_static() ? std::optional(argv[i].static_text()) : std::nullopt);
        }
        std::swap(sc.positional, positional);
        const bool known = std::exchange(sc.positional_known, true);
        const size_t first = out_.size();
        calling_.push_back(word);
        if (body) nodes(body->kids, sc);
        if (alias_text) nested_script(*alias_text, sc, text, "alias " + word + ": ");
        calling_.pop_back();
        sc.positional = std::move(positional);
        sc.positional_known = known;
        for (size_t i = first; i < out_.size(); ++i) out_[i].text += " (in " + text + ")";
    }

    // A variable that programs run as a command (EDITOR='...', GIT_SSH_COMMAND='...'): its value
    // is checked as shell text where it is set.
    void command_variable(const std::string& name, const std::optional<std::string>& value, Scope& sc,
                          const std::string& text) {
        if (!value || !wrap::is_command_variable(name)) return;
        Subshell sub(sc);
        nested_script(*value, sc, text, name + ": ");
    }

    void nested_script(const std::string& script, Scope& sc, const std::string& text, const std::string& label) {
        if (++script_depth_ <= kMaxNesting)
            script_text(script, sc, label);
        else
            unanalyzable(text, sc, "shells, eval and aliases are nested too deeply");
        --script_depth_;
    }

    // A new shell runs SCRIPT: it inherits the directory and HOME, not the caller's functions.
    void new_shell(const std::string& script, const std::vector<Field>& positional, const std::string& prog,
                   const Scope& sc, const std::string& text) {
        Scope sub = fresh_scope({});
        sub.cwd = sc.cwd;
        for (const char* v : {"PWD", "HOME"}) sub.set(v, sc.get(v));
        sub.positional_known = true;
        sub.positional.emplace_back(prog);
        for (const auto& f : positional) {
            sub.positional.push_back(f.is_static() ? std::optional(f.static_text()) : std::nullopt);
        }
        if (sub.positional.size() > 1) sub.positional.erase(sub.positional.begin());  // $0 is the first
        int saved = std::exchange(async_, 0);
        auto saved_functions = std::exchange(functions_, {});
        auto saved_defined = std::exchange(defined_, {});
        auto saved_aliases = std::exchange(aliases_, {});
        nested_script(script, sub, text, prog + ": ");
        functions_ = std::move(saved_functions);
        defined_ = std::move(saved_defined);
        aliases_ = std::move(saved_aliases);
        async_ = saved;
    }
};

void Analyzer::command(std::vector<Field> argv, Scope& sc, const std::string& text, std::vector<Field> writes, int nest,
                       const Stdin& in) {
    // An applet of busybox or toybox runs what it runs (its shell's commands, xargs' and find's)
    // in their own process, without an exec.
    const bool applet = std::exchange(applet_next_, false);
    Invocation inv;
    inv.cwd = sc.cwd;
    inv.text = text;
    inv.writes = std::move(writes);
    if (!argv[0].is_static()) {
        inv.unanalyzable = true;
        inv.why = fmt::format("the command word '{}' cannot be resolved statically", argv[0].static_text());
        inv.argv = std::move(argv);
        push(std::move(inv));
        return;
    }
    std::string prog(basename(argv[0].static_text()));
    for (const auto& f : functions_) {
        if (f.name == prog && async_ > f.async_base) {
            Invocation bomb;
            bomb.cwd = sc.cwd;
            bomb.text = f.text;
            bomb.construct = Invocation::Construct::ForkBomb;
            bomb.argv.push_back(Field::lit(prog));
            push(std::move(bomb));
        }
    }
    inv.argv = argv;
    push(std::move(inv));
    call(argv[0].static_text(), argv, sc, text);
    // What the program may act as for its name (-rm is rm, git-clean is git clean), as the
    // exec-time check judges it; busybox's own names are its unwrap's.
    if (nest < kMaxNesting && !is_multicall(prog)) {
        auto named = argv0_variants(argv, prog, prog, [](std::string_view w) { return Field::lit(w); });
        for (size_t i = 1; i < named.size(); ++i) command(std::move(named[i]), sc, text, {}, nest + 1, in);
    }
    Unwrapped u = unwrap(argv);
    if (u.kind == Unwrapped::Kind::None) return;
    if (nest >= kMaxNesting) {
        unanalyzable(text, sc, "wrappers are nested too deeply");
        return;
    }
    in_process_ += applet ? 1 : 0;
    wrapped(std::move(u), prog, sc, text, nest, in);
    in_process_ -= applet ? 1 : 0;
}

void Analyzer::wrapped(Unwrapped u, const std::string& prog, Scope& sc, const std::string& text, int nest,
                       const Stdin& in) {
    const bool unseen_script = u.kind == Unwrapped::Kind::ScriptFile || u.kind == Unwrapped::Kind::StdinScript;
    if (in_process_ > 0 && unseen_script) {
        // Nothing would check what such a script runs: busybox's shell (Debian's has the
        // standalone shell) runs its applets, rm among them, without an exec. (Even a
        // here-document: the check of busybox's exec cannot read its standard input.)
        unanalyzable(text, sc,
                     "busybox's and toybox's shells run their applets without an exec: the exec-time check "
                     "cannot see the commands of a script they read from a file or standard input");
        u.kind = Unwrapped::Kind::None;
    }
    switch (u.kind) {
        case Unwrapped::Kind::None:
        case Unwrapped::Kind::ScriptFile:
            break;
        case Unwrapped::Kind::Argv:
            for (auto& a : u.argvs) {
                Subshell sub(sc);
                if (u.chdir) sc.cwd = resolve_path(*u.chdir, sc.cwd).path;
                if (a.empty()) continue;
                applet_next_ = is_multicall(prog);
                command(std::move(a), sc, text, {}, nest + 1, in);
            }
            break;
        case Unwrapped::Kind::Unanalyzable:
            unanalyzable(text, sc, u.why);
            break;
        case Unwrapped::Kind::Script:
            if (!u.script.is_static()) {
                unanalyzable(text, sc, fmt::format("the script given to {} is not known statically", prog));
            } else if (u.same_shell) {
                nested_script(u.script.static_text(), sc, text, prog + ": ");
            } else {
                new_shell(u.script.static_text(), u.positional, prog, sc, text);
            }
            break;
        case Unwrapped::Kind::StdinScript:
            // A shell without -c or a script file reads its script from standard input.
            if (in.kind == Stdin::Kind::Text) {
                new_shell(in.text, u.positional, prog, sc, text);
            } else if (in.kind == Stdin::Kind::Unknown) {
                unanalyzable(text, sc,
                             fmt::format("the script {} reads from its standard input is not known "
                                         "statically",
                                         prog));
            }
            break;
    }
}

}  // namespace

std::vector<Invocation> analyze_script(std::string_view script, std::string_view cwd, std::string_view home) {
    std::vector<Invocation> out;
    Analyzer a(out, home);
    Scope sc = a.fresh_scope(cwd);
    a.script_text(script, sc, "");
    return out;
}

std::vector<Invocation> analyze_argv(const std::vector<std::string>& argv, std::string_view cwd,
                                     std::string_view home) {
    std::vector<Invocation> out;
    if (argv.empty()) return out;
    Analyzer a(out, home);
    Scope sc = a.fresh_scope(cwd);
    std::vector<Field> fields;
    fields.reserve(argv.size());
    for (const auto& s : argv) fields.push_back(Field::lit(s));
    a.command(std::move(fields), sc, quote_argv(argv), {}, 0, Stdin{});
    return out;
}

}  // namespace cordon::policy

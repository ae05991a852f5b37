// The option syntax and results wrapper programs share (wrapper_args.hpp): getopt-style
// parsing, the pieces of an argv, and what a wrapper runs.
#include "wrapper_args.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <iterator>

#include "cordon/policy/names.hpp"

namespace cordon::policy::wrap {

bool is_word(const Field& f, std::string_view w) {
    return f.is_static() && f.static_text() == w;
}

bool has_flag(const Parsed& p, char c) {
    return p.flags.find(c) != std::string::npos;
}
bool has_long(const Parsed& p, std::string_view l) {
    return std::find(p.longs.begin(), p.longs.end(), l) != p.longs.end();
}
const Field* value_of(const Parsed& p, std::initializer_list<std::string_view> names) {
    for (auto it = p.values.rbegin(); it != p.values.rend(); ++it) {
        for (auto n : names) {
            if (it->first == n) return &it->second;
        }
    }
    return nullptr;
}

namespace {
// Whether parse_opts stopped at NEXT because of a "--" just before it.
bool is_word_dashdash(const Argv& argv, size_t next) {
    return next >= 1 && argv[next - 1].is_static() && argv[next - 1].static_text() == "--";
}
}  // namespace

Parsed parse_opts(const Argv& argv, const Opts& o, size_t start) {
    Parsed p;
    size_t i = start;
    while (i < argv.size()) {
        const Field& f = argv[i];
        if (!f.is_static()) {
            if (f.starts_with("-")) p.unknown = true;
            break;
        }
        std::string t = f.static_text();
        if (t == "--") {
            ++i;
            break;
        }
        if (t.size() < 2 || t[0] != '-') break;
        if (t[1] == '-') {
            size_t eq = t.find('=');
            std::string name = t.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
            bool takes = std::find(o.long_arg.begin(), o.long_arg.end(), name) != o.long_arg.end();
            if (eq != std::string::npos) {
                p.values.push_back({"--" + name, Field::lit(t.substr(eq + 1))});
            } else if (takes && i + 1 < argv.size()) {
                p.values.push_back({"--" + name, argv[i + 1]});
                ++i;
            } else {
                p.longs.push_back(name);
            }
            ++i;
            continue;
        }
        size_t k = 1;
        for (; k < t.size(); ++k) {
            char c = t[k];
            std::string opt = std::string("-") + c;
            if (o.short_arg.find(c) != std::string_view::npos) {
                if (k + 1 < t.size()) {
                    p.values.push_back({opt, Field::lit(t.substr(k + 1))});
                } else if (i + 1 < argv.size()) {
                    p.values.push_back({opt, argv[i + 1]});
                    ++i;
                }
                break;
            }
            if (o.short_optional.find(c) != std::string_view::npos) {
                p.values.push_back({opt, Field::lit(t.substr(k + 1))});
                break;
            }
            p.flags.push_back(c);
        }
        ++i;
    }
    p.next = i;
    return p;
}

Parsed parse_permuted(const Argv& argv, const Opts& o) {
    Parsed all;
    for (size_t i = 1; i < argv.size();) {
        Parsed p = parse_opts(argv, o, i);
        all.values.insert(all.values.end(), p.values.begin(), p.values.end());
        all.flags += p.flags;
        all.longs.insert(all.longs.end(), p.longs.begin(), p.longs.end());
        all.unknown = all.unknown || p.unknown;
        if (p.next > 0 && p.next <= argv.size() && is_word_dashdash(argv, p.next)) break;
        i = p.next + 1;  // past an operand
    }
    all.next = argv.size();
    return all;
}

Argv rest(const Argv& argv, size_t from) {
    if (from >= argv.size()) return {};
    return Argv(argv.begin() + static_cast<std::ptrdiff_t>(from), argv.end());
}

bool is_env_assignment(const Field& f) {
    if (f.pieces.empty() || f.pieces[0].kind != Piece::Kind::Lit) return false;
    const std::string& t = f.pieces[0].text;
    size_t eq = t.find('=');
    if (eq == 0 || eq == std::string::npos) return false;
    return std::all_of(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(eq),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

size_t skip_assignments(const Argv& argv, size_t i) {
    while (i < argv.size() && is_env_assignment(argv[i])) ++i;
    return i;
}

Unwrapped inner(Argv a, const Field* chdir) {
    Unwrapped u;
    if (a.empty()) return u;
    u.kind = Unwrapped::Kind::Argv;
    u.argvs.push_back(std::move(a));
    if (chdir) u.chdir = *chdir;
    return u;
}

bool is_command_variable(std::string_view name) {
    static constexpr std::string_view names[] = {
        "EDITOR",    "VISUAL",          "SUDO_EDITOR",       "FCEDIT",         "PAGER",
        "MANPAGER",  "SYSTEMD_PAGER",   "BROWSER",           "GIT_EDITOR",     "GIT_SEQUENCE_EDITOR",
        "GIT_PAGER", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "PROMPT_COMMAND", "RSYNC_RSH",
    };
    return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

Argv shell_text(const Field& text) {
    return {Field::lit("sh"), Field::lit("-c"), text};
}

Argv split_words(const Field& f) {
    Argv out;
    if (!f.is_static()) {
        out.push_back(Field::unknown());
        return out;
    }
    std::string word;
    bool have = false;
    char quote = 0;
    const std::string text = f.static_text();
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\\' && quote != '\'' && i + 1 < text.size()) {
            word.push_back(text[++i]);  // git's split_cmdline: the next character as it is
            have = true;
        } else if (quote) {
            if (c == quote)
                quote = 0;
            else
                word.push_back(c);
        } else if (c == '\'' || c == '"') {
            quote = c;
            have = true;
        } else if (c == ' ' || c == '\t' || c == '\n') {
            if (have || !word.empty()) out.push_back(Field::lit(word));
            word.clear();
            have = false;
        } else {
            word.push_back(c);
        }
    }
    if (have || !word.empty()) out.push_back(Field::lit(word));
    return out;
}

Unwrapped inner_named(Argv cmd, const Field* name, std::string_view who) {
    if (!name || cmd.empty()) return inner(std::move(cmd));
    if (!name->is_static() || !cmd[0].is_static()) {
        return unanalyzable(std::string("the name ") + std::string(who) + " gives the command is not known statically");
    }
    Unwrapped u = inner(cmd);
    auto named = argv0_variants(cmd, name->static_text(), cmd[0].static_text(),
                                [](std::string_view w) { return Field::lit(w); });
    for (auto& line : named) u.argvs.push_back(std::move(line));
    return u;
}

Unwrapped unanalyzable(std::string why) {
    Unwrapped u;
    u.kind = Unwrapped::Kind::Unanalyzable;
    u.why = std::move(why);
    return u;
}

Unwrapped stdin_shell() {
    Unwrapped u;
    u.kind = Unwrapped::Kind::StdinScript;
    return u;
}

Unwrapped script_file() {
    Unwrapped u;
    u.kind = Unwrapped::Kind::ScriptFile;
    return u;
}

Unwrapped script(const Field& text) {
    Unwrapped u;
    u.kind = Unwrapped::Kind::Script;
    u.script = text;
    return u;
}

Field join(const Argv& argv, size_t from) {
    Field joined;
    for (size_t i = from; i < argv.size(); ++i) {
        if (i > from) joined.add(Piece::Kind::Lit, " ");
        for (const auto& piece : argv[i].pieces) joined.add(piece.kind, piece.text);
    }
    return joined;
}

Field substitute(const Field& f, std::string_view repl, const Field& value) {
    if (repl.empty()) return f;
    Field out;
    for (const auto& piece : f.pieces) {
        if (piece.kind != Piece::Kind::Lit) {
            out.add(piece.kind, piece.text);
            continue;
        }
        std::string_view t = piece.text;
        size_t pos = 0;
        while ((pos = t.find(repl)) != std::string_view::npos) {
            out.add(Piece::Kind::Lit, t.substr(0, pos));
            for (const auto& vp : value.pieces) out.add(vp.kind, vp.text);
            t.remove_prefix(pos + repl.size());
        }
        out.add(Piece::Kind::Lit, t);
    }
    return out;
}

}  // namespace cordon::policy::wrap

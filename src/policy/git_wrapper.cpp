// git as a wrapper: git -C DIR runs the same command line in DIR, and the settings whose value
// git runs as a shell command (git -c KEY=TEXT, git config KEY TEXT) are checked as shell text.
#include <algorithm>
#include <cctype>
#include <optional>

#include "wrapper_args.hpp"

namespace cordon::policy {
namespace {

using namespace wrap;

// S in lower case, as git compares configuration keys and alias names.
std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

// The value of a git configuration KEY that git runs as a shell command, if it is one: the
// pager, editor, ssh command and the like; an alias or a credential helper starting with '!'.
std::optional<Field> git_command(const std::string& spelled, const Field& value) {
    const std::string key = lower(spelled);
    auto ends = [&](std::string_view e) { return key.size() > e.size() && key.ends_with(e); };
    if (key.starts_with("alias.") || key == "credential.helper") {
        if (!value.starts_with("!")) return std::nullopt;
        return value.drop_prefix(1);
    }
    static constexpr std::string_view keys[] = {"core.pager",   "core.editor",   "core.sshcommand", "core.fsmonitor",
                                                "core.askpass", "diff.external", "sequence.editor", "gpg.program"};
    const bool command = std::find(std::begin(keys), std::end(keys), key) != std::end(keys) ||
                         key.starts_with("pager.") ||
                         ((key.starts_with("difftool.") || key.starts_with("mergetool.")) && ends(".cmd")) ||
                         (key.starts_with("filter.") && (ends(".clean") || ends(".smudge") || ends(".process")));
    if (!command || is_word(value, "true") || is_word(value, "false")) return std::nullopt;
    return value;
}

struct Alias {
    std::string name;  // lower case, as git looks it up
    Field value;
    bool shell = false;  // "!TEXT": git runs sh -c 'TEXT "$@"' TEXT ARGS
};

// KEY=VALUE (git -c) or KEY and VALUE (git config): the shell command VALUE runs, if any. With
// ALIASES, a -c alias.NAME=VALUE of git's own commands is kept there too.
void git_setting(const Field& key, const Field* value, std::vector<Argv>& commands,
                 std::vector<Alias>* aliases = nullptr) {
    if (key.pieces.empty() || key.pieces[0].kind != Piece::Kind::Lit) return;
    const std::string& t = key.pieces[0].text;
    const size_t eq = value ? std::string::npos : t.find('=');
    if (!value && eq == std::string::npos) return;
    const Field v = value ? *value : key.drop_prefix(eq + 1);
    const std::string name = lower(t.substr(0, eq));
    const bool alias = aliases && name.starts_with("alias.") && name.size() > 6;
    if (auto text = git_command(name, v)) {
        commands.push_back(shell_text(*text));
        if (alias) aliases->push_back({name.substr(6), *text, true});
        return;
    }
    if (alias) aliases->push_back({name.substr(6), v});
}

// --config-env KEY=VAR: the setting, with a value not known statically.
void config_env(const Field& setting, std::vector<Argv>& commands, std::vector<Alias>& aliases) {
    if (!setting.is_static()) return;
    const std::string t = setting.static_text();
    const size_t eq = t.find('=');
    if (eq == std::string::npos) return;
    const Field key = Field::lit(t.substr(0, eq));
    const Field value = Field::unknown("$" + t.substr(eq + 1));
    git_setting(key, &value, commands, &aliases);
}

// git config [OPTIONS] [set] KEY VALUE, from the word after "config".
void git_config(const Argv& argv, size_t i, std::vector<Argv>& commands) {
    const Opts opts{"f", {"file", "blob", "type", "default", "comment", "value"}};
    size_t k = parse_opts(argv, opts, i).next;
    if (k < argv.size() && is_word(argv[k], "set")) k = parse_opts(argv, opts, k + 1).next;
    if (k + 1 < argv.size() && argv[k].is_static()) git_setting(argv[k], &argv[k + 1], commands);
}

}  // namespace

// git -C DIR ... runs in DIR (each -C relative to the one before): the same command line
// without -C, checked again as run there. Settings whose value git runs as a shell command
// (git -c core.pager=TEXT, git config alias.x '!TEXT') are checked as shell text.
Unwrapped git(const Argv& argv) {
    Argv cmd{argv[0]};
    std::optional<Field> dir;
    std::vector<Argv> commands;
    std::vector<Alias> aliases;
    size_t i = 1;
    for (; i < argv.size() && argv[i].is_static() && argv[i].starts_with("-"); ++i) {
        const std::string t = argv[i].static_text();
        if (t == "-C" && i + 1 < argv.size()) {
            const Field& d = argv[++i];
            if (!dir || d.starts_with("/")) {
                dir = d;
            } else {
                dir->add(Piece::Kind::Lit, "/");
                for (const auto& piece : d.pieces) dir->add(piece.kind, piece.text);
            }
            continue;
        }
        cmd.push_back(argv[i]);
        // --config-env KEY=VAR: the value is in the environment, not known here.
        if (t.rfind("--config-env=", 0) == 0) config_env(argv[i].drop_prefix(13), commands, aliases);
        const bool takes =
            t == "-c" || t == "--git-dir" || t == "--work-tree" || t == "--namespace" || t == "--config-env";
        if (!takes || i + 1 >= argv.size()) continue;
        cmd.push_back(argv[++i]);
        if (t == "-c") git_setting(argv[i], nullptr, commands, &aliases);
        if (t == "--config-env") config_env(argv[i], commands, aliases);
    }
    if (i < argv.size() && is_word(argv[i], "config")) git_config(argv, i + 1, commands);
    // git -c alias.NAME=VALUE NAME ARGS runs git VALUE ARGS (an alias of git's own commands; one
    // from a config file is seen at its exec: git runs itself again). A value may name another
    // alias (alias.a=b, alias.b=clean), as many times as git allows before it calls it a loop.
    if (i < argv.size() && argv[i].is_static() && !aliases.empty()) {
        Argv tail(argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end());
        bool expanded = false;
        for (int depth = 0; depth < 16 && !tail.empty() && tail[0].is_static(); ++depth) {
            const std::string sub = lower(tail[0].static_text());
            auto a = std::find_if(aliases.rbegin(), aliases.rend(), [&](const Alias& x) { return x.name == sub; });
            if (a == aliases.rend()) break;
            if (a->shell) {
                // git appends the arguments: sh -c 'TEXT "$@"' TEXT ARGS.
                Field text = a->value;
                text.add(Piece::Kind::Lit, " \"$@\"");
                Argv sh{Field::lit("sh"), Field::lit("-c"), text, a->value};
                sh.insert(sh.end(), tail.begin() + 1, tail.end());
                commands.push_back(std::move(sh));
                expanded = false;
                break;
            }
            Argv next = split_words(a->value);
            next.insert(next.end(), tail.begin() + 1, tail.end());
            tail = std::move(next);
            expanded = true;
        }
        if (expanded && !tail.empty() && tail[0].is_static()) {
            Argv line{argv[0]};
            line.insert(line.end(), tail.begin(), tail.end());
            commands.push_back(std::move(line));
        } else if (expanded) {
            commands.push_back({Field::unknown("git alias")});  // a value not known here: anything
        }
    }
    if (!dir && commands.empty()) return {};
    Unwrapped u;
    u.kind = Unwrapped::Kind::Argv;
    if (dir) {
        for (; i < argv.size(); ++i) cmd.push_back(argv[i]);
        u.argvs.push_back(std::move(cmd));
        u.chdir = *dir;
    }
    for (auto& c : commands) u.argvs.push_back(std::move(c));
    return u;
}

}  // namespace cordon::policy

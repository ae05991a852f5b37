#include "cordon/completion.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <map>

#include "cordon/cli.hpp"
#include "cordon/commands.hpp"

namespace cordon {

namespace {

using Kind = OptionValue::Kind;

bool is_choice(std::string_view word) {
    if (word.empty() || word[0] < 'a' || word[0] > 'z') return false;
    for (char c : word) {
        if ((c < 'a' || c > 'z') && c != '-') return false;
    }
    return true;
}

std::vector<std::string> split(std::string_view text, char sep) {
    std::vector<std::string> out;
    for (size_t start = 0;;) {
        const size_t end = text.find(sep, start);
        out.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
        if (end == std::string_view::npos) return out;
        start = end + 1;
    }
}

std::string join(const std::vector<std::string>& words, std::string_view sep) {
    std::string out;
    for (const auto& w : words) {
        if (!out.empty()) out += sep;
        out += w;
    }
    return out;
}

// What completes a value, from the option and its metavar: "none|host" offers those words,
// DIR directories, PATH, SRC and DEST files; SIZE, N, NAME, ... are typed.
OptionValue value_of(std::string_view long_name, const std::string& metavar) {
    OptionValue v;
    v.metavar = metavar;
    auto alternatives = split(metavar, '|');
    if (long_name == "profile") {
        v.kind = Kind::Profiles;
    } else if (alternatives.size() > 1 && std::all_of(alternatives.begin(), alternatives.end(), is_choice)) {
        v.kind = Kind::Words;
        v.words = std::move(alternatives);
    } else if (metavar == "DIR") {
        v.kind = Kind::Dirs;
    } else if (metavar.find("PATH") != std::string::npos || metavar == "SRC" || metavar == "DEST") {
        v.kind = Kind::Files;
    }
    return v;
}

OptionInfo info_of(const CLI::Option& opt) {
    OptionInfo info;
    for (const auto& s : opt.get_snames()) info.names.push_back("-" + s);
    for (const auto& l : opt.get_lnames()) info.names.push_back("--" + l);
    info.help = opt.get_description();
    info.repeatable = opt.get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll;
    const int count = opt.get_type_size() == 0 ? 0 : opt.get_items_expected_min();
    // "SRC DEST": one metavar per value.
    std::vector<std::string> metavars = split(opt.get_type_name(), ' ');
    const std::string long_name = opt.get_lnames().empty() ? std::string() : opt.get_lnames().front();
    for (int i = 0; i < count; ++i) {
        const std::string& metavar =
            static_cast<size_t>(count) == metavars.size() ? metavars[static_cast<size_t>(i)] : opt.get_type_name();
        info.values.push_back(value_of(long_name, metavar));
    }
    return info;
}

// --- Words the three scripts share: kinds of values, and where a subcommand's words start ---

std::string kind_word(const OptionValue& v) {
    switch (v.kind) {
        case Kind::Files:
            return "files";
        case Kind::Dirs:
            return "dirs";
        case Kind::Profiles:
            return "profiles";
        case Kind::Words:
            return "(" + join(v.words, "|") + ")";
        case Kind::Text:
            break;
    }
    return "text";
}

std::string complete_word(Complete c) {
    switch (c) {
        case Complete::Files:
            return "files";
        case Complete::Profiles:
            return "profiles";
        case Complete::Command:
            return "command";
        case Complete::Nothing:
            break;
    }
    return "text";
}

std::string kinds_of(const OptionInfo& o) {
    std::vector<std::string> kinds;
    for (const auto& v : o.values) kinds.push_back(kind_word(v));
    return join(kinds, ",");
}

// "NAME=KIND[,KIND]..." for every name of an option that takes values.
std::string value_specs(const std::vector<OptionInfo>& options) {
    std::vector<std::string> specs;
    for (const auto& o : options) {
        if (o.values.empty()) continue;
        for (const auto& n : o.names) specs.push_back(n + "=" + kinds_of(o));
    }
    return join(specs, " ");
}

std::string value_specs(const Completion& c) {
    std::vector<std::string> specs;
    for (const auto& [name, what] : c.value_options) specs.push_back(std::string(name) + "=" + complete_word(what));
    return join(specs, " ");
}

std::string words_of(const Completion& c) {
    return join(std::vector<std::string>(c.words.begin(), c.words.end()), " ");
}

std::string names_of(const std::vector<OptionInfo>& options) {
    std::vector<std::string> names;
    for (const auto& o : options) names.insert(names.end(), o.names.begin(), o.names.end());
    return join(names, " ");
}

std::string subcommand_names() {
    std::vector<std::string> names;
    for (const auto& s : subcommands()) names.emplace_back(s.name);
    return join(names, " ");
}

// A call of the scripts' shared walker, NAME START THEN 'WORDS' 'VALUES' (_cordon_args).
std::string level_call(const std::string& fn, int start, const Completion& c) {
    return fn + " " + std::to_string(start) + " " + complete_word(c.then) + " '" + words_of(c) + "' '" +
           value_specs(c) + "'";
}

// The subcommands' completion has the same shape in the three shells: a function whose case
// on the subcommand's name calls the walker for the words right after it, or, for one with
// actions ("profile show"), for those after the action.
struct ShellSyntax {
    std::string fn_open, fn_close;                // "_cordon_subcommand() {" "}"
    std::string subcommand_case, action_case;     // "case ${words[1]} in", "case ${words[2]} in"
    std::string arm_open, arm_end, arm_close;     // bash: "" ")" ";;"; zsh: "(" ")" ";;"; fish: "case " "" ""
    std::string case_close;                       // "esac" / "end"
    std::string if_at_args, else_word, if_close;  // the current word is the one right after NAME
    std::string walker;                           // _cordon_args
    int first = 0;  // the index of the word after NAME: bash counts from 0, zsh and fish from 1
};

std::string arm(const ShellSyntax& sh, std::string_view name) {
    return sh.arm_open + std::string(name) + sh.arm_end + "\n";
}

std::string subcommand_function(const ShellSyntax& sh) {
    std::string out = "\n# A subcommand's words: those right after it, or after its action.\n" + sh.fn_open + "\n";
    out += "    " + sh.subcommand_case + "\n";
    const std::string close = sh.arm_close.empty() ? "" : sh.arm_close + "\n";
    for (const Subcommand& s : subcommands()) {
        out += "        " + arm(sh, s.name);
        if (s.actions.empty()) {
            out += "            " + level_call(sh.walker, sh.first, s.args) + "\n";
        } else {
            out += "            " + sh.if_at_args + "\n";
            out += "                " + level_call(sh.walker, sh.first, s.args) + "\n";
            out += "            " + sh.else_word + "\n";
            out += "                " + sh.action_case + "\n";
            for (const auto& [action, c] : s.actions) {
                out += "                    " + arm(sh, action);
                out += "                        " + level_call(sh.walker, sh.first + 1, c) + "\n";
                if (!close.empty()) out += "                        " + close;
            }
            out += "                " + sh.case_close + "\n";
            out += "            " + sh.if_close + "\n";
        }
        if (!close.empty()) out += "            " + close;
    }
    return out + "    " + sh.case_close + "\n" + sh.fn_close + "\n";
}

// --- bash (with bash-completion's helpers) ---

constexpr const char* kBashHelpers = R"BASH(
# The profiles the cordon being completed knows (its own, the user's, the system's).
_cordon_profiles() {
    local cordon=${words[0]/#\~/$HOME}
    "$cordon" profile list 2>/dev/null | awk '/^[^ ]/ { print $1 }'
}

# _cordon_complete KIND: complete $cur as files, dirs, profiles, a command, or one of (a|b).
_cordon_complete() {
    case $1 in
        files) _filedir ;;
        dirs) _filedir -d ;;
        profiles)
            COMPREPLY+=($(compgen -W "$(_cordon_profiles)" -- "$cur"))
            [[ $cur == */* ]] && _filedir
            ;;
        command)
            COMPREPLY+=($(compgen -c -- "$cur"))
            [[ $cur == */* ]] && _filedir
            ;;
        \(*\))
            local choices=${1:1:${#1}-2}
            COMPREPLY+=($(compgen -W "${choices//|/ }" -- "$cur"))
            ;;
    esac
}

# _cordon_args START THEN WORDS VALUES: complete words[cword]. From words[START] on come WORDS
# (of which VALUES, as NAME=KIND[,KIND], take values), and, as THEN says, files, profile
# names, nothing, or a COMMAND and its own arguments.
_cordon_args() {
    local i=$1 then=$2 spec kinds w
    local -a here values k
    read -ra here <<<"$3"
    read -ra values <<<"$4"
    if [[ ${split-} == true ]]; then  # --OPTION=VALUE
        for spec in "${values[@]}"; do
            [[ ${spec%%=*} == "$prev" ]] && _cordon_complete "$(cut -d, -f1 <<<"${spec#*=}")"
        done
        return
    fi
    while ((i < cword)); do
        case ${words[i]} in
            --) [[ $then == command ]] && { _command_offset $((i + 1)); return; } ;;
            --*=*) ;;
            -*)
                kinds=
                for spec in "${values[@]}"; do
                    [[ ${spec%%=*} == "${words[i]}" ]] && kinds=${spec#*=}
                done
                if [[ -n $kinds ]]; then
                    IFS=, read -ra k <<<"$kinds"
                    if ((i + ${#k[@]} >= cword)); then
                        _cordon_complete "${k[cword - i - 1]}"
                        return
                    fi
                    ((i += ${#k[@]}))
                fi
                ;;
            *) [[ $then == command ]] && { _command_offset $i; return; } ;;
        esac
        ((i++))
    done
    for w in "${here[@]}"; do
        [[ $w == -* && $cur != -* ]] && continue
        [[ $w == "$cur"* ]] && COMPREPLY+=("$w")
    done
    [[ $cur == -* ]] || _cordon_complete "$then"
}
)BASH";

std::string bash_script(const std::vector<OptionInfo>& options) {
    const ShellSyntax sh{"_cordon_subcommand() {",
                         "}",
                         "case ${words[1]} in",
                         "case ${words[2]} in",
                         "",
                         ")",
                         ";;",
                         "esac",
                         "if ((cword == 2)); then",
                         "else",
                         "fi",
                         "_cordon_args",
                         2};
    std::string out =
        "# bash completion for cordon. Generated by `cordon completion bash` from cordon's own\n"
        "# option and subcommand tables; profile names come from `cordon profile list` as you type.\n";
    out += kBashHelpers;
    out += subcommand_function(sh);
    out +=
        "\n_cordon() {\n"
        "    local cur prev words cword split\n"
        "    _init_completion -s || return\n"
        "    # A subcommand is recognised only as the first argument.\n"
        "    if ((cword > 1)); then\n"
        "        case ${words[1]} in\n"
        "            " +
        join(split(subcommand_names(), ' '), "|") +
        ") _cordon_subcommand; return ;;\n"
        "        esac\n"
        "    fi\n"
        "    _cordon_args 1 command '" +
        names_of(options) + "' '" + value_specs(options) +
        "'\n"
        "    if ((cword == 1)) && [[ $cur != -* ]]; then\n"
        "        COMPREPLY+=($(compgen -W '" +
        subcommand_names() +
        "' -- \"$cur\"))\n"
        "    fi\n"
        "}\n"
        "complete -F _cordon cordon\n";
    return out;
}

// --- zsh ---

std::string zsh_quote(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '\'') {
            out += "'\\''";
        } else {
            out += c;
        }
    }
    return out;
}

// Text inside an _arguments spec: brackets end the description, colons the message.
std::string zsh_spec_text(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '[' || c == ']' || c == ':' || c == '\\') out += '\\';
        out += c;
    }
    return zsh_quote(out);
}

std::string zsh_action(const OptionValue& v) {
    switch (v.kind) {
        case Kind::Files:
            return "_files";
        case Kind::Dirs:
            return "_files -/";
        case Kind::Profiles:
            return "_cordon_profiles";
        case Kind::Words:
            return "(" + join(v.words, " ") + ")";
        case Kind::Text:
            break;
    }
    return " ";
}

std::string zsh_option_specs(const std::vector<OptionInfo>& options) {
    std::string out;
    for (const auto& o : options) {
        const bool stop = o.names.back() == "--help" || o.names.back() == "--version";
        for (const auto& name : o.names) {
            std::string spec;
            if (stop) {
                spec = "(- *)";
            } else if (o.repeatable) {
                spec = "*";
            } else if (o.names.size() > 1) {
                spec = "(" + join(o.names, " ") + ")";
            }
            spec += name;
            if (o.values.size() == 1) spec += name.size() == 2 ? "+" : "=";
            spec += "[" + zsh_spec_text(o.help) + "]";
            for (const auto& v : o.values) spec += ":" + zsh_spec_text(v.metavar) + ":" + zsh_quote(zsh_action(v));
            out += "        '" + spec + "' \\\n";
        }
    }
    return out;
}

std::string zsh_subcommand_choices() {
    std::string out;
    for (const Subcommand& s : subcommands()) {
        out += std::string(s.name) + "\\:\"" + zsh_spec_text(std::string(s.summary)) + "\" ";
    }
    return out;
}

constexpr const char* kZshHelpers = R"ZSH(
# The profiles the cordon being completed knows (its own, the user's, the system's).
_cordon_profiles() {
    local -a lines
    lines=(${(f)"$(_call_program profiles ${~words[1]} profile list 2>/dev/null)"})
    lines=(${${(M)lines:#[^[:space:]]*}%% *})
    _wanted profiles expl profile compadd -a lines
}

# _cordon_complete KIND: complete the current word as files, dirs, profiles, a command, or one
# of (a|b).
_cordon_complete() {
    local -a choices
    case $1 in
        (files) _files ;;
        (dirs) _files -/ ;;
        (profiles) _cordon_profiles; [[ $PREFIX == */* ]] && _files ;;
        (command) _command_names -e ;;
        (\(*\))
            choices=(${(s:|:)${${1#\(}%\)}})
            _wanted values expl value compadd -a choices
            ;;
    esac
}

# _cordon_args START THEN WORDS VALUES: complete words[CURRENT]. From words[START] on come
# WORDS (of which VALUES, as NAME=KIND[,KIND], take values), and, as THEN says, files,
# profile names, nothing, or a COMMAND and its own arguments.
_cordon_args() {
    local -i i=$1
    local then=$2 spec kinds
    local -a here values k offer
    here=(${=3}) values=(${=4})
    while (( i < CURRENT )); do
        case $words[i] in
            (--)
                if [[ $then == command ]]; then
                    shift $i words; (( CURRENT -= i )); _normal; return
                fi ;;
            (--*=*) ;;
            (-*)
                kinds=
                for spec in $values; do [[ ${spec%%=*} == $words[i] ]] && kinds=${spec#*=}; done
                if [[ -n $kinds ]]; then
                    k=(${(s:,:)kinds})
                    if (( i + $#k >= CURRENT )); then _cordon_complete $k[CURRENT-i]; return; fi
                    (( i += $#k ))
                fi ;;
            (*)
                if [[ $then == command ]]; then
                    shift $(( i - 1 )) words; (( CURRENT -= i - 1 )); _normal; return
                fi ;;
        esac
        (( i++ ))
    done
    offer=(${here:#-*})
    [[ $PREFIX == -* ]] && offer=($here)
    (( $#offer )) && compadd -a offer
    [[ $PREFIX == -* ]] || _cordon_complete $then
}
)ZSH";

std::string zsh_script(const std::vector<OptionInfo>& options) {
    const ShellSyntax sh{"_cordon_subcommand() {",
                         "}",
                         "case $words[2] in",
                         "case $words[3] in",
                         "(",
                         ")",
                         ";;",
                         "esac",
                         "if (( CURRENT == 3 )); then",
                         "else",
                         "fi",
                         "_cordon_args",
                         3};
    std::string out =
        "#compdef cordon\n"
        "# zsh completion for cordon. Generated by `cordon completion zsh` from cordon's own\n"
        "# option and subcommand tables; profile names come from `cordon profile list` as you type.\n";
    out += kZshHelpers;
    out += subcommand_function(sh);
    out +=
        "\n_cordon() {\n"
        "    local curcontext=$curcontext state state_descr line expl ret=1\n"
        "    typeset -A opt_args\n"
        "    # A subcommand is recognised only as the first argument.\n"
        "    if (( CURRENT > 2 )); then\n"
        "        case $words[2] in\n"
        "            (" +
        join(split(subcommand_names(), ' '), "|") +
        ") _cordon_subcommand; return ;;\n"
        "        esac\n"
        "    fi\n"
        "    _arguments -s -S -A '-*' : \\\n";
    out += zsh_option_specs(options);
    out +=
        "        '1: :->first' '*:: :->command' && ret=0\n"
        "    case $state in\n"
        "        (first)\n"
        "            _alternative 'subcommands:subcommand:((" +
        zsh_subcommand_choices() +
        "))' 'commands:command:_command_names -e' && ret=0\n"
        "            ;;\n"
        "        (command) _normal && ret=0 ;;\n"
        "    esac\n"
        "    return ret\n"
        "}\n\n"
        "_cordon \"$@\"\n";
    return out;
}

// --- fish ---

std::string fish_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'' || c == '\\') out += '\\';
        out += c;
    }
    return out + "'";
}

constexpr const char* kFishHelpers = R"FISH(
# The profiles the cordon being completed knows (its own, the user's, the system's).
function __cordon_profiles
    set -l cordon (string replace -r '^~' -- $HOME (commandline -opc)[1])
    $cordon profile list 2>/dev/null | string match -r '^[^ ]\S*'
end

# __cordon_complete KIND: candidates for the current token: files, dirs, profiles, a command,
# or one of (a|b).
function __cordon_complete -a kind
    switch $kind
        case files
            __fish_complete_path (commandline -ct)
        case dirs
            __fish_complete_directories (commandline -ct)
        case profiles
            __cordon_profiles
        case command
            __fish_complete_command
        case '(*)'
            string split '|' -- (string trim -c '()' -- $kind)
    end
end

# __cordon_command FIRST: COMMAND is token FIRST: its name, or its own arguments.
function __cordon_command -a first
    set -l tokens (commandline -opc)
    if test $first -gt (count $tokens)
        __fish_complete_command
    else
        complete -C (string join ' ' -- (string escape -- $tokens[$first..-1]) (commandline -ct))
    end
end

# __cordon_args START THEN WORDS VALUES: candidates for the current token. From token START on
# come WORDS (of which VALUES, as NAME=KIND[,KIND], take values), and, as THEN says, files,
# profile names, nothing, or a COMMAND and its own arguments.
function __cordon_args -a start then here values
    set -l tokens (commandline -opc)
    set -l current (math (count $tokens) + 1)
    set -l cur (commandline -ct)
    set -l i $start
    while test $i -lt $current
        set -l t $tokens[$i]
        switch $t
            case --
                if test $then = command
                    __cordon_command (math $i + 1)
                    return
                end
            case '--*=*'
            case '-*'
                for spec in (string split ' ' -- $values)
                    set -l parts (string split -m1 = -- $spec)
                    test "$parts[1]" = "$t"; or continue
                    set -l kinds (string split , -- $parts[2])
                    if test (math $i + (count $kinds)) -ge $current
                        __cordon_complete $kinds[(math $current - $i)]
                        return
                    end
                    set i (math $i + (count $kinds))
                end
            case '*'
                if test $then = command
                    __cordon_command $i
                    return
                end
        end
        set i (math $i + 1)
    end
    for w in (string split ' ' -- $here)
        if string match -q -- '-*' $w; and not string match -q -- '-*' $cur
            continue
        end
        test -n "$w"; and echo $w
    end
    string match -q -- '-*' $cur; or __cordon_complete $then
end
)FISH";

// The values each option of the command line takes, as kinds, one a line.
std::string fish_values_function(const std::vector<OptionInfo>& options) {
    std::map<std::string, std::vector<std::string>> by_kinds;
    for (const auto& o : options) {
        if (o.values.empty()) continue;
        auto& names = by_kinds[kinds_of(o)];
        names.insert(names.end(), o.names.begin(), o.names.end());
    }
    std::string out =
        "\n# __cordon_values OPTION: the kinds of the values OPTION takes, one a line.\n"
        "function __cordon_values\n"
        "    switch $argv[1]\n";
    for (const auto& [kinds, names] : by_kinds) {
        out += "        case " + join(names, " ") + "\n";
        out += "            printf '%s\\n' " + fish_quote(kinds) + " | string split ,\n";
    }
    return out + "    end\nend\n";
}

constexpr const char* kFishPosition = R"FISH(
# Where the current token stands: "options" (before COMMAND), "value OPTION N" (the Nth value
# of OPTION), "command FIRST" (COMMAND is token FIRST), or "subcommand".
function __cordon_position
    set -l tokens (commandline -opc)
    set -l n (count $tokens)
    if test $n -ge 2; and contains -- $tokens[2] __SUBCOMMANDS__
        echo subcommand
        return
    end
    set -l i 2
    while test $i -le $n
        set -l t $tokens[$i]
        switch $t
            case --
                echo command (math $i + 1)
                return
            case '--*=*'
            case '-*'
                set -l k (count (__cordon_values $t))
                if test (math $i + $k) -gt $n
                    echo value $t (math $n - $i + 1)
                    return
                end
                set i (math $i + $k)
            case '*'
                echo command $i
                return
        end
        set i (math $i + 1)
    end
    echo options
end

# Options, with fish completing their first value itself.
function __cordon_options_here
    set -l pos (__cordon_position)
    test "$pos[1]" = options; or string match -qr '^value \S+ 1$' -- "$pos"
end

# Everything else: a subcommand's words, an option's second value, COMMAND.
function __cordon_candidates
    set -l pos (string split ' ' -- (__cordon_position))
    switch $pos[1]
        case subcommand
            __cordon_subcommand
        case value
            set -l kinds (__cordon_values $pos[2])
            __cordon_complete $kinds[$pos[3]]
        case command
            __cordon_command $pos[2]
    end
end

# COMMAND's name: before it, only options.
function __cordon_before_command
    test (__cordon_position) = options
end
)FISH";

std::string fish_option_lines(const std::vector<OptionInfo>& options) {
    std::string out;
    for (const auto& o : options) {
        std::string line = "complete -c cordon -n __cordon_options_here";
        for (const auto& n : o.names) line += (n.size() == 2 ? " -s " + n.substr(1) : " -l " + n.substr(2));
        if (!o.values.empty()) {
            const OptionValue& v = o.values.front();
            switch (v.kind) {
                case Kind::Files:
                    line += " -r -F";
                    break;
                case Kind::Dirs:
                    line += " -x -a '(__fish_complete_directories (commandline -ct))'";
                    break;
                case Kind::Profiles:
                    line += " -x -a '(__cordon_profiles)'";
                    break;
                case Kind::Words:
                    line += " -x -a " + fish_quote(join(v.words, " "));
                    break;
                case Kind::Text:
                    line += " -x";
                    break;
            }
        }
        out += line + " -d " + fish_quote(o.help) + "\n";
    }
    return out;
}

std::string fish_script(const std::vector<OptionInfo>& options) {
    const ShellSyntax sh{"function __cordon_subcommand\n    set -l tokens (commandline -opc)",
                         "end",
                         "switch $tokens[2]",
                         "switch $tokens[3]",
                         "case ",
                         "",
                         "",
                         "end",
                         "if test (count $tokens) -eq 2",
                         "else",
                         "end",
                         "__cordon_args",
                         3};
    std::string out =
        "# fish completion for cordon. Generated by `cordon completion fish` from cordon's own\n"
        "# option and subcommand tables; profile names come from `cordon profile list` as you type.\n";
    out += kFishHelpers;
    out += fish_values_function(options);
    std::string position = kFishPosition;
    position.replace(position.find("__SUBCOMMANDS__"), 15, subcommand_names());
    out += position;
    out += subcommand_function(sh);
    out += "\ncomplete -c cordon -f\n";
    out += fish_option_lines(options);
    for (const Subcommand& s : subcommands()) {
        out += "complete -c cordon -n 'test (count (commandline -opc)) -eq 1' -a " + std::string(s.name) + " -d " +
               fish_quote(std::string(s.summary)) + "\n";
    }
    out += "complete -c cordon -n 'not __cordon_options_here' -a '(__cordon_candidates)'\n";
    out += "complete -c cordon -n '__cordon_before_command' -a '(__fish_complete_command)'\n";
    return out;
}

}  // namespace

std::vector<OptionInfo> option_table() {
    std::vector<OptionInfo> out;
    // "--help" registers every option (cli.cpp registers only those a command line mentions).
    auto parsed = parse_command_line_full({"--help"}, [&](const CLI::App& app) {
        for (const CLI::Option* opt : app.get_options()) out.push_back(info_of(*opt));
    });
    (void)parsed;
    return out;
}

Result<std::string> completion_script(std::string_view shell) {
    if (shell == "bash") return bash_script(option_table());
    if (shell == "zsh") return zsh_script(option_table());
    if (shell == "fish") return fish_script(option_table());
    Error e = make_error("completion", "unknown shell '" + std::string(shell) + "' (expected bash, zsh or fish)");
    e.hint = "cordon completion bash|zsh|fish";
    return e;
}

int main_completion(const std::vector<std::string>& args) {
    if (args.size() != 1) {
        std::fprintf(stderr, "cordon: usage: cordon completion bash|zsh|fish\n");
        return 125;
    }
    auto script = completion_script(args[0]);
    if (!script) {
        std::fprintf(stderr, "%s\n", script.error().message().c_str());
        return 125;
    }
    std::fputs(script->c_str(), stdout);
    return 0;
}

}  // namespace cordon

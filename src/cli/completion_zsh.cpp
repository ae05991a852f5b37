// `cordon completion zsh`: the script, an _arguments table for the command line and cordon's own walker for the
// subcommands.
#include "completion_scripts.hpp"
#include "cordon/commands.hpp"

namespace cordon::completion {

namespace {

using Kind = OptionValue::Kind;

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

}  // namespace

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

}  // namespace cordon::completion

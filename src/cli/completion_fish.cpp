// `cordon completion fish`: the script, complete entries for the options and one function that places the current
// token.
#include <map>

#include "completion_scripts.hpp"
#include "cordon/commands.hpp"

namespace cordon::completion {

namespace {

using Kind = OptionValue::Kind;

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

}  // namespace

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

}  // namespace cordon::completion

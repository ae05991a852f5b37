#include "cordon/completion.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "completion_scripts.hpp"
#include "cordon/cli.hpp"
#include "cordon/commands.hpp"
#include "cordon/diag.hpp"

namespace cordon {

namespace {

using Kind = OptionValue::Kind;
using completion::join;
using completion::split;

bool is_choice(std::string_view word) {
    if (word.empty() || word[0] < 'a' || word[0] > 'z') return false;
    for (char c : word) {
        if ((c < 'a' || c > 'z') && c != '-') return false;
    }
    return true;
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

}  // namespace

namespace completion {

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

}  // namespace completion

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
    if (shell == "bash") return completion::bash_script(option_table());
    if (shell == "zsh") return completion::zsh_script(option_table());
    if (shell == "fish") return completion::fish_script(option_table());
    Error e = make_error("completion", "unknown shell '" + std::string(shell) + "' (expected bash, zsh or fish)");
    e.hint = "cordon completion bash|zsh|fish";
    return e;
}

int main_completion(const std::vector<std::string>& args) {
    if (args.size() != 1) {
        diag::error("usage: cordon completion bash|zsh|fish");
        return 125;
    }
    auto script = completion_script(args[0]);
    if (!script) {
        diag::error(script.error());
        return 125;
    }
    std::fputs(script->c_str(), stdout);
    return 0;
}

}  // namespace cordon

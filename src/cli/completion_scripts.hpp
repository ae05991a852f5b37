// The parts of the three completion scripts (completion.cpp, completion_bash.cpp, _zsh, _fish)
// that come from cordon's tables: option kinds, the words of each subcommand, and the shape of
// the function that completes a subcommand's words, which is the same in every shell.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cordon/commands.hpp"
#include "cordon/completion.hpp"

namespace cordon::completion {

std::vector<std::string> split(std::string_view text, char sep);
std::string join(const std::vector<std::string>& words, std::string_view sep);

// The kinds the scripts' walkers know: files, dirs, profiles, command, text, or (a|b).
std::string kind_word(const OptionValue& v);
std::string complete_word(Complete c);
// An option's values' kinds, "files,files".
std::string kinds_of(const OptionInfo& o);
// "NAME=KIND[,KIND]..." for every name of an option (or a subcommand's word) that takes values.
std::string value_specs(const std::vector<OptionInfo>& options);
std::string value_specs(const Completion& c);
// Space-separated: a level's words; every option name; the subcommands' names.
std::string words_of(const Completion& c);
std::string names_of(const std::vector<OptionInfo>& options);
std::string subcommand_names();
// A call of the scripts' shared walker: FN START THEN 'WORDS' 'VALUES'.
std::string level_call(const std::string& fn, int start, const Completion& c);

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

// The function that completes a subcommand's words, in SH's syntax.
std::string subcommand_function(const ShellSyntax& sh);

std::string bash_script(const std::vector<OptionInfo>& options);
std::string zsh_script(const std::vector<OptionInfo>& options);
std::string fish_script(const std::vector<OptionInfo>& options);

}  // namespace cordon::completion

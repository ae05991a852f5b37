// cordon's subcommands (check, policy, profile, doctor, completion): recognised only as the
// first argument, each with its entry point and, for the shell completions, what may follow
// it. main dispatches from this table and the completions are generated from it and from the
// command line's option table (cli.cpp), so that neither keeps a list of its own.
#pragma once

#ifdef CORDON_JAIL
#error "the jail does not see the CLI: it takes a Spec (CMakeLists.txt defines CORDON_JAIL for src/jail)"
#endif
#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cordon {

// What a shell completes in a place: nothing, a file, a profile name, or a COMMAND and then
// that command's own arguments.
enum class Complete { Nothing, Files, Profiles, Command };

// What may follow a word.
struct Completion {
    std::vector<std::string_view> words;  // offered as they are: "--json", "show", "bash"
    // Those of WORDS that take a value, and what completes it ("--policy": files).
    std::vector<std::pair<std::string_view, Complete>> value_options;
    Complete then = Complete::Nothing;  // besides WORDS
};

struct Subcommand {
    std::string_view name;
    std::string_view summary;
    int (*run)(const std::vector<std::string>& args);              // ARGS exclude NAME; returns the exit status
    Completion args;                                               // right after NAME
    std::vector<std::pair<std::string_view, Completion>> actions;  // after NAME ACTION ("profile show")
};

const std::vector<Subcommand>& subcommands();
const Subcommand* find_subcommand(std::string_view name);

}  // namespace cordon

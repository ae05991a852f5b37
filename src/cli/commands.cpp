#include "cordon/commands.hpp"

#include "cordon/bwrap.hpp"
#include "cordon/check_cmd.hpp"
#include "cordon/completion.hpp"
#include "cordon/doctor.hpp"
#include "cordon/profile.hpp"

namespace cordon {

const std::vector<Subcommand>& subcommands() {
    using C = Complete;
    // The words mirror each subcommand's own parser (check_cmd.cpp, profile_cmd.cpp, doctor.cpp);
    // a unit test runs check with each of its words.
    static const std::vector<Subcommand> table = {
        {"check",
         "decide allow or deny for a command line with the command policy",
         main_check,
         {{"--policy", "--no-policy", "--static", "--json", "-c", "--batch", "-z", "--help"},
          {{"--policy", C::Files}, {"-c", C::Nothing}, {"--batch", C::Files}},
          C::Command},
         {}},
        {"policy",
         "run the examples of command policies",
         main_policy,
         {{"test", "--help"}, {}, C::Nothing},
         {{"test", {{"--built-in"}, {}, C::Files}}}},
        {"profile",
         "list the profiles or show one resolved",
         main_profile,
         {{"list", "show"}, {}, C::Nothing},
         {{"list", {}}, {"show", {{"--json"}, {}, C::Profiles}}}},
        {"doctor", "what this host supports, and what to do about it", main_doctor, {{"--json"}, {}, C::Nothing}, {}},
        {"bwrap",
         "run bubblewrap's command line with bubblewrap's behaviour (see BWRAP COMPATIBILITY in cordon(1))",
         bwrap::main_subcommand,
         {{"--help", "--version"}, {}, C::Command},
         {}},
        {"completion",
         "print the completion script for bash, zsh or fish",
         main_completion,
         {{"bash", "zsh", "fish"}, {}, C::Nothing},
         {}},
    };
    return table;
}

const Subcommand* find_subcommand(std::string_view name) {
    for (const Subcommand& s : subcommands()) {
        if (s.name == name) return &s;
    }
    return nullptr;
}

}  // namespace cordon

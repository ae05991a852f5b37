// `cordon check` and `cordon policy test`: the command policy (cordon/policy.hpp) on the command
// line. Nothing here runs the command being checked.
#pragma once

#ifdef CORDON_JAIL
#error "the jail does not see the CLI: it takes a Spec (CMakeLists.txt defines CORDON_JAIL for src/jail)"
#endif
#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <string>
#include <vector>

namespace cordon {

// Subcommands; ARGS exclude the subcommand name. They print and return the exit status:
//   cordon check [--policy P]... [--no-policy] [--json] (-c SCRIPT | --batch FILE [-z] | [--] COMMAND...)
//     0 allow, 126 deny, 125 error
//   cordon policy test FILE...   0 all examples pass, 1 an example fails, 125 a file cannot load
int main_check(const std::vector<std::string>& args);
int main_policy(const std::vector<std::string>& args);

}  // namespace cordon

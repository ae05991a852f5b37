// `cordon doctor [--json]`.
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

// Checks the kernel, user namespaces, AppArmor, seccomp, the default jail itself and the
// cgroup backends; prints each with what to do. Exit 0 unless the default jail cannot work.
int main_doctor(const std::vector<std::string>& args);

}  // namespace cordon

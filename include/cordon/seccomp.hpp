// The syscall filter (SPEC §8): rules as data, compiled with libseccomp in the parent, loaded as
// raw BPF in the child as the very last step before execve.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cordon/error.hpp"

namespace cordon {

struct ArgCond {
    unsigned arg;   // 0..5
    uint64_t mask;  // (value & mask) == datum
    uint64_t datum;
};

struct SyscallRule {
    enum class Action { Errno, Enosys, Kill, Allow };
    std::string syscall;
    Action action = Action::Errno;
    int err = 1;  // EPERM
    std::vector<ArgCond> conds;  // all must hold; empty: every call
    std::string why;
};

struct SeccompPolicy {
    std::string name;                // "default" or the file it came from
    std::vector<SyscallRule> rules;  // the allow-by-default filter's exceptions
};

// The built-in default policy.
SeccompPolicy default_seccomp(bool allow_userns, bool allow_ptrace);

// Load NAME (policies/NAME.seccomp.toml on the policy search path) or PATH and apply it on top
// of the default ("base = \"default\"", the default) or of nothing ("base = \"none\"").
Result<SeccompPolicy> load_seccomp(const std::string& name_or_path, bool allow_userns, bool allow_ptrace);
Result<SeccompPolicy> parse_seccomp(const std::string& text, const std::string& path, bool allow_userns,
                                    bool allow_ptrace);

// Compile for the native architecture only; other ABIs (i386, x32 on x86-64) kill the process.
Result<std::vector<sock_filter>> compile_seccomp(const SeccompPolicy& policy);

}  // namespace cordon

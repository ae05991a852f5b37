// The command policy at exec time: how the supervisor's exec notifications (exec_notify.hpp)
// are judged, reported and written to the audit log (SPEC §6, §9).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "cordon/exec_identity.hpp"
#include "cordon/exec_notify.hpp"
#include "cordon/policy.hpp"

namespace cordon {

// The argv lines one exec is judged as, any denial wins: as given; with argv[0] the program
// really run (a symlink to rm is rm, whatever it is called; a multicall binary such as busybox is
// named by argv[0] instead); and with path operands resolved inside the jail's root (a
// symlink to /, /proc/self/root/usr); for a script, as each interpreter of its "#!" lines runs
// it; for the dynamic loader run as a program, as the program it loads; and, given IDENTITY, as
// the system program that the file loaded is a copy of. Pure apart from reading the jail's file
// system.
std::vector<std::vector<std::string>> exec_variants(const ExecRequest& r, ProgramIdentity* identity = nullptr);

struct ExecJudgement {
    policy::Decision decision;  // of the first denying variant, or of the request as given
    std::string executable;     // what runs, in the jail's terms
};
ExecJudgement judge_exec(const policy::PolicySet& policies, const ExecRequest& r, const std::string& home,
                         ProgramIdentity* identity = nullptr);

// One JSON line of the audit log: time, pid, argv, cwd, executable, decision, rule.
std::string audit_line(const ExecRequest& r, const ExecJudgement& j, double unix_time);

}  // namespace cordon

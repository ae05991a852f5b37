// The command policy at exec time: how the supervisor's exec notifications (exec_notify.hpp)
// are judged, reported and written to the audit log (SPEC §6, §9).
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cordon/bounds.hpp"
#include "cordon/exec_identity.hpp"
#include "cordon/exec_notify.hpp"
#include "cordon/policy.hpp"

namespace cordon {

// What a program run with ARGV's words after argv[0] and ARGV0 as its argv[0] may act as: ARGV0's
// program (a multicall binary: busybox named rm), that name without a login dash (-rm), and for
// a name git-SUB, git's SUB (git named git-clean). The first line is ARGV with ARGV0.
std::vector<std::vector<std::string>> argv0_variants(const std::vector<std::string>& argv, const std::string& argv0);
// The same for the program a loader runs with its --argv0 NAME (ld.so --argv0 git-clean git -f):
// none unless ARGV is a loader's command line with one.
std::vector<std::vector<std::string>> loader_argv0_variants(const std::vector<std::string>& argv);
// The argv lines besides ARGV itself that a command is judged as for its names: its own
// argv[0]'s, ARGV0's (--argv0) and a loader's --argv0 (argv0_variants, loader_argv0_variants).
std::vector<std::vector<std::string>> name_variants(const std::vector<std::string>& argv,
                                                    const std::optional<std::string>& argv0);

// The argv lines one exec is judged as, any denial wins: as given; with argv[0] the program
// really run (a symlink to rm is rm, whatever it is called; a multicall binary such as busybox is
// named by argv[0] instead); and with path operands resolved inside the jail's root (a
// symlink to /, /proc/self/root/usr); for a script, as each interpreter of its "#!" lines runs
// it; for the dynamic loader run as a program, as the program it loads; and, given IDENTITY, as
// the system program that the file loaded is a copy of (a copy of the loader is the loader).
// UNRESOLVED is set when an interpreter or the loader's program, named through /proc or /dev,
// leads to no file: judge_exec refuses those. Pure apart from reading the jail's file system.
std::vector<std::vector<std::string>> exec_variants(const ExecRequest& r, ProgramIdentity* identity = nullptr,
                                                    bool* unresolved = nullptr);

// The whole argv is judged; the decision's command (and so its stderr line and its record in
// the status JSON) shows the start of it that kRecordArgv keeps (cordon(1), BOUNDS).
struct ExecJudgement {
    policy::Decision decision;  // of the first denying variant, or of the request as given
    std::string executable;     // what runs, in the jail's terms
    ArgvRecord shown;           // what decision.command shows of argv (without its words)
};
ExecJudgement judge_exec(const policy::PolicySet& policies, const ExecRequest& r, const std::string& home,
                         ProgramIdentity* identity = nullptr);

// A denial's line on stderr and its record in the status JSON, each saying when argv was cut.
std::string exec_denial_line(const ExecJudgement& j);
std::string exec_denial_json(const ExecJudgement& j);

// One JSON line of the audit log: time, pid, argv, cwd, executable, decision, rule; argv as
// kAuditArgv keeps it, the other texts cut at kMaxRecordText.
std::string audit_line(const ExecRequest& r, const ExecJudgement& j, double unix_time);
// The audit log's record of the command line the policy denied before the jail started ARGV in
// CWD: "kind":"command", no pid (nothing of it ran).
std::string command_audit_line(const std::vector<std::string>& argv, const std::string& cwd, const policy::Decision& d,
                               double unix_time);

}  // namespace cordon

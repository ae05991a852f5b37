// What this build of cordon has compiled in and what this host offers, probed once for
// `cordon --version` (a line each) and `cordon doctor` (a finding each, the same text).
#pragma once

#ifdef CORDON_JAIL
#error "the jail does not see the CLI: it takes a Spec (CMakeLists.txt defines CORDON_JAIL for src/jail)"
#endif
#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <string>
#include <vector>

#include "cordon/cgroup.hpp"
#include "cordon/error.hpp"

namespace cordon {

// One feature: whether cordon uses it (compiled in) and whether this host has it.
struct Feature {
    std::string name;  // "seccomp user notification", "limits via cgroupfs", "Landlock"
    bool compiled_in = false;
    bool available = false;  // on this kernel (and, for limits, in this process's cgroup)
    std::string detail;      // what the host offers, or why not: "ABI 6", "controllers: memory pids"

    // "compiled in; here: controllers: memory pids cpu", "not compiled in; kernel: ABI 6"
    [[nodiscard]] std::string summary() const;
};

// /proc/sys/kernel/seccomp/actions_avail, trimmed; empty without seccomp filters.
std::string seccomp_actions();

// A cgroup backend's check() on this host: the controllers a run would get, or why not.
struct BackendProbe {
    std::string name;  // "cgroupfs", "systemd"
    Result<std::vector<std::string>> controllers;
};
std::vector<BackendProbe> probe_cgroup_backends(const CgroupHost& host);
// "controllers: memory pids cpu" or the reason the backend cannot serve a run here.
std::string backend_detail(const BackendProbe& probe);

// The features `cordon --version` reports, in its order: seccomp user notification, each
// cgroup backend, Landlock.
std::vector<Feature> probe_features();
Feature seccomp_notify_feature(const std::string& actions);
Feature landlock_feature();

// `cordon --version`: "cordon X.Y.Z", then "NAME: SUMMARY" for each feature.
std::string version_report();

// cordon's AppArmor profile (packaging/apparmor/usr.bin.cordon), as the host has it.
struct AppArmorFacts {
    bool enabled = false;                                             // AppArmor is active in this kernel
    bool restricted = false;                                          // kernel.apparmor_restrict_unprivileged_userns=1
    std::string installed;                                            // /etc/apparmor.d/usr.bin.cordon, if present
    std::string shipped;                                              // DATADIR/apparmor/usr.bin.cordon, if present
    enum class Loaded { Yes, No, Unknown } loaded = Loaded::Unknown;  // a profile named "cordon"
    std::string label;  // this process's AppArmor label ("cordon (unconfined)"), if readable
    std::string exe;    // this executable's path
};
AppArmorFacts probe_apparmor();

// What doctor says about it: status ("ok" or "warn"), detail and fix.
struct Verdict {
    std::string status, detail, fix;
};
Verdict judge_apparmor_profile(const AppArmorFacts& facts);
// Whether the restriction on user namespaces stands in cordon's way: not when the executable
// runs under cordon's profile, which grants "userns".
bool confined_by_cordon_profile(const AppArmorFacts& facts);

}  // namespace cordon

// Landlock: the jail's second wall behind its mounts (cordon(1), LANDLOCK). Planned in prepare()
// from the mount plan as pure data (which paths get which rights, for the ABI the kernel
// offers); the child builds the ruleset once the jail's root is in place and the payload
// enforces it right before its syscall filter.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <linux/landlock.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cordon/mount_plan.hpp"
#include "cordon/seccomp.hpp"
#include "cordon/spec.hpp"

// What Debian 12's headers (Linux 6.1, ABI 2) do not define yet.
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)  // ABI 3
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)  // ABI 5
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)     // ABI 4
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)  // ABI 4
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)  // ABI 6
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)  // ABI 6
#endif

namespace cordon {

// The newest ABI cordon knows; a newer kernel is used at this level.
constexpr int kLandlockAbiKnown = 7;

// The highest Landlock ABI this kernel offers, or -errno when it offers none: ENOSYS (no
// Landlock in this kernel), EOPNOTSUPP (built in but not enabled at boot), EPERM (a container's
// syscall filter refuses it).
int landlock_abi();
// Why the jail runs without Landlock on a kernel that answered ABI (landlock_abi()), or "" when
// it can have it.
std::string landlock_unavailable(int abi);

// The access rights of ABI (LANDLOCK_ACCESS_FS_*): all it knows (what a ruleset handles), what
// a writable place gets (write, create, remove, rename across directories, truncate), what a
// device gets (read, write, truncate, ioctl), what the whole jail gets (read, execute).
uint64_t landlock_handled_fs(int abi);
uint64_t landlock_write_rights(int abi);
uint64_t landlock_device_rights(int abi);
uint64_t landlock_read_rights();

struct LandlockRule {
    std::string path;     // in the jail's terms: the child opens it after pivot_root
    uint64_t access = 0;  // LANDLOCK_ACCESS_FS_*, beneath PATH
    // Non-empty: PATH lies beneath ANCHOR, and nothing between them may be a symlink (the
    // Landlock jail's rules inside the workdir, whose entries the jail itself may have planted).
    std::string anchor{};
    // PATH was a regular file when planned (its directory's listing said so): the child gives
    // it only the rights a file takes, without first asking the kernel for a directory's.
    bool file = false;
};

struct LandlockPlan {
    int abi = 0;              // the ABI the ruleset is built for; 0: none (see unavailable)
    std::string unavailable;  // why there is none
    std::string no_fs;        // why it handles no file-system rights (only scopes), if so
    uint64_t handled_fs = 0;
    uint64_t handled_net = 0;  // LANDLOCK_ACCESS_NET_* (ABI 4): refused without a rule (the Landlock jail)
    uint64_t scoped = 0;       // LANDLOCK_SCOPE_*
    std::vector<LandlockRule> rules;
    // The caller's stdin, stdout and stderr keep the rights they were opened with when the jail
    // opens them again by name (/dev/stdout, /proc/self/fd/1): their files are the host's,
    // outside every rule.
    bool stdio = false;
    [[nodiscard]] bool enabled() const { return abi > 0; }
};

// The plan for the jail MOUNTS builds, on a kernel that answered ABI (landlock_abi()).
// NESTED_MOUNTS: the command may mount in namespaces of its own (--allow-userns under a syscall
// policy that lets mount through, for a sandbox inside the jail), which a Landlock domain that
// handles file-system rights refuses: the plan then has the scopes only.
LandlockPlan plan_landlock(const Spec& spec, const MountPlan& mounts, int abi, bool nested_mounts = false);
// Whether a syscall policy with RULES (allow by default) lets mount(2) or move_mount(2) through.
bool seccomp_allows_mounts(const std::vector<SyscallRule>& rules);

// --dry-run's lines for the plan, without a trailing newline each.
std::vector<std::string> describe(const LandlockPlan& plan);

// The child's side, inside the built jail. build_landlock_ruleset makes the ruleset into
// RULESET_FD (close-on-exec; -1 for a plan without Landlock); on failure it returns -1 with
// errno set and the step written into STEP. A rule whose path the jail does not have is left
// out: a rule only grants. enforce_landlock restricts the calling process and everything it
// starts; it only makes a system call (the payload may not allocate).
int build_landlock_ruleset(const LandlockPlan& plan, int& ruleset_fd, char* step, size_t step_len);
int enforce_landlock(int ruleset_fd);

}  // namespace cordon

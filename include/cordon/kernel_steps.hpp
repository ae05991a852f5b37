// The kernel steps that both of cordon's jails take, the namespace jail (src/jail) and bwrap mode
// (src/bwrap): one implementation of each. A step is a short fixed sequence of system calls; it
// says which call failed, with errno as that call left it, and each caller words its own message
// (bwrap mode bubblewrap's, the jail its own). System calls and stack buffers only: callable in a
// child after clone, where the jail's payload may not allocate.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <linux/filter.h>
#include <sys/capability.h>

#include <cstdint>
#include <span>

namespace cordon {

// One line of /proc/PID/uid_map or gid_map: "inside outside count".
struct IdMap {
    uint32_t inside;
    uint32_t outside;
    uint32_t count;
};

namespace kernel {

// --- a user namespace's id maps ---

// What becomes of PROC/setgroups before the maps: left as it is (a writer with CAP_SETGID in
// the parent namespace), "deny" written, or "deny" tried and a refusal passed over.
enum class Setgroups { Leave, Deny, TryDeny };
// Which write failed (errno says why), or Done.
enum class IdMapStep { Done, Setgroups, UidMap, GidMap };
// PROC/setgroups, then PROC/uid_map and PROC/gid_map, each written in one write(2) as the
// kernel takes a map. The order is the kernel's: an unprivileged writer's gid_map is refused
// until setgroups is denied. PROC is "/proc/self" or "/proc/PID" (any directory in the tests).
[[nodiscard]] IdMapStep write_id_maps(const char* proc, Setgroups setgroups, std::span<const IdMap> uid,
                                      std::span<const IdMap> gid);

// --- capabilities ---

// The capability sets as capset(2) takes them (version 3: two 32-bit words per set).
using CapSets = __user_cap_data_struct[2];
// Each of CAPS into SETS' effective and permitted sets, and with INHERITABLE its inheritable set.
void add_capabilities(CapSets& sets, std::span<const int> caps, bool inheritable);

// Drops from the bounding set each capability from 0 to LAST whose bit in KEEP (bit N:
// capability N) is clear, in order; one this kernel does not know (EINVAL) is passed over. Needs
// CAP_SETPCAP. -1 with errno at the first refusal, else 0.
[[nodiscard]] int drop_bounding_set(uint64_t keep, int last);

// Which call failed (errno says why), or Done.
enum class CapStep { Done, Capset, AmbientClear, AmbientRaise };
// The process's effective, permitted and inheritable sets become SETS exactly (capset), the
// ambient set is cleared, then each of AMBIENT is raised in it, in order (each must be permitted
// and inheritable): what a non-root uid keeps across execve.
[[nodiscard]] CapStep set_capabilities(const CapSets& sets, std::span<const int> ambient);

// --- seccomp ---

// PROGRAM installed as a seccomp filter of this thread (prctl PR_SET_SECCOMP,
// SECCOMP_MODE_FILTER): needs no_new_privs or CAP_SYS_ADMIN. -1 with errno, else 0.
[[nodiscard]] int load_seccomp_filter(std::span<const sock_filter> program);

// --- the new root (bubblewrap's layout) ---

// Which call failed (errno says why), or Done.
enum class SetupRootStep { Done, MountTmpfs, Chdir, MakeDirs, BindNewroot, PivotRoot };
// A tmpfs (nosuid, nodev, mount options TMPFS_DATA) mounted on the directory BASE becomes the
// root to build from: its directories "newroot" and "oldroot" made (mode 0755 less the umask),
// "newroot" bound onto itself (BIND_FLAGS: MS_BIND, perhaps with MS_REC) so that it is a mount
// the final pivot can take, and the old root pivoted onto "oldroot". The working directory is
// left in the tmpfs, the new "/", where pivot_root(2) leaves it; on PivotRoot too, for a caller
// with another way in (mounts.cpp moves the tmpfs over a root that cannot be pivoted away from).
[[nodiscard]] SetupRootStep enter_setup_root(const char* base, const char* tmpfs_data, unsigned long bind_flags);

// Which call failed (errno says why), or Done.
enum class PivotStep { Done, Chdir, PivotRoot, Detach, ChdirRoot };
// DIR becomes the root: chdir into it, pivot_root(".", ".") stacks the old root on top of it,
// whose detach (MNT_DETACH, with all below it) leaves DIR alone; then chdir to the new "/".
[[nodiscard]] PivotStep pivot_into(const char* dir);

}  // namespace kernel
}  // namespace cordon

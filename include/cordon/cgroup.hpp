// cgroup v2 limits (SPEC §7): discovery, the backends that find a cgroup directory cordon may
// manage, and the run's own cgroup.
//
// Layout of one run, under a base directory B that a backend provides:
//
//     B/cordon-<pid>/        the limits (memory.max, memory.swap.max, pids.max, cpu.max) and the
//                            statistics; never holds a process itself
//     B/cordon-<pid>/jail/   the jail's init and everything it starts (clone3 CLONE_INTO_CGROUP);
//                            the root of the jail's cgroup namespace, so the payload cannot see,
//                            raise or leave the limits above it
//     B/cordon-<pid>.supervisor/
//                            only when B held nothing but the supervisor and must be emptied
//                            first (the "no internal processes" rule); at the end the supervisor
//                            disables the controllers it enabled in B, moves back and removes it
//
// Everything here runs in the supervisor; the child only receives a directory fd.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.hpp"
#include "cordon/fd.hpp"
#include "cordon/spec.hpp"

namespace cordon {

// The controllers a set of limits needs, as names in cgroup.controllers.
std::vector<std::string> needed_controllers(const CgroupLimits& limits);

// --- Pure parsers (unit-tested) -------------------------------------------------------------

struct Cgroup2Mount {
    std::string mount_point;  // "/sys/fs/cgroup"
    std::string root;         // the mounted subtree, relative to our cgroup namespace ("/" usually)
};
// The first cgroup2 mount in /proc/self/mountinfo.
std::optional<Cgroup2Mount> parse_cgroup2_mount(std::string_view mountinfo);
// The "0::PATH" line of /proc/self/cgroup.
std::optional<std::string> parse_cgroup2_path(std::string_view proc_self_cgroup);
// Our cgroup's directory: the mount point plus PATH relative to the mount's root; nullopt when
// PATH is outside the mounted subtree.
std::optional<std::string> cgroup_dir(const Cgroup2Mount& mount, const std::string& path);
// "memory pids cpu" -> {"memory", "pids", "cpu"}.
std::vector<std::string> split_words(std::string_view text);
// "key value" lines (memory.events, cpu.stat): the value of KEY, if present.
std::optional<uint64_t> stat_value(std::string_view text, std::string_view key);
// Controllers that /proc/cgroups shows bound to a cgroup v1 hierarchy (hierarchy id != 0).
std::vector<std::string> v1_controllers(std::string_view proc_cgroups);
// cpu.max for a quota: "QUOTA PERIOD" (microseconds).
std::string cpu_max_value(uint64_t quota_us);

// --- Discovery and planning (read-only) -------------------------------------------------------

// What this host offers, read from /proc/self/{mountinfo,cgroup} and /proc/cgroups.
struct CgroupHost {
    std::optional<Cgroup2Mount> mount;
    std::string path;             // our cgroup, relative to our cgroup namespace ("/" = the visible root)
    std::string dir;              // its directory ("" when unreachable)
    std::vector<std::string> v1;  // controllers held by cgroup v1 hierarchies
    // What the cgroup2 hierarchy's root offers (its cgroup.controllers, readable by anyone);
    // nullopt when unread.
    std::optional<std::vector<std::string>> v2_root;
};
CgroupHost discover_cgroups();

// How the cgroupfs backend would place the run, from what it can observe (pure; unit-tested).
struct BaseFacts {
    bool own_is_root = false;      // our cgroup is the root of the visible hierarchy
    bool own_writable = false;     // we may mkdir in it and write cgroup.procs/subtree_control
    bool parent_writable = false;  // the same for its parent
    std::vector<pid_t> own_procs;  // processes in our cgroup
    pid_t self = 0;
};
enum class BaseChoice {
    Own,           // create the run's cgroup under our own cgroup
    OwnVacated,    // the same, after moving the supervisor out into a leaf of its own
    Parent,        // our cgroup holds other processes; use its (delegated) parent
    Busy,          // delegated, but shared with other processes and the parent is not ours
    NotDelegated,  // nothing here is writable by us
};
BaseChoice choose_base(const BaseFacts& facts);

// The directory a backend hands out: the run's cgroup is created inside it.
struct CgroupBase {
    std::string dir;
    bool vacate = false;  // the supervisor sits in `dir` and must move to a leaf first
};

// Where a run's cgroup comes from (SPEC §7, in order: our own delegated cgroup, a systemd
// transient scope). One small interface: find out, read-only, whether the backend can work
// here (prepare, before anything exists), then make it so (the supervisor, before clone).
class CgroupBackend {
public:
    virtual ~CgroupBackend() = default;
    [[nodiscard]] virtual const char* name() const = 0;
    // Read-only: the controllers a run would get, or why this backend cannot serve it here
    // and what would fix it.
    virtual Result<std::vector<std::string>> check(const CgroupHost& host) = 0;
    // Produce the base directory; may move the calling process (systemd: into a new scope).
    virtual Result<CgroupBase> acquire(const CgroupHost& host) = 0;
};
std::unique_ptr<CgroupBackend> cgroupfs_backend();
// Always built: cordon speaks D-Bus itself (cordon/dbus.hpp); whether a user manager answers
// is for check() to find out.
std::unique_ptr<CgroupBackend> systemd_backend();

// The decision prepare() takes: which backend, which controllers, and what was given up.
struct CgroupPlan {
    std::string backend;                   // "cgroupfs" or "systemd"
    std::vector<std::string> controllers;  // to enable and write
};
// nullopt: no cgroup for this run (no limits asked, or best-effort with none applicable).
// An error only with --limits required; with best-effort, what will not apply goes to warnings,
// each "OPTION" kNotApplied "WHY" (the status JSON's limits_not_applied reads them so).
inline constexpr std::string_view kNotApplied = " not applied (--limits best-effort): ";
Result<std::optional<CgroupPlan>> plan_cgroup(const CgroupLimits& limits, const CgroupHost& host,
                                              std::vector<std::string>& warnings);

// --- The run's cgroup -------------------------------------------------------------------------

struct CgroupStats {
    uint64_t oom_kills = 0;     // memory.events oom_kill
    uint64_t cpu_usec = 0;      // cpu.stat usage_usec
    uint64_t peak_memory = 0;   // memory.peak (0: the kernel lacks it)
    uint64_t nr_throttled = 0;  // cpu.stat, with --cpus
    bool have_cpu = false;
};

// Owns B/cordon-<pid> and B/cordon-<pid>/jail: created with the limits written, destroyed by
// killing every process in it and removing both directories.
class RunCgroup final {
public:
    // Realise the plan: acquire the base, remove stale cordon cgroups left by killed runs,
    // enable the controllers, create the directories and write the limits.
    static Result<std::unique_ptr<RunCgroup>> create(const CgroupPlan& plan, const CgroupLimits& limits,
                                                     const CgroupHost& host);
    RunCgroup(const RunCgroup&) = delete;
    RunCgroup& operator=(const RunCgroup&) = delete;
    ~RunCgroup();

    // The jail's directory, for clone3(CLONE_INTO_CGROUP).
    [[nodiscard]] int jail_fd() const { return jail_fd_.get(); }
    [[nodiscard]] const std::string& path() const { return dir_; }
    // Fallback for kernels without CLONE_INTO_CGROUP: move PID in before it runs anything.
    Status join(pid_t pid) const;
    // Kill every process in the run's cgroup (cgroup.kill, else freeze + SIGKILL + thaw).
    void kill_all() const;
    [[nodiscard]] CgroupStats stats() const;

private:
    RunCgroup() = default;
    void remove();
    std::string dir_;                   // B/cordon-<pid>
    std::string base_;                  // B
    std::string sup_dir_;               // B/cordon-<pid>.supervisor, when the supervisor had to move
    std::vector<std::string> enabled_;  // controllers this run enabled in B's subtree_control
    UniqueFd jail_fd_;
};

// Remove B/cordon-<pid>* directories whose supervisor is gone (cordon killed with SIGKILL).
void remove_stale_cgroups(const std::string& base, const Cgroup2Mount& mount);

}  // namespace cordon

// The jail's runtime: what is derived from the Spec before clone (Prepared), the messages the
// child sends to the supervisor, and the two entry points.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <linux/filter.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cordon/cgroup.hpp"
#include "cordon/error.hpp"
#include "cordon/exec_notify.hpp"
#include "cordon/fallback.hpp"
#include "cordon/kernel_steps.hpp"
#include "cordon/landlock.hpp"
#include "cordon/mount_plan.hpp"
#include "cordon/outcome.hpp"
#include "cordon/seccomp.hpp"
#include "cordon/spec.hpp"

namespace cordon {

// A root caller's jail runs as this host uid and gid instead of 0 (ROOT CALLERS in cordon(1)):
// no account has it, so nothing on the host is the jail's but what it is shown through
// idmapped mounts (the workdir, HOME entries, --rw paths), whose files stay root's on disk.
constexpr uint32_t kRootJailId = 2147483646;

// The maps for a jail: one id outside becomes spec.uid/spec.gid inside, nothing else is mapped.
// The id outside is the caller's, or kRootJailId when a root caller's jail is remapped.
std::vector<IdMap> uid_maps(const Spec& spec, bool remap);
std::vector<IdMap> gid_maps(const Spec& spec, bool remap);
std::string format_id_map(const std::vector<IdMap>& maps);

// Everything the child needs, computed in the parent before clone so the child only replays it.
struct Prepared {
    MountPlan mounts;
    LandlockPlan landlock;  // the second wall, from the mount plan and this kernel's ABI
    // --isolation landlock: the Landlock jail, planned here (--isolation auto plans it only
    // once clone is refused a user namespace).
    std::optional<FallbackPlan> fallback;
    SeccompOptions seccomp_options;
    SeccompPolicy seccomp;  // the default's rules are left out: seccomp_rules() makes them
    std::vector<sock_filter> bpf;
    // Exec-time checks: given (the payload installs the listener, exec_bpf, and the jail's
    // filter refuses any other), or why the host cannot give them under --exec-checks auto.
    bool exec_checks = false;
    std::string exec_checks_unavailable;
    std::vector<sock_filter> exec_bpf;
    int clone_flags = 0;
    // cgroup v2 limits: what discovery found and how the supervisor will apply them (nullopt:
    // no cgroup for this run), plus the limits given up under --limits best-effort.
    CgroupHost cgroup_host;
    std::optional<CgroupPlan> cgroup;
    std::vector<std::string> warnings;
};
Result<Prepared> prepare(const Spec& spec);
// The rules of the run's syscall policy (made here for the compiled-in default).
std::vector<SyscallRule> seccomp_rules(const Prepared& prepared);

// Child -> supervisor messages over a SOCK_SEQPACKET socket.
struct ChildMsg {
    // Layers: err = LayerCheck::checked, status = its failed bits, text = the seccomp filters.
    enum Type : uint32_t {
        SetupError = 1,
        ExecError = 2,
        Started = 3,
        Exited = 4,
        ExecListener = 5,
        NetListener = 6,
        Layers = 7,
        AgentListener = 8
    };
    Type type;
    int32_t err;     // errno
    int32_t status;  // wait status, for Exited
    char text[480];  // the failing step, or argv[0]
};

// What the supervisor is told of how cordon runs (main.cpp's RunOptions), passed beside the Spec
// rather than kept in it: how cordon reports is no part of what the jail is (how much it says
// on stderr is cordon/diag.hpp's verbosity).
struct SupervisorOptions {
    bool report_cpu = false;  // --status-json: init is reaped, for the jail's CPU time
    int audit_fd = -1;        // --audit: the network filter's connections are logged there too
};

// The supervisor: create the namespaces, feed the child, wait, clean up. GATE, if given, runs
// while the child builds the jail and before anything of the command can run (nor any
// placeholder exists on the host): an Outcome from it ends the run there (the command policy).
// EXEC_GATE judges each exec inside the jail when prepared.exec_checks (exec_notify.hpp).
Outcome run_jail(const Spec& spec, const Prepared& prepared, const SupervisorOptions& options,
                 const std::function<std::optional<Outcome>()>& gate = {}, const ExecGate& exec_gate = {});

// Child side (src/jail/child.cpp): runs as pid 1 of the new pid namespace; never returns.
struct ChildContext {
    const Spec* spec;
    const Prepared* prepared;
    int sync_fd;
    // The kernel could not start the child inside its cgroup (no CLONE_INTO_CGROUP): the
    // supervisor moved it there, and the child enters its cgroup namespace itself afterwards.
    bool late_cgroupns = false;
    // A root caller's remapped jail (root_remap.hpp): the child was cloned with kRootJailId as
    // its effective ids, maps them, takes them as all of its ids, and attaches PREMOUNTS, the
    // caller's trees that the supervisor mounted for it (indexed like the plan's ops).
    bool remap = false;
    const std::vector<int>* premounts = nullptr;
    // The Landlock jail (fallback.hpp): no namespaces; its ruleset (with the run's TMPDIR) and
    // the environment that names that TMPDIR. Null: the namespace jail.
    const FallbackPlan* fallback = nullptr;
    const std::vector<std::string>* env = nullptr;
};
[[noreturn]] void child_main(const ChildContext& ctx);

// Replay the mount plan inside the new mount namespace and pivot into the new root.
// On failure, `step` describes the operation (written into a fixed buffer, no allocation).
// HANDOFF runs at the plan's hand-off (MountPlan::handoff), if it has one, before the first op
// that mounts a placeholder: it returns once the supervisor has made them, false if it did not.
// PREMOUNTS: for each op of the plan, a detached mount the supervisor made (a remapped root
// caller's jail, see root_remap.hpp), kSkipPremount to skip the op, -1 for none; empty: none.
// JAIL_IS_HOST_ROOT: the jail's uid is the host's uid 0 (ops marked host_root_only apply).
int apply_mounts(const MountPlan& plan, const std::vector<int>& premounts, bool jail_is_host_root,
                 const std::function<bool()>& handoff, char* step, size_t step_len);
// Read the supervisor's "proceed" byte; false if it did not come.
bool wait_proceed(int sync_fd);

}  // namespace cordon

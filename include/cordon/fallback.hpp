// The Landlock jail (cordon(1), ISOLATION): what cordon builds where user namespaces are refused
// (--isolation auto) or when asked to (--isolation landlock). No namespaces: the command sees the
// host's own file system through a Landlock ruleset derived from the namespace jail's mount plan,
// under the jail's syscall filter plus a filter of socket(2). Planned as pure data (the host's
// file system is read through HostFs), so it is unit-tested like the mount plan.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <linux/filter.h>

#include <string>
#include <vector>

#include "cordon/error.hpp"
#include "cordon/landlock.hpp"
#include "cordon/mount_plan.hpp"
#include "cordon/spec.hpp"

namespace cordon {

struct FallbackPlan {
    LandlockPlan landlock;             // in the host's terms: there is no other root
    std::vector<std::string> dropped;  // each guarantee of the namespace jail it cannot give
    // socket(2) refusals, installed just before the jail's own filter: unix sockets (the host's
    // are reachable by path) and, under --net none, every address family of a network.
    std::vector<sock_filter> socket_bpf;
    bool net_refused = false;  // --net none: no socket of a network family, no TCP bind or connect
    // --allow-host where the supervisor can be the jail's seccomp listener (enter_fallback):
    // the allowed hosts through the supervisor's proxy, and the listener's filter, which sends
    // connect(2) there too (proxy_connect.hpp). Otherwise no network at all.
    bool allow_hosts = false;               // --allow-host: the proxy where a listener can be had
    std::vector<sock_filter> listener_bpf;  // set (non-empty) where the jail goes through the proxy
    // The per-run TMPDIR: the supervisor makes it below this directory, and Landlock grants it
    // (the shared /tmp itself gets no rule).
    std::string tmp_parent = "/tmp";
    // The protected paths (absolute): writable during the run, as Landlock cannot refuse one
    // name in a directory the command writes, and judged when it ends (protected_judge.hpp).
    std::vector<std::string> judged;
    // The private HOME (the namespace jail's tmpfs at HOME): a directory made for the run below
    // tmp_parent, with a symlink to each host entry the plan shows in HOME (HOME_LINKS, granted
    // where they are); HOME and the XDG directories under it point there. Empty: HOME is shared.
    std::string home;
    std::vector<std::string> home_links;
    // The ABI the kernel answered, and what it lacks that this plan names as dropped.
    int abi = 0;
};

// Whether clone's ERR means that user namespaces are refused here (a policy, a limit of 0):
// --isolation auto then builds the Landlock jail.
bool userns_refused(int err);
// 0 when this process may create a user namespace, else the errno: a short-lived child tries.
// For --dry-run and doctor; a run learns it from its own clone.
int probe_userns();

// The Landlock jail for SPEC, from the namespace jail's plan MOUNTS, on a kernel that answered
// ABI (landlock_abi()). An error (125) where none can be built (no Landlock, ABI 1) or where it
// cannot give what SPEC asks (--uid, --hostname, --cap-add, bwrap-style mounts that place
// something elsewhere than where the host has it).
Result<FallbackPlan> plan_fallback(const Spec& spec, const MountPlan& mounts, int abi, const HostFs& fs);

// The text of the one warning a Landlock jail prints (without "cordon: warning: "), two lines:
// WHY (why it runs instead of the namespace jail), then the jail and what it cannot give, the
// first items named and the rest counted.
std::string fallback_warning(const FallbackPlan& plan, const std::string& why);

// The Landlock jail's per-run TMPDIR: a directory of mode 0700 made below a parent, removed
// with whatever the run left in it (no symlink is followed) when this goes.
class RunTmpdir final {
public:
    static Result<RunTmpdir> create(const std::string& parent, const char* prefix = "cordon-tmp");
    RunTmpdir() = default;
    RunTmpdir(RunTmpdir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
    RunTmpdir& operator=(RunTmpdir&& other) noexcept;
    RunTmpdir(const RunTmpdir&) = delete;
    RunTmpdir& operator=(const RunTmpdir&) = delete;
    ~RunTmpdir();
    [[nodiscard]] const std::string& path() const { return path_; }

private:
    std::string path_;
};

// Init of a Landlock jail, at the payload's end: it has no pid namespace (kill(-1) would reach
// the host's processes), but it is the subreaper of what the command left behind, so each
// child of init is killed and reaped until none is left (their own come to init as they die).
void end_children();
// The supervisor of a Landlock jail, once init is gone: init may have died before the command
// did (a limit another process of the jail set on it, --timeout's SIGKILL), and what it left
// came to the supervisor, the jail's subreaper (PR_SET_CHILD_SUBREAPER, set before the clone).
// Each child of any of our threads is killed and reaped until none is left, so that nothing of
// the jail writes after the run is judged.
void end_orphans();

// The Landlock jail's filter of socket calls (fallback.cpp): SHARE_NET, --net host; PROXY, the
// network allowlist through the supervisor's proxy (TCP client sockets only, no bind, listen
// or Fast Open).
Result<std::vector<sock_filter>> fallback_socket_filter(bool share_net, bool proxy);

// The places the plan lets the jail write (its rules with a write right), as real paths:
// an exec of a file outside them runs nothing the jail made (exec_identity.hpp).
std::vector<std::string> fallback_writable(const FallbackPlan& plan);

// --dry-run's lines for the plan, without a trailing newline each.
std::vector<std::string> describe(const FallbackPlan& plan);

}  // namespace cordon

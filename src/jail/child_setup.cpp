// Init's steps that build the jail (child_setup.hpp): the id maps, the cgroup namespace, the
// mount plan, the hostname and network, the working directory, the Landlock ruleset and the
// privileges locked. The step lists that take them, and why in that order, are in child.cpp.
#include <fcntl.h>
#include <sched.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "child_setup.hpp"
#include "cordon/fd.hpp"
#include "cordon/jail.hpp"
#include "cordon/kernel_steps.hpp"
#include "cordon/net.hpp"
#include "cordon/net_proxy.hpp"
#include "cordon/paths.hpp"
#include "cordon/ssh_agent_relay.hpp"

namespace cordon::init {

namespace {

bool has_effective_cap(cap_value_t cap) {
    cap_t caps = ::cap_get_proc();
    if (!caps) return false;
    cap_flag_value_t has = CAP_CLEAR;
    ::cap_get_flag(caps, cap, CAP_EFFECTIVE, &has);
    ::cap_free(caps);
    return has == CAP_SET;
}

// Bounding set: everything not explicitly kept. Needs CAP_SETPCAP, so it runs before the
// capability sets are cleared. A Landlock jail's unprivileged caller has no capability to drop
// (EPERM): under no_new_privs an exec cannot give it one.
int drop_bounding_set(const Spec& spec, bool fallback) {
    uint64_t keep = 0;
    for (int cap : spec.cap_keep) {
        if (cap >= 0 && cap < 64) keep |= uint64_t{1} << cap;
    }
    if (kernel::drop_bounding_set(keep, CAP_LAST_CAP) != 0) {
        if (fallback && errno == EPERM && !has_effective_cap(CAP_SETPCAP)) return 0;
        return -1;
    }
    return 0;
}

}  // namespace

// init, at the payload's end (end_jail): init keeps each placeholder open until it exits, after
// cordon. The supervisor removes the placeholders once it reads Exited; removing a directory
// frees its disk block, and on a file system mounted with discard that waits for the disk; an
// inode still open is freed by its last holder instead. (The mounts on them stay: init holds no
// capability any more to detach them, and a placeholder renamed away keeps its mount without
// cost; removing a file placeholder detaches its mount, about 0.1 ms here.)
void hold_placeholders(const ChildContext& ctx) {
    for (const auto& ph : ctx.prepared->mounts.placeholders) {
        (void)::open(ph.path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);  // held until init exits
    }
}

// init: die with the supervisor. It may already be gone: then the socket is at EOF later, and
// the word to proceed never comes.
void die_with_supervisor(int sync) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) setup_failed(sync, "set the parent-death signal");
}

// init: nothing inherited beyond stdio and the sync socket reaches the jail. The supervisor's
// ready-made mounts for a remapped root caller's jail (root_remap.hpp), if any, are closed once
// build_filesystem has attached them.
void close_inherited_fds(const ChildContext& ctx, bool premounts_attached) {
    const bool premounts = ctx.premounts && !ctx.premounts->empty();
    if (premounts != premounts_attached) return;
    const int sync = ctx.sync_fd;
    if (sync > 3) ::close_range(3, static_cast<unsigned>(sync) - 1, 0);
    ::close_range(static_cast<unsigned>(sync) + 1, ~0U, 0);
}

// init: our ids. A process may write the single-line maps of a user namespace it has just
// created (its own ids, or 0 for them), while it still holds its capabilities there: no round
// trip to the supervisor. Should the supervisor be gone already (before die_with_supervisor),
// the word to proceed it never sends stops us before anything of the command runs.
void write_id_maps(const ChildContext& ctx) {
    const int sync = ctx.sync_fd;
    // Cloned with other effective ids than the supervisor's real ones (a remapped root caller's
    // jail), our memory started non-dumpable, and /proc/self root's: dumpable again to write
    // our maps (lock_privileges makes init non-dumpable for good).
    if (ctx.remap && ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) setup_failed(sync, "make init dumpable for its maps");
    const std::vector<IdMap> uid = uid_maps(*ctx.spec, ctx.remap);
    const std::vector<IdMap> gid = gid_maps(*ctx.spec, ctx.remap);
    const kernel::IdMapStep failed = kernel::write_id_maps("/proc/self", kernel::Setgroups::Deny, uid, gid);
    if (failed == kernel::IdMapStep::Done) return;
    const int err = errno;
    const char* file = failed == kernel::IdMapStep::Setgroups ? "/proc/self/setgroups"
                       : failed == kernel::IdMapStep::UidMap  ? "/proc/self/uid_map"
                                                              : "/proc/self/gid_map";
    const std::string data = failed == kernel::IdMapStep::Setgroups ? "deny"
                             : failed == kernel::IdMapStep::UidMap  ? format_id_map(uid)
                                                                    : format_id_map(gid);
    char what[96];
    std::snprintf(what, sizeof what, "write %s (%s)", file, data.substr(0, data.find('\n')).c_str());
    errno = err;
    setup_failed(sync, what);
}

// init, in a remapped root caller's jail: only our effective ids were kRootJailId; now all of
// them are, so nothing of ours is host root any more (not the real uid either). The parent-death
// signal is set again, should the kernel have cleared it with the change of ids.
void take_jail_ids(const ChildContext& ctx) {
    if (!ctx.remap) return;
    const Spec& spec = *ctx.spec;
    if (::syscall(SYS_setresgid, spec.gid, spec.gid, spec.gid) != 0 ||
        ::syscall(SYS_setresuid, spec.uid, spec.uid, spec.uid) != 0) {
        setup_failed(ctx.sync_fd, "take the jail's ids");
    }
    die_with_supervisor(ctx.sync_fd);
}

// init, without CLONE_INTO_CGROUP: wait until the supervisor has moved us into the jail's
// cgroup, which then becomes the root of our cgroup namespace before anything of the payload
// exists.
void enter_cgroup_namespace(const ChildContext& ctx) {
    if (!ctx.late_cgroupns) return;
    char go = 0;
    if (retry_eintr([&] { return ::recv(ctx.sync_fd, &go, 1, 0); }) != 1) ::_exit(125);
    if (!ctx.fallback && ::unshare(CLONE_NEWCGROUP) != 0) setup_failed(ctx.sync_fd, "create the cgroup namespace");
}

// init: the filesystem (the mount plan, then pivot_root into the new root). Needs CAP_SYS_ADMIN
// in our user namespace, which init holds until start_payload. Returns whether the supervisor's
// word to proceed was read meanwhile (at the first placeholder's mount).
bool build_filesystem(const ChildContext& ctx) {
    static const std::vector<int> kNone;
    const std::vector<int>& premounts = ctx.premounts ? *ctx.premounts : kNone;
    const bool jail_is_host_root = ctx.spec->host_uid == 0 && !ctx.remap;
    char step[256] = "";
    bool proceeded = false;
    const auto handoff = [&] { return proceeded = wait_proceed(ctx.sync_fd); };
    if (apply_mounts(ctx.prepared->mounts, premounts, jail_is_host_root, handoff, step, sizeof step) != 0) {
        setup_failed(ctx.sync_fd, step);
    }
    return proceeded;
}

// init: the hostname and the network namespace's loopback; with --allow-host, the filter's
// listeners, bound here while init still holds CAP_NET_BIND_SERVICE (ports 53, 80 and 443);
// with --ssh-agent, the agent's socket on the jail's /run.
void set_up_uts_and_network(const ChildContext& ctx) {
    const Spec& spec = *ctx.spec;
    if (spec.hostname && ::sethostname(spec.hostname->c_str(), spec.hostname->size()) != 0) {
        setup_failed(ctx.sync_fd, "set the hostname");
    }
    if (!spec.share_net && bring_loopback_up() != 0) setup_failed(ctx.sync_fd, "bring up the loopback interface");
    char step[128];
    if (!spec.allow_hosts.empty() && make_net_listeners(spec, ctx.sync_fd, step, sizeof step) != 0) {
        setup_failed(ctx.sync_fd, step);
    }
    char agent_step[160];
    if (!spec.ssh_agent_hosts.empty() && make_agent_listener(ctx.sync_fd, agent_step, sizeof agent_step) != 0) {
        setup_failed(ctx.sync_fd, agent_step);
    }
}

// init: the command's working directory. The caller's directory may not exist in the jail
// (--no-profile, a directory outside every exposed path): like bwrap, fall back to HOME, then
// /. An explicit --chdir must work.
void enter_working_directory(const ChildContext& ctx) {
    const Spec& spec = *ctx.spec;
    if (::chdir(spec.chdir.c_str()) != 0 &&
        (spec.chdir_explicit || (::chdir(spec.home.c_str()) != 0 && ::chdir("/") != 0))) {
        char step[256];
        std::snprintf(step, sizeof step, "change to directory %s inside the jail", spec.chdir.c_str());
        setup_failed(ctx.sync_fd, step);
    }
}

// init: the Landlock ruleset, named in the jail's own terms now that its root is in place; the
// payload enforces it (-1: none).
int build_landlock(const ChildContext& ctx) {
    int landlock = -1;
    char step[256] = "";
    const LandlockPlan& plan = ctx.fallback ? ctx.fallback->landlock : ctx.prepared->landlock;
    if (build_landlock_ruleset(plan, landlock, step, sizeof step) != 0) {
        setup_failed(ctx.sync_fd, step);
    }
    return landlock;
}

// init: no way back up for init or anything it starts. Init is not dumpable, so the payload
// (same uid) cannot ptrace it or read its memory through /proc.
void lock_privileges(const ChildContext& ctx) {
    if (drop_bounding_set(*ctx.spec, ctx.fallback != nullptr) != 0) {
        setup_failed(ctx.sync_fd, "drop the capability bounding set");
    }
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) setup_failed(ctx.sync_fd, "set no_new_privs");
    // A Landlock jail's init stays dumpable: the payload, in a Landlock domain that init is
    // outside of, can neither ptrace it nor open its /proc files, and the payload, which shares
    // init's memory until it execs, must be readable by an exec check outside (cordon in cordon).
    if (!ctx.fallback && ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
        setup_failed(ctx.sync_fd, "make init non-dumpable");
    }
}

}  // namespace cordon::init

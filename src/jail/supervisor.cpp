// The supervisor: the parent process. prepare() derives everything the jail needs before clone;
// run_jail() then runs it in three steps, each recording what happened in RunFacts:
//   start      the run's cgroup, the signals, the jail's init (clone; it runs child_main)
//   admit      while the child builds the jail: the cgroup move (without CLONE_INTO_CGROUP), the
//              gate (the command policy), the placeholders, and the word to proceed
//   supervise  one poll loop over the child's sync socket, a signalfd and the timeout timer until
//              the jail's init is gone (supervise.cpp)
// classify() (outcome.cpp) alone decides the reason and exit status from those facts. The
// timeline of the signal handling in both processes is at the top of child.cpp.
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <memory>
#include <optional>

#include "cordon/cgroup.hpp"
#include "cordon/diag.hpp"
#include "cordon/exec_notify.hpp"
#include "cordon/fd.hpp"
#include "cordon/jail.hpp"
#include "cordon/leftovers.hpp"
#include "cordon/net.hpp"
#include "cordon/net_proxy.hpp"
#include "cordon/outcome.hpp"
#include "cordon/paths.hpp"
#include "cordon/placeholders.hpp"
#include "cordon/protected_judge.hpp"
#include "cordon/root_remap.hpp"
#include "cordon/ssh_agent_relay.hpp"
#include "supervisor_run.hpp"

namespace cordon {

namespace {

const char* const kUsernsRefusedHint =
    "see 'cordon doctor': it says what refuses user namespaces here and how to allow them (sysctl "
    "user.max_user_namespaces, Ubuntu's kernel.apparmor_restrict_unprivileged_userns and cordon's AppArmor "
    "profile, a container's seccomp profile)";

uint64_t ms_since(std::chrono::steady_clock::time_point t0) {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
}

// The jail's init, started inside its cgroup when there is one: clone3(CLONE_INTO_CGROUP)
// (Linux >= 5.7) puts it there atomically. Older kernels (or a container's seccomp policy that
// hides clone3) get a plain clone without the cgroup namespace; the supervisor then moves the
// child before letting it run, and the child creates its cgroup namespace itself.
pid_t spawn_init(int flags, int cgroup_fd, bool& late_cgroupns) {
    if (cgroup_fd >= 0) {
        struct clone_args args {};
        args.flags = static_cast<uint64_t>(static_cast<unsigned>(flags)) | CLONE_INTO_CGROUP;
        args.exit_signal = SIGCHLD;
        args.cgroup = static_cast<uint64_t>(cgroup_fd);
        long r = ::syscall(SYS_clone3, &args, sizeof args);
        if (r >= 0) return static_cast<pid_t>(r);
        late_cgroupns = true;
        flags &= ~CLONE_NEWCGROUP;
    }
    return static_cast<pid_t>(
        ::syscall(SYS_clone, static_cast<unsigned long>(flags) | SIGCHLD, nullptr, nullptr, nullptr, 0));
}

std::string format_size(uint64_t bytes) {
    for (auto [shift, suffix] : {std::pair{30, "G"}, std::pair{20, "M"}, std::pair{10, "K"}}) {
        if (bytes % (1ULL << shift) == 0) return std::to_string(bytes >> shift) + suffix;
    }
    return std::to_string(bytes) + " bytes";
}

// --allow-host: the jail's /etc/resolv.conf names the fake resolver, for the tools that resolve
// names themselves. Where the host's is a symlink (into /run, the jail's own), or there is no
// /etc, tools that read the proxy variables still work, and the others find no resolver.
Status plan_resolver(const Spec& spec, MountPlan& plan) {
    struct stat st {};
    if (spec.allow_hosts.empty() || spec.no_profile || ::lstat("/etc/resolv.conf", &st) != 0 || !S_ISREG(st.st_mode))
        return {};
    CORDON_ASSIGN_OR_RETURN(std::string path, jail_resolv_conf());
    plan.ops.push_back(MountOp{.kind = MountOp::Kind::Bind,
                               .source = path,
                               .dest = "/etc/resolv.conf",
                               .readonly = true,
                               .why = "allow-host"});
    return {};
}

// --ssh-agent: the jail's ~/.ssh/known_hosts lists the allowed hosts' keys, so that ssh inside
// knows them without asking (the private HOME has none of the caller's). ssh(1) takes ~ from
// the password database, not HOME: where the two differ, the file goes to both, the password
// database's only where the jail's own root holds it (no bind of the host's there). Without a
// private HOME the jail sees the caller's own.
Status plan_known_hosts(const Spec& spec, MountPlan& plan) {
    if (spec.ssh_agent_hosts.empty() || !spec.private_home || spec.home.empty() || spec.home == "/") return {};
    CORDON_ASSIGN_OR_RETURN(std::string path, jail_known_hosts(spec));
    std::vector<std::string> homes = {spec.home};
    if (auto pw = passwd_entry(spec.uid); pw && pw->home.size() > 1 && pw->home[0] == '/' && pw->home != spec.home) {
        const bool own = std::none_of(plan.ops.begin(), plan.ops.end(), [&](const MountOp& op) {
            return op.kind != MountOp::Kind::Tmpfs && op.dest != "/" && path_at_or_under(pw->home, op.dest);
        });
        if (own) homes.push_back(normalize_path(pw->home, "/"));
    }
    for (const std::string& home : homes) {
        plan.ops.push_back(MountOp{.kind = MountOp::Kind::Bind,
                                   .source = path,
                                   .dest = home + "/.ssh/known_hosts",
                                   .readonly = true,
                                   .why = "ssh-agent"});
    }
    return {};
}

// Whether a root caller's jail can hold CAP_SETFCAP: kept by --cap-add, or had by the root of a
// user namespace the command makes (--allow-userns), which maps to host root or is stored as it
// through an idmapped tree. An unprivileged caller's capabilities are bound by the kernel to its
// uid, which the host's own namespace never honours.
bool may_set_file_caps(const Spec& spec) {
    return ::geteuid() == 0 &&
           (spec.allow_userns || std::ranges::find(spec.cap_keep, CAP_SETFCAP) != spec.cap_keep.end());
}

// The syscall policy: the built-in one's program was compiled when cordon was built and is taken
// as it is (its rules are made only when they are shown, for --dry-run). A policy file may not
// leave a root caller's jail a way to write file capabilities: where it can hold CAP_SETFCAP
// (the options, or the file leaving user namespaces open), the file gets the refusals of xattr
// writes and io_uring it lacks, and must refuse mounting, else it is an error.
Status plan_seccomp(const Spec& spec, Prepared& p) {
    p.seccomp_options = SeccompOptions{spec.allow_userns, spec.allow_ptrace, spec.share_net, may_set_file_caps(spec)};
    if (auto pre = precompiled_default_seccomp(p.seccomp_options); spec.seccomp == "default" && !pre.empty()) {
        p.seccomp.name = "default";
        p.bpf.assign(pre.begin(), pre.end());
        return {};
    }
    CORDON_ASSIGN_OR_RETURN(p.seccomp, load_seccomp(spec.seccomp, p.seccomp_options));
    // A file that leaves user namespaces open needs the same: close_file_caps() adds what the
    // built-in rules would have (the file is not read a second time).
    if (::geteuid() == 0 && userns_left_open(p.seccomp.rules)) p.seccomp_options.deny_xattr_writes = true;
    if (p.seccomp_options.deny_xattr_writes) {
        if (std::string open = close_file_caps(p.seccomp); !open.empty()) {
            return make_error("--seccomp " + spec.seccomp,
                              "a root caller's jail that can hold CAP_SETFCAP (--cap-add CAP_SETFCAP, "
                              "--allow-userns, or a policy that allows user namespaces) needs a policy that "
                              "refuses " +
                                  open +
                                  ": a file capability written or copied up in the jail would be honoured on the "
                                  "host (man cordon, SECCOMP)");
        }
    }
    CORDON_ASSIGN_OR_RETURN(p.bpf, compile_seccomp(p.seccomp));
    return {};
}

// Exec-time checks (SPEC §6), unless --no-policy or --exec-checks off: given where this process
// can be the jail's seccomp listener (not under another cordon, or a runtime that has one, as
// the kernel allows one); else the static check alone, or with --exec-checks required, an error.
// The same listener answers the calls that trip over protected paths (placeholder_calls.hpp)
// in a namespace jail that has any; without a listener, the kernel's errors stand.
Status decide_exec_checks(const Spec& spec, Prepared& p) {
    using Mode = Spec::ExecChecks;
    const bool execs = !spec.no_policy && spec.exec_checks != Mode::Off;
    const bool answers =
        spec.isolation != Isolation::Landlock &&
        (!p.mounts.placeholders.empty() ||
         std::any_of(p.mounts.ops.begin(), p.mounts.ops.end(), [](const MountOp& op) { return op.why == "protect"; }));
    if (!execs && !answers) return {};
    const ListenerProbe probe = probe_exec_listener();
    if (probe.available) {
        p.exec_checks = execs;
        p.exec_bpf = exec_filter(execs, answers);
        return {};
    }
    if (!execs) return {};
    p.exec_checks_unavailable = probe.why;
    if (spec.exec_checks != Mode::Required) return {};
    Error e = make_error("--exec-checks required", "exec checks are not available: " + probe.why);
    e.hint = "run cordon outside the other sandbox, or accept the static check alone with --exec-checks auto";
    return e;
}

}  // namespace

Result<Prepared> prepare(const Spec& spec) {
    Prepared p;
    CORDON_ASSIGN_OR_RETURN(p.mounts, plan_mounts(spec, real_host_fs()));
    CORDON_TRY(decide_exec_checks(spec, p));
    CORDON_TRY(plan_seccomp(spec, p));
    if (spec.isolation == Isolation::Landlock) {
        CORDON_ASSIGN_OR_RETURN(p.fallback, plan_fallback(spec, p.mounts, landlock_abi(), real_host_fs()));
    }
    p.landlock =
        plan_landlock(spec, p.mounts, landlock_abi(), spec.allow_userns && seccomp_allows_mounts(seccomp_rules(p)));
    p.clone_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
    if (!spec.share_net) p.clone_flags |= CLONE_NEWNET;
    CORDON_TRY(plan_resolver(spec, p.mounts));
    CORDON_TRY(plan_known_hosts(spec, p.mounts));
    // Limits: decided here, read-only, so a limit that cannot be applied fails before anything
    // is created; the supervisor creates the cgroup just before clone.
    if (spec.limits.any()) {
        p.cgroup_host = discover_cgroups();
        CORDON_ASSIGN_OR_RETURN(p.cgroup, plan_cgroup(spec.limits, p.cgroup_host, p.warnings));
    }
    return p;
}

std::vector<SyscallRule> seccomp_rules(const Prepared& prepared) {
    if (prepared.seccomp.name == "default" && prepared.seccomp.rules.empty()) {
        return default_seccomp(prepared.seccomp_options).rules;
    }
    return prepared.seccomp.rules;
}

namespace {

using supervisor::kSupervisedSignals;
using supervisor::Run;

void print_notes(const Run& run) {
    for (const auto& n : run.prepared.mounts.notes) diag::note("{}", n);
    for (const auto& w : run.prepared.warnings) diag::warning("{}", w);
}

// --- start --------------------------------------------------------------------------------------

// The run's cgroup exists before the child does, so the child starts inside it.
Status create_cgroup(Run& run) {
    if (!run.prepared.cgroup) return {};
    auto cg = RunCgroup::create(*run.prepared.cgroup, run.spec.limits, run.prepared.cgroup_host);
    if (cg) {
        run.cgroup = std::move(*cg);
    } else if (!run.spec.limits.best_effort) {
        return cg.error();
    } else {
        const Error& e = cg.error();
        const std::string why = e.what + ": " + e.why + (e.err ? std::string(": ") + std::strerror(e.err) : "");
        run.limits_dropped.push_back("limits: " + why);
        diag::warning("limits not applied (--limits best-effort): {}", why);
    }
    return {};
}

// A root caller's jail runs as kRootJailId, not as host root, wherever the caller's trees can
// be idmapped: these are its ready-made mounts. Elsewhere (nullopt) it is the classic jail,
// whose uid 0 is the host's (cordon(1), ROOT CALLERS).
// A root caller's idmapped trees (root_remap.hpp), or nullopt where this host or file system
// cannot idmap them: the classic jail then. A tree swapped for a symlink or another directory
// since it was chosen (ELOOP, ESTALE) is no such case: the run ends.
Result<std::optional<Premounts>> make_premounts(const Run& run) {
    if (run.spec.host_uid != 0) return std::optional<Premounts>();
    auto p = Premounts::make(run.spec, run.prepared.mounts);
    if (p) return std::optional<Premounts>(std::move(*p));
    if (p.error().err == ELOOP || p.error().err == ESTALE) return p.error();
    diag::verbose("{}; the jail runs as host root (cordon(1), ROOT CALLERS)", p.error().message().substr(8));
    return std::optional<Premounts>();
}

// The jail's init, in its cgroup from the start where the kernel can; returns its pid (0 in
// the child).
Result<pid_t> clone_init(Run& run) {
    const pid_t init = spawn_init(run.prepared.clone_flags, run.cgroup ? run.cgroup->jail_fd() : -1, run.late_cgroupns);
    if (init < 0) return clone_error(errno);
    return init;
}

// The Landlock jail's init: no namespaces, in its cgroup from the start where the kernel can.
Result<pid_t> clone_fallback(Run& run) {
    run.late_cgroupns = false;
    // What init leaves, should it die first, comes to us (end_orphans), not to the host's init.
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) return sys_error("become the Landlock jail's subreaper");
    const pid_t init = spawn_init(0, run.cgroup ? run.cgroup->jail_fd() : -1, run.late_cgroupns);
    if (init < 0) return sys_error("start the Landlock jail (clone)");
    return init;
}

// A remapped root caller's init is cloned with kRootJailId as our effective ids, so that it
// owns its user namespace and maps those ids itself, with no round trip. The kernel checks a
// cgroup move against those ids too: with limits, the child starts outside its cgroup and admit
// moves it.
Result<pid_t> clone_init_as_jail_ids(Run& run) {
    const long id = kRootJailId;
    // Changing our ids clears a parent-death signal our caller set (bwrap's --die-with-parent
    // under the extras): it is set again after, and one whose moment passed meanwhile is taken.
    int death_signal = 0;
    (void)::prctl(PR_GET_PDEATHSIG, &death_signal, 0, 0, 0);
    const pid_t parent = ::getppid();
    if (::setgroups(0, nullptr) != 0 || ::syscall(SYS_setresgid, -1L, id, -1L) != 0 ||
        ::syscall(SYS_setresuid, -1L, id, -1L) != 0) {
        return sys_error("take the jail's ids to start it");
    }
    int flags = run.prepared.clone_flags;
    if (run.cgroup) {
        run.late_cgroupns = true;
        flags &= ~CLONE_NEWCGROUP;
    }
    const pid_t init = spawn_init(flags, -1, run.late_cgroupns);
    const int clone_err = errno;
    // Root again (and dumpable again: changing ids made us not).
    if (init != 0 && (::syscall(SYS_setresuid, -1L, 0L, -1L) != 0 || ::syscall(SYS_setresgid, -1L, 0L, -1L) != 0 ||
                      ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)) {
        if (init > 0) ::kill(init, SIGKILL);
        return sys_error("take back root's ids");
    }
    if (init != 0 && death_signal != 0) {
        (void)::prctl(PR_SET_PDEATHSIG, death_signal, 0, 0, 0);
        if (::getppid() != parent) {
            if (init > 0) ::kill(init, SIGKILL);
            ::raise(death_signal);
        }
    }
    if (init < 0) return clone_error(clone_err);
    return init;
}

// The Landlock jail's private HOME (fallback.hpp): a directory of the run's, with a symlink to
// each host entry that the namespace jail's HOME would show (none inside another).
Status make_private_home(Run& run) {
    const FallbackPlan& plan = *run.fallback;
    if (plan.home.empty()) return {};
    CORDON_ASSIGN_OR_RETURN(run.home, RunTmpdir::create(plan.tmp_parent, "cordon-home"));
    std::vector<std::string> links = plan.home_links;
    std::sort(links.begin(), links.end());
    std::string last;
    for (const auto& link : links) {
        if (!last.empty() && path_at_or_under(link, last)) continue;
        last = link;
        const std::string rel = link.substr(plan.home.size() + 1);
        for (size_t slash = rel.find('/'); slash != std::string::npos; slash = rel.find('/', slash + 1)) {
            const std::string dir = run.home.path() + "/" + rel.substr(0, slash);
            if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return sys_error("make " + dir);
        }
        const std::string at = run.home.path() + "/" + rel;
        if (::symlink(link.c_str(), at.c_str()) != 0) return sys_error("make the private HOME's link " + at);
    }
    return {};
}

// The Landlock jail's --allow-host (proxy_connect.hpp): where this process can be the jail's
// seccomp listener, the proxy listens on the host's loopback, and the jail's connects come
// here; else the jail has no network at all, as the plan says.
Status route_through_proxy(Run& run) {
    FallbackPlan& plan = *run.fallback;
    if (!run.net || run.spec.allow_hosts.empty()) return {};
    const ListenerProbe probe = probe_exec_listener();
    if (!probe.available) {
        plan.dropped.push_back("--allow-host: no network at all (no seccomp listener here: " + probe.why + ")");
        return {};
    }
    auto admitted = std::make_shared<ProxyAdmissions>();
    CORDON_ASSIGN_OR_RETURN(const uint16_t port, run.net->listen_on_host(admitted));
    run.proxy_route = ProxyRoute{proxy_port(run.spec.allow_hosts), port, std::move(admitted)};
    CORDON_ASSIGN_OR_RETURN(plan.socket_bpf, fallback_socket_filter(false, true));
    plan.listener_bpf = exec_filter(run.prepared.exec_checks, false, true);
    return {};
}

// The Landlock jail instead of the namespace jail, for WHY (the refusal, or --isolation
// landlock): its plan, its TMPDIR, and the one warning that names what it cannot give.
Status enter_fallback(Run& run, const std::string& why) {
    if (run.spec.as_pid_1) {
        Error e = make_error("--as-pid-1", kAsPid1Landlock);
        e.why = why + ", and " + e.why;
        return e;
    }
    auto plan = run.prepared.fallback ? Result<FallbackPlan>(*run.prepared.fallback)
                                      : plan_fallback(run.spec, run.prepared.mounts, landlock_abi(), real_host_fs());
    if (!plan) {
        Error e = plan.error();
        // The option the Landlock jail cannot take stays named ("--hostname: ...").
        const std::string option = e.what.rfind("--", 0) == 0 ? e.what + ": " : "";
        e.what = "cannot build a jail";
        e.why = why + ", and " + option + e.why;
        e.hint = kUsernsRefusedHint;
        return e;
    }
    run.fallback = std::move(*plan);
    const uint64_t rw = landlock_read_rights() | landlock_write_rights(run.fallback->landlock.abi);
    CORDON_ASSIGN_OR_RETURN(run.tmpdir, RunTmpdir::create(run.fallback->tmp_parent));
    run.fallback->landlock.rules.push_back(LandlockRule{run.tmpdir.path(), rw});
    CORDON_TRY(make_private_home(run));
    const std::string& home = run.fallback->home;
    for (const auto& e : run.spec.env) {
        const size_t eq = e.find('=');
        const std::string name = e.substr(0, eq);
        if (name == "TMPDIR" || (!home.empty() && name == "HOME")) continue;
        const bool xdg = name == "XDG_CONFIG_HOME" || name == "XDG_CACHE_HOME" || name == "XDG_DATA_HOME" ||
                         name == "XDG_STATE_HOME";
        if (xdg && !home.empty() && eq != std::string::npos && path_at_or_under(e.substr(eq + 1), home)) {
            run.fallback_env.push_back(name + "=" + run.home.path() + e.substr(eq + 1 + home.size()));
        } else {
            run.fallback_env.push_back(e);
        }
    }
    run.fallback_env.push_back("TMPDIR=" + run.tmpdir.path());
    if (!home.empty()) run.fallback_env.push_back("HOME=" + run.home.path());
    if (!run.home.path().empty()) run.fallback->landlock.rules.push_back(LandlockRule{run.home.path(), rw});
    CORDON_TRY(route_through_proxy(run));
    diag::warning("{}", fallback_warning(*run.fallback, why));
    return {};
}

// The jail's init: the namespace jail's, or where clone is refused a user namespace under
// --isolation auto, the Landlock jail's. That is learnt from the clone itself, so that the
// namespace jail's start costs nothing more.
Result<pid_t> clone_jail(Run& run, bool remap) {
    if (run.fallback) return clone_fallback(run);
    auto init = remap ? clone_init_as_jail_ids(run) : clone_init(run);
    if (init || run.spec.isolation != Isolation::Auto || !is_clone_error(init.error()) ||
        !userns_refused(init.error().err)) {
        return init;
    }
    CORDON_TRY(enter_fallback(
        run, std::string("user namespaces are refused here (clone: ") + std::strerror(init.error().err) + ")"));
    return clone_fallback(run);
}

// The CPUs we may run on, when there are others than the one we run on now: init starts there.
// Not under a seccomp filter: one may kill on sched_setaffinity.
std::optional<cpu_set_t> spread_affinity() {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    const int here = ::sched_getcpu();
    if (here < 0 || ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 0 || ::sched_getaffinity(0, sizeof allowed, &allowed) != 0 ||
        !CPU_ISSET(here, &allowed) || CPU_COUNT(&allowed) < 2) {
        return std::nullopt;
    }
    return allowed;
}

// Init on another CPU than ours. The scheduler most often puts a new child on its parent's
// CPU, where it waits until we block: that is what a parent that waits for its child wants
// (bwrap's), not one that works beside it. We admit the command while init builds the jail,
// and measured on two CPUs, a child left on ours first ran after a median of 1.4 ms, one on
// the other after 0.06 (bench/README.md). We give init back the caller's CPUs before the word
// to proceed (restore_cpus), so the command gets them all; should this call fail, init only
// starts where the scheduler put it.
void start_elsewhere(Run& run) {
    if (!run.affinity || run.init <= 0) return;
    cpu_set_t others = *run.affinity;
    CPU_CLR(::sched_getcpu(), &others);
    run.spread = CPU_COUNT(&others) > 0 && ::sched_setaffinity(run.init, sizeof others, &others) == 0;
}

// Init's CPUs as the caller allowed them again, before anything of the command exists: else
// the command would run on fewer. An init that is gone already (ESRCH) left its reason on the
// socket, for supervise to report.
Status restore_cpus(const Run& run) {
    if (!run.spread || ::sched_setaffinity(run.init, sizeof *run.affinity, &*run.affinity) == 0 || errno == ESRCH)
        return {};
    return sys_error("give the jail's init back the caller's CPUs (sched_setaffinity)");
}

// Start: the cgroup, the signals, and the jail's init, which runs child_main and never returns
// here.
Status start(Run& run) {
    if (run.prepared.fallback) CORDON_TRY(enter_fallback(run, "--isolation landlock"));
    CORDON_TRY(create_cgroup(run));
    // Signals are blocked (and handled) before clone so none is lost, in either process
    // (signals 1, child.cpp).
    run.signals.emplace();
    run.sigfd.reset(::signalfd(-1, &run.signals->mask(), SFD_CLOEXEC | SFD_NONBLOCK));
    if (!run.sigfd) return sys_error("signalfd");
    std::optional<Premounts> premounts;
    if (!run.fallback) {
        auto made = make_premounts(run);
        if (!made) return made.error();
        if (*made) premounts.emplace(std::move(**made));
    }
    const bool remap = premounts.has_value();
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return sys_error("socketpair");
    run.sync.reset(sv[0]);
    UniqueFd child_end(sv[1]);
    run.affinity = spread_affinity();
    CORDON_ASSIGN_OR_RETURN(run.init, clone_jail(run, remap));
    if (run.init == 0) {
        // The child keeps the signals blocked with their handlers (signals 2, child.cpp).
        run.sync.reset();
        const bool ns = !run.fallback;
        child_main(ChildContext{&run.spec, &run.prepared, child_end.get(), run.late_cgroupns, remap && ns,
                                remap && ns ? &premounts->fds() : nullptr, ns ? nullptr : &*run.fallback,
                                ns ? nullptr : &run.fallback_env});
    }
    start_elsewhere(run);
    return {};  // the child has its copies of CHILD_END and the premounts
}

// --- admit --------------------------------------------------------------------------------------

// Another run may be removing a placeholder we need (it holds its lock for a moment), or a
// stranger may hold one: wait, but a signal to cordon ends the wait, and the run, at once
// (signals 2, child.cpp). False: a signal came, and supervise ends the run when it reads it.
Result<bool> acquire_placeholders(Run& run) {
    bool noted_wait = false;
    auto wait = [&](const std::string& path, int waited_ms) {
        if (waited_ms >= 1000 && !noted_wait) {
            noted_wait = true;
            diag::note("waiting for {}, locked by another process", path);
        }
        struct pollfd pfd = {run.sigfd.get(), POLLIN, 0};
        return ::poll(&pfd, 1, std::min(2 + waited_ms / 8, 50)) == 0;
    };
    auto held = Placeholders::acquire(run.prepared.mounts.placeholders, wait);
    if (!held) {
        if (held.error().err != EINTR) return held.error();
        return false;
    }
    run.placeholders = std::move(*held);
    return true;
}

// Proceed, unless a signal is already waiting: a signal before the command starts ends the run
// (signals 3, child.cpp), and nothing of the command should start first. A child that failed
// meanwhile has left its SetupError on the socket: supervise reads it.
void proceed(const Run& run) {
    sigset_t pending;
    sigemptyset(&pending);
    ::sigpending(&pending);
    for (int sig : kSupervisedSignals) {
        if (sig != SIGCHLD && sigismember(&pending, sig)) return;
    }
    char proceed = 1;
    (void)::send(run.sync.get(), &proceed, 1, MSG_NOSIGNAL);
}

// Admit: the child builds the jail meanwhile. It cannot start the command before it has the
// word to proceed, which comes once the gate allowed the run and the placeholders exist, and
// they are not created for a run the gate stops (its outcome goes to FACTS).
Status admit(Run& run, const std::function<std::optional<Outcome>()>& gate, RunFacts& facts) {
    // The child writes its own uid/gid maps. Without CLONE_INTO_CGROUP it waits for us to move
    // it into the jail's cgroup first.
    if (run.late_cgroupns) {
        CORDON_TRY(run.cgroup->join(run.init));
        char go = 1;
        if (::send(run.sync.get(), &go, 1, MSG_NOSIGNAL) != 1) return sys_error("start the jail");
    }
    if (gate) {
        facts.gate_stop = gate();
        if (facts.gate_stop) return {};
    }
    // The workdir as it is before the command, read while the child builds the jail; the
    // placeholders made next count as the run's (leftovers.hpp).
    if (run.spec.workdir && (!run.spec.workdir_readonly || written_through_binds(run.spec, *run.spec.workdir)))
        run.repos = RepoWatch::start(*run.spec.workdir);
    // The Landlock jail has no mounts: its protected paths are rules that grant nothing there.
    bool ready = true;
    if (!run.fallback) {
        CORDON_ASSIGN_OR_RETURN(ready, acquire_placeholders(run));
    }
    if (ready && run.fallback && run.spec.workdir) {
        run.judge = ProtectedJudge::before(*run.spec.workdir, run.fallback->judged);
        if (run.repos) run.repos->own_protections_writable();
    }
    if (ready && run.repos) run.repos->before_command();
    if (ready) CORDON_TRY(restore_cpus(run));
    if (ready) proceed(run);
    return {};
}

// --- the end ------------------------------------------------------------------------------------

// A run that ends before supervise, or in it with an error: the jail goes at once.
void end_jail(Run& run) {
    if (run.init > 0) {
        ::kill(run.init, SIGKILL);
        ::waitpid(run.init, nullptr, 0);
    }
    run.signals.reset();
}

// What the jail used: init's rusage (that of everything it reaped), or better the cgroup's,
// the whole tree's CPU time and peak memory, and its OOM kills. The cgroup goes here.
void measure(Run& run, RunFacts& facts) {
    struct rusage ru {};
    if (::getrusage(RUSAGE_CHILDREN, &ru) == 0) {
        facts.cpu_ms = static_cast<uint64_t>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
                       static_cast<uint64_t>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
        facts.peak_memory_bytes = static_cast<uint64_t>(ru.ru_maxrss) * 1024;
    }
    if (run.cgroup) {
        run.cgroup->kill_all();
        CgroupStats st = run.cgroup->stats();
        if (st.have_cpu) facts.cpu_ms = st.cpu_usec / 1000;
        if (st.peak_memory) facts.peak_memory_bytes = st.peak_memory;
        facts.oom_kills = st.oom_kills;
        run.cgroup.reset();
    }
}

// What the run left in the workdir that the host's git would run or follow, moved aside: each
// on one line, also under -q (it changed the user's files), and in --status-json; past the
// bounds (cordon(1), BOUNDS) counted, since the jail can leave any number of them.
void judge_leftovers(Run& run, const RunFacts& facts, Outcome& out) {
    if (!facts.started) {
        if (run.repos) run.repos->cancel();
        return;
    }
    std::vector<Quarantined> found;
    if (run.repos) found = run.repos->finish();
    if (run.judge) {
        std::vector<Quarantined> more = run.judge->after();
        found.insert(found.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    }
    BoundedRecords kept;
    LineBudget lines;
    for (const Quarantined& q : found) {
        kept.add(quarantined_json(q));
        if (!lines.take()) continue;
        std::string what = q.moved_to.empty() ? "" : "; moved to " + q.moved_to;
        if (q.restored) what += ", and the file from before the run put back";
        diag::line(diag::Show::Always,
                   "warning: {}, left by the command, {}{} (cordon(1), WHAT THE JAIL MAY LEAVE BEHIND)", q.path, q.why,
                   what);
    }
    out.quarantined = kept.kept();
    out.quarantined_dropped = kept.dropped();
    if (run.repos) out.repo_watch = run.repos->judged_by();
    if (lines.held() > 0) {
        diag::line(diag::Show::Always, "warning: ... and {} more left by the command, moved aside likewise",
                   lines.held());
    }
}

void report_oom(const Outcome& out, const Run& run) {
    if (out.oom_kills == 0) return;
    const auto& memory = run.spec.limits.memory;
    std::string limit = memory ? format_size(*memory) : std::string("?");
    if (out.reason == Outcome::Reason::Oom) {
        diag::line(diag::Show::Normal, "oom: the command was killed by the OOM killer: the jail reached --memory {}",
                   limit);
    } else {
        diag::note("oom: the OOM killer ended {} process(es) in the jail (--memory {})", out.oom_kills, limit);
    }
}

}  // namespace

Outcome run_jail(const Spec& spec, const Prepared& prepared, const SupervisorOptions& options,
                 const std::function<std::optional<Outcome>()>& gate, const ExecGate& exec_gate) {
    Run run(spec, prepared, options);
    if (prepared.exec_checks) run.exec_gate = &exec_gate;
    if (!spec.allow_hosts.empty()) run.net = std::make_unique<NetFilter>(spec, options.audit_fd);
    if (!spec.ssh_agent_hosts.empty()) run.agent = std::make_unique<SshAgentRelay>(spec, options.audit_fd);
    print_notes(run);
    RunFacts facts;
    Status status = start(run);
    if (status) status = admit(run, gate, facts);
    const bool admitted = status && !facts.gate_stop;
    if (admitted) status = supervisor::supervise(run, facts);
    if (!status || facts.gate_stop) end_jail(run);
    if (run.fallback) end_orphans();
    if (run.net) {
        NetRefusals refused = run.net->stop();
        facts.net_denials = std::move(refused.records);
        facts.net_denials_dropped = refused.dropped;
    }
    if (run.agent) {
        NetRefusals refused = run.agent->stop();
        facts.net_denials.insert(facts.net_denials.end(), refused.records.begin(), refused.records.end());
        facts.net_denials_dropped += refused.dropped;
    }
    facts.wall_ms = ms_since(run.t0);
    if (!status)
        facts.setup_failure = std::move(status.error());
    else if (admitted)
        measure(run, facts);
    Outcome out = classify(facts);
    out.isolation = run.fallback ? "landlock" : "namespaces";
    if (run.fallback) out.dropped = run.fallback->dropped;
    judge_leftovers(run, facts, out);
    // What --limits best-effort left out, as the warnings said it (planned, then at creation).
    for (const auto& w : prepared.warnings) {
        if (const size_t at = w.find(kNotApplied); at != std::string::npos)
            out.limits_not_applied.push_back(w.substr(0, at) + ": " + w.substr(at + kNotApplied.size()));
    }
    for (auto& d : run.limits_dropped) out.limits_not_applied.push_back(std::move(d));
    report_oom(out, run);
    return out;
}

}  // namespace cordon

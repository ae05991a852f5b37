// The supervisor: the parent process. It prepares everything before clone, creates the
// namespaces (the child writes its own id maps), makes the placeholders, then runs one poll
// loop over the child's sync socket, a signalfd and the timeout timer until the jail's init
// is gone.
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>

#include "cordon/cgroup.hpp"
#include "cordon/fd.hpp"
#include "cordon/jail.hpp"
#include "cordon/placeholders.hpp"
#include "cordon/root_remap.hpp"

namespace cordon {

namespace {

constexpr int kSupervisedSignals[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

void ignore_signal(int) {}

// For the supervisor's lifetime around the jail: its signals are blocked (read from a signalfd)
// and have a do-nothing handler. The handler is for the child: clone keeps dispositions, and as
// pid 1 of its namespace the child would silently drop any signal still at SIG_DFL, such as a
// Ctrl-C or a relayed SIGTERM that arrives before it installs its own.
class SupervisedSignals final {
public:
    SupervisedSignals() {
        sigemptyset(&mask_);
        for (int sig : kSupervisedSignals) sigaddset(&mask_, sig);
        forwarded_ = mask_;
        sigdelset(&forwarded_, SIGCHLD);
        ::sigprocmask(SIG_BLOCK, &mask_, &old_mask_);
        struct sigaction sa {};
        sa.sa_handler = ignore_signal;
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < std::size(kSupervisedSignals); ++i) {
            ::sigaction(kSupervisedSignals[i], &sa, &old_actions_[i]);
        }
    }
    SupervisedSignals(const SupervisedSignals&) = delete;
    SupervisedSignals& operator=(const SupervisedSignals&) = delete;
    ~SupervisedSignals() {
        for (size_t i = 0; i < std::size(kSupervisedSignals); ++i) {
            ::sigaction(kSupervisedSignals[i], &old_actions_[i], nullptr);
        }
        ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
    }
    [[nodiscard]] const sigset_t& mask() const { return mask_; }
    [[nodiscard]] const sigset_t& forwarded() const { return forwarded_; }  // all but SIGCHLD

private:
    sigset_t mask_{}, forwarded_{}, old_mask_{};
    struct sigaction old_actions_[std::size(kSupervisedSignals)]{};
};
constexpr uint64_t kKillGraceMs = 3000;  // after --timeout's SIGTERM, before SIGKILL

const char* kUsernsHint =
    "cordon needs unprivileged user namespaces. Check: sysctl user.max_user_namespaces (must be > 0), "
    "kernel.unprivileged_userns_clone=1 (Debian < 11), and on Ubuntu >= 23.10 "
    "kernel.apparmor_restrict_unprivileged_userns: install cordon's AppArmor profile "
    "(packaging/apparmor/usr.bin.cordon). Inside a container, the container must allow namespaces.";

Error clone_error(int err) {
    Error e = sys_error("cannot create the jail's namespaces (clone)", err);
    if (err == EPERM || err == EACCES)
        e.hint = kUsernsHint;
    else if (err == ENOSPC || err == EUSERS)
        e.hint = "a namespace limit is exhausted or 0: sysctl user.max_user_namespaces";
    else if (err == EINVAL)
        e.hint = "this kernel lacks a namespace type cordon needs (user, mount, pid, net, ipc, uts, cgroup)";
    return e;
}

Error setup_error(const ChildMsg& m) {
    Error e = sys_error(std::string("jail setup failed: ") + m.text, m.err);
    if (m.err == EPERM || m.err == EACCES) {
        e.hint =
            "the kernel refused a namespace operation; if user namespaces are restricted (AppArmor, "
            "SELinux, a container's seccomp policy) see 'cordon doctor' and the README";
    }
    if (m.err == ENOSYS) e.hint = "cordon needs Linux >= 5.12 (openat2, open_tree, move_mount, mount_setattr)";
    if (std::strncmp(m.text, "write /proc/self/", 17) == 0) e.hint = kUsernsHint;
    return e;
}

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

void arm(int tfd, uint64_t ms) {
    struct itimerspec its {};
    its.it_value.tv_sec = static_cast<time_t>(ms / 1000);
    its.it_value.tv_nsec = static_cast<long>((ms % 1000) * 1000000);
    ::timerfd_settime(tfd, 0, &its, nullptr);
}

}  // namespace

Result<Prepared> prepare(const Spec& spec) {
    Prepared p;
    auto plan = plan_mounts(spec, real_host_fs());
    if (!plan) return plan.error();
    p.mounts = std::move(*plan);
    // The default syscall policy's program was compiled when cordon was built: it is taken as
    // it is (its rules are made only when they are shown, for --dry-run).
    p.seccomp_options = SeccompOptions{spec.allow_userns, spec.allow_ptrace, spec.share_net};
    if (auto pre = precompiled_default_seccomp(p.seccomp_options); spec.seccomp == "default" && !pre.empty()) {
        p.seccomp.name = "default";
        p.bpf.assign(pre.begin(), pre.end());
    } else {
        auto policy = load_seccomp(spec.seccomp, p.seccomp_options);
        if (!policy) return policy.error();
        p.seccomp = std::move(*policy);
        auto bpf = compile_seccomp(p.seccomp);
        if (!bpf) return bpf.error();
        p.bpf = std::move(*bpf);
    }
    p.landlock =
        plan_landlock(spec, p.mounts, landlock_abi(), spec.allow_userns && seccomp_allows_mounts(seccomp_rules(p)));
    p.clone_flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
    if (!spec.share_net) p.clone_flags |= CLONE_NEWNET;
    // Limits: decided here, read-only, so a limit that cannot be applied fails before anything
    // is created; the supervisor creates the cgroup just before clone.
    if (spec.limits.any()) {
        p.cgroup_host = discover_cgroups();
        auto cg = plan_cgroup(spec.limits, p.cgroup_host, p.warnings);
        if (!cg) return cg.error();
        p.cgroup = std::move(*cg);
    }
    return p;
}

std::vector<SyscallRule> seccomp_rules(const Prepared& prepared) {
    if (prepared.seccomp.name == "default" && prepared.seccomp.rules.empty()) {
        return default_seccomp(prepared.seccomp_options).rules;
    }
    return prepared.seccomp.rules;
}

Outcome run_jail(const Spec& spec, const Prepared& prepared, const SupervisorOptions& options,
                 const std::function<std::optional<Outcome>()>& gate) {
    Outcome out;
    auto t0 = std::chrono::steady_clock::now();
    auto fail = [&](Error e) {
        out.reason = Outcome::Reason::SetupError;
        out.exit_code = 125;
        out.error = std::move(e);
        out.wall_ms = ms_since(t0);
        return out;
    };

    // Placeholders are made or joined once the child is building the jail (it waits for them
    // only at their own mounts), and released when run_jail returns, after the cgroup is gone.
    Placeholders placeholders;

    if (options.verbosity >= 0) {
        for (const auto& n : prepared.mounts.notes) std::fprintf(stderr, "cordon: note: %s\n", n.c_str());
        for (const auto& w : prepared.warnings) std::fprintf(stderr, "cordon: warning: %s\n", w.c_str());
    }
    // The run's cgroup exists before the child does, so the child starts inside it. Declared
    // after the placeholders: it is destroyed (tree killed, directories removed) first.
    std::unique_ptr<RunCgroup> cgroup;
    if (prepared.cgroup) {
        auto cg = RunCgroup::create(*prepared.cgroup, spec.limits, prepared.cgroup_host);
        if (cg) {
            cgroup = std::move(*cg);
        } else if (!spec.limits.best_effort) {
            return fail(cg.error());
        } else if (options.verbosity >= 0) {
            const Error& e = cg.error();
            std::fprintf(stderr, "cordon: warning: limits not applied (--limits best-effort): %s: %s%s%s\n",
                         e.what.c_str(), e.why.c_str(), e.err ? ": " : "", e.err ? std::strerror(e.err) : "");
        }
    }

    // Signals are blocked (and handled) before clone so none is lost, in either process.
    std::optional<SupervisedSignals> signals(std::in_place);
    UniqueFd sigfd(::signalfd(-1, &signals->mask(), SFD_CLOEXEC | SFD_NONBLOCK));
    if (!sigfd) return fail(sys_error("signalfd"));

    // A root caller's jail runs as kRootJailId, not as host root, wherever the caller's trees can
    // be idmapped; elsewhere it is the classic jail, whose uid 0 is the host's (cordon(1), ROOT
    // CALLERS). The child is cloned with kRootJailId as our effective ids, so that it owns its
    // user namespace and maps those ids itself, with no round trip. The kernel checks a cgroup
    // move against those ids too: with limits, the child starts outside its cgroup and we move it.
    std::optional<Premounts> premounts;
    if (spec.host_uid == 0) {
        auto p = Premounts::make(spec, prepared.mounts);
        if (p) {
            premounts.emplace(std::move(*p));
        } else if (options.verbosity > 0) {
            std::fprintf(stderr, "cordon: note: %s; the jail runs as host root (cordon(1), ROOT CALLERS)\n",
                         p.error().message().substr(8).c_str());
        }
    }
    const bool remap = premounts.has_value();
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return fail(sys_error("socketpair"));
    UniqueFd sync(sv[0]);
    UniqueFd child_end(sv[1]);
    bool late_cgroupns = false;
    pid_t init = -1;
    if (remap) {
        const long id = kRootJailId;
        if (::setgroups(0, nullptr) != 0 || ::syscall(SYS_setresgid, -1L, id, -1L) != 0 ||
            ::syscall(SYS_setresuid, -1L, id, -1L) != 0) {
            return fail(sys_error("take the jail's ids to start it"));
        }
        int flags = prepared.clone_flags;
        if (cgroup) {
            late_cgroupns = true;
            flags &= ~CLONE_NEWCGROUP;
        }
        init = spawn_init(flags, -1, late_cgroupns);
        const int clone_err = errno;
        // Root again (and dumpable again: changing ids made us not).
        if (init != 0 && (::syscall(SYS_setresuid, -1L, 0L, -1L) != 0 || ::syscall(SYS_setresgid, -1L, 0L, -1L) != 0 ||
                          ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)) {
            if (init > 0) ::kill(init, SIGKILL);
            return fail(sys_error("take back root's ids"));
        }
        errno = clone_err;
    } else {
        init = spawn_init(prepared.clone_flags, cgroup ? cgroup->jail_fd() : -1, late_cgroupns);
    }
    if (init < 0) return fail(clone_error(errno));
    if (init == 0) {
        // The child keeps the signals blocked with their handlers and reads them later from its
        // own signalfd, so a Ctrl-C during setup is not lost.
        sync.reset();
        child_main(
            ChildContext{&spec, &prepared, child_end.get(), late_cgroupns, remap, remap ? &premounts->fds() : nullptr});
    }
    child_end.reset();
    premounts.reset();  // the child has its copies

    auto abort_child = [&](Error e) {
        ::kill(init, SIGKILL);
        ::waitpid(init, nullptr, 0);
        signals.reset();
        return fail(std::move(e));
    };
    // The child writes its own uid/gid maps. Without CLONE_INTO_CGROUP it waits for us to move
    // it into the jail's cgroup first.
    if (late_cgroupns) {
        if (auto s = cgroup->join(init); !s) return abort_child(s.error());
        char go = 1;
        if (::send(sync.get(), &go, 1, MSG_NOSIGNAL) != 1) return abort_child(sys_error("start the jail"));
    }
    // The child builds the jail meanwhile; it cannot start the command before the placeholders
    // below are ready, and they are not created for a run the gate stops.
    if (gate) {
        if (std::optional<Outcome> stop = gate()) {
            ::kill(init, SIGKILL);
            ::waitpid(init, nullptr, 0);
            signals.reset();
            stop->wall_ms = ms_since(t0);
            return std::move(*stop);
        }
    }
    // Another run may be removing a placeholder we need (it holds its lock for a moment), or
    // a stranger may hold one: wait, but a signal to cordon ends the wait, and the run, at once.
    bool noted_wait = false;
    auto wait = [&](const std::string& path, int waited_ms) {
        if (waited_ms >= 1000 && !noted_wait && options.verbosity >= 0) {
            noted_wait = true;
            std::fprintf(stderr, "cordon: note: waiting for %s, locked by another process\n", path.c_str());
        }
        struct pollfd pfd = {sigfd.get(), POLLIN, 0};
        return ::poll(&pfd, 1, std::min(2 + waited_ms / 8, 50)) == 0;
    };
    bool ready = true;
    if (auto s = placeholders.acquire(prepared.mounts.placeholders, wait); !s) {
        if (s.error().err != EINTR) return abort_child(s.error());
        ready = false;  // a signal came: the loop below reads it and ends the run
    }
    // Proceed, unless a signal is already waiting: a signal before the command starts ends the
    // run (the loop below), and nothing of the command should start first. A child that failed
    // meanwhile has left its SetupError on the socket: the loop reads it.
    sigset_t pending;
    sigemptyset(&pending);
    ::sigpending(&pending);
    bool signalled = false;
    for (int sig : kSupervisedSignals) signalled = signalled || (sig != SIGCHLD && sigismember(&pending, sig));
    if (ready && !signalled) {
        char proceed = 1;
        (void)::send(sync.get(), &proceed, 1, MSG_NOSIGNAL);
    }

    UniqueFd timer(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
    if (!timer) return abort_child(sys_error("timerfd_create"));
    if (spec.timeout_ms) arm(timer.get(), *spec.timeout_ms);

    bool timed_out = false, killed = false, have_exit = false, started = false;
    int interrupted = 0;  // a signal that ended the run before the command started
    int payload_status = 0;
    int init_status = 0;
    bool init_done = false;
    std::optional<Error> child_error;
    int child_error_code = 125;

    auto handle_msg = [&](const ChildMsg& m) {
        switch (m.type) {
            case ChildMsg::SetupError:
                child_error = setup_error(m);
                child_error_code = 125;
                break;
            case ChildMsg::ExecError:
                if (m.err == ENOENT || m.err == ENOTDIR) {
                    child_error =
                        Error{std::string(m.text), "command not found inside the jail", 0, {}, ErrorKind::NotFound};
                    child_error_code = 127;
                } else {
                    child_error =
                        Error{std::string(m.text), "cannot execute inside the jail", m.err, {}, ErrorKind::Denied};
                    child_error_code = 126;
                }
                break;
            case ChildMsg::Started:
                started = true;
                break;
            case ChildMsg::Exited:
                have_exit = true;
                payload_status = m.status;
                break;
        }
    };

    // Init reports Exited only once every other process of the jail is gone. From then on the
    // jail can do nothing, so cordon finishes without waiting for init's own exit (it tears
    // down the namespaces, a few hundred microseconds, and the kernel kills it with us:
    // PDEATHSIG). A cgroup must be empty before it is removed, and --status-json reports the
    // jail's CPU time from init's rusage: then init is reaped first.
    const bool reap_init = cgroup != nullptr || options.report_cpu;
    while (!init_done && !(have_exit && !reap_init)) {
        struct pollfd fds[3] = {{sync.get(), POLLIN, 0}, {sigfd.get(), POLLIN, 0}, {timer.get(), POLLIN, 0}};
        int n = ::poll(fds, 3, -1);
        if (n < 0 && errno != EINTR) break;
        if (sync && (fds[0].revents & POLLIN)) {
            ChildMsg m{};
            ssize_t r = ::recv(sync.get(), &m, sizeof m, MSG_DONTWAIT);
            if (r == static_cast<ssize_t>(sizeof m))
                handle_msg(m);
            else if (r == 0)
                sync.reset();
            // Init waits for us after Exited; when we want it reaped, closing lets it exit.
            if (have_exit && reap_init) sync.reset();
        } else if (sync && (fds[0].revents & (POLLHUP | POLLERR))) {
            sync.reset();
        }
        if (fds[1].revents & POLLIN) {
            struct signalfd_siginfo si {};
            while (::read(sigfd.get(), &si, sizeof si) == sizeof si) {
                int sig = static_cast<int>(si.ssi_signo);
                if (sig == SIGCHLD) {
                    if (::waitpid(init, &init_status, WNOHANG) == init) init_done = true;
                    continue;
                }
                // Before the command has started, any of them ends the run at once: setup may be
                // stalled (a hung filesystem, a placeholder locked by a stranger), and there is
                // no command yet to hand the signal to. The jail goes with init. The payload says
                // Started before it execs; a message already queued counts.
                if (!started && sync) {
                    ChildMsg m{};
                    while (!started &&
                           ::recv(sync.get(), &m, sizeof m, MSG_DONTWAIT) == static_cast<ssize_t>(sizeof m)) {
                        handle_msg(m);
                    }
                    if (have_exit && reap_init) sync.reset();
                }
                if (!started && !child_error && !have_exit) {
                    if (!interrupted) interrupted = sig;
                    ::kill(init, SIGKILL);
                    continue;
                }
                // kill(cordon) is relayed to the payload; terminal signals (Ctrl-C) already
                // reached it, or init, through the process group, unless it runs in its own session.
                bool from_user = si.ssi_code == SI_USER || si.ssi_code == SI_QUEUE;
                if (from_user || spec.new_session) ::kill(init, sig);
            }
        }
        if (fds[2].revents & POLLIN) {
            uint64_t ticks = 0;
            (void)::read(timer.get(), &ticks, sizeof ticks);
            if (!timed_out) {
                timed_out = true;
                ::kill(init, SIGTERM);
                arm(timer.get(), kKillGraceMs);
            } else if (!killed) {
                killed = true;
                // The whole tree at once, also what escaped init's process group.
                if (cgroup)
                    cgroup->kill_all();
                else
                    ::kill(init, SIGKILL);
            }
        }
    }
    // Messages sent just before init exited are still queued.
    if (sync) {
        ChildMsg m{};
        while (::recv(sync.get(), &m, sizeof m, MSG_DONTWAIT) == static_cast<ssize_t>(sizeof m)) handle_msg(m);
    }
    // Not reaping init: it waits on the socket and exits when cordon does, so that its
    // namespace teardown does not compete with our cleanup. The descriptor closes with us.
    if (sync && have_exit && !reap_init) (void)sync.release();
    // A signal that came with the jail's end (the same Ctrl-C that ended the payload) must not
    // kill cordon once unblocked, before it reports and cleans up.
    for (struct signalfd_siginfo si{}; ::read(sigfd.get(), &si, sizeof si) == sizeof si;) {
    }
    signals.reset();

    out.wall_ms = ms_since(t0);
    struct rusage ru {};
    if (::getrusage(RUSAGE_CHILDREN, &ru) == 0) {
        out.cpu_ms = static_cast<uint64_t>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
                     static_cast<uint64_t>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
        out.peak_memory_bytes = static_cast<uint64_t>(ru.ru_maxrss) * 1024;
    }
    // The cgroup knows better: the whole tree's CPU time and peak memory, and OOM kills.
    if (cgroup) {
        cgroup->kill_all();
        CgroupStats st = cgroup->stats();
        if (st.have_cpu) out.cpu_ms = st.cpu_usec / 1000;
        if (st.peak_memory) out.peak_memory_bytes = st.peak_memory;
        out.oom_kills = st.oom_kills;
        cgroup.reset();
    }
    if (timed_out) {
        out.reason = Outcome::Reason::Timeout;
        out.exit_code = 124;
        out.signal = have_exit && WIFSIGNALED(payload_status) ? WTERMSIG(payload_status) : (killed ? SIGKILL : SIGTERM);
    } else if (interrupted) {
        out.reason = Outcome::Reason::Signaled;
        out.signal = interrupted;
        out.exit_code = 128 + interrupted;
    } else if (child_error) {
        out.reason = child_error_code == 125 ? Outcome::Reason::SetupError : Outcome::Reason::ExecError;
        out.exit_code = child_error_code;
        out.error = child_error;
    } else if (have_exit && WIFEXITED(payload_status)) {
        out.reason = Outcome::Reason::Exited;
        out.exit_code = WEXITSTATUS(payload_status);
    } else if (have_exit && WIFSIGNALED(payload_status)) {
        out.reason = Outcome::Reason::Signaled;
        out.signal = WTERMSIG(payload_status);
        out.exit_code = 128 + out.signal;
    } else if (WIFSIGNALED(init_status)) {
        out.reason = Outcome::Reason::Signaled;
        out.signal = WTERMSIG(init_status);
        out.exit_code = 128 + out.signal;
    } else {
        out.reason = Outcome::Reason::SetupError;
        out.exit_code = 125;
        out.error = make_error("the jail's init exited without reporting the command's status",
                               started ? "after the command started" : "before the command started");
    }
    // Killed by the OOM killer: SIGKILL, or a shell's 137 for its child's SIGKILL.
    bool sigkilled = (out.reason == Outcome::Reason::Signaled && out.signal == SIGKILL) ||
                     (out.reason == Outcome::Reason::Exited && out.exit_code == 128 + SIGKILL);
    if (out.oom_kills > 0 && sigkilled) {
        out.reason = Outcome::Reason::Oom;
        out.signal = SIGKILL;
        out.exit_code = 128 + SIGKILL;
    }
    if (out.oom_kills > 0 && options.verbosity >= 0) {
        std::string limit = spec.limits.memory ? format_size(*spec.limits.memory) : std::string("?");
        if (out.reason == Outcome::Reason::Oom) {
            std::fprintf(stderr,
                         "cordon: oom: the command was killed by the OOM killer: the jail reached --memory %s\n",
                         limit.c_str());
        } else {
            std::fprintf(stderr, "cordon: note: oom: the OOM killer ended %llu process(es) in the jail (--memory %s)\n",
                         static_cast<unsigned long long>(out.oom_kills), limit.c_str());
        }
    }
    return out;
}

}  // namespace cordon

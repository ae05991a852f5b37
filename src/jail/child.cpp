// The child: pid 1 of the jail's pid namespace. It builds the jail, then stays as a tiny init
// that reaps zombies and forwards the supervisor's signals, while its child (the payload) execs
// the command. Everything here replays data prepared by the parent; errors travel back to the
// supervisor as typed ChildMsg records.
#include <fcntl.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cordon/fd.hpp"
#include "cordon/jail.hpp"
#include "cordon/paths.hpp"

namespace cordon {

namespace {

void send_msg(int fd, ChildMsg::Type type, int err, int status, const char* text) {
    ChildMsg m{};
    m.type = type;
    m.err = err;
    m.status = status;
    if (text) std::snprintf(m.text, sizeof m.text, "%s", text);
    (void)retry_eintr([&] { return ::send(fd, &m, sizeof m, MSG_NOSIGNAL); });
}

[[noreturn]] void setup_failed(int fd, const char* step) {
    send_msg(fd, ChildMsg::SetupError, errno, 0, step);
    ::_exit(125);
}

// The signals init relays from the supervisor to the payload.
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

void noop_handler(int) {}

// Around the payload's clone, init's forwarded signals are unblocked with this handler, so that
// no signal falls between "before the payload exists" and "after": one that is pending when
// clone starts makes the kernel run the handler and restart clone, and a process-group signal
// (Ctrl-C) that comes during clone reaches the new payload too. The payload, which shares
// init's memory until it execs, reads g_early: a signal noted before it took over (or by its own
// copy of the handler before it blocked them) ends it at once, as if it had come a moment later.
// Signals the supervisor sent (SI_USER from outside our namespace: pid 0) are also noted in
// g_relay, for init to pass on once clone returns; terminal ones reached the payload itself.
volatile sig_atomic_t g_early = 0;
volatile sig_atomic_t g_relay = 0;  // bit per signal number

void note_signal(int sig, siginfo_t* si, void*) {
    if (!g_early) g_early = sig;
    if (si->si_code == SI_USER && si->si_pid == 0) g_relay = g_relay | (1 << sig);
}

int bring_loopback_up() {
    UniqueFd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!s) return -1;
    struct ifreq ifr {};
    std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    if (::ioctl(s.get(), SIOCGIFFLAGS, &ifr) != 0) return -1;
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    return ::ioctl(s.get(), SIOCSIFFLAGS, &ifr);
}

bool keep_cap(const Spec& spec, int cap) {
    for (int k : spec.cap_keep) {
        if (k == cap) return true;
    }
    return false;
}

// Bounding set: everything not explicitly kept. Needs CAP_SETPCAP, so it runs before the
// capability sets are cleared.
int drop_bounding_set(const Spec& spec) {
    for (int cap = 0; cap <= CAP_LAST_CAP; ++cap) {
        if (keep_cap(spec, cap)) continue;
        if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return -1;
    }
    return 0;
}

// Init keeps no capability once the payload has started (the payload sets its own from
// PayloadPlan): every set empty, the ambient set too.
int drop_capabilities() {
    cap_t caps = ::cap_init();
    if (!caps) return -1;
    int rc = ::cap_set_proc(caps);
    ::cap_free(caps);
    if (rc != 0) return -1;
    return ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
}

const char* env_path(const Spec& spec) {
    for (const auto& kv : spec.env) {
        if (kv.rfind("PATH=", 0) == 0) return kv.c_str() + 5;
    }
    return "/usr/local/bin:/usr/bin:/bin";
}

// Everything the payload does between its start and execve, computed by init beforehand. The
// payload shares init's memory until it execs (CLONE_VM | CLONE_VFORK, as posix_spawn does:
// no page tables to copy and no copy-on-write faults), so it only reads this plan and makes
// system calls: it never allocates, and writes to memory it shares with init only in
// note_signal, before it blocks the signals.
struct PayloadPlan {
    const Spec* spec = nullptr;
    int report_fd = -1;  // close-on-exec pipe: errno on failure, EOF once the command runs
    int sync_fd = -1;    // the supervisor's socket: Started, before anything of the command runs
    std::vector<char*> argv, envp;
    std::vector<std::string> targets;  // execve candidates in order: the command, or PATH's
    bool path_search = false;
    struct __user_cap_header_struct cap_header {};
    struct __user_cap_data_struct caps[2]{};  // effective = permitted = inheritable = kept
    struct sock_fprog prog {};
    sigset_t signals{};  // kForwarded and SIGCHLD
    // The Landlock ruleset (close-on-exec) the payload enforces, or -1.
    int landlock_fd = -1;
};

PayloadPlan plan_payload(const ChildContext& ctx, int report_fd) {
    const Spec& spec = *ctx.spec;
    PayloadPlan p;
    p.spec = &spec;
    p.report_fd = report_fd;
    p.sync_fd = ctx.sync_fd;
    for (const auto& a : spec.argv) p.argv.push_back(const_cast<char*>(a.c_str()));
    p.argv.push_back(nullptr);
    for (const auto& e : spec.env) p.envp.push_back(const_cast<char*>(e.c_str()));
    p.envp.push_back(nullptr);
    const std::string& cmd = spec.argv[0];
    if (cmd.find('/') != std::string::npos) {
        p.targets.push_back(cmd);
    } else {
        p.path_search = true;
        std::string path = env_path(spec);
        for (size_t start = 0; start <= path.size();) {
            size_t end = path.find(':', start);
            if (end == std::string::npos) end = path.size();
            p.targets.push_back((end > start ? path.substr(start, end - start) : std::string(".")) + "/" + cmd);
            start = end + 1;
        }
    }
    p.cap_header.version = _LINUX_CAPABILITY_VERSION_3;
    for (int cap : spec.cap_keep) {
        auto bit = 1U << (static_cast<unsigned>(cap) % 32);
        auto& d = p.caps[cap / 32];
        d.effective |= bit;
        d.permitted |= bit;
        d.inheritable |= bit;
    }
    const auto& bpf = ctx.prepared->bpf;
    p.prog = {static_cast<unsigned short>(bpf.size()), const_cast<sock_filter*>(bpf.data())};
    return p;
}

// The payload: reset what init changed, shed every privilege, install the syscall filter as
// the very last step, exec. Only system calls from here on (see PayloadPlan).
int payload_main(void* arg) {
    const PayloadPlan& p = *static_cast<const PayloadPlan*>(arg);
    const Spec& spec = *p.spec;
    auto die = [&](int err) {
        (void)write_all(p.report_fd, &err, sizeof err);
        ::_exit(127);
    };
    // Signals: the default actions, then unblocked. One that came before (see note_signal)
    // ends us now; one pending meanwhile does so when they are unblocked.
    ::sigprocmask(SIG_BLOCK, &p.signals, nullptr);
    for (int sig : kForwarded) ::signal(sig, SIG_DFL);
    ::signal(SIGCHLD, SIG_DFL);
    const int early = g_early;
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (early) {
        ::kill(::getpid(), early);
        ::_exit(128 + early);
    }
    // From here a signal is the command's: the supervisor must know before the command can run
    // (a Ctrl-C right after its first output would otherwise find it "not started" yet, and
    // end the run instead of reaching the command). An exec failure follows as ExecError.
    send_msg(p.sync_fd, ChildMsg::Started, 0, 0, nullptr);
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) die(errno);
    if (spec.new_session && ::setsid() < 0) die(errno);
    // Only 0, 1, 2 (and our report pipe and the Landlock ruleset, close-on-exec) survive into
    // the command.
    close_fds_from(3, p.report_fd, p.landlock_fd);
    for (const auto& r : spec.rlimits) {
        struct rlimit rl {
            static_cast<rlim_t>(r.soft), static_cast<rlim_t>(r.hard)
        };
        if (::setrlimit(r.resource, &rl) != 0) die(errno);
    }
    // The kept capabilities only (none by default); ambient ones survive execve for a non-root uid.
    auto header = p.cap_header;  // the kernel may write its preferred version back
    if (::syscall(SYS_capset, &header, p.caps) != 0) die(errno);
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) die(errno);
    for (int cap : spec.cap_keep) {
        if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) != 0) die(errno);
    }
    // The Landlock domain, the payload's alone: init, outside it, is one of the processes it
    // scopes signals away from.
    if (p.landlock_fd >= 0 && enforce_landlock(p.landlock_fd) != 0) die(errno);
    // Last step before exec: the syscall filter (no_new_privs is already set).
    auto prog = p.prog;
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) die(errno);
    // execve with a PATH search inside the jail; the most telling errno wins.
    int best = ENOENT;
    for (const auto& t : p.targets) {
        ::execve(t.c_str(), p.argv.data(), p.envp.data());
        if (!p.path_search) die(errno);
        if (errno != ENOENT && errno != ENOTDIR) best = errno;
    }
    die(best);
    return 127;
}

// The supervisor removes the placeholders once it reads Exited. One still mounted on here makes
// its removal detach that mount from this namespace, an RCU grace period apiece; detaching the
// trees that hold them at once costs one. It is done before Exited is sent: done alongside, the
// supervisor's removals often came first (measured: 0.12-0.19 ms slower per run).
// Init also keeps each placeholder open until it exits, after cordon: removing a directory frees
// its disk block, and on a file system mounted with discard that waits for the disk (about
// 0.1 ms each, measured on ext4); an inode still open is freed by its last holder instead.
void detach_placeholder_mounts(const ChildContext& ctx) {
    const Spec& spec = *ctx.spec;
    std::vector<std::string> roots;
    for (const auto& ph : ctx.prepared->mounts.placeholders) {
        (void)::open(ph.path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);  // held until init exits
        std::string best;
        auto consider = [&](const std::string& r) {
            // A writable "/" does not count: its placeholders are detached one by one.
            if (r.size() > best.size() && r != "/" && path_under(ph.path, r)) best = r;
        };
        if (spec.workdir) consider(*spec.workdir);
        for (const auto& r : spec.rw) consider(r);
        if (best.empty()) best = ph.path;
        if (std::find(roots.begin(), roots.end(), best) == roots.end()) roots.push_back(best);
    }
    for (const auto& r : roots) (void)::umount2(r.c_str(), MNT_DETACH);
}

}  // namespace

[[noreturn]] void child_main(const ChildContext& ctx) {
    const Spec& spec = *ctx.spec;
    const int sync = ctx.sync_fd;
    // 0. As pid 1 we only ever receive signals we handle. The supervisor's mask (inherited)
    //    keeps them blocked; with handlers in place they stay pending until step 7, where
    //    they end the run before the command starts.
    for (int sig : kForwarded) ::signal(sig, noop_handler);
    ::signal(SIGCHLD, noop_handler);
    // 1. Die with the supervisor. It may already be gone: then the socket is at EOF below.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) setup_failed(sync, "set the parent-death signal");
    // 2. Nothing inherited beyond stdio and the sync socket reaches the jail (the supervisor's
    //    ready-made mounts, if any, are closed once attached, after step 4).
    static const std::vector<int> kNone;
    const std::vector<int>& premounts = ctx.premounts ? *ctx.premounts : kNone;
    auto close_inherited = [&] {
        if (sync > 3) ::close_range(3, static_cast<unsigned>(sync) - 1, 0);
        ::close_range(static_cast<unsigned>(sync) + 1, ~0U, 0);
    };
    if (premounts.empty()) close_inherited();
    //    Cloned with other effective ids than the supervisor's real ones (a remapped root
    //    caller's jail), our memory started non-dumpable, and /proc/self root's: dumpable again
    //    to write our maps (step 6 makes init non-dumpable for good).
    if (ctx.remap && ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) setup_failed(sync, "make init dumpable for its maps");
    // 3. Our ids. A process may write the single-line maps of a user namespace it has just
    //    created (its own ids, or 0 for them), while it still holds its capabilities there: no
    //    round trip to the supervisor. Should the supervisor be gone already (before step 1),
    //    the "proceed" it never sends stops us before anything of the command runs.
    {
        char what[96];
        const std::pair<const char*, std::string> maps[] = {
            {"/proc/self/setgroups", "deny"},
            {"/proc/self/uid_map", format_id_map(uid_maps(spec, ctx.remap))},
            {"/proc/self/gid_map", format_id_map(gid_maps(spec, ctx.remap))},
        };
        for (const auto& [file, data] : maps) {
            if (!write_file(file, data)) {
                std::snprintf(what, sizeof what, "write %s (%s)", file, data.substr(0, data.find('\n')).c_str());
                setup_failed(sync, what);
            }
        }
    }
    //    A remapped root caller's jail: only our effective ids were kRootJailId; now all of them
    //    are, so nothing of ours is host root any more (not the real uid either). The parent-death
    //    signal is set again, should the kernel have cleared it with the change of ids.
    if (ctx.remap) {
        if (::syscall(SYS_setresgid, spec.gid, spec.gid, spec.gid) != 0 ||
            ::syscall(SYS_setresuid, spec.uid, spec.uid, spec.uid) != 0) {
            setup_failed(sync, "take the jail's ids");
        }
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) setup_failed(sync, "set the parent-death signal");
    }
    //    Without CLONE_INTO_CGROUP, wait until the supervisor has moved us into the jail's
    //    cgroup: it becomes the root of our cgroup namespace before anything of the payload exists.
    if (ctx.late_cgroupns) {
        char go = 0;
        if (retry_eintr([&] { return ::recv(sync, &go, 1, 0); }) != 1) ::_exit(125);
        if (::unshare(CLONE_NEWCGROUP) != 0) setup_failed(sync, "create the cgroup namespace");
    }
    // 4. The filesystem. Needs CAP_SYS_ADMIN in our user namespace, which we hold until step 8.
    char step[256] = "";
    bool proceeded = false;
    const bool jail_is_host_root = spec.host_uid == 0 && !ctx.remap;
    if (apply_mounts(spec, ctx.prepared->mounts, premounts, jail_is_host_root, sync, proceeded, step, sizeof step) !=
        0) {
        setup_failed(sync, step);
    }
    if (!premounts.empty()) close_inherited();
    // 5. Identity and network namespace contents.
    if (spec.hostname && ::sethostname(spec.hostname->c_str(), spec.hostname->size()) != 0) {
        setup_failed(sync, "set the hostname");
    }
    if (!spec.share_net && bring_loopback_up() != 0) setup_failed(sync, "bring up the loopback interface");
    // The caller's directory may not exist in the jail (--no-profile, a directory outside every
    // exposed path): like bwrap, fall back to HOME, then /. An explicit --chdir must work.
    if (::chdir(spec.chdir.c_str()) != 0 &&
        (spec.chdir_explicit || (::chdir(spec.home.c_str()) != 0 && ::chdir("/") != 0))) {
        std::snprintf(step, sizeof step, "change to directory %s inside the jail", spec.chdir.c_str());
        setup_failed(sync, step);
    }
    //    The Landlock ruleset, named in the jail's own terms now that its root is in place; the
    //    payload enforces it.
    int landlock = -1;
    if (build_landlock_ruleset(ctx.prepared->landlock, landlock, step, sizeof step) != 0) setup_failed(sync, step);
    // 6. Privileges: no way back up for init or anything it starts. Init is not dumpable, so
    //    the payload (same uid) cannot ptrace it or read its memory through /proc.
    if (drop_bounding_set(spec) != 0) setup_failed(sync, "drop the capability bounding set");
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) setup_failed(sync, "set no_new_privs");
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) setup_failed(sync, "make init non-dumpable");
    //    The supervisor's word that the command may run (the command policy is checked while
    //    we build) and that its placeholders exist, unless a placeholder mount already read it.
    if (!proceeded && !wait_proceed(sync)) ::_exit(125);
    // 7. The payload's plan, made before the signal check below so that nothing but the
    //    clone separates that check from the payload's existence.
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0) setup_failed(sync, "create a pipe");
    PayloadPlan plan = plan_payload(ctx, report[1]);
    plan.landlock_fd = landlock;
    constexpr size_t kStack = size_t{64} * 1024;
    void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) setup_failed(sync, "allocate the payload's stack");
    //    Signals: as pid 1 we only receive signals we handle. They stay blocked (the
    //    supervisor's mask) and are read from a signalfd, except around the payload's clone.
    sigset_t& mask = plan.signals;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    for (int sig : kForwarded) sigaddset(&mask, sig);
    sigset_t forwarded;
    sigemptyset(&forwarded);
    for (int sig : kForwarded) sigaddset(&forwarded, sig);
    ::sigprocmask(SIG_BLOCK, &mask, nullptr);
    UniqueFd sigfd(::signalfd(-1, &mask, SFD_CLOEXEC));
    if (!sigfd) setup_failed(sync, "create a signalfd");
    struct sigaction note {};
    note.sa_sigaction = note_signal;
    note.sa_flags = SA_SIGINFO;
    note.sa_mask = mask;
    for (int sig : kForwarded) ::sigaction(sig, &note, nullptr);
    ::sigprocmask(SIG_UNBLOCK, &forwarded, nullptr);
    // A signal that arrived during setup (Ctrl-C, kill) never reached a payload: it ends the
    // run now, as if the payload had been killed by it.
    if (g_early) {
        ::sigprocmask(SIG_BLOCK, &forwarded, nullptr);
        send_msg(sync, ChildMsg::Exited, 0, g_early, nullptr);  // wait status "killed by sig"
        ::_exit(0);
    }
    // 8. The payload. Exec failure comes back over a close-on-exec pipe; EOF means it ran.
    // Init sleeps until the payload has exec'd or failed (CLONE_VFORK).
    pid_t payload = ::clone(payload_main, static_cast<char*>(stack) + kStack, CLONE_VM | CLONE_VFORK | SIGCHLD, &plan);
    ::sigprocmask(SIG_BLOCK, &forwarded, nullptr);
    if (payload < 0) setup_failed(sync, "start the payload");
    // What the supervisor sent while the payload was starting is the payload's now.
    for (int sig : kForwarded) {
        if (g_relay & (1 << sig)) ::kill(payload, sig);
    }
    ::munmap(stack, kStack);
    ::close(report[1]);
    if (landlock >= 0) ::close(landlock);
    if (drop_capabilities() != 0) setup_failed(sync, "drop init's capabilities");
    int exec_err = 0;
    ssize_t n = retry_eintr([&] { return ::read(report[0], &exec_err, sizeof exec_err); });
    ::close(report[0]);
    if (n == static_cast<ssize_t>(sizeof exec_err))
        send_msg(sync, ChildMsg::ExecError, exec_err, 0, spec.argv[0].c_str());
    // 9. Init: reap everything, relay the supervisor's signals, report the payload's end.
    for (;;) {
        struct signalfd_siginfo si {};
        if (retry_eintr([&] { return ::read(sigfd.get(), &si, sizeof si); }) != sizeof si) continue;
        if (si.ssi_signo == SIGCHLD) {
            int status = 0;
            pid_t pid = 0;
            while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
                if (pid == payload) {
                    // The command is over and so is the jail: end whatever it left behind and
                    // reap it all (orphans are ours), so that once the supervisor reads Exited
                    // nothing in the jail can act any more, and it need not wait for our own
                    // exit, which tears down the namespaces and is slow.
                    ::kill(-1, SIGKILL);
                    for (;;) {
                        pid_t r = ::waitpid(-1, nullptr, 0);
                        if (r < 0 && errno != EINTR) break;
                    }
                    detach_placeholder_mounts(ctx);
                    send_msg(sync, ChildMsg::Exited, 0, status, nullptr);
                    // Our exit tears down the namespaces, a few hundred microseconds of kernel
                    // work: let the supervisor finish first. It closes the socket when it wants
                    // us gone, or exits, and then PDEATHSIG ends us.
                    char byte = 0;
                    while (::recv(sync, &byte, 1, 0) > 0) {
                    }
                    ::_exit(0);
                }
            }
            continue;
        }
        // Relay only what the supervisor sent (from outside our pid namespace: pid 0).
        // Terminal-generated signals (SI_KERNEL) already reached the payload's process group.
        if (si.ssi_code == SI_USER && si.ssi_pid == 0) ::kill(payload, static_cast<int>(si.ssi_signo));
    }
}

}  // namespace cordon

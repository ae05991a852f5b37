// The child: pid 1 of the jail's pid namespace, "init". child_main is its step list: it builds
// the jail, starts the payload (the process that execs the command) and then stays as a tiny
// init that reaps zombies and relays the supervisor's signals. Everything here replays data
// prepared by the supervisor; errors travel back to it as typed ChildMsg records. Each function
// says which process runs it: init, or the payload (payload_main, until it execs).
//
// Signals, in order (S: the supervisor, supervisor.cpp; I: init; P: the payload). The code
// that does a step points here as "signals N".
//  1. S, before clone: blocks SIGCHLD and the relayed signals (INT TERM HUP QUIT USR1 USR2),
//     reads them from a signalfd, and gives them a do-nothing handler. I inherits mask and
//     handlers: as pid 1 of its namespace, it would silently drop a signal still at SIG_DFL.
//  2. I, while it builds the jail: keeps them blocked, with handlers (hold_signals); whatever
//     comes stays pending. S meanwhile: a signal ends its wait for a locked placeholder, and
//     one already pending keeps it from sending the word to proceed.
//  3. S, until P has said Started: any of them ends the run at once as 128+N (unless the child
//     has already reported a failure or the end): S kills I with SIGKILL, and the jail goes
//     with it. There is no command yet to hand the signal to, and setup may be stalled.
//  4. I, just before P's clone: reads SIGCHLD and the relayed signals from a signalfd of its
//     own, and unblocks the relayed ones with note_signal around the clone, so that none falls
//     between "before P exists" and "after" (watch_signals). One pending since setup ends the
//     run there, reported as P killed by it (end_if_signalled_during_setup); one that comes
//     during clone makes the kernel restart it, or from the process group (Ctrl-C) reaches P
//     too; one S sent is also noted, for I to relay.
//  5. P (payload_main): blocks them, resets them to SIG_DFL, unblocks them; one noted before
//     kills P with it at once. Then Started tells S that a signal is the command's now.
//  6. I, once clone returns (start_payload): blocks them again and relays to P what S sent
//     during the clone.
//  7. S, after Started: relays to I what was sent to cordon itself (kill: SI_USER, SI_QUEUE),
//     and everything under --new-session; terminal signals (Ctrl-C) reached I and P through the
//     process group already. --timeout: SIGTERM to I, after a grace period SIGKILL to the
//     cgroup's tree (or to I).
//  8. I (run_init): relays to P only what S sent (SI_USER from pid 0, outside I's namespace);
//     SIGCHLD reaps. At P's end, I kills what is left, reaps it, and reports Exited.
//  9. S at the end: reads away what is left on its signalfd (the Ctrl-C that ended P must not
//     kill cordon, once unblocked, before it reports and cleans up), then restores its mask
//     and handlers.
#include <dirent.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "child_setup.hpp"
#include "cordon/fd.hpp"
#include "cordon/jail.hpp"
#include "cordon/kernel_steps.hpp"
#include "fs/layer_probe.hpp"

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

}  // namespace

namespace init {

[[noreturn]] void setup_failed(int fd, const char* step) {
    send_msg(fd, ChildMsg::SetupError, errno, 0, step);
    ::_exit(125);
}

}  // namespace init

namespace {

using namespace init;

// The signals init relays from the supervisor to the payload.
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

void noop_handler(int) {}

// Signals 4-6: the handler of the relayed signals around the payload's clone. The payload,
// which shares init's memory until it execs, reads g_early: a signal noted before it took over
// (or by its own copy of the handler before it blocked them) ends it at once, as if it had come
// a moment later. Signals the supervisor sent (SI_USER from outside our namespace: pid 0) are
// also noted in g_relay, for init to pass on once clone returns; terminal ones reached the
// payload itself.
volatile sig_atomic_t g_early = 0;
volatile sig_atomic_t g_relay = 0;  // bit per signal number
// The supervisor's pid as init sees it: 0 from outside our pid namespace, its own pid in a
// Landlock jail, which has none.
pid_t g_supervisor = 0;

void note_signal(int sig, siginfo_t* si, void*) {
    if (!g_early) g_early = sig;
    if (si->si_code == SI_USER && si->si_pid == g_supervisor) g_relay = g_relay | (1 << sig);
}

// Init keeps no capability once the payload has started (the payload sets its own from
// PayloadPlan): every set empty, the ambient set too.
int drop_capabilities() {
    const kernel::CapSets none{};
    return kernel::set_capabilities(none, {}) == kernel::CapStep::Done ? 0 : -1;
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
    kernel::CapSets caps{};  // effective = permitted = inheritable = kept
    std::span<const sock_filter> prog;
    struct sock_fprog exec_prog {};            // exec checks: installed with a listener first (len 0: none)
    std::span<const sock_filter> socket_prog;  // a Landlock jail's socket(2) refusals (empty: none)
    sigset_t signals{};                        // kForwarded and SIGCHLD
    int landlock_fd = -1;                      // the Landlock ruleset (close-on-exec) the payload enforces, or -1
    bool readonly_root = false;                // layers to check: the jail's / is read-only (the namespace jail)
    bool no_network = false;                   // ... and it has no route out (--net none)
    // ... and the bounding set holds the kept capabilities only: not in the Landlock jail of a
    // caller without CAP_SETPCAP, which cannot drop it (no_new_privs makes it inert there).
    bool bounding_dropped = false;
    // --as-pid-1: init itself is the payload, and reports to the supervisor over SYNC_FD (kept
    // until the exec closes it) instead of to init over REPORT_FD.
    bool as_pid_1 = false;
};

// What the payload tells init over the report pipe: its check of the layers, right before the
// exec (or instead of it, under --require-layers, when one failed), or why it could not exec.
struct PayloadReport {
    enum Kind : uint32_t { Layers = 1, ExecFailed = 2, LayersRefused = 3 };
    Kind kind = Layers;
    int32_t err = 0;
    LayerCheck layers;
};

// A payload report as the supervisor hears it. False when it is the last one: the exec failed,
// or --require-layers refused a layer.
bool relay_report(int sync, const Spec& spec, const PayloadReport& r) {
    if (r.kind == PayloadReport::ExecFailed) {
        send_msg(sync, ChildMsg::ExecError, r.err, 0, spec.argv[0].c_str());
        return false;
    }
    send_msg(sync, ChildMsg::Layers, static_cast<int32_t>(r.layers.checked), static_cast<int32_t>(r.layers.failed),
             std::to_string(r.layers.seccomp_filters).c_str());
    if (r.kind != PayloadReport::LayersRefused) return true;
    std::string names;
    for (uint32_t bit = 1; bit <= LayerCheck::kLast; bit <<= 1) {
        if (r.layers.failed & bit) names += std::string(names.empty() ? "" : ", ") + LayerCheck::name(bit);
    }
    send_msg(
        sync, ChildMsg::SetupError, 0, 0,
        ("--require-layers: checked from inside, before the command, these layers are not engaged: " + names).c_str());
    return false;
}

// The payload's report: to init over the pipe, or straight to the supervisor as --as-pid-1's
// init.
void send_report(const PayloadPlan& p, const PayloadReport& r) {
    if (p.as_pid_1)
        (void)relay_report(p.sync_fd, *p.spec, r);
    else
        (void)write_all(p.report_fd, &r, sizeof r);
}

// init: the payload's plan, made before the last signal check (end_if_signalled_during_setup).
PayloadPlan plan_payload(const ChildContext& ctx, int report_fd) {
    const Spec& spec = *ctx.spec;
    PayloadPlan p;
    p.spec = &spec;
    p.report_fd = report_fd;
    p.sync_fd = ctx.sync_fd;
    for (const auto& a : spec.argv) p.argv.push_back(const_cast<char*>(a.c_str()));
    if (spec.argv0) p.argv[0] = const_cast<char*>(spec.argv0->c_str());
    p.argv.push_back(nullptr);
    for (const auto& e : ctx.env ? *ctx.env : spec.env) p.envp.push_back(const_cast<char*>(e.c_str()));
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
    kernel::add_capabilities(p.caps, spec.cap_keep, /*inheritable=*/true);
    const auto& bpf = ctx.prepared->bpf;
    p.prog = bpf;
    if (ctx.fallback) p.socket_prog = ctx.fallback->socket_bpf;
    const auto& exec_bpf =
        ctx.fallback && !ctx.fallback->listener_bpf.empty() ? ctx.fallback->listener_bpf : ctx.prepared->exec_bpf;
    p.exec_prog = {static_cast<unsigned short>(exec_bpf.size()), const_cast<sock_filter*>(exec_bpf.data())};
    sigemptyset(&p.signals);
    sigaddset(&p.signals, SIGCHLD);
    for (int sig : kForwarded) sigaddset(&p.signals, sig);
    p.readonly_root = !ctx.fallback;
    p.no_network = !ctx.fallback && !spec.share_net && spec.allow_hosts.empty();
    p.bounding_dropped = !ctx.fallback || ::geteuid() == 0;
    return p;
}

// --- the payload's check of the layers (cordon(1), LAYERS): system calls only, no allocation ---

// The payload, after its last step: each layer the jail claims, asked of the kernel.
LayerCheck check_layers(const PayloadPlan& p) {
    LayerCheck c;
    auto check = [&](uint32_t bit, bool engaged) {
        c.checked |= bit;
        if (!engaged || (p.spec->test_layer_fail & bit) != 0) c.failed |= bit;
    };
    check(LayerCheck::Seccomp, ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == SECCOMP_MODE_FILTER);
    check(LayerCheck::NoNewPrivs, ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1);
    const SelfStatus status = read_self_status();
    check(LayerCheck::Capabilities, only_kept_capabilities(p.caps, p.bounding_dropped, status));
    if (p.readonly_root) {
        struct statfs st {};
        check(LayerCheck::ReadonlyRoot, ::statfs("/", &st) == 0 && (st.f_flags & ST_RDONLY) != 0);
    }
    if (p.no_network) check(LayerCheck::NoNetwork, !route_out(AF_INET) && !route_out(AF_INET6));
    // landlock_restrict_self returned 0 for the ruleset: the kernel has no call that reads a
    // process's domain back.
    if (p.landlock_fd >= 0) check(LayerCheck::Landlock, true);
    c.seccomp_filters = seccomp_filters(status);
    return c;
}

// The payload, after its last step: the proof, each layer checked from inside, to init. Under
// --require-layers, one that is not engaged ends the run here, before the command.
void report_layers(const PayloadPlan& p) {
    const LayerCheck layers = check_layers(p);
    const bool refused = p.spec->require_layers && layers.failed != 0;
    send_report(p, PayloadReport{refused ? PayloadReport::LayersRefused : PayloadReport::Layers, 0, layers});
    if (refused) ::_exit(125);
}

// The payload: reset what init changed, shed every privilege, install the syscall filter as
// the very last step, exec. Only system calls from here on (see PayloadPlan). Runs in the
// payload, cloned by init (start_payload).
int payload_main(void* arg) {
    const PayloadPlan& p = *static_cast<const PayloadPlan*>(arg);
    const Spec& spec = *p.spec;
    auto die = [&](int err) {
        send_report(p, PayloadReport{PayloadReport::ExecFailed, err, {}});
        ::_exit(127);
    };
    // Signals 5: the default actions, then unblocked. One that came before (see note_signal)
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
    // Exec checks: every execve from here on, the command's own first, waits for the supervisor,
    // which gets the listener now, before the socket closes below.
    if (p.exec_prog.len > 0) {
        auto exec_prog = p.exec_prog;
        const int listener = install_exec_listener(&exec_prog);
        if (listener < 0) die(-listener);
        ChildMsg m{};
        m.type = ChildMsg::ExecListener;
        if (!send_with_fd(p.sync_fd, &m, sizeof m, listener)) die(errno);
        ::close(listener);
    }
    // Only 0, 1, 2 (and our report pipe, or --as-pid-1's socket, and the Landlock ruleset, all
    // close-on-exec) survive into the command.
    close_fds_from(3, p.as_pid_1 ? p.sync_fd : p.report_fd, p.landlock_fd);
    for (const auto& r : spec.rlimits) {
        struct rlimit rl {
            static_cast<rlim_t>(r.soft), static_cast<rlim_t>(r.hard)
        };
        if (::setrlimit(r.resource, &rl) != 0) die(errno);
    }
    // The kept capabilities only (none by default); ambient ones survive execve for a non-root uid.
    if (kernel::set_capabilities(p.caps, spec.cap_keep) != kernel::CapStep::Done) die(errno);
    // The Landlock domain, the payload's alone: init, outside it, is one of the processes it
    // scopes signals away from.
    if (p.landlock_fd >= 0 && enforce_landlock(p.landlock_fd) != 0) die(errno);
    // Last step before exec: the syscall filter (no_new_privs is already set), after a Landlock
    // jail's socket filter (the stricter answer of the two wins).
    if (!p.socket_prog.empty() && kernel::load_seccomp_filter(p.socket_prog) != 0) die(errno);
    if (kernel::load_seccomp_filter(p.prog) != 0) die(errno);
    report_layers(p);
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

// --- init's steps, in the order child_main takes them -------------------------------------------
// (those that build the jail are in child_setup.cpp)

// init: as pid 1 we only ever receive signals we handle. The supervisor's mask (inherited)
// keeps them blocked; with handlers in place they stay pending until watch_signals, where they
// end the run before the command starts (signals 2).
void hold_signals() {
    for (int sig : kForwarded) ::signal(sig, noop_handler);
    ::signal(SIGCHLD, noop_handler);
}

// init: the supervisor's word that the command may run (the command policy is checked while
// we build) and that its placeholders exist, unless a placeholder's mount already read it.
void wait_to_proceed(const ChildContext& ctx, bool proceeded) {
    if (!proceeded && !wait_proceed(ctx.sync_fd)) ::_exit(125);
}

// What init makes for the payload before the last signal check, so that nothing but the clone
// separates that check from the payload's existence.
struct PayloadStart {
    int report[2] = {-1, -1};  // close-on-exec pipe: the payload's exec errno, or EOF
    PayloadPlan plan;
    void* stack = nullptr;
};
constexpr size_t kPayloadStack = size_t{64} * 1024;

// init: the pipe, the plan, the stack.
PayloadStart prepare_payload(const ChildContext& ctx, int landlock) {
    PayloadStart start;
    if (::pipe2(start.report, O_CLOEXEC) != 0) setup_failed(ctx.sync_fd, "create a pipe");
    start.plan = plan_payload(ctx, start.report[1]);
    start.plan.landlock_fd = landlock;
    start.stack =
        ::mmap(nullptr, kPayloadStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (start.stack == MAP_FAILED) setup_failed(ctx.sync_fd, "allocate the payload's stack");
    return start;
}

// init, signals 4: SIGCHLD and the relayed signals stay blocked (the supervisor's mask) and are
// read from the returned signalfd, except around the payload's clone, where the relayed ones
// are unblocked with note_signal.
UniqueFd watch_signals(const ChildContext& ctx, const sigset_t& mask) {
    sigset_t forwarded;
    sigemptyset(&forwarded);
    for (int sig : kForwarded) sigaddset(&forwarded, sig);
    ::sigprocmask(SIG_BLOCK, &mask, nullptr);
    UniqueFd sigfd(::signalfd(-1, &mask, SFD_CLOEXEC));
    if (!sigfd) setup_failed(ctx.sync_fd, "create a signalfd");
    struct sigaction note {};
    note.sa_sigaction = note_signal;
    note.sa_flags = SA_SIGINFO;
    note.sa_mask = mask;
    for (int sig : kForwarded) ::sigaction(sig, &note, nullptr);
    ::sigprocmask(SIG_UNBLOCK, &forwarded, nullptr);
    return sigfd;
}

// init, signals 4: a signal that arrived during setup (Ctrl-C, kill) never reached a payload:
// it ends the run now, as if the payload had been killed by it.
void end_if_signalled_during_setup(const ChildContext& ctx, const sigset_t& mask) {
    if (!g_early) return;
    ::sigprocmask(SIG_BLOCK, &mask, nullptr);
    send_msg(ctx.sync_fd, ChildMsg::Exited, 0, g_early, nullptr);  // wait status "killed by sig"
    ::_exit(0);
}

// init: start the payload, which execs the command (payload_main). Init sleeps until the
// payload has exec'd or failed (CLONE_VFORK); an exec failure comes back over the close-on-exec
// pipe and goes to the supervisor as ExecError, EOF means the command runs. Init holds no
// capability afterwards.
pid_t start_payload(const ChildContext& ctx, PayloadStart& start) {
    const int sync = ctx.sync_fd;
    pid_t payload = ::clone(payload_main, static_cast<char*>(start.stack) + kPayloadStack,
                            CLONE_VM | CLONE_VFORK | SIGCHLD, &start.plan);
    ::sigprocmask(SIG_BLOCK, &start.plan.signals, nullptr);
    if (payload < 0) setup_failed(sync, "start the payload");
    // Signals 6: what the supervisor sent while the payload was starting is the payload's now.
    for (int sig : kForwarded) {
        if (g_relay & (1 << sig)) ::kill(payload, sig);
    }
    ::munmap(start.stack, kPayloadStack);
    ::close(start.report[1]);
    if (start.plan.landlock_fd >= 0) ::close(start.plan.landlock_fd);
    if (drop_capabilities() != 0) setup_failed(sync, "drop init's capabilities");
    // The layers' check, then EOF (the command runs) or why it did not.
    for (;;) {
        PayloadReport r{};
        const ssize_t n = retry_eintr([&] { return ::read(start.report[0], &r, sizeof r); });
        if (n != static_cast<ssize_t>(sizeof r) || !relay_report(sync, *ctx.spec, r)) break;
    }
    ::close(start.report[0]);
    return payload;
}

// init: the command is over and so is the jail. End whatever it left behind and reap it all
// (orphans are ours), so that once the supervisor reads Exited nothing in the jail can act any
// more, and it need not wait for our own exit, which tears down the namespaces and is slow.
[[noreturn]] void end_jail(const ChildContext& ctx, int status) {
    if (ctx.fallback)
        end_children();
    else
        ::kill(-1, SIGKILL);
    for (;;) {
        pid_t r = ::waitpid(-1, nullptr, 0);
        if (r < 0 && errno != EINTR) break;
    }
    if (!ctx.fallback) hold_placeholders(ctx);
    send_msg(ctx.sync_fd, ChildMsg::Exited, 0, status, nullptr);
    // Our exit is slow kernel work: let the supervisor finish first. It closes the socket when
    // it wants us gone, or exits, and then PDEATHSIG ends us.
    char byte = 0;
    while (::recv(ctx.sync_fd, &byte, 1, 0) > 0) {
    }
    ::_exit(0);
}

// --as-pid-1 (bubblewrap's): init is the command. It takes the payload's steps itself and
// execs; the supervisor hears its reports and reaps it for the command's status. Orphans are
// the command's to reap, signals without its handler do not reach it (pid 1), and the kernel
// ends the rest of the jail when it exits.
[[noreturn]] void exec_as_pid_1(const ChildContext& ctx, int landlock) {
    PayloadPlan plan = plan_payload(ctx, -1);
    plan.as_pid_1 = true;
    plan.landlock_fd = landlock;
    payload_main(&plan);
    ::_exit(127);  // not reached: payload_main execs or exits
}

// init, signals 8, until the payload's end: reap everything, relay the supervisor's signals,
// report the payload's end.
[[noreturn]] void run_init(const ChildContext& ctx, pid_t payload, const UniqueFd& sigfd) {
    for (;;) {
        struct signalfd_siginfo si {};
        if (retry_eintr([&] { return ::read(sigfd.get(), &si, sizeof si); }) != sizeof si) continue;
        if (si.ssi_signo == SIGCHLD) {
            int status = 0;
            pid_t pid = 0;
            while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
                if (pid == payload) end_jail(ctx, status);
            }
            continue;
        }
        // Relay only what the supervisor sent (from outside our pid namespace: pid 0).
        // Terminal-generated signals (SI_KERNEL) already reached the payload's process group.
        if (si.ssi_code == SI_USER && static_cast<pid_t>(si.ssi_pid) == g_supervisor) {
            ::kill(payload, static_cast<int>(si.ssi_signo));
        }
    }
}

// init of a Landlock jail: what the command leaves behind is reparented to init, not to the
// host's init, so that it can be ended with the jail (kill_children).
void become_subreaper(const ChildContext& ctx) {
    g_supervisor = ::getppid();
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) setup_failed(ctx.sync_fd, "become the jail's subreaper");
}

// The Landlock jail's step list (fallback.hpp): the namespace jail's without the namespaces, the
// id maps and the mounts. Init is the supervisor's child, not pid 1: it is the subreaper of
// what the command starts, and the Landlock domain is the payload's alone, as there.
[[noreturn]] void fallback_main(const ChildContext& ctx) {
    hold_signals();                                                 // init (signals 2)
    die_with_supervisor(ctx.sync_fd);                               // init
    close_inherited_fds(ctx, /*premounts_attached=*/false);         // init (there are no premounts)
    become_subreaper(ctx);                                          // init: orphans are ours to end
    enter_cgroup_namespace(ctx);                                    // init, without CLONE_INTO_CGROUP: only the wait
    enter_working_directory(ctx);                                   // init
    const int landlock = build_landlock(ctx);                       // init: the ruleset the payload enforces
    lock_privileges(ctx);                                           // init: bounding set, no_new_privs
    wait_to_proceed(ctx, false);                                    // init: the supervisor allows the command
    PayloadStart start = prepare_payload(ctx, landlock);            // init: plan, stack, exec-report pipe
    const UniqueFd sigfd = watch_signals(ctx, start.plan.signals);  // init (signals 4)
    end_if_signalled_during_setup(ctx, start.plan.signals);         // init (signals 4)
    const pid_t payload = start_payload(ctx, start);                // init clones the payload, which execs the command
    run_init(ctx, payload, sigfd);                                  // init, until the payload's end (signals 8)
}

}  // namespace

// Init's step list. The order: the id maps first (until they exist, our ids mean nothing in the
// new user namespace); the jail is built while the supervisor checks the command policy, and
// the word to proceed comes last, so that nothing of the command exists before it is allowed;
// the payload's plan before the last signal check, so that nothing but the clone separates that
// check from the payload's existence.
[[noreturn]] void child_main(const ChildContext& ctx) {
    if (ctx.fallback) fallback_main(ctx);                           // the Landlock jail
    hold_signals();                                                 // init (signals 2)
    die_with_supervisor(ctx.sync_fd);                               // init
    close_inherited_fds(ctx, /*premounts_attached=*/false);         // init, when there are no premounts
    write_id_maps(ctx);                                             // init, in the user namespace it created
    take_jail_ids(ctx);                                             // init, in a remapped root caller's jail
    enter_cgroup_namespace(ctx);                                    // init, without CLONE_INTO_CGROUP
    const bool proceeded = build_filesystem(ctx);                   // init: the mount plan, pivot_root
    close_inherited_fds(ctx, /*premounts_attached=*/true);          // init, when there are premounts
    set_up_uts_and_network(ctx);                                    // init: hostname, loopback
    enter_working_directory(ctx);                                   // init
    const int landlock = build_landlock(ctx);                       // init: the ruleset the payload enforces
    lock_privileges(ctx);                                           // init: bounding set, no_new_privs
    wait_to_proceed(ctx, proceeded);                                // init: the supervisor allows the command
    if (ctx.spec->as_pid_1) exec_as_pid_1(ctx, landlock);           // --as-pid-1: init execs the command
    PayloadStart start = prepare_payload(ctx, landlock);            // init: plan, stack, exec-report pipe
    const UniqueFd sigfd = watch_signals(ctx, start.plan.signals);  // init (signals 4)
    end_if_signalled_during_setup(ctx, start.plan.signals);         // init (signals 4)
    const pid_t payload = start_payload(ctx, start);                // init clones the payload, which execs the command
    run_init(ctx, payload, sigfd);                                  // init, until the payload's end (signals 8)
}

}  // namespace cordon

// Supervise (supervisor.cpp): the supervisor's poll loop, from the word to proceed until the
// jail's init is gone.
#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "supervisor_run.hpp"

namespace cordon::supervisor {

namespace {

constexpr uint64_t kKillGraceMs = 3000;  // after --timeout's SIGTERM, before SIGKILL

void arm(int tfd, uint64_t ms) {
    struct itimerspec its {};
    its.it_value.tv_sec = static_cast<time_t>(ms / 1000);
    its.it_value.tv_nsec = static_cast<long>((ms % 1000) * 1000000);
    ::timerfd_settime(tfd, 0, &its, nullptr);
}

int64_t monotonic_ms() {
    struct timespec t {};
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<int64_t>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}

// From the word to proceed until the jail's end: one poll loop over the child's sync socket,
// the signalfd and the timeout timer, which records what happens in FACTS.
class Supervision final {
public:
    Supervision(Run& run, RunFacts& facts)
        : run_(run),
          facts_(facts),
          // A cgroup must be empty before it is removed, and --status-json reports the jail's
          // CPU time from init's rusage: then init is reaped first.
          // Under --as-pid-1 init is the command, and its status is the command's.
          reap_init_(run.cgroup != nullptr || run.options.report_cpu || run.spec.as_pid_1),
          exec_(run.exec_gate, run.spec.argv, run.spec.chdir) {}
    Status loop();

private:
    // Init reports Exited only once every other process of the jail is gone. From then on the
    // jail can do nothing, so cordon finishes without waiting for init's own exit (it tears
    // down the namespaces, which is slow, and the kernel kills it with us: PDEATHSIG), unless
    // init is to be reaped.
    [[nodiscard]] bool over() const { return facts_.init_status || (facts_.payload_status && !reap_init_); }
    // Init waits for us after Exited; when we want it reaped, closing the socket lets it exit.
    void let_init_exit() {
        if (facts_.payload_status && reap_init_) run_.sync.reset();
    }
    void on_sync(short revents);
    // One queued message, if any, with the descriptor it carries: recv's result (0: the child
    // closed its end).
    ssize_t read_message();
    bool next_message() { return read_message() == static_cast<ssize_t>(sizeof(ChildMsg)); }
    void on_message(const ChildMsg& m, UniqueFd fd);
    void on_exec(short revents);
    void on_signal(const struct signalfd_siginfo& si);
    // Whether the jail's init has a handler for SIG (SigCgt in its /proc status).
    [[nodiscard]] bool init_catches(int sig) const;
    void on_timer();
    void finish();

    Run& run_;
    RunFacts& facts_;
    const bool reap_init_;
    UniqueFd timer_;
    ExecChecks exec_;
};

Status Supervision::loop() {
    timer_.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
    if (!timer_) return sys_error("timerfd_create");
    if (run_.spec.timeout_ms) arm(timer_.get(), *run_.spec.timeout_ms);
    // RepoWatch's events are taken off their queue at most every kEventsRestMs: the host's own
    // writes to the file system come there too, and need not wake cordon for each one.
    constexpr int64_t kEventsRestMs = 100;
    int64_t events_rest_until = 0;
    while (!over()) {
        const int events = run_.repos ? run_.repos->events_fd() : -1;
        const int64_t rest = events < 0 ? 0 : events_rest_until - monotonic_ms();
        struct pollfd fds[5] = {{run_.sync.get(), POLLIN, 0},
                                {run_.sigfd.get(), POLLIN, 0},
                                {timer_.get(), POLLIN, 0},
                                {exec_.fd(), POLLIN, 0},
                                {rest > 0 ? -1 : events, POLLIN, 0}};
        if (::poll(fds, 5, rest > 0 ? static_cast<int>(rest) : -1) < 0 && errno != EINTR) break;
        if (fds[4].revents & POLLIN) {
            run_.repos->on_events();
            events_rest_until = monotonic_ms() + kEventsRestMs;
        }
        on_sync(fds[0].revents);
        if (fds[3].revents) on_exec(fds[3].revents);
        if (fds[1].revents & POLLIN) {
            struct signalfd_siginfo si {};
            while (::read(run_.sigfd.get(), &si, sizeof si) == sizeof si) on_signal(si);
        }
        if (fds[2].revents & POLLIN) on_timer();
    }
    finish();
    return {};
}

void Supervision::on_sync(short revents) {
    UniqueFd& sync = run_.sync;
    if (sync && (revents & POLLIN)) {
        if (read_message() == 0) sync.reset();
        let_init_exit();
    } else if (sync && (revents & (POLLHUP | POLLERR))) {
        sync.reset();
    }
}

ssize_t Supervision::read_message() {
    ChildMsg m{};
    int fd = -1;
    const ssize_t r = recv_with_fd(run_.sync.get(), &m, sizeof m, fd);
    if (r == static_cast<ssize_t>(sizeof m)) {
        on_message(m, UniqueFd(fd));
    } else if (fd >= 0) {
        ::close(fd);
    }
    return r;
}

// An exec inside the jail waits for its answer (exec_notify.hpp). A denial that ends the run
// (--on-deny kill) takes the whole jail at once.
void Supervision::on_exec(short revents) {
    if (!exec_.on_ready(revents, facts_.exec_denials) || facts_.denied_exec_ended) return;
    facts_.denied_exec_ended = true;
    if (run_.cgroup)
        run_.cgroup->kill_all();
    else
        ::kill(run_.init, SIGKILL);
}

void Supervision::on_message(const ChildMsg& m, UniqueFd fd) {
    auto text = [&] { return std::string(m.text, ::strnlen(m.text, sizeof m.text)); };
    switch (m.type) {
        case ChildMsg::SetupError:
            facts_.child_failure = ChildFailure{ChildFailure::Kind::Setup, m.err, text()};
            break;
        case ChildMsg::ExecError:
            facts_.child_failure = ChildFailure{ChildFailure::Kind::Exec, m.err, text()};
            break;
        case ChildMsg::Started:
            facts_.started = true;
            break;
        case ChildMsg::Layers:
            facts_.layers = LayerCheck{static_cast<uint32_t>(m.err), static_cast<uint32_t>(m.status),
                                       static_cast<uint32_t>(std::strtoul(text().c_str(), nullptr, 10))};
            break;
        case ChildMsg::Exited:
            facts_.payload_status = m.status;
            break;
        case ChildMsg::ExecListener:
            exec_.adopt(std::move(fd), run_.placeholders ? run_.placeholders->ids() : std::vector<FileId>{},
                        run_.proxy_route,
                        run_.fallback ? std::optional(fallback_writable(*run_.fallback)) : std::nullopt);
            break;
        case ChildMsg::NetListener:
            if (run_.net) run_.net->adopt(static_cast<uint32_t>(m.status), std::move(fd));
            break;
        case ChildMsg::AgentListener:
            if (run_.agent) run_.agent->adopt(std::move(fd));
            break;
    }
}

bool Supervision::init_catches(int sig) const {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(run_.init));
    const UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
    char buf[4096];
    const ssize_t n = fd ? ::read(fd.get(), buf, sizeof buf - 1) : -1;
    if (n <= 0) return false;
    buf[n] = '\0';
    const char* at = std::strstr(buf, "\nSigCgt:");
    if (at == nullptr) return false;
    const unsigned long long caught = std::strtoull(at + std::strlen("\nSigCgt:"), nullptr, 16);
    return sig >= 1 && sig <= 64 && ((caught >> (sig - 1)) & 1U) != 0;
}

void Supervision::on_signal(const struct signalfd_siginfo& si) {
    const int sig = static_cast<int>(si.ssi_signo);
    if (sig == SIGCHLD) {
        int status = 0;
        if (::waitpid(run_.init, &status, WNOHANG) == run_.init) facts_.init_status = status;
        return;
    }
    // Signals 3 (child.cpp): before the command has started, any of them ends the run at once:
    // setup may be stalled (a hung filesystem, a placeholder locked by a stranger), and there is
    // no command yet to hand the signal to. The jail goes with init. The payload says Started
    // before it execs; a message already queued counts.
    if (!facts_.started && run_.sync) {
        while (!facts_.started && next_message()) {
        }
        let_init_exit();
    }
    if (!facts_.started && !facts_.child_failure && !facts_.payload_status) {
        if (!facts_.interrupted) facts_.interrupted = sig;
        ::kill(run_.init, SIGKILL);
        return;
    }
    // --as-pid-1: a signal that pid 1, the command, has no handler for never reaches it (also
    // between its Started and its exec, when its handlers are the defaults). It ends the run
    // instead, as it ends bubblewrap's, rather than leave cordon deaf to Ctrl-C and kill.
    if (run_.spec.as_pid_1 && !init_catches(sig)) {
        if (!facts_.interrupted) facts_.interrupted = sig;
        if (run_.cgroup)
            run_.cgroup->kill_all();
        else
            ::kill(run_.init, SIGKILL);
        return;
    }
    // Signals 7: kill(cordon) is relayed to the payload; terminal signals (Ctrl-C) already
    // reached it, or init, through the process group, unless it runs in its own session.
    const bool from_user = si.ssi_code == SI_USER || si.ssi_code == SI_QUEUE;
    if (from_user || run_.spec.new_session) ::kill(run_.init, sig);
}

// --timeout: SIGTERM, then after a grace period SIGKILL (signals 7, child.cpp).
void Supervision::on_timer() {
    uint64_t ticks = 0;
    (void)::read(timer_.get(), &ticks, sizeof ticks);
    if (!facts_.timed_out) {
        facts_.timed_out = true;
        ::kill(run_.init, SIGTERM);
        arm(timer_.get(), kKillGraceMs);
    } else if (!facts_.timeout_killed) {
        facts_.timeout_killed = true;
        // The whole tree at once, also what escaped init's process group.
        if (run_.cgroup)
            run_.cgroup->kill_all();
        else
            ::kill(run_.init, SIGKILL);
    }
}

void Supervision::finish() {
    UniqueFd& sync = run_.sync;
    // Messages sent just before init exited are still queued.
    if (sync) {
        while (next_message()) {
        }
    }
    // --as-pid-1: init was the command, and its wait status is the command's.
    if (run_.spec.as_pid_1 && facts_.started && !facts_.payload_status) facts_.payload_status = facts_.init_status;
    // Not reaping init: it waits on the socket and exits when cordon does, so that its
    // namespace teardown does not compete with our cleanup. The descriptor closes with us.
    if (sync && facts_.payload_status && !reap_init_) (void)sync.release();
    // Signals 9: a signal that came with the jail's end (the same Ctrl-C that ended the
    // payload) must not kill cordon once unblocked, before it reports and cleans up.
    for (struct signalfd_siginfo si{}; ::read(run_.sigfd.get(), &si, sizeof si) == sizeof si;) {
    }
    run_.signals.reset();
}

}  // namespace

Status supervise(Run& run, RunFacts& facts) {
    return Supervision(run, facts).loop();
}

}  // namespace cordon::supervisor

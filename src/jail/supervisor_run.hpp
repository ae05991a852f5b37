// What one run holds in the supervisor (supervisor.cpp: start, admit and the end), shared with
// its poll loop (supervise.cpp).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cordon/cgroup.hpp"
#include "cordon/fd.hpp"
#include "cordon/jail.hpp"
#include "cordon/leftovers.hpp"
#include "cordon/net_proxy.hpp"
#include "cordon/outcome.hpp"
#include "cordon/placeholders.hpp"
#include "cordon/protected_judge.hpp"
#include "cordon/proxy_connect.hpp"
#include "cordon/ssh_agent_relay.hpp"

namespace cordon::supervisor {

constexpr int kSupervisedSignals[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

inline void ignore_signal(int) {}

// For the supervisor's lifetime around the jail: its signals are blocked (read from a signalfd)
// and have a do-nothing handler. The handler is for the child: clone keeps dispositions, and as
// pid 1 of its namespace the child would silently drop any signal still at SIG_DFL, such as a
// Ctrl-C or a relayed SIGTERM that arrives before it installs its own (signals 1, child.cpp).
class SupervisedSignals final {
public:
    SupervisedSignals() {
        sigemptyset(&mask_);
        for (int sig : kSupervisedSignals) sigaddset(&mask_, sig);
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

private:
    sigset_t mask_{}, old_mask_{};
    struct sigaction old_actions_[std::size(kSupervisedSignals)]{};
};

// Everything one run holds in the supervisor. Members go in reverse order: the sync socket
// closes first, then the signals are restored, the cgroup is removed (its tree killed), and the
// placeholders are released last, once nothing of the jail can use them.
struct Run {
    Run(const Spec& s, const Prepared& p, const SupervisorOptions& o) : spec(s), prepared(p), options(o) {}
    const Spec& spec;
    const Prepared& prepared;
    const SupervisorOptions& options;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    // The Landlock jail (fallback.hpp), planned before clone (--isolation landlock) or once clone
    // was refused a user namespace (auto); its TMPDIR goes last, with the jail long gone.
    RunTmpdir tmpdir;
    RunTmpdir home;  // the Landlock jail's private HOME, where the namespace jail has one
    std::optional<FallbackPlan> fallback;
    ProxyRoute proxy_route;  // the Landlock jail's allowlist: where its connects to the proxy go
    std::vector<std::string> fallback_env;
    std::unique_ptr<Placeholders> placeholders;  // admit
    std::vector<std::string> limits_dropped;     // --limits best-effort: what the cgroup could not take
    std::unique_ptr<NetFilter> net;              // --allow-host: the listeners come in supervise
    std::unique_ptr<SshAgentRelay> agent;        // --ssh-agent: its socket comes in supervise
    std::unique_ptr<RunCgroup> cgroup;           // start, before clone
    std::optional<SupervisedSignals> signals;    // start, before clone; restored when supervise ends
    UniqueFd sigfd;
    UniqueFd sync;  // our end of the child's SOCK_SEQPACKET socket (ChildMsg one way, bytes the other)
    pid_t init = -1;
    bool late_cgroupns = false;           // the child waits to be moved into its cgroup (admit)
    const ExecGate* exec_gate = nullptr;  // prepared.exec_checks: judges each exec
    // The CPUs we may run on, when there are others than ours to start init on (start_elsewhere),
    // and whether init was started there: it gets them back before the word (restore_cpus).
    std::optional<cpu_set_t> affinity;
    bool spread = false;
    // The workdir's repositories, watched from clone on and judged once the jail is gone
    // (leftovers.hpp); it goes first, before the placeholders it sees as they are.
    std::unique_ptr<RepoWatch> repos;
    // The Landlock jail's protected paths, looked at before the command and judged after it.
    std::unique_ptr<ProtectedJudge> judge;
};

// Supervise (supervise.cpp): the poll loop from the word to proceed until the jail's init is
// gone, recording what happens in FACTS.
Status supervise(Run& run, RunFacts& facts);

}  // namespace cordon::supervisor

// How a run ended. The supervisor records what happened (RunFacts: facts only, no decision);
// classify() alone turns them into the reason and the exit status of SPEC §3, for cordon's
// exit code and --status-json. Pure: the exit table is unit-tested without namespaces.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cordon/bounds.hpp"
#include "cordon/error.hpp"

namespace cordon {

// The payload's check, from inside, after its last step and before exec, of the layers the jail
// claims (cordon(1), LAYERS): the bits it checked, those that failed, and the seccomp filters
// it counted (0: unknown).
struct LayerCheck {
    enum Bit : uint32_t {
        Seccomp = 1,       // seccomp mode 2 (filter)
        NoNewPrivs = 2,    // no_new_privs set
        Capabilities = 4,  // effective, permitted, inheritable, ambient and bounding: the kept ones only
        ReadonlyRoot = 8,  // the jail's / is a read-only mount (the namespace jail)
        NoNetwork = 16,    // no route to anything but loopback (--net none)
        Landlock = 32,     // the Landlock domain was enforced (the Landlock jail, or --landlock)
    };
    static constexpr uint32_t kLast = Landlock;
    uint32_t checked = 0;
    uint32_t failed = 0;
    uint32_t seccomp_filters = 0;
    // "seccomp", "no_new_privs", "capabilities", "readonly_root", "no_network", "landlock".
    static const char* name(uint32_t bit) {
        switch (bit) {
            case Seccomp:
                return "seccomp";
            case NoNewPrivs:
                return "no_new_privs";
            case Capabilities:
                return "capabilities";
            case ReadonlyRoot:
                return "readonly_root";
            case NoNetwork:
                return "no_network";
            case Landlock:
                return "landlock";
            default:
                return "?";
        }
    }
};

// How the run ended, for the exit status and --status-json.
struct Outcome {
    // UsageError: bad input, found before any run (main.cpp writes it; classify never does).
    enum class Reason { Exited, Signaled, Timeout, Oom, SetupError, ExecError, Denied, UsageError };
    Reason reason = Reason::SetupError;
    int exit_code = 125;
    int signal = 0;
    uint64_t wall_ms = 0;
    uint64_t cpu_ms = 0;
    uint64_t peak_memory_bytes = 0;
    uint64_t oom_kills = 0;                       // processes the OOM killer ended under --memory
    std::optional<Error> error;                   // SetupError / ExecError
    std::vector<std::string> denials;             // JSON objects, one per policy denial (cordon(1), BOUNDS)
    uint64_t denials_dropped = 0;                 // denials counted but not kept
    std::string isolation;                        // "namespaces" or "landlock" (cordon(1), ISOLATION); "" before either
    std::vector<std::string> dropped;             // what the Landlock jail could not give
    std::vector<std::string> quarantined;         // JSON objects: what the run left that git would run, moved aside
    uint64_t quarantined_dropped = 0;             // ... counted but not kept
    std::string repo_watch;                       // RepoWatch::judged_by, where the workdir was watched
    std::vector<std::string> limits_not_applied;  // --limits best-effort: "--memory: why"
    std::optional<LayerCheck> layers;             // the payload's check of the jail's layers
};

// A failure the child reported over the sync socket (ChildMsg SetupError or ExecError).
struct ChildFailure {
    enum class Kind { Setup, Exec };
    Kind kind = Kind::Setup;
    int err = 0;       // errno
    std::string text;  // the step that failed (Setup), or argv[0] (Exec)
};

// What the supervisor saw of one run.
struct RunFacts {
    // Ends before the command could start.
    std::optional<Error> setup_failure;         // the supervisor could not build or start the jail
    std::optional<Outcome> gate_stop;           // the gate (the command policy) stopped it: its outcome
    int interrupted = 0;                        // a signal to cordon ended it before the command started
    std::optional<ChildFailure> child_failure;  // the child's last reported failure
    // The jail's processes.
    bool started = false;               // the payload said Started: a signal is the command's now
    std::optional<LayerCheck> layers;   // the payload's check of the layers, before exec
    std::optional<int> payload_status;  // its wait status, from init's Exited
    std::optional<int> init_status;     // init's wait status, when the supervisor reaped it
    // --timeout: SIGTERM was sent, and SIGKILL after the grace period.
    bool timed_out = false;
    bool timeout_killed = false;
    // Exec-time checks: the denials (JSON, the first ones), and whether one ended the run
    // (--on-deny kill).
    BoundedRecords exec_denials;
    bool denied_exec_ended = false;
    // --allow-host: the connections the network filter refused (JSON, "kind": "network"), and
    // how many more it only counted.
    std::vector<std::string> net_denials;
    uint64_t net_denials_dropped = 0;
    // Measured after the end (zero when the run failed or was stopped before it).
    uint64_t wall_ms = 0;
    uint64_t cpu_ms = 0;
    uint64_t peak_memory_bytes = 0;
    uint64_t oom_kills = 0;  // memory.events of the run's cgroup
};

// The run's outcome: reason, exit status, signal and error decided from FACTS, the measurements
// copied. The first that applies: a setup failure (125), the gate's own outcome, --timeout (124),
// a signal before the command started (128+N), a failure the child reported (125; 126, or 127
// for a command not found), the payload's status (its code, or 128+N), init killed by a signal
// (128+N), else 125. Killed by SIGKILL (or a shell's 137) with OOM kills counted is `oom`, 137.
[[nodiscard]] Outcome classify(const RunFacts& facts);

// The supervisor's clone failed with ERR: the error, with what to check.
[[nodiscard]] Error clone_error(int err);
// Whether E is clone_error's (and not another failure on the way to clone).
[[nodiscard]] bool is_clone_error(const Error& e);

}  // namespace cordon

// Exec-time checks (SPEC §6, last point): every execve and execveat inside the jail stops at a
// seccomp user notification until the supervisor has read what it asks and answered.
//
//   payload (in the jail)                      supervisor (on the host)
//   install_exec_listener() -> listener fd  -> ExecListener(fd), polled with its other fds
//   execve(...) blocks                      <- receive(): path, argv, cwd read from the process
//                                              the gate decides; allow() or deny()
//   the kernel runs execve, or fails it with EACCES
//
// The kernel reads argv again after the answer: a second thread of the process can change it in
// between (seccomp_unotify(2)). The check guards against a confused agent; the jail is the wall.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <linux/filter.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cordon/bounds.hpp"
#include "cordon/error.hpp"
#include "cordon/fd.hpp"
#include "cordon/placeholder_calls.hpp"
#include "cordon/proxy_connect.hpp"

namespace cordon {

// How much the supervisor reads from a process that asks to exec. The kernel's own limits are
// MAX_ARG_STRLEN (128 KiB) per string and about a quarter of the stack limit in all.
struct ExecReadLimits {
    size_t max_args = 65536;
    size_t max_arg_bytes = 131072;
    size_t max_total_bytes = 4u << 20;
    size_t max_path_bytes = 4096;
};

// Reading another process's memory (PID, in our pid namespace; process_vm_readv). A string
// longer than MAX, or an array past the limits, is an error with err E2BIG; unreadable memory
// gives EFAULT, a process we may not read EPERM.
Result<std::string> read_c_string(pid_t pid, uint64_t addr, size_t max);
Result<std::vector<std::string>> read_argv(pid_t pid, uint64_t addr, const ExecReadLimits& limits);

// PID (in our pid namespace) as the jail's pid namespace numbers it (0 if unknown).
pid_t jail_pid_of(pid_t pid);
// Where a link of /proc/PID (cwd, root, fd/N) leads, as the process sees it; "" if unreadable.
std::string read_link(const std::string& path);
// Process PID's memory, as much as is mapped from ADDR on (up to LEN bytes): the count read, or
// -1 with errno set.
ssize_t read_mem(pid_t pid, uint64_t addr, char* buf, size_t len);
// Paths through /proc or /dev, anywhere in them: their links name the jail's pids, which only a
// walk that knows the process's jail pid can follow (resolve_in_root), and /dev/fd/N names its
// descriptors.
bool special_path(const std::string& p);

// The listener's filter, as a BPF program for this architecture: it notifies execve and
// execveat when EXECS, and the calls of placeholder_calls.hpp when PLACEHOLDER_ANSWERS.
// And connect(2) when CONNECTS (the Landlock jail's allowlist: proxy_connect.hpp).
std::vector<sock_filter> exec_filter(bool execs = true, bool placeholder_answers = false, bool connects = false);

// Whether this process could install a listener: false under an outer runtime that already
// has one (cordon inside cordon, some container runtimes) or that forbids them. Costs a vfork
// only when this process already runs under a seccomp filter.
struct ListenerProbe {
    bool available = true;
    std::string why;  // when not
};
ListenerProbe probe_exec_listener();

// In the payload, before the jail's own filter: install EXEC_FILTER (a sock_fprog) with a new
// listener and return its descriptor, or -errno. No allocation (the payload shares init's memory).
int install_exec_listener(const void* sock_fprog);

// One exec that waits for an answer, as the supervisor reads it.
struct ExecRequest {
    uint64_t id = 0;
    pid_t pid = 0;                  // in the supervisor's pid namespace
    pid_t jail_pid = 0;             // in the jail's: known when a path goes through /proc, else 0
    std::string path;               // the file to run, as given (execveat: joined to its dirfd)
    std::vector<std::string> argv;  // as given; argv[0] may name anything
    std::string cwd;                // the process's working directory, in the jail's terms
    std::string exe;                // PATH resolved inside the jail's root (empty: not found)
    UniqueFd root;                  // the process's root directory (O_PATH), for resolving paths
    std::string error;              // set when what it asks could not be read: judge as a denial
    bool no_access = false;         // ... because /proc/PID refused us (see ExecChecks)
    bool missing = false;           // execve of a path that names nothing in the jail (ENOENT)
    // The Landlock jail's: the only places its processes can write (real paths); a file outside
    // them is none of theirs, known by its name (exec_identity.hpp). Null: the mounts say.
    const std::vector<std::string>* writable = nullptr;
};

class ExecListener {
public:
    ExecListener() = default;
    explicit ExecListener(UniqueFd fd, ExecReadLimits limits = {});
    [[nodiscard]] int fd() const { return fd_.get(); }
    [[nodiscard]] bool active() const { return fd_.valid(); }
    // Take one notification. nullopt: nothing to judge (the process died meanwhile, or the call
    // was answered here); an error: the listener is unusable.
    Result<std::optional<ExecRequest>> receive();
    void allow(uint64_t id);
    void deny(uint64_t id, int err);
    void close() { fd_.reset(); }
    // The run's placeholders, for the calls answered here (placeholder_calls.hpp).
    void set_placeholders(std::vector<FileId> ids) { placeholders_ = std::move(ids); }
    // Where a connect to the jail's proxy goes (proxy_connect.hpp); inactive: none may.
    void set_proxy_route(ProxyRoute route) { route_ = std::move(route); }
    // The Landlock jail's writable places, given with each request (ExecRequest::writable).
    void set_writable(std::optional<std::vector<std::string>> places) { writable_ = std::move(places); }

private:
    UniqueFd fd_;
    std::vector<FileId> placeholders_;
    ProxyRoute route_;
    std::optional<std::vector<std::string>> writable_;
    ExecReadLimits limits_;
    size_t notif_size_ = 0, resp_size_ = 0;
    void respond(uint64_t id, int err, bool cont);
    // The notification is still the call that was read: its process has not died meanwhile
    // (and its pid been reused).
    [[nodiscard]] bool still_waiting(uint64_t id) const;
};

// The supervisor's answer to one exec, from the gate main.cpp gives it (exec_gate.hpp judges).
struct ExecVerdict {
    bool allow = true;
    bool end_run = false;     // --on-deny kill: end the whole jail, exit 126
    std::string denial_json;  // for the status's denials, when denied
};
using ExecGate = std::function<ExecVerdict(const ExecRequest&)>;

// The supervisor's side: the listener the payload hands over, answered from the poll loop.
//
// The command's own first exec is the one an unprivileged supervisor cannot read: the payload
// runs on init's memory, which was made outside the jail and became undumpable when it took
// the jail's ids (and making it dumpable would expose init). That exec is the command line the
// supervisor already knows, so it is judged as PAYLOAD_ARGV in PAYLOAD_CWD: the first process
// to notify, until it has made one exec that could be read (its new memory belongs to the jail).
class ExecChecks {
public:
    ExecChecks(const ExecGate* gate, std::vector<std::string> payload_argv, std::string payload_cwd)
        : gate_(gate), payload_argv_(std::move(payload_argv)), payload_cwd_(std::move(payload_cwd)) {}
    void adopt(UniqueFd listener, std::vector<FileId> placeholders = {}, ProxyRoute route = {},
               std::optional<std::vector<std::string>> writable = std::nullopt) {
        listener_ = ExecListener(std::move(listener));
        listener_.set_placeholders(std::move(placeholders));
        listener_.set_proxy_route(std::move(route));
        listener_.set_writable(std::move(writable));
    }
    // For poll: -1 until the payload has handed the listener over, and once it is closed.
    [[nodiscard]] int fd() const { return listener_.active() ? listener_.fd() : -1; }
    // REVENTS came on fd(): answer what waits, adding each denial's JSON to DENIALS (which keeps
    // the first ones and counts the rest). True when a verdict ends the run (--on-deny kill).
    bool on_ready(short revents, BoundedRecords& denials);

private:
    const ExecGate* gate_;
    ExecListener listener_;
    std::vector<std::string> payload_argv_;
    std::string payload_cwd_;
    pid_t payload_pid_ = 0;        // the first process to notify
    bool payload_execed_ = false;  // it made an exec that could be read
    void as_payload(ExecRequest& r) const;
};

// Payload -> supervisor: the listener descriptor beside a message (SCM_RIGHTS), and back.
// Both return false on failure; RECV sets FD to -1 when the message carried none.
bool send_with_fd(int sock, const void* msg, size_t len, int fd);
ssize_t recv_with_fd(int sock, void* msg, size_t len, int& fd);

// PATH as the process sees it, resolved inside ROOT (an O_PATH descriptor of its root
// directory): relative to CWD, '.' and '..' folded, symlinks followed (the last one only when
// FOLLOW_LAST), never above the root. /proc/self, /proc/thread-self and /proc/N/root and cwd
// of the process itself (JAIL_PID) are taken as what they show. Components that do not exist
// are kept as written. The result is absolute, in the jail's terms.
//
// The walk also tells whether the path names something (STATE, when given): Exists when its
// last component was seen and is no link (or FOLLOW_LAST is false and it was seen), Missing
// when a component is not there (the kernel's ENOENT), Unknown otherwise (a component refused,
// a loop, a step through /proc): ask the file system then.
enum class PathState { Unknown, Exists, Missing };
std::string resolve_in_root(int root, const std::string& cwd, const std::string& path, bool follow_last,
                            pid_t jail_pid = 0, PathState* state = nullptr);

}  // namespace cordon

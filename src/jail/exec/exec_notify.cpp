// Exec-time checks: the execve/execveat notification filter, its listener, and reading what a
// waiting exec asks from the process's memory and /proc entries (cordon/exec_notify.hpp).
#include "cordon/exec_notify.hpp"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "cordon/paths.hpp"
#include "cordon/placeholder_calls.hpp"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

namespace cordon {

namespace {

constexpr size_t kPage = 4096;

long sys_seccomp(unsigned op, unsigned flags, const void* args) {
    return ::syscall(SYS_seccomp, op, flags, args);
}

}  // namespace

namespace {

// Another process's memory a page at a time, keeping the last page read: an argv's strings
// mostly share one or two pages, so this is one pread for them instead of one each.
class PageReader {
public:
    explicit PageReader(pid_t pid) : pid_(pid) {}
    // The mapped bytes from ADDR to the end of its page; empty with errno set when unmapped.
    std::string_view at(uint64_t addr) {
        const uint64_t page = addr - addr % kPage;
        if (len_ == 0 || page != page_) {
            ssize_t n = read_mem(pid_, page, buf_.data(), kPage);
            len_ = n > 0 ? static_cast<size_t>(n) : 0;
            page_ = page;
            if (n <= 0) errno = n < 0 ? errno : EFAULT;
        }
        const auto off = static_cast<size_t>(addr - page);
        if (off >= len_) {
            if (len_ != 0) errno = EFAULT;
            return {};
        }
        return {buf_.data() + off, len_ - off};
    }

private:
    pid_t pid_;
    uint64_t page_ = 0;
    size_t len_ = 0;
    std::array<char, kPage> buf_{};
};

Result<std::string> read_string(PageReader& mem, uint64_t addr, size_t max) {
    std::string out;
    while (true) {
        std::string_view got = mem.at(addr);
        if (got.empty()) return sys_error("read exec arguments", errno);
        size_t len = std::min(got.find('\0'), got.size());
        if (out.size() + len > max) return sys_error("read exec arguments", E2BIG);
        out.append(got.substr(0, len));
        if (len < got.size()) return out;
        addr += got.size();
    }
}

}  // namespace

Result<std::string> read_c_string(pid_t pid, uint64_t addr, size_t max) {
    PageReader mem(pid);
    return read_string(mem, addr, max);
}

Result<std::vector<std::string>> read_argv(pid_t pid, uint64_t addr, const ExecReadLimits& limits) {
    std::vector<std::string> argv;
    if (addr == 0) return argv;  // execve(path, NULL, ...): the kernel takes an empty argv
    size_t total = 0;
    PageReader strings(pid);
    std::array<uint64_t, kPage / sizeof(uint64_t)> ptrs{};
    while (true) {
        size_t room = (kPage - static_cast<size_t>(addr % kPage)) / sizeof(uint64_t);
        if (room == 0) room = 1;
        ssize_t n = read_mem(pid, addr, reinterpret_cast<char*>(ptrs.data()), room * sizeof(uint64_t));
        if (n < static_cast<ssize_t>(sizeof(uint64_t))) return sys_error("read exec arguments", n < 0 ? errno : EFAULT);
        size_t got = static_cast<size_t>(n) / sizeof(uint64_t);
        for (size_t i = 0; i < got; ++i) {
            if (ptrs[i] == 0) return argv;
            if (argv.size() >= limits.max_args) return sys_error("read exec arguments", E2BIG);
            size_t left = limits.max_total_bytes - total;
            auto s = read_string(strings, ptrs[i], std::min(limits.max_arg_bytes, left));
            if (!s) return s.error();
            total += s->size() + 1;
            if (total > limits.max_total_bytes) return sys_error("read exec arguments", E2BIG);
            argv.push_back(std::move(*s));
        }
        addr += got * sizeof(uint64_t);
    }
}

std::vector<sock_filter> exec_filter(bool execs, bool placeholder_answers, bool connects) {
    // Other architectures never get here: the jail's own filter kills them first.
    std::vector<sock_filter> f = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    };
    std::vector<size_t> to_notify;  // jumps whose true branch goes to the last instruction
    auto notify_on = [&](int nr) {
        to_notify.push_back(f.size());
        f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 0));
    };
    if (execs) {
        notify_on(__NR_execve);
        notify_on(__NR_execveat);
    }
    if (connects) notify_on(__NR_connect);
    if (placeholder_answers) {
        for (int nr : placeholder_calls()) {
            if (nr != __NR_unlinkat) notify_on(nr);
        }
        // unlinkat: only with AT_REMOVEDIR (its third argument's low word; x86-64 is little-endian).
        f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unlinkat, 0, 2));
        f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])));
        to_notify.push_back(f.size());
        f.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, AT_REMOVEDIR, 0, 0));
    }
    f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
    for (size_t at : to_notify) f[at].jt = static_cast<uint8_t>(f.size() - 2 - at);
    return f;
}

int install_exec_listener(const void* sock_fprog) {
    // Killable while the supervisor decides (5.19+): a SIGKILL to the jail never waits on us.
    long fd = sys_seccomp(SECCOMP_SET_MODE_FILTER,
                          SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, sock_fprog);
    if (fd < 0 && errno == EINVAL)
        fd = sys_seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, sock_fprog);
    return fd < 0 ? -errno : static_cast<int>(fd);
}

namespace {

int probe_child(void* arg) {
    const auto* prog = static_cast<const sock_fprog*>(arg);
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(errno);
    int fd = install_exec_listener(prog);
    ::_exit(fd < 0 ? -fd : 0);
}

}  // namespace

ListenerProbe probe_exec_listener() {
    ListenerProbe probe;
    struct seccomp_notif_sizes sizes {};
    if (sys_seccomp(SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) {
        probe.available = false;
        probe.why = std::string("the kernel has no seccomp user notification: ") + std::strerror(errno);
        return probe;
    }
    // Under no filter at all, nothing can refuse a listener.
    if (::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) == 0) return probe;
    // An allow-all filter with a listener, tried in a throwaway process sharing our memory.
    static const sock_filter allow_all[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    sock_fprog prog{1, const_cast<sock_filter*>(allow_all)};
    alignas(16) static std::array<char, 16384> stack{};
    pid_t pid = ::clone(probe_child, stack.data() + stack.size(), CLONE_VM | CLONE_VFORK | SIGCHLD, &prog);
    int status = 0;
    if (pid < 0 || retry_eintr([&] { return ::waitpid(pid, &status, 0); }) != pid || !WIFEXITED(status)) {
        probe.available = false;
        probe.why = "could not test for a seccomp listener";
        return probe;
    }
    if (int err = WEXITSTATUS(status); err != 0) {
        probe.available = false;
        probe.why = err == EBUSY || err == EPERM
                        ? "cordon already runs under a seccomp listener (cordon inside cordon, or a container "
                          "runtime that has one) and the kernel allows only one"
                        : std::string("a seccomp listener cannot be installed: ") + std::strerror(err);
    }
    return probe;
}

ExecListener::ExecListener(UniqueFd fd, ExecReadLimits limits) : fd_(std::move(fd)), limits_(limits) {
    struct seccomp_notif_sizes sizes {};
    if (sys_seccomp(SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0) {
        notif_size_ = std::max<size_t>(sizes.seccomp_notif, sizeof(struct seccomp_notif));
        resp_size_ = std::max<size_t>(sizes.seccomp_notif_resp, sizeof(struct seccomp_notif_resp));
    } else {
        notif_size_ = sizeof(struct seccomp_notif);
        resp_size_ = sizeof(struct seccomp_notif_resp);
    }
}

void ExecListener::respond(uint64_t id, int err, bool cont) {
    std::vector<char> buf(resp_size_, 0);
    auto* resp = reinterpret_cast<struct seccomp_notif_resp*>(buf.data());
    resp->id = id;
    resp->error = cont ? 0 : -err;
    resp->val = 0;
    resp->flags = cont ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
    // ENOENT: the process is gone (killed while we decided); nothing to answer.
    (void)retry_eintr([&] { return ::ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_SEND, resp); });
}

void ExecListener::allow(uint64_t id) {
    respond(id, 0, true);
}
void ExecListener::deny(uint64_t id, int err) {
    respond(id, err, false);
}

// One process_vm_readv, which the kernel allows exactly where it allows /proc/PID/mem (a
// ptrace attach check), without the open and close of that file per exec.
ssize_t read_mem(pid_t pid, uint64_t addr, char* buf, size_t len) {
    struct iovec local = {buf, len};
    struct iovec remote = {reinterpret_cast<void*>(addr), len};  // NOLINT(performance-no-int-to-ptr)
    return retry_eintr([&] { return ::process_vm_readv(pid, &local, 1, &remote, 1, 0); });
}

std::string read_link(const std::string& path) {
    std::array<char, 4096> buf{};
    ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
    return n > 0 && static_cast<size_t>(n) < buf.size() ? std::string(buf.data(), static_cast<size_t>(n)) : "";
}

bool ExecListener::still_waiting(uint64_t id) const {
    __u64 valid = id;
    return ::ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &valid) == 0;
}

pid_t jail_pid_of(pid_t pid) {
    auto status = read_file("/proc/" + std::to_string(pid) + "/status");
    if (!status) return 0;
    size_t at = status->find("\nNSpid:");
    if (at == std::string::npos) return 0;
    size_t end = status->find('\n', at + 1);
    std::string line = status->substr(at + 7, end - at - 7);
    size_t last = line.find_last_not_of(" \t");
    if (last == std::string::npos) return 0;
    size_t first = line.find_last_of(" \t", last);
    return static_cast<pid_t>(std::atoi(line.c_str() + (first == std::string::npos ? 0 : first + 1)));
}

bool special_path(const std::string& p) {
    return p.find("/proc") != std::string::npos || p.rfind("/dev", 0) == 0 || p.find("/dev/") != std::string::npos;
}

namespace {

void unreadable(ExecRequest& r, int err) {
    r.no_access = err == EACCES || err == EPERM;
    r.error = std::string("cannot read the process: ") + std::strerror(err);
}

// The program an execve runs, resolved once inside the jail's root. A path that names nothing
// there (a PATH search tries one such name per directory before it finds the program) sets
// MISSING; the cwd is read only when a relative path needs it.
void resolve_program(ExecRequest& r, const std::string& proc) {
    if (r.path.empty() || special_path(r.path)) return;
    if (r.path[0] != '/') {
        r.cwd = read_link(proc + "/cwd");
        if (r.cwd.empty() || r.cwd[0] != '/' || special_path(r.cwd)) return;
    }
    PathState state = PathState::Unknown;
    std::string real = resolve_in_root(r.root.get(), r.cwd, r.path, true, 0, &state);
    if (special_path(real)) return;
    if (state == PathState::Missing) {
        r.missing = true;
    } else if (state == PathState::Exists) {
        r.exe = std::move(real);
    }
}

// execveat(dirfd, path, ..., flags): the path joined to its dirfd; an empty path with
// AT_EMPTY_PATH runs dirfd itself.
void join_execveat_dirfd(ExecRequest& r, const seccomp_data& data, const std::string& proc) {
    const auto dirfd = static_cast<int>(data.args[0]);
    std::string base = dirfd == AT_FDCWD ? r.cwd : read_link(proc + "/fd/" + std::to_string(dirfd));
    if (r.path.empty()) {
        r.path = base;
    } else if (r.path[0] != '/') {
        r.path = base + "/" + r.path;
    }
}

// What the process asks, read from its memory and /proc/PID: only trusted once the id is still
// valid after.
void read_request(ExecRequest& r, const seccomp_data& data, const ExecReadLimits& limits) {
    const std::string proc = "/proc/" + std::to_string(r.pid);
    r.root.reset(::open((proc + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!r.root) return unreadable(r, errno);
    const bool at = data.nr == __NR_execveat;
    auto path = read_c_string(r.pid, data.args[at ? 1 : 0], limits.max_path_bytes);
    if (!path && (path.error().err == EPERM || path.error().err == EACCES)) return unreadable(r, path.error().err);
    if (path) r.path = std::move(*path);
    if (path && !at) resolve_program(r, proc);
    if (r.missing) return;
    if (r.cwd.empty()) r.cwd = read_link(proc + "/cwd");
    if (r.cwd.empty() || r.cwd[0] != '/') r.cwd = "/";
    auto argv = read_argv(r.pid, data.args[at ? 2 : 1], limits);
    if (!path || !argv) {
        const Error& e = !path ? path.error() : argv.error();
        r.error = e.err == E2BIG ? "its arguments exceed what cordon reads to check them" : e.message();
        return;
    }
    r.argv = std::move(*argv);
    if (at) join_execveat_dirfd(r, data, proc);
    // The jail's pid of the process: for paths through /proc or /dev/fd (reading it costs as much as the
    // rest of this function); the audit log asks for it itself.
    if (special_path(r.path) || special_path(r.cwd) || std::any_of(r.argv.begin(), r.argv.end(), special_path)) {
        r.jail_pid = jail_pid_of(r.pid);
    }
    if (!r.exe.empty()) return;  // resolve_program found it (a walk that never went through /proc)
    r.exe = resolve_in_root(r.root.get(), r.cwd, r.path, true, r.jail_pid);
    struct stat st {};
    if (::fstatat(r.root.get(), r.exe == "/" ? "." : r.exe.c_str() + 1, &st, 0) != 0) r.exe.clear();
}

}  // namespace

Result<std::optional<ExecRequest>> ExecListener::receive() {
    std::vector<char> buf(notif_size_, 0);
    auto* notif = reinterpret_cast<struct seccomp_notif*>(buf.data());
    if (retry_eintr([&] { return ::ioctl(fd_.get(), SECCOMP_IOCTL_NOTIF_RECV, notif); }) != 0) {
        // ENOENT: the process was killed before we took it.
        if (errno == ENOENT) return std::optional<ExecRequest>{};
        return sys_error("receive an exec notification");
    }
    ExecRequest r;
    r.id = notif->id;
    r.pid = static_cast<pid_t>(notif->pid);
    if (notif->data.nr == __NR_connect) {
        // Never let through: done by the supervisor, to the proxy only (proxy_connect.hpp).
        const int err = answer_connect(r.pid, notif->data, route_, [&] { return still_waiting(r.id); });
        respond(r.id, err, false);
        return std::optional<ExecRequest>{};
    }
    if (notif->data.nr != __NR_execve && notif->data.nr != __NR_execveat) {
        // The placeholder answers (the filter notifies nothing else): success only for a call
        // still waiting once judged, as the pid may have been reused meanwhile.
        if (is_placeholder_call(notif->data.nr) &&
            answer_placeholder_call(r.pid, notif->data, placeholders_) == PlaceholderAnswer::Succeed &&
            still_waiting(r.id)) {
            respond(r.id, 0, false);
            return std::optional<ExecRequest>{};
        }
        allow(r.id);
        return std::optional<ExecRequest>{};
    }
    read_request(r, notif->data, limits_);
    if (writable_) r.writable = &*writable_;
    if (r.missing) {
        // Nothing there to run: fail the exec as the kernel would, without judging or logging it.
        deny(r.id, ENOENT);
        return std::optional<ExecRequest>{};
    }
    // The process may have died and its pid been reused while we read: judge nothing then.
    if (!still_waiting(r.id)) return std::optional<ExecRequest>{};
    return std::optional<ExecRequest>(std::move(r));
}

bool ExecChecks::on_ready(short revents, BoundedRecords& denials) {
    if (!(revents & POLLIN)) {
        // Every process under the filter is gone.
        if (revents & (POLLHUP | POLLERR | POLLNVAL)) listener_.close();
        return false;
    }
    auto req = listener_.receive();
    if (!req) {
        listener_.close();
        return false;
    }
    if (!req->has_value()) return false;
    ExecRequest& r = **req;
    if (payload_pid_ == 0) payload_pid_ = r.pid;
    if (r.pid == payload_pid_) {
        if (r.no_access && !payload_execed_) as_payload(r);
        if (r.error.empty()) payload_execed_ = payload_execed_ || !r.no_access;
    }
    ExecVerdict v = gate_ && *gate_ ? (*gate_)(r) : ExecVerdict{};
    if (v.allow) {
        listener_.allow(r.id);
        return false;
    }
    if (!v.denial_json.empty()) denials.add(std::move(v.denial_json));
    // --on-deny kill: no answer at all. The exec waits, killably, until the supervisor has
    // ended the jail; an EACCES first would let the command go on for a moment.
    if (v.end_run) return true;
    listener_.deny(r.id, EACCES);
    return false;
}

void ExecChecks::as_payload(ExecRequest& r) const {
    r.error.clear();
    r.argv = payload_argv_;
    r.path = payload_argv_.empty() ? std::string() : payload_argv_[0];
    r.cwd = payload_cwd_;
    r.exe.clear();
}

bool send_with_fd(int sock, const void* msg, size_t len, int fd) {
    iovec iov{const_cast<void*>(msg), len};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (fd >= 0) {
        mh.msg_control = control;
        mh.msg_controllen = sizeof control;
        cmsghdr* c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    return retry_eintr([&] { return ::sendmsg(sock, &mh, MSG_NOSIGNAL); }) == static_cast<ssize_t>(len);
}

ssize_t recv_with_fd(int sock, void* msg, size_t len, int& fd) {
    fd = -1;
    iovec iov{msg, len};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    for (cmsghdr* c = n >= 0 ? CMSG_FIRSTHDR(&mh) : nullptr; c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int))) {
            std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
        }
    }
    return n;
}

// ---- resolving inside the jail's root ----

namespace {

bool is_number(const std::string& s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (const auto& p : parts) out += "/" + p;
    return out.empty() ? "/" : out;
}

}  // namespace

std::string resolve_in_root(int root, const std::string& cwd, const std::string& path, bool follow_last, pid_t jail_pid,
                            PathState* state) {
    std::vector<std::string> todo;  // components still to walk, last first
    auto push_path = [&todo](const std::string& p) {
        auto comps = path_components(p);
        for (auto it = comps.rbegin(); it != comps.rend(); ++it) todo.emplace_back(*it);
    };
    std::vector<std::string> done;
    push_path(path);
    if (path.empty() || path[0] != '/') {
        auto base = path_components(cwd);
        done.assign(base.begin(), base.end());
    }
    const bool trailing_slash = !path.empty() && path.back() == '/';
    const std::string self = jail_pid > 0 ? std::to_string(jail_pid) : "";
    int links = 0;
    bool resolving = true;                // false once a component does not exist: keep the rest as written
    PathState seen = PathState::Unknown;  // what the last step found
    bool via_proc = false;
    while (!todo.empty()) {
        std::string comp = std::move(todo.back());
        todo.pop_back();
        if (comp == ".") continue;
        if (comp == "..") {
            if (!done.empty()) done.pop_back();
            continue;
        }
        const bool last = todo.empty();
        if (!resolving || (last && !follow_last && !trailing_slash)) {
            if (resolving) seen = PathState::Unknown;
            done.push_back(std::move(comp));
            continue;
        }
        // /proc as the process sees it: its self links and its own root and cwd.
        // A process of the jail (itself, or another: judged as if it exists).
        const bool self_link = comp == "self" || comp == "thread-self";
        if (done.size() == 1 && done[0] == "proc" && (self_link || is_number(comp))) {
            via_proc = true;
            if (self_link && !self.empty()) {
                done.push_back(self);
            } else {
                done.push_back(std::move(comp));
            }
            continue;
        }
        const bool proc_entry = done.size() == 2 && done[0] == "proc" &&
                                (is_number(done[1]) || done[1] == "self" || done[1] == "thread-self");
        if (proc_entry && (comp == "root" || comp == "cwd")) {
            if (comp == "root") {
                done.clear();
                continue;
            }
            if (done[1] == self || done[1] == "self" || done[1] == "thread-self") {
                auto base = path_components(cwd);
                done.assign(base.begin(), base.end());
                continue;
            }
        }
        done.push_back(comp);
        std::string rel = join(done).substr(1);
        // One call tells all three: a link (its target), not a link (EINVAL), or nothing there.
        std::array<char, 4096> buf{};
        ssize_t n = ::readlinkat(root, rel.c_str(), buf.data(), buf.size() - 1);
        seen = n < 0 && errno == EINVAL   ? PathState::Exists
               : n < 0 && errno == ENOENT ? PathState::Missing
                                          : PathState::Unknown;
        if (seen == PathState::Exists) continue;
        if (n <= 0 || ++links > 40) {
            resolving = false;
            continue;
        }
        std::string target(buf.data(), static_cast<size_t>(n));
        done.pop_back();
        if (target[0] == '/') done.clear();
        push_path(target);
    }
    if (state) *state = via_proc ? PathState::Unknown : seen;
    return join(done);
}

}  // namespace cordon

// RepoWatch's watcher, a run's side (leftovers_watcher.hpp): where the watchers live, starting
// one, and the two questions a run asks it (the watcher itself: leftovers_watcher.cpp).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <utility>

#include "cordon/runtime_dir.hpp"
#include "leftovers_state.hpp"
#include "leftovers_watcher.hpp"

namespace cordon::watcher {

namespace wire {

Paths paths_in(const std::string& dir, const std::string& root) {
    const std::string base = dir + "/" + watch::workdir_key(root);
    return Paths{dir, base + ".sock", base + ".lock", base + ".failed"};
}

// The watchers' directory, in the private runtime directory (the caller's alone, so nothing
// else can have made its "watcher"); nullopt where there is none, or the socket's name would not
// fit in sun_path. Nothing is made here: a run that only asks costs no system call for it.
std::optional<Paths> paths_for(const std::string& root) {
    if (private_runtime_dir().empty()) return std::nullopt;
    Paths p = paths_in(private_runtime_dir() + "/watcher", root);
    if (p.sock.size() >= sizeof(sockaddr_un::sun_path)) return std::nullopt;
    return p;
}

bool off_by_env() {
    const char* v = std::getenv("CORDON_WATCHER");
    return v != nullptr && std::strcmp(v, "off") == 0;
}

}  // namespace wire

namespace {

using namespace wire;  // NOLINT(google-build-using-namespace): the protocol's own

class Reader {
public:
    explicit Reader(const std::string& s) : s_(s) {}
    bool u8(uint8_t& v) { return raw(&v, sizeof v); }
    bool u32(uint32_t& v) { return raw(&v, sizeof v); }
    bool u64(uint64_t& v) { return raw(&v, sizeof v); }
    bool str(std::string& v) {
        uint32_t n = 0;
        if (!u32(n) || s_.size() - pos_ < n) return false;
        v.assign(s_, pos_, n);
        pos_ += n;
        return true;
    }
    [[nodiscard]] bool done() const { return pos_ == s_.size(); }

private:
    bool raw(void* v, size_t n) {
        if (s_.size() - pos_ < n) return false;
        std::memcpy(v, s_.data() + pos_, n);
        pos_ += n;
        return true;
    }
    const std::string& s_;
    size_t pos_ = 0;
};

bool read_all(int fd, void* buf, size_t len) {
    auto* p = static_cast<char*>(buf);
    while (len > 0) {
        const ssize_t r = retry_eintr([&] { return ::recv(fd, p, len, 0); });
        if (r <= 0) return false;
        p += r;
        len -= static_cast<size_t>(r);
    }
    return true;
}

}  // namespace

std::optional<Client> Client::connect(const std::string& root, dev_t dev, ino_t ino) {
    if (off_by_env()) return std::nullopt;
    auto paths = paths_for(root);
    if (!paths) return std::nullopt;
    Client c;
    c.fd_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    struct sockaddr_un addr {};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, paths->sock.c_str(), paths->sock.size() + 1);
    if (!c.fd_ || ::connect(c.fd_.get(), reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0)
        return std::nullopt;
    struct ucred cred {};
    socklen_t len = sizeof cred;
    if (::getsockopt(c.fd_.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != ::geteuid())
        return std::nullopt;
    c.dev_ = dev;
    c.ino_ = ino;
    return c;
}

// Asks WHAT and reads the answer's body: false where the watcher lost events, is not this
// workdir's, or does not answer in time (it takes the queue to its end first: a run that made
// many changes gives it more to take).
bool Client::ask(char what, std::string& body) {
    const struct timeval limit { what == 'S' ? 2 : 10, 0 };
    (void)::setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    if (::send(fd_.get(), &what, 1, MSG_NOSIGNAL) != 1) return false;
    uint32_t magic = 0, status = 0;
    uint64_t dev = 0, ino = 0, size = 0;
    if (!read_all(fd_.get(), &magic, sizeof magic) || !read_all(fd_.get(), &status, sizeof status) ||
        !read_all(fd_.get(), &dev, sizeof dev) || !read_all(fd_.get(), &ino, sizeof ino) ||
        !read_all(fd_.get(), &size, sizeof size) || magic != kMagic || size > kMaxAnswer) {
        return false;
    }
    body.resize(size);
    if (!read_all(fd_.get(), body.data(), size)) return false;
    return status == 0 && dev == static_cast<uint64_t>(dev_) && ino == static_cast<uint64_t>(ino_);
}

bool Client::start(std::vector<Repo>& repos) {
    std::string body;
    if (!ask('S', body)) return false;
    Reader r(body);
    uint32_t count = 0;
    if (!r.u32(count) || count > kMaxRepos) return false;
    for (uint32_t k = 0; k < count; ++k) {
        Repo repo;
        uint8_t flags = 0;
        if (!r.u8(flags) || !r.str(repo.rel)) return false;
        repo.head = (flags & 1) != 0;
        repo.git = (flags & 2) != 0;
        repos.push_back(std::move(repo));
    }
    return r.done();
}

bool Client::finish(std::vector<Changed>& changed) {
    std::string body;
    if (!ask('F', body)) return false;
    Reader r(body);
    uint32_t count = 0;
    if (!r.u32(count)) return false;
    for (uint32_t k = 0; k < count; ++k) {
        Changed c;
        uint32_t n = 0;
        if (!r.str(c.rel)) return false;
        for (auto* list : {&c.made, &c.files}) {
            if (!r.u32(n) || n > kMaxLog) return false;
            list->resize(n);
            for (auto& name : *list) {
                if (!r.str(name)) return false;
            }
        }
        changed.push_back(std::move(c));
    }
    fd_.reset();
    return r.done();
}

void spawn(const std::string& root) {
    if (off_by_env()) return;
    auto paths = paths_for(root);
    if (!paths) return;
    (void)::mkdir(paths->dir.c_str(), 0700);
    struct stat st {};
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    if (::stat(paths->failed.c_str(), &st) == 0 && now.tv_sec - st.st_mtime < kFailedPause) return;
    {
        UniqueFd lock(::open(paths->lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!lock || ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) return;  // one runs (or starts)
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    if (posix_spawn_file_actions_init(&actions) != 0) return;
    if (posix_spawnattr_init(&attr) != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return;
    }
    (void)posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDWR, 0);
    (void)posix_spawn_file_actions_adddup2(&actions, 0, 1);
    (void)posix_spawn_file_actions_adddup2(&actions, 0, 2);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    (void)posix_spawnattr_setsigmask(&attr, &none);
    (void)posix_spawnattr_setsigdefault(&attr, &all);
    (void)posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    std::string arg0 = "cordon-repowatch", arg1 = root, arg2 = paths->dir;
    char* argv[] = {arg0.data(), arg1.data(), arg2.data(), nullptr};
    char* envp[] = {nullptr};
    pid_t pid = 0;
    (void)posix_spawn(&pid, "/proc/self/exe", &actions, &attr, argv, envp);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
}

}  // namespace cordon::watcher

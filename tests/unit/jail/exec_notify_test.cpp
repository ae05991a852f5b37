// Exec-time checks: reading argv from a process's memory within limits, and resolving paths
// inside a root the way the process sees them (src/jail/exec/exec_notify.cpp).
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cordon/exec_notify.hpp"
#include "cordon/fd.hpp"

using namespace cordon;

namespace {

uint64_t addr_of(const void* p) {
    return reinterpret_cast<uint64_t>(p);
}

struct SelfMem {
    pid_t pid = ::getpid();
};

}  // namespace

TEST_CASE("read_argv reads a NULL-terminated argv from process memory", "[exec_notify]") {
    SelfMem mem;
    std::string a = "rm", b = "-rf", c = "/";
    std::vector<const char*> argv{a.c_str(), b.c_str(), c.c_str(), nullptr};
    auto got = read_argv(mem.pid, addr_of(argv.data()), ExecReadLimits{});
    REQUIRE(got);
    CHECK(*got == std::vector<std::string>{"rm", "-rf", "/"});
    CHECK(read_argv(mem.pid, 0, ExecReadLimits{})->empty());
}

TEST_CASE("read_c_string crosses page boundaries and stops at the limit", "[exec_notify]") {
    SelfMem mem;
    std::string big(10000, 'x');  // spans at least two pages
    auto s = read_c_string(mem.pid, addr_of(big.c_str()), 20000);
    REQUIRE(s);
    CHECK(*s == big);
    auto over = read_c_string(mem.pid, addr_of(big.c_str()), 9999);
    REQUIRE_FALSE(over);
    CHECK(over.error().err == E2BIG);
    auto unmapped = read_c_string(mem.pid, 8, 100);
    REQUIRE_FALSE(unmapped);
}

TEST_CASE("read_argv enforces the count and size limits", "[exec_notify]") {
    SelfMem mem;
    std::vector<std::string> words(50, "word");
    std::vector<const char*> argv;
    for (const auto& w : words) argv.push_back(w.c_str());
    argv.push_back(nullptr);
    ExecReadLimits limits;
    limits.max_args = 49;
    auto r = read_argv(mem.pid, addr_of(argv.data()), limits);
    REQUIRE_FALSE(r);
    CHECK(r.error().err == E2BIG);
    limits.max_args = 50;
    CHECK(read_argv(mem.pid, addr_of(argv.data()), limits)->size() == 50);
    limits.max_total_bytes = 50 * 5 - 1;  // each "word" costs 5 bytes with its NUL
    CHECK_FALSE(read_argv(mem.pid, addr_of(argv.data()), limits));
    limits.max_total_bytes = 50 * 5;
    CHECK(read_argv(mem.pid, addr_of(argv.data()), limits));
    limits.max_arg_bytes = 3;
    CHECK_FALSE(read_argv(mem.pid, addr_of(argv.data()), limits));
}

TEST_CASE("resolve_in_root follows symlinks without leaving the root", "[exec_notify]") {
    namespace fs = std::filesystem;
    fs::path root = fs::temp_directory_path() / ("cordon-resolve-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "usr/bin");
    fs::create_directories(root / "home/me/project");
    fs::create_directories(root / "proc/42");
    fs::create_symlink("usr/bin", root / "bin");
    fs::create_symlink("/", root / "home/me/project/up");
    fs::create_symlink("../../..", root / "home/me/project/rel");
    fs::create_symlink("/usr/bin/busybox", root / "usr/bin/rm");
    fs::create_symlink("loop2", root / "loop1");
    fs::create_symlink("loop1", root / "loop2");
    { UniqueFd f(::open((root / "usr/bin/busybox").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0755)); }
    UniqueFd r(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(r.valid());
    const std::string cwd = "/home/me/project";
    CHECK(resolve_in_root(r.get(), cwd, "/bin/rm", true) == "/usr/bin/busybox");
    CHECK(resolve_in_root(r.get(), cwd, "/bin/rm", false) == "/usr/bin/rm");
    CHECK(resolve_in_root(r.get(), cwd, "up", false) == "/home/me/project/up");  // rm removes the link
    CHECK(resolve_in_root(r.get(), cwd, "up/", false) == "/");                   // rm -r up/ : the target
    CHECK(resolve_in_root(r.get(), cwd, "up/usr", false) == "/usr");
    CHECK(resolve_in_root(r.get(), cwd, "rel/usr", false) == "/usr");
    CHECK(resolve_in_root(r.get(), cwd, "../../../../../..", false) == "/");
    CHECK(resolve_in_root(r.get(), cwd, "missing/../x/./y", false) == "/home/me/project/x/y");
    CHECK(resolve_in_root(r.get(), cwd, "/proc/self/root/usr", false, 42) == "/usr");
    CHECK(resolve_in_root(r.get(), cwd, "/proc/42/root", true, 42) == "/");
    CHECK(resolve_in_root(r.get(), cwd, "/proc/self/cwd/..", false, 42) == "/home/me");
    CHECK(resolve_in_root(r.get(), cwd, "/proc/7/root/etc", false, 42) == "/etc");
    CHECK(resolve_in_root(r.get(), cwd, "/loop1/x", false) == "/loop1/x");  // a loop stops resolution

    // What the walk saw, as the exec checks use it to answer a PATH search's misses at once.
    const auto state = [&](const std::string& path, pid_t jail_pid = 0) {
        PathState s = PathState::Unknown;
        (void)resolve_in_root(r.get(), cwd, path, true, jail_pid, &s);
        return s;
    };
    CHECK(state("/bin/rm") == PathState::Exists);  // through two links to a file
    CHECK(state("/usr/bin") == PathState::Exists);
    CHECK(state("up/usr/bin/busybox") == PathState::Exists);
    CHECK(state("/usr/bin/cc") == PathState::Missing);
    CHECK(state("/nowhere/bin/cc") == PathState::Missing);         // a missing directory on the way
    CHECK(state("/nowhere/../usr/bin/rm") == PathState::Missing);  // as the kernel: ENOENT at "nowhere"
    CHECK(state("/loop1") == PathState::Unknown);                  // ELOOP: the kernel decides
    CHECK(state("/proc/self/root/usr/bin/rm", 42) == PathState::Unknown);
    CHECK(state("/") == PathState::Unknown);
    PathState last = PathState::Unknown;
    (void)resolve_in_root(r.get(), cwd, "/nowhere/cc", false, 0, &last);
    CHECK(last == PathState::Missing);
    (void)resolve_in_root(r.get(), cwd, "/bin/rm", false, 0, &last);
    CHECK(last == PathState::Unknown);  // the last link not followed: not looked at
    fs::remove_all(root);
}

TEST_CASE("the exec filter notifies execve and execveat only", "[exec_notify]") {
    auto f = exec_filter();
    REQUIRE(f.size() == 8);
    CHECK(f.back().k == 0x7fc00000U);  // SECCOMP_RET_USER_NOTIF
}

namespace {

// A child that installs the exec filter with a listener, hands the listener over, and execs
// /bin/true with ARGV0; its exit status is 0 when the exec ran, else the errno it got.
struct Execer {
    pid_t pid = -1;
    UniqueFd listener;
};

Execer start_execer(const char* argv0) {
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
    auto filter = exec_filter();
    sock_fprog prog{static_cast<unsigned short>(filter.size()), filter.data()};
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(sv[0]);
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(100);
        int fd = install_exec_listener(&prog);
        if (fd < 0) ::_exit(101);
        char byte = 0;
        if (!send_with_fd(sv[1], &byte, 1, fd)) ::_exit(102);
        ::close(fd);
        char* const argv[] = {const_cast<char*>(argv0), const_cast<char*>("-x"), nullptr};
        char* const envp[] = {nullptr};
        ::execve("/bin/true", argv, envp);
        ::_exit(errno);
    }
    ::close(sv[1]);
    Execer e;
    e.pid = pid;
    pollfd ready{sv[0], POLLIN, 0};
    char byte = 0;
    int fd = -1;
    if (::poll(&ready, 1, 5000) == 1 && recv_with_fd(sv[0], &byte, 1, fd) == 1) e.listener.reset(fd);
    ::close(sv[0]);
    return e;
}

int wait_exit(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("a listener sees each exec's path, argv and cwd, and its answer stands", "[exec_notify]") {
    for (bool allow : {true, false}) {
        Execer e = start_execer(allow ? "true" : "not-true");
        REQUIRE(e.listener.valid());
        ExecListener listener(std::move(e.listener));
        auto req = listener.receive();
        REQUIRE(req);
        REQUIRE(req->has_value());
        const ExecRequest& r = **req;
        CHECK(r.error.empty());
        CHECK(r.pid == e.pid);
        CHECK(r.path == "/bin/true");
        CHECK(r.argv == std::vector<std::string>{allow ? "true" : "not-true", "-x"});
        CHECK(r.cwd == std::filesystem::current_path().string());
        CHECK(r.exe == std::filesystem::canonical("/bin/true").string());
        if (allow) {
            listener.allow(r.id);
        } else {
            listener.deny(r.id, EACCES);
        }
        CHECK(wait_exit(e.pid) == (allow ? 0 : EACCES));
    }
}

TEST_CASE("a dead process's notification is not judged", "[exec_notify]") {
    Execer e = start_execer("true");
    REQUIRE(e.listener.valid());
    ExecListener listener(std::move(e.listener));
    // Wait until the exec is pending, then kill the process before receiving.
    pollfd p{listener.fd(), POLLIN, 0};
    REQUIRE(::poll(&p, 1, 5000) == 1);
    ::kill(e.pid, SIGKILL);
    wait_exit(e.pid);
    auto req = listener.receive();
    REQUIRE(req);
    CHECK_FALSE(req->has_value());
}

TEST_CASE("probe_exec_listener finds a listener available outside any filter", "[exec_notify]") {
    CHECK(probe_exec_listener().available);
}

TEST_CASE("the placeholder answers' filter notifies exactly their calls", "[exec_notify]") {
    CHECK(exec_filter(true, false).size() == 8);
    const auto dir = std::filesystem::temp_directory_path() / ("cordon-phcalls-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
    auto filter = exec_filter(false, true);
    sock_fprog prog{static_cast<unsigned short>(filter.size()), filter.data()};
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        // Each call as the kernel answers it: the listener lets every one go on.
        ::close(sv[0]);
        if (::chdir(dir.c_str()) != 0 || ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(100);
        int fd = install_exec_listener(&prog);
        char byte = 0;
        if (fd < 0 || !send_with_fd(sv[1], &byte, 1, fd)) ::_exit(101);
        ::close(fd);
        int f = ::open("f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        // The raw calls: libc may spell chmod as fchmodat, rmdir as unlinkat.
        bool good = f >= 0 && ::mkdir("d", 0755) == 0 && ::syscall(__NR_chmod, "d", 0700) == 0 &&
                    ::syscall(__NR_fchmod, f, 0600) == 0 && ::syscall(__NR_fchmodat, AT_FDCWD, "f", 0644) == 0 &&
                    ::syscall(__NR_unlinkat, AT_FDCWD, "f", 0) == 0 &&
                    ::syscall(__NR_unlinkat, AT_FDCWD, "d", AT_REMOVEDIR) == 0 && ::mkdir("e", 0755) == 0 &&
                    ::syscall(__NR_rmdir, "e") == 0 && ::syscall(__NR_rmdir, "e") != 0 && errno == ENOENT;
        ::_exit(good ? 0 : 102);
    }
    ::close(sv[1]);
    pollfd ready{sv[0], POLLIN, 0};
    char byte = 0;
    int fd = -1;
    REQUIRE(::poll(&ready, 1, 5000) == 1);
    REQUIRE(recv_with_fd(sv[0], &byte, 1, fd) == 1);
    ::close(sv[0]);
    UniqueFd listener(fd);
    std::vector<int> seen;
    std::vector<char> buf(4096), resp(4096);
    while (true) {
        pollfd p{listener.get(), POLLIN, 0};
        if (::poll(&p, 1, 5000) != 1 || !(p.revents & POLLIN)) break;
        std::fill(buf.begin(), buf.end(), 0);
        auto* n = reinterpret_cast<seccomp_notif*>(buf.data());
        if (::ioctl(listener.get(), SECCOMP_IOCTL_NOTIF_RECV, n) != 0) break;
        seen.push_back(n->data.nr);
        std::fill(resp.begin(), resp.end(), 0);
        auto* r = reinterpret_cast<seccomp_notif_resp*>(resp.data());
        r->id = n->id;
        r->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        (void)::ioctl(listener.get(), SECCOMP_IOCTL_NOTIF_SEND, r);
    }
    CHECK(wait_exit(pid) == 0);
    // chmod, fchmod, fchmodat, unlinkat(AT_REMOVEDIR), rmdir twice: not mkdir, open or a plain unlinkat.
    CHECK(seen == std::vector<int>{__NR_chmod, __NR_fchmod, __NR_fchmodat, __NR_unlinkat, __NR_rmdir, __NR_rmdir});
    std::filesystem::remove_all(dir);
}

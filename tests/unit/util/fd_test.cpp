// openat2_at (include/cordon/fd.hpp): how it takes PATH under a directory and with AT_FDCWD.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <iterator>
#include <vector>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "cordon/fd.hpp"

using namespace cordon;

namespace {

bool same_file(int a, int b) {
    struct stat sa {
    }, sb{};
    return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

TEST_CASE("openat2_at under a directory and with AT_FDCWD", "[fd]") {
    char tmpl[] = "/tmp/cordon-fd-test.XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    const std::string tmp = tmpl;
    REQUIRE(::mkdir((tmp + "/d").c_str(), 0700) == 0);
    UniqueFd dir(::open(tmp.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(dir);

    // Under a directory: leading slashes dropped, "" is the directory itself, close-on-exec.
    UniqueFd d(openat2_at(dir.get(), "//d", O_PATH | O_DIRECTORY, RESOLVE_BENEATH));
    REQUIRE(d);
    CHECK((::fcntl(d.get(), F_GETFD) & FD_CLOEXEC) != 0);
    UniqueFd self(openat2_at(dir.get(), "", O_PATH | O_DIRECTORY, RESOLVE_BENEATH));
    REQUIRE(self);
    CHECK(same_file(self.get(), dir.get()));

    // With AT_FDCWD: PATH as given, an absolute path from "/" and "" not a path.
    UniqueFd abs(openat2_at(AT_FDCWD, tmp + "/d", O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS));
    REQUIRE(abs);
    CHECK(same_file(abs.get(), d.get()));
    errno = 0;
    CHECK(openat2_at(AT_FDCWD, "", O_PATH, 0) == -1);
    CHECK(errno == ENOENT);

    ::rmdir((tmp + "/d").c_str());
    ::rmdir(tmp.c_str());
}

// The kernel fails a RESOLVE_BENEATH walk through ".." with EAGAIN whenever any rename on the
// system races it; the wrapper asks again, so a caller never sees that (RepoWatch took a .git
// file's target for unreachable under a loaded CI machine).
TEST_CASE("openat2_at through .. while another thread renames", "[fd]") {
    char tmpl[] = "/tmp/cordon-fd-race.XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    const std::string tmp = tmpl;
    REQUIRE(::mkdir((tmp + "/a").c_str(), 0700) == 0);
    REQUIRE(::mkdir((tmp + "/b").c_str(), 0700) == 0);
    UniqueFd f(::open((tmp + "/x").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    REQUIRE(f);
    UniqueFd dir(::open(tmp.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(dir);
    std::atomic<bool> stop{false};
    std::thread renamer([&] {
        const std::string x = tmp + "/x", y = tmp + "/y";
        while (!stop.load(std::memory_order_relaxed)) {
            (void)std::rename(x.c_str(), y.c_str());
            (void)std::rename(y.c_str(), x.c_str());
        }
    });
    int failed = 0, eagain = 0;
    for (int i = 0; i < 20000; ++i) {
        const int fd = openat2_at(dir.get(), "a/../b", O_PATH | O_DIRECTORY, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
        if (fd < 0) {
            ++failed;
            eagain += errno == EAGAIN;
        } else {
            ::close(fd);
        }
    }
    stop = true;
    renamer.join();
    CHECK(failed == 0);
    CHECK(eagain == 0);
    ::unlink((tmp + "/x").c_str());
    ::unlink((tmp + "/y").c_str());
    ::rmdir((tmp + "/a").c_str());
    ::rmdir((tmp + "/b").c_str());
    ::rmdir(tmp.c_str());
}

namespace {

// One call of openat2_at: PATH under the test's directory, or with AT_FDCWD (CWD; the working
// directory is the test's directory).
struct WalkCase {
    std::string path;
    int flags;
    uint64_t resolve;
    bool cwd = false;
};

// What openat2_at gives for CASE: the file's inode, or -errno.
long long outcome(int dir, const WalkCase& c) {
    errno = 0;
    const int fd = openat2_at(c.cwd ? AT_FDCWD : dir, c.path, c.flags, c.resolve);
    if (fd < 0) return -errno;
    struct stat st {};
    const long long ino = ::fstat(fd, &st) == 0 ? static_cast<long long>(st.st_ino) : -9999;
    ::close(fd);
    return ino;
}

// The outcomes of CASES in a child working in DIR, with openat2 refused (ENOSYS) when REFUSE.
std::vector<long long> outcomes_in_child(const std::string& dir, const std::vector<WalkCase>& cases, bool refuse) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return {};
    const pid_t pid = ::fork();
    if (pid == 0) {
        struct sock_filter prog[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog fprog = {static_cast<unsigned short>(std::size(prog)), prog};
        if (refuse && (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
                       ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) != 0))
            ::_exit(2);
        struct open_how how {};
        const bool refused = ::syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof how) == -1 && errno == ENOSYS;
        const int root = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (refused != refuse || root < 0 || ::chdir(dir.c_str()) != 0) ::_exit(3);
        for (const auto& c : cases) {
            const long long r = outcome(root, c);
            if (::write(fds[1], &r, sizeof r) != sizeof r) ::_exit(4);
        }
        ::_exit(0);
    }
    ::close(fds[1]);
    std::vector<long long> out;
    long long r = 0;
    while (pid > 0 && ::read(fds[0], &r, sizeof r) == sizeof r) out.push_back(r);
    ::close(fds[0]);
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
    return out;
}

}  // namespace

// Where openat2 is refused with ENOSYS (the outer jail's filter, for cordon inside cordon), the
// wrapper walks without symlinks by hand: a differential test against the kernel's openat2, in
// children, one of whose filter refuses openat2 as the jail's does.
TEST_CASE("openat2_at without openat2: the same answers as the kernel's", "[fd]") {
    char tmpl[] = "/tmp/cordon-fd-walk.XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    const std::string tmp = tmpl;
    for (const char* d : {"/a", "/a/b", "/out"}) REQUIRE(::mkdir((tmp + d).c_str(), 0700) == 0);
    UniqueFd f(::open((tmp + "/a/b/f").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    REQUIRE(f);
    REQUIRE(::symlink("b", (tmp + "/a/lb").c_str()) == 0);
    REQUIRE(::symlink("b/f", (tmp + "/a/lf").c_str()) == 0);
    REQUIRE(::symlink("/", (tmp + "/a/root").c_str()) == 0);
    std::string deep = tmp + "/a/deep", deep_rel = "deep";
    REQUIRE(::mkdir(deep.c_str(), 0700) == 0);
    for (int i = 0; i < 300; ++i) {
        deep += "/d";
        deep_rel += "/d";
        REQUIRE(::mkdir(deep.c_str(), 0700) == 0);
    }
    const uint64_t kBeneath = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    const uint64_t kInRoot = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS;
    const uint64_t kNoLinks = RESOLVE_NO_SYMLINKS;
    std::string dots;
    for (int i = 0; i < 2100; ++i) dots += "./";
    const std::vector<WalkCase> cases = {
        {"b", O_RDONLY | O_DIRECTORY, kBeneath},
        {"b/f", O_RDONLY, kBeneath},
        {"b/f", O_PATH, kBeneath},
        {"b/f/", O_RDONLY, kBeneath},
        {"lb", O_PATH | O_DIRECTORY, kBeneath},
        {"lb/f", O_PATH, kBeneath},
        {"lf", O_PATH, kBeneath},
        {"lf", O_RDONLY, kBeneath},
        {"root/etc", O_PATH, kBeneath},
        {"b/../b/f", O_RDONLY, kBeneath},
        {"b/..", O_PATH | O_DIRECTORY, kBeneath},
        {"..", O_PATH, kBeneath},
        {"b/../../out", O_PATH, kBeneath},
        {"b/missing/f", O_PATH, kBeneath},
        {"b/f/x", O_PATH, kBeneath},
        {"", O_PATH | O_DIRECTORY, kBeneath},
        {"./b/./f", O_PATH, kBeneath},
        {"../../..", O_PATH | O_DIRECTORY, kInRoot},
        {"b/../../b/f", O_PATH, kInRoot},
        {"lb", O_PATH, kInRoot},
        {"b//f", O_RDONLY, kInRoot},
        {"lb/", O_RDONLY, kBeneath},
        {"b/", O_PATH, kBeneath},
        // The caller's own O_NOFOLLOW: a symlink at the end is opened (O_PATH) or not a directory.
        {"lb", O_PATH | O_NOFOLLOW, kBeneath},
        {"lf", O_PATH | O_NOFOLLOW, kInRoot},
        {"lb", O_RDONLY | O_NOFOLLOW | O_DIRECTORY, kNoLinks},
        {"lb", O_PATH | O_NOFOLLOW | O_DIRECTORY, kNoLinks},
        // What openat2 refuses.
        {"b/f", O_PATH | O_RDWR, kBeneath},
        {"b/f", O_RDONLY, RESOLVE_BENEATH | RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS},
        {"new/", O_CREAT | O_WRONLY, kBeneath},
        {"b/", O_CREAT | O_WRONLY, kBeneath},
        // Deep and long paths.
        {deep_rel, O_PATH | O_DIRECTORY, kBeneath},
        {deep_rel + "/../../d", O_PATH | O_DIRECTORY, kBeneath},
        {dots + "b/f", O_PATH, kBeneath},
        // With AT_FDCWD: relative to the working directory; under IN_ROOT, "/" is that directory.
        {"b/f", O_RDONLY, kNoLinks, true},
        {"b/f", O_RDONLY, kBeneath, true},
        {"", O_RDONLY, kNoLinks, true},
        {"/etc/passwd", O_RDONLY, kInRoot, true},
        {"/../b/f", O_RDONLY, kInRoot, true},
        {"/etc/passwd", O_RDONLY, kBeneath, true},
        {tmp + "/a/b/f", O_RDONLY, kNoLinks, true},
        {tmp + "/a/lf", O_PATH, kNoLinks, true},
        {tmp + "/a/b/../../out", O_PATH, kNoLinks, true},
        // No RESOLVE flag: plain openat.
        {"b/f", O_RDONLY, 0},
        {"lf", O_RDONLY, 0},
    };
    const std::vector<long long> kernel = outcomes_in_child(tmp + "/a", cases, false);
    const std::vector<long long> walked = outcomes_in_child(tmp + "/a", cases, true);
    REQUIRE(kernel.size() == cases.size());
    REQUIRE(walked.size() == cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
        INFO("case " << i << ": path " << cases[i].path.substr(0, 80) << " flags " << cases[i].flags << " resolve "
                     << cases[i].resolve << (cases[i].cwd ? " AT_FDCWD" : ""));
        CHECK(walked[i] == kernel[i]);
    }
    CHECK(kernel[0] > 0);          // the tree is what the cases expect
    CHECK(kernel[6] == -ELOOP);    // a symlink at the end
    CHECK(kernel[11] == -EXDEV);   // out of BENEATH
    CHECK(kernel[23] > 0);         // the symlink itself
    CHECK(kernel[37] == -ENOENT);  // not the host's /etc/passwd
    (void)std::system(("rm -rf " + tmp).c_str());
}

TEST_CASE("read_file reads the whole file: regular at its size, empty, and /proc's (size 0)", "[fd]") {
    char tmpl[] = "/tmp/cordon-read-file.XXXXXX";
    const int fd = ::mkstemp(tmpl);
    REQUIRE(fd >= 0);
    ::close(fd);
    const std::string path = tmpl;
    for (size_t size : {size_t{0}, size_t{1}, size_t{8191}, size_t{8192}, size_t{23456}}) {
        std::string data(size, '\0');
        for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>('a' + i % 26);
        REQUIRE(write_file(path, data));
        auto got = read_file(path);
        REQUIRE(got);
        CHECK(*got == data);
    }
    ::unlink(tmpl);
    // A file whose size says 0 (procfs) is still read to its end.
    auto status = read_file("/proc/self/status");
    REQUIRE(status);
    CHECK(status->find("Name:") == 0);
    CHECK(status->find("VmPeak:") != std::string::npos);
    CHECK(!read_file("/nonexistent/cordon-read-file"));
}

TEST_CASE("fd_holds: the file's bytes exactly, across its 16 KiB steps, offset kept", "[fd]") {
    char tmpl[] = "/tmp/cordon-fd-holds.XXXXXX";
    const int fd = ::mkstemp(tmpl);
    REQUIRE(fd >= 0);
    std::string data(40000, '\0');  // three steps, the last a partial one
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + i % 26);
    REQUIRE(write_all(fd, data.data(), data.size()));
    REQUIRE(::lseek(fd, 5, SEEK_SET) == 5);
    CHECK(fd_holds(fd, data));
    CHECK(::lseek(fd, 0, SEEK_CUR) == 5);  // compared with pread: the offset is the caller's
    std::string other = data;
    other[39999] = '#';  // differs in the last byte of the last step
    CHECK_FALSE(fd_holds(fd, other));
    other = data;
    other[16384] = '#';  // the first byte of the second step
    CHECK_FALSE(fd_holds(fd, other));
    CHECK_FALSE(fd_holds(fd, std::string_view(data).substr(0, 39999)));  // a prefix: another size
    CHECK_FALSE(fd_holds(fd, data + "x"));
    ::close(fd);
    ::unlink(tmpl);
    const int dir = ::open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(dir >= 0);
    CHECK_FALSE(fd_holds(dir, ""));  // not a regular file
    ::close(dir);
}

// openat2_at (include/cordon/fd.hpp): how it takes PATH under a directory and with AT_FDCWD.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <unistd.h>

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

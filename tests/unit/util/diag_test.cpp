// The diagnostics sink (cordon/diag.hpp): what reaches stderr at each verbosity.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>

#include "cordon/diag.hpp"
#include "cordon/fd.hpp"

using namespace cordon;

namespace {

// What F writes on stderr (fd 2, for the while redirected to a memfd) at verbosity LEVEL.
std::string stderr_of(int level, const std::function<void()>& f) {
    UniqueFd mem(::memfd_create("diag_test", MFD_CLOEXEC));
    REQUIRE(mem);
    std::fflush(stderr);
    UniqueFd saved(::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3));
    REQUIRE(saved);
    REQUIRE(::dup2(mem.get(), STDERR_FILENO) == STDERR_FILENO);
    diag::set_verbosity(level);
    f();
    std::fflush(stderr);
    diag::set_verbosity(0);
    REQUIRE(::dup2(saved.get(), STDERR_FILENO) == STDERR_FILENO);
    std::string out;
    char buf[4096];
    ssize_t n = 0;
    off_t at = 0;
    while ((n = ::pread(mem.get(), buf, sizeof buf, at)) > 0) {
        out.append(buf, static_cast<size_t>(n));
        at += n;
    }
    return out;
}

void one_of_each() {
    diag::error("usage: cordon {} {}", "completion", 3);
    diag::warning("limits not applied: {}", "no cgroup");
    diag::note("waiting for {}, locked by another process", "/tmp/x");
    diag::verbose("removed from the environment:{}", " A B");
    diag::line(diag::Show::Normal, "timeout: the command ran longer than --timeout and was killed");
    diag::line(diag::Show::Verbose, "jail: profiles {}; {} mounts", "default", 12);
    diag::line(diag::Show::Always, "warning: {}, left by the command", ".git/hooks");
    diag::write_line(diag::Show::Always, "cordon: denied: rm -rf / (rule r1: no)");
    diag::write_line(diag::Show::Normal, "cordon-repowatch: a whole line");
    diag::error(make_error("--memory", "not a size"));
}

const std::string kAlways = "cordon: usage: cordon completion 3\n";
const std::string kAlwaysTail =
    "cordon: warning: .git/hooks, left by the command\n"
    "cordon: denied: rm -rf / (rule r1: no)\n";

}  // namespace

TEST_CASE("diag: -q keeps errors and what is always said", "[diag]") {
    CHECK(stderr_of(-1, one_of_each) == kAlways + kAlwaysTail + "cordon: --memory: not a size\n");
}

TEST_CASE("diag: the default adds notes and warnings", "[diag]") {
    CHECK(stderr_of(0, one_of_each) == kAlways +
                                           "cordon: warning: limits not applied: no cgroup\n"
                                           "cordon: note: waiting for /tmp/x, locked by another process\n"
                                           "cordon: timeout: the command ran longer than --timeout and was killed\n" +
                                           kAlwaysTail +
                                           "cordon-repowatch: a whole line\n"
                                           "cordon: --memory: not a size\n");
}

TEST_CASE("diag: -v adds the verbose lines", "[diag]") {
    const std::string all = kAlways +
                            "cordon: warning: limits not applied: no cgroup\n"
                            "cordon: note: waiting for /tmp/x, locked by another process\n"
                            "cordon: note: removed from the environment: A B\n"
                            "cordon: timeout: the command ran longer than --timeout and was killed\n"
                            "cordon: jail: profiles default; 12 mounts\n" +
                            kAlwaysTail +
                            "cordon-repowatch: a whole line\n"
                            "cordon: --memory: not a size\n";
    CHECK(stderr_of(1, one_of_each) == all);
    CHECK(stderr_of(2, one_of_each) == all);  // -vv says no more
}

TEST_CASE("diag: shown follows the verbosity set", "[diag]") {
    diag::set_verbosity(-1);
    CHECK((diag::shown(diag::Show::Always) && !diag::shown(diag::Show::Normal) && !diag::shown(diag::Show::Verbose)));
    diag::set_verbosity(0);
    CHECK((diag::shown(diag::Show::Normal) && !diag::shown(diag::Show::Verbose)));
    diag::set_verbosity(1);
    CHECK((diag::verbosity() == 1 && diag::shown(diag::Show::Verbose)));
    diag::set_verbosity(0);
}

TEST_CASE("diag: a long line and braces in its arguments are kept as they are", "[diag]") {
    const std::string long_host(6000, 'h');
    CHECK(stderr_of(0, [&] { diag::line(diag::Show::Normal, "network: refused {} ({})", long_host, "{x}"); }) ==
          "cordon: network: refused " + long_host + " ({x})\n");
}

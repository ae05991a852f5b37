// cordon check / cordon policy test: arguments and exit statuses (0 allow, 126 deny, 125 error).
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdlib>

#include "cordon/check_cmd.hpp"
#include "test_files.hpp"

using namespace cordon;

namespace {

std::string default_toml() {
    return cordon::test::source_dir() + "/policies/default.toml";
}

}  // namespace

TEST_CASE("cordon check: decisions become exit statuses", "[policy][cli]") {
    const std::string p = default_toml();
    CHECK(main_check({"--policy", p, "-c", "ls -la"}) == 0);
    CHECK(main_check({"--policy", p, "-c", "rm -rf /"}) == 126);
    CHECK(main_check({"--policy=" + p, "--json", "--", "sudo", "rm", "-rf", "/"}) == 126);
    CHECK(main_check({"--policy", p, "echo", "$(rm -rf /)"}) == 0);  // argv: data, not shell text
    CHECK(main_check({"--policy", p, "--", "-c"}) == 0);             // after --, a command named -c
    CHECK(main_check({"--no-policy", "-c", "rm -rf /"}) == 0);
    CHECK(main_check({"--help"}) == 0);
}

TEST_CASE("cordon check: deferral by default, --static for the strict answer", "[policy][cli]") {
    const std::string p = default_toml();
    CHECK(main_check({"--policy", p, "-c", "rm -rf \"$BUILD_DIR\""}) == 0);
    CHECK(main_check({"--policy", p, "--static", "-c", "rm -rf \"$BUILD_DIR\""}) == 126);
    CHECK(main_check({"--policy", p, "--json", "-c", "eval \"$x\""}) == 0);
    CHECK(main_check({"--policy", p, "--static", "--json", "-c", "eval \"$x\""}) == 126);
    CHECK(main_check({"--policy", p, "-c", "rm -rf \"$X\"; rm -rf /"}) == 126);  // certain: denied at once
    CHECK(main_check({"--policy", p, "--static", "--", "rm", "-rf", "/tmp/x"}) == 0);
}

namespace {

// A temporary file holding TEXT; removed with the object.
struct TempFile {
    std::string path = "/tmp/cordon-batch-XXXXXX";
    explicit TempFile(const std::string& text) {
        int fd = ::mkstemp(path.data());
        REQUIRE(fd >= 0);
        REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
        ::close(fd);
    }
    ~TempFile() { ::unlink(path.c_str()); }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
};

}  // namespace

TEST_CASE("cordon check --batch: one script a record, denied if any is", "[policy][cli]") {
    const std::string p = default_toml();
    TempFile allowed("ls -la\n\ngit status\nmake -j2");  // an empty line and no final newline
    CHECK(main_check({"--policy", p, "--batch", allowed.path}) == 0);
    TempFile one_denied("ls\nrm -rf /\necho done\n");
    CHECK(main_check({"--policy", p, "--batch", one_denied.path}) == 126);
    CHECK(main_check({"--policy", p, "--json", "--batch=" + one_denied.path}) == 126);
    TempFile deferred("rm -rf \"$BUILD_DIR\"\n");
    CHECK(main_check({"--policy", p, "--batch", deferred.path}) == 0);
    CHECK(main_check({"--policy", p, "--static", "--batch", deferred.path}) == 126);
    // -z: a script may hold newlines; without -z the second line is a script of its own.
    TempFile multiline(std::string("echo a\nrm -rf /\0ls\0", 19));
    CHECK(main_check({"--policy", p, "-z", "--batch", multiline.path}) == 126);
    TempFile nul_split(std::string("cat <<E\nrm -rf /\nE\0", 19));  // a here-document is data
    CHECK(main_check({"--policy", p, "-z", "--batch", nul_split.path}) == 0);
    CHECK(main_check({"--policy", p, "--batch", nul_split.path}) == 126);  // its second line a command
}

TEST_CASE("cordon check: usage errors are 125", "[policy][cli]") {
    const std::string p = default_toml();
    CHECK(main_check({}) == 125);
    CHECK(main_check({"--policy", p}) == 125);
    CHECK(main_check({"--policy"}) == 125);
    CHECK(main_check({"-c"}) == 125);
    CHECK(main_check({"--bogus", "-c", "ls"}) == 125);
    CHECK(main_check({"--no-policy", "--policy", p, "-c", "ls"}) == 125);
    CHECK(main_check({"--policy", p, "-c", "ls", "extra"}) == 125);
    CHECK(main_check({"--policy", "/nonexistent/x.toml", "-c", "ls"}) == 125);
    CHECK(main_check({"--policy", p, "--batch", "/nonexistent/batch"}) == 125);
    CHECK(main_check({"--policy", p, "--batch"}) == 125);
    CHECK(main_check({"--policy", p, "--batch", ""}) == 125);
    CHECK(main_check({"--policy", p, "--batch", "/dev/null", "-c", "ls"}) == 125);
    CHECK(main_check({"--policy", p, "--batch", "/dev/null", "--", "ls"}) == 125);
    CHECK(main_check({"--policy", p, "-z", "-c", "ls"}) == 125);
}

TEST_CASE("cordon policy test", "[policy][cli]") {
    CHECK(main_policy({"test", default_toml()}) == 0);
    CHECK(main_policy({"test", "/nonexistent/x.toml"}) == 125);
    CHECK(main_policy({}) == 125);
    CHECK(main_policy({"test"}) == 125);
    CHECK(main_policy({"frobnicate"}) == 125);
}

TEST_CASE("cordon policy test: a failing example is status 1", "[policy][cli]") {
    char path[] = "/tmp/cordon-cli-XXXXXX.toml";
    int fd = ::mkstemps(path, 5);
    REQUIRE(fd >= 0);
    std::string text = R"([[rule]]
id = "r"
decision = "deny"
reason = "x"
program = "curl"
must-match = ["wget x"]
must-not-match = ["ls"]
)";
    REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    ::close(fd);
    CHECK(main_policy({"test", path}) == 1);
    CHECK(main_check({"--policy", path, "-c", "ls"}) == 125);  // loading runs the examples too
    ::unlink(path);
}

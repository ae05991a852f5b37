// The lexical path helpers (include/cordon/paths.hpp), at their edges: "/", a trailing '/',
// names that share a prefix, relative paths; and real_path against realpath(3).
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/paths.hpp"

using namespace cordon;
using Views = std::vector<std::string_view>;

TEST_CASE("path_at_or_under and path_under", "[paths]") {
    CHECK(path_at_or_under("/a", "/a"));
    CHECK(path_at_or_under("/a/b", "/a"));
    CHECK_FALSE(path_at_or_under("/ab", "/a"));  // a shared prefix is not a parent
    CHECK_FALSE(path_at_or_under("/a", "/a/b"));
    CHECK(path_at_or_under("/", "/"));
    CHECK(path_at_or_under("/a", "/"));  // "/" holds every path
    CHECK_FALSE(path_at_or_under("a", "/"));
    CHECK_FALSE(path_at_or_under("", "/a"));

    CHECK(path_under("/a/b", "/a"));
    CHECK(path_under("/a/b/c", "/a"));
    CHECK_FALSE(path_under("/a", "/a"));
    CHECK_FALSE(path_under("/ab", "/a"));
    CHECK(path_under("/a", "/"));
    CHECK_FALSE(path_under("/", "/"));
}

TEST_CASE("path_parent and path_basename", "[paths]") {
    CHECK(path_parent("/a/b") == "/a");
    CHECK(path_parent("/a") == "/");
    CHECK(path_parent("/") == "/");
    CHECK(path_parent("a") == "/");
    CHECK(path_parent("//a") == "/");
    CHECK(path_parent("/a/b/") == "/a/b");  // lexical: what precedes the last '/'

    CHECK(path_basename("/a/b") == "b");
    CHECK(path_basename("/a") == "a");
    CHECK(path_basename("a") == "a");
    CHECK(path_basename("/").empty());
    CHECK(path_basename("/a/").empty());
    CHECK(path_basename("").empty());
}

TEST_CASE("path_components", "[paths]") {
    CHECK(path_components("/a/b") == Views{"a", "b"});
    CHECK(path_components("a/b") == Views{"a", "b"});
    CHECK(path_components("//a//b/") == Views{"a", "b"});
    CHECK(path_components("/").empty());
    CHECK(path_components("").empty());
    CHECK(path_components(".git/hooks") == Views{".git", "hooks"});
}

// real_path answers as realpath(3) does, for every kind of path it meets: a chain of symlinks
// (relative, absolute, to a directory, dangling), "..", a relative path, a missing component,
// a file used as a directory.
TEST_CASE("real_path agrees with realpath(3)", "[paths]") {
    char tmpl[] = "/tmp/cordon-real-path-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    const std::string base = tmpl;
    REQUIRE(::mkdir((base + "/dir").c_str(), 0755) == 0);
    REQUIRE(::mkdir((base + "/dir/sub").c_str(), 0755) == 0);
    std::FILE* f = std::fopen((base + "/dir/file").c_str(), "w");
    REQUIRE(f != nullptr);
    std::fclose(f);
    REQUIRE(::symlink("dir", (base + "/rel").c_str()) == 0);
    REQUIRE(::symlink((base + "/dir/sub").c_str(), (base + "/abs").c_str()) == 0);
    REQUIRE(::symlink("rel/sub/../file", (base + "/chain").c_str()) == 0);
    REQUIRE(::symlink("nowhere", (base + "/dangling").c_str()) == 0);
    const std::string cases[] = {base,
                                 base + "/dir",
                                 base + "/rel",
                                 base + "/rel/sub",
                                 base + "/abs",
                                 base + "/abs/..",
                                 base + "/chain",
                                 base + "/dangling",
                                 base + "/missing",
                                 base + "/missing/x",
                                 base + "/dir/file/x",
                                 base + "//dir/./sub/",
                                 "/",
                                 "."};
    for (const std::string& p : cases) {
        INFO(p);
        char want[PATH_MAX], got[PATH_MAX];
        errno = 0;
        const bool expect = ::realpath(p.c_str(), want) != nullptr;
        const int expect_errno = errno;
        errno = 0;
        const bool have = real_path(p, got);
        CHECK(have == expect);
        if (expect && have) CHECK(std::string(got) == std::string(want));
        if (!expect && !have) CHECK(errno == expect_errno);
    }
    for (const char* name : {"chain", "dangling", "abs", "rel", "dir/file", "dir/sub", "dir"}) {
        (void)::unlink((base + "/" + name).c_str());
        (void)::rmdir((base + "/" + name).c_str());
    }
    CHECK(::rmdir(base.c_str()) == 0);
}

TEST_CASE("unescape_mountinfo undoes the kernel's \\ooo escapes and nothing else", "[paths]") {
    CHECK(unescape_mountinfo("/mnt/plain") == "/mnt/plain");
    CHECK(unescape_mountinfo("/mnt/my\\040dir") == "/mnt/my dir");
    CHECK(unescape_mountinfo("/a\\011b\\012c\\134d") == "/a\tb\nc\\d");
    CHECK(unescape_mountinfo("/end\\040") == "/end ");        // an escape that ends the field
    CHECK(unescape_mountinfo("/short\\04") == "/short\\04");  // too short to be one: kept
    CHECK(unescape_mountinfo("/not\\9ab") == "/not\\9ab");    // not octal: kept
    CHECK(unescape_mountinfo("/not\\0a7") == "/not\\0a7");
    CHECK(unescape_mountinfo("") == "");
}

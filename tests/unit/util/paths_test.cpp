// The lexical path helpers (include/cordon/paths.hpp), at their edges: "/", a trailing '/',
// names that share a prefix, relative paths.
#include <catch2/catch.hpp>

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

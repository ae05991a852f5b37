// wildcard_match agrees with fnmatch(3) (no flags) on every pattern and name below.
#include <catch2/catch.hpp>
#include <fnmatch.h>

#include <string>
#include <vector>

#include "cordon/glob.hpp"

TEST_CASE("wildcard_match is fnmatch without flags", "[glob]") {
    const std::vector<std::string> patterns = {
        "", "*", "?", "**", "*_TOKEN", "*_TOKEN_*", "*SECRET_KEY*", "AWS_*", "GITHUB_TOKEN", "a?c", "*a*b*c*",
        "*.toml", "[A-Z]*", "x\\*y", "a*", "*a", "a*a", "*/*", "[!a]*", "??", "*?*",
    };
    const std::vector<std::string> names = {
        "", "a", "abc", "GITHUB_TOKEN", "MY_TOKEN", "MY_TOKEN_2", "TOKEN", "_TOKEN", "AWS_SECRET_KEY_ID", "AWS_",
        "aXbYc", "acb", "x*y", "xzy", "aa", "aaa", "a/b", "p.toml", "HOME", "ab", "ba", "SECRET_KEY",
    };
    for (const auto& p : patterns) {
        for (const auto& n : names) {
            INFO("pattern '" << p << "' name '" << n << "'");
            CHECK(cordon::wildcard_match(p, n) == (::fnmatch(p.c_str(), n.c_str(), 0) == 0));
        }
    }
}

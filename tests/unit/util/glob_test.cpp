// wildcard_match agrees with fnmatch(3) (no flags) on every pattern and name below.
#include <fnmatch.h>
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cordon/glob.hpp"

TEST_CASE("wildcard_match is fnmatch without flags", "[glob]") {
    const std::vector<std::string> patterns = {
        "",
        "*",
        "?",
        "**",
        "*_TOKEN",
        "*_TOKEN_*",
        "*SECRET_KEY*",
        "AWS_*",
        "GITHUB_TOKEN",
        "a?c",
        "*a*b*c*",
        "*.toml",
        "[A-Z]*",
        "x\\*y",
        "a*",
        "*a",
        "a*a",
        "*/*",
        "[!a]*",
        "??",
        "*?*",
        "*a*a*",
        "a*b*a",
        "*?B*",
        "?*",
        "*??",
        "ab*ba",
        "*aa*",
        "a**b",
        "*_*_*",
        "MY*TOKEN*2",
        "*PASSWORD*",
        "*PASSWD*",
        "*\xff*",
        "*A*\x81*",
        "*_AUTH_TOKEN*",
    };
    const std::vector<std::string> names = {
        "",
        "a",
        "abc",
        "GITHUB_TOKEN",
        "MY_TOKEN",
        "MY_TOKEN_2",
        "TOKEN",
        "_TOKEN",
        "AWS_SECRET_KEY_ID",
        "AWS_",
        "aXbYc",
        "acb",
        "x*y",
        "xzy",
        "aa",
        "aaa",
        "a/b",
        "p.toml",
        "HOME",
        "ab",
        "ba",
        "SECRET_KEY",
        "aba",
        "abba",
        "aaba",
        "abab",
        "xBy",
        "B",
        "a_b_c",
        "__",
        "MY_TOKEN_TOKEN_2",
        "abbba",
        "DB_PASSWORD",
        "PASSWD_FILE",
        "PATH",
        "x\xffy",
        "A\x81",
        "\x81"
        "A",
        "Aa\xc1",
        "GH_AUTH_TOKEN_X",
    };
    for (const auto& p : patterns) {
        for (const auto& n : names) {
            INFO("pattern '" << p << "' name '" << n << "'");
            const bool expected = ::fnmatch(p.c_str(), n.c_str(), 0) == 0;
            CHECK(cordon::wildcard_match(p, n) == expected);
            CHECK(cordon::Wildcard(p).matches(n, cordon::Wildcard::chars_of(n)) == expected);
        }
    }
}

TEST_CASE("a Wildcard kept in a growing vector still matches (it owns its pieces)", "[glob]") {
    std::vector<cordon::Wildcard> pats;
    for (const char* p : {"*_TOKEN", "AWS_*", "*SECRET_KEY*", "a?c", "*a*b*", "x"}) pats.emplace_back(p);
    CHECK(pats[0].matches("GH_TOKEN"));
    CHECK_FALSE(pats[0].matches("TOKEN_GH"));
    CHECK(pats[1].matches("AWS_REGION"));
    CHECK(pats[2].matches("MY_SECRET_KEY_ID"));
    CHECK(pats[3].matches("abc"));
    CHECK(pats[4].matches("xaxbx"));
    CHECK_FALSE(pats[4].matches("xbxax"));
    CHECK(pats[5].matches("x"));
}

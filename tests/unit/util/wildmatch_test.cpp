// git_wildmatch (include/cordon/wildmatch.hpp) on the rules where git's wildmatch differs from
// fnmatch(3) and from a plain "**": each expectation below is what git 2.39 answers for the
// same includeIf condition (t_git_include_diff checks many more against the real git).
#include <catch2/catch.hpp>

#include <string>

#include "cordon/wildmatch.hpp"

namespace {

bool wm(const std::string& pattern, const std::string& text, bool fold = false) {
    size_t steps = 100000;
    return cordon::git_wildmatch(pattern, text, fold, steps);
}

}  // namespace

TEST_CASE("'*' and '?' stay within one directory's name", "[wildmatch]") {
    CHECK(wm("a*c", "abc"));
    CHECK_FALSE(wm("a*c", "ab/c"));
    CHECK(wm("a?c", "abc"));
    CHECK_FALSE(wm("a?c", "a/c"));
    CHECK(wm("*/c", "ab/c"));
    CHECK_FALSE(wm("*", "a/b"));
    CHECK(wm("a/*", "a/b"));
}

TEST_CASE("\"**\" crosses '/' only as a whole path component", "[wildmatch]") {
    CHECK(wm("**/c", "a/b/c"));
    CHECK(wm("**/c", "c"));  // no directory at all
    CHECK(wm("a/**/c", "a/c"));
    CHECK(wm("a/**/c", "a/x/y/c"));
    CHECK(wm("a/**", "a/x/y"));
    CHECK(wm("**", "a/b"));
    // Not a whole component: one '*'. (The differential test found these.)
    CHECK_FALSE(wm("featu**i*", "feature/Fix-42.b"));
    CHECK_FALSE(wm("feature**", "feature/Fix-42.b"));
    CHECK(wm("feature**", "feature-x"));
    CHECK_FALSE(wm("/tmp/cordon-**/it/x", "/tmp/cordon-it/x"));
    CHECK_FALSE(wm("**/w/incd****v2/R", "/w/incdiff/Proj.v2/R"));
    CHECK_FALSE(wm("a**/c", "a/b/c"));
    CHECK_FALSE(wm("a/**c", "a/b/c"));
    CHECK(wm("a/**c", "a/bc"));
}

TEST_CASE("classes: negation, ranges, names, ']' first, never '/'", "[wildmatch]") {
    CHECK(wm("[ab]c", "bc"));
    CHECK(wm("[!a]c", "bc"));
    CHECK(wm("[^a]c", "bc"));
    CHECK_FALSE(wm("[!a]c", "ac"));
    CHECK(wm("[a-c]", "b"));
    CHECK(wm("[]]", "]"));
    CHECK(wm("[!]]", "a"));
    CHECK(wm("[a-]", "-"));
    CHECK(wm("[[:digit:]]x", "4x"));
    CHECK_FALSE(wm("[[:alpha:]]", "4"));
    CHECK(wm("[[:punct:]]", "."));
    CHECK_FALSE(wm("[!a]", "/"));
    CHECK_FALSE(wm("[/]", "/"));
    CHECK_FALSE(wm("[ab", "a"));         // not closed
    CHECK_FALSE(wm("*[ab", "xa"));       // not closed, behind a star
    CHECK_FALSE(wm("[[:nope:]]", "a"));  // a name git does not know
    CHECK(wm("[[:x]", ":"));             // no ":]": '[' and the rest are members
}

TEST_CASE("escapes, and a trailing backslash", "[wildmatch]") {
    CHECK(wm("a\\*c", "a*c"));
    CHECK_FALSE(wm("a\\*c", "abc"));
    CHECK(wm("\\a", "a"));
    CHECK_FALSE(wm("a\\", "a\\"));
    CHECK_FALSE(wm("a\\", "a"));
}

TEST_CASE("case folding as gitdir/i has it", "[wildmatch]") {
    CHECK(wm("ABC", "abc", true));
    CHECK(wm("a*C", "Abc", true));
    CHECK_FALSE(wm("ABC", "abc"));
    // An escaped character and a class's single member compare as written...
    CHECK_FALSE(wm("\\A", "a", true));
    CHECK_FALSE(wm("\\A", "A", true));
    CHECK(wm("\\a", "A", true));
    CHECK_FALSE(wm("[A]", "a", true));
    // ... ranges and [:upper:] fold.
    CHECK(wm("[A-Z]", "a", true));
    CHECK(wm("[[:upper:]]", "a", true));
    CHECK_FALSE(wm("[[:upper:]]", "a"));
}

TEST_CASE("a pathological pattern ends within its step budget", "[wildmatch]") {
    std::string pattern, text;
    for (int i = 0; i < 30; ++i) pattern += "**a";
    pattern += "b";
    text.assign(200, 'a');
    size_t steps = 100000;
    CHECK_FALSE(cordon::git_wildmatch(pattern, text, false, steps));
}

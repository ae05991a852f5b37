// What the supervisor keeps of what the jail does (cordon/bounds.hpp).
#include <catch2/catch.hpp>

#include "cordon/bounds.hpp"

using namespace cordon;

TEST_CASE("clip_text keeps what fits and marks what it cuts", "[bounds]") {
    CHECK(clip_text("short", 16) == "short");
    CHECK(clip_text(std::string(16, 'a'), 16) == std::string(16, 'a'));
    const std::string cut = clip_text(std::string(1000, 'a'), 32);
    CHECK(cut.size() <= 32);
    CHECK(cut == std::string(32 - 15, 'a') + "...[1000 bytes]");
    // A MAX smaller than the marker: the start alone.
    CHECK(clip_text(std::string(1000, 'a'), 4) == "aaaa");
}

TEST_CASE("clip_text never cuts inside a UTF-8 sequence", "[bounds]") {
    // "ü" is two bytes, "€" three: a cut that would split one keeps neither byte of it.
    const std::string text = "ab" + std::string("\xE2\x82\xAC") + std::string(100, 'x');
    for (size_t max = 16; max <= 20; ++max) {
        const std::string cut = clip_text(text, max);
        CHECK(cut.size() <= max);
        const std::string start = cut.substr(0, cut.find("...["));
        CHECK((start == "ab" || start == "ab\xE2\x82\xAC" || start.rfind("ab\xE2\x82\xAC", 0) == 0));
    }
    CHECK(clip_text("\xC3\xBC\xC3\xBC", 3) == "\xC3\xBC");
    // Not UTF-8 at all (continuation bytes only): cut at MAX.
    CHECK(clip_text(std::string(10, '\x80'), 5) == std::string(5, '\x80'));
}

TEST_CASE("clip_argv keeps a small argv as it is", "[bounds]") {
    const std::vector<std::string> argv{"rm", "-rf", "/"};
    ArgvRecord r = clip_argv(argv, kRecordArgv);
    CHECK(r.argv == argv);
    CHECK_FALSE(r.truncated);
    CHECK(r.argc == 3);
    CHECK(r.bytes == 3 + 4 + 2);
}

TEST_CASE("clip_argv bounds words, each word and the total", "[bounds]") {
    const ArgvBounds b{4, 10, 30};
    SECTION("too many words: the first ones, the count of all") {
        std::vector<std::string> argv(1000, "w");
        ArgvRecord r = clip_argv(argv, b);
        CHECK(r.argv.size() == 4);
        CHECK(r.truncated);
        CHECK(r.argc == 1000);
        CHECK(r.bytes == 2000);
    }
    SECTION("a long word is cut to the word bound") {
        ArgvRecord r = clip_argv({"rm", std::string(1 << 20, 'x')}, b);
        REQUIRE(r.argv.size() == 2);
        CHECK(r.argv[0] == "rm");
        CHECK(r.argv[1].size() <= 10);
        CHECK(r.truncated);
        CHECK(r.bytes == 3 + (1 << 20) + 1);
    }
    SECTION("the total stops what the words would add up to") {
        ArgvRecord r =
            clip_argv({std::string(9, 'a'), std::string(9, 'b'), std::string(9, 'c'), std::string(9, 'd')}, b);
        size_t total = 0;
        for (const auto& w : r.argv) total += w.size() + 1;
        CHECK(total <= 30);
        CHECK(r.truncated);
        CHECK(r.argv[0] == std::string(9, 'a'));
        CHECK(r.argv[2] == std::string(9, 'c'));
    }
}

TEST_CASE("the record bounds hold for the largest argv the kernel passes", "[bounds]") {
    // 4 MiB of argv in 32 words of 128 KiB (MAX_ARG_STRLEN).
    std::vector<std::string> argv(32, std::string(128 * 1024, 'z'));
    for (const ArgvBounds& b : {kRecordArgv, kAuditArgv}) {
        ArgvRecord r = clip_argv(argv, b);
        size_t total = 0;
        for (const auto& w : r.argv) {
            CHECK(w.size() <= b.max_word_bytes);
            total += w.size() + 1;
        }
        CHECK(total <= b.max_total_bytes);
        CHECK(r.argv.size() <= b.max_words);
        CHECK(r.truncated);
        CHECK(r.bytes == 32 * (128 * 1024 + 1));
    }
}

TEST_CASE("BoundedRecords keeps the first ones and counts the rest", "[bounds]") {
    BoundedRecords recs(3);
    for (int i = 0; i < 10; ++i) CHECK(recs.add(std::to_string(i)) == (i < 3));
    CHECK(recs.kept() == std::vector<std::string>{"0", "1", "2"});
    CHECK(recs.dropped() == 7);
}

TEST_CASE("LineBudget lets the first lines through and counts the rest", "[bounds]") {
    LineBudget budget(2);
    CHECK(budget.take());
    CHECK(budget.take());
    CHECK_FALSE(budget.take());
    CHECK_FALSE(budget.take());
    CHECK(budget.held() == 2);
}

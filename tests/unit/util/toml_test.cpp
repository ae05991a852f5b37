// parse_toml: toml++ never sees the characters it mishandles, and strings come back intact.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "cordon/toml.hpp"

using namespace cordon;

TEST_CASE("toml shield: the mapping round-trips and avoids the bad ranges", "[toml]") {
    // é U+00E9, Cyrillic Ж U+0416, 〜 U+301C, ﻼ U+FEFC: all in ranges toml++ 3.3 mishandles.
    std::string text = "d = \"caf\xc3\xa9 \xd0\x96 \xe3\x80\x9c \xef\xbb\xbc\"\n";
    auto shielded = shield_unicode(text);
    REQUIRE(shielded);
    CHECK(shielded->find("\xc3\xa9") == std::string::npos);
    CHECK(unshield_unicode(*shielded) == text);
    // Characters outside the ranges, and ASCII, are untouched.
    CHECK(*shield_unicode("a \xe2\x80\x94 b \xf0\x9f\x99\x82") == "a \xe2\x80\x94 b \xf0\x9f\x99\x82");
    // Text already using the private range cordon borrows is refused rather than corrupted.
    CHECK_FALSE(shield_unicode("x = \"\xee\x80\x80\""));
}

TEST_CASE("toml shield: parse_toml keeps strings and refuses bad documents cleanly", "[toml]") {
    auto good =
        parse_toml("a = \"caf\xc3\xa9\"\nb = [\"\xd0\x96\", 'na\xc3\xafve']\n[t]\nc = \"\xe3\x80\x9c\"\n", "g.toml");
    REQUIRE(good.ok());
    CHECK((*good)["a"].value_or(std::string()) == "caf\xc3\xa9");
    CHECK((*good)["b"][0].value_or(std::string()) == "\xd0\x96");
    CHECK((*good)["b"][1].value_or(std::string()) == "na\xc3\xafve");
    CHECK((*good)["t"]["c"].value_or(std::string()) == "\xe3\x80\x9c");
    // U+00A1 right after a value made toml++ 3.3 reach __builtin_unreachable(); now an error.
    auto bad = parse_toml("net = 0\xc2\xa1\n", "p.toml");
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().what.rfind("p.toml:1:", 0) == 0);
    auto pua = parse_toml("a = 1\nb = \"x\xee\x80\x80\"\n", "u.toml");
    REQUIRE_FALSE(pua.ok());
    CHECK(pua.error().what == "u.toml:2:7");
    auto syntax = parse_toml("a = [1,\n", "s.toml");
    REQUIRE_FALSE(syntax.ok());
    CHECK(syntax.error().what.rfind("s.toml:", 0) == 0);
}

namespace {

// What toml++ itself makes of TEXT: the table printed, or the error with its position.
std::string raw_toml(std::string_view text) {
    try {
        std::ostringstream out;
        out << toml::parse(text, std::string_view("x"));
        return out.str();
    } catch (const toml::parse_error& e) {
        return "error at " + std::to_string(e.source().begin.line) + ":" + std::to_string(e.source().begin.column) +
               ": " + std::string(e.description());
    }
}

// The same through parse_toml, which drops comment-only lines before toml++ reads the text.
std::string cordon_toml(std::string_view text) {
    auto tbl = parse_toml(text, "x");
    if (!tbl) return "error at " + tbl.error().what.substr(2) + ": " + tbl.error().why;
    std::ostringstream out;
    out << *tbl;
    return out.str();
}

}  // namespace

TEST_CASE("toml comments: dropping comment-only lines changes neither values nor errors", "[toml]") {
    const char* docs[] = {
        "# a\na = 1\n  # b\n\t# c\nb = [\n  # in an array\n  \"x\", # after\n]\n",
        "# a\r\na = 1\r\n# b\r\n",
        "a = \"# not a comment\"\n# c\nb = '#'\n",
        // A multi-line string: its lines starting with '#' are the string's.
        "s = \"\"\"\n# kept\n\"\"\"\n# c\n",
        "s = '''\n# kept\n'''\n",
        // Errors after dropped lines keep their line and column.
        "# one\n# two\na = [1,\n",
        "# one\n\n  # two\nb = 1\nb = 2\n",
        // A comment toml++ refuses (a control character) is left for it to refuse.
        "# bad \x01 comment\na = 1\n",
        "a = 1\n# del \x7f\n",
        "# bare CR\r",
        "# last line, no newline",
        "a = 1 # trailing comment stays\n[t] # too\n# c\nk = 2\n",
        "x = { a = 1,\n# c\n b = 2 }\n",
        // Found by fuzz/policy_fuzz.cpp: errors toml++ places by what follows, or by the text's end.
        "s = \"\n# x\"\"",
        "hide = [\n  \"/etc/a\"\n\n# The system, read-only.",
        "allow-host = [\n# a comment, then the end of the text\n",
        "# c\nd = \"x\"]\nro = [\"\xf6\x90\x8f\x8b\"]\n",
        "# c\na = 1]\nb = \"\xff\"\n",
    };
    for (const char* doc : docs) {
        INFO(doc);
        CHECK(cordon_toml(doc) == raw_toml(doc));
    }
}

TEST_CASE("toml shield: malformed UTF-8 reaches toml++ as it is, and keys come back", "[toml]") {
    // An overlong '/' (C0 AF), a surrogate (ED A0 80), past U+10FFFF (F4 90 80 80): toml++ refuses
    // each; the shield must not turn one into a character it accepts.
    for (const char* doc :
         {"a = \"\xc0\xaf\"\n", "a = \"\xed\xa0\x80\"\n", "a = \"\xf4\x90\x80\x80\"\n", "a = \"\xe0\x82\xa1\"\n"}) {
        INFO(doc);
        auto t = parse_toml(doc, "m.toml");
        REQUIRE_FALSE(t.ok());
        CHECK(t.error().what == "m.toml:1:5");
        CHECK(t.error().why.find("utf-8") != std::string::npos);
    }
    // Keys with characters the shield moves come back as the text wrote them, with their place.
    auto keys =
        parse_toml("\"caf\xc3\xa9\" = 1\n[t]\n\"\xd0\x96\" = [\"\xd0\x96\"]\n[\"na\xc3\xafve\".x]\ny = 2\n", "k.toml");
    REQUIRE(keys.ok());
    CHECK((*keys)["caf\xc3\xa9"].value_or(int64_t{0}) == 1);
    CHECK((*keys)["t"]["\xd0\x96"][0].value_or(std::string()) == "\xd0\x96");
    CHECK((*keys)["na\xc3\xafve"]["x"]["y"].value_or(int64_t{0}) == 2);
    const auto* t = (*keys)["t"].as_table();
    REQUIRE(t != nullptr);
    REQUIRE(t->size() == 1);
    CHECK(t->begin()->first.str() == "\xd0\x96");
    CHECK(t->begin()->first.source().begin.line == 3);
}

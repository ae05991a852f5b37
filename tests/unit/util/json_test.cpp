// The JSON writer used for --status-json.
#include <catch2/catch.hpp>

#include "cordon/json.hpp"

using namespace cordon;

TEST_CASE("json_quote escapes what JSON requires", "[json]") {
    CHECK(json_quote("") == "\"\"");
    CHECK(json_quote("plain") == "\"plain\"");
    CHECK(json_quote("say \"hi\"") == R"("say \"hi\"")");
    CHECK(json_quote("C:\\path") == R"("C:\\path")");
    CHECK(json_quote("a\nb\rc\td") == R"("a\nb\rc\td")");
    CHECK(json_quote(std::string("\x01\x1f", 2)) == R"("\u0001\u001f")");
    CHECK(json_quote(std::string("nul\0x", 5)) == R"("nul\u0000x")");
    CHECK(json_quote("\b\f") == R"("\u0008\u000c")");
    // Not control characters: kept as they are (UTF-8 passes through, / needs no escape).
    CHECK(json_quote("/tmp/ü \x7f") == "\"/tmp/ü \x7f\"");
    CHECK(json_quote("\xe2\x82\xac \xf0\x9f\x98\x80") == "\"\xe2\x82\xac \xf0\x9f\x98\x80\"");
    // Not UTF-8: each byte outside a valid sequence is U+FFFD, so the text still parses.
    CHECK(json_quote("a\xff"
                     "b") == R"("a\ufffdb")");
    CHECK(json_quote("\x80") == R"("\ufffd")");                                // a stray continuation byte
    CHECK(json_quote("\xc3") == R"("\ufffd")");                                // truncated
    CHECK(json_quote("\xc0\xaf") == R"("\ufffd\ufffd")");                      // overlong
    CHECK(json_quote("\xed\xa0\x80") == R"("\ufffd\ufffd\ufffd")");            // a surrogate
    CHECK(json_quote("\xf4\x90\x80\x80") == R"("\ufffd\ufffd\ufffd\ufffd")");  // past U+10FFFF
}

TEST_CASE("JsonObject keeps insertion order and types", "[json]") {
    JsonObject o;
    CHECK(o.str() == "{}");
    o.add("exit_code", int64_t{0})
        .add("reason", "exited")
        .add("signal", int64_t{-1})
        .add("oom", false)
        .add("ok", true)
        .add_null("error")
        .add("denials", std::vector<std::string>{})
        .add("argv", std::vector<std::string>{"sh", "-c", "echo \"x\""})
        .add_raw("nested", JsonObject().add("a", std::string("b")).str());
    CHECK(o.str() == R"({"exit_code":0,"reason":"exited","signal":-1,"oom":false,"ok":true,"error":null,)"
                     R"("denials":[],"argv":["sh","-c","echo \"x\""],"nested":{"a":"b"}})");
}

TEST_CASE("JsonObject escapes keys and large numbers", "[json]") {
    JsonObject o;
    o.add("we\"ird", std::string("v")).add("big", int64_t{9007199254740993}).add("min", INT64_MIN);
    CHECK(o.str() == R"({"we\"ird":"v","big":9007199254740993,"min":-9223372036854775808})");
}

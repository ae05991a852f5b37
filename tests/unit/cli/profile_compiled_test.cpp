// The shipped profiles compiled into cordon (src/gen/embed_core.cpp, TomlValue): what is built
// in is profiles/*.toml as it is now, it loads exactly as the parsed text does, and damaged
// compiled bytes are an error.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "cordon/profile.hpp"
#include "cordon/toml_value.hpp"
#include "test_files.hpp"

using namespace cordon;
using cordon::test::slurp;
using cordon::test::source_dir;

namespace {

bool same_layer(const SettingsLayer& a, const SettingsLayer& b) {
    return a.origin == b.origin && a.values == b.values && a.where == b.where && a.item_where == b.item_where;
}

}  // namespace

TEST_CASE("every shipped profile is compiled in, as it is now", "[profile][compiled]") {
    const auto embedded = embedded_profiles();
    REQUIRE(embedded.size() >= 14);
    for (const EmbeddedToml& e : embedded) {
        const std::string path = source_dir() + "/profiles/" + std::string(e.name) + ".toml";
        INFO(path);
        CHECK(e.text == slurp(path));
        auto parsed = parse_toml_value(e.text, path);
        REQUIRE(parsed);
        auto compiled = deserialize_toml_value(e.compiled);
        REQUIRE(compiled);
        CHECK(*compiled == *parsed);
    }
}

TEST_CASE("a shipped profile loads the same from its compiled form and from its text", "[profile][compiled]") {
    Vars vars = profile_vars("/home/u", "u", 1000, "/home/u/proj");
    for (auto& [var, compute] : vars.derived) compute = [] { return Result<std::string>("registry.example.test"); };
    for (const EmbeddedToml& e : embedded_profiles()) {
        INFO(e.name);
        const std::string text(e.text);
        // One more comment line keeps every position but is not byte-identical: parsed.
        std::vector<std::string> ext_a, ext_b, where_a, where_b;
        auto compiled = parse_profile(text, "p.toml", vars, &ext_a, &where_a);
        auto parsed = parse_profile(text + "\n# differs\n", "p.toml", vars, &ext_b, &where_b);
        REQUIRE(compiled);
        REQUIRE(parsed);
        CHECK(same_layer(*compiled, *parsed));
        CHECK(ext_a == ext_b);
        CHECK(where_a == where_b);
    }
}

TEST_CASE("damaged compiled TOML is an error", "[profile][compiled]") {
    auto tree = parse_toml_value("a = \"x\"\nb = [1, true, [\"y\"]]\n[c]\nd = 2\n", "t.toml");
    REQUIRE(tree);
    const std::string bytes = serialize_toml_value(*tree);
    auto back = deserialize_toml_value(bytes);
    REQUIRE(back);
    CHECK(*back == *tree);
    for (size_t n = 0; n < bytes.size(); ++n) {
        INFO("truncated to " << n);
        CHECK_FALSE(deserialize_toml_value(std::string_view(bytes).substr(0, n)));
    }
    CHECK_FALSE(deserialize_toml_value(bytes + "z"));
    for (size_t i = 0; i < bytes.size(); ++i) {
        std::string b = bytes;
        b[i] = static_cast<char>(b[i] ^ 0x41);
        (void)deserialize_toml_value(b);  // never reads outside the buffer (sanitizer build)
    }
}

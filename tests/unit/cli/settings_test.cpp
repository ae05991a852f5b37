// Settings: size and duration parsing, layer merging, the key table (SPEC §3, §5).
#include <catch2/catch.hpp>

#include <set>

#include "cordon/settings.hpp"

using namespace cordon;

TEST_CASE("parse_size accepts plain numbers and binary suffixes", "[settings]") {
    CHECK(parse_size("0").value() == 0);
    CHECK(parse_size("1048576").value() == 1048576);
    CHECK(parse_size("512K").value() == 512ULL * 1024);
    CHECK(parse_size("64M").value() == 64ULL * 1024 * 1024);
    CHECK(parse_size("2G").value() == 2ULL * 1024 * 1024 * 1024);
    CHECK(parse_size("3T").value() == 3ULL << 40);
    // Lower case and a trailing B are tolerated.
    CHECK(parse_size("64m").value() == 64ULL << 20);
    CHECK(parse_size("1KB").value() == 1024);
    CHECK(parse_size("7B").value() == 7);
}

TEST_CASE("parse_size rejects bad text and names the value", "[settings]") {
    for (const char* bad : {"", "K", "-1", " 1", "1X", "1.5G", "12 M", "1KK", "G2", "1P"}) {
        INFO("input: '" << bad << "'");
        auto r = parse_size(bad);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().what == std::string("invalid size '") + bad + "'");
    }
    auto r = parse_size("5Q");
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().why, Catch::Contains("'Q'"));
}

TEST_CASE("parse_size detects overflow exactly at the 64-bit boundary", "[settings]") {
    CHECK(parse_size("18446744073709551615").value() == UINT64_MAX);
    auto digits = parse_size("18446744073709551616");
    REQUIRE_FALSE(digits);
    CHECK_THAT(digits.error().why, Catch::Contains("too large"));
    CHECK_FALSE(parse_size("99999999999999999999999").ok());

    // 2^24 - 1 terabytes fits, 2^24 terabytes is exactly 2^64 and does not.
    CHECK(parse_size("16777215T").value() == ((1ULL << 24) - 1) << 40);
    auto shifted = parse_size("16777216T");
    REQUIRE_FALSE(shifted);
    CHECK_THAT(shifted.error().why, Catch::Contains("too large"));
    CHECK(parse_size("17179869183G").value() == ((1ULL << 34) - 1) << 30);
    CHECK_FALSE(parse_size("17179869184G").ok());
}

TEST_CASE("parse_duration_ms understands units and combinations", "[settings]") {
    CHECK(parse_duration_ms("5").value() == 5000);
    CHECK(parse_duration_ms("90s").value() == 90000);
    CHECK(parse_duration_ms("500ms").value() == 500);
    CHECK(parse_duration_ms("10m").value() == 600000);
    CHECK(parse_duration_ms("1h").value() == 3600000);
    CHECK(parse_duration_ms("1h30m").value() == 5400000);
    CHECK(parse_duration_ms("1m30s").value() == 90000);
    CHECK(parse_duration_ms("2d").value() == 2ULL * 24 * 3600 * 1000);
    CHECK(parse_duration_ms("1s500ms").value() == 1500);
    // A zero part is fine as long as the total is positive.
    CHECK(parse_duration_ms("0h5m").value() == 300000);
}

TEST_CASE("parse_duration_ms rejects bad durations with examples", "[settings]") {
    for (const char* bad : {"", "0", "0s", "0ms", "5x", "s", "ms5", "1.5s", "-5", "5 s", "1h 30m", "5ss", "5S",
                            // Like Go's time.ParseDuration: "1h30" is not 1h30m (nor 1h + 30s).
                            "1h30", "5s5"}) {
        INFO("input: '" << bad << "'");
        auto r = parse_duration_ms(bad);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().what == std::string("invalid duration '") + bad + "'");
        CHECK_THAT(r.error().why, Catch::Contains("examples"));
    }
    CHECK_THAT(parse_duration_ms("5x").error().why, Catch::Contains("unknown unit 'x'"));
    CHECK_THAT(parse_duration_ms("0").error().why, Catch::Contains("greater than zero"));
    CHECK_THAT(parse_duration_ms("").error().why, Catch::Contains("empty"));
    CHECK_THAT(parse_duration_ms("999999999999999s").error().why, Catch::Contains("too large"));
}

TEST_CASE("parse_duration_ms does not wrap around on huge sums", "[settings]") {
    // Every number is within the per-number bound, but the parts add up to 2^64 + 1000 ms:
    // 2 * 100000000000d + 13503982334d + 51952616ms. Wrapping would turn this into a 1s timeout.
    auto r = parse_duration_ms("100000000000d100000000000d13503982334d51952616ms");
    CHECK_FALSE(r.ok());
    if (r) CHECK(*r != 1000);
}

TEST_CASE("the key table has unique names and consistent arities", "[settings]") {
    std::set<std::string> names;
    for (const auto& k : all_keys()) {
        INFO("key " << k.name);
        CHECK(names.insert(k.name).second);
        CHECK(find_key(k.name) == &k);
        CHECK(std::string(k.help).size() > 0);
        switch (k.type) {
            case KeyType::Bool:
                CHECK(k.arity == 0);
                break;
            case KeyType::PairList:
                CHECK(k.arity == 2);
                break;
            case KeyType::Ops:
                CHECK((k.arity == 1 || k.arity == 2));
                break;
            default:
                CHECK(k.arity == 1);
        }
    }
    CHECK(find_key("nope") == nullptr);
    CHECK(find_key("") == nullptr);
    CHECK(find_key("--ro") == nullptr);  // names are without dashes
}

TEST_CASE("the key table matches SPEC §3", "[settings]") {
    REQUIRE(find_key("ro") != nullptr);
    CHECK(find_key("ro")->type == KeyType::List);
    CHECK(find_key("net")->type == KeyType::String);
    CHECK(find_key("uid")->type == KeyType::UInt);
    CHECK(find_key("tmpfs-size")->type == KeyType::Size);
    CHECK(find_key("timeout")->type == KeyType::Duration);
    CHECK(find_key("setenv")->type == KeyType::PairList);
    CHECK(find_key("clearenv")->type == KeyType::Bool);
    CHECK(find_key("bind")->type == KeyType::Ops);
    CHECK(find_key("bind")->arity == 2);
    CHECK(find_key("symlink")->arity == 2);
    CHECK(find_key("dir")->arity == 1);
    CHECK(find_key("remount-ro")->arity == 1);
    for (const char* key : {"memory", "memory-swap", "pids", "cpus", "limits", "workdir", "timeout", "rlimit",
                            "seccomp", "status-json", "hostname", "policy", "on-deny", "audit", "exec-checks"}) {
        INFO(key);
        REQUIRE(find_key(key) != nullptr);
        CHECK(find_key(key)->profile_ok);
    }
}

namespace {

SettingsLayer layer_of(std::map<std::string, Value> values) {
    SettingsLayer l;
    l.values = std::move(values);
    return l;
}

}  // namespace

TEST_CASE("merge_layer: scalars are overridden by the top layer", "[settings]") {
    SettingsLayer base = layer_of({{"net", std::string("none")}, {"uid", uint64_t{1000}}, {"clearenv", false}});
    base.where["net"] = "a.toml:1:1";
    SettingsLayer top = layer_of({{"net", std::string("host")}, {"clearenv", true}});
    top.where["net"] = "--net";
    merge_layer(base, top);
    CHECK(get_string(base, "net") == std::string("host"));
    CHECK(get_uint(base, "uid") == uint64_t{1000});  // untouched
    CHECK(get_bool(base, "clearenv"));
    CHECK(base.where["net"] == "--net");
}

TEST_CASE("merge_layer: lists and pairs accumulate, base first", "[settings]") {
    SettingsLayer base =
        layer_of({{"ro", std::vector<std::string>{"/usr", "/etc"}}, {"setenv", std::vector<PairValue>{{"A", "1"}}}});
    SettingsLayer top = layer_of({{"ro", std::vector<std::string>{"/opt"}},
                                  {"hide", std::vector<std::string>{"/etc/shadow"}},
                                  {"setenv", std::vector<PairValue>{{"B", "2"}, {"A", "3"}}}});
    merge_layer(base, top);
    CHECK(get_list(base, "ro") == std::vector<std::string>{"/usr", "/etc", "/opt"});
    CHECK(get_list(base, "hide") == std::vector<std::string>{"/etc/shadow"});
    CHECK(get_pairs(base, "setenv") == std::vector<PairValue>{{"A", "1"}, {"B", "2"}, {"A", "3"}});
    // The top layer is not modified.
    CHECK(get_list(top, "ro") == std::vector<std::string>{"/opt"});
}

TEST_CASE("merge_layer: ops accumulate in order across layers", "[settings]") {
    using K = MountRequest::Kind;
    SettingsLayer base = layer_of(
        {{"ops", std::vector<OpValue>{{{K::Dir, "", "/a"}, "p.toml:2:1"}, {{K::Bind, "/x", "/y"}, "p.toml:3:1"}}}});
    SettingsLayer top = layer_of({{"ops", std::vector<OpValue>{{{K::Symlink, "t", "/l"}, "command line"}}}});
    merge_layer(base, top);
    auto ops = get_ops(base);
    REQUIRE(ops.size() == 3);
    CHECK(ops[0].request.kind == K::Dir);
    CHECK(ops[1].request.kind == K::Bind);
    CHECK(ops[1].request == MountRequest{K::Bind, "/x", "/y"});
    CHECK(ops[2].request.kind == K::Symlink);
    CHECK(ops[2].origin == "command line");

    // Merging into an empty layer copies.
    SettingsLayer empty;
    merge_layer(empty, base);
    CHECK(get_ops(empty).size() == 3);
}

TEST_CASE("accessors fall back on missing keys and wrong types", "[settings]") {
    SettingsLayer l = layer_of({{"net", std::string("host")}, {"uid", uint64_t{5}}, {"allow-userns", true}});
    CHECK_FALSE(get_string(l, "hostname").has_value());
    CHECK_FALSE(get_string(l, "uid").has_value());  // a number is not a string
    CHECK_FALSE(get_uint(l, "net").has_value());
    CHECK(get_bool(l, "allow-userns"));
    CHECK_FALSE(get_bool(l, "clearenv"));
    CHECK(get_bool(l, "clearenv", true));
    CHECK(get_bool(l, "net", true));  // wrong type: the fallback
    CHECK(get_list(l, "ro").empty());
    CHECK(get_list(l, "net").empty());
    CHECK(get_pairs(l, "setenv").empty());
    CHECK(get_ops(l).empty());
}

TEST_CASE("mount_request: every primitive's key is typed, and named back", "[settings]") {
    using K = MountRequest::Kind;
    int primitives = 0;
    for (const auto& key : all_keys()) {
        if (key.type != KeyType::Ops) continue;
        ++primitives;
        const bool two = key.arity == 2;
        MountRequest r =
            mount_request(key.name, two ? std::vector<std::string>{"s", "d"} : std::vector<std::string>{"d"});
        CHECK(mount_request_option(r) == key.name);
        CHECK(mount_request_has_source(r.kind) == two);
        CHECK(r.source == (two ? "s" : ""));
        CHECK(r.dest == "d");
    }
    CHECK(primitives == 13);
    CHECK(mount_request("mount-tmpfs", {"/t"}) == MountRequest{K::Tmpfs, "", "/t", false});
    CHECK(mount_request("perms", {"0700"}) == MountRequest{K::Perms, "", "0700", false});
    CHECK(mount_request("ro-bind-try", {"/a", "/b"}) == MountRequest{K::RoBind, "/a", "/b", true});
    CHECK(mount_request("dev-bind", {"/a", "/b"}) == MountRequest{K::DevBind, "/a", "/b", false});
    CHECK(mount_request("remount-ro", {"/a"}) == MountRequest{K::RemountRo, "", "/a", false});
}

TEST_CASE("parse_quantity: one converter for the command line's and profiles' sizes and durations", "[settings]") {
    CHECK(parse_quantity(KeyType::Size, "2G").value() == Quantity{2ULL << 30, "2G"});
    CHECK(parse_quantity(KeyType::Duration, "1m30s").value() == Quantity{90000, "1m30s"});
    auto bad = parse_quantity(KeyType::Size, "1x");
    REQUIRE_FALSE(bad);
    CHECK(bad.error().what == "invalid size '1x'");
    CHECK_THAT(bad.error().why, Catch::Contains("unknown suffix 'x'"));
    CHECK_FALSE(parse_quantity(KeyType::Duration, "0"));
}

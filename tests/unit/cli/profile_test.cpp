// Profiles (SPEC §5): TOML keys, typed values, variables, extends, errors with file:line:col.
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cordon/profile.hpp"

using namespace cordon;
using Strings = std::vector<std::string>;

namespace {

const Vars kVars = {{"HOME", "/home/u"},
                    {"UID", "1000"},
                    {"USER", "u"},
                    {"WORKDIR", "/home/u/proj"},
                    {"XDG_CACHE_HOME", "/home/u/.cache"},
                    {"XDG_CONFIG_HOME", ""}};

SettingsLayer parse_ok(const std::string& text, Strings* extends = nullptr) {
    auto r = parse_profile(text, "p.toml", kVars, extends);
    if (!r) FAIL("unexpected error: " << r.error().what << ": " << r.error().why);
    return std::move(r).value();
}

Error parse_err(const std::string& text) {
    auto r = parse_profile(text, "p.toml", kVars, nullptr);
    if (r) FAIL("expected an error for:\n" << text);
    return r.error();
}

}  // namespace

TEST_CASE("profile: every key type is parsed", "[profile]") {
    Strings extends;
    SettingsLayer l = parse_ok(R"(
description = "test"
extends = ["default", "./base.toml"]
net = "host"
private-home = true
uid = 1234
tmpfs-size = "64M"
timeout = "1h30m"
ro = ["/usr", "${HOME}/.gitconfig"]
setenv = { LANG = "C.UTF-8", EDITOR = "${HOME}" }
dir = ["/made"]
bind = [["/src", "/dst"], ["${WORKDIR}", "/w"]]
)",
                               &extends);
    CHECK(l.origin == "p.toml");
    CHECK(extends == Strings{"default", "./base.toml"});
    CHECK(get_string(l, "net") == std::string("host"));
    CHECK(get_bool(l, "private-home"));
    CHECK(get_uint(l, "uid") == uint64_t{1234});
    CHECK(get_quantity(l, "tmpfs-size") == Quantity{64ULL << 20, "64M"});
    CHECK(get_quantity(l, "timeout") == Quantity{5400000, "1h30m"});
    CHECK(get_list(l, "ro") == Strings{"/usr", "/home/u/.gitconfig"});
    // Values of setenv are not paths: no expansion. Table order is the TOML library's.
    auto env = get_pairs(l, "setenv");
    REQUIRE(env.size() == 2);
    CHECK(std::count(env.begin(), env.end(), PairValue{"LANG", "C.UTF-8"}) == 1);
    CHECK(std::count(env.begin(), env.end(), PairValue{"EDITOR", "${HOME}"}) == 1);
    // description and extends are not settings.
    CHECK(l.values.count("description") == 0);
    CHECK(l.values.count("extends") == 0);

    auto ops = get_ops(l);
    REQUIRE(ops.size() == 3);
    int binds = 0;
    for (const auto& op : ops) {
        CHECK_THAT(op.origin, Catch::StartsWith("p.toml:"));
        if (op.request.kind == MountRequest::Kind::Bind && !op.request.optional) ++binds;
    }
    CHECK(binds == 2);
    CHECK(l.where.at("net") == "p.toml:4:7");
}

TEST_CASE("profile: ops from one file keep the file's order", "[profile]") {
    // symlink /b must exist before something is bound below it.
    SettingsLayer l =
        parse_ok("symlink = [[\"usr/bin\", \"/b\"]]\nro-bind = [[\"/x\", \"/b/x\"]]\ndir = [\"/d\", \"/d/e\"]\n");
    auto ops = get_ops(l);
    REQUIRE(ops.size() == 4);
    using K = MountRequest::Kind;
    CHECK(ops[0].request.kind == K::Symlink);
    CHECK(ops[0].request == MountRequest{K::Symlink, "usr/bin", "/b"});
    CHECK(ops[0].origin == "p.toml:1:12");
    CHECK(ops[1].request.kind == K::RoBind);
    CHECK(ops[2].request.kind == K::Dir);
    CHECK(ops[2].request == MountRequest{K::Dir, "", "/d"});
    CHECK(ops[3].request == MountRequest{K::Dir, "", "/d/e"});
}

TEST_CASE("profile: unknown keys get a suggestion for near misses", "[profile]") {
    auto e = parse_err("\n\nnetw = \"host\"\n");
    CHECK(e.what == "p.toml:3:1");  // the key's own position
    CHECK_THAT(e.why, Catch::Contains("unknown key 'netw'"));
    CHECK_THAT(e.why, Catch::Contains("did you mean 'net'?"));

    CHECK_THAT(parse_err("privat-home = true").why, Catch::Contains("did you mean 'private-home'?"));
    CHECK_THAT(parse_err("extend = [\"x\"]").why, Catch::Contains("did you mean 'extends'?"));
    // Nothing close: no suggestion.
    auto far = parse_err("frobnicate = 1");
    CHECK_THAT(far.why, Catch::Contains("unknown key 'frobnicate'"));
    CHECK_THAT(far.why, !Catch::Contains("did you mean"));
}

TEST_CASE("profile: wrong types are errors with file:line:col", "[profile]") {
    struct Case {
        const char* text;
        const char* where;
        const char* want;
    };
    for (const auto& c : {Case{"net = 5", "p.toml:1:7", "'net' must be a string"},
                          Case{"private-home = \"yes\"", "p.toml:1:16", "'private-home' must be true or false"},
                          Case{"uid = \"1000\"", "p.toml:1:7", "'uid' must be a non-negative integer"},
                          Case{"tmpfs-size = 64", "p.toml:1:14", "'tmpfs-size' must be a size string"},
                          Case{"timeout = 90", "p.toml:1:11", "'timeout' must be a duration string"},
                          Case{"ro = \"/usr\"", "p.toml:1:6", "'ro' must be an array of strings"},
                          Case{"setenv = [\"A\"]", "p.toml:1:10", "'setenv' must be a table"},
                          Case{"dir = \"/x\"", "p.toml:1:7", "'dir' must be an array"},
                          Case{"description = 1", "p.toml:1:15", "'description' must be a string"},
                          Case{"extends = \"default\"", "p.toml:1:11", "'extends' must be an array"}}) {
        INFO(c.text);
        auto e = parse_err(c.text);
        CHECK(e.what == c.where);
        CHECK_THAT(e.why, Catch::Contains(c.want));
    }
    // An element of the wrong type is located at the element.
    auto el = parse_err("ro = [\"/usr\",\n  5]");
    CHECK(el.what == "p.toml:2:3");
    CHECK_THAT(el.why, Catch::Contains("'ro' must hold strings"));
    auto pair = parse_err("bind = [[\"/a\"]]");
    CHECK(pair.what == "p.toml:1:9");
    CHECK_THAT(pair.why, Catch::Contains("[\"SRC\", \"DEST\"]"));
    CHECK_THAT(parse_err("uid = -1").why, Catch::Contains("out of range"));
    CHECK_THAT(parse_err("uid = 4294967295").why, Catch::Contains("out of range"));
}

TEST_CASE("profile: bad size and duration values", "[profile]") {
    auto s = parse_err("\ntmpfs-size = \"1Q\"");
    CHECK(s.what == "p.toml:2:14");
    CHECK_THAT(s.why, Catch::Contains("invalid size '1Q'"));
    auto d = parse_err("timeout = \"5x\"");
    CHECK(d.what == "p.toml:1:11");
    CHECK_THAT(d.why, Catch::Contains("invalid duration '5x'"));
}

TEST_CASE("profile: exec-time check keys are profile keys", "[profile]") {
    auto e = parse_err("audit = 3");
    CHECK(e.what == "p.toml:1:9");
    CHECK_THAT(e.why, Catch::Contains("'audit' must be"));
    CHECK_THAT(parse_err("on-deny = true").why, Catch::Contains("'on-deny' must be"));
    CHECK_THAT(parse_err("exec-checks = 1").why, Catch::Contains("'exec-checks' must be"));
}

TEST_CASE("profile: TOML syntax errors carry a position", "[profile]") {
    auto e = parse_err("net = \"none\"\nro = [\"/usr\"\n");
    CHECK_THAT(e.what, Catch::StartsWith("p.toml:"));
    CHECK_THAT(e.what, Catch::Matches(R"(p\.toml:\d+:\d+)"));
    CHECK_FALSE(e.why.empty());
    auto dup = parse_err("net = \"none\"\nnet = \"host\"\n");
    CHECK_THAT(dup.what, Catch::StartsWith("p.toml:2:"));
}

TEST_CASE("expand_vars replaces known variables", "[profile]") {
    CHECK(expand_vars("${HOME}/.cache", kVars).value() == "/home/u/.cache");
    CHECK(expand_vars("${XDG_CACHE_HOME}/npm-${UID}-${USER}", kVars).value() == "/home/u/.cache/npm-1000-u");
    CHECK(expand_vars("plain", kVars).value() == "plain");
    CHECK(expand_vars("", kVars).value().empty());
    CHECK(expand_vars("$HOME/x", kVars).value() == "$HOME/x");  // only ${NAME} is a variable
    CHECK(expand_vars("a$", kVars).value() == "a$");
}

TEST_CASE("expand_vars errors name the variable", "[profile]") {
    auto unknown = expand_vars("${PATH}/bin", kVars);
    REQUIRE_FALSE(unknown);
    CHECK_THAT(unknown.error().why, Catch::Contains("unknown variable ${PATH}"));
    auto empty = expand_vars("${XDG_CONFIG_HOME}/x", kVars);
    REQUIRE_FALSE(empty);
    CHECK_THAT(empty.error().why, Catch::Contains("${XDG_CONFIG_HOME} is not defined"));
    auto open = expand_vars("${HOME", kVars);
    REQUIRE_FALSE(open);
    CHECK_THAT(open.error().why, Catch::Contains("unterminated"));

    // In a profile, the error is located at the string.
    auto e = parse_err("ro = [\"/usr\", \"${NOPE}/x\"]");
    CHECK(e.what == "p.toml:1:15");
    CHECK_THAT(e.why, Catch::Contains("${NOPE}"));
}

namespace {

struct TempProfiles {
    std::filesystem::path dir;
    std::string old_path;
    bool had_old = false;
    TempProfiles() {
        char tmpl[] = "/tmp/cordon-profile-test-XXXXXX";
        REQUIRE(::mkdtemp(tmpl) != nullptr);
        dir = tmpl;
        if (const char* p = std::getenv("CORDON_PROFILE_PATH")) {
            had_old = true;
            old_path = p;
        }
        ::setenv("CORDON_PROFILE_PATH", dir.c_str(), 1);
    }
    ~TempProfiles() {
        if (had_old)
            ::setenv("CORDON_PROFILE_PATH", old_path.c_str(), 1);
        else
            ::unsetenv("CORDON_PROFILE_PATH");
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
    TempProfiles(const TempProfiles&) = delete;
    TempProfiles& operator=(const TempProfiles&) = delete;
    std::string write(const std::string& name, const std::string& text) const {
        std::filesystem::path p = dir / name;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p) << text;
        return p.string();
    }
};

}  // namespace

TEST_CASE("load_profiles layers parents first, the named profile last", "[profile]") {
    TempProfiles t;
    t.write("base.toml", "ro = [\"/base\"]\nnet = \"none\"\nhostname = \"base\"\n");
    t.write("mid.toml", "extends = [\"base\"]\nro = [\"/mid\"]\nnet = \"host\"\n");
    t.write("top.toml", "extends = [\"mid\"]\nro = [\"/top\"]\nhostname = \"top\"\n");
    auto r = load_profiles({"top"}, kVars);
    REQUIRE(r.ok());
    CHECK(get_list(*r, "ro") == Strings{"/base", "/mid", "/top"});
    CHECK(get_string(*r, "net") == std::string("host"));
    CHECK(get_string(*r, "hostname") == std::string("top"));
    CHECK(r->where.at("hostname") == (t.dir / "top.toml").string() + ":3:12");

    // Two names on the command line: later layers win.
    t.write("other.toml", "hostname = \"other\"\nro = [\"/other\"]\n");
    auto two = load_profiles({"top", "other"}, kVars);
    REQUIRE(two.ok());
    CHECK(get_string(*two, "hostname") == std::string("other"));
    CHECK(get_list(*two, "ro") == Strings{"/base", "/mid", "/top", "/other"});
}

TEST_CASE("load_profiles loads a shared parent once (diamond)", "[profile]") {
    TempProfiles t;
    t.write("root.toml", "ro = [\"/root\"]\n");
    t.write("left.toml", "extends = [\"root\"]\nro = [\"/left\"]\n");
    t.write("right.toml", "extends = [\"root\"]\nro = [\"/right\"]\n");
    t.write("both.toml", "extends = [\"left\", \"right\"]\n");
    auto r = load_profiles({"both"}, kVars);
    REQUIRE(r.ok());
    CHECK(get_list(*r, "ro") == Strings{"/root", "/left", "/right"});
}

TEST_CASE("load_profiles: paths, and parents relative to the naming file", "[profile]") {
    TempProfiles t;
    t.write("sub/parent.toml", "ro = [\"/parent\"]\n");
    std::string child = t.write("sub/child.toml", "extends = [\"./parent.toml\"]\nro = [\"/child\"]\n");
    auto r = load_profiles({child}, kVars);
    REQUIRE(r.ok());
    CHECK(get_list(*r, "ro") == Strings{"/parent", "/child"});
}

TEST_CASE("load_profiles: a cycle is an error naming the cycle", "[profile]") {
    TempProfiles t;
    t.write("a.toml", "extends = [\"b\"]\n");
    t.write("b.toml", "extends = [\"a\"]\n");
    auto r = load_profiles({"a"}, kVars);
    REQUIRE_FALSE(r.ok());
    std::string a = (t.dir / "a.toml").string(), b = (t.dir / "b.toml").string();
    CHECK_THAT(r.error().why, Catch::Contains("cycle"));
    CHECK_THAT(r.error().why, Catch::Contains(a + " -> " + b + " -> " + a));

    t.write("self.toml", "extends = [\"self\"]\n");
    CHECK_FALSE(load_profiles({"self"}, kVars).ok());
}

TEST_CASE("load_profiles: missing profiles and bad files", "[profile]") {
    TempProfiles t;
    auto missing = load_profiles({"no-such-profile-xyz"}, kVars);
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().what == "profile 'no-such-profile-xyz'");
    CHECK_THAT(missing.error().why, Catch::Contains("not found"));
    CHECK_THAT(missing.error().hint, Catch::Contains(t.dir.string()));

    t.write("hasmissingparent.toml", "extends = [\"nope-nope\"]\n");
    auto parent = load_profiles({"hasmissingparent"}, kVars);
    REQUIRE_FALSE(parent.ok());
    // An unknown parent is reported where the extends entry names it.
    CHECK(parent.error().what == (t.dir / "hasmissingparent.toml").string() + ":1:12: extends profile 'nope-nope'");

    t.write("broken.toml", "\nnetw = \"host\"\n");
    auto broken = load_profiles({"broken"}, kVars);
    REQUIRE_FALSE(broken.ok());
    CHECK(broken.error().what == (t.dir / "broken.toml").string() + ":2:1");

    CHECK(find_profile("../x.toml").value() == "../x.toml");  // a path: returned as is
    CHECK(find_profile("./x.toml").value() == "./x.toml");
    CHECK_FALSE(find_profile(".hidden").ok());
    CHECK_FALSE(find_profile("").ok());
}

TEST_CASE("profile: ${USER} without $USER is looked up only when used", "[profile]") {
    int lookups = 0;
    Vars vars = {{"HOME", "/home/u"}, {"UID", "1000"}, {"WORKDIR", "/w"}};
    vars.lazy_user = [&] {
        ++lookups;
        return std::string("looked-up");
    };
    CHECK(expand_vars("${HOME}/x", vars).value() == "/home/u/x");
    CHECK(lookups == 0);
    CHECK(expand_vars("/tmp/${USER}-cache", vars).value() == "/tmp/looked-up-cache");
    CHECK(lookups == 1);
    vars["USER"] = "env";
    CHECK(expand_vars("${USER}", vars).value() == "env");
    CHECK(lookups == 1);
    const Vars real = profile_vars("/home/u", "", ::getuid(), "/w");
    CHECK_FALSE(expand_vars("${USER}", real).value().empty());
}

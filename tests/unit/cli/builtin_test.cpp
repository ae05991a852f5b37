// The built-in profiles and policies: their names, their text, how they join a profile listing,
// and policy sets that mix built-in and on-disk policies. (The fallback itself, with nothing on
// the search path, is tests/integration/t_standalone.sh: a unit test's data directory is the
// build's.)
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "cordon/builtin.hpp"
#include "cordon/settings.hpp"
#include "test_files.hpp"

using namespace cordon;
using cordon::test::slurp;
using cordon::test::source_dir;

namespace {

struct TempFile {
    std::string path;
    explicit TempFile(const std::string& text) {
        char tmpl[] = "/tmp/cordon-builtin-XXXXXX.toml";
        int fd = ::mkstemps(tmpl, 5);
        REQUIRE(fd >= 0);
        ::close(fd);
        path = tmpl;
        std::ofstream(path, std::ios::binary) << text;
    }
    ~TempFile() { ::unlink(path.c_str()); }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
};

const ProfileEntry* entry(const std::vector<ProfileEntry>& entries, const std::string& name) {
    auto it = std::find_if(entries.begin(), entries.end(), [&](const ProfileEntry& e) { return e.name == name; });
    return it == entries.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("built-in files are named built-in:KIND/NAME.toml and hold the shipped text", "[builtin]") {
    CHECK(builtin_profile("npm") == std::string("built-in:profiles/npm.toml"));
    CHECK_FALSE(builtin_profile("no-such-profile"));
    CHECK(is_builtin("built-in:profiles/npm.toml"));
    CHECK_FALSE(is_builtin("/usr/share/cordon/profiles/npm.toml"));

    auto npm = read_data_file("built-in:profiles/npm.toml");
    REQUIRE(npm.ok());
    CHECK(*npm == slurp(source_dir() + "/profiles/npm.toml"));
    auto policy = read_data_file("built-in:policies/default.toml");
    REQUIRE(policy.ok());
    CHECK(*policy == slurp(source_dir() + "/policies/default.toml"));
    auto missing = read_data_file("built-in:profiles/no-such-profile.toml");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().err == ENOENT);
    CHECK(builtin_policies() == std::vector<std::string>{"built-in:policies/default.toml"});
}

TEST_CASE("a built-in profile loads like the shipped file, with its own origin", "[builtin]") {
    const Vars vars = {{"HOME", "/home/u"},
                       {"UID", "1000"},
                       {"USER", "u"},
                       {"WORKDIR", "/home/u/p"},
                       {"XDG_CACHE_HOME", "/home/u/.cache"},
                       {"XDG_CONFIG_HOME", ""},
                       {"NPM_REGISTRY_HOST", "registry.example.test"}};
    auto builtin = load_profiles({"built-in:profiles/npm.toml"}, vars, true);
    auto file = load_profiles({source_dir() + "/profiles/npm.toml"}, vars, true);
    REQUIRE(builtin.ok());
    REQUIRE(file.ok());
    CHECK(builtin->values == file->values);
    REQUIRE(builtin->item_where.at("allow-host").size() == 1);
    CHECK(builtin->item_where.at("allow-host")[0].rfind("built-in:profiles/npm.toml:", 0) == 0);
    CHECK(get_list(*builtin, "allow-host") == std::vector<std::string>{"registry.example.test"});
}

TEST_CASE("the listing: built-in profiles join the search path's, shadowed where a file differs", "[builtin]") {
    std::vector<ProfileEntry> none;
    add_builtin_profiles(none);
    CHECK(none.size() == 14);
    REQUIRE(entry(none, "default"));
    CHECK(entry(none, "default")->path == "built-in:profiles/default.toml");
    CHECK_FALSE(entry(none, "npm")->description.empty());

    TempFile own("description = \"mine\"\nextends = [\"default\"]\n");
    TempFile copy(slurp(source_dir() + "/profiles/make.toml"));
    std::vector<ProfileEntry> found = {{"npm", own.path, "mine", {}},
                                       {"make", copy.path, "", {}},
                                       {"git", own.path, "mine", {copy.path}},
                                       {"mine", own.path, "mine", {}}};
    add_builtin_profiles(found);
    CHECK(found.size() == 4 + 11);
    CHECK(entry(found, "npm")->shadowed == std::vector<std::string>{"built-in:profiles/npm.toml"});
    CHECK(entry(found, "make")->shadowed.empty());  // an installed copy of the built-in one
    CHECK(entry(found, "git")->shadowed == std::vector<std::string>{copy.path, "built-in:profiles/git.toml"});
    CHECK(entry(found, "mine")->shadowed.empty());
}

TEST_CASE("policies: names and built-in origins resolve, and sets may mix both", "[builtin]") {
    CHECK(resolve_policy("built-in:policies/default.toml").ok());
    CHECK_FALSE(resolve_policy("built-in:policies/no-such.toml").ok());
    CHECK_FALSE(resolve_policy("built-in:profiles/default.toml").ok());
    CHECK(resolve_policy("./policies/x.toml").value() == "./policies/x.toml");

    TempFile extra(R"([[rule]]
id = "no-curl"
decision = "deny"
reason = "no downloads"
program = "curl"
must-match = ["curl https://x"]
must-not-match = ["wget https://x"]
)");
    auto set = load_policies({"built-in:policies/default.toml", extra.path});
    INFO((set ? "" : set.error().message()));
    REQUIRE(set.ok());
    CHECK(set->files() == std::vector<std::string>{"built-in:policies/default.toml", extra.path});
    auto denied = set->check_script("rm -rf /", "/", "/root");
    CHECK_FALSE(denied.allow);
    CHECK(denied.policy_file == "built-in:policies/default.toml");
    CHECK(set->check_script("curl -O https://example.com/x", "/", "/root").policy_file == extra.path);
    CHECK(set->check_script("ls", "/", "/root").allow);

    TempFile failing(
        "[[rule]]\nid = \"r\"\ndecision = \"deny\"\nreason = \"x\"\nprogram = \"curl\"\n"
        "must-match = [\"wget x\"]\nmust-not-match = [\"ls\"]\n");
    auto bad = load_policies({"built-in:policies/default.toml", failing.path});
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message() ==
          "cordon: " + failing.path + ":6:15: rule r: must-match example does not match: wget x");
}

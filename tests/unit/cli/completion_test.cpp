// The completions' model of the command line (completion.cpp) and the subcommand table.
#include <catch2/catch.hpp>

#include <algorithm>

#include "cordon/check_cmd.hpp"
#include "cordon/commands.hpp"
#include "cordon/completion.hpp"
#include "cordon/settings.hpp"

using namespace cordon;
using Kind = OptionValue::Kind;

namespace {

const OptionInfo* option(const std::vector<OptionInfo>& table, const std::string& name) {
    for (const auto& o : table) {
        if (std::find(o.names.begin(), o.names.end(), name) != o.names.end()) return &o;
    }
    return nullptr;
}

}  // namespace

TEST_CASE("completion: the option table is the command line's, values and all", "[completion]") {
    const auto table = option_table();
    for (const KeyInfo& key : all_keys()) {
        INFO(key.name);
        const OptionInfo* o = option(table, std::string("--") + key.name);
        REQUIRE(o);
        CHECK(o->values.size() == static_cast<size_t>(key.type == KeyType::Bool ? 0 : key.arity));
    }
    const OptionInfo* profile = option(table, "-p");
    REQUIRE(profile);
    CHECK(profile->names == std::vector<std::string>{"-p", "--profile"});
    CHECK(profile->repeatable);
    REQUIRE(profile->values.size() == 1);
    CHECK(profile->values[0].kind == Kind::Profiles);

    const OptionInfo* bind = option(table, "--bind");
    REQUIRE(bind->values.size() == 2);
    CHECK(bind->values[0].kind == Kind::Files);
    CHECK(bind->values[1].metavar == "DEST");
    CHECK(option(table, "--net")->values[0].words == std::vector<std::string>{"none", "host"});
    CHECK(option(table, "--workdir")->values[0].kind == Kind::Dirs);
    CHECK(option(table, "--memory")->values[0].kind == Kind::Text);
    CHECK(option(table, "--help")->values.empty());
    CHECK_FALSE(option(table, "-q")->repeatable);
}

TEST_CASE("completion: a script for each shell, an error for another", "[completion]") {
    for (const char* shell : {"bash", "zsh", "fish"}) {
        auto script = completion_script(shell);
        REQUIRE(script.ok());
        CHECK(script->find("--ro-bind-try") != std::string::npos);
        CHECK(script->find("profile list") != std::string::npos);
    }
    CHECK(completion_script("zsh")->rfind("#compdef cordon\n", 0) == 0);
    CHECK_FALSE(completion_script("tcsh").ok());
    CHECK(main_completion({}) == 125);
    CHECK(main_completion({"tcsh"}) == 125);
}

TEST_CASE("subcommands: the table main dispatches from", "[completion]") {
    for (const char* name : {"check", "policy", "profile", "doctor", "completion"}) CHECK(find_subcommand(name));
    CHECK_FALSE(find_subcommand("run"));
    CHECK(find_subcommand("check")->run == &main_check);
}

TEST_CASE("subcommands: check accepts every word its completion offers", "[completion]") {
    const Subcommand& check = *find_subcommand("check");
    for (std::string_view word : check.args.words) {
        INFO(word);
        std::vector<std::string> args{std::string(word)};
        const bool takes_value = std::any_of(check.args.value_options.begin(), check.args.value_options.end(),
                                             [&](const auto& v) { return v.first == word; });
        if (takes_value) {
            args.emplace_back(word == "-c"        ? "true"
                              : word == "--batch" ? "/dev/null"
                                                  : "built-in:policies/default.toml");
        }
        if (word == "-z") {
            args.insert(args.end(), {"--batch", "/dev/null"});  // -z is --batch's
        } else if (word != "-c" && word != "--help" && word != "--batch") {
            args.insert(args.end(), {"--", "true"});
        }
        CHECK(main_check(args) == 0);
    }
}

// Policy files and decisions: loading (with positioned errors), rules, layering, the default policy.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <fstream>

#include "cordon/policy.hpp"
#include "cordon/policy/rules.hpp"
#include "test_files.hpp"

using namespace cordon::policy;
using cordon::test::source_dir;

namespace {

const PolicySet& default_policy() {
    static PolicySet set = [] {
        auto r = load({source_dir() + "/policies/default.toml"});
        INFO((r ? "" : r.error().message()));
        REQUIRE(r.ok());
        return std::move(*r);
    }();
    return set;
}

Decision check(const std::string& script, const std::string& cwd = "/home/user/project") {
    return default_policy().check_script(script, cwd, "/home/user");
}

std::string load_error(const std::string& toml) {
    auto p = parse_policy(toml, "policies/x.toml");
    REQUIRE_FALSE(p.ok());
    return p.error().message();
}

// A tmp file holding TEXT, removed at scope exit.
struct TempPolicy {
    std::string path;
    explicit TempPolicy(const std::string& text) {
        char tmpl[] = "/tmp/cordon-policy-XXXXXX.toml";
        int fd = ::mkstemps(tmpl, 5);
        REQUIRE(fd >= 0);
        ::close(fd);
        path = tmpl;
        std::ofstream(path) << text;
    }
    ~TempPolicy() { ::unlink(path.c_str()); }
    TempPolicy(const TempPolicy&) = delete;
    TempPolicy& operator=(const TempPolicy&) = delete;
};

constexpr const char* kAllowlist = R"(
default = "deny"
on-unanalyzable = "deny"
[[rule]]
id = "git-read"
decision = "allow"
reason = "read-only git"
program = "git"
subcommand = ["status", "log", "remote show"]
must-match = ["git status", "git -C x log"]
must-not-match = ["git push", "git remote add x y"]
[programs.git]
options = ["-C=", "-c="]
permute = true
)";

}  // namespace

TEST_CASE("the default policy denies the dangerous spellings", "[policy][matcher]") {
    for (const char* s : {"rm -rf /", "rm -rf ~", "sudo rm -rf --no-preserve-root /", "cd / && rm -rf usr",
                          "bash -c 'rm -rf \"$HOME\"'", "X=/; rm -rf $X", ":(){ :|:& };:", "mkfs.ext4 /dev/sda",
                          "dd if=/dev/zero of=/dev/sda", "chmod -R 777 /", "$cmd -rf /", "eval \"$x\"",
                          "echo $(rm -rf /)", "find / -delete", "echo x > /dev/sda"}) {
        INFO(s);
        CHECK_FALSE(check(s).allow);
    }
}

TEST_CASE("the default policy allows everyday commands", "[policy][matcher]") {
    for (const char* s : {"ls -la", "git commit -m \"rm -rf /\"", "grep -r 'rm -rf /' .", "echo rm -rf /",
                          "rm -rf build dist", "make -j2 && ./run-tests", "npm install", "cargo build --release",
                          "rm -rf ~/.cache/pip", "find . -name '*.pyc' -delete", "python3 -c 'print(1)'",
                          "docker build -t x .", "cd /tmp && rm -rf x", "chmod +x run.sh"}) {
        INFO(s);
        Decision d = check(s);
        CHECK(d.allow);
        CHECK(d.rule_id == "default");
    }
}

TEST_CASE("a denial names the rule, the reason and the triggering command", "[policy][matcher]") {
    Decision d = check("echo start; sudo rm -rf / ; echo end");
    CHECK_FALSE(d.allow);
    CHECK(d.rule_id == "rm-recursive-protected");
    CHECK(d.command == "sudo rm -rf /");
    CHECK(d.policy_file.find("default.toml") != std::string::npos);
    CHECK(format_denial(d) == "cordon: denied: sudo rm -rf / (rule rm-recursive-protected: " + d.reason + ")");
    CHECK(to_json(d).find(R"("decision":"deny","rule":"rm-recursive-protected")") != std::string::npos);
    Decision u = check("$cmd x");
    CHECK(u.rule_id == "on-unanalyzable");
    CHECK(u.command == "$cmd x");
}

TEST_CASE("check_argv takes a real argv and working directory", "[policy][matcher]") {
    const auto& set = default_policy();
    CHECK_FALSE(set.check_argv({"rm", "-rf", "usr"}, "/", "/home/user").allow);
    CHECK(set.check_argv({"rm", "-rf", "usr"}, "/tmp", "/home/user").allow);
    CHECK_FALSE(set.check_argv({"/usr/bin/env", "rm", "-r", "."}, "/home/user", "/home/user").allow);
    CHECK(set.check_argv({"echo", "$(rm -rf /)"}, "/", "/home/user").allow);
    CHECK_FALSE(set.check_argv({"sh", "-c", "rm -rf /"}, "/", "/home/user").allow);
}

TEST_CASE("an empty policy set allows everything", "[policy][matcher]") {
    PolicySet none;
    Decision d = none.check_script("rm -rf /", "/", "/root");
    CHECK(d.allow);
    CHECK(d.rule_id == "none");
}

TEST_CASE("allow lists: default deny with allow rules and subcommands", "[policy][matcher]") {
    auto p = parse_policy(kAllowlist, "allow.toml");
    REQUIRE(p.ok());
    CHECK(run_examples(*p).empty());
    PolicySet set;
    set.add(std::make_shared<const Policy>(std::move(*p)));
    CHECK(set.check_script("git -c a=b status", "/", "/root").allow);
    CHECK(set.check_script("git status", "/", "/root").rule_id == "git-read");
    Decision d = set.check_script("git status && git push", "/", "/root");
    CHECK_FALSE(d.allow);
    CHECK(d.rule_id == "default");
    CHECK(d.command == "git push");
    // Bare redirections are judged by rules only.
    CHECK(set.check_script("> out", "/", "/root").allow);
}

TEST_CASE("layered policies: deny wins", "[policy][matcher]") {
    TempPolicy extra(R"(
[[rule]]
id = "no-curl"
decision = "deny"
reason = "no downloads"
program = "curl"
must-match = "curl https://x"
must-not-match = "wget https://x"
)");
    auto set = load({source_dir() + "/policies/default.toml", extra.path});
    REQUIRE(set.ok());
    CHECK(set->files().size() == 2);
    Decision d = set->check_script("curl -O https://example.com/x", "/", "/root");
    CHECK_FALSE(d.allow);
    CHECK(d.policy_file == extra.path);
    CHECK_FALSE(set->check_script("rm -rf /", "/", "/root").allow);
    CHECK(set->check_script("ls", "/", "/root").allow);
}

TEST_CASE("examples that fail make loading fail", "[policy][matcher]") {
    TempPolicy bad(R"(
[[rule]]
id = "no-curl"
decision = "deny"
reason = "no downloads"
program = "curl"
must-match = ["curl x", "wget x"]
must-not-match = ["ls"]
)");
    auto set = load({bad.path});
    REQUIRE_FALSE(set.ok());
    CHECK(set.error().message() ==
          "cordon: " + bad.path + ":7:25: rule no-curl: must-match example does not match: wget x");
}

TEST_CASE("policy names are found on the search path", "[policy][matcher]") {
    ::setenv("CORDON_POLICY_PATH", (source_dir() + "/policies").c_str(), 1);
    auto set = load({"default"});
    CHECK(set.ok());
    auto missing = load({"no-such-policy"});
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().message().rfind("cordon: policy no-such-policy: not found in ", 0) == 0);
    ::unsetenv("CORDON_POLICY_PATH");
}

TEST_CASE("malformed policy files: FILE:LINE:COLUMN errors", "[policy][matcher]") {
    CHECK(load_error("default = \"allow\"\nx = [").rfind("cordon: policies/x.toml:2:", 0) == 0);
    CHECK(load_error("default = \"maybe\"") ==
          "cordon: policies/x.toml:1:11: 'maybe' is not a decision (allow or deny)");
    CHECK(load_error("defualt = \"allow\"").rfind("cordon: policies/x.toml:1:1: unknown key 'defualt'", 0) == 0);
    CHECK(load_error("[[rule]]\nid = \"x\"\ndecision = \"deny\"\nreason = \"r\"\nprogram = \"rm\"\nbogus = 1\n")
              .rfind("cordon: policies/x.toml:6:1: unknown key 'bogus' in a rule", 0) == 0);
    CHECK(load_error("[[rule]]\nid = \"x\"\nreason = \"r\"\nprogram = \"rm\"\n").find("rule x: needs a 'decision'") !=
          std::string::npos);
    CHECK(load_error("[[rule]]\nid = \"x\"\ndecision = \"deny\"\nreason = \"r\"\nprogram = \"rm\"\n"
                     "must-match = [\"rm\"]\n")
              .find("needs 'must-not-match'") != std::string::npos);
    CHECK(load_error("[paths]\na = [\"relative\"]").find("must be absolute") != std::string::npos);
    CHECK(load_error("[paths]\na = [\"@b\"]\nb = [\"@a\"]").find("refers to itself") != std::string::npos);
    CHECK(load_error("[[rule]]\nid = \"x\"\ndecision = \"deny\"\nreason = \"r\"\nprogram = \"rm\"\n"
                     "operands = [\"@nope\"]")
              .find("unknown path set '@nope'") != std::string::npos);
    CHECK(load_error("[programs.rm]\noptions = [\"-r -r\"]").find("declared twice") != std::string::npos);
    CHECK(load_error("[programs.rm]\noptions = [\"r\"]").find("bad option spelling") != std::string::npos);
    CHECK(load_error("rule = 3").find("array of tables") != std::string::npos);
    CHECK(load_error("[[rule]]\nid = \"a\"\ndecision = \"deny\"\nreason = \"r\"\nconstruct = \"fork-bomb\"\n"
                     "program = \"x\"\nmust-match = [\"x\"]\nmust-not-match = [\"y\"]")
              .find("cannot be combined") != std::string::npos);
}

TEST_CASE("the shipped default policy's examples all pass", "[policy][matcher]") {
    auto p = load_policy_file(source_dir() + "/policies/default.toml");
    REQUIRE(p.ok());
    CHECK(run_examples(*p).empty());
    CHECK(p->rules.size() >= 8);
}

TEST_CASE("operands-at restricts which operands count", "[policy][matcher]") {
    auto p = parse_policy(R"(
[paths]
dev = ["/dev/sd*"]
[programs.cp]
options = ["-t= --target-directory=", "-f --force"]
[[rule]]
id = "dest"
decision = "deny"
reason = "r"
program = "cp"
operands = ["@dev"]
operands-at = "last"
must-match = ["cp -f a /dev/sda"]
must-not-match = ["cp /dev/sda a"]
[[rule]]
id = "src"
decision = "deny"
reason = "r"
program = "cat"
operands = ["/etc/shadow"]
operands-at = "first"
must-match = ["cat /etc/shadow x"]
must-not-match = ["cat x /etc/shadow"]
)",
                          "at.toml");
    REQUIRE(p.ok());
    CHECK(run_examples(*p).empty());
    CHECK(load_error("[[rule]]\nid = \"x\"\ndecision = \"deny\"\nreason = \"r\"\nprogram = \"rm\"\n"
                     "operands-at = \"middle\"")
              .find("'operands-at' is any, first or last") != std::string::npos);
}

TEST_CASE("cwd: the directory a command runs in", "[policy][matcher]") {
    auto p = parse_policy(R"(
[[rule]]
id = "clean-home"
decision = "deny"
reason = "r"
program = "git"
subcommand = "clean"
cwd = ["~"]
must-match = ["cd ~ && git clean -fdx", "git -C ~ clean -fdx", "cd /tmp; git -C ../home/user clean"]
must-not-match = ["git clean -fdx", "cd ~/src && git clean -fdx", "cd ~ && git status"]
)",
                          "cwd.toml");
    REQUIRE(p.ok());
    CHECK(run_examples(*p).empty());
    PolicySet set;
    set.add(std::make_shared<const Policy>(std::move(*p)));
    CHECK_FALSE(set.check_script("git clean -fd", "/home/user", "/home/user").allow);
    CHECK(set.check_script("git clean -fd", "/home/user/x", "/home/user").allow);
    // An unknown directory may be HOME: uncertain.
    CHECK_FALSE(set.check_script("cd \"$X\" && git clean -fd", "/", "/home/user").allow);
    CHECK(set.check_script("cd \"$X\" && git clean -fd", "/", "/home/user", {.defer_uncertain = true}).allow);
}

TEST_CASE("operands-at but-last: the sources of mv, or its only operand", "[policy][matcher]") {
    auto p = parse_policy(R"(
[[rule]]
id = "mv-usr"
decision = "deny"
reason = "r"
program = "mv"
operands = ["/usr"]
operands-at = "but-last"
must-match = ["mv /usr /tmp/x", "mv a /usr b /tmp", "mv /usr"]
must-not-match = ["mv x /usr", "mv a b /usr"]
)",
                          "mv.toml");
    REQUIRE(p.ok());
    CHECK(run_examples(*p).empty());
}

// The compiled form of policies (src/policy/compiled.cpp) and the shipped policies built into
// cordon: a round trip gives back the parsed policy, damaged bytes are an error, and what is
// compiled in is what policies/*.toml says today.
#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "cordon/policy.hpp"
#include "cordon/policy/rules.hpp"
#include "test_files.hpp"

using namespace cordon::policy;
using cordon::test::slurp;
using cordon::test::source_dir;

namespace {

// What a compiled policy keeps: everything but the examples.
Policy without_examples(Policy p) {
    for (auto& r : p.rules) r.must_match.clear(), r.must_not_match.clear();
    return p;
}

const char* kSmall = R"(
description = "small"
default = "deny"
on-unanalyzable = "allow"
on-uncertain = "deny"
[paths]
mine = ["~/keep", "/srv/*"]
[programs.tool]
options = ["-r -R --recursive", "-o= --output=", "-x=?"]
abbreviations = false
permute = false
key-value = ["of"]
[[rule]]
id = "a"
decision = "allow"
reason = "because"
program = ["tool", "/usr/bin/t*"]
subcommand = ["push", "remote add"]
flags = ["-r"]
without-flags = ["-x"]
operands = ["@mine", "of=/dev/sd*"]
operands-at = "last"
unknown-operands = "ignore"
must-match = "tool push -r /srv/x"
must-not-match = "tool pull"
[[rule]]
id = "b"
decision = "deny"
reason = "bomb"
construct = "fork-bomb"
must-match = ":(){ :|:& };:"
must-not-match = "ls"
[[rule]]
id = "c"
decision = "deny"
reason = "writes"
writes = ["/etc/**"]
must-match = "echo x > /etc/passwd"
must-not-match = "echo x > /tmp/y"
)";

}  // namespace

TEST_CASE("a compiled policy reads back as the parsed one, without examples", "[policy][compiled]") {
    auto p = parse_policy(kSmall, "small.toml");
    REQUIRE(p);
    REQUIRE(p->rules.size() == 3);
    const std::string bytes = serialize_policy(*p);
    auto back = deserialize_policy(bytes, "small.toml");
    REQUIRE(back);
    CHECK(*back == without_examples(*p));
    CHECK(back->uncertain_deny);
    CHECK(back->rules[0].must_match.empty());
    CHECK(serialize_policy(*back) == bytes);
    p->uncertain_deny = false;  // the default, "defer"
    auto deferring = deserialize_policy(serialize_policy(*p), "small.toml");
    REQUIRE(deferring);
    CHECK_FALSE(deferring->uncertain_deny);

    SECTION("positions follow the file it is loaded from") {
        auto moved = deserialize_policy(bytes, "/usr/share/cordon/policies/small.toml");
        REQUIRE(moved);
        CHECK(moved->file == "/usr/share/cordon/policies/small.toml");
        CHECK(moved->rules[0].where.rfind("/usr/share/cordon/policies/small.toml:", 0) == 0);
        CHECK(moved->rules[0].where.substr(moved->rules[0].where.rfind(".toml:")) ==
              p->rules[0].where.substr(p->rules[0].where.rfind(".toml:")));
    }
}

TEST_CASE("damaged compiled bytes are an error, never a weaker policy", "[policy][compiled]") {
    auto p = parse_policy(kSmall, "small.toml");
    REQUIRE(p);
    const std::string bytes = serialize_policy(*p);
    for (size_t n = 0; n < bytes.size(); ++n) {
        auto r = deserialize_policy(std::string_view(bytes).substr(0, n), "small.toml");
        INFO("truncated to " << n << " of " << bytes.size() << " bytes");
        CHECK_FALSE(r);
    }
    CHECK_FALSE(deserialize_policy(bytes + "x", "small.toml"));
    // Flip each byte in turn: either the reader notices or it still decodes to a policy; it
    // never reads outside the buffer (the sanitizer build runs this too).
    size_t noticed = 0;
    for (size_t i = 0; i < bytes.size(); ++i) {
        std::string b = bytes;
        b[i] = static_cast<char>(b[i] ^ 0x5a);
        auto r = deserialize_policy(b, "small.toml");
        if (!r) {
            ++noticed;
            CHECK(r.error().why.find("damaged") != std::string::npos);
        }
    }
    CHECK(noticed > 0);
}

TEST_CASE("the policies built into cordon are policies/*.toml as they are now", "[policy][compiled]") {
    const auto embedded = embedded_policies();
    REQUIRE_FALSE(embedded.empty());
    bool have_default = false;
    for (const EmbeddedPolicy& e : embedded) {
        const std::string path = source_dir() + "/policies/" + std::string(e.name) + ".toml";
        INFO(path);
        CHECK(e.text == slurp(path));
        auto parsed = parse_policy(e.text, path);
        REQUIRE(parsed);
        auto compiled = deserialize_policy(e.compiled, path);
        REQUIRE(compiled);
        CHECK(*compiled == without_examples(*parsed));
        have_default = have_default || e.name == kDefaultPolicy;
    }
    CHECK(have_default);
}

TEST_CASE("load() decides the same from the compiled and the parsed default policy", "[policy][compiled]") {
    const std::string shipped = source_dir() + "/policies/default.toml";
    char dir[] = "/tmp/cordon-compiled-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    const std::string copy = std::string(dir) + "/default.toml";
    {
        std::ofstream o(copy);
        o << slurp(shipped) << "\n# not byte-identical: parsed at load\n";
    }
    auto compiled = load({shipped});
    auto parsed = load({copy});
    REQUIRE(compiled);
    REQUIRE(parsed);
    CHECK(compiled->files() == std::vector<std::string>{shipped});
    CHECK(parsed->files() == std::vector<std::string>{copy});
    for (const char* script : {"rm -rf /", "rm -rf ~", "sudo rm -rf --no-preserve-root /", "ls -la",
                               "dd if=/dev/zero of=/dev/sda", "git status", ":(){ :|:& };:"}) {
        INFO(script);
        auto a = compiled->check_script(script, "/home/user/project", "/home/user");
        auto b = parsed->check_script(script, "/home/user/project", "/home/user");
        CHECK(a.allow == b.allow);
        CHECK(a.rule_id == b.rule_id);
        CHECK(a.reason == b.reason);
    }
    std::remove(copy.c_str());
    ::rmdir(dir);
}

TEST_CASE("load() takes the compiled form only for a file that is the shipped policy byte for byte",
          "[policy][compiled]") {
    // What load() parses it runs the examples of, and remembers that they passed in the cache:
    // an entry there shows the file was parsed, not taken for the shipped one.
    const std::string shipped = source_dir() + "/policies/default.toml";
    char dir[] = "/tmp/cordon-compiled-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    const std::string cache = std::string(dir) + "/cache";
    const char* saved = std::getenv("XDG_CACHE_HOME");
    const std::string saved_value = saved ? saved : "";
    ::setenv("XDG_CACHE_HOME", cache.c_str(), 1);
    auto cached = [&] {
        size_t n = 0;
        if (DIR* d = ::opendir((cache + "/cordon/policy-ok").c_str())) {
            while (const dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
            ::closedir(d);
        }
        return n;
    };
    // The same size, one byte of a comment changed: the same rules, but not the shipped file.
    std::string text = slurp(shipped);
    const size_t hash = text.find("# ");
    REQUIRE(hash != std::string::npos);
    text[hash + 2] = text[hash + 2] == 'x' ? 'y' : 'x';
    const std::string variant = std::string(dir) + "/default.toml";
    {
        std::ofstream o(variant);
        o << text;
    }
    auto a = load({shipped});
    REQUIRE(a);
    CHECK(cached() == 0);
    auto b = load({variant});
    REQUIRE(b);
    CHECK(cached() == 1);
    CHECK(a->check_script("rm -rf /", "/home/user", "/home/user").allow ==
          b->check_script("rm -rf /", "/home/user", "/home/user").allow);
    if (saved) {
        ::setenv("XDG_CACHE_HOME", saved_value.c_str(), 1);
    } else {
        ::unsetenv("XDG_CACHE_HOME");
    }
    std::remove(variant.c_str());
    REQUIRE(std::system(("rm -rf " + std::string(dir)).c_str()) == 0);
}

TEST_CASE("load() reads a policy from a FIFO with one open", "[policy][compiled]") {
    // Its writer is met by one open only: a second open would wait for another writer.
    char dir[] = "/tmp/cordon-compiled-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    const std::string fifo = std::string(dir) + "/p.toml";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const std::string text =
        "[[rule]]\nid = \"no-echo\"\ndecision = \"deny\"\nreason = \"echo is denied\"\nprogram = [\"echo\"]\n"
        "must-match = [\"echo hi\"]\nmust-not-match = [\"true\"]\n";
    std::thread writer([&] {
        const int fd = ::open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            (void)!::write(fd, text.data(), text.size());
            ::close(fd);
        }
    });
    auto p = load({fifo});
    writer.join();
    REQUIRE(p);
    CHECK_FALSE(p->check_script("echo hi", "/home/user", "/home/user").allow);
    std::remove(fifo.c_str());
    ::rmdir(dir);
}

TEST_CASE("decoding only what a check needs decides as the whole policy does", "[policy][compiled]") {
    auto p = parse_policy(kSmall, "small.toml");
    REQUIRE(p);
    const std::string bytes = serialize_policy(*p);
    auto whole = deserialize_policy(bytes, "small.toml");
    REQUIRE(whole);
    for (const char* script : {"tool push -r /srv/x", "tool pull", ":(){ :|:& };:", "echo x > /etc/passwd", "ls",
                               "/usr/bin/tx push -R ~/keep", "sudo tool push -r /srv/y", "true"}) {
        INFO(script);
        auto invs = analyze_script(script, kExampleCwd, kExampleHome);
        auto part = deserialize_policy_for(bytes, "small.toml", invs);
        REQUIRE(part);
        CHECK(part->rules.size() <= whole->rules.size());
        Matcher a(kExampleHome), b(kExampleHome);
        for (const auto& inv : invs) {
            for (bool deny : {true, false}) {
                const Rule* ra = a.first_match(*whole, inv, deny);
                const Rule* rb = b.first_match(*part, inv, deny);
                CHECK((ra ? ra->id : "-") == (rb ? rb->id : "-"));
            }
        }
    }
    // A command no rule names decodes neither option tables nor rules for other programs (rule
    // a names an absolute path glob, which may match any command word until it is resolved).
    auto none = deserialize_policy_for(bytes, "small.toml", analyze_script("true", kExampleCwd, kExampleHome));
    REQUIRE(none);
    CHECK(none->programs.empty());
    std::vector<std::string> ids;
    for (const auto& r : none->rules) ids.push_back(r.id);
    CHECK(ids == std::vector<std::string>{"a", "c"});
}

TEST_CASE("the working-directory matcher and operands-at but-last read back", "[policy][compiled]") {
    auto p = parse_policy(R"(
[[rule]]
id = "clean"
decision = "deny"
reason = "r"
program = "git"
subcommand = "clean"
cwd = ["~", "/"]
must-match = "cd ~ && git clean -fd"
must-not-match = "git clean -fd"
[[rule]]
id = "mv"
decision = "deny"
reason = "r"
program = "mv"
operands = ["/usr"]
operands-at = "but-last"
must-match = "mv /usr /tmp"
must-not-match = "mv x /usr"
)",
                          "x.toml");
    REQUIRE(p);
    CHECK(run_examples(*p).empty());
    auto back = deserialize_policy(serialize_policy(*p), "x.toml");
    REQUIRE(back);
    CHECK(*back == without_examples(*p));
    CHECK(back->rules[0].cwd.size() == 2);
    CHECK(back->rules[1].operands_at == Rule::At::ButLast);
}

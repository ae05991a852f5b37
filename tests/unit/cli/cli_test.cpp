// The command line (SPEC §3): prefix-command parsing, ordered primitives, error messages.
#include <algorithm>
#include <catch2/catch.hpp>

#include "cordon/cli.hpp"

using namespace cordon;
using Args = std::vector<std::string>;
using K = cordon::MountRequest::Kind;

namespace {

CliRequest parse_ok(const Args& args) {
    auto r = parse_command_line(args);
    if (!r) FAIL("unexpected error: " << r.error().what << ": " << r.error().why);
    return std::move(r).value();
}

Error parse_err(const Args& args) {
    auto r = parse_command_line(args);
    if (r) FAIL("expected an error");
    return r.error();
}

}  // namespace

TEST_CASE("cli: the first positional starts COMMAND, the rest is its argv", "[cli]") {
    auto r = parse_ok({"--ro", "/a", "ls", "-la", "--ro", "x"});
    CHECK(r.command == Args{"ls", "-la", "--ro", "x"});
    CHECK(get_list(r.layer, "ro") == Args{"/a"});  // the second --ro belongs to ls
    CHECK_FALSE(r.script.has_value());
    CHECK(r.layer.origin == "command line");
}

TEST_CASE("cli: -- ends cordon's options", "[cli]") {
    auto r = parse_ok({"--ro", "/a", "--", "ls", "--ro", "x"});
    CHECK(r.command == Args{"ls", "--ro", "x"});
    CHECK(get_list(r.layer, "ro") == Args{"/a"});

    // A command that looks like an option is allowed after --.
    CHECK(parse_ok({"--", "--weird", "arg"}).command == Args{"--weird", "arg"});
    CHECK(parse_ok({"--", "-c", "x"}).command == Args{"-c", "x"});
    CHECK_FALSE(parse_ok({"--", "-c", "x"}).script.has_value());
    // A -- inside the command's argv is the command's.
    CHECK(parse_ok({"ls", "--", "x"}).command == Args{"ls", "--", "x"});
    // Subcommand names are not special here (main dispatches them first).
    CHECK(parse_ok({"--", "check"}).command == Args{"check"});
}

TEST_CASE("cli: an unknown option is an error, not a command", "[cli]") {
    auto e = parse_err({"--ro-bnd", "a", "b", "ls"});
    CHECK_THAT(e.what + e.why, Catch::Contains("--ro-bnd"));
    CHECK_FALSE(parse_command_line({"--bogus", "ls"}).ok());
}

TEST_CASE("cli: -c SCRIPT", "[cli]") {
    auto r = parse_ok({"-c", "make -j2 && ./run-tests"});
    REQUIRE(r.script.has_value());
    CHECK(*r.script == "make -j2 && ./run-tests");
    CHECK(r.command.empty());

    auto both = parse_err({"-c", "echo hi", "ls"});
    CHECK(both.what == "-c");
    CHECK_THAT(both.why, Catch::Contains("both"));

    // -c without its SCRIPT names the option.
    CHECK_THAT(parse_err({"-c"}).why, Catch::Contains("-c"));
}

TEST_CASE("cli: a COMMAND is required unless --dry-run", "[cli]") {
    CHECK_THAT(parse_err({}).why, Catch::Contains("no COMMAND"));
    CHECK_THAT(parse_err({"--ro", "/a"}).why, Catch::Contains("no COMMAND"));
    auto r = parse_ok({"--dry-run"});
    CHECK(r.dry_run);
    CHECK(r.command.empty());
}

TEST_CASE("cli: bwrap-style primitives keep the command line's order", "[cli]") {
    auto r = parse_ok({"--bind", "a", "b", "--dir", "d", "--ro-bind", "c", "e", "true"});
    auto ops = get_ops(r.layer);
    REQUIRE(ops.size() == 3);
    CHECK(mount_request_option(ops[0].request) == "bind");
    CHECK(ops[0].request == MountRequest{K::Bind, "a", "b"});
    CHECK(mount_request_option(ops[1].request) == "dir");
    CHECK(ops[1].request == MountRequest{K::Dir, "", "d"});
    CHECK(mount_request_option(ops[2].request) == "ro-bind");
    CHECK(ops[2].request == MountRequest{K::RoBind, "c", "e"});
    for (const auto& op : ops) CHECK(op.origin == "command line");
    CHECK(r.command == Args{"true"});
}

TEST_CASE("cli: repeated two-value primitives interleave correctly", "[cli]") {
    // --dir /x must come before the bind below it, and /z before its bind.
    auto r = parse_ok({"--dir", "/x", "--bind", "a", "/x/y", "--dir", "/z", "--bind", "b", "/z/w", "--symlink", "t",
                       "/l", "--remount-ro", "/x", "true"});
    auto ops = get_ops(r.layer);
    REQUIRE(ops.size() == 6);
    CHECK(mount_request_option(ops[0].request) == "dir");
    CHECK(ops[0].request == MountRequest{K::Dir, "", "/x"});
    CHECK(mount_request_option(ops[1].request) == "bind");
    CHECK(ops[1].request == MountRequest{K::Bind, "a", "/x/y"});
    CHECK(mount_request_option(ops[2].request) == "dir");
    CHECK(ops[2].request == MountRequest{K::Dir, "", "/z"});
    CHECK(mount_request_option(ops[3].request) == "bind");
    CHECK(ops[3].request == MountRequest{K::Bind, "b", "/z/w"});
    CHECK(mount_request_option(ops[4].request) == "symlink");
    CHECK(ops[4].request == MountRequest{K::Symlink, "t", "/l"});
    CHECK(ops[5].request == MountRequest{K::RemountRo, "", "/x"});
}

TEST_CASE("cli: a two-value option with one value is an error, not dropped", "[cli]") {
    auto r = parse_command_line({"--rw", "/x", "--bind", "a"});
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().what + r.error().why, Catch::Contains("--bind"));
}

TEST_CASE("cli: an option's values are the words after it, whatever they are", "[cli]") {
    // As getopt and bubblewrap read them: no word in a value's place is an option of cordon's.
    auto r = parse_ok({"--bind", "a", "--no-policy", "--setenv", "A", "--net", "--hostname", "-x", "-q", "ls"});
    CHECK_FALSE(r.no_policy);
    CHECK(r.verbosity == -1);
    CHECK(r.command == std::vector<std::string>{"ls"});
    CHECK(get_string(r.layer, "hostname") == std::optional<std::string>("-x"));
    CHECK_FALSE(r.layer.values.count("net"));
    auto pairs = get_pairs(r.layer, "setenv");
    REQUIRE(pairs.size() == 1);
    CHECK((pairs[0].first == "A" && pairs[0].second == "--net"));
    auto p = parse_ok({"-pdefault", "-p", "-odd", "--profile", "--x", "--", "true"});
    CHECK(p.profiles == std::vector<std::string>{"default", "-odd", "--x"});
    auto c = parse_ok({"-qc", "-v", "--setenv", "B", "--no-policy"});
    CHECK(c.script == std::optional<std::string>("-v"));
    CHECK((c.verbosity == -1 && !c.no_policy && c.command.empty()));
    // --NAME=VALUE gives the first value in place; the rest follow.
    auto eq = parse_ok({"--setenv=B", "-x", "ls"});
    REQUIRE(get_pairs(eq.layer, "setenv").size() == 1);
    CHECK(get_pairs(eq.layer, "setenv")[0] == PairValue{"B", "-x"});
    // A value that looks like the parser's own stand-in is a value like any other.
    auto token = parse_ok({"--setenv", "A", "-x", "--setenv", "B",
                           "\x1c"
                           "ordon-value-3",
                           "--hostname",
                           "\x01"
                           "cordon-value-1",
                           "ls"});
    CHECK(get_pairs(token.layer, "setenv")[1].second ==
          "\x1c"
          "ordon-value-3");
    CHECK(get_string(token.layer, "hostname") == std::optional<std::string>("\x01"
                                                                            "cordon-value-1"));
}

TEST_CASE("cli: an on/off option given =false is off", "[cli]") {
    auto off = parse_ok({"--allow-userns=false", "--allow-ptrace=no", "--new-session=true", "ls"});
    CHECK(off.layer.values.at("allow-userns") == Value(false));
    CHECK(off.layer.values.at("allow-ptrace") == Value(false));
    CHECK(off.layer.values.at("new-session") == Value(true));
}

TEST_CASE("cli: an option's value found before parsing, as the parser finds it", "[cli]") {
    CHECK(option_value_in({"--status-json", "/s", "ls"}, "status-json") == std::optional<std::string>("/s"));
    CHECK(option_value_in({"--status-json=/s", "ls"}, "status-json") == std::optional<std::string>("/s"));
    // Words that are values (of -qc, of --setenv) or the command's are not cordon's options.
    CHECK_FALSE(option_value_in({"-qc", "--status-json", "/victim"}, "status-json"));
    CHECK_FALSE(option_value_in({"--setenv", "--status-json", "/victim", "ls"}, "status-json"));
    CHECK_FALSE(option_value_in({"ls", "--status-json", "/victim"}, "status-json"));
    CHECK(option_value_in({"-vp", "x", "--status-json", "fd:3", "ls"}, "status-json") ==
          std::optional<std::string>("fd:3"));
}

TEST_CASE("cli: lists and pairs accumulate, scalars take the last value", "[cli]") {
    auto r = parse_ok({"--ro",  "/a",   "--rw",       "/b",   "--ro",       "/c",  "--setenv",
                       "A",     "1",    "--unsetenv", "X",    "--setenv",   "B",   "two words",
                       "--net", "none", "--net",      "host", "--hostname", "box", "ls"});
    CHECK(get_list(r.layer, "ro") == Args{"/a", "/c"});
    CHECK(get_list(r.layer, "rw") == Args{"/b"});
    CHECK(get_list(r.layer, "unsetenv") == Args{"X"});
    CHECK(get_pairs(r.layer, "setenv") == std::vector<PairValue>{{"A", "1"}, {"B", "two words"}});
    CHECK(get_string(r.layer, "net") == std::string("host"));
    CHECK(get_string(r.layer, "hostname") == std::string("box"));
    CHECK(r.layer.where.at("net") == "--net");
    CHECK(get_ops(r.layer).empty());
    // --opt=value works too.
    CHECK(get_list(parse_ok({"--ro=/x", "ls"}).layer, "ro") == Args{"/x"});
}

TEST_CASE("cli: typed values are checked and stored", "[cli]") {
    auto r = parse_ok({"--uid", "0", "--gid", "4294967294", "--timeout", "1h30m", "--tmpfs-size", "64M",
                       "--allow-userns", "--clearenv", "ls"});
    CHECK(get_uint(r.layer, "uid") == uint64_t{0});
    CHECK(get_uint(r.layer, "gid") == uint64_t{4294967294});
    // Converted once, kept with the text as written.
    CHECK(get_quantity(r.layer, "timeout") == Quantity{5400000, "1h30m"});
    CHECK(get_quantity(r.layer, "tmpfs-size") == Quantity{64ULL << 20, "64M"});
    CHECK(get_bool(r.layer, "allow-userns"));
    CHECK(get_bool(r.layer, "clearenv"));
    CHECK_FALSE(get_bool(r.layer, "allow-ptrace"));
}

TEST_CASE("cli: bad values name the option and the value", "[cli]") {
    auto t = parse_err({"--timeout", "5x", "ls"});
    CHECK(t.what == "--timeout");
    CHECK_THAT(t.why, Catch::Contains("'5x'"));

    auto u = parse_err({"--uid", "abc", "ls"});
    CHECK(u.what == "--uid");
    CHECK_THAT(u.why, Catch::Contains("'abc'"));

    // (uid_t)-1 is "no change" for setresuid and cannot be mapped.
    CHECK(parse_err({"--uid", "4294967295", "ls"}).what == "--uid");
    CHECK(parse_err({"--gid", "99999999999", "ls"}).what == "--gid");
    CHECK(parse_err({"--uid", "-1", "ls"}).what == "--uid");
    CHECK(parse_err({"--uid", "", "ls"}).what == "--uid");

    auto s = parse_err({"--tmpfs-size", "1Q", "ls"});
    CHECK(s.what == "--tmpfs-size");
    CHECK_THAT(s.why, Catch::Contains("'1Q'"));

    // A missing value names the option.
    CHECK_THAT(parse_err({"--workdir"}).why, Catch::Contains("--workdir"));
}

TEST_CASE("cli: exec-time check options are taken as given", "[cli]") {
    auto r = parse_ok({"--audit", "/tmp/a", "--on-deny", "kill", "--exec-checks", "required", "ls"});
    CHECK(get_string(r.layer, "audit") == "/tmp/a");
    CHECK(get_string(r.layer, "on-deny") == "kill");
    CHECK(get_string(r.layer, "exec-checks") == "required");
}

TEST_CASE("cli: --policy is repeatable and accumulates", "[cli]") {
    auto r = parse_ok({"--policy", "a", "--policy", "./b.toml", "ls"});
    CHECK(get_list(r.layer, "policy") == std::vector<std::string>{"a", "./b.toml"});
}

TEST_CASE("cli: profiles, verbosity and flags", "[cli]") {
    auto r = parse_ok({"-p", "npm", "--profile", "./x.toml", "-v", "-v", "--no-policy", "--no-profile", "ls"});
    CHECK(r.profiles == Args{"npm", "./x.toml"});
    CHECK(r.verbosity == 2);
    CHECK(r.no_policy);
    CHECK(r.no_profile);
    CHECK_FALSE(r.dry_run);

    auto q = parse_ok({"-q", "ls"});
    CHECK(q.verbosity == -1);
    CHECK(q.profiles.empty());
    CHECK_FALSE(q.no_profile);
}

TEST_CASE("cli: --help and --version run nothing", "[cli]") {
    auto h = parse_ok({"--help"});
    CHECK(h.help);
    CHECK(h.command.empty());
    CHECK_THAT(h.help_text, Catch::Contains("--ro"));
    CHECK_THAT(h.help_text, Catch::Contains("--bind"));
    CHECK_THAT(h.help_text, Catch::Contains("--timeout"));
    CHECK_THAT(h.help_text, Catch::Contains("-c"));
    CHECK_THAT(h.help_text, Catch::Contains("--exec-checks"));
    CHECK_THAT(h.help_text, Catch::Contains("--on-deny"));
    CHECK_THAT(h.help_text, Catch::Contains("--audit"));
    CHECK_THAT(h.help_text, !Catch::Contains("Not yet available"));

    // --help wins even with other options and a command.
    auto h2 = parse_ok({"--ro", "/a", "-h", "ls"});
    CHECK(h2.help);
    CHECK_FALSE(h2.help_text.empty());

    auto v = parse_ok({"--version"});
    CHECK(v.version);
    CHECK_FALSE(v.help);
    CHECK(v.help_text.empty());
}

TEST_CASE("cli: every line of --help fits in 100 columns", "[cli]") {
    auto h = parse_ok({"--help"});
    std::size_t start = 0;
    while (start < h.help_text.size()) {
        std::size_t end = std::min(h.help_text.find('\n', start), h.help_text.size());
        INFO(h.help_text.substr(start, end - start));
        CHECK(end - start <= 100);
        start = end + 1;
    }
    // A wrapped description goes on under its own column, and its words all stay.
    CHECK_THAT(h.help_text, Catch::Contains("address range) on\n"
                                            "                                  PORT (default 80 and 443)"));
}

TEST_CASE("cli: the `[-q|-v]... -- COMMAND` shortcut returns what CLI11 returns", "[cli]") {
    const std::vector<Args> forms = {
        {"--", "true"},
        {"-q", "--", "true", "-x", "--", "y"},
        {"-v", "--", "ls", "-la"},
        {"-v", "-v", "--verbose", "--", "a b"},
        {"--quiet", "-v", "--", "-c"},
        {"-q", "-q", "--", "--", "--help"},
        {"--", "--version"},
    };
    for (const auto& args : forms) {
        INFO(Catch::Detail::stringify(args));
        auto fast = parse_command_line(args);
        auto full = parse_command_line_full(args);
        REQUIRE(fast);
        REQUIRE(full);
        CHECK(fast->command == full->command);
        CHECK(fast->verbosity == full->verbosity);
        CHECK(fast->layer.origin == full->layer.origin);
        CHECK(fast->layer.values == full->layer.values);
        CHECK(fast->layer.where == full->layer.where);
        CHECK(fast->profiles == full->profiles);
        CHECK(fast->no_profile == full->no_profile);
        CHECK(fast->no_policy == full->no_policy);
        CHECK(fast->dry_run == full->dry_run);
        CHECK(fast->script == full->script);
        CHECK_FALSE(full->help);
        CHECK_FALSE(full->version);
    }
    // Everything else goes through CLI11: its errors and the other options still apply.
    CHECK_FALSE(parse_command_line({"-q", "--"}));
    CHECK_FALSE(parse_command_line({"-x", "--", "true"}));
    CHECK(parse_command_line({"-qv", "--", "true"})->verbosity == -1);
    CHECK(parse_command_line({"--memory", "1G", "--", "true"})->layer.values.count("memory") == 1);
}

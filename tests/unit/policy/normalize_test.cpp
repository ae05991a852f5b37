// Operand paths, path patterns and flag normalisation.
#include <catch2/catch.hpp>

#include "cordon/policy/pattern.hpp"
#include "cordon/policy/rules.hpp"

using namespace cordon::policy;

namespace {

std::string resolved(const Field& f, const std::string& cwd = "/home/user/project") {
    return to_string(resolve_path(f, literal_pattern(cwd)).path);
}

Pattern policy_path(const std::string& s) {
    auto p = compile_policy_path(s, "/home/user");
    REQUIRE(p.ok());
    return *p;
}

bool denotes(const Field& f, const std::string& target, const std::string& cwd = "/home/user/project") {
    return may_denote(resolve_path(f, literal_pattern(cwd)), policy_path(target));
}

Field glob(const std::string& s) {
    Field f;
    f.add(Piece::Kind::Glob, s);
    return f;
}

ProgramSpec rm_spec() {
    ProgramSpec s;
    auto add = [&](std::string canon, std::vector<std::string> spellings, OptionSpec::Arg arg = OptionSpec::Arg::None) {
        s.options.push_back({canon, arg});
        for (auto& sp : spellings) {
            s.spellings[sp] = s.options.size() - 1;
            if (sp.rfind("--", 0) == 0) s.longs.push_back(sp);
        }
    };
    add("-r", {"-r", "-R", "--recursive"});
    add("-f", {"-f", "--force"});
    add("--interactive", {"--interactive"}, OptionSpec::Arg::Optional);
    add("--preserve-root", {"--preserve-root"}, OptionSpec::Arg::Optional);
    add("-t", {"-t", "--target"}, OptionSpec::Arg::Required);
    return s;
}

std::vector<Field> argv(std::initializer_list<const char*> words) {
    std::vector<Field> out;
    for (const char* w : words) out.push_back(Field::lit(w));
    return out;
}

std::vector<std::string> operand_texts(const CommandLine& cl) {
    std::vector<std::string> out;
    for (const auto& f : cl.operands) out.push_back(f.static_text());
    return out;
}

}  // namespace

TEST_CASE("operands are resolved lexically", "[policy][normalize]") {
    CHECK(resolved(Field::lit("/")) == "/");
    CHECK(resolved(Field::lit("//")) == "/");
    CHECK(resolved(Field::lit("/usr/")) == "/usr");
    CHECK(resolved(Field::lit("/usr/./lib/../")) == "/usr");
    CHECK(resolved(Field::lit("/..")) == "/");
    CHECK(resolved(Field::lit(".")) == "/home/user/project");
    CHECK(resolved(Field::lit("..")) == "/home/user");
    CHECK(resolved(Field::lit("../../..")) == "/");
    CHECK(resolved(Field::lit("build/")) == "/home/user/project/build");
    CHECK(resolved(Field::lit("usr"), "/") == "/usr");
    CHECK(resolved(Field::unknown()) == "**");
}

TEST_CASE("operands through /proc reach the root and the working directory", "[policy][normalize]") {
    CHECK(resolved(Field::lit("/proc/self/root")) == "/");
    CHECK(resolved(Field::lit("/proc/self/root/usr/")) == "/usr");
    CHECK(resolved(Field::lit("/proc/1/root/etc")) == "/etc");
    CHECK(resolved(Field::lit("/proc/thread-self/root/..")) == "/");
    CHECK(resolved(Field::lit("/proc//self/./root/../usr")) == "/usr");
    CHECK(resolved(Field::lit("/proc/self/cwd")) == "/home/user/project");
    CHECK(resolved(Field::lit("/proc/self/cwd/../..")) == "/home");
    CHECK(resolved(Field::lit("/proc/self/cwd/x"), "/") == "/x");
    CHECK(resolved(Field::lit("/proc/42/cwd")) == "**");  // another process's: unknown
    Field pid = Field::lit("/proc/");
    pid.pieces.push_back({Piece::Kind::Unknown, "$$"});
    pid.add(Piece::Kind::Lit, "/root/usr");
    CHECK(resolved(pid) == "/usr");
    CHECK(resolved(glob("/proc/*/root/usr")) == "/usr");
    // Only those links: other /proc paths stay what they are.
    CHECK(resolved(Field::lit("/proc/self/rootx")) == "/proc/self/rootx");
    CHECK(resolved(Field::lit("/proc/self/fd/3")) == "/proc/self/fd/3");
    CHECK(resolved(Field::lit("/x/proc/self/root")) == "/x/proc/self/root");
    // Policy patterns are not operands: /proc/** stays a pattern for /proc.
    CHECK(to_string(policy_path("/proc/self/root")) == "/proc/self/root");
}

TEST_CASE("globs and unknown values may denote protected paths", "[policy][normalize]") {
    CHECK(denotes(glob("/*"), "/"));     // every child of / is as bad as /
    CHECK(denotes(glob("/*"), "/usr"));  // and /usr is one of them
    CHECK(denotes(glob("/u?r"), "/usr"));
    CHECK(denotes(glob("/[a-z]sr"), "/usr"));
    CHECK_FALSE(denotes(glob("/tmp/*"), "/"));
    CHECK_FALSE(denotes(glob("/tmp/*"), "/usr"));
    Field f = Field::lit("/home/user/");
    f.add(Piece::Kind::Glob, "*");
    CHECK(denotes(f, "~"));
    CHECK(denotes(Field::unknown(), "/"));
    Field build = Field::unknown();
    build.add(Piece::Kind::Lit, "/build");
    CHECK_FALSE(denotes(build, "/"));
    CHECK_FALSE(denotes(build, "/usr"));
    Field slash = Field::unknown();
    slash.add(Piece::Kind::Lit, "/");
    CHECK(denotes(slash, "/"));  // "$X/" with X empty
    CHECK_FALSE(denotes(Field::lit("/usr/local/bin/x"), "/usr/*"));
    CHECK(denotes(Field::lit("/usr/local"), "/usr/*"));
    CHECK(denotes(Field::lit("/dev/sda1"), "/dev/sd*"));
    CHECK_FALSE(denotes(Field::lit("/dev/null"), "/dev/sd*"));
    CHECK(denotes(Field::lit("/dev/disk/by-id/x"), "/dev/disk/**"));
    CHECK(denotes(Field::lit("."), "~", "/home/user"));
}

TEST_CASE("may_overlap is symmetric on examples", "[policy][normalize]") {
    auto a = policy_path("/usr/*");
    auto b = policy_path("/**/lib");
    CHECK(may_overlap(a, b));
    CHECK(may_overlap(b, a));
    auto c = policy_path("/etc/*.conf");
    auto d = policy_path("/etc/x/y.conf");
    CHECK_FALSE(may_overlap(c, d));
    CHECK_FALSE(may_overlap(d, c));
}

TEST_CASE("policy path patterns", "[policy][normalize]") {
    CHECK(to_string(policy_path("~")) == "/home/user");
    CHECK(to_string(policy_path("${HOME}/.ssh")) == "/home/user/.ssh");
    CHECK(to_string(policy_path("$HOME/")) == "/home/user");
    CHECK(to_string(policy_path("/usr/")) == "/usr");
    CHECK_FALSE(compile_policy_path("relative/path", "/h").ok());
    CHECK_FALSE(compile_policy_path("", "/h").ok());
}

TEST_CASE("flags: clusters, long options, abbreviations, --", "[policy][normalize]") {
    ProgramSpec spec = rm_spec();
    auto cl = normalize(argv({"/bin/rm", "-Rf", "--", "-x", "/"}), &spec);
    CHECK(cl.program == "rm");
    CHECK(cl.flags == std::vector<std::string>{"-r", "-f"});
    CHECK(operand_texts(cl) == std::vector<std::string>{"-x", "/"});

    cl = normalize(argv({"rm", "--rec", "--force", "a"}), &spec);
    CHECK(cl.flags == std::vector<std::string>{"-r", "-f"});

    cl = normalize(argv({"rm", "--r", "a"}), &spec);  // any unique prefix, as getopt_long
    CHECK(cl.flags == std::vector<std::string>{"-r"});

    cl = normalize(argv({"rm", "a", "-r", "b"}), &spec);  // GNU permutation
    CHECK(cl.flags == std::vector<std::string>{"-r"});
    CHECK(operand_texts(cl) == std::vector<std::string>{"a", "b"});

    cl = normalize(argv({"rm", "-t", "/", "x", "-tdir", "--target=/", "--interactive=never", "y"}), &spec);
    CHECK(operand_texts(cl) == std::vector<std::string>{"x", "y"});
    CHECK(cl.flags == std::vector<std::string>{"-t", "-t", "-t", "--interactive"});

    cl = normalize(argv({"rm", "-", "x"}), &spec);
    CHECK(operand_texts(cl) == std::vector<std::string>{"-", "x"});
}

TEST_CASE("flags of a program without a spec are split per character", "[policy][normalize]") {
    auto cl = normalize(argv({"tool", "-abc", "--long=x", "op"}), nullptr);
    CHECK(cl.flags == std::vector<std::string>{"-a", "-b", "-c", "--long"});
    CHECK(operand_texts(cl) == std::vector<std::string>{"op"});
}

TEST_CASE("ambiguous abbreviations match nothing", "[policy][normalize]") {
    ProgramSpec spec = rm_spec();
    spec.options.push_back({"--recurse-deep", OptionSpec::Arg::None});
    spec.spellings["--recurse-deep"] = spec.options.size() - 1;
    spec.longs.push_back("--recurse-deep");
    auto cl = normalize(argv({"rm", "--recur", "a"}), &spec);
    CHECK(cl.flags == std::vector<std::string>{"--recur"});
    cl = normalize(argv({"rm", "--recurs", "a"}), &spec);
    CHECK(cl.flags == std::vector<std::string>{"--recurs"});  // still ambiguous
    cl = normalize(argv({"rm", "--recursi", "a"}), &spec);
    CHECK(cl.flags == std::vector<std::string>{"-r"});
}

TEST_CASE("key-value operands", "[policy][normalize]") {
    ProgramSpec spec;
    spec.key_value = {"of"};
    auto cl = normalize(argv({"dd", "if=/dev/zero", "of=/dev/sda"}), &spec);
    REQUIRE(cl.operands.size() == 2);
    CHECK(cl.kv_keys == std::vector<std::string>{"", "of"});
    CHECK(cl.operands[1].static_text() == "/dev/sda");
}

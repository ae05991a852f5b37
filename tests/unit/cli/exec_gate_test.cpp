// Judging one exec inside the jail (src/cli/exec_gate.cpp): the argv lines it is judged as, and
// the decisions of the shipped policy on them, against a fake jail root on disk.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cordon/exec_gate.hpp"
#include "cordon/policy.hpp"

using namespace cordon;
namespace fs = std::filesystem;

namespace {

struct FakeRoot {
    fs::path dir = fs::temp_directory_path() / ("cordon-exec-gate-" + std::to_string(::getpid()));
    FakeRoot() {
        fs::remove_all(dir);
        fs::create_directories(dir / "usr/bin");
        fs::create_directories(dir / "proc");
        fs::create_directories(dir / "home/me/project");
        for (const char* f : {"usr/bin/rm", "usr/bin/busybox", "usr/bin/true"}) {
            UniqueFd(::open((dir / f).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0755));
        }
        fs::create_symlink("/usr/bin/rm", dir / "home/me/project/del");
        fs::create_symlink("/", dir / "home/me/project/up");
    }
    ~FakeRoot() { fs::remove_all(dir); }
    ExecRequest request(std::vector<std::string> argv, const std::string& exe) const {
        ExecRequest r;
        r.argv = std::move(argv);
        r.path = r.argv[0];
        r.cwd = "/home/me/project";
        r.exe = exe;
        r.root.reset(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        return r;
    }
};

using Lines = std::vector<std::vector<std::string>>;

}  // namespace

TEST_CASE("exec_variants: the program really run, and operands resolved in the jail", "[exec_gate]") {
    FakeRoot root;
    // A symlink to rm under another name is judged as rm too.
    auto del = root.request({"./del", "-rf", "x"}, "/usr/bin/rm");
    CHECK(exec_variants(del) == Lines{{"./del", "-rf", "x"}, {"/usr/bin/rm", "-rf", "x"}});
    // A multicall binary is named by argv[0]; busybox so named is that applet run by busybox
    // (busybox named sh is busybox sh, which runs its applets in its own process).
    auto bb = root.request({"rm", "-rf", "x"}, "/usr/bin/busybox");
    CHECK(exec_variants(bb) == Lines{{"rm", "-rf", "x"}, {"/usr/bin/busybox", "rm", "-rf", "x"}});
    auto sh = root.request({"-sh", "./s.sh"}, "/usr/bin/busybox");
    CHECK(exec_variants(sh) == Lines{{"-sh", "./s.sh"}, {"sh", "./s.sh"}, {"/usr/bin/busybox", "sh", "./s.sh"}});
    // Operands reaching / through a symlink or /proc/self/root are resolved; a plain one is not.
    auto up = root.request({"rm", "-rf", "up/"}, "/usr/bin/rm");
    CHECK(exec_variants(up) == Lines{{"rm", "-rf", "up/"}, {"rm", "-rf", "/"}});
    auto proc = root.request({"rm", "-rf", "/proc/self/root/usr"}, "/usr/bin/rm");
    CHECK(exec_variants(proc) == Lines{{"rm", "-rf", "/proc/self/root/usr"}, {"rm", "-rf", "/usr"}});
    auto plain = root.request({"rm", "-rf", "build/obj"}, "/usr/bin/rm");
    CHECK(exec_variants(plain) == Lines{{"rm", "-rf", "build/obj"}});
}

TEST_CASE("argv0_variants: what a name makes a program", "[exec_gate]") {
    // busybox named rm (or -rm, as a login shell is named) is rm; git-clean is git's clean,
    // whatever the file is called.
    // (and busybox's rm applet).
    CHECK(argv0_variants({"busybox", "-rf", "x"}, "rm") == Lines{{"rm", "-rf", "x"}, {"busybox", "rm", "-rf", "x"}});
    CHECK(argv0_variants({"busybox", "-rf", "x"}, "-rm") ==
          Lines{{"-rm", "-rf", "x"}, {"rm", "-rf", "x"}, {"busybox", "rm", "-rf", "x"}});
    CHECK(argv0_variants({"/bin/busybox", "s.sh"}, "ash") == Lines{{"ash", "s.sh"}, {"/bin/busybox", "ash", "s.sh"}});
    CHECK(argv0_variants({"toybox", "s.sh"}, "sh") == Lines{{"sh", "s.sh"}, {"toybox", "sh", "s.sh"}});
    CHECK(argv0_variants({"git", "-fdx"}, "git-clean") == Lines{{"git-clean", "-fdx"}, {"git", "clean", "-fdx"}});
    CHECK(argv0_variants({"./mygit", "-f"}, "/x/git-clean") == Lines{{"/x/git-clean", "-f"}, {"git", "clean", "-f"}});
    CHECK(argv0_variants({"git", "x"}, "git-") == Lines{{"git-", "x"}});
    // Only git reads its name that way: a dash in another name splits nothing.
    CHECK(argv0_variants({"tee-wrapper", "/dev/sda"}, "tee-wrapper") == Lines{{"tee-wrapper", "/dev/sda"}});
    CHECK(argv0_variants({"x", "of=/dev/sda"}, "dd-wrapper") == Lines{{"dd-wrapper", "of=/dev/sda"}});
    CHECK(argv0_variants({"sh"}, "-") == Lines{{"-"}});
    CHECK(argv0_variants({}, "rm").empty());
    // The loader's --argv0 names the program it runs.
    const auto loaded =
        loader_argv0_variants({"/lib64/ld-linux-x86-64.so.2", "--argv0", "git-clean", "/usr/bin/git", "-f"});
    CHECK(std::find(loaded.begin(), loaded.end(), std::vector<std::string>{"git", "clean", "-f"}) != loaded.end());
    CHECK(loader_argv0_variants({"/usr/bin/git", "--argv0", "git-clean", "x"}).empty());
    // All of a command's names at once, without the command itself and without repeats: a plain
    // name adds nothing, so a run of `ls` costs no second check.
    CHECK(name_variants({"ls", "-l"}, std::nullopt).empty());
    CHECK(name_variants({"git-clean", "-f"}, std::nullopt) == Lines{{"git", "clean", "-f"}});
    CHECK(name_variants({"./bb", "-rf", "x"}, std::string("-rm")) == Lines{{"-rm", "-rf", "x"}, {"rm", "-rf", "x"}});
    // busybox runs its first argument under any name that begins with "busybox".
    CHECK(argv0_variants({"./busyboxZ", "rm", "-r", "d"}, "./busyboxZ") ==
          Lines{{"./busyboxZ", "rm", "-r", "d"}, {"rm", "-r", "d"}});
    CHECK(argv0_variants({"busybox", "rm", "-r", "d"}, "busybox.static") ==
          Lines{{"busybox.static", "rm", "-r", "d"}, {"rm", "-r", "d"}});
    // Inside the jail: the exec of git with argv[0] git-clean is judged as git clean too.
    FakeRoot root;
    auto clean = root.request({"git-clean", "-fdx"}, "/usr/bin/git");
    const auto lines = exec_variants(clean);
    CHECK(std::find(lines.begin(), lines.end(), std::vector<std::string>{"git", "clean", "-fdx"}) != lines.end());
}

TEST_CASE("judge_exec denies what any line denies, and what could not be read", "[exec_gate]") {
    FakeRoot root;
    auto policies = policy::load({"default"});
    REQUIRE(policies);
    const std::string home = "/home/me";
    CHECK_FALSE(judge_exec(*policies, root.request({"./del", "-rf", "/usr"}, "/usr/bin/rm"), home).decision.allow);
    CHECK_FALSE(judge_exec(*policies, root.request({"rm", "-rf", "up/"}, "/usr/bin/rm"), home).decision.allow);
    CHECK_FALSE(judge_exec(*policies, root.request({"sh", "-c", "rm -rf /"}, "/usr/bin/dash"), home).decision.allow);
    auto ok = judge_exec(*policies, root.request({"rm", "-rf", "build"}, "/usr/bin/rm"), home);
    CHECK(ok.decision.allow);
    CHECK(ok.executable == "/usr/bin/rm");
    // What stays uncertain in a shell's text is left to the execs it leads to.
    CHECK(judge_exec(*policies, root.request({"sh", "-c", "rm -rf \"$X\""}, "/usr/bin/dash"), home).decision.allow);
    // ... but not in busybox's shell, which runs its applets without an exec; nor can a script it
    // reads from a file or standard input be left to them. busybox named nuke is rm -r -f.
    const std::string bb = "/usr/bin/busybox";
    CHECK_FALSE(judge_exec(*policies, root.request({"busybox", "sh", "-c", "rm -rf \"$X\""}, bb), home).decision.allow);
    CHECK_FALSE(judge_exec(*policies, root.request({"sh", "-c", "rm -rf \"$X\""}, bb), home).decision.allow);
    CHECK(judge_exec(*policies, root.request({"sh", "-c", "rm -rf build"}, bb), home).decision.allow);
    auto file = judge_exec(*policies, root.request({"ash", "./s.sh"}, bb), home);
    CHECK_FALSE(file.decision.allow);
    CHECK(file.decision.rule_id == "on-unanalyzable");
    CHECK(file.decision.reason.find("without an exec") != std::string::npos);
    CHECK_FALSE(judge_exec(*policies, root.request({"busybox", "sh"}, bb), home).decision.allow);
    CHECK(judge_exec(*policies, root.request({"sh", "./s.sh"}, "/usr/bin/dash"), home).decision.allow);
    CHECK_FALSE(judge_exec(*policies, root.request({"nuke", "/usr"}, bb), home).decision.allow);
    CHECK_FALSE(judge_exec(*policies, root.request({"busybox", "nuke", "/home/me"}, bb), home).decision.allow);
    CHECK(judge_exec(*policies, root.request({"nuke", "build"}, bb), home).decision.allow);
    auto unreadable = root.request({"x"}, "");
    unreadable.error = "its arguments exceed what cordon reads to check them";
    auto j = judge_exec(*policies, unreadable, home);
    CHECK_FALSE(j.decision.allow);
    CHECK(j.decision.rule_id == "exec-unreadable");
}

TEST_CASE("audit_line has the fields SPEC §9 names", "[exec_gate]") {
    FakeRoot root;
    auto r = root.request({"true", "a b"}, "/usr/bin/true");
    r.jail_pid = 7;
    ExecJudgement j;
    j.executable = "/usr/bin/true";
    j.decision.rule_id = "default";
    std::string line = audit_line(r, j, 1700000000.5);
    CHECK(line == R"({"time":1700000000.500000,"pid":7,"argv":["true","a b"],"cwd":"/home/me/project",)"
                  R"("executable":"/usr/bin/true","decision":"allow","rule":"default","reason":""})"
                  "\n");
}

TEST_CASE("exec_variants: a script's interpreters and the loader's program", "[exec_gate]") {
    FakeRoot root;
    const fs::path project = root.dir / "home/me/project";
    auto script = [&](const char* name, const std::string& text) {
        std::ofstream(project / name) << text;
        fs::permissions(project / name, fs::perms::owner_all);
    };
    script("wipe", "#!/usr/bin/rm -rf\n");
    auto wipe = root.request({"./wipe", "/usr"}, "/home/me/project/wipe");
    auto v = exec_variants(wipe);
    CHECK(std::find(v.begin(), v.end(), std::vector<std::string>{"/usr/bin/rm", "-rf", "./wipe", "/usr"}) != v.end());
    // An interpreter that is a script itself: the kernel runs the inner one's interpreter.
    script("outer", "#!./wipe\n");
    v = exec_variants(root.request({"./outer", "/usr"}, "/home/me/project/outer"));
    CHECK(std::find(v.begin(), v.end(), std::vector<std::string>{"./wipe", "./outer", "/usr"}) != v.end());
    CHECK(std::find(v.begin(), v.end(), std::vector<std::string>{"/usr/bin/rm", "-rf", "./wipe", "./outer", "/usr"}) !=
          v.end());
    // The loader: the program it maps, past its options.
    fs::create_directories(root.dir / "lib64");
    UniqueFd(::open((root.dir / "lib64/ld-linux-x86-64.so.2").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0755));
    auto ld = root.request({"/lib64/ld-linux-x86-64.so.2", "--library-path", "/usr/lib", "./del", "-rf", "/usr"},
                           "/lib64/ld-linux-x86-64.so.2");
    v = exec_variants(ld);
    CHECK(std::find(v.begin(), v.end(), std::vector<std::string>{"./del", "-rf", "/usr"}) != v.end());
    CHECK(std::find(v.begin(), v.end(), std::vector<std::string>{"/usr/bin/rm", "-rf", "/usr"}) != v.end());
    auto policies = policy::load({"default"});
    REQUIRE(policies);
    CHECK_FALSE(judge_exec(*policies, wipe, "/home/me").decision.allow);
    CHECK_FALSE(judge_exec(*policies, ld, "/home/me").decision.allow);
    script("ok.sh", "#!/bin/sh\necho hi\n");
    CHECK(
        judge_exec(*policies, root.request({"./ok.sh", "build"}, "/home/me/project/ok.sh"), "/home/me").decision.allow);
}

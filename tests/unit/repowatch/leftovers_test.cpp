// RepoWatch (leftovers.hpp) on real directories: what a "run" (changes made between start and
// finish) leaves is judged, what was there before is not, and the paths the integration test
// does not reach: more directories than descriptors kept, symlinked configs and hooks, a FIFO
// named HEAD, .git files leading nowhere.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cordon/leftovers.hpp"

using namespace cordon;
namespace fs = std::filesystem;

namespace {

// A scratch workdir, removed at the end.
struct Scratch {
    fs::path dir;
    Scratch() {
        char tmpl[] = "/tmp/cordon-leftovers-XXXXXX";
        dir = ::mkdtemp(tmpl);
    }
    ~Scratch() {
        std::error_code ec;
        fs::permissions(dir, fs::perms::owner_all, fs::perm_options::add, ec);
        fs::remove_all(dir, ec);
    }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
};

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

// A repository git would take: HEAD, objects/, refs/ and CONFIG.
void make_repo(const fs::path& gitdir, const std::string& config) {
    fs::create_directories(gitdir / "objects");
    fs::create_directories(gitdir / "refs" / "heads");
    write(gitdir / "HEAD", "ref: refs/heads/main\n");
    write(gitdir / "config", config);
}

// The run's start, a file-system tick after what the test made before it, and a tick before
// what it makes after (file systems stamp times with the coarse clock).
struct timespec run_start() {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    struct timespec t {};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &t);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    return t;
}

// What was moved aside, in name order.
std::vector<std::string> paths(const std::vector<Quarantined>& q) {
    std::vector<std::string> out;
    for (const auto& x : q) out.push_back(x.path);
    std::sort(out.begin(), out.end());
    return out;
}

const char* const kSafe = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n";
const char* const kUnsafe = "[core]\n\tbare = false\n\tfsmonitor = touch /tmp/x\n";

}  // namespace

TEST_CASE("leftovers: a repository made in the run is judged, one from before is not", "[leftovers]") {
    Scratch s;
    make_repo(s.dir / "own" / ".git", kUnsafe);  // the user's own, with a command of theirs
    auto watch = RepoWatch::start(s.dir, run_start());
    REQUIRE(watch);
    make_repo(s.dir / "new" / ".git", kUnsafe);
    make_repo(s.dir / "fine" / ".git", kSafe);
    const auto q = watch->finish();
    CHECK(paths(q) == std::vector<std::string>{"new/.git/config"});
    CHECK(fs::exists(s.dir / "new" / ".git" / "config.cordon-unsafe"));
    CHECK(!fs::exists(s.dir / "new" / ".git" / "config"));
    CHECK(fs::exists(s.dir / "own" / ".git" / "config"));
    CHECK(fs::exists(s.dir / "fine" / ".git" / "config"));
    REQUIRE(q.size() == 1);
    CHECK(q[0].why.find("core.fsmonitor") != std::string::npos);
    CHECK(quarantined_json(q[0]).find("\"moved_to\":\"new/.git/config.cordon-unsafe\"") != std::string::npos);
}

TEST_CASE("leftovers: more directories than descriptors kept", "[leftovers]") {
    Scratch s;
    // Past the 8192 kept descriptors, directories are opened again by path.
    for (int i = 0; i < 9000; ++i) fs::create_directories(s.dir / ("d" + std::to_string(i % 90)) / std::to_string(i));
    auto watch = RepoWatch::start(s.dir, run_start());
    REQUIRE(watch);
    make_repo(s.dir / "d89" / "8999" / "r", kUnsafe);
    make_repo(s.dir / "d0" / "0" / ".git", kUnsafe);
    const auto q = watch->finish();
    CHECK(paths(q) == std::vector<std::string>{"d0/0/.git/config", "d89/8999/r/config"});
}

TEST_CASE("leftovers: symlinks and odd files are judged without being followed or opened", "[leftovers]") {
    Scratch s;
    fs::create_directories(s.dir / "outside-target");
    auto watch = RepoWatch::start(s.dir, run_start());
    REQUIRE(watch);
    // A config that is a symlink (git would read what it leads to).
    make_repo(s.dir / "a" / ".git", kSafe);
    fs::remove(s.dir / "a" / ".git" / "config");
    fs::create_symlink("/etc/gitconfig", s.dir / "a" / ".git" / "config");
    // hooks as a symlink.
    make_repo(s.dir / "b" / ".git", kSafe);
    fs::create_directory_symlink(s.dir / "outside-target", s.dir / "b" / ".git" / "hooks");
    // A FIFO named HEAD: never opened (the judgement would hang), and its directory judged all
    // the same (git would block on it until someone writes a HEAD into it).
    fs::create_directories(s.dir / "c" / "objects");
    fs::create_directories(s.dir / "c" / "refs");
    REQUIRE(::mkfifo((s.dir / "c" / "HEAD").c_str(), 0644) == 0);
    write(s.dir / "c" / "config", kUnsafe);
    // A .git file naming nothing (git cannot use it), and one naming a directory through a symlink.
    write(s.dir / "d" / ".git", "gitdir: ../nothing-here\n");
    fs::create_directory_symlink(s.dir / "b", s.dir / "link");
    write(s.dir / "e" / ".git", "gitdir: ../link/.git\n");
    const auto q = watch->finish();
    CHECK(paths(q) == std::vector<std::string>{"a/.git/config", "b/.git/hooks", "c/config", "e/.git"});
    CHECK(fs::is_symlink(s.dir / "a" / ".git" / "config.cordon-unsafe"));
    CHECK(fs::exists(s.dir / "c" / "config.cordon-unsafe"));
    CHECK(fs::exists(s.dir / "d" / ".git"));
}

TEST_CASE("leftovers: a changed config of a repository from before gets its old content back", "[leftovers]") {
    Scratch s;
    const std::string mine = "[core]\n\tbare = false\n\tpager = less -R\n";
    make_repo(s.dir / "own" / ".git", mine);
    write(s.dir / "own" / ".git" / "hooks" / "pre-commit", "#!/bin/sh\n");
    auto watch = RepoWatch::start(s.dir, run_start());
    REQUIRE(watch);
    write(s.dir / "own" / ".git" / "config", mine + "\teditor = touch /tmp/x\n");
    write(s.dir / "own" / ".git" / "hooks" / "post-commit", "#!/bin/sh\n");
    const auto q = watch->finish();
    CHECK(paths(q) == std::vector<std::string>{"own/.git/config", "own/.git/hooks/post-commit"});
    REQUIRE(q.size() == 2);
    CHECK(q[0].path == "own/.git/config");
    CHECK(q[0].restored);
    std::ifstream in(s.dir / "own" / ".git" / "config");
    const std::string back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(back == mine);
    CHECK(fs::exists(s.dir / "own" / ".git" / "hooks" / "pre-commit"));
}

TEST_CASE("leftovers: cancel judges nothing", "[leftovers]") {
    Scratch s;
    auto watch = RepoWatch::start(s.dir, run_start());
    REQUIRE(watch);
    make_repo(s.dir / "new" / ".git", kUnsafe);
    watch->cancel();
    CHECK(fs::exists(s.dir / "new" / ".git" / "config"));
}

TEST_CASE("leftovers: later runs take unchanged directories from the tree cache", "[leftovers]") {
    Scratch s;
    for (int i = 0; i < 50; ++i) fs::create_directories(s.dir / "a" / std::to_string(i) / "deep");
    // Run 1 reads everything and leaves the cache.
    auto w1 = RepoWatch::start(s.dir, run_start());
    REQUIRE(w1);
    CHECK(w1->finish().empty());
    // Between runs the host adds a directory; run 2 plants a repository in it, and one in a
    // directory that has not changed since run 1 (read from the cache until the run touches it).
    fs::create_directories(s.dir / "a" / "7" / "deep" / "host-made");
    auto w2 = RepoWatch::start(s.dir, run_start());
    REQUIRE(w2);
    make_repo(s.dir / "a" / "7" / "deep" / "host-made" / "r", kUnsafe);
    make_repo(s.dir / "a" / "42" / "deep" / ".git", kUnsafe);
    CHECK(paths(w2->finish()) == std::vector<std::string>{"a/42/deep/.git/config", "a/7/deep/host-made/r/config"});
    // Run 3 from the cache run 2 left: a repository planted at the deepest place is found.
    auto w3 = RepoWatch::start(s.dir, run_start());
    REQUIRE(w3);
    make_repo(s.dir / "a" / "7" / "deep" / "host-made" / "r" / "sub", kUnsafe);
    CHECK(paths(w3->finish()) == std::vector<std::string>{"a/7/deep/host-made/r/sub/config"});
}

TEST_CASE("leftovers: what git might take for a repository is judged, valid HEAD or not", "[leftovers]") {
    Scratch s;
    auto watch = RepoWatch::start(s.dir, run_start());
    REQUIRE(watch);
    // HEAD as git's validate_headref takes it and a stricter reader would not: "ref:" and a
    // newline, a HEAD past 4 KiB, 41 hex digits; and HEADs git refuses, with no objects/.
    make_repo(s.dir / "nl" / ".git", kUnsafe);
    write(s.dir / "nl" / ".git" / "HEAD", "ref:\nrefs/heads/main\n");
    make_repo(s.dir / "big" / ".git", kUnsafe);
    write(s.dir / "big" / ".git" / "HEAD", "ref: refs/heads/main\n" + std::string(8192, 'x'));
    make_repo(s.dir / "hex", kUnsafe);
    write(s.dir / "hex" / "HEAD", std::string(41, 'a'));
    write(s.dir / "junk" / "HEAD", "no\n");
    write(s.dir / "junk" / "config", kUnsafe);
    // A repository below another's objects/, and a .git file there.
    make_repo(s.dir / "r" / ".git", kSafe);
    make_repo(s.dir / "r" / ".git" / "objects" / "ab" / "in", kUnsafe);
    make_repo(s.dir / "r" / ".git" / "objects" / "cd" / "t", kUnsafe);
    write(s.dir / "r" / ".git" / "objects" / "ef" / ".git", "gitdir: ../cd/t\n");
    const auto q = watch->finish();
    CHECK(paths(q) == std::vector<std::string>{"big/.git/config", "hex/config", "junk/config", "nl/.git/config",
                                               "r/.git/objects/ab/in/config", "r/.git/objects/cd/t/config"});
}

TEST_CASE("leftovers: a .git file or commondir is followed exactly as git reads it, or moved aside", "[leftovers]") {
    Scratch s;
    fs::create_directories(s.dir / "elsewhere" / "deep");
    auto watch = RepoWatch::start(s.dir, run_start());
    REQUIRE(watch);
    // Trailing blanks are part of the path: "t " is the repository, "t" a decoy.
    make_repo(s.dir / "sp" / "t", kSafe);
    make_repo(s.dir / "sp" / "t ", kUnsafe);
    write(s.dir / "sp" / ".git", "gitdir: t \n");
    // ".." through a symlink is the kernel's, not the lexical one: moved aside.
    fs::create_directories(s.dir / "dd");
    fs::create_directory_symlink(s.dir / "elsewhere" / "deep", s.dir / "dd" / "l");
    write(s.dir / "dd" / ".git", "gitdir: l/../nothing\n");
    // A NUL ends the path, as in git's C strings.
    make_repo(s.dir / "nul" / "t", kUnsafe);
    write(s.dir / "nul" / ".git", std::string("gitdir: t\0/../x\n", 16));
    // commondir with a trailing tab, naming a common directory without a HEAD of its own.
    make_repo(s.dir / "cm" / "c\t", kUnsafe);
    fs::remove(s.dir / "cm" / "c\t" / "HEAD");
    make_repo(s.dir / "cm" / "c", kSafe);
    fs::remove(s.dir / "cm" / "c" / "HEAD");
    write(s.dir / "cm" / "wt" / "HEAD", "ref: refs/heads/main\n");
    write(s.dir / "cm" / "wt" / "commondir", "../c\t\r\n");
    const auto q = watch->finish();
    CHECK(paths(q) == std::vector<std::string>{"cm/c\t/config", "dd/.git", "nul/t/config", "sp/t /config"});
}

TEST_CASE("leftovers: a .git file, symlink or commondir from before, a symlink of the run's on its way",
          "[leftovers]") {
    Scratch s, o;  // o: out of the workdir
    make_repo(o.dir / "m", kUnsafe);
    make_repo(o.dir / "c", kUnsafe);
    fs::remove(o.dir / "c" / "HEAD");
    make_repo(s.dir / "own" / ".git" / "modules" / "m", kSafe);
    write(s.dir / "own" / "m" / ".git", "gitdir: ../.git/modules/m\n");
    // A worktree's git directory whose commondir names a path with a directory in it.
    make_repo(s.dir / "wt" / "common" / "c", kSafe);
    fs::remove(s.dir / "wt" / "common" / "c" / "HEAD");
    write(s.dir / "wt" / "g" / "HEAD", "ref: refs/heads/main\n");
    write(s.dir / "wt" / "g" / "commondir", "../common/c\n");
    fs::create_directories(s.dir / "wt" / "g" / "refs");
    // One whose symlink is the user's, from before: left.
    make_repo(s.dir / "real" / "r", kSafe);
    fs::create_directory_symlink("real", s.dir / "lnk");
    write(s.dir / "mine" / ".git", "gitdir: ../lnk/r\n");
    // The user's .git file through the user's symlink, past which the run puts one of its own.
    make_repo(s.dir / "real2" / "x", kSafe);
    fs::create_directory_symlink("real2", s.dir / "old");
    write(s.dir / "ch" / ".git", "gitdir: ../old/x\n");
    // The user's .git symlink into the workdir.
    make_repo(s.dir / "store" / "x.git", kSafe);
    fs::create_directories(s.dir / "sym");
    fs::create_directory_symlink("../store/x.git", s.dir / "sym" / ".git");
    auto watch = RepoWatch::start(s.dir, run_start());
    REQUIRE(watch);
    fs::rename(s.dir / "own" / ".git" / "modules", s.dir / "own" / ".git" / "modules.old");
    fs::create_directory_symlink(o.dir, s.dir / "own" / ".git" / "modules");
    fs::rename(s.dir / "wt" / "common", s.dir / "wt" / "common.old");
    fs::create_directory_symlink(o.dir, s.dir / "wt" / "common");
    fs::rename(s.dir / "store", s.dir / "store.old");
    fs::create_directory_symlink(o.dir, s.dir / "store");
    fs::rename(s.dir / "real2", s.dir / "real2.old");
    fs::create_directory_symlink(o.dir, s.dir / "real2");
    fs::rename(o.dir / "m", o.dir / "x.git");
    const auto q = watch->finish();
    CHECK(paths(q) == std::vector<std::string>{"ch/.git", "own/m/.git", "sym/.git", "wt/g/commondir"});
    CHECK(fs::exists(s.dir / "mine" / ".git"));
}

namespace {

std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("leftovers: what another live run wrote is never put back as from before", "[leftovers]") {
    Scratch s;
    auto a = RepoWatch::start(s.dir, run_start());  // run A: plants sub/ and goes on
    REQUIRE(a);
    const std::string planted = "[core]\n\tfsmonitor = touch /tmp/planted\n";
    make_repo(s.dir / "sub" / ".git", planted);
    auto b = RepoWatch::start(s.dir, run_start());  // run B starts meanwhile: sub/ looks old to it
    REQUIRE(b);
    const auto qa = a->finish();
    CHECK(paths(qa) == std::vector<std::string>{"sub/.git/config"});
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    write(s.dir / "sub" / ".git" / "config", "[alias]\n\tx = y\n");  // B's command
    const auto qb = b->finish();
    REQUIRE(paths(qb) == std::vector<std::string>{"sub/.git/config"});
    CHECK_FALSE(qb[0].restored);
    CHECK(qb[0].why.find("not put back: it changed while another run") != std::string::npos);
    CHECK_FALSE(fs::exists(s.dir / "sub" / ".git" / "config"));
}

TEST_CASE("leftovers: a run after the other ended still puts the user's config back", "[leftovers]") {
    Scratch s;
    const std::string mine = "[core]\n\tpager = less\n";
    make_repo(s.dir / "own" / ".git", mine);
    {
        auto a = RepoWatch::start(s.dir, run_start());
        REQUIRE(a);
        CHECK(a->finish().empty());
    }
    auto b = RepoWatch::start(s.dir, run_start());
    REQUIRE(b);
    write(s.dir / "own" / ".git" / "config", mine + "\teditor = x\n");
    const auto q = b->finish();
    REQUIRE(q.size() == 1);
    CHECK(q[0].restored);
    CHECK(read_text(s.dir / "own" / ".git" / "config") == mine);
}

TEST_CASE("leftovers: files a config includes are judged where the run changed them", "[leftovers]") {
    Scratch s;
    const char* old_home = std::getenv("HOME");
    const std::string home = old_home ? old_home : "";
    ::setenv("HOME", s.dir.c_str(), 1);
    make_repo(s.dir / ".git", std::string(kSafe) + "[include]\n\tpath = ../.gitconfig\n\tpath = ../mine.cfg\n" +
                                  "[includeIf \"gitdir:/\"]\n\tpath = ~/home.cfg\n\tpath = ../link.cfg\n");
    make_repo(s.dir / "own" / ".git", std::string(kSafe) + "[include]\n\tpath = " + s.dir.string() + "/abs.cfg\n");
    write(s.dir / "mine.cfg", "[core]\n\tpager = less\n[include]\n\tpath = chained.cfg\n");  // the user's own
    write(s.dir / "target.cfg", "[core]\n\tpager = less\n");
    auto watch = RepoWatch::start(s.dir, run_start());
    REQUIRE(watch);
    write(s.dir / ".gitconfig", "[core]\n\tfsmonitor = touch /tmp/x\n");
    write(s.dir / "home.cfg", "[core]\n\tsshCommand = x\n");
    write(s.dir / "chained.cfg", "[alias]\n\tst = !x\n");
    write(s.dir / "abs.cfg", "[core]\n\teditor = x\n");
    fs::create_symlink("target.cfg", s.dir / "link.cfg");
    const auto q = watch->finish();
    CHECK(paths(q) == std::vector<std::string>{".gitconfig", "abs.cfg", "chained.cfg", "home.cfg", "link.cfg"});
    for (const auto& x : q) {
        if (x.path == ".gitconfig") CHECK(x.why.find("is included by .git/config (include.path, line 5)") == 0);
        if (x.path == "chained.cfg") CHECK(x.why.find("is included by mine.cfg") == 0);
        if (x.path == "abs.cfg") CHECK(x.why.find("is included by own/.git/config") == 0);
    }
    CHECK(fs::exists(s.dir / "mine.cfg"));
    CHECK(fs::exists(s.dir / "target.cfg"));
    CHECK(fs::exists(s.dir / ".git" / "config"));
    if (old_home) {
        ::setenv("HOME", home.c_str(), 1);
    } else {
        ::unsetenv("HOME");
    }
}

TEST_CASE("leftovers: copies of configs from before stay within the budget", "[leftovers]") {
    Scratch s;
    std::string big;
    while (big.size() < 1000000) big += "# a comment line of the user's, to make a large config\n";
    const std::string mine = "[core]\n\tbare = false\n" + big;
    for (int i = 0; i < 10; ++i) make_repo(s.dir / ("r" + std::to_string(i)) / ".git", mine);
    auto watch = RepoWatch::start(s.dir, run_start());
    REQUIRE(watch);
    for (int i = 0; i < 10; ++i) write(s.dir / ("r" + std::to_string(i)) / ".git" / "config", kUnsafe);
    const auto q = watch->finish();
    REQUIRE(q.size() == 10);
    int restored = 0, over = 0;
    for (const auto& x : q) {
        restored += x.restored ? 1 : 0;
        if (!x.restored && x.why.find("budget for copies (8 MiB) was spent") != std::string::npos) ++over;
    }
    CHECK(restored == 8);
    CHECK(over == 2);
}

TEST_CASE("leftovers: a rebase's todo list with exec lines the run wrote is moved aside", "[leftovers]") {
    Scratch s;
    make_repo(s.dir / ".git", kSafe);
    make_repo(s.dir / "own" / ".git", kSafe);
    write(s.dir / "own" / ".git" / "rebase-merge" / "git-rebase-todo", "exec touch /tmp/mine\n");  // the user's
    auto watch = RepoWatch::start(s.dir, run_start());
    REQUIRE(watch);
    write(s.dir / ".git" / "rebase-merge" / "git-rebase-todo", "pick 1234567 one\n# x y\n  x touch /tmp/x\n");
    write(s.dir / ".git" / "sequencer" / "todo", "pick 1234567 one\nrevert 89abcde two\n");  // nothing to run
    const auto q = watch->finish();
    REQUIRE(paths(q) == std::vector<std::string>{".git/rebase-merge/git-rebase-todo"});
    CHECK(q[0].why.find("has an exec line (line 3)") == 0);
    CHECK(fs::exists(s.dir / ".git" / "sequencer" / "todo"));
    CHECK(fs::exists(s.dir / "own" / ".git" / "rebase-merge" / "git-rebase-todo"));
}

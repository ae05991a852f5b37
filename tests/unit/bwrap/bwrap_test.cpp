// bwrap mode's command line: bubblewrap's ordered ops, its arities and checks, --args FD, the
// environment ops, and the extras' translation into cordon's command line.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cordon/bwrap.hpp"

using namespace cordon;
using K = bwrap::Op::Kind;

namespace {

bwrap::Options parsed(const std::vector<std::string>& args, std::vector<std::string> env = {}) {
    auto r = bwrap::parse(args, std::move(env));
    REQUIRE(r.ok());
    return std::move(*r);
}

std::string parse_error(const std::vector<std::string>& args) {
    auto r = bwrap::parse(args, {});
    REQUIRE_FALSE(r.ok());
    return r.error().why;
}

}  // namespace

TEST_CASE("bwrap: ops keep the command line's order, the first non-option ends it", "[bwrap]") {
    auto o = parsed({"--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/tmp", "--bind-try", "/a", "/b", "--symlink",
                     "usr/lib", "/lib", "sh", "-c", "--dev"});
    REQUIRE(o.ops.size() == 5);
    CHECK(o.ops[0].kind == K::RoBind);
    CHECK(o.ops[0].source == "/");
    CHECK(o.ops[1].kind == K::Dev);
    CHECK(o.ops[2].kind == K::Tmpfs);
    CHECK(o.ops[3].kind == K::Bind);
    CHECK(o.ops[3].optional);
    CHECK(o.ops[4].kind == K::Symlink);
    CHECK(o.ops[4].source == "usr/lib");
    CHECK(o.argv == std::vector<std::string>{"sh", "-c", "--dev"});
    CHECK(parsed({"--", "--dev-bind", "x"}).argv == std::vector<std::string>{"--dev-bind", "x"});
}

TEST_CASE("bwrap: --unshare-all and --share-net", "[bwrap]") {
    auto o = parsed({"--unshare-all", "--share-net", "true"});
    CHECK(o.unshare_pid);
    CHECK(o.unshare_ipc);
    CHECK(o.unshare_uts);
    CHECK(o.unshare_user_try);
    CHECK(o.unshare_cgroup_try);
    CHECK_FALSE(o.unshare_net);
    CHECK_FALSE(o.unshare_user);
}

TEST_CASE("bwrap: --perms and --size belong to the next op, once", "[bwrap]") {
    auto o = parsed({"--perms", "0640", "--size", "1048576", "--tmpfs", "/t", "--dir", "/d", "true"});
    REQUIRE(o.ops.size() == 2);
    CHECK(o.ops[0].perms == 0640);
    CHECK(o.ops[0].size == 1048576);
    CHECK_FALSE(o.ops[1].perms);
    CHECK(parse_error({"--perms", "0640", "--perms", "0640", "--tmpfs", "/a", "true"}).find("twice") !=
          std::string::npos);
    CHECK(parse_error({"--size", "10", "--dir", "/a", "true"}) == "--size must be followed by --tmpfs");
    for (const char* bad :
         {"0", "123bogus", "", "-12345678", " -12345678", "18446744073709551616", "9223372036854775809"}) {
        CAPTURE(bad);
        CHECK(parse_error({"--size", bad, "--tmpfs", "/a", "true"}).find("--size") != std::string::npos);
    }
    CHECK(parse_error({"--perms", "9", "--dir", "/a", "true"}).find("--perms") != std::string::npos);
}

TEST_CASE("bwrap: arities, unknown options, fds", "[bwrap]") {
    CHECK(parse_error({"--bind", "/x"}) == "--bind takes two arguments");
    CHECK(parse_error({"--tmpfs"}) == "--tmpfs takes an argument");
    CHECK(parse_error({"--frobnicate", "true"}) == "Unknown option --frobnicate");
    CHECK(parse_error({"--info-fd", "0a", "true"}) == "Invalid fd: 0a");
    CHECK(parse_error({"--exec-label", "x", "true"}) == "labeling not supported on this system");
    CHECK(parse_error({"--argv0", "a", "--argv0", "b", "true"}) == "--argv0 used multiple times");  // as 0.9+
    CHECK(parse_error({"--seccomp", "3", "--add-seccomp-fd", "4", "true"}) ==
          "--add-seccomp-fd cannot be combined with --seccomp");
    CHECK(parse_error({"--add-seccomp-fd", "3", "--seccomp", "4", "true"}) ==
          "--seccomp cannot be combined with --add-seccomp-fd");
    auto o = parsed(
        {"--file", "5", "/etc/x", "--uid", "0", "--gid", "7", "--cap-add", "ALL", "--cap-drop", "CAP_KILL", "true"});
    CHECK(o.ops[0].kind == K::File);
    CHECK(o.ops[0].fd == 5);
    CHECK(o.uid == 0u);
    CHECK(o.gid == 7u);
    REQUIRE(o.caps.size() == 2);
    CHECK(o.caps[0].add);
    CHECK_FALSE(o.caps[1].add);
}

TEST_CASE("bwrap: the overlays take the --overlay-src layers before them", "[bwrap]") {
    auto o = parsed({"--overlay-src", "/l1", "--overlay-src", "/l2", "--overlay", "/up", "/work", "/m", "--overlay-src",
                     "/l3", "--tmp-overlay", "/n", "true"});
    REQUIRE(o.ops.size() == 2);
    CHECK(o.ops[0].overlay_srcs == std::vector<std::string>{"/l1", "/l2"});
    CHECK(o.ops[0].source == "/up");
    CHECK(o.ops[0].workdir == "/work");
    CHECK(o.ops[1].overlay_srcs == std::vector<std::string>{"/l3"});
    CHECK(parse_error({"--overlay", "u", "w", "/t", "true"}) == "--overlay requires at least one --overlay-src");
    CHECK(parse_error({"--overlay-src", "a", "--ro-overlay", "/t", "true"}) ==
          "--ro-overlay requires at least two --overlay-src");
    CHECK(parse_error({"--overlay-src", "/a", "--chdir", "/", "true"}).rfind("--overlay-src must be followed", 0) == 0);
    CHECK(parse_error({"--overlay-src", "/a"}).rfind("--overlay-src must be followed", 0) == 0);
}

TEST_CASE("bwrap: the environment ops apply in order; a repeated --chdir warns", "[bwrap]") {
    auto o = parsed(
        {"--setenv", "A", "1", "--unsetenv", "B", "--setenv", "C", "x=y", "--chdir", "/", "--chdir", "/", "true"},
        {"A=0", "B=2", "D=4"});
    CHECK(o.env == std::vector<std::string>{"D=4", "A=1", "C=x=y"});
    CHECK(o.warnings == std::vector<std::string>{"Only the last --chdir option will take effect"});
    CHECK(parsed({"--clearenv", "--setenv", "X", "1", "true"}, {"A=0"}).env == std::vector<std::string>{"X=1"});
}

TEST_CASE("bwrap: --args FD splices NUL-separated words in place", "[bwrap]") {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const std::string words("--dir\0/a\0--tmpfs\0/b", 19);
    REQUIRE(::write(fds[1], words.data(), words.size()) == static_cast<ssize_t>(words.size()));
    ::close(fds[1]);
    auto o = parsed({"--dir", "/first", "--args", std::to_string(fds[0]), "--dir", "/last", "true"});
    ::close(fds[0]);
    REQUIRE(o.ops.size() == 4);
    CHECK(o.ops[0].dest == "/first");
    CHECK(o.ops[1].dest == "/a");
    CHECK(o.ops[2].kind == K::Tmpfs);
    CHECK(o.ops[3].dest == "/last");
    CHECK(o.argv == std::vector<std::string>{"true"});
}

namespace {

// An --args FD holding WORDS (NUL-separated), read by the time the parse returns.
int args_fd(const std::string& words) {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    REQUIRE(::write(fds[1], words.data(), words.size()) == static_cast<ssize_t>(words.size()));
    ::close(fds[1]);
    return fds[0];
}

}  // namespace

TEST_CASE("bwrap: an --args file is a level of its own, as in bubblewrap 0.8", "[bwrap]") {
    // Its first non-option ends the file, not the command line: the rest of the file is ignored.
    int fd = args_fd(std::string("--dir\0/a\0sh\0-c\0--dir\0/b", 24));
    auto o = parsed({"--args", std::to_string(fd), "--dir", "/c", "x", "y"});
    ::close(fd);
    REQUIRE(o.ops.size() == 2);
    CHECK(o.ops[0].dest == "/a");
    CHECK(o.ops[1].dest == "/c");
    CHECK(o.argv == std::vector<std::string>{"x", "y"});
    // So does its "--".
    fd = args_fd(std::string("--\0--dir\0/b", 11));
    o = parsed({"--args", std::to_string(fd), "--dir", "/c", "true"});
    ::close(fd);
    REQUIRE(o.ops.size() == 1);
    CHECK(o.argv == std::vector<std::string>{"true"});
    // An option's values do not run past the file's end.
    fd = args_fd(std::string("--ro-bind\0/", 11));
    CHECK(parse_error({"--args", std::to_string(fd), "/", "--", "true"}) == "--ro-bind takes two arguments");
    ::close(fd);
    // And a file holds no --args.
    fd = args_fd(std::string("--args") + '\0' + "0");
    CHECK(parse_error({"--args", std::to_string(fd), "true"}) == "--args not supported in arguments file");
    ::close(fd);
}

TEST_CASE("bwrap: the extras become cordon's command line, or a refusal", "[bwrap]") {
    auto o = parsed(
        {"--ro-bind", "/", "/", "--proc", "/proc", "--unshare-all", "--share-net", "--chdir", "/tmp", "--", "make"});
    auto line = bwrap::cordon_command_line(o, " --memory 1G  --policy default ", false);
    REQUIRE(line.ok());
    const std::vector<std::string> want{
        "--no-profile", "--ro-bind", "/",        "/",  "--proc",   "/proc",   "--net", "host", "--allow-userns",
        "--chdir",      "/tmp",      "--memory", "1G", "--policy", "default", "--",    "make"};
    CHECK(*line == want);
    auto no_policy =
        bwrap::cordon_command_line(parsed({"--unshare-net", "--disable-userns", "true"}), "--pids 5", false);
    REQUIRE(no_policy.ok());
    CHECK(*no_policy ==
          std::vector<std::string>{"--no-profile", "--no-policy", "--net", "none", "--pids", "5", "--", "true"});
    for (const auto& args : std::vector<std::vector<std::string>>{{"--file", "0", "/x", "true"},
                                                                  {"--info-fd", "3", "true"},
                                                                  {"--size", "4096", "--tmpfs", "/x", "true"},
                                                                  {"--json-status-fd", "3", "true"}}) {
        auto refused = bwrap::cordon_command_line(parsed(args), "--memory 1G", false);
        REQUIRE_FALSE(refused.ok());
        CHECK(refused.error().why.find("not supported with CORDON_BWRAP_EXTRAS") != std::string::npos);
    }
}

TEST_CASE("bwrap: under the extras the command line's environment is the command's, not cordon's", "[bwrap]") {
    // cordon keeps the caller's environment (its policy and profile search paths, HOME); what
    // bwrap mode computed reaches cordon in one variable of its own environment (private to the
    // caller, unlike a command line), PWD set as bubblewrap sets it.
    auto o = parsed({"--setenv", "CORDON_POLICY_PATH", "/tmp/evil", "--setenv", "A", "-x", "--chdir", "/usr", "true"},
                    {"PWD=/home/u", "HOME=/home/u", "CORDON_BWRAP_EXTRAS=--policy default",
                     std::string(bwrap::kCommandEnvVar) + "=3:A=1"});
    const std::vector<std::string> env = bwrap::command_environ(o, "/home/u");
    CHECK(env == std::vector<std::string>{"HOME=/home/u", "CORDON_POLICY_PATH=/tmp/evil", "A=-x", "PWD=/usr"});
    CHECK(bwrap::command_environ(parsed({"--clearenv", "true"}, {"A=1"}), "/w") == std::vector<std::string>{"PWD=/w"});
    // The encoding holds any bytes but NUL, and refuses what it did not write.
    const std::vector<std::string> odd{"A=", "B=1:2", "C=line\nnext", "D==x", "E=12:34", "F=" + std::string(300, 'x')};
    CHECK(bwrap::decode_environ(bwrap::encode_environ(odd)) == std::optional(odd));
    CHECK(bwrap::decode_environ("") == std::optional(std::vector<std::string>{}));
    for (std::string_view bad : {"3:A=", "x:A=1", ":A", "3A=1", "99999999999999999999:A", "3:A=12"}) {
        CHECK_FALSE(bwrap::decode_environ(bad));
    }
    // Nothing of it on the command line.
    auto line = bwrap::cordon_command_line(o, "--policy default", false);
    REQUIRE(line.ok());
    for (const auto& w : *line) CHECK(w.find("/tmp/evil") == std::string::npos);
    // --policy=NAME among the extras is a policy too: no --no-policy beside it.
    auto eq = bwrap::cordon_command_line(parsed({"true"}), "--policy=default --audit=/tmp/a", false);
    REQUIRE(eq.ok());
    CHECK(std::find(eq->begin(), eq->end(), "--no-policy") == eq->end());
}

TEST_CASE("bwrap: the extras keep the ops' order, --perms and the capabilities bubblewrap leaves", "[bwrap]") {
    // Codex's command line: a --tmpfs after --ro-bind / / must stay after it (cordon's own --tmpfs
    // is planned before every primitive), with its --perms.
    auto codex = bwrap::cordon_command_line(
        parsed({"--as-pid-1",    "--ro-bind",    "/",      "/",       "--perms", "000",   "--tmpfs",
                "/tmp/d",        "--remount-ro", "/tmp/d", "--perms", "0700",    "--dir", "/x",
                "--unshare-net", "--cap-drop",   "ALL",    "--argv0", "helper",  "true"}),
        "--pids 50", false);
    REQUIRE(codex.ok());
    const std::vector<std::string> want{
        "--no-profile", "--no-policy",    "--ro-bind",  "/",       "/",      "--perms", "0000", "--mount-tmpfs",
        "/tmp/d",       "--remount-ro",   "/tmp/d",     "--perms", "0700",   "--dir",   "/x",   "--net",
        "none",         "--allow-userns", "--as-pid-1", "--argv0", "helper", "--pids",  "50",   "--",
        "true"};
    CHECK(*codex == want);
    // srt binds its proxy socket, then covers it with --ro-bind / /: bubblewrap shows the same
    // file through /, read-only; so does the bind made again after it, as the cover shows it
    // (which a root caller's jail needs to own the socket). A path bound elsewhere, changed in
    // between, or reached through a symlink (whose bind lands where it leads) is not repeated.
    char tmpl[] = "/tmp/cordon-bwrap-test.XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    const std::string t = tmpl;
    REQUIRE(::mkdir((t + "/a").c_str(), 0755) == 0);
    REQUIRE(::mkdir((t + "/a/b").c_str(), 0755) == 0);
    REQUIRE(::mkdir((t + "/w").c_str(), 0755) == 0);
    REQUIRE(::mkdir((t + "/w/.git").c_str(), 0755) == 0);
    REQUIRE(::close(::open((t + "/s.sock").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) == 0);
    REQUIRE(::symlink("../s.sock", (t + "/w/link").c_str()) == 0);
    const std::string sock = t + "/s.sock";
    auto socket = bwrap::cordon_command_line(
        parsed({"--bind", sock, sock, "--bind", "/srv", "/data", "--bind", t + "/a/b", t + "/a/b", "--tmpfs", t + "/a",
                "--ro-bind", "/", "/", "--tmpfs", t + "/x", "true"}),
        "", false);
    REQUIRE(socket.ok());
    const std::vector<std::string> socket_want{
        "--no-profile", "--no-policy",   "--bind", sock,       sock,        "--bind",
        "/srv",         "/data",         "--bind", t + "/a/b", t + "/a/b",  "--mount-tmpfs",
        t + "/a",       "--ro-bind",     "/",      "/",        "--ro-bind", sock,
        sock,           "--mount-tmpfs", t + "/x", "--net",    "host",      "--allow-userns",
        "--",           "true"};
    CHECK(*socket == socket_want);
    // Covered by a writable bind, it is writable again (as in bubblewrap, which shows it through that).
    const std::string w = t + "/w", git = t + "/w/.git", link = t + "/w/link";
    auto rw = bwrap::cordon_command_line(parsed({"--ro-bind", git, git, "--bind", w, w, "true"}), "", false);
    REQUIRE(rw.ok());
    const std::vector<std::string> again{"--bind", w, w, "--bind", git, git};
    CHECK(std::search(rw->begin(), rw->end(), again.begin(), again.end()) != rw->end());
    // A symlink's bind lands on its target, outside the cover: not made again (rw) after it.
    auto through = bwrap::cordon_command_line(parsed({"--ro-bind", link, link, "--bind", w, w, "true"}), "", false);
    REQUIRE(through.ok());
    CHECK(std::count(through->begin(), through->end(), link) == 2);
    for (const char* f : {"/w/link", "/s.sock", "/w/.git", "/w", "/a/b", "/a"}) ::remove((t + f).c_str());
    ::rmdir(t.c_str());
    // srt's, for a root caller: everything dropped, then CAP_SETFCAP.
    auto srt = bwrap::cordon_command_line(
        parsed({"--unshare-user", "--cap-drop", "ALL", "--cap-add", "CAP_SETFCAP", "true"}), "", true);
    REQUIRE(srt.ok());
    CHECK(std::count(srt->begin(), srt->end(), "--cap-add") == 1);
    CHECK(std::find(srt->begin(), srt->end(), "cap_setfcap") != srt->end());
    // Not root: nothing to start from, so only what is added; a drop of what was never held is nothing.
    auto user = bwrap::cordon_command_line(parsed({"--cap-add", "CAP_NET_RAW", "--cap-drop", "CAP_SYS_ADMIN", "true"}),
                                           "", false);
    REQUIRE(user.ok());
    CHECK(std::count(user->begin(), user->end(), "--cap-add") == 1);
    CHECK(std::find(user->begin(), user->end(), "cap_net_raw") != user->end());
    auto bad = bwrap::cordon_command_line(parsed({"--cap-add", "CAP_NO_SUCH", "true"}), "", false);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().why.find("CAP_NO_SUCH is not a valid capability") != std::string::npos);
}

TEST_CASE("bwrap: the mode is found by argv[0]'s name", "[bwrap]") {
    CHECK(bwrap::invoked_as_bwrap("bwrap"));
    CHECK(bwrap::invoked_as_bwrap("/usr/local/bin/bwrap"));
    CHECK_FALSE(bwrap::invoked_as_bwrap("cordon"));
    CHECK_FALSE(bwrap::invoked_as_bwrap("/usr/bin/bwrap-helper"));
}

// Spec building and validation (SPEC §3, §4) with an injected HostInfo.
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <sys/capability.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "cordon/env_filter.hpp"
#include "cordon/paths.hpp"
#include "cordon/spec_builder.hpp"

using namespace cordon;
using Strings = std::vector<std::string>;

namespace {

// A real directory tree, because the workdir is resolved with realpath().
struct TempTree {
    std::string root;  // canonical
    TempTree() {
        char tmpl[] = "/tmp/cordon-spec-test-XXXXXX";
        REQUIRE(::mkdtemp(tmpl) != nullptr);
        root = std::filesystem::canonical(tmpl).string();
        std::filesystem::create_directories(root + "/home/u/proj");
    }
    ~TempTree() {
        std::error_code ec;
        std::filesystem::remove_all(root, ec);
    }
    TempTree(const TempTree&) = delete;
    TempTree& operator=(const TempTree&) = delete;
};

HostInfo host_at(const std::string& home, const std::string& cwd) {
    HostInfo h;
    h.uid = 1000;
    h.gid = 100;
    h.home = home;
    h.cwd = cwd;
    h.user = std::string("u");  // (operator=(const char*) trips GCC 12 -Wrestrict)
    std::string home_kv = "HOME=";
    home_kv += home;
    h.environ = {"PATH=/usr/bin:/bin", home_kv, "GITHUB_TOKEN=ghp_x", "MY_API_KEY=k", "AWS_REGION=eu",
                 "LANG=C.UTF-8",       "EMPTY="};
    return h;
}

// Build from command-line args on top of a profile layer, like resolve_spec does.
Result<ResolvedRun> build_run(const Strings& args, SettingsLayer profile, const HostInfo& host) {
    auto cli = parse_command_line(args);
    if (!cli) FAIL("bad command line: " << cli.error().why);
    merge_layer(profile, cli->layer);
    return build_spec(*cli, profile, host);
}

Result<Spec> build(const Strings& args, const SettingsLayer& profile, const HostInfo& host) {
    auto r = build_run(args, profile, host);
    if (!r) return r.error();
    return std::move(r->spec);
}

ResolvedRun run_ok(const Strings& args, const SettingsLayer& profile, const HostInfo& host) {
    auto r = build_run(args, profile, host);
    if (!r) FAIL("unexpected error: " << r.error().what << ": " << r.error().why);
    return std::move(r).value();
}

Spec build_ok(const Strings& args, const SettingsLayer& profile, const HostInfo& host) {
    return run_ok(args, profile, host).spec;
}

SettingsLayer strip_profile() {
    SettingsLayer l;
    l.values["env-strip"] = Strings{"*_TOKEN", "*_KEY", "AWS_*"};
    return l;
}

bool has(const Strings& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("normalize_path is lexical", "[spec]") {
    CHECK(normalize_path("//a/./b/../c/", "/w") == "/a/c");
    CHECK(normalize_path("x/../y", "/w") == "/w/y");
    CHECK(normalize_path("./x/", "/w/v") == "/w/v/x");
    CHECK(normalize_path("../../../..", "/w/v") == "/");
    CHECK(normalize_path("/", "/w") == "/");
    CHECK(normalize_path("", "/w") == "/w");
    CHECK(normalize_path("/a/b/..", "/w") == "/a");
    CHECK(normalize_path("a...b/.x", "/") == "/a...b/.x");  // only exact . and .. are special
    CHECK(normalize_path("/a/b", "/w") == "/a/b");
    CHECK(normalize_path("/a//b", "/w") == "/a/b");
    CHECK(normalize_path("/a/.", "/w") == "/a");
    CHECK(normalize_path("/.", "/w") == "/");
    CHECK(normalize_path("/..", "/w") == "/");
    CHECK(normalize_path("/a/..b/c..", "/w") == "/a/..b/c..");
    CHECK(normalize_path(".", "/w") == "/w");
    CHECK(normalize_path("..", "/w") == "/");
}

TEST_CASE("is_unsafe_workdir", "[spec]") {
    const std::string home = "/home/u";
    for (const char* unsafe :
         {"/", "/home/u", "/home", "/usr", "/usr/local/src", "/etc", "/etc/nginx", "/bin", "/lib/x86_64-linux-gnu",
          "/proc/self", "/sys/fs", "/dev", "/tmp", "/var", "/opt", "/root", "/boot/grub"}) {
        INFO(unsafe);
        CHECK(is_unsafe_workdir(unsafe, home));
    }
    for (const char* safe : {"/tmp/x", "/home/u/proj", "/home/u/.cache/x", "/home/u2", "/home/other/proj", "/srv/app",
                             "/usr2", "/opt/proj", "/etcetera"}) {
        INFO(safe);
        CHECK_FALSE(is_unsafe_workdir(safe, home));
    }
    // A HOME elsewhere makes its ancestors unsafe.
    CHECK(is_unsafe_workdir("/data", "/data/users/u"));
    CHECK(is_unsafe_workdir("/data/users", "/data/users/u"));
    CHECK_FALSE(is_unsafe_workdir("/data/users/u/p", "/data/users/u"));
    CHECK_FALSE(is_unsafe_workdir("/data/users2", "/data/users/u"));
}

TEST_CASE("build_spec: command, identity, network defaults", "[spec]") {
    TempTree t;
    auto host = host_at(t.root + "/home/u", t.root + "/home/u/proj");
    Spec s = build_ok({"ls", "-la"}, SettingsLayer{}, host);
    CHECK(s.argv == Strings{"ls", "-la"});
    CHECK_FALSE(s.via_shell);
    CHECK(s.uid == 1000);
    CHECK(s.gid == 100);
    CHECK(s.host_uid == 1000);
    CHECK(s.host_gid == 100);
    CHECK(s.home == host.home);
    CHECK_FALSE(s.share_net);
    CHECK_FALSE(s.hostname.has_value());
    CHECK(s.seccomp == "default");
    CHECK(s.tmpfs_size == (1ULL << 30));
    CHECK(s.chdir == host.cwd);
    CHECK_FALSE(s.timeout_ms.has_value());

    Spec c = build_ok({"--uid", "0", "--gid", "0", "--net", "host", "--timeout", "90s", "-c", "echo hi"},
                      SettingsLayer{}, host);
    CHECK(c.argv == Strings{"/bin/sh", "-c", "echo hi"});
    CHECK(c.via_shell);
    CHECK(c.uid == 0);
    CHECK(c.gid == 0);
    CHECK(c.host_uid == 1000);
    CHECK(c.share_net);
    CHECK(c.timeout_ms == uint64_t{90000});

    auto bad = build({"--net", "bridge", "ls"}, SettingsLayer{}, host);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().what == "--net");
    CHECK_THAT(bad.error().why, Catch::Contains("'bridge'"));
}

TEST_CASE("build_spec: the implicit workdir", "[spec]") {
    TempTree t;
    std::string home = t.root + "/home/u";
    // A project directory is writable.
    ResolvedRun p = run_ok({"ls"}, SettingsLayer{}, host_at(home, home + "/proj"));
    CHECK(p.spec.workdir == home + "/proj");
    CHECK(p.options.workdir_note.empty());

    // HOME, its ancestors and / are refused, with a note.
    for (const std::string& cwd : {home, t.root + "/home", std::string("/"), std::string("/usr")}) {
        INFO(cwd);
        ResolvedRun s = run_ok({"ls"}, SettingsLayer{}, host_at(home, cwd));
        CHECK_FALSE(s.spec.workdir.has_value());
        CHECK_THAT(s.options.workdir_note, Catch::Contains("--workdir"));
    }
    // --workdir none: nothing writable, nothing to explain.
    ResolvedRun none = run_ok({"--workdir", "none", "ls"}, SettingsLayer{}, host_at(home, home + "/proj"));
    CHECK_FALSE(none.spec.workdir.has_value());
    CHECK(none.options.workdir_note.empty());
    // --no-profile: bwrap semantics, no implicit workdir.
    CHECK_FALSE(build_ok({"--no-profile", "ls"}, SettingsLayer{}, host_at(home, home + "/proj")).workdir.has_value());
    // An explicit --workdir is honoured, even HOME, and resolved.
    CHECK(build_ok({"--workdir", "..", "ls"}, SettingsLayer{}, host_at(home, home + "/proj")).workdir == home);
    auto missing = build({"--workdir", "nope", "ls"}, SettingsLayer{}, host_at(home, home + "/proj"));
    REQUIRE_FALSE(missing);
    CHECK(missing.error().what == "--workdir");
}

TEST_CASE("build_spec: HOME reached through a symlink is still HOME", "[spec]") {
    TempTree t;
    std::string real_home = t.root + "/home/u";
    std::string link_home = t.root + "/homelink";
    std::filesystem::create_directory_symlink(real_home, link_home);
    // $HOME is the symlinked spelling, the shell is in HOME.
    Spec s = build_ok({"ls"}, SettingsLayer{}, host_at(link_home, link_home));
    CHECK_FALSE(s.workdir.has_value());
    // The shell is in the real directory, $HOME the symlink.
    Spec r = build_ok({"ls"}, SettingsLayer{}, host_at(link_home, real_home));
    CHECK_FALSE(r.workdir.has_value());
}

TEST_CASE("build_spec: environment filtering", "[spec]") {
    TempTree t;
    auto host = host_at(t.root + "/home/u", t.root + "/home/u/proj");
    Spec s = build_ok({"ls"}, strip_profile(), host);
    CHECK(has(s.env, "PATH=/usr/bin:/bin"));
    CHECK(has(s.env, "LANG=C.UTF-8"));
    CHECK(has(s.env, "EMPTY="));
    CHECK_FALSE(has(s.env, "GITHUB_TOKEN=ghp_x"));
    CHECK_FALSE(has(s.env, "MY_API_KEY=k"));
    CHECK_FALSE(has(s.env, "AWS_REGION=eu"));
    CHECK(s.env_removed.size() == 3);
    CHECK(has(s.env_removed, "GITHUB_TOKEN"));
    CHECK(has(s.env_removed, "AWS_REGION"));
    // Order of the caller's environment is kept.
    CHECK(s.env.front() == "PATH=/usr/bin:/bin");

    // --env-pass keeps a stripped variable.
    Spec p = build_ok({"--env-pass", "GITHUB_TOKEN", "ls"}, strip_profile(), host);
    CHECK(has(p.env, "GITHUB_TOKEN=ghp_x"));
    CHECK_FALSE(has(p.env_removed, "GITHUB_TOKEN"));
    CHECK_FALSE(has(p.env, "MY_API_KEY=k"));

    // --unsetenv and --setenv; setenv replaces, never duplicates.
    Spec e = build_ok({"--unsetenv", "LANG", "--setenv", "PATH", "/x", "--setenv", "NEW", "a=b", "ls"}, strip_profile(),
                      host);
    CHECK_FALSE(has(e.env, "LANG=C.UTF-8"));
    CHECK(has(e.env_removed, "LANG"));
    CHECK(has(e.env, "PATH=/x"));
    CHECK(std::count_if(e.env.begin(), e.env.end(), [](const std::string& kv) { return kv.rfind("PATH=", 0) == 0; }) ==
          1);
    CHECK(has(e.env, "NEW=a=b"));
    // A name that is a prefix of another is not confused with it.
    Spec pre = build_ok({"--setenv", "PAT", "1", "ls"}, SettingsLayer{}, host);
    CHECK(has(pre.env, "PATH=/usr/bin:/bin"));
    CHECK(has(pre.env, "PAT=1"));

    // --clearenv removes everything, even passed names; --setenv still applies.
    Spec c = build_ok({"--clearenv", "--env-pass", "LANG", "--setenv", "A", "1", "ls"}, strip_profile(), host);
    CHECK(c.env == Strings{"A=1"});
    CHECK(c.env_removed.size() == host.environ.size());

    auto bad = build({"--setenv", "A=B", "x", "ls"}, SettingsLayer{}, host);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().what == "--setenv");
}

TEST_CASE("build_spec: credentials match in any case, and URLs with passwords go", "[spec]") {
    TempTree t;
    auto host = host_at(t.root + "/home/u", t.root + "/home/u/proj");
    host.environ = {"npm_config__authToken=a",
                    "Gh_Pat=b",
                    "DATABASE_URL=postgres://app:s3cret@db:5432/app",
                    "REDIS_URL=redis://:pw@cache:6379/0",
                    "PUBLIC_URL=https://example.invalid/x",
                    "MIRROR=https://user@example.invalid/",
                    "NOTE=see http://a:b@h and more",
                    "LANG=C"};
    SettingsLayer l;
    l.values["env-strip"] = Strings{"*token", "*_PAT"};
    l.values["env-strip-url-passwords"] = true;
    Spec s = build_ok({"ls"}, l, host);
    CHECK(s.env == Strings{"PUBLIC_URL=https://example.invalid/x", "MIRROR=https://user@example.invalid/", "LANG=C"});
    CHECK(has(s.env_removed, "npm_config__authToken"));
    CHECK(has(s.env_removed, "DATABASE_URL"));
    // --env-pass matches in any case too.
    Spec p = build_ok({"--env-pass", "NPM_CONFIG__AUTHTOKEN", "--env-pass", "database_url", "ls"}, l, host);
    CHECK(has(p.env, "npm_config__authToken=a"));
    CHECK(has(p.env, "DATABASE_URL=postgres://app:s3cret@db:5432/app"));
    // Without the key, values are not looked at.
    l.values.erase("env-strip-url-passwords");
    CHECK(has(build_ok({"ls"}, l, host).env, "REDIS_URL=redis://:pw@cache:6379/0"));

    CHECK(has_url_password("https://u:p@h/x"));
    CHECK(has_url_password("git+ssh://git:tok@h:22/r.git"));
    CHECK_FALSE(has_url_password("https://u@h/x"));
    CHECK_FALSE(has_url_password("https://u:@h/x"));       // an empty password
    CHECK_FALSE(has_url_password("https://h/p?q=a:b@c"));  // in the query, not the authority
    CHECK_FALSE(has_url_password("C:\\path:x@y"));
}

TEST_CASE("build_spec: rlimits", "[spec]") {
    TempTree t;
    auto host = host_at(t.root + "/home/u", t.root + "/home/u/proj");
    Spec d = build_ok({"ls"}, SettingsLayer{}, host);
    REQUIRE(d.rlimits.size() == 1);
    CHECK(d.rlimits[0].resource == RLIMIT_CORE);
    CHECK(d.rlimits[0].soft == 0);
    CHECK(d.rlimits[0].hard == 0);

    Spec s = build_ok({"--rlimit", "nofile=1024:2048", "--rlimit", "as=2G", "--rlimit", "core=unlimited", "ls"},
                      SettingsLayer{}, host);
    REQUIRE(s.rlimits.size() == 3);
    auto find = [&](int res) {
        return std::find_if(s.rlimits.begin(), s.rlimits.end(), [&](const Rlimit& r) { return r.resource == res; });
    };
    REQUIRE(find(RLIMIT_NOFILE) != s.rlimits.end());
    CHECK(find(RLIMIT_NOFILE)->soft == 1024);
    CHECK(find(RLIMIT_NOFILE)->hard == 2048);
    CHECK(find(RLIMIT_NOFILE)->name == "nofile");
    CHECK(find(RLIMIT_AS)->soft == (2ULL << 30));
    CHECK(find(RLIMIT_AS)->hard == (2ULL << 30));  // no :HARD means hard = soft
    CHECK(find(RLIMIT_CORE)->soft == static_cast<uint64_t>(RLIM_INFINITY));

    for (const char* bad : {"bogus=1", "nofile", "nofile=", "nofile=2048:1024", "nofile=abc", "nofile=1:x"}) {
        INFO(bad);
        auto r = build({"--rlimit", bad, "ls"}, SettingsLayer{}, host);
        REQUIRE_FALSE(r);
        CHECK(r.error().what == "--rlimit");
        CHECK_THAT(r.error().why, Catch::Contains(std::string("'") + bad + "'"));
    }
    CHECK_THAT(build({"--rlimit", "nofile=2048:1024", "ls"}, SettingsLayer{}, host).error().why,
               Catch::Contains("soft limit is above the hard limit"));
}

TEST_CASE("build_spec: hostname, capabilities, status-json, tmpfs-size", "[spec]") {
    TempTree t;
    auto host = host_at(t.root + "/home/u", t.root + "/home/u/proj");
    CHECK(build_ok({"--hostname", "box", "ls"}, SettingsLayer{}, host).hostname == std::string("box"));
    CHECK(build_ok({"--hostname", std::string(64, 'h'), "ls"}, SettingsLayer{}, host).hostname->size() == 64);
    CHECK(build({"--hostname", std::string(65, 'h'), "ls"}, SettingsLayer{}, host).error().what == "--hostname");
    CHECK(build({"--hostname", "", "ls"}, SettingsLayer{}, host).error().what == "--hostname");

    Spec c = build_ok({"--cap-add", "NET_RAW", "--cap-add", "cap_sys_admin", "--cap-add", "CAP_CHOWN", "ls"},
                      SettingsLayer{}, host);
    CHECK(c.cap_keep == std::vector<int>{CAP_NET_RAW, CAP_SYS_ADMIN, CAP_CHOWN});
    CHECK(c.cap_keep_names == Strings{"cap_net_raw", "cap_sys_admin", "cap_chown"});
    auto badcap = build({"--cap-add", "make_coffee", "ls"}, SettingsLayer{}, host);
    REQUIRE_FALSE(badcap);
    CHECK(badcap.error().what == "--cap-add");
    CHECK_THAT(badcap.error().why, Catch::Contains("'make_coffee'"));

    const auto fd3 = run_ok({"--status-json", "fd:3", "ls"}, SettingsLayer{}, host).options.status_json;
    REQUIRE(fd3);
    CHECK((fd3->is_fd() && fd3->fd == 3 && fd3->text == "fd:3"));
    const auto path = run_ok({"--audit", "/tmp/a.jsonl", "ls"}, SettingsLayer{}, host).options.audit;
    REQUIRE(path);
    CHECK((!path->is_fd() && path->text == "/tmp/a.jsonl"));
    CHECK(build({"--status-json", "fd:x", "ls"}, SettingsLayer{}, host).error().what == "--status-json");
    CHECK(build({"--status-json", "fd:", "ls"}, SettingsLayer{}, host).error().what == "--status-json");
    CHECK(build({"--audit", "fd:1234567", "ls"}, SettingsLayer{}, host).error().what == "--audit");

    CHECK(build_ok({"--tmpfs-size", "4K", "ls"}, SettingsLayer{}, host).tmpfs_size == 4096);
    CHECK(build({"--tmpfs-size", "1K", "ls"}, SettingsLayer{}, host).error().what == "--tmpfs-size");
}

TEST_CASE("build_spec: --perms is the mode of the --dir or --mount-tmpfs after it", "[spec]") {
    TempTree t;
    auto host = host_at(t.root + "/home/u", t.root + "/home/u/proj");
    using K = MountRequest::Kind;
    Spec s = build_ok(
        {"--perms", "0700", "--dir", "/a", "--mount-tmpfs", "/b", "--perms", "000", "--mount-tmpfs", "/c", "ls"},
        SettingsLayer{}, host);
    REQUIRE(s.mount_requests.size() == 3);
    CHECK(s.mount_requests[0] == MountRequest{K::Dir, "", "/a", false, 0700});
    CHECK(s.mount_requests[1] == MountRequest{K::Tmpfs, "", "/b", false, std::nullopt});
    CHECK(s.mount_requests[2] == MountRequest{K::Tmpfs, "", "/c", false, 0});
    for (const Strings& bad :
         {Strings{"--perms", "0700", "--bind", "/a", "/b", "ls"}, Strings{"--perms", "9", "--dir", "/a", "ls"},
          Strings{"--perms", "077777", "--dir", "/a", "ls"}, Strings{"--dir", "/a", "--perms", "0700", "ls"}}) {
        auto r = build(bad, SettingsLayer{}, host);
        REQUIRE_FALSE(r);
        CHECK(r.error().what == "--perms");
    }
}

TEST_CASE("build_spec: paths", "[spec]") {
    TempTree t;
    std::string proj = t.root + "/home/u/proj";
    auto host = host_at(t.root + "/home/u", proj);
    SettingsLayer prof;
    prof.values["ro"] = Strings{"/usr/./lib/", "/no/such/path"};  // profile entries may be missing
    prof.values["protect"] = Strings{".git/hooks/"};
    Spec s = build_ok({"--ro", ".", "--hide", "secret", "--tmpfs", "/scratch/", "--bind", "src", "dst", "--symlink",
                       "usr/bin", "bin", "--chdir", "sub", "ls"},
                      prof, host);
    CHECK(s.ro == Strings{"/usr/lib", "/no/such/path", proj});
    CHECK(s.hide == Strings{proj + "/secret"});
    CHECK(s.tmpfs == Strings{"/scratch"});
    CHECK(s.protect == Strings{".git/hooks/"});
    CHECK(s.chdir == proj + "/sub");
    using K = MountRequest::Kind;
    REQUIRE(s.mount_requests.size() == 2);
    // SRC on the host, DEST in the jail; a symlink target is kept as written.
    CHECK(s.mount_requests[0] == MountRequest{K::Bind, proj + "/src", "/dst"});
    CHECK(s.mount_requests[1] == MountRequest{K::Symlink, "usr/bin", "/bin"});

    // Command-line --ro/--rw entries must exist.
    auto missing = build({"--ro", "/no/such/path", "ls"}, SettingsLayer{}, host);
    REQUIRE_FALSE(missing);
    CHECK(missing.error().what == "--ro");
    CHECK(build({"--rw", "nope", "ls"}, SettingsLayer{}, host).error().what == "--rw");

    for (const char* bad : {"/abs", "../up", "a/../../b", ""}) {
        INFO(bad);
        SettingsLayer l;
        l.values["protect"] = Strings{bad};
        auto r = build({"ls"}, l, host);
        REQUIRE_FALSE(r);
        CHECK(r.error().what == "--protect");
    }
}

TEST_CASE("build_spec: --ssh-agent reads known_hosts and the agent, and joins the allowlist", "[spec]") {
    TempTree t;
    auto host = host_at(t.root + "/home/u", t.root + "/home/u/proj");
    std::filesystem::create_directories(t.root + "/home/u/.ssh");
    const std::string key = "AAAAC3NzaC1lZDI1NTE5AAAAIOxwZ5QSGBCWCjQoWYpfchCEBkwzzhovHUtfSqZfKLMi";
    {
        std::FILE* f = std::fopen((t.root + "/home/u/.ssh/known_hosts").c_str(), "w");
        REQUIRE(f != nullptr);
        std::fprintf(f, "git.example ssh-ed25519 %s\n[git.example]:2222 ssh-ed25519 %s\n", key.c_str(), key.c_str());
        std::fclose(f);
    }
    const std::string sock = t.root + "/agent.sock";
    {
        sockaddr_un sun{};
        sun.sun_family = AF_UNIX;
        std::snprintf(sun.sun_path, sizeof sun.sun_path, "%s", sock.c_str());
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun) == 0);
        ::close(fd);
    }

    // Without the caller's agent, nothing to relay to.
    auto none = build({"--ssh-agent", "git.example", "true"}, SettingsLayer{}, host);
    REQUIRE_FALSE(none);
    CHECK(none.error().what == "--ssh-agent");
    CHECK_THAT(none.error().why, Catch::Contains("SSH_AUTH_SOCK is not set"));

    host.environ.push_back("SSH_AUTH_SOCK=" + sock);
    Spec s = build_ok({"--ssh-agent", "Git.Example,git.example:2222", "true"}, SettingsLayer{}, host);
    REQUIRE(s.ssh_agent_hosts.size() == 2);
    CHECK(s.ssh_agent_hosts[0].text() == "git.example");
    CHECK(s.ssh_agent_hosts[1].text() == "git.example:2222");
    CHECK(s.ssh_agent_hosts[0].keys.size() == 1);
    CHECK(s.ssh_agent_upstream == sock);
    CHECK(has(s.env, "SSH_AUTH_SOCK=/run/cordon/ssh-agent.sock"));
    REQUIRE(s.allow_hosts.size() == 2);
    CHECK(s.allow_hosts[0].ports == std::vector<uint16_t>{22});
    CHECK(s.allow_hosts[1].ports == std::vector<uint16_t>{2222});
    // --net none on the command line still lets SSH to the named hosts through; --net host
    // needs no allowlist.
    CHECK(build_ok({"--net", "none", "--ssh-agent", "git.example", "true"}, SettingsLayer{}, host).allow_hosts.size() ==
          1);
    Spec open = build_ok({"--net", "host", "--ssh-agent", "git.example", "true"}, SettingsLayer{}, host);
    CHECK(open.allow_hosts.empty());
    CHECK(open.ssh_agent_hosts.size() == 1);

    // A host that known_hosts does not list, on that port, is an error naming it.
    auto unknown = build({"--ssh-agent", "git.example:2200", "true"}, SettingsLayer{}, host);
    REQUIRE_FALSE(unknown);
    CHECK_THAT(unknown.error().why, Catch::Contains("no key of git.example:2200"));
    for (const char* bad : {"a b", "*.example", "git.example:0", "git.example:99999", "git.example:x", ""}) {
        auto r = build({"--ssh-agent", bad, "true"}, SettingsLayer{}, host);
        REQUIRE_FALSE(r);
        CHECK(r.error().what == "--ssh-agent");
    }
    auto key_alone = build({"--ssh-agent-key", sock, "true"}, SettingsLayer{}, host);
    REQUIRE_FALSE(key_alone);
    CHECK(key_alone.error().what == "--ssh-agent-key");
    auto not_pub = build({"--ssh-agent", "git.example", "--ssh-agent-key", t.root + "/home/u/.ssh/known_hosts", "true"},
                         SettingsLayer{}, host);
    REQUIRE_FALSE(not_pub);
    CHECK_THAT(not_pub.error().why, Catch::Contains("holds no public key"));
}

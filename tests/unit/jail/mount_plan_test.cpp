// The mount plan (SPEC §4) against a fake host filesystem.
#include <catch2/catch.hpp>

#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>

#include "cordon/mount_plan.hpp"
#include "cordon/root_remap.hpp"

using namespace cordon;
using K = MountOp::Kind;
using T = HostFs::Type;
using R = MountRequest::Kind;

namespace {

struct FakeFs {
    std::map<std::string, std::pair<T, std::string>> entries;  // path -> (type, symlink target)
    std::map<std::string, std::string> contents;               // small files' text
    void dir(const std::string& p) { entries[p] = {T::Dir, ""}; }
    void file(const std::string& p) { entries[p] = {T::File, ""}; }
    void link(const std::string& p, const std::string& target) { entries[p] = {T::Symlink, target}; }
    HostFs fs() const {
        HostFs h;
        h.type = [this](const std::string& p) {
            auto it = entries.find(p);
            return it == entries.end() ? T::Missing : it->second.first;
        };
        h.readlink = [this](const std::string& p) {
            auto it = entries.find(p);
            return it == entries.end() ? std::string() : it->second.second;
        };
        h.list = [this](const std::string& dir) {
            std::vector<std::string> names{".", ".."};
            for (const auto& [path, e] : entries) {
                if (path.size() > dir.size() + 1 && path.compare(0, dir.size() + 1, dir + "/") == 0 &&
                    path.find('/', dir.size() + 1) == std::string::npos) {
                    names.push_back(path.substr(dir.size() + 1));
                }
            }
            std::sort(names.begin(), names.end());
            return names;
        };
        h.read = [this](const std::string& p) {
            auto it = contents.find(p);
            return it == contents.end() ? std::string() : it->second;
        };
        h.glob = [this](const std::string& pattern) {
            std::vector<std::string> out;
            for (const auto& [path, e] : entries) {
                if (::fnmatch(pattern.c_str(), path.c_str(), FNM_PATHNAME) == 0) out.push_back(path);
            }
            return out;
        };
        return h;
    }
};

// Index of the first op with this kind and dest, or -1.
long find_op(const MountPlan& plan, K kind, const std::string& dest, const std::string& why = "") {
    for (size_t i = 0; i < plan.ops.size(); ++i) {
        const auto& op = plan.ops[i];
        if (op.kind == kind && op.dest == dest && (why.empty() || op.why == why)) return static_cast<long>(i);
    }
    return -1;
}

long count_dest(const MountPlan& plan, const std::string& dest) {
    return std::count_if(plan.ops.begin(), plan.ops.end(), [&](const MountOp& o) { return o.dest == dest; });
}

MountPlan plan_ok(const Spec& spec, const FakeFs& f) {
    auto r = plan_mounts(spec, f.fs());
    if (!r) FAIL("unexpected error: " << r.error().what << ": " << r.error().why);
    return std::move(r).value();
}

}  // namespace

TEST_CASE("mount plan: a tmpfs parent is mounted before the workdir below it", "[mount_plan]") {
    FakeFs f;
    f.dir("/tmp");
    f.dir("/tmp/proj");
    Spec s;
    s.workdir = "/tmp/proj";  // the workdir is added before the tmpfs in the planner's code
    s.tmpfs = {"/tmp"};
    auto plan = plan_ok(s, f);
    long tmp = find_op(plan, K::Tmpfs, "/tmp");
    long wd = find_op(plan, K::Bind, "/tmp/proj", "workdir");
    REQUIRE(tmp >= 0);
    REQUIRE(wd >= 0);
    CHECK(tmp < wd);
    CHECK(plan.ops[static_cast<size_t>(tmp)].size == s.tmpfs_size);
    CHECK(plan.ops[static_cast<size_t>(tmp)].mode == 01777);
    CHECK_FALSE(plan.ops[static_cast<size_t>(wd)].readonly);
    CHECK(plan.ops[static_cast<size_t>(wd)].source == "/tmp/proj");
    // proc and dev are always there with a profile.
    CHECK(find_op(plan, K::Proc, "/proc") >= 0);
    CHECK(find_op(plan, K::Dev, "/dev") >= 0);
    CHECK(plan.placeholders.empty());
}

TEST_CASE("mount plan: the directories on the way to the workdir in a tmpfs are read-only", "[mount_plan]") {
    FakeFs f;
    f.dir("/tmp");
    f.dir("/tmp/a");
    f.dir("/tmp/a/b");
    f.dir("/tmp/a/b/proj");
    f.dir("/tmp/a/ref");
    Spec s;
    s.workdir = "/tmp/a/b/proj";
    s.tmpfs = {"/tmp"};
    auto plan = plan_ok(s, f);
    const long tmp = find_op(plan, K::Tmpfs, "/tmp");
    const long a = find_op(plan, K::Dir, "/tmp/a", "on the way to the workdir");
    const long b = find_op(plan, K::Dir, "/tmp/a/b", "on the way to the workdir");
    const long wd = find_op(plan, K::Bind, "/tmp/a/b/proj", "workdir");
    REQUIRE((tmp >= 0 && a >= 0 && b >= 0 && wd >= 0));
    CHECK((tmp < a && a < b && b < wd));
    CHECK(plan.ops[static_cast<size_t>(a)].mode == 0555);
    CHECK(plan.ops[static_cast<size_t>(b)].mode == 0555);
    CHECK(find_op(plan, K::Dir, "/tmp") == -1);  // the tmpfs's top stays writable
    CHECK(count_dest(plan, "/tmp/a/b/proj") == 1);

    // TMPDIR on the way (or below a directory on it): that directory stays writable.
    s.env = {"TMPDIR=/tmp/a"};
    const auto with_tmpdir = plan_ok(s, f);
    CHECK(find_op(with_tmpdir, K::Dir, "/tmp/a") == -1);
    CHECK(find_op(with_tmpdir, K::Dir, "/tmp/a/b") >= 0);
    s.env = {"TMPDIR=/tmp/a/b/proj/tmp"};  // in the workdir: nothing changes
    CHECK(find_op(plan_ok(s, f), K::Dir, "/tmp/a") >= 0);
    s.env.clear();

    // A host directory on the way (--rw /tmp/a): what is beside the workdir below it is the
    // host's, and nothing is made read-only.
    s.rw = {"/tmp/a"};
    auto shown = plan_ok(s, f);
    CHECK(find_op(shown, K::Dir, "/tmp/a/b") == -1);
    CHECK(find_op(shown, K::Dir, "/tmp/a") == -1);

    // The workdir right below the tmpfs's top, or in no tmpfs: nothing to do.
    s.rw.clear();
    s.workdir = "/tmp/a";
    const auto top = plan_ok(s, f);
    CHECK(std::none_of(top.ops.begin(), top.ops.end(),
                       [](const MountOp& o) { return o.why == "on the way to the workdir"; }));
    s.tmpfs.clear();
    s.workdir = "/tmp/a/b/proj";
    const auto plain = plan_ok(s, f);
    CHECK(std::none_of(plain.ops.begin(), plain.ops.end(),
                       [](const MountOp& o) { return o.why == "on the way to the workdir"; }));
}

TEST_CASE("mount plan: the private HOME comes before read-only entries inside it", "[mount_plan]") {
    FakeFs f;
    f.dir("/home/u");
    f.file("/home/u/.gitconfig");
    Spec s;
    s.home = "/home/u";
    s.private_home = true;
    s.ro = {"/home/u/.gitconfig"};
    auto plan = plan_ok(s, f);
    long home = find_op(plan, K::Tmpfs, "/home/u");
    long cfg = find_op(plan, K::Bind, "/home/u/.gitconfig");
    REQUIRE(home >= 0);
    REQUIRE(cfg >= 0);
    CHECK(home < cfg);
    CHECK(plan.ops[static_cast<size_t>(home)].mode == 0700);
    CHECK(plan.ops[static_cast<size_t>(cfg)].readonly);
    CHECK(plan.ops[static_cast<size_t>(cfg)].optional);

    // Without private-home there is no HOME tmpfs.
    s.private_home = false;
    CHECK(find_op(plan_ok(s, f), K::Tmpfs, "/home/u") == -1);
}

TEST_CASE("mount plan: system entries, symlinks and missing profile entries", "[mount_plan]") {
    FakeFs f;
    f.dir("/usr");
    f.dir("/etc");
    f.link("/bin", "usr/bin");
    f.link("/lib64", "usr/lib64");
    Spec s;
    s.ro = {"/usr", "/bin", "/lib32", "/etc", "/lib64", "/usr"};
    s.rw = {"/srv/missing"};
    auto plan = plan_ok(s, f);
    long bin = find_op(plan, K::Symlink, "/bin");
    REQUIRE(bin >= 0);
    CHECK(plan.ops[static_cast<size_t>(bin)].source == "usr/bin");
    CHECK(find_op(plan, K::Bind, "/bin") == -1);  // never followed
    CHECK(find_op(plan, K::Symlink, "/lib64") >= 0);
    CHECK(count_dest(plan, "/lib32") == 0);
    CHECK(count_dest(plan, "/srv/missing") == 0);
    long usr = find_op(plan, K::Bind, "/usr");
    REQUIRE(usr >= 0);
    CHECK(plan.ops[static_cast<size_t>(usr)].readonly);
    CHECK(plan.ops[static_cast<size_t>(usr)].why == "--ro");
    CHECK(count_dest(plan, "/usr") == 1);  // listed twice, mounted once
    // The given order is kept among equals.
    CHECK(usr < find_op(plan, K::Bind, "/etc"));
}

TEST_CASE("mount plan: hides, with directories, files and globs", "[mount_plan]") {
    FakeFs f;
    f.dir("/etc");
    f.file("/etc/shadow");
    f.dir("/etc/ssl");
    f.dir("/etc/ssl/private");
    f.dir("/etc/ssh");
    f.file("/etc/ssh/ssh_host_ed25519_key");
    f.file("/etc/ssh/ssh_host_rsa_key");
    f.file("/etc/ssh/ssh_host_rsa_key.pub");
    Spec s;
    s.ro = {"/etc"};
    s.hide = {"/etc/shadow", "/etc/gshadow", "/etc/ssl/private", "/etc/ssh/ssh_host_*_key"};
    auto plan = plan_ok(s, f);
    long etc = find_op(plan, K::Bind, "/etc");
    long shadow = find_op(plan, K::HideFile, "/etc/shadow");
    long priv = find_op(plan, K::HideDir, "/etc/ssl/private");
    REQUIRE(etc >= 0);
    REQUIRE(shadow >= 0);
    REQUIRE(priv >= 0);
    CHECK(etc < shadow);
    CHECK(plan.ops[static_cast<size_t>(shadow)].readonly);
    CHECK(find_op(plan, K::HideFile, "/etc/ssh/ssh_host_ed25519_key") > etc);
    CHECK(find_op(plan, K::HideFile, "/etc/ssh/ssh_host_rsa_key") > etc);
    CHECK(count_dest(plan, "/etc/ssh/ssh_host_rsa_key.pub") == 0);  // public keys stay readable
    CHECK(count_dest(plan, "/etc/gshadow") == 0);                   // missing: nothing to hide
}

TEST_CASE("mount plan: existing protected paths are bound read-only, their parents pinned", "[mount_plan]") {
    FakeFs f;
    f.dir("/w");
    f.dir("/w/.git");
    f.file("/w/.git/config");
    f.dir("/w/.git/hooks");
    Spec s;
    s.workdir = "/w";
    s.protect = {".git/config", ".git/hooks/"};
    auto plan = plan_ok(s, f);
    long wd = find_op(plan, K::Bind, "/w", "workdir");
    long pin = find_op(plan, K::Bind, "/w/.git", "pin");
    long cfg = find_op(plan, K::Bind, "/w/.git/config", "protect");
    long hooks = find_op(plan, K::Bind, "/w/.git/hooks", "protect");
    REQUIRE(wd >= 0);
    REQUIRE(pin >= 0);
    REQUIRE(cfg >= 0);
    REQUIRE(hooks >= 0);
    CHECK(wd < pin);
    CHECK(pin < cfg);
    CHECK(pin < hooks);
    const auto& pin_op = plan.ops[static_cast<size_t>(pin)];
    CHECK_FALSE(pin_op.readonly);
    CHECK(pin_op.no_symlinks);
    CHECK(pin_op.source == "/w/.git");
    const auto& cfg_op = plan.ops[static_cast<size_t>(cfg)];
    CHECK(cfg_op.readonly);
    CHECK(cfg_op.no_symlinks);
    CHECK(cfg_op.source == "/w/.git/config");
    CHECK(count_dest(plan, "/w/.git") == 1);  // pinned once for two entries
    CHECK(plan.placeholders.empty());
}

TEST_CASE("mount plan: missing protected paths become placeholders", "[mount_plan]") {
    FakeFs f;
    f.dir("/w");
    f.dir("/w/.git");
    Spec s;
    s.workdir = "/w";
    s.protect = {".git/hooks/", ".claude/", ".a/b/c", ".git/config"};
    auto plan = plan_ok(s, f);
    using PT = Placeholder::Type;
    std::vector<std::pair<std::string, PT>> ph;
    for (const auto& p : plan.placeholders) ph.emplace_back(p.path, p.type);
    // Only the first missing component: a read-only empty directory holds nothing below it.
    // A trailing '/' asks for a directory, as does a missing directory on the way; the path
    // itself without one is an empty file.
    CHECK(ph ==
          std::vector<std::pair<std::string, PT>>{
              {"/w/.git/hooks", PT::Dir}, {"/w/.claude", PT::Dir}, {"/w/.a", PT::Dir}, {"/w/.git/config", PT::File}});
    // One read-only bind on the first missing component freezes everything below it.
    for (const char* dest : {"/w/.git/hooks", "/w/.claude", "/w/.a", "/w/.git/config"}) {
        INFO(dest);
        long i = find_op(plan, K::Bind, dest, "protect");
        REQUIRE(i >= 0);
        CHECK(plan.ops[static_cast<size_t>(i)].readonly);
        CHECK(plan.ops[static_cast<size_t>(i)].no_symlinks);
        CHECK(i > find_op(plan, K::Bind, "/w", "workdir"));
    }
    CHECK(count_dest(plan, "/w/.a/b") == 0);
    CHECK(count_dest(plan, "/w/.a/b/c") == 0);
    CHECK(find_op(plan, K::Bind, "/w/.git", "pin") >= 0);
}

TEST_CASE("mount plan: an existing placeholder is joined, never descended into", "[mount_plan]") {
    // Another run's placeholder, or one a killed run left: the same placeholder again (the
    // supervisor adopts it), never a second one inside it (which would keep it from being
    // removed), and never an ordinary existing path.
    FakeFs f;
    f.dir("/w");
    f.entries["/w/.git"] = {T::Placeholder, ""};
    f.entries["/w/.claude"] = {T::Placeholder, ""};
    Spec s;
    s.workdir = "/w";
    s.protect = {".git/hooks/", ".git/config", ".claude/"};
    auto plan = plan_ok(s, f);
    using PT = Placeholder::Type;
    REQUIRE(plan.placeholders.size() == 3);  // and HEAD: see the git test below
    CHECK(plan.placeholders[0].path == "/w/.git");
    CHECK(plan.placeholders[0].type == PT::Dir);
    CHECK(plan.placeholders[1].path == "/w/.claude");
    CHECK(count_dest(plan, "/w/.git") == 1);
    CHECK(count_dest(plan, "/w/.git/hooks") == 0);
    CHECK(find_op(plan, K::Bind, "/w/.claude", "protect") >= 0);
}

TEST_CASE("mount plan: protected paths bind themselves inside the jail, unless something covers them", "[mount_plan]") {
    FakeFs f;
    f.dir("/w");
    f.dir("/w/.git");
    f.dir("/w/sub");
    Spec s;
    s.workdir = "/w";
    s.protect = {".git/hooks/", ".claude/", "sub/.vscode/"};
    auto plan = plan_ok(s, f);
    for (const char* p : {"/w/.git", "/w/.git/hooks", "/w/.claude", "/w/sub", "/w/sub/.vscode"}) {
        INFO(p);
        long i = find_op(plan, K::Bind, p);
        REQUIRE(i >= 0);
        CHECK(plan.ops[static_cast<size_t>(i)].in_jail);  // the source is the jail's view of p
    }
    CHECK_FALSE(plan.ops[static_cast<size_t>(find_op(plan, K::Bind, "/w", "workdir"))].in_jail);
    // A tmpfs over the workdir, a read-only or hidden subtree: the host's entries are not what the
    // jail sees there, so nothing below is protected (or placeheld).
    s.tmpfs = {"/w"};
    auto shadowed = plan_ok(s, f);
    CHECK(shadowed.placeholders.empty());
    CHECK(count_dest(shadowed, "/w/.claude") == 0);
    s.tmpfs.clear();
    s.ro = {"/w/sub"};
    auto ro = plan_ok(s, f);
    CHECK(count_dest(ro, "/w/sub/.vscode") == 0);
    CHECK(count_dest(ro, "/w/.claude") == 1);
    // A tmpfs elsewhere covers nothing of the workdir.
    s.ro.clear();
    s.tmpfs = {"/tmp"};
    CHECK(plan_ok(s, f).placeholders.size() == 3);
}

TEST_CASE("mount plan: cordon's own directories are protected where a jail could write them", "[mount_plan]") {
    FakeFs f;
    f.dir("/w");
    f.dir("/t");
    f.dir("/home/u");
    Spec s;
    s.workdir = "/w";
    s.home = "/home/u";
    s.cache_dir = "/home/u/.cache/cordon";
    s.private_tmp = "/t/cordon-1000";
    // Not writable in the jail: nothing to do.
    auto plain = plan_ok(s, f);
    CHECK(count_dest(plain, "/t/cordon-1000") == 0);
    CHECK(count_dest(plain, "/home/u/.cache/cordon") == 0);
    // --rw /t over a tmpfs /t (the rw bind is mounted on top): the host's /t shows, so cordon's
    // directory in it is protected, and placeheld while missing.
    s.tmpfs = {"/t"};
    s.rw = {"/t", "/home/u/.cache"};
    auto rw = plan_ok(s, f);
    CHECK(find_op(rw, K::Bind, "/t/cordon-1000", "protect") >= 0);
    CHECK(find_op(rw, K::Bind, "/home/u/.cache/cordon", "protect") >= 0);
    CHECK(std::any_of(rw.placeholders.begin(), rw.placeholders.end(), [](const Placeholder& p) {
        return p.path == "/t/cordon-1000" && p.type == Placeholder::Type::Dir;
    }));
}

TEST_CASE("mount plan: placeholder marks", "[mount_plan]") {
    CHECK(is_placeholder_mode(S_IFDIR | kPlaceholderDirMode));
    CHECK(is_placeholder_mode(S_IFREG | kPlaceholderFileMode));
    CHECK_FALSE(is_placeholder_mode(S_IFDIR | 0755));
    CHECK_FALSE(is_placeholder_mode(S_IFDIR | 01777));  // /tmp-like directories are not ours
    CHECK_FALSE(is_placeholder_mode(S_IFREG | 0444));
    CHECK_FALSE(is_placeholder_mode(S_IFSOCK | kPlaceholderFileMode));
    CHECK_FALSE(is_placeholder_mode(S_IFREG | kPlaceholderDirMode));
    CHECK_FALSE(is_placeholder_mode(S_IFDIR | kPlaceholderFileMode));
}

TEST_CASE("mount plan: every fresh /proc has its host-global knobs read-only and host-wide files masked",
          "[mount_plan]") {
    FakeFs f;
    Spec s;  // a root caller (host_uid 0): its jail may be host root
    auto plan = plan_ok(s, f);
    long proc = find_op(plan, K::Proc, "/proc");
    REQUIRE(proc >= 0);
    // Every jail: the knobs and the information anyone could reach.
    for (const char* e : {"sys", "pressure"}) {
        INFO(e);
        long i = find_op(plan, K::RebindRo, std::string("/proc/") + e, "proc");
        REQUIRE(i > proc);
        CHECK(plan.ops[static_cast<size_t>(i)].optional);
        CHECK_FALSE(plan.ops[static_cast<size_t>(i)].host_root_only);
    }
    for (const char* e : {"timer_list", "sched_debug"}) {
        INFO(e);
        long i = find_op(plan, K::HideFile, std::string("/proc/") + e, "proc");
        REQUIRE(i > proc);
        CHECK_FALSE(plan.ops[static_cast<size_t>(i)].host_root_only);
    }
    // A jail that is host root: also what only uid 0 could write or read.
    for (const char* e : {"sysrq-trigger", "irq", "bus", "fs"}) {
        INFO(e);
        long i = find_op(plan, K::RebindRo, std::string("/proc/") + e, "proc");
        REQUIRE(i > proc);
        CHECK(plan.ops[static_cast<size_t>(i)].host_root_only);
    }
    for (const char* e : {"kcore", "keys", "kpageflags"}) {
        INFO(e);
        long i = find_op(plan, K::HideFile, std::string("/proc/") + e, "proc");
        REQUIRE(i > proc);
        CHECK(plan.ops[static_cast<size_t>(i)].host_root_only);
    }
    for (const char* e : {"acpi", "scsi", "asound"}) {
        INFO(e);
        CHECK(find_op(plan, K::HideDir, std::string("/proc/") + e, "proc") > proc);
    }
    // An unprivileged caller's jail is never host root: only what anyone could reach.
    Spec u;
    u.host_uid = 1000;
    auto uplan = plan_ok(u, f);
    CHECK(find_op(uplan, K::RebindRo, "/proc/sys") >= 0);
    CHECK(find_op(uplan, K::HideFile, "/proc/timer_list") >= 0);
    CHECK(find_op(uplan, K::RebindRo, "/proc/irq") == -1);
    CHECK(find_op(uplan, K::HideFile, "/proc/kcore") == -1);
    // The bwrap-style --proc gets the same, right after it, wherever it goes.
    Spec b;
    b.no_profile = true;
    b.mount_requests = {{R::Proc, "", "/p"}, {R::Dir, "", "/x"}};
    auto bplan = plan_ok(b, f);
    REQUIRE(bplan.ops.front().kind == K::Proc);
    CHECK(bplan.ops[1].kind == K::RebindRo);
    CHECK(bplan.ops[1].dest == "/p/sys");
    CHECK(bplan.ops.back().kind == K::Dir);
    CHECK(find_op(bplan, K::HideFile, "/p/kcore") > 0);
    CHECK(describe(bplan.ops[1]) == "read-only /p/sys (if it exists)  [--proc]");
}

TEST_CASE("mount plan: a non-directory on the way to a protected path is bound read-only", "[mount_plan]") {
    // A git worktree's .git file, or a .git socket left by a cordon killed with SIGKILL.
    for (T type : {T::File, T::Other}) {
        FakeFs f;
        f.dir("/w");
        f.entries["/w/.git"] = {type, ""};
        Spec s;
        s.workdir = "/w";
        s.protect = {".git/hooks", ".git/config"};
        auto plan = plan_ok(s, f);
        CHECK(plan.placeholders.empty());
        CHECK(count_dest(plan, "/w/.git") == 1);  // once, for both entries
        long i = find_op(plan, K::Bind, "/w/.git", "protect");
        REQUIRE(i >= 0);
        CHECK(plan.ops[static_cast<size_t>(i)].readonly);
        CHECK(i > find_op(plan, K::Bind, "/w", "workdir"));
        CHECK(count_dest(plan, "/w/.git/hooks") == 0);
    }
}

TEST_CASE("mount plan: a symlink on a protected path is covered, never followed", "[mount_plan]") {
    // A symlink on the way (.git) or at the end (.envrc), perhaps planted by an earlier run: the
    // run goes ahead, the link itself is covered by an empty read-only file inside the jail, and
    // nothing is planned through it. A note says what was found.
    FakeFs f;
    f.dir("/w");
    f.link("/w/.git", "/home/u/.ssh");
    f.link("/w/.envrc", "/etc/passwd");
    Spec s;
    s.workdir = "/w";
    s.protect = {".git/hooks/", ".git/config"};
    s.protect_existing = {".envrc"};
    auto plan = plan_ok(s, f);
    CHECK(plan.placeholders.empty());
    for (const char* link : {"/w/.git", "/w/.envrc"}) {
        INFO(link);
        CHECK(count_dest(plan, link) == 1);  // once, for both .git entries
        long i = find_op(plan, K::HideFile, link, "protect (symlink)");
        REQUIRE(i >= 0);
        CHECK(plan.ops[static_cast<size_t>(i)].no_symlinks);
        CHECK(i > find_op(plan, K::Bind, "/w", "workdir"));
    }
    CHECK(count_dest(plan, "/w/.git/hooks") == 0);
    CHECK(count_dest(plan, "/home/u/.ssh") == 0);
    REQUIRE(plan.notes.size() == 2);
    CHECK_THAT(plan.notes[0],
               Catch::Contains("/w/.git") && Catch::Contains("/home/u/.ssh") && Catch::Contains("not followed"));
}

TEST_CASE("mount plan: protect-existing entries that are missing add nothing", "[mount_plan]") {
    FakeFs f;
    f.dir("/w");
    f.file("/w/.bashrc");
    Spec s;
    s.workdir = "/w";
    s.protect_existing = {".envrc", ".bashrc", ".config/direnv/x"};
    auto plan = plan_ok(s, f);
    CHECK(plan.placeholders.empty());
    CHECK(count_dest(plan, "/w/.envrc") == 0);
    CHECK(count_dest(plan, "/w/.config") == 0);
    long rc = find_op(plan, K::Bind, "/w/.bashrc", "protect");
    REQUIRE(rc >= 0);
    CHECK(plan.ops[static_cast<size_t>(rc)].readonly);

    // Nor are the existing directories on the way to a missing one pinned; once it exists, they are.
    f.dir("/w/.git");
    f.dir("/w/.git/objects");
    f.dir("/w/.git/objects/info");
    s.protect_existing = {".git/objects/info/alternates"};
    auto missing = plan_ok(s, f);
    CHECK(count_dest(missing, "/w/.git") == 0);
    CHECK(count_dest(missing, "/w/.git/objects") == 0);
    CHECK(count_dest(missing, "/w/.git/objects/info") == 0);
    f.file("/w/.git/objects/info/alternates");
    auto existing = plan_ok(s, f);
    CHECK(find_op(existing, K::Bind, "/w/.git", "pin") >= 0);
    CHECK(find_op(existing, K::Bind, "/w/.git/objects", "pin") >= 0);
    CHECK(find_op(existing, K::Bind, "/w/.git/objects/info", "pin") >= 0);
    CHECK(find_op(existing, K::Bind, "/w/.git/objects/info/alternates", "protect") >= 0);

    // Without a workdir nothing is protected (nothing is writable).
    Spec n;
    n.protect = {".git/hooks/"};
    n.protect_existing = {".bashrc"};
    auto none = plan_ok(n, f);
    CHECK(none.placeholders.empty());
    CHECK(std::none_of(none.ops.begin(), none.ops.end(), [](const MountOp& o) { return o.why == "protect"; }));
}

TEST_CASE("mount plan: bwrap-style primitives come last, in command-line order", "[mount_plan]") {
    FakeFs f;
    f.dir("/usr");
    Spec s;
    s.ro = {"/usr/share/deep/path"};
    f.dir("/usr/share/deep/path");
    s.mount_requests = {{R::Dir, "", "/a"},
                        {R::RoBind, "/x", "/a/b", true},
                        {R::DevBind, "/dev/fuse", "/dev/fuse"},
                        {R::Symlink, "usr/lib", "/lib"},
                        {R::Proc, "", "/proc2"},
                        {R::Dev, "", "/dev2"},
                        {R::Bind, "/y", "/z"},
                        {R::RemountRo, "", "/a"}};
    auto plan = plan_ok(s, f);
    // The /proc protection that follows --proc is left out here (tested above).
    std::vector<MountOp> ops;
    std::copy_if(plan.ops.begin(), plan.ops.end(), std::back_inserter(ops),
                 [](const MountOp& o) { return !(o.why == "--proc" && o.kind != K::Proc); });
    REQUIRE(ops.size() >= 8);
    std::vector<MountOp> tail(ops.end() - 8, ops.end());
    CHECK(tail[0].kind == K::Dir);
    CHECK(tail[0].dest == "/a");
    CHECK(tail[1].kind == K::Bind);
    CHECK(tail[1].readonly);
    CHECK(tail[1].optional);
    CHECK(tail[1].source == "/x");
    CHECK(tail[1].dest == "/a/b");
    CHECK(tail[2].devices);
    CHECK_FALSE(tail[2].readonly);
    CHECK_FALSE(tail[2].optional);
    CHECK(tail[3].kind == K::Symlink);
    CHECK(tail[3].source == "usr/lib");
    CHECK(tail[4].kind == K::Proc);
    CHECK(tail[4].dest == "/proc2");
    CHECK(tail[5].kind == K::Dev);
    CHECK(tail[6].kind == K::Bind);
    CHECK_FALSE(tail[6].readonly);
    CHECK(tail[6].why == "--bind");
    CHECK(tail[7].kind == K::RemountRo);
    // The deep profile entry still comes before every primitive.
    CHECK(find_op(plan, K::Bind, "/usr/share/deep/path") < find_op(plan, K::Dir, "/a"));
}

TEST_CASE("mount plan: --no-profile yields only the primitives", "[mount_plan]") {
    FakeFs f;
    f.dir("/usr");
    f.dir("/w");
    Spec s;
    s.no_profile = true;
    s.ro = {"/usr"};
    s.tmpfs = {"/tmp"};
    s.workdir = "/w";
    s.private_home = true;
    s.home = "/home/u";
    s.protect = {".git/hooks/"};
    s.mount_requests = {{R::RoBind, "/usr", "/usr"}, {R::Proc, "", "/proc"}};
    auto plan = plan_ok(s, f);
    REQUIRE(plan.ops.size() == 2 + proc_protection().size());
    CHECK(plan.ops[0].kind == K::Bind);
    CHECK(plan.ops[0].why == "--ro-bind");
    CHECK(plan.ops[1].kind == K::Proc);
    CHECK(std::all_of(plan.ops.begin() + 2, plan.ops.end(), [](const MountOp& o) { return o.why == "--proc"; }));
    CHECK(plan.placeholders.empty());
}

TEST_CASE("mount plan: describe() says what each op does", "[mount_plan]") {
    MountOp ro{.kind = K::Bind, .source = "/usr", .dest = "/usr", .readonly = true, .optional = true, .why = "--ro"};
    CHECK(describe(ro) == "ro-bind /usr -> /usr (if it exists)  [--ro]");
    MountOp tmp{.kind = K::Tmpfs, .dest = "/tmp", .size = 64ULL << 20, .mode = 01777, .why = "tmpfs"};
    CHECK(describe(tmp) == "tmpfs /tmp (size 64M)  [tmpfs]");
    MountOp link{.kind = K::Symlink, .source = "usr/bin", .dest = "/bin", .why = "--ro"};
    CHECK(describe(link) == "symlink /bin -> usr/bin  [--ro]");
    MountOp dev{.kind = K::Bind, .source = "/dev/fuse", .dest = "/dev/fuse", .devices = true, .why = "--dev-bind"};
    CHECK(describe(dev) == "dev-bind /dev/fuse -> /dev/fuse  [--dev-bind]");
}

TEST_CASE("mount plan: cordon's config dir is read-only inside, existing or not", "[mount_plan]") {
    FakeFs f;
    f.dir("/home/u");
    f.dir("/home/u/proj");
    Spec s;
    s.home = "/home/u";
    s.private_home = true;
    s.workdir = "/home/u/proj";
    s.config_dir = "/home/u/.config/cordon";

    // Missing and outside every writable tree: an empty read-only tmpfs, after the private HOME.
    auto missing = plan_ok(s, f);
    long tmpfs = find_op(missing, K::Tmpfs, "/home/u/.config/cordon", "cordon config");
    REQUIRE(tmpfs >= 0);
    CHECK(missing.ops[static_cast<size_t>(tmpfs)].readonly);
    CHECK(find_op(missing, K::Tmpfs, "/home/u", "private HOME") < tmpfs);
    CHECK(missing.placeholders.empty());

    // Existing: the host's directory, read-only.
    f.dir("/home/u/.config/cordon");
    auto existing = plan_ok(s, f);
    long bind = find_op(existing, K::Bind, "/home/u/.config/cordon", "cordon config");
    REQUIRE(bind >= 0);
    CHECK(existing.ops[static_cast<size_t>(bind)].readonly);

    // Inside the workdir: protected like .git/hooks, with a placeholder when missing.
    s.config_dir = "/home/u/proj/xdg/cordon";
    f.dir("/home/u/proj/xdg");
    auto inside = plan_ok(s, f);
    REQUIRE(inside.placeholders.size() == 1);
    CHECK(inside.placeholders[0].path == "/home/u/proj/xdg/cordon");
    CHECK(inside.placeholders[0].type == Placeholder::Type::Dir);
    CHECK(find_op(inside, K::Bind, "/home/u/proj/xdg", "pin") >= 0);
    long prot = find_op(inside, K::Bind, "/home/u/proj/xdg/cordon", "protect");
    REQUIRE(prot >= 0);
    CHECK(inside.ops[static_cast<size_t>(prot)].readonly);

    // Inside an --rw tree: the same.
    s.config_dir = "/srv/cfg/cordon";
    s.rw = {"/srv/cfg"};
    f.dir("/srv/cfg");
    auto rw = plan_ok(s, f);
    CHECK(std::any_of(rw.placeholders.begin(), rw.placeholders.end(),
                      [](const Placeholder& p) { return p.path == "/srv/cfg/cordon"; }));
}

TEST_CASE("mount plan: a read-only workdir has no protected-path placeholders", "[mount_plan]") {
    FakeFs f;
    f.dir("/w");
    Spec s;
    s.workdir = "/w";
    s.workdir_readonly = true;
    s.protect = {".git/hooks/", ".claude/"};
    auto plan = plan_ok(s, f);
    long wd = find_op(plan, K::Bind, "/w");
    REQUIRE(wd >= 0);
    CHECK(plan.ops[static_cast<size_t>(wd)].readonly);
    CHECK(plan.placeholders.empty());
    s.workdir_readonly = false;
    CHECK(plan_ok(s, f).placeholders.size() == 3);  // .git (covers .git/hooks), .claude, HEAD
}

TEST_CASE("mount plan: what git reads besides .git/hooks and .git/config", "[mount_plan]") {
    FakeFs f;
    f.dir("/w");
    f.dir("/w/.git");
    f.dir("/w/.git/worktrees");
    f.dir("/w/.git/worktrees/wt1");
    f.file("/w/.git/worktrees/wt1/commondir");
    f.dir("/w/.git/worktrees/wt2");
    f.dir("/w/.git/modules");
    f.dir("/w/.git/modules/lib");
    f.file("/w/.git/modules/lib/config");
    f.dir("/w/.git/modules/lib/hooks");
    Spec s;
    s.workdir = "/w";
    s.protect = {".git/hooks/", ".git/commondir"};
    s.protect_existing = {".git/worktrees/*/commondir", ".git/modules/*/config", ".git/modules/*/hooks/"};
    auto plan = plan_ok(s, f);
    // Patterns name the directories they are in; each existing match gets the entry.
    CHECK(find_op(plan, K::Bind, "/w/.git/worktrees/wt1/commondir", "protect") >= 0);
    CHECK(count_dest(plan, "/w/.git/worktrees/wt2/commondir") == 0);  // protect-existing: missing
    CHECK(find_op(plan, K::Bind, "/w/.git/modules/lib/config", "protect") >= 0);
    CHECK(find_op(plan, K::Bind, "/w/.git/modules/lib/hooks", "protect") >= 0);
    CHECK(find_op(plan, K::Bind, "/w/.git/worktrees", "pin") >= 0);
    // A missing .git/commondir is a placeholder; a repository's HEAD is not protected.
    CHECK(std::any_of(plan.placeholders.begin(), plan.placeholders.end(), [](const Placeholder& p) {
        return p.path == "/w/.git/commondir" && p.type == Placeholder::Type::File;
    }));
    CHECK(count_dest(plan, "/w/HEAD") == 0);
    // config.worktree is configuration where .git/config turns it on.
    CHECK(count_dest(plan, "/w/.git/config.worktree") == 0);
    f.file("/w/.git/config");
    f.contents["/w/.git/config"] = "[extensions]\n\tworktreeConfig = true\n";
    CHECK(count_dest(plan_ok(s, f), "/w/.git/config.worktree") == 1);
    // Without a .git, the workdir's HEAD is protected: no bare repository can be planted there.
    FakeFs bare;
    bare.dir("/w");
    auto none = plan_ok(s, bare);
    CHECK(std::any_of(none.placeholders.begin(), none.placeholders.end(),
                      [](const Placeholder& p) { return p.path == "/w/HEAD" && p.type == Placeholder::Type::File; }));
}

TEST_CASE("mount plan: a linked worktree's git directories, read-only", "[mount_plan]") {
    FakeFs f;
    f.dir("/r");
    f.dir("/r/.git");
    f.dir("/r/.git/objects");
    f.dir("/r/.git/worktrees");
    f.dir("/r/.git/worktrees/wt");
    f.file("/r/.git/worktrees/wt/commondir");
    f.dir("/wt");
    f.file("/wt/.git");
    Spec s;
    s.workdir = "/wt";
    s.workdir_gitdir = "/r/.git/worktrees/wt";
    s.workdir_commondir = "/r/.git";
    s.protect = {".git/config"};
    auto plan = plan_ok(s, f);
    // The common directory, read-only; the worktree's own is inside it, shown with it.
    const long common = find_op(plan, K::Bind, "/r/.git");
    REQUIRE(common >= 0);
    CHECK(plan.ops[static_cast<size_t>(common)].readonly);
    CHECK(plan.ops[static_cast<size_t>(common)].no_symlinks);
    CHECK(count_dest(plan, "/r/.git/worktrees/wt") == 0);
    CHECK(count_dest(plan, "/r/.git/objects") == 0);
    CHECK(plan.placeholders.empty());
    // A worktree's git directory outside the common one is shown on its own, read-only.
    s.workdir_gitdir = "/elsewhere/wt";
    f.dir("/elsewhere");
    f.dir("/elsewhere/wt");
    auto apart = plan_ok(s, f);
    const long own = find_op(apart, K::Bind, "/elsewhere/wt");
    REQUIRE(own >= 0);
    CHECK(apart.ops[static_cast<size_t>(own)].readonly);
    // A submodule's checkout (no common directory): its git directory read-only.
    Spec sub;
    sub.workdir = "/wt";
    sub.workdir_gitdir = "/r/.git/modules/m";
    f.dir("/r/.git/modules");
    f.dir("/r/.git/modules/m");
    auto subplan = plan_ok(sub, f);
    const long m = find_op(subplan, K::Bind, "/r/.git/modules/m");
    REQUIRE(m >= 0);
    CHECK(subplan.ops[static_cast<size_t>(m)].readonly);
}

TEST_CASE("mount plan: the placeholder hand-off sits at the first op that mounts one", "[mount_plan]") {
    // The supervisor creates the placeholders while the child builds the jail: every op before
    // the hand-off needs nothing from it, the hand-off op is the first that mounts a placeholder.
    FakeFs f;
    f.dir("/w");
    f.dir("/w/.git");
    f.file("/w/.git/config");
    f.dir("/usr");
    Spec s;
    s.workdir = "/w";
    s.ro = {"/usr"};
    s.tmpfs = {"/tmp"};
    s.protect = {".git/config", ".git/hooks/", ".claude/"};
    auto plan = plan_ok(s, f);
    REQUIRE(plan.placeholders.size() == 2);  // .git/hooks, .claude
    REQUIRE(plan.handoff);
    const size_t at = *plan.handoff;
    REQUIRE(at < plan.ops.size());
    auto mounts_placeholder = [&](const MountOp& op) {
        return std::any_of(plan.placeholders.begin(), plan.placeholders.end(),
                           [&](const Placeholder& ph) { return ph.path == op.source; });
    };
    CHECK(mounts_placeholder(plan.ops[at]));
    CHECK(plan.ops[at].why == "protect");
    CHECK(plan.ops[at].in_jail);
    for (size_t i = 0; i < at; ++i) {
        INFO(describe(plan.ops[i]));
        CHECK_FALSE(mounts_placeholder(plan.ops[i]));
    }
    // The host's paths the profile shows, and the fresh filesystems, come before it.
    for (long i : {find_op(plan, K::Bind, "/w", "workdir"), find_op(plan, K::Bind, "/usr"),
                   find_op(plan, K::Tmpfs, "/tmp"), find_op(plan, K::Proc, "/proc"), find_op(plan, K::Dev, "/dev")}) {
        REQUIRE(i >= 0);
        CHECK(static_cast<size_t>(i) < at);
    }

    // Nothing to hand off where nothing is placeheld: the supervisor's go-ahead comes after the
    // mounts (a read-only workdir, existing protected paths, --no-profile).
    f.dir("/w/.git/hooks");
    f.dir("/w/.claude");
    f.file("/w/HEAD");
    CHECK_FALSE(plan_ok(s, f).handoff);
    s.workdir_readonly = true;
    CHECK_FALSE(plan_ok(s, f).handoff);
    Spec n;
    n.no_profile = true;
    n.mount_requests = {{R::RoBind, "/usr", "/usr"}, {R::Proc, "", "/proc"}};
    CHECK_FALSE(plan_ok(n, f).handoff);
}

TEST_CASE("mount plan: a primitive that binds a placeholder is after the hand-off", "[mount_plan]") {
    // --bind-try of a missing protected path: the placeholder's own protection, mounted first,
    // is the hand-off, and the primitive that shows it elsewhere comes after.
    FakeFs f;
    f.dir("/w");
    Spec s;
    s.workdir = "/w";
    s.protect = {".claude/"};
    s.mount_requests = {{R::Bind, "/w/.claude", "/mnt/claude", true}};
    auto plan = plan_ok(s, f);
    REQUIRE(plan.handoff);
    long prot = find_op(plan, K::Bind, "/w/.claude", "protect");
    long prim = find_op(plan, K::Bind, "/mnt/claude", "--bind-try");
    CHECK(*plan.handoff == static_cast<size_t>(prot));
    CHECK(prim > prot);
}

TEST_CASE("root remap: the caller's trees are idmapped, the system's are not", "[mount_plan]") {
    Spec s;
    s.home = "/root";
    s.workdir = "/srv/proj";
    auto bind = [](const std::string& src, bool ro, bool dev = false) {
        MountOp op;
        op.kind = K::Bind;
        op.source = op.dest = src;
        op.readonly = ro;
        op.devices = dev;
        return op;
    };
    CHECK(remap_idmaps(s, bind("/srv/proj", false)));        // the workdir
    CHECK(remap_idmaps(s, bind("/root/.gitconfig", true)));  // a HOME entry
    CHECK(remap_idmaps(s, bind("/data/repo", true)));        // --ro of the caller's data
    CHECK(remap_idmaps(s, bind("/var/cache/x", false)));     // anything writable
    CHECK_FALSE(remap_idmaps(s, bind("/usr", true)));
    CHECK_FALSE(remap_idmaps(s, bind("/etc", true)));
    CHECK_FALSE(remap_idmaps(s, bind("/etc/ssl/certs", true)));
    CHECK_FALSE(remap_idmaps(s, bind("/opt", true)));
    CHECK_FALSE(remap_idmaps(s, bind("/", true)));                 // --ro-bind / /
    CHECK_FALSE(remap_idmaps(s, bind("/dev/fuse", false, true)));  // devices never
    MountOp prot = bind("/srv/proj/.git", true);
    prot.in_jail = true;
    CHECK_FALSE(remap_idmaps(s, prot));  // made inside the jail, from the idmapped workdir
}

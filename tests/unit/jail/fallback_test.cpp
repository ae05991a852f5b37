// The Landlock jail (cordon(1), ISOLATION) as data: the rules it derives from the namespace
// jail's mount plan in the host's terms, what it refuses to build, and what it names as dropped.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "cordon/fallback.hpp"
#include "cordon/mount_plan.hpp"
#include "cordon/paths.hpp"

using namespace cordon;

namespace {

// A host of directories (with their entries), files and symlinks; nothing else exists.
struct FakeHost {
    std::map<std::string, std::vector<std::string>> dirs;
    std::set<std::string> files, links;
    bool typed = false;  // lists entries with their types (HostFs::entries), as the real host does
    [[nodiscard]] HostFs fs() const {
        HostFs h;
        if (typed) {
            h.entries = [this](const std::string& d) {
                std::vector<std::pair<std::string, HostFs::Type>> out;
                auto it = dirs.find(d);
                if (it == dirs.end()) return out;
                for (const auto& name : it->second) {
                    const std::string p = d + "/" + name;
                    out.emplace_back(name, dirs.count(p) != 0    ? HostFs::Type::Dir
                                           : links.count(p) != 0 ? HostFs::Type::Symlink
                                           : files.count(p) != 0 ? HostFs::Type::File
                                                                 : HostFs::Type::Missing);
                }
                return out;
            };
        }
        h.type = [this](const std::string& p) {
            if (dirs.count(p) != 0) return HostFs::Type::Dir;
            if (links.count(p) != 0) return HostFs::Type::Symlink;
            return files.count(p) != 0 ? HostFs::Type::File : HostFs::Type::Missing;
        };
        h.readlink = [](const std::string&) { return std::string("/elsewhere"); };
        h.glob = [this](const std::string& p) {
            return type_of(p) ? std::vector<std::string>{p} : std::vector<std::string>{};
        };
        h.read = [](const std::string&) { return std::string(); };
        h.list = [this](const std::string& d) {
            auto it = dirs.find(d);
            std::vector<std::string> names = {".", ".."};
            if (it != dirs.end()) names.insert(names.end(), it->second.begin(), it->second.end());
            return names;
        };
        return h;
    }
    [[nodiscard]] bool type_of(const std::string& p) const {
        return dirs.count(p) != 0 || files.count(p) != 0 || links.count(p) != 0;
    }
};

FakeHost default_host() {
    FakeHost h;
    h.dirs = {{"/usr", {"bin", "lib"}},
              {"/etc", {"passwd", "shadow", "ssl"}},
              {"/etc/ssl", {"certs", "private"}},
              {"/etc/ssl/private", {"key.pem"}},
              {"/etc/ssl/certs", {}},
              {"/w", {".git", "src", "README", "link"}},
              {"/w/.git", {"config", "hooks", "objects", "HEAD"}},
              {"/w/.git/hooks", {}},
              {"/w/.git/objects", {}},
              {"/w/src", {}},
              {"/home/u", {".ssh"}},
              {"/home/u/.ssh", {"id_ed25519"}},
              {"/srv", {}}};
    h.files = {"/etc/passwd",  "/etc/shadow", "/etc/ssl/private/key.pem", "/w/.git/config",
               "/w/.git/HEAD", "/w/README",   "/home/u/.ssh/id_ed25519"};
    h.links = {"/w/link"};
    return h;
}

Spec default_spec() {
    Spec s;
    s.home = "/home/u";
    s.private_home = true;
    s.workdir = "/w";
    s.ro = {"/usr", "/etc"};
    s.tmpfs = {"/tmp", "/var/tmp", "/run"};
    s.hide = {"/etc/shadow", "/etc/ssl/private"};
    s.protect = {".git/hooks/", ".git/config", ".vscode/"};
    return s;
}

Result<FallbackPlan> plan_for(const Spec& spec, int abi, const FakeHost& host = default_host()) {
    const HostFs fs = host.fs();
    auto mounts = plan_mounts(spec, fs);
    if (!mounts) FAIL("mount plan: " << mounts.error().what << ": " << mounts.error().why);
    return plan_fallback(spec, *mounts, abi, fs);
}

// The rights that reach PATH: those of every rule at or above it.
uint64_t rights_at(const FallbackPlan& plan, const std::string& path) {
    uint64_t out = 0;
    for (const auto& r : plan.landlock.rules) {
        if (path_at_or_under(path, r.path)) out |= r.access;
    }
    return out;
}

bool names(const FallbackPlan& plan, const std::string& text) {
    return std::any_of(plan.dropped.begin(), plan.dropped.end(),
                       [&](const std::string& d) { return d.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("landlock jail: reads only where the namespace jail shows files, never HOME or hidden files") {
    auto plan = plan_for(default_spec(), 7);
    REQUIRE(plan);
    const uint64_t read = LANDLOCK_ACCESS_FS_READ_FILE;
    CHECK((rights_at(*plan, "/usr/bin/sh") & read) != 0);
    CHECK((rights_at(*plan, "/etc/passwd") & read) != 0);
    CHECK((rights_at(*plan, "/w/src/main.c") & read) != 0);
    CHECK((rights_at(*plan, "/w/.git/hooks/pre-commit") & read) != 0);  // protected: read-only, not hidden
    CHECK((rights_at(*plan, "/proc/self/status") & read) != 0);
    // Not granted at all: HOME, the hidden files, the shared /tmp, anything else of the host.
    CHECK(rights_at(*plan, "/home/u/.ssh/id_ed25519") == 0);
    // (a split directory's READ_DIR reaches them: their names can be listed, not read)
    CHECK(rights_at(*plan, "/etc/shadow") == LANDLOCK_ACCESS_FS_READ_DIR);
    CHECK(rights_at(*plan, "/etc/ssl/private/key.pem") == LANDLOCK_ACCESS_FS_READ_DIR);
    CHECK(rights_at(*plan, "/tmp/x") == 0);
    CHECK(rights_at(*plan, "/srv") == 0);
    CHECK(rights_at(*plan, "/") == 0);
    // /etc and /etc/ssl are split: only listed, each other entry granted on its own.
    CHECK(rights_at(*plan, "/etc") == LANDLOCK_ACCESS_FS_READ_DIR);
    CHECK((rights_at(*plan, "/etc/ssl/certs") & read) != 0);
}

TEST_CASE("landlock jail: writes only beneath the workdir; its protected paths are judged after the run") {
    auto plan = plan_for(default_spec(), 7);
    REQUIRE(plan);
    const uint64_t write = LANDLOCK_ACCESS_FS_WRITE_FILE;
    const uint64_t create = LANDLOCK_ACCESS_FS_MAKE_REG;
    const uint64_t remove = LANDLOCK_ACCESS_FS_REMOVE_FILE;
    CHECK((rights_at(*plan, "/w/src/new.c") & (write | create)) == (write | create));
    CHECK((rights_at(*plan, "/w/README") & write) != 0);
    CHECK((rights_at(*plan, "/w/.git/objects/ab") & create) != 0);
    // New files at the workdir's top and in .git (git's index.lock): Landlock cannot refuse
    // one name in a directory it lets the command write, so the protected paths are writable
    // too, listed to be judged when the run ends, and named as dropped.
    CHECK((rights_at(*plan, "/w") & (create | remove)) == (create | remove));
    CHECK((rights_at(*plan, "/w/.git") & (create | remove)) == (create | remove));
    for (const char* p : {"/w/.git/hooks", "/w/.git/config", "/w/.vscode"}) {
        INFO(p);
        CHECK(std::find(plan->judged.begin(), plan->judged.end(), p) != plan->judged.end());
    }
    CHECK(names(*plan, "protected paths writable during the run"));
    CHECK_FALSE(names(*plan, "no new entries"));
    // The private HOME: the namespace jail's tmpfs, here a directory the run makes.
    CHECK(plan->home == "/home/u");
    // Nothing outside the workdir, and no symlink the workdir holds is followed.
    CHECK((rights_at(*plan, "/etc/passwd") & write) == 0);
    CHECK((rights_at(*plan, "/usr/bin/sh") & write) == 0);
    CHECK(std::none_of(plan->landlock.rules.begin(), plan->landlock.rules.end(),
                       [](const LandlockRule& r) { return r.path == "/w/link"; }));
    for (const auto& r : plan->landlock.rules) {
        if (path_under(r.path, "/w")) CHECK(r.anchor == "/w");
    }
}

TEST_CASE("landlock jail: a read-only path inside the workdir stays a wall") {
    Spec spec = default_spec();
    spec.ro.emplace_back("/w/src");
    auto plan = plan_for(spec, 7);
    REQUIRE(plan);
    const uint64_t write = LANDLOCK_ACCESS_FS_WRITE_FILE;
    const uint64_t create = LANDLOCK_ACCESS_FS_MAKE_REG;
    CHECK((rights_at(*plan, "/w/src/main.c") & (write | create)) == 0);
    CHECK((rights_at(*plan, "/w") & create) == 0);  // no grant above it: the top is split
    CHECK((rights_at(*plan, "/w/README") & write) != 0);
    CHECK(names(*plan, "no new entries in /w"));
}

TEST_CASE("landlock jail: network, scopes and sockets follow the ABI and --net") {
    auto plan = plan_for(default_spec(), 7);
    REQUIRE(plan);
    CHECK(plan->landlock.handled_net == (LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP));
    CHECK(plan->landlock.scoped == (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL));
    CHECK(plan->net_refused);
    CHECK(!plan->socket_bpf.empty());
    CHECK(names(*plan, "host processes visible"));
    CHECK(names(*plan, "no private /tmp"));
    CHECK(!names(*plan, "signals"));

    auto old = plan_for(default_spec(), 3);
    REQUIRE(old);
    CHECK(old->landlock.handled_net == 0);  // ABI 4: the socket filter alone refuses the network
    CHECK(old->landlock.scoped == 0);
    CHECK(names(*old, "signals to host processes of the same user not refused (Landlock ABI 3 < 6)"));

    Spec host = default_spec();
    host.share_net = true;
    auto shared = plan_for(host, 7);
    REQUIRE(shared);
    CHECK(shared->landlock.handled_net == 0);
    CHECK(!shared->net_refused);
    CHECK(!names(*shared, "no loopback"));

    // --allow-host: the plan refuses every network socket; the supervisor, where it can be the
    // jail's listener, routes through its proxy instead (proxy_connect.hpp), with a filter that
    // lets TCP client sockets be made.
    CHECK(!names(*plan, "--allow-host"));
    Spec filtered = default_spec();
    filtered.allow_hosts.push_back(AllowHost{.text = "example.invalid", .name = "example.invalid", .ports = {443}});
    auto none = plan_for(filtered, 7);
    REQUIRE(none);
    CHECK(none->net_refused);
    CHECK(none->listener_bpf.empty());  // the supervisor's to set, where it has a listener
    CHECK(none->landlock.handled_net == (LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP));
    auto proxied = fallback_socket_filter(false, true);
    REQUIRE(proxied);
    CHECK(proxied->size() > none->socket_bpf.size());  // the types, bind, listen and Fast Open
}

TEST_CASE("landlock jail: refused where it cannot give what is asked, or has no Landlock") {
    CHECK(!plan_for(default_spec(), 1));
    CHECK(!plan_for(default_spec(), -38));  // ENOSYS
    Spec uid = default_spec();
    uid.uid = 5;
    CHECK(!plan_for(uid, 7));
    Spec hostname = default_spec();
    hostname.hostname = "box";
    CHECK(!plan_for(hostname, 7));
    Spec bind = default_spec();
    bind.mount_requests.push_back(MountRequest{MountRequest::Kind::Bind, "/srv", "/opt/data"});
    auto r = plan_for(bind, 7);
    REQUIRE(!r);
    CHECK(r.error().why.find("--bind /srv /opt/data needs the namespace jail") != std::string::npos);
    Spec same = default_spec();
    same.mount_requests.push_back(MountRequest{MountRequest::Kind::RoBind, "/srv", "/srv"});
    CHECK(plan_for(same, 7));
}

TEST_CASE("landlock jail: clone's refusals that mean no user namespaces") {
    for (int err : {EPERM, EACCES, ENOSPC, EUSERS, EINVAL}) CHECK(userns_refused(err));
    for (int err : {ENOMEM, EAGAIN}) CHECK(!userns_refused(err));
}

TEST_CASE("landlock jail: a typed listing marks files, skips the workdir's symlinks, grants the same") {
    FakeHost typed = default_host();
    typed.typed = true;
    auto with = plan_for(default_spec(), 7, typed);
    auto without = plan_for(default_spec(), 7);
    REQUIRE(with);
    REQUIRE(without);
    REQUIRE(with->landlock.rules.size() == without->landlock.rules.size());
    for (size_t i = 0; i < with->landlock.rules.size(); ++i) {
        const LandlockRule& r = with->landlock.rules[i];
        CHECK(r.path == without->landlock.rules[i].path);
        CHECK(r.access == without->landlock.rules[i].access);
        CHECK(!without->landlock.rules[i].file);  // no types: the child asks the kernel
        // Marked a file exactly where the host has one.
        CHECK(r.file == (typed.files.count(r.path) != 0));
    }
    auto rule = [&](const std::string& path) {
        return std::find_if(with->landlock.rules.begin(), with->landlock.rules.end(),
                            [&](const LandlockRule& r) { return r.path == path; });
    };
    REQUIRE(rule("/etc/passwd") != with->landlock.rules.end());
    CHECK(rule("/etc/passwd")->file);
    REQUIRE(rule("/etc/ssl/certs") != with->landlock.rules.end());
    CHECK(!rule("/etc/ssl/certs")->file);
    CHECK(rule("/w/link") == with->landlock.rules.end());
}

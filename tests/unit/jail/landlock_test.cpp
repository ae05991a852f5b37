// The Landlock plan (cordon(1), LANDLOCK) as data: which paths of the jail get which rights,
// from a mount plan and the ABI the kernel offers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <set>

#include "cordon/landlock.hpp"
#include "cordon/mount_plan.hpp"
#include "cordon/paths.hpp"
#include "cordon/seccomp.hpp"

using namespace cordon;
using R = MountRequest::Kind;

namespace {

// A host where every path in DIRS is a directory, every path in FILES a file, nothing else exists.
HostFs fake_host(const std::set<std::string>& dirs, const std::set<std::string>& files = {}) {
    HostFs h;
    h.type = [dirs, files](const std::string& p) {
        if (dirs.count(p) != 0) return HostFs::Type::Dir;
        return files.count(p) != 0 ? HostFs::Type::File : HostFs::Type::Missing;
    };
    h.readlink = [](const std::string&) { return std::string(); };
    h.glob = [](const std::string&) { return std::vector<std::string>{}; };
    h.read = [](const std::string&) { return std::string(); };
    return h;
}

// The default profile's jail for a caller whose HOME is /home/u, in the workdir /w.
Spec default_spec() {
    Spec s;
    s.home = "/home/u";
    s.private_home = true;
    s.workdir = "/w";
    s.ro = {"/usr", "/etc", "/opt"};
    s.tmpfs = {"/tmp", "/var/tmp", "/run"};
    s.hide = {"/etc/shadow"};
    s.protect = {".git/hooks/", ".git/config", ".vscode/"};
    return s;
}
const std::set<std::string> kHostDirs = {"/usr", "/etc", "/opt", "/w", "/w/.git", "/home/u", "/srv", "/srv/data"};

LandlockPlan plan_for(const Spec& spec, int abi, const std::set<std::string>& files = {}, bool nested_mounts = false) {
    auto mounts = plan_mounts(spec, fake_host(kHostDirs, files));
    if (!mounts) FAIL("mount plan: " << mounts.error().what << ": " << mounts.error().why);
    return plan_landlock(spec, *mounts, abi, nested_mounts);
}

// The rights of the rule on exactly PATH (0 if none).
uint64_t rule_on(const LandlockPlan& plan, const std::string& path) {
    for (const auto& r : plan.rules) {
        if (r.path == path) return r.access;
    }
    return 0;
}

// The paths whose rules grant any of RIGHTS.
std::set<std::string> paths_with(const LandlockPlan& plan, uint64_t rights) {
    std::set<std::string> out;
    for (const auto& r : plan.rules) {
        if ((r.access & rights) != 0) out.insert(r.path);
    }
    return out;
}

// Whatever lets a process change the file system: write, create, remove, rename, truncate.
uint64_t changes(int abi) {
    return landlock_write_rights(abi);
}

// PATH may be written according to the plan: a rule at or above it grants WRITE_FILE.
bool writable(const LandlockPlan& plan, const std::string& path) {
    return std::any_of(plan.rules.begin(), plan.rules.end(), [&](const LandlockRule& r) {
        return (r.access & LANDLOCK_ACCESS_FS_WRITE_FILE) != 0 && path_at_or_under(path, r.path);
    });
}

const std::set<std::string> kDevices = {"/dev/null",    "/dev/zero", "/dev/full", "/dev/random",
                                        "/dev/urandom", "/dev/tty",  "/dev/pts"};

}  // namespace

TEST_CASE("landlock: the default jail writes only beneath its writable places", "[landlock]") {
    const LandlockPlan plan = plan_for(default_spec(), 7);
    REQUIRE(plan.enabled());
    CHECK(plan.abi == 7);
    CHECK(plan.unavailable.empty());
    // Read and execute on the jail's root: the mounts decide what it shows.
    CHECK(rule_on(plan, "/") ==
          (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_EXECUTE));
    // Write, create, remove, rename across directories and truncate: the workdir, the tmpfs
    // mounts, the private HOME and /dev/shm, all with the same rights (a rename between two of
    // them keeps its rights, which Landlock requires of REFER).
    const std::set<std::string> places = {"/w", "/tmp", "/var/tmp", "/run", "/home/u", "/dev/shm"};
    CHECK(paths_with(plan, changes(7) & ~LANDLOCK_ACCESS_FS_WRITE_FILE) == places);
    for (const auto& p : places) CHECK(rule_on(plan, p) == landlock_write_rights(7));
    // The devices the jail's /dev exposes: read, write and ioctl, nothing else.
    for (const auto& d : kDevices) {
        CHECK(rule_on(plan, d) ==
              (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_IOCTL_DEV));
    }
    std::set<std::string> write_file = places;
    write_file.insert(kDevices.begin(), kDevices.end());
    CHECK(paths_with(plan, LANDLOCK_ACCESS_FS_WRITE_FILE) == write_file);
    CHECK(paths_with(plan, LANDLOCK_ACCESS_FS_IOCTL_DEV) == kDevices);
    CHECK(plan.rules.size() == 1 + places.size() + kDevices.size());
    // Nothing under /proc: a host-global knob stays unwritable even should its mount not hold.
    CHECK_FALSE(writable(plan, "/proc/sys/kernel/core_pattern"));
    CHECK_FALSE(writable(plan, "/proc/self/attr/current"));
    CHECK_FALSE(writable(plan, "/proc/sysrq-trigger"));
    // The caller's streams keep the rights they were opened with; signals and abstract sockets
    // stay inside the jail.
    CHECK(plan.stdio);
    CHECK(plan.scoped == (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL));
    CHECK(plan.handled_fs == (1ULL << 16) - 1);
}

TEST_CASE("landlock: read-only paths never get write rights", "[landlock]") {
    Spec s = default_spec();
    s.ro.emplace_back("/srv/data");
    for (int abi : {2, 3, 5, 7}) {
        const LandlockPlan plan = plan_for(s, abi);
        for (const char* p : {"/", "/usr", "/usr/bin/sh", "/etc", "/etc/shadow", "/opt", "/srv/data", "/proc",
                              "/proc/sys", "/dev", "/home"}) {
            INFO("ABI " << abi << ", " << p);
            CHECK_FALSE(writable(plan, p));
            CHECK((rule_on(plan, p) & changes(abi)) == 0);
        }
        // A protected path in the workdir has no rule of its own: its read-only mount holds it.
        for (const auto& r : plan.rules) CHECK_FALSE(path_under(r.path, "/w"));
    }
    // A read-only workdir (the strict profile) is no writable place.
    s.workdir_readonly = true;
    CHECK_FALSE(writable(plan_for(s, 7), "/w/file"));
}

TEST_CASE("landlock: --rw paths and binds are writable, --ro-bind and --dir are not", "[landlock]") {
    Spec s = default_spec();
    s.rw = {"/srv/data", "/srv/notes.txt"};
    s.mount_requests = {{R::Bind, "/srv", "/mnt/rw"}, {R::RoBind, "/srv", "/mnt/ro"}, {R::Dir, "", "/mnt/dir"}};
    const LandlockPlan plan = plan_for(s, 7, {"/srv/notes.txt"});
    CHECK(rule_on(plan, "/srv/data") == landlock_write_rights(7));
    // A file gets the same rule; the child keeps the rights a file can carry.
    CHECK(rule_on(plan, "/srv/notes.txt") == landlock_write_rights(7));
    CHECK(rule_on(plan, "/mnt/rw") == landlock_write_rights(7));
    CHECK(rule_on(plan, "/mnt/ro") == 0);
    CHECK(rule_on(plan, "/mnt/dir") == 0);
    CHECK_FALSE(writable(plan, "/mnt/ro/x"));
    // --remount-ro takes back what an earlier bind made writable but writing, which a read-only
    // mount leaves to devices and fifos; a later bind is writable again.
    s.mount_requests = {{R::Bind, "/srv", "/mnt/rw"},
                        {R::DevBind, "/dev/fuse", "/mnt/rw/fuse"},
                        {R::RemountRo, "", "/mnt"},
                        {R::Bind, "/srv", "/mnt/later"}};
    const LandlockPlan remounted = plan_for(s, 7);
    CHECK(rule_on(remounted, "/mnt/rw") == LANDLOCK_ACCESS_FS_WRITE_FILE);
    CHECK(rule_on(remounted, "/mnt/rw/fuse") == (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_IOCTL_DEV));
    CHECK(rule_on(remounted, "/mnt/later") == landlock_write_rights(7));
    // The workdir given again as --rw: one rule.
    s.rw = {"/w"};
    const LandlockPlan again = plan_for(s, 7);
    CHECK(std::count_if(again.rules.begin(), again.rules.end(), [](const LandlockRule& r) { return r.path == "/w"; }) ==
          1);
}

TEST_CASE("landlock: --tmpfs mounts are writable, cordon's read-only config directory is not", "[landlock]") {
    Spec s = default_spec();
    s.tmpfs.emplace_back("/scratch");
    s.config_dir = "/home/u/.config/cordon";  // missing: an empty read-only tmpfs shows it
    const LandlockPlan plan = plan_for(s, 7);
    CHECK(rule_on(plan, "/scratch") == landlock_write_rights(7));
    CHECK(rule_on(plan, "/home/u/.config/cordon") == 0);
}

TEST_CASE("landlock: --workdir none leaves only the scratch places writable", "[landlock]") {
    Spec s = default_spec();
    s.workdir.reset();
    s.private_home = false;
    const LandlockPlan plan = plan_for(s, 7);
    CHECK(paths_with(plan, changes(7) & ~LANDLOCK_ACCESS_FS_WRITE_FILE) ==
          std::set<std::string>{"/tmp", "/var/tmp", "/run", "/dev/shm"});
    CHECK_FALSE(writable(plan, "/w"));
    CHECK_FALSE(writable(plan, "/home/u"));
}

TEST_CASE("landlock: devices: the jail's /dev, --dev and --dev-bind", "[landlock]") {
    Spec s = default_spec();
    s.mount_requests = {{R::Dev, "", "/dev2"}, {R::DevBind, "/dev/fuse", "/dev/fuse"}};
    const LandlockPlan plan = plan_for(s, 7);
    const uint64_t device = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_IOCTL_DEV;
    for (const char* node : {"null", "zero", "full", "random", "urandom", "tty", "pts"}) {
        CHECK(rule_on(plan, std::string("/dev/") + node) == device);
        CHECK(rule_on(plan, std::string("/dev2/") + node) == device);
    }
    CHECK(rule_on(plan, "/dev2/shm") == landlock_write_rights(7));
    // A device bind keeps its devices usable: what a writable bind gets, and ioctl.
    CHECK(rule_on(plan, "/dev/fuse") == (landlock_write_rights(7) | LANDLOCK_ACCESS_FS_IOCTL_DEV));
    // /dev itself, its read-only tmpfs, has no rule (ptmx is a symlink into pts).
    CHECK(rule_on(plan, "/dev") == 0);
    CHECK(rule_on(plan, "/dev/ptmx") == 0);
}

TEST_CASE("landlock: --no-profile: only what the primitives make writable", "[landlock]") {
    Spec s = default_spec();  // its profile's paths are ignored without a profile, as by the mount plan
    s.no_profile = true;
    s.mount_requests = {{R::RoBind, "/", "/"}, {R::Dev, "", "/dev"}, {R::Proc, "", "/proc"}, {R::Bind, "/w", "/w"}};
    const LandlockPlan plan = plan_for(s, 7);
    CHECK(rule_on(plan, "/") == landlock_read_rights());
    CHECK(paths_with(plan, changes(7) & ~LANDLOCK_ACCESS_FS_WRITE_FILE) == std::set<std::string>{"/dev/shm", "/w"});
    CHECK_FALSE(writable(plan, "/proc/sys/kernel/core_pattern"));
}

TEST_CASE("landlock: --allow-userns lets /proc be written for nested id maps", "[landlock]") {
    Spec s = default_spec();
    s.allow_userns = true;
    const LandlockPlan plan = plan_for(s, 7);
    // Writing only: nothing can be created or removed in a procfs anyway.
    CHECK(rule_on(plan, "/proc") == (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE));
    CHECK(writable(plan, "/proc/self/uid_map"));
    CHECK_FALSE(writable(plan, "/usr"));
    CHECK(rule_on(plan_for(s, 2), "/proc") == LANDLOCK_ACCESS_FS_WRITE_FILE);
}

TEST_CASE("landlock: what each ABI adds", "[landlock]") {
    const Spec s = default_spec();
    constexpr uint64_t kAbi1 = (1ULL << 13) - 1;  // EXECUTE to MAKE_SYM
    // ABI 1 refuses every rename across directories: the jail runs without Landlock there.
    const LandlockPlan one = plan_for(s, 1);
    CHECK_FALSE(one.enabled());
    CHECK(one.rules.empty());
    CHECK(one.unavailable.find("ABI 1") != std::string::npos);
    CHECK(landlock_handled_fs(1) == kAbi1);
    // ABI 2: renames and links across directories where the jail writes; nothing to truncate.
    const LandlockPlan two = plan_for(s, 2);
    REQUIRE(two.enabled());
    CHECK(two.handled_fs == (kAbi1 | LANDLOCK_ACCESS_FS_REFER));
    CHECK(rule_on(two, "/w") == ((kAbi1 | LANDLOCK_ACCESS_FS_REFER) & ~landlock_read_rights()));
    CHECK((rule_on(two, "/w") & LANDLOCK_ACCESS_FS_TRUNCATE) == 0);
    CHECK(rule_on(two, "/dev/null") == (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE));
    CHECK(two.scoped == 0);
    // ABI 3: truncate; ABI 4 adds only network rights, which the jail's own network namespace
    // makes unneeded.
    for (int abi : {3, 4}) {
        const LandlockPlan p = plan_for(s, abi);
        CHECK(p.abi == abi);
        CHECK(p.handled_fs == (kAbi1 | LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE));
        CHECK((rule_on(p, "/tmp") & LANDLOCK_ACCESS_FS_TRUNCATE) != 0);
        CHECK((rule_on(p, "/dev/tty") & LANDLOCK_ACCESS_FS_IOCTL_DEV) == 0);
        CHECK(p.scoped == 0);
    }
    // ABI 5: ioctl on devices, and only there.
    const LandlockPlan five = plan_for(s, 5);
    CHECK((five.handled_fs & LANDLOCK_ACCESS_FS_IOCTL_DEV) != 0);
    CHECK(paths_with(five, LANDLOCK_ACCESS_FS_IOCTL_DEV) == kDevices);
    CHECK(five.scoped == 0);
    // ABI 6: abstract unix sockets and signals scoped to the jail.
    CHECK(plan_for(s, 6).scoped == (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL));
    // A newer kernel is used at the newest ABI cordon knows.
    const LandlockPlan later = plan_for(s, kLandlockAbiKnown + 2);
    CHECK(later.abi == kLandlockAbiKnown);
    CHECK(later.rules.size() == plan_for(s, kLandlockAbiKnown).rules.size());
}

TEST_CASE("landlock: a kernel without it runs the jail without it, and says why", "[landlock]") {
    const Spec s = default_spec();
    for (int err : {ENOSYS, EOPNOTSUPP, EPERM}) {
        const LandlockPlan plan = plan_for(s, -err);
        CHECK_FALSE(plan.enabled());
        CHECK(plan.rules.empty());
        CHECK(plan.scoped == 0);
        CHECK_FALSE(plan.stdio);
        CHECK_FALSE(plan.unavailable.empty());
    }
    CHECK(landlock_unavailable(-ENOSYS) == "this kernel has no Landlock");
    CHECK(landlock_unavailable(-EOPNOTSUPP).find("not enabled at boot") != std::string::npos);
    CHECK(landlock_unavailable(-EPERM).find("landlock_create_ruleset") != std::string::npos);
    CHECK(landlock_unavailable(2).empty());
}

TEST_CASE("landlock: describe() gives --dry-run's lines", "[landlock]") {
    const auto lines = describe(plan_for(default_spec(), 7));
    REQUIRE(lines.size() == 5);
    CHECK(lines[0] == "ABI 7, a second wall behind the mounts; abstract unix sockets and signals scoped to the jail");
    CHECK(lines[1] == "read, execute: /");
    CHECK(lines[2].rfind("write, create, remove, rename across directories, truncate: ", 0) == 0);
    CHECK(lines[2].find(" /w") != std::string::npos);
    CHECK(lines[3] == "read, write, ioctl: /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty /dev/pts");
    CHECK(lines[4] == "as opened: the caller's stdin, stdout and stderr");
    const auto none = describe(plan_for(default_spec(), -ENOSYS));
    REQUIRE(none.size() == 1);
    CHECK(none[0] == "none (this kernel has no Landlock): the jail runs without this second wall");
}

TEST_CASE("landlock: a sandbox inside the jail that mounts keeps the scopes only", "[landlock]") {
    // The default syscall policy refuses mount(2); with --allow-userns it leaves propagation
    // changes, which Landlock refuses as it does any mount.
    CHECK_FALSE(seccomp_allows_mounts(default_seccomp(SeccompOptions{false, false, false}).rules));
    CHECK(seccomp_allows_mounts(default_seccomp(SeccompOptions{true, false, false}).rules));
    SeccompPolicy relaxed = default_seccomp(SeccompOptions{true, false, false});
    std::erase_if(relaxed.rules, [](const SyscallRule& r) { return r.syscall == "mount"; });
    CHECK(seccomp_allows_mounts(relaxed.rules));
    CHECK(seccomp_allows_mounts({}));  // base = "none" with nothing refused

    // A domain that handles file-system rights refuses mount(2) to every process in it.
    Spec s = default_spec();
    s.allow_userns = true;
    const LandlockPlan plan = plan_for(s, 7, {}, true);
    REQUIRE(plan.enabled());
    CHECK(plan.handled_fs == 0);
    CHECK(plan.rules.empty());
    CHECK_FALSE(plan.stdio);
    CHECK(plan.scoped == (LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL));
    CHECK(plan.no_fs.find("mount(2)") != std::string::npos);
    const auto lines = describe(plan);
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == "ABI 7; abstract unix sockets and signals scoped to the jail");
    CHECK(lines[1].rfind("no file-system rights (", 0) == 0);
    // Before ABI 6 nothing is left.
    const LandlockPlan five = plan_for(s, 5, {}, true);
    CHECK_FALSE(five.enabled());
    CHECK(five.unavailable.find("mount(2)") != std::string::npos);
}

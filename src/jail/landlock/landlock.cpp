#include "cordon/landlock.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <string_view>

#include "cordon/fd.hpp"
#include "cordon/paths.hpp"

namespace cordon {

namespace {

// struct landlock_ruleset_attr as of ABI 6; Debian 12's header has only its first field. An
// older kernel accepts it as long as the fields it does not know are zero.
struct RulesetAttr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

// The rights a rule on a file (not a directory) may carry.
constexpr uint64_t kFileRights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                                 LANDLOCK_ACCESS_FS_IOCTL_DEV;

// Adds RULE (or merges it into an earlier one on the same path).
void add_rule(std::vector<LandlockRule>& rules, std::string path, uint64_t access) {
    for (auto& r : rules) {
        if (r.path == path) {
            r.access |= access;
            return;
        }
    }
    rules.push_back(LandlockRule{std::move(path), access});
}

// The rules a mount op adds, beyond read and execute on the jail's root. Only writable places
// and devices get any: pins (writable binds of a directory on the way to a protected path, in
// the jail already) lie under a writable place.
void add_rules_for(const MountOp& op, const LandlockPlan& plan, const Spec& spec, std::vector<LandlockRule>& rules) {
    const uint64_t write = landlock_write_rights(plan.abi);
    const uint64_t device = landlock_device_rights(plan.abi);
    const std::string base = op.dest == "/" ? "" : op.dest;
    switch (op.kind) {
        case MountOp::Kind::Bind:
            if (!op.readonly && !op.in_jail) {
                add_rule(rules, op.dest, op.devices ? write | (device & LANDLOCK_ACCESS_FS_IOCTL_DEV) : write);
            }
            return;
        case MountOp::Kind::Tmpfs:
            if (!op.readonly) add_rule(rules, op.dest, write);
            return;
        case MountOp::Kind::Dev:
            for (const char* node : kDevNodes) add_rule(rules, base + "/" + node, device);
            add_rule(rules, base + "/pts", device);  // ptmx is a symlink into it
            add_rule(rules, base + "/shm", write);
            return;
        case MountOp::Kind::Proc:
            // Nested user namespaces need their id maps written (/proc/PID/uid_map, gid_map,
            // setgroups). Elsewhere nothing under /proc is written: its host-global knobs are
            // read-only mounts, and Landlock refuses them again should a mount not hold.
            if (spec.allow_userns) {
                add_rule(rules, op.dest,
                         LANDLOCK_ACCESS_FS_WRITE_FILE | (plan.abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0));
            }
            return;
        case MountOp::Kind::RemountRo:
            // What it covers was writable: nothing there can be created, removed, renamed or
            // truncated any more. Writing stays, for what a read-only mount leaves writable
            // (devices, fifos); its regular files' the mount refuses.
            for (auto& r : rules) {
                if (path_at_or_under(r.path, op.dest)) r.access &= ~(write & ~LANDLOCK_ACCESS_FS_WRITE_FILE);
            }
            return;
        default:
            return;
    }
}

// The names of RIGHTS, for --dry-run.
std::string rights_names(uint64_t rights) {
    const std::pair<uint64_t, const char*> names[] = {
        {LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR, "read"},
        {LANDLOCK_ACCESS_FS_EXECUTE, "execute"},
        {LANDLOCK_ACCESS_FS_WRITE_FILE, "write"},
        {LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_SYM, "create"},
        {LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR, "remove"},
        {LANDLOCK_ACCESS_FS_REFER, "rename across directories"},
        {LANDLOCK_ACCESS_FS_TRUNCATE, "truncate"},
        {LANDLOCK_ACCESS_FS_IOCTL_DEV, "ioctl"},
    };
    std::string out;
    for (const auto& [bits, name] : names) {
        if ((rights & bits) != 0) out += std::string(out.empty() ? "" : ", ") + name;
    }
    return out;
}

// One rule for a standard stream of the caller's: its file, with the rights it was opened with.
// Pipes and sockets need none (the kernel refuses a rule on them: EBADFD), nor does a closed
// stream; a directory gets none, or the jail could reach the host's files below it by name.
void add_stdio_rule(int ruleset, int fd, uint64_t handled) {
    const int flags = ::fcntl(fd, F_GETFL);
    struct stat st {};
    if (flags < 0 || (flags & O_PATH) != 0 || ::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) return;
    uint64_t access = 0;
    const int mode = flags & O_ACCMODE;
    if (mode == O_RDONLY || mode == O_RDWR) access |= LANDLOCK_ACCESS_FS_READ_FILE;
    if (mode == O_WRONLY || mode == O_RDWR) access |= LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;
    if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) access |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    struct landlock_path_beneath_attr rule {};
    rule.allowed_access = access & handled;
    rule.parent_fd = fd;
    if (rule.allowed_access != 0) (void)::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
}

// The file RULE names, as an O_PATH descriptor (-1 with errno). Beneath an anchor each component
// is opened in turn without following a symlink: one planted there names nothing.
int open_rule_path(const LandlockRule& rule) {
    if (rule.anchor.empty()) return ::open(rule.path.c_str(), O_PATH | O_CLOEXEC);
    UniqueFd fd(::open(rule.anchor.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    const std::string_view rel = std::string_view(rule.path).substr(rule.anchor.size());
    for (const auto& name : path_components(rel)) {
        if (!fd) return -1;
        const std::string component(name);
        fd.reset(::openat(fd.get(), component.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
        struct stat st {};
        if (fd && ::fstat(fd.get(), &st) == 0 && S_ISLNK(st.st_mode)) {
            errno = ENOENT;  // as if missing: the rule is left out
            return -1;
        }
    }
    return fd.release();
}

}  // namespace

int landlock_abi() {
    const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi > 0 ? static_cast<int>(abi) : -(errno != 0 ? errno : ENOSYS);
}

std::string landlock_unavailable(int abi) {
    if (abi >= 2) return "";
    if (abi == 1) {
        return "this kernel offers Landlock ABI 1, whose rulesets refuse every rename and link across directories; "
               "the jail needs ABI 2 (Linux 5.19)";
    }
    if (abi == -EOPNOTSUPP) return "Landlock is built into this kernel but not enabled at boot";
    if (abi == -ENOSYS || abi == 0) return "this kernel has no Landlock";
    return std::string("landlock_create_ruleset: ") + std::strerror(-abi);
}

uint64_t landlock_handled_fs(int abi) {
    uint64_t handled = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;  // ABI 1: bits 0 to 12
    if (abi >= 2) handled |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5) handled |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    return handled;
}

uint64_t landlock_write_rights(int abi) {
    // Device nodes cannot be made in a user namespace, and the jail's writable mounts are
    // nodev: MAKE_CHAR and MAKE_BLOCK are granted with the rest rather than told apart.
    return landlock_handled_fs(abi) & ~(landlock_read_rights() | LANDLOCK_ACCESS_FS_IOCTL_DEV);
}

uint64_t landlock_device_rights(int abi) {
    return landlock_handled_fs(abi) &
           (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_IOCTL_DEV);
}

uint64_t landlock_read_rights() {
    return LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_EXECUTE;
}

bool seccomp_allows_mounts(const std::vector<SyscallRule>& rules) {
    auto refused = [&](std::string_view call) {
        return std::any_of(rules.begin(), rules.end(), [&](const SyscallRule& r) {
            return r.syscall == call && r.action != SyscallRule::Action::Allow && r.conds.empty();
        });
    };
    return !refused("mount") || !refused("move_mount");
}

LandlockPlan plan_landlock(const Spec& spec, const MountPlan& mounts, int abi, bool nested_mounts) {
    LandlockPlan plan;
    plan.unavailable = landlock_unavailable(abi);
    if (plan.unavailable.empty() && nested_mounts && abi < 6) {
        plan.unavailable =
            "--allow-userns with a syscall policy that allows mount(2), which Landlock refuses, and "
            "no scopes before ABI 6";
    }
    if (!plan.unavailable.empty()) return plan;
    plan.abi = std::min(abi, kLandlockAbiKnown);
    if (plan.abi >= 6) plan.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
    if (nested_mounts) {
        plan.no_fs = "--allow-userns with a syscall policy that allows mount(2), which Landlock refuses";
        return plan;
    }
    plan.handled_fs = landlock_handled_fs(plan.abi);
    plan.stdio = true;
    // Everything the jail shows may be read and executed: the mounts decide what it shows.
    add_rule(plan.rules, "/", landlock_read_rights());
    for (const MountOp& op : mounts.ops) add_rules_for(op, plan, spec, plan.rules);
    return plan;
}

std::vector<std::string> describe(const LandlockPlan& plan) {
    if (!plan.enabled()) return {"none (" + plan.unavailable + "): the jail runs without this second wall"};
    std::string head =
        "ABI " + std::to_string(plan.abi) + (plan.handled_fs != 0 ? ", a second wall behind the mounts" : "");
    if (plan.scoped != 0) head += "; abstract unix sockets and signals scoped to the jail";
    std::vector<std::string> lines = {head};
    if (!plan.no_fs.empty()) lines.push_back("no file-system rights (" + plan.no_fs + ")");
    // One line per set of rights, in the order the rules come.
    std::vector<uint64_t> seen;
    for (const auto& rule : plan.rules) {
        if (std::find(seen.begin(), seen.end(), rule.access) != seen.end()) continue;
        seen.push_back(rule.access);
        std::string line = rights_names(rule.access) + ":";
        for (const auto& r : plan.rules) {
            if (r.access == rule.access) line += " " + r.path;
        }
        lines.push_back(line);
    }
    if (plan.stdio) lines.emplace_back("as opened: the caller's stdin, stdout and stderr");
    return lines;
}

int build_landlock_ruleset(const LandlockPlan& plan, int& ruleset_fd, char* step, size_t step_len) {
    ruleset_fd = -1;
    if (!plan.enabled()) return 0;
    const RulesetAttr attr{plan.handled_fs, plan.handled_net, plan.scoped};
    UniqueFd ruleset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0)));
    if (!ruleset) {
        std::snprintf(step, step_len, "create the Landlock ruleset (ABI %d)", plan.abi);
        return -1;
    }
    // The rules' descriptors are closed a batch at a time, one close_range per run of
    // consecutive numbers (they are consecutive but for the few already open): a rule per entry
    // of /etc makes hundreds of them, and each system call counts at start-up.
    int batch[64];
    size_t held = 0;
    auto close_batch = [&] {
        for (size_t first = 0, last = 0; first < held; first = last + 1) {
            last = first;
            while (last + 1 < held && batch[last + 1] == batch[last] + 1) ++last;
            // Linux < 5.9 has no close_range: one at a time there.
            if (last == first ||
                ::close_range(static_cast<unsigned>(batch[first]), static_cast<unsigned>(batch[last]), 0) != 0) {
                for (size_t k = first; k <= last; ++k) ::close(batch[k]);
            }
        }
        held = 0;
    };
    for (const auto& r : plan.rules) {
        UniqueFd fd(open_rule_path(r));
        if (!fd && errno == EMFILE && held > 0) {  // a low RLIMIT_NOFILE: the batch gives way
            close_batch();
            fd.reset(open_rule_path(r));
        }
        if (!fd && errno == ENOENT) continue;  // a device this host lacks (tty), a -try bind
        struct landlock_path_beneath_attr rule {};
        // A file gets only the rights that make sense for one: at once where the plan knows it is
        // one, else when the kernel refuses a directory's rights (EINVAL) and it is not one.
        rule.allowed_access = r.file ? r.access & kFileRights : r.access;
        rule.parent_fd = fd.get();
        auto add = [&] {
            return ::syscall(SYS_landlock_add_rule, ruleset.get(), LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
        };
        bool added = fd && add() == 0;
        if (struct stat st{}; fd && !added && errno == EINVAL && ::fstat(fd.get(), &st) == 0 && !S_ISDIR(st.st_mode)) {
            rule.allowed_access &= kFileRights;
            added = add() == 0;
        }
        if (!added) {
            close_batch();
            std::snprintf(step, step_len, "add the Landlock rule for %s", r.path.c_str());
            return -1;
        }
        batch[held++] = fd.release();
        if (held == std::size(batch)) close_batch();
    }
    close_batch();
    if (plan.stdio) {
        for (int fd : {0, 1, 2}) add_stdio_rule(ruleset.get(), fd, plan.handled_fs);
    }
    ruleset_fd = ruleset.release();
    return 0;
}

int enforce_landlock(int ruleset_fd) {
    return static_cast<int>(::syscall(SYS_landlock_restrict_self, ruleset_fd, 0));
}

}  // namespace cordon

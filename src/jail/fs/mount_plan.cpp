#include "cordon/mount_plan.hpp"

#include "cordon/fd.hpp"
#include "cordon/paths.hpp"
#include "mount_planner.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <memory>
#include <tuple>

namespace cordon {

HostFs real_host_fs() {
    HostFs fs;
    fs.type = [](const std::string& p) {
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) return HostFs::Type::Missing;
        if (S_ISLNK(st.st_mode)) return HostFs::Type::Symlink;
        if (is_placeholder_mode(st.st_mode)) return HostFs::Type::Placeholder;
        if (S_ISDIR(st.st_mode)) return HostFs::Type::Dir;
        if (S_ISREG(st.st_mode)) return HostFs::Type::File;
        return HostFs::Type::Other;
    };
    fs.readlink = [](const std::string& p) {
        char buf[PATH_MAX];
        ssize_t n = ::readlink(p.c_str(), buf, sizeof buf - 1);
        return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
    };
    fs.read = [](const std::string& p) {
        UniqueFd fd(::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        std::string out;
        char buf[4096];
        for (ssize_t n = 0; fd && out.size() < (64 << 10) && (n = ::read(fd.get(), buf, sizeof buf)) > 0;)
            out.append(buf, static_cast<size_t>(n));
        return out;
    };
    fs.entries = [](const std::string& dir) {
        std::vector<std::pair<std::string, HostFs::Type>> out;
        UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        alignas(8) char buf[8192];
        for (long n = 0; fd && (n = ::syscall(SYS_getdents64, fd.get(), buf, sizeof buf)) > 0;) {
            for (long off = 0; off < n;) {
                const auto* d = reinterpret_cast<const struct dirent64*>(buf + off);
                HostFs::Type type = HostFs::Type::Missing;  // DT_UNKNOWN: this file system does not say
                if (d->d_type == DT_DIR) type = HostFs::Type::Dir;
                if (d->d_type == DT_REG) type = HostFs::Type::File;
                if (d->d_type == DT_LNK) type = HostFs::Type::Symlink;
                if (d->d_type != DT_UNKNOWN && type == HostFs::Type::Missing) type = HostFs::Type::Other;
                out.emplace_back(d->d_name, type);
                off += d->d_reclen;
            }
        }
        std::sort(out.begin(), out.end());
        return out;
    };
    fs.list = [entries = fs.entries](const std::string& dir) {
        std::vector<std::string> names;
        for (auto& [name, type] : entries(dir)) names.push_back(std::move(name));
        return names;
    };
    fs.glob = [](const std::string& pattern) {
        std::vector<std::string> out;
        glob_t g{};
        if (::glob(pattern.c_str(), GLOB_NOSORT, nullptr, &g) == 0) {
            for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
        }
        ::globfree(&g);
        std::sort(out.begin(), out.end());
        return out;
    };
    return fs;
}

bool is_placeholder_mode(mode_t m) {
    return (S_ISDIR(m) && (m & 07777) == kPlaceholderDirMode) || (S_ISREG(m) && (m & 07777) == kPlaceholderFileMode);
}

// Why each entry is there (cordon(1), THE JAIL'S /proc):
//   read-only  host-global knobs: sysctls (all of them: kernel, vm, fs, and with --net host the
//              host's net), pressure triggers (world-writable), the SysRq trigger, IRQ affinity,
//              PCI config space, /proc/fs (nfsd's and other filesystems' controls), drivers'
//              files, MTRR ranges;
//   masked     host-wide information: every timer of every host process (timer_list,
//              timer_stats), the scheduler's view of host tasks (sched_debug), and for a jail
//              whose uid is the host's uid 0: kernel memory (kcore), the kernel keyrings'
//              descriptions (keys, key-users), latency records, physical page flags and counts
//              (kpage*), and the ACPI, SCSI and sound controls.
// The same list as bubblewrap's (sys, sysrq-trigger, irq, bus) plus container runtimes'
// masked and read-only paths, and the rest of /proc that uid 0 can write.
// Entries that are root's and neither world-writable nor world-readable are out of reach of a
// jail that is not host root (an unprivileged caller's, a remapped root caller's) anyway.
const std::vector<ProcEntry>& proc_protection() {
    using A = ProcEntry::Action;
    static const std::vector<ProcEntry> entries = {
        {"sys", A::ReadOnly, false},         {"pressure", A::ReadOnly, false},    {"timer_list", A::MaskFile, false},
        {"timer_stats", A::MaskFile, false}, {"sched_debug", A::MaskFile, false}, {"sysrq-trigger", A::ReadOnly, true},
        {"irq", A::ReadOnly, true},          {"bus", A::ReadOnly, true},          {"fs", A::ReadOnly, true},
        {"driver", A::ReadOnly, true},       {"mtrr", A::ReadOnly, true},         {"kcore", A::MaskFile, true},
        {"keys", A::MaskFile, true},         {"key-users", A::MaskFile, true},    {"latency_stats", A::MaskFile, true},
        {"kpagecount", A::MaskFile, true},   {"kpageflags", A::MaskFile, true},   {"kpagecgroup", A::MaskFile, true},
        {"acpi", A::MaskDir, true},          {"scsi", A::MaskDir, true},          {"asound", A::MaskDir, true},
    };
    return entries;
}

namespace mount_planner {

namespace {

// The ops that protect a fresh proc mounted on DEST, in the order they are applied (each
// skipped when this kernel lacks the entry).
void add_proc_protection(const std::string& dest, const std::string& why, bool root_caller,
                         const std::function<void(MountOp)>& add) {
    const std::string base = dest == "/" ? "" : dest;
    for (const ProcEntry& e : proc_protection()) {
        if (e.host_root_only && !root_caller) continue;  // only a root caller's jail can be host root
        add(MountOp{.kind = e.action == ProcEntry::Action::ReadOnly   ? K::RebindRo
                            : e.action == ProcEntry::Action::MaskFile ? K::HideFile
                                                                      : K::HideDir,
                    .dest = base + "/" + e.name,
                    .readonly = true,
                    .optional = true,
                    .why = why,
                    .host_root_only = e.host_root_only});
    }
}

}  // namespace

size_t depth(const std::string& path) {
    return path == "/" ? 0 : static_cast<size_t>(std::count(path.begin(), path.end(), '/'));
}

bool has_wildcard(std::string_view s) {
    return s.find_first_of("*?[") != std::string_view::npos;
}

// The host's answers, each asked once (many entries share a path: .git, .git/worktrees/*).
HostFs caching(const HostFs& host) {
    HostFs fs = host;
    auto types = std::make_shared<std::vector<std::pair<std::string, HostFs::Type>>>();
    fs.type = [types, &host](const std::string& p) {
        for (const auto& [path, t] : *types) {
            if (path == p) return t;
        }
        HostFs::Type t = host.type(p);
        types->emplace_back(p, t);
        return t;
    };
    auto globs = std::make_shared<std::vector<std::pair<std::string, std::vector<std::string>>>>();
    fs.glob = [globs, &host, fs_type = fs.type](const std::string& pattern) {
        for (const auto& [p, matches] : *globs) {
            if (p == pattern) return matches;
        }
        // A plain path needs no glob: it matches itself if it exists.
        std::vector<std::string> matches;
        if (has_wildcard(pattern))
            matches = host.glob(pattern);
        else if (fs_type(pattern) != HostFs::Type::Missing)
            matches.push_back(pattern);
        globs->emplace_back(pattern, matches);
        return matches;
    };
    return fs;
}

void Planner::plan_workdir() {
    if (!spec_.workdir) return;
    // The workdir is a real path: a symlink on it now is another process's swap since the
    // checks that chose it (a root caller's owner idmap, root_remap.hpp), not to be followed.
    add(Rank::Workdir, MountOp{.kind = K::Bind,
                               .source = *spec_.workdir,
                               .dest = *spec_.workdir,
                               .readonly = spec_.workdir_readonly,
                               .no_symlinks = true,
                               .why = spec_.workdir_readonly ? "workdir, read-only" : "workdir"});
    plan_workdir_git();
}

// The git directories outside the workdir that its .git file leads to (cordon(1), GIT
// WORKTREES), read-only: git reads the repository there, and writes nothing. Writable, they
// would let the command plant what RepoWatch, which judges the workdir, never sees: a symlinked
// reflog the host's git appends to, a todo list or a merge strategy it runs on --continue, a
// config.worktree that a later sparse checkout turns on.
void Planner::plan_workdir_git() {
    const std::string& gitdir = spec_.workdir_gitdir;
    const std::string& common = spec_.workdir_commondir;
    if (gitdir.empty()) return;
    auto bind = [&](const std::string& path) {
        add(Rank::Workdir, MountOp{.kind = K::Bind,
                                   .source = path,
                                   .dest = path,
                                   .readonly = true,
                                   .no_symlinks = true,
                                   .why = "workdir's git directory, read-only"});
    };
    if (!common.empty()) bind(common);
    if (common.empty() || !path_at_or_under(gitdir, common)) bind(gitdir);
}

// The directories the jail makes on the way to the workdir inside a fresh tmpfs of its own
// (/tmp/a/b for a workdir /tmp/a/b/repo, ~/src for ~/src/proj): mode 0555. What the command
// would write there, beside the workdir (`git worktree add ../wt`), is lost when the run ends;
// it fails instead. A guard against that mistake, not a wall: the jail owns them, and a chmod
// makes them writable again. The tmpfs's own top (/tmp, HOME) stays writable, and so do a
// directory a host path holds and one that is TMPDIR or holds it.
void Planner::plan_workdir_parents() {
    if (!spec_.workdir) return;
    const std::string& wd = *spec_.workdir;
    const Ranked* holder = nullptr;  // the op applied last above the workdir: it makes its parent
    for (const Ranked& r : ranked_) {
        if (!path_under(wd, r.op.dest)) continue;
        if (holder == nullptr || std::tie(r.depth, r.rank, r.seq) > std::tie(holder->depth, holder->rank, holder->seq))
            holder = &r;
    }
    if (holder == nullptr || holder->op.kind != K::Tmpfs) return;
    const std::string top = holder->op.dest;
    std::string tmpdir;
    for (const std::string& kv : spec_.env) {
        if (kv.rfind("TMPDIR=", 0) == 0) tmpdir = normalize_path(kv.substr(7), "/");
    }
    for (std::string d(path_parent(wd)); path_under(d, top); d = std::string(path_parent(d))) {
        if (!tmpdir.empty() && path_at_or_under(tmpdir, d) && !path_at_or_under(tmpdir, wd)) continue;
        add(Rank::Workdir, MountOp{.kind = K::Dir, .dest = d, .mode = 0555, .why = "on the way to the workdir"});
    }
}

void Planner::plan_fresh_filesystems() {
    for (const auto& path : spec_.tmpfs) {
        add(Rank::Fresh,
            MountOp{.kind = K::Tmpfs, .dest = path, .size = spec_.tmpfs_size, .mode = 01777, .why = "tmpfs"});
    }
    if (spec_.private_home && !spec_.home.empty() && spec_.home != "/" && spec_.workdir != spec_.home) {
        add(Rank::Fresh,
            MountOp{
                .kind = K::Tmpfs, .dest = spec_.home, .size = spec_.tmpfs_size, .mode = 0700, .why = "private HOME"});
    }
    add(Rank::Fresh, MountOp{.kind = K::Proc, .dest = "/proc", .why = "proc"});
    add_proc_protection("/proc", "proc", spec_.host_uid == 0, [&](MountOp op) { add(Rank::Fresh, std::move(op)); });
    add(Rank::Fresh, MountOp{.kind = K::Dev, .dest = "/dev", .why = "dev"});
}

void Planner::plan_host_paths() {
    for (const auto& path : spec_.ro) expose(path, true, "--ro");
    for (const auto& path : spec_.rw) expose(path, false, "--rw");
}

void Planner::expose(const std::string& path, bool readonly, const char* why) {
    switch (fs_.type(path)) {
        case HostFs::Type::Missing:
            return;  // profile entries are optional; command-line ones were checked
        case HostFs::Type::Symlink:
            // Merged-/usr systems: /bin -> usr/bin. Recreate the link, do not follow it.
            add(Rank::HostPaths, MountOp{.kind = K::Symlink, .source = fs_.readlink(path), .dest = path, .why = why});
            return;
        default:
            add(Rank::HostPaths,
                MountOp{
                    .kind = K::Bind, .source = path, .dest = path, .readonly = readonly, .optional = true, .why = why});
    }
}

void Planner::plan_hides() {
    for (const auto& pattern : spec_.hide) {
        for (auto& path : fs_.glob(pattern)) {
            hidden_.push_back(path);
            auto t = fs_.type(path);
            if (t == HostFs::Type::Dir) {
                add(Rank::Hides, MountOp{.kind = K::HideDir, .dest = path, .readonly = true, .why = "--hide"});
            } else if (t != HostFs::Type::Missing) {
                add(Rank::Hides, MountOp{.kind = K::HideFile, .dest = path, .readonly = true, .why = "--hide"});
            }
        }
    }
}

// Into the plan's ops, in their order. Two protections of the same path (e.g. listed twice) are
// harmless but noisy: one is kept. Equal ops have the same depth and rank, so they sit in the
// same run of the sorted list.
void Planner::order_ranked() {
    std::stable_sort(ranked_.begin(), ranked_.end(), [](const Ranked& a, const Ranked& b) {
        if (a.depth != b.depth) return a.depth < b.depth;
        if (a.rank != b.rank) return a.rank < b.rank;
        return a.seq < b.seq;
    });
    size_t run_start = 0;
    for (size_t i = 0; i < ranked_.size(); ++i) {
        auto& r = ranked_[i];
        if (i > 0 && (r.depth != ranked_[i - 1].depth || r.rank != ranked_[i - 1].rank)) run_start = plan_.ops.size();
        bool dup =
            std::any_of(plan_.ops.begin() + static_cast<long>(run_start), plan_.ops.end(), [&](const MountOp& o) {
                return o.kind == r.op.kind && o.dest == r.op.dest && o.source == r.op.source &&
                       o.readonly == r.op.readonly;
            });
        if (!dup) plan_.ops.push_back(std::move(r.op));
    }
}

// A bwrap-style primitive: after everything else, in the command line's order.
void Planner::plan_mount_request(const MountRequest& req) {
    using R = MountRequest::Kind;
    std::string why = "--" + mount_request_option(req);
    switch (req.kind) {
        case R::Bind:
        case R::RoBind:
        case R::DevBind:
            plan_.ops.push_back(MountOp{.kind = K::Bind,
                                        .source = req.source,
                                        .dest = req.dest,
                                        .readonly = req.kind == R::RoBind,
                                        .devices = req.kind == R::DevBind,
                                        .optional = req.optional,
                                        .why = why});
            break;
        case R::Proc:
            plan_.ops.push_back(MountOp{.kind = K::Proc, .dest = req.dest, .why = why});
            add_proc_protection(req.dest, why, spec_.host_uid == 0,
                                [&](MountOp o) { plan_.ops.push_back(std::move(o)); });
            break;
        case R::Dev:
            plan_.ops.push_back(MountOp{.kind = K::Dev, .dest = req.dest, .why = why});
            break;
        case R::Dir:
            plan_.ops.push_back(MountOp{.kind = K::Dir, .dest = req.dest, .mode = req.mode.value_or(0755), .why = why});
            break;
        case R::Tmpfs:
            plan_.ops.push_back(MountOp{.kind = K::Tmpfs,
                                        .dest = req.dest,
                                        .size = spec_.tmpfs_size,
                                        .mode = req.mode.value_or(0755),
                                        .why = why});
            break;
        case R::Perms:  // folded into the op after it by the spec builder
            break;
        case R::Symlink:
            plan_.ops.push_back(MountOp{.kind = K::Symlink, .source = req.source, .dest = req.dest, .why = why});
            break;
        case R::RemountRo:
            plan_.ops.push_back(MountOp{.kind = K::RemountRo, .dest = req.dest, .readonly = true, .why = why});
            break;
    }
}

void Planner::find_handoff() {
    for (size_t i = 0; i < plan_.ops.size(); ++i) {
        const std::string& source = plan_.ops[i].source;
        if (std::any_of(plan_.placeholders.begin(), plan_.placeholders.end(),
                        [&](const Placeholder& ph) { return ph.path == source; })) {
            plan_.handoff = i;
            return;
        }
    }
}

}  // namespace mount_planner

// With a profile, the jail's root is built from the profile's entries, ordered by depth and rank
// (Rank); --no-profile leaves only the bwrap-style primitives, which come last either way.
Result<MountPlan> plan_mounts(const Spec& spec, const HostFs& host) {
    mount_planner::Planner planner(spec, host);
    if (!spec.no_profile) {
        planner.plan_workdir();
        planner.plan_fresh_filesystems();
        planner.plan_host_paths();
        planner.plan_hides();
        planner.plan_protected_paths();
        planner.plan_workdir_parents();
    }
    planner.order_ranked();
    for (const MountRequest& req : spec.mount_requests) planner.plan_mount_request(req);
    planner.find_handoff();
    return planner.take();
}

std::string describe(const MountOp& op) {
    using K = MountOp::Kind;
    std::string s;
    switch (op.kind) {
        case K::Bind:
            s = std::string(op.readonly ? "ro-bind " : (op.devices ? "dev-bind " : "bind ")) + op.source + " -> " +
                op.dest;
            break;
        case K::Tmpfs:
            s = std::string(op.readonly ? "ro-tmpfs " : "tmpfs ") + op.dest + " (size " +
                (op.size >= (1 << 20) ? std::to_string(op.size >> 20) + "M)" : std::to_string(op.size >> 10) + "K)");
            break;
        case K::Proc:
            s = "proc " + op.dest;
            break;
        case K::Dev:
            s = "dev " + op.dest;
            break;
        case K::Dir:
            s = "dir " + op.dest;
            break;
        case K::Symlink:
            s = "symlink " + op.dest + " -> " + op.source;
            break;
        case K::RemountRo:
            s = "remount-ro " + op.dest;
            break;
        case K::HideFile:
            s = "hide-file " + op.dest;
            break;
        case K::HideDir:
            s = "hide-dir " + op.dest;
            break;
        case K::RebindRo:
            s = "read-only " + op.dest;
            break;
    }
    if (op.optional && op.kind != K::Tmpfs) s += " (if it exists)";
    if (op.host_root_only) s += " (if the jail is host root)";
    return s + "  [" + op.why + "]";
}

}  // namespace cordon

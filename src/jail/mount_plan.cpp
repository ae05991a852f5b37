#include "cordon/mount_plan.hpp"

#include "cordon/fd.hpp"
#include "cordon/paths.hpp"

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
    fs.list = [](const std::string& dir) {
        std::vector<std::string> names;
        UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        alignas(8) char buf[8192];
        for (long n = 0; fd && (n = ::syscall(SYS_getdents64, fd.get(), buf, sizeof buf)) > 0;) {
            for (long off = 0; off < n;) {
                const auto* d = reinterpret_cast<const struct dirent64*>(buf + off);
                names.emplace_back(d->d_name);
                off += d->d_reclen;
            }
        }
        std::sort(names.begin(), names.end());
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
// masked and read-only paths, and what a walk of /proc on Linux 6.18 found writable by uid 0.
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

namespace {

// The ops that protect a fresh proc mounted on DEST, in the order they are applied (each
// skipped when this kernel lacks the entry).
void add_proc_protection(const std::string& dest, const std::string& why, bool root_caller,
                         const std::function<void(MountOp)>& add) {
    const std::string base = dest == "/" ? "" : dest;
    for (const ProcEntry& e : proc_protection()) {
        if (e.host_root_only && !root_caller) continue;  // only a root caller's jail can be host root
        MountOp op;
        op.kind = e.action == ProcEntry::Action::ReadOnly   ? MountOp::Kind::RebindRo
                  : e.action == ProcEntry::Action::MaskFile ? MountOp::Kind::HideFile
                                                            : MountOp::Kind::HideDir;
        op.dest = base + "/" + e.name;
        op.readonly = true;
        op.optional = true;
        op.mode = e.action == ProcEntry::Action::MaskDir ? 0755 : 0;
        op.why = why;
        op.host_root_only = e.host_root_only;
        add(std::move(op));
    }
}

size_t depth(const std::string& path) {
    return path == "/" ? 0 : static_cast<size_t>(std::count(path.begin(), path.end(), '/'));
}

// Ops from profiles and --ro/--rw/--tmpfs/--hide are sorted so that a parent is always mounted
// before anything below it (depth first), then by rank (workdir < tmpfs < binds < hides <
// protection), then
// in the order given. bwrap-style primitives keep the command line's order and come last.
struct Ranked {
    size_t depth;
    int rank;
    size_t seq;
    MountOp op;
};

}  // namespace

Result<MountPlan> plan_mounts(const Spec& spec, const HostFs& host) {
    // The host's answers, each asked once (many entries share a path: .git, .git/worktrees/*).
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
        if (pattern.find_first_of("*?[") != std::string::npos)
            matches = host.glob(pattern);
        else if (fs_type(pattern) != HostFs::Type::Missing)
            matches.push_back(pattern);
        globs->emplace_back(pattern, matches);
        return matches;
    };
    MountPlan plan;
    std::vector<Ranked> ranked;
    auto add = [&](int rank, MountOp op) {
        size_t d = depth(op.dest);
        ranked.push_back(Ranked{d, rank, ranked.size(), std::move(op)});
    };

    if (!spec.no_profile) {
        // The workdir goes first among mounts on the same path, so an explicit --tmpfs or --ro of
        // the workdir itself wins over it.
        if (spec.workdir) {
            add(0, MountOp{MountOp::Kind::Bind, *spec.workdir, *spec.workdir, spec.workdir_readonly, false, false,
                           false, 0, 0, spec.workdir_readonly ? "workdir, read-only" : "workdir"});
        }
        for (const auto& path : spec.tmpfs) {
            add(1,
                MountOp{MountOp::Kind::Tmpfs, "", path, false, false, false, false, spec.tmpfs_size, 01777, "tmpfs"});
        }
        if (spec.private_home && !spec.home.empty() && spec.home != "/" && spec.workdir != spec.home) {
            add(1, MountOp{MountOp::Kind::Tmpfs, "", spec.home, false, false, false, false, spec.tmpfs_size, 0700,
                           "private HOME"});
        }
        auto expose = [&](const std::string& path, bool readonly, const char* why) {
            switch (fs.type(path)) {
                case HostFs::Type::Missing:
                    return;  // profile entries are optional; command-line ones were checked
                case HostFs::Type::Symlink:
                    // Merged-/usr systems: /bin -> usr/bin. Recreate the link, do not follow it.
                    add(2, MountOp{MountOp::Kind::Symlink, fs.readlink(path), path, false, false, false, false, 0, 0777,
                                   why});
                    return;
                default:
                    add(2, MountOp{MountOp::Kind::Bind, path, path, readonly, false, true, false, 0, 0, why});
            }
        };
        for (const auto& path : spec.ro) expose(path, true, "--ro");
        for (const auto& path : spec.rw) expose(path, false, "--rw");
        std::vector<std::string> hidden;  // what the hide patterns matched
        for (const auto& pattern : spec.hide) {
            for (auto& path : fs.glob(pattern)) {
                hidden.push_back(path);
                auto t = fs.type(path);
                if (t == HostFs::Type::Dir) {
                    add(3, MountOp{MountOp::Kind::HideDir, "", path, true, false, false, false, 0, 0755, "--hide"});
                } else if (t != HostFs::Type::Missing) {
                    add(3, MountOp{MountOp::Kind::HideFile, "", path, true, false, false, false, 0, 0, "--hide"});
                }
            }
        }
        // Protected paths: every existing directory on the way to one is pinned (bound onto
        // itself) so it cannot be renamed away and recreated; the path itself is bound read-only.
        // Missing parts become placeholders that the supervisor creates and removes.
        struct Protected {
            std::string base;   // a host directory the jail can write
            std::string entry;  // relative to base; a trailing '/' means a directory
            bool only_existing;
        };
        std::vector<Protected> entries;
        if (spec.workdir && !spec.workdir_readonly) {
            for (const auto& e : spec.protect) entries.push_back({*spec.workdir, e, false});
            for (const auto& e : spec.protect_existing) entries.push_back({*spec.workdir, e, true});
        }
        // cordon's own configuration must never be writable from inside, or a payload could plant
        // a profile or policy that a later run trusts. Inside a writable tree it is protected like
        // the entries above; elsewhere it is shown read-only (or as an empty read-only directory).
        // The same for its cache and its private directory in /tmp (pools of placeholder
        // directories, which a later run renames into a project; lock files), where they are
        // writable; elsewhere the jail cannot change them.
        std::vector<std::string> writable = spec.rw;
        if (spec.workdir && !spec.workdir_readonly) writable.push_back(*spec.workdir);
        // A writable "/" is no base: entries are named BASE + "/" + ENTRY below.
        auto writable_base = [&](const std::string& dir) {
            std::string base;
            for (const auto& w : writable) {
                if (w.size() > base.size() && w != "/" && path_under(dir, w)) base = w;
            }
            return base;
        };
        for (const std::string* own : {&spec.cache_dir, &spec.private_tmp}) {
            if (own->empty()) continue;
            if (std::string base = writable_base(*own); !base.empty()) {
                entries.push_back({base, own->substr(base.size() + 1) + "/", false});
            }
        }
        if (!spec.config_dir.empty()) {
            std::string base = writable_base(spec.config_dir);
            if (!base.empty()) {
                entries.push_back({base, spec.config_dir.substr(base.size() + 1) + "/", false});
            } else if (fs.type(spec.config_dir) == HostFs::Type::Dir) {
                add(4, MountOp{MountOp::Kind::Bind, spec.config_dir, spec.config_dir, true, false, false, false, 0, 0,
                               "cordon config"});
            } else {
                add(4, MountOp{MountOp::Kind::Tmpfs, "", spec.config_dir, true, false, false, false, 4096, 0755,
                               "cordon config"});
            }
        }
        // A protected entry below something that covers it in the jail (a tmpfs, a hidden or
        // read-only path at or below its writable tree) is not the host's there: nothing to do.
        // A cover at the base itself counts only where it is mounted on top of the base: over the
        // workdir (mounted first among equals) anything does, over an --rw path only a hide.
        auto covered = [&](const std::string& base, const std::string& path) {
            const bool base_first = spec.workdir && base == *spec.workdir;
            auto covers_if = [&](bool at_base_too) {
                return [&, at_base_too](const std::string& c) {
                    return (c == base ? at_base_too : path_at_or_under(c, base)) && path_at_or_under(path, c);
                };
            };
            return std::any_of(spec.tmpfs.begin(), spec.tmpfs.end(), covers_if(base_first)) ||
                   std::any_of(spec.ro.begin(), spec.ro.end(), covers_if(base_first)) ||
                   std::any_of(hidden.begin(), hidden.end(), covers_if(true));
        };
        // Entries with wildcards name the directories they are in by pattern
        // (.git/worktrees/*/commondir): each existing match gets the entry.
        for (size_t i = 0; i < entries.size(); ++i) {
            const std::string rel = normalize_path(entries[i].entry, "/").substr(1);
            if (rel.find_first_of("*?[") == std::string::npos) continue;
            const auto [wd, entry, only_existing] = entries[i];
            entries.erase(entries.begin() + static_cast<long>(i--));
            const size_t slash = rel.rfind('/');
            const std::string last = slash == std::string::npos ? rel : rel.substr(slash + 1);
            const bool wild_last = last.find_first_of("*?[") != std::string::npos;
            const std::string pattern =
                wd + "/" + (wild_last || slash == std::string::npos ? rel : rel.substr(0, slash));
            for (const auto& match : fs.glob(pattern)) {
                std::string m = match.substr(wd.size() + 1);
                if (!wild_last) m += "/" + last;
                if (entry.back() == '/') m += "/";
                entries.push_back({wd, m, only_existing || wild_last});
            }
        }
        // Where .git is protected, what else git reads there: with no .git, git takes a
        // directory with HEAD, objects/ and refs/ for a repository, so the workdir's HEAD is
        // protected; and .git/config.worktree, where .git/config turns it on (a sparse checkout
        // does), is configuration.
        {
            std::vector<Protected> extra;
            std::vector<std::string> seen;
            for (const auto& [wd, entry, only_existing] : entries) {
                if (only_existing || entry.rfind(".git/", 0) != 0 ||
                    std::find(seen.begin(), seen.end(), wd) != seen.end()) {
                    continue;
                }
                seen.push_back(wd);
                const HostFs::Type git = fs.type(wd + "/.git");
                if (git == HostFs::Type::Missing || git == HostFs::Type::Placeholder) {
                    extra.push_back({wd, "HEAD", false});
                } else if (git == HostFs::Type::Dir && fs.read) {
                    std::string config = fs.read(wd + "/.git/config");
                    std::transform(config.begin(), config.end(), config.begin(),
                                   [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
                    if (config.find("worktreeconfig") != std::string::npos)
                        extra.push_back({wd, ".git/config.worktree", false});
                }
            }
            entries.insert(entries.end(), extra.begin(), extra.end());
        }
        std::vector<std::pair<std::string, std::vector<std::string>>> listed;
        auto base_names = [&](const std::string& wd) -> const std::vector<std::string>& {
            for (const auto& [dir, names] : listed) {
                if (dir == wd) return names;
            }
            // Empty when it cannot be read (a listing always has . and ..): then every name is
            // looked up.
            listed.emplace_back(wd, fs.list ? fs.list(wd) : std::vector<std::string>{});
            return listed.back().second;
        };
        {
            std::vector<std::string> pinned;
            for (const auto& [wd, entry, only_existing] : entries) {
                if (covered(wd, wd + "/" + normalize_path(entry, "/").substr(1))) continue;
                bool want_dir = entry.back() == '/';
                std::string rel = normalize_path(entry, "/").substr(1);
                const std::vector<std::string_view> comps = path_components(rel);
                std::string cur = wd;
                // Directories on the way are pinned once the entry turns out to need protecting
                // (a missing protect-existing path needs nothing, nor do its parents).
                std::vector<std::string> on_the_way;
                auto pin_the_way = [&] {
                    for (const auto& dir : on_the_way) {
                        if (std::find(pinned.begin(), pinned.end(), dir) != pinned.end()) continue;
                        pinned.push_back(dir);
                        add(4, MountOp{MountOp::Kind::Bind, dir, dir, false, false, false, true, 0, 0, "pin", true});
                    }
                };
                for (size_t i = 0; i < comps.size(); ++i) {
                    cur += '/';
                    cur += comps[i];
                    bool last = i + 1 == comps.size();
                    // What the workdir holds is read once: most protected names are not there.
                    const std::vector<std::string>& names = base_names(wd);
                    auto t = i == 0 && !names.empty() && !std::binary_search(names.begin(), names.end(), comps[0])
                                 ? HostFs::Type::Missing
                                 : fs.type(cur);
                    if (t == HostFs::Type::Symlink) {
                        // Following it could redirect the jail's setup, and it may have been
                        // planted by an earlier run: it is not followed, and the jail cannot
                        // change it or anything it leads to. The host's link stays as it is.
                        pin_the_way();
                        if (std::find(pinned.begin(), pinned.end(), cur) == pinned.end()) {
                            pinned.push_back(cur);
                            plan.notes.push_back("protected path " + cur + " is a symlink (to " + fs.readlink(cur) +
                                                 "): not followed; the jail sees an empty read-only file there");
                            add(4, MountOp{MountOp::Kind::HideFile, "", cur, true, false, false, true, 0, 0,
                                           "protect (symlink)"});
                        }
                        break;
                    }
                    if (t == HostFs::Type::Missing && only_existing) break;
                    if (t == HostFs::Type::Missing || t == HostFs::Type::Placeholder) {
                        // The first missing component becomes a placeholder (or is one already,
                        // made by a concurrent run or left by a killed one), bound read-only.
                        // Nothing can be created below it either (a missing .git covers
                        // .git/hooks and .git/config at the cost of one).
                        using T = Placeholder::Type;
                        T type = !last || want_dir ? T::Dir : T::File;
                        bool known = std::any_of(plan.placeholders.begin(), plan.placeholders.end(),
                                                 [&](const Placeholder& ph) { return ph.path == cur; });
                        pin_the_way();
                        if (!known) {
                            std::string content;
                            const std::string_view rel_here = std::string_view(cur).substr(wd.size() + 1);
                            for (const auto& [p, text] : spec.placeholder_content) {
                                if (type == T::File && p == rel_here) content = text;
                            }
                            plan.placeholders.push_back(Placeholder{cur, type, content});
                            add(4, MountOp{MountOp::Kind::Bind, cur, cur, true, false, false, true, 0, 0, "protect",
                                           true});
                        }
                        break;
                    }
                    if (last) {
                        pin_the_way();
                        add(4, MountOp{MountOp::Kind::Bind, cur, cur, true, false, false, true, 0, 0, "protect", true});
                        break;
                    }
                    // Not a directory on the way (the .git file of a git worktree, or a
                    // placeholder left by a cordon killed with SIGKILL): nothing can exist below
                    // it, and it is bound read-only itself, so that it cannot be replaced by a
                    // directory or rewritten (a gitfile pointing at planted hooks).
                    if (t != HostFs::Type::Dir) {
                        pin_the_way();
                        if (std::find(pinned.begin(), pinned.end(), cur) == pinned.end()) {
                            pinned.push_back(cur);
                            add(4, MountOp{MountOp::Kind::Bind, cur, cur, true, false, false, true, 0, 0, "protect",
                                           true});
                        }
                        break;
                    }
                    on_the_way.push_back(cur);
                }
            }
        }
        add(1, MountOp{MountOp::Kind::Proc, "", "/proc", false, false, false, false, 0, 0555, "proc"});
        add_proc_protection("/proc", "proc", spec.host_uid == 0, [&](MountOp op) { add(1, std::move(op)); });
        add(1, MountOp{MountOp::Kind::Dev, "", "/dev", false, false, false, false, 0, 0755, "dev"});
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked& a, const Ranked& b) {
        if (a.depth != b.depth) return a.depth < b.depth;
        if (a.rank != b.rank) return a.rank < b.rank;
        return a.seq < b.seq;
    });
    // Two protections of the same path (e.g. listed twice) are harmless but noisy: keep one.
    // Equal ops have the same depth and rank, so they sit in the same run of the sorted list.
    size_t run_start = 0;
    for (size_t i = 0; i < ranked.size(); ++i) {
        auto& r = ranked[i];
        if (i > 0 && (r.depth != ranked[i - 1].depth || r.rank != ranked[i - 1].rank)) run_start = plan.ops.size();
        bool dup = std::any_of(plan.ops.begin() + static_cast<long>(run_start), plan.ops.end(), [&](const MountOp& o) {
            return o.kind == r.op.kind && o.dest == r.op.dest && o.source == r.op.source && o.readonly == r.op.readonly;
        });
        if (!dup) plan.ops.push_back(std::move(r.op));
    }

    for (const MountRequest& req : spec.mount_requests) {
        using R = MountRequest::Kind;
        const std::string why = "--" + mount_request_option(req);
        switch (req.kind) {
            case R::Bind:
            case R::RoBind:
            case R::DevBind:
                plan.ops.push_back(MountOp{MountOp::Kind::Bind, req.source, req.dest, req.kind == R::RoBind,
                                           req.kind == R::DevBind, req.optional, false, 0, 0, why});
                break;
            case R::Proc:
                plan.ops.push_back(
                    MountOp{MountOp::Kind::Proc, "", req.dest, false, false, false, false, 0, 0555, why});
                add_proc_protection(req.dest, why, spec.host_uid == 0,
                                    [&](MountOp o) { plan.ops.push_back(std::move(o)); });
                break;
            case R::Dev:
                plan.ops.push_back(MountOp{MountOp::Kind::Dev, "", req.dest, false, false, false, false, 0, 0755, why});
                break;
            case R::Dir:
                plan.ops.push_back(MountOp{MountOp::Kind::Dir, "", req.dest, false, false, false, false, 0, 0755, why});
                break;
            case R::Symlink:
                plan.ops.push_back(
                    MountOp{MountOp::Kind::Symlink, req.source, req.dest, false, false, false, false, 0, 0777, why});
                break;
            case R::RemountRo:
                plan.ops.push_back(
                    MountOp{MountOp::Kind::RemountRo, "", req.dest, true, false, false, false, 0, 0, why});
                break;
        }
    }
    return plan;
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

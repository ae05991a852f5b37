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

namespace {

using K = MountOp::Kind;

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

// A path inside a writable tree, bound read-only onto itself as the jail being built shows it.
MountOp protect_bind(const std::string& path) {
    return MountOp{.kind = K::Bind,
                   .source = path,
                   .dest = path,
                   .readonly = true,
                   .no_symlinks = true,
                   .why = "protect",
                   .in_jail = true};
}

// Ops from profiles and --ro/--rw/--tmpfs/--hide are sorted so that a parent is always mounted
// before anything below it (depth first), then by rank, then in the order given. Among ops at the
// same depth, each rank may cover the ones before it on the same path.
enum class Rank {
    Workdir,     // first, so that an explicit --tmpfs or --ro of the workdir itself wins over it
    Fresh,       // new filesystems: --tmpfs, the private HOME, /proc and its protection, /dev
    HostPaths,   // --ro and --rw: the host's paths shown in the jail
    Hides,       // --hide: over what the host's paths show
    Protection,  // protected paths, the pins on the way to them, cordon's config
};

struct Ranked {
    size_t depth;
    Rank rank;
    size_t seq;
    MountOp op;
};

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

// A protected path: ENTRY below BASE, a host directory the jail can write.
struct Protected {
    std::string base;
    std::string entry;  // relative to base; a trailing '/' means a directory
    bool only_existing;
};

// The planning steps, in the order plan_mounts() calls them, and what they share.
class Planner {
public:
    Planner(const Spec& spec, const HostFs& host) : spec_(spec), fs_(caching(host)) {}

    void plan_workdir();
    void plan_fresh_filesystems();
    void plan_host_paths();
    void plan_hides();
    void plan_protected_paths();
    void order_ranked();
    void plan_mount_request(const MountRequest& req);
    void find_handoff();
    MountPlan take() { return std::move(plan_); }

private:
    void add(Rank rank, MountOp op) {
        size_t d = depth(op.dest);
        ranked_.push_back(Ranked{d, rank, ranked_.size(), std::move(op)});
    }
    void expose(const std::string& path, bool readonly, const char* why);
    std::string writable_base(const std::string& dir) const;
    void plan_cordon_dirs(std::vector<Protected>& entries);
    void expand_patterns(std::vector<Protected>& entries);
    void add_git_entries(std::vector<Protected>& entries);
    bool covered(const std::string& base, const std::string& path) const;
    HostFs::Type type_in_base(const std::string& base, std::string_view name, const std::string& path);
    void protect(const Protected& p);
    bool first_pin(const std::string& path);
    void pin(const std::vector<std::string>& dirs);
    void cover_symlink(const std::string& path);
    void placehold(const std::string& base, const std::string& path, Placeholder::Type type);

    const Spec& spec_;
    HostFs fs_;
    MountPlan plan_;
    std::vector<Ranked> ranked_;
    std::vector<std::string> hidden_;  // what the hide patterns matched
    std::vector<std::string> pinned_;  // bound onto themselves by the protected-path walk
    std::vector<std::pair<std::string, std::vector<std::string>>> listed_;  // a base's names
};

void Planner::plan_workdir() {
    if (!spec_.workdir) return;
    add(Rank::Workdir, MountOp{.kind = K::Bind,
                               .source = *spec_.workdir,
                               .dest = *spec_.workdir,
                               .readonly = spec_.workdir_readonly,
                               .why = spec_.workdir_readonly ? "workdir, read-only" : "workdir"});
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

// Protected paths: every existing directory on the way to one is pinned (bound onto itself) so
// it cannot be renamed away and recreated; the path itself is bound read-only. Missing parts
// become placeholders that the supervisor creates and removes.
void Planner::plan_protected_paths() {
    std::vector<Protected> entries;
    if (spec_.workdir && !spec_.workdir_readonly) {
        for (const auto& e : spec_.protect) entries.push_back({*spec_.workdir, e, false});
        for (const auto& e : spec_.protect_existing) entries.push_back({*spec_.workdir, e, true});
    }
    plan_cordon_dirs(entries);
    expand_patterns(entries);
    add_git_entries(entries);
    for (const Protected& p : entries) protect(p);
}

// The deepest tree the jail can write that DIR is below, or "". A writable "/" is no base:
// entries are named BASE + "/" + ENTRY.
std::string Planner::writable_base(const std::string& dir) const {
    std::string base;
    auto consider = [&](const std::string& w) {
        if (w.size() > base.size() && w != "/" && path_under(dir, w)) base = w;
    };
    for (const auto& w : spec_.rw) consider(w);
    if (spec_.workdir && !spec_.workdir_readonly) consider(*spec_.workdir);
    return base;
}

// cordon's own configuration must never be writable from inside, or a payload could plant a
// profile or policy that a later run trusts. Inside a writable tree it is protected like the
// entries above; elsewhere it is shown read-only (or as an empty read-only directory). The same
// for its cache and its private directory in /tmp (pools of placeholder directories, which a
// later run renames into a project; lock files), where they are writable; elsewhere the jail
// cannot change them.
void Planner::plan_cordon_dirs(std::vector<Protected>& entries) {
    for (const std::string* own : {&spec_.cache_dir, &spec_.private_tmp}) {
        if (own->empty()) continue;
        if (std::string base = writable_base(*own); !base.empty()) {
            entries.push_back({base, own->substr(base.size() + 1) + "/", false});
        }
    }
    if (spec_.config_dir.empty()) return;
    if (std::string base = writable_base(spec_.config_dir); !base.empty()) {
        entries.push_back({base, spec_.config_dir.substr(base.size() + 1) + "/", false});
    } else if (fs_.type(spec_.config_dir) == HostFs::Type::Dir) {
        add(Rank::Protection, MountOp{.kind = K::Bind,
                                      .source = spec_.config_dir,
                                      .dest = spec_.config_dir,
                                      .readonly = true,
                                      .why = "cordon config"});
    } else {
        add(Rank::Protection,
            MountOp{
                .kind = K::Tmpfs, .dest = spec_.config_dir, .readonly = true, .size = 4096, .why = "cordon config"});
    }
}

// Entries with wildcards name the directories they are in by pattern
// (.git/worktrees/*/commondir): each existing match gets the entry.
void Planner::expand_patterns(std::vector<Protected>& entries) {
    for (size_t i = 0; i < entries.size(); ++i) {
        const std::string rel = normalize_path(entries[i].entry, "/").substr(1);
        if (!has_wildcard(rel)) continue;
        const auto [wd, entry, only_existing] = entries[i];
        entries.erase(entries.begin() + static_cast<long>(i--));
        const size_t slash = rel.rfind('/');
        const std::string last = slash == std::string::npos ? rel : rel.substr(slash + 1);
        const bool wild_last = has_wildcard(last);
        const std::string pattern = wd + "/" + (wild_last || slash == std::string::npos ? rel : rel.substr(0, slash));
        for (const auto& match : fs_.glob(pattern)) {
            std::string m = match.substr(wd.size() + 1);
            if (!wild_last) m += "/" + last;
            if (entry.back() == '/') m += "/";
            entries.push_back({wd, m, only_existing || wild_last});
        }
    }
}

// Where .git is protected, what else git reads there: with no .git, git takes a directory with
// HEAD, objects/ and refs/ for a repository, so the workdir's HEAD is protected; and
// .git/config.worktree, where .git/config turns it on (a sparse checkout does), is configuration.
void Planner::add_git_entries(std::vector<Protected>& entries) {
    std::vector<Protected> extra;
    std::vector<std::string> seen;
    for (const auto& [wd, entry, only_existing] : entries) {
        if (only_existing || entry.rfind(".git/", 0) != 0 || std::find(seen.begin(), seen.end(), wd) != seen.end()) {
            continue;
        }
        seen.push_back(wd);
        const HostFs::Type git = fs_.type(wd + "/.git");
        if (git == HostFs::Type::Missing || git == HostFs::Type::Placeholder) {
            extra.push_back({wd, "HEAD", false});
        } else if (git == HostFs::Type::Dir && fs_.read) {
            std::string config = fs_.read(wd + "/.git/config");
            std::transform(config.begin(), config.end(), config.begin(),
                           [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
            if (config.find("worktreeconfig") != std::string::npos)
                extra.push_back({wd, ".git/config.worktree", false});
        }
    }
    entries.insert(entries.end(), extra.begin(), extra.end());
}

// A protected entry below something that covers it in the jail (a tmpfs, a hidden or read-only
// path at or below its writable tree) is not the host's there: nothing to do. A cover at the base
// itself counts only where it is mounted on top of the base: over the workdir (mounted first
// among equals) anything does, over an --rw path only a hide.
bool Planner::covered(const std::string& base, const std::string& path) const {
    const bool base_first = spec_.workdir && base == *spec_.workdir;
    auto covers_if = [&](bool at_base_too) {
        return [&, at_base_too](const std::string& c) {
            return (c == base ? at_base_too : path_at_or_under(c, base)) && path_at_or_under(path, c);
        };
    };
    return std::any_of(spec_.tmpfs.begin(), spec_.tmpfs.end(), covers_if(base_first)) ||
           std::any_of(spec_.ro.begin(), spec_.ro.end(), covers_if(base_first)) ||
           std::any_of(hidden_.begin(), hidden_.end(), covers_if(true));
}

// NAME, directly in BASE, at PATH. What a base holds is read once: most protected names are not
// there. An empty listing is one that could not be read (a listing always has . and ..): then
// every name is looked up.
HostFs::Type Planner::type_in_base(const std::string& base, std::string_view name, const std::string& path) {
    auto known = std::find_if(listed_.begin(), listed_.end(), [&](const auto& l) { return l.first == base; });
    if (known == listed_.end()) {
        listed_.emplace_back(base, fs_.list ? fs_.list(base) : std::vector<std::string>{});
        known = std::prev(listed_.end());
    }
    const std::vector<std::string>& names = known->second;
    return !names.empty() && !std::binary_search(names.begin(), names.end(), name) ? HostFs::Type::Missing
                                                                                   : fs_.type(path);
}

// One protected path, walked from its base a component at a time to the first one that is not
// a directory on the way. The directories on the way are pinned once the entry turns out to
// need protecting (a missing protect-existing path needs nothing, nor do its parents).
void Planner::protect(const Protected& p) {
    const std::string rel = normalize_path(p.entry, "/").substr(1);
    if (covered(p.base, p.base + "/" + rel)) return;
    const std::vector<std::string_view> comps = path_components(rel);
    std::string cur = p.base;
    std::vector<std::string> on_the_way;
    for (size_t i = 0; i < comps.size(); ++i) {
        cur += '/';
        cur += comps[i];
        const bool last = i + 1 == comps.size();
        const HostFs::Type t = i == 0 ? type_in_base(p.base, comps[0], cur) : fs_.type(cur);
        if (t == HostFs::Type::Dir && !last) {
            on_the_way.push_back(cur);
            continue;
        }
        if (t == HostFs::Type::Missing && p.only_existing) return;
        pin(on_the_way);
        if (t == HostFs::Type::Symlink) {
            cover_symlink(cur);
        } else if (t == HostFs::Type::Missing || t == HostFs::Type::Placeholder) {
            // The first missing component becomes a placeholder (or is one already, made by a
            // concurrent run or left by a killed one), bound read-only. Nothing can be created
            // below it either (a missing .git covers .git/hooks and .git/config at the cost of
            // one).
            placehold(p.base, cur, !last || p.entry.back() == '/' ? Placeholder::Type::Dir : Placeholder::Type::File);
        } else if (last || first_pin(cur)) {
            // The path itself, or not a directory on the way (the .git file of a git worktree,
            // or a placeholder left by a cordon killed with SIGKILL): nothing can exist below
            // it, and it is bound read-only itself, so that it cannot be replaced by a directory
            // or rewritten (a gitfile pointing at planted hooks).
            add(Rank::Protection, protect_bind(cur));
        }
        return;
    }
}

// False if PATH is bound onto itself already.
bool Planner::first_pin(const std::string& path) {
    if (std::find(pinned_.begin(), pinned_.end(), path) != pinned_.end()) return false;
    pinned_.push_back(path);
    return true;
}

void Planner::pin(const std::vector<std::string>& dirs) {
    for (const auto& dir : dirs) {
        if (!first_pin(dir)) continue;
        add(Rank::Protection,
            MountOp{.kind = K::Bind, .source = dir, .dest = dir, .no_symlinks = true, .why = "pin", .in_jail = true});
    }
}

// Following a symlink could redirect the jail's setup, and it may have been planted by an earlier
// run: it is not followed, and the jail cannot change it or anything it leads to. The host's link
// stays as it is.
void Planner::cover_symlink(const std::string& path) {
    if (!first_pin(path)) return;
    plan_.notes.push_back("protected path " + path + " is a symlink (to " + fs_.readlink(path) +
                          "): not followed; the jail sees an empty read-only file there");
    add(Rank::Protection,
        MountOp{.kind = K::HideFile, .dest = path, .readonly = true, .no_symlinks = true, .why = "protect (symlink)"});
}

void Planner::placehold(const std::string& base, const std::string& path, Placeholder::Type type) {
    if (std::any_of(plan_.placeholders.begin(), plan_.placeholders.end(),
                    [&](const Placeholder& ph) { return ph.path == path; })) {
        return;
    }
    std::string content;
    const std::string_view rel = std::string_view(path).substr(base.size() + 1);
    for (const auto& [p, text] : spec_.placeholder_content) {
        if (type == Placeholder::Type::File && p == rel) content = text;
    }
    plan_.placeholders.push_back(Placeholder{path, type, content});
    add(Rank::Protection, protect_bind(path));
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

}  // namespace

// With a profile, the jail's root is built from the profile's entries, ordered by depth and rank
// (Rank); --no-profile leaves only the bwrap-style primitives, which come last either way.
Result<MountPlan> plan_mounts(const Spec& spec, const HostFs& host) {
    Planner planner(spec, host);
    if (!spec.no_profile) {
        planner.plan_workdir();
        planner.plan_fresh_filesystems();
        planner.plan_host_paths();
        planner.plan_hides();
        planner.plan_protected_paths();
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

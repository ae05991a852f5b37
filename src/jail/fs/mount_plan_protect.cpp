// The mount plan's protected paths (mount_planner.hpp): the entries found below the writable
// trees, the directories on the way to each pinned, the path bound read-only, a missing one
// made a placeholder.
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/paths.hpp"
#include "mount_planner.hpp"

namespace cordon::mount_planner {

namespace {

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

}  // namespace

namespace {

// Whether A is B or below it, by the directories' identity: A's deepest existing ancestor (A
// itself, if it exists) and the directories above it, resolved, against B's device and inode.
bool at_or_under_by_identity(const std::string& a, const std::string& b) {
    if (path_at_or_under(a, b)) return true;
    struct stat target {};
    if (::stat(b.c_str(), &target) != 0) return false;
    std::string p = a;
    char real[PATH_MAX];
    while (!real_path(p, real)) {
        if (p == "/" || p.empty()) return false;
        p = std::string(path_parent(p));
    }
    for (std::string r = real;; r = std::string(path_parent(r))) {
        struct stat st {};
        if (::stat(r.c_str(), &st) == 0 && st.st_dev == target.st_dev && st.st_ino == target.st_ino) return true;
        if (r == "/") return false;
    }
}

}  // namespace

}  // namespace cordon::mount_planner

namespace cordon {

bool written_through_binds(const Spec& s, const std::string& path) {
    auto meets = [&](const std::string& w) {
        return mount_planner::at_or_under_by_identity(path, w) || mount_planner::at_or_under_by_identity(w, path);
    };
    for (const auto& w : s.rw) {
        if (meets(w)) return true;
    }
    for (const auto& m : s.mount_requests) {
        const bool writable = m.kind == MountRequest::Kind::Bind || m.kind == MountRequest::Kind::DevBind;
        if (writable && !m.source.empty() && m.source[0] == '/' && meets(m.source)) return true;
    }
    return false;
}

}  // namespace cordon

namespace cordon::mount_planner {

// Protected paths: every existing directory on the way to one is pinned (bound onto itself) so
// it cannot be renamed away and recreated; the path itself is bound read-only. Missing parts
// become placeholders that the supervisor creates and removes.
void Planner::plan_protected_paths() {
    std::vector<Protected> entries;
    if (spec_.workdir) {
        // A read-only workdir keeps the entries that a --rw path or writable bind makes
        // writable after all (an entry with a wildcard: up to its first wildcard).
        auto needed = [&](const std::string& e) {
            if (!spec_.workdir_readonly) return true;
            std::string path = normalize_path(*spec_.workdir + "/" + e, "/");
            if (const size_t wild = path.find_first_of("*?["); wild != std::string::npos)
                path = std::string(path_parent(path.substr(0, wild)));
            return written_through_binds(spec_, path);
        };
        for (const auto& e : spec_.protect) {
            if (needed(e)) entries.push_back({*spec_.workdir, e, false});
        }
        for (const auto& e : spec_.protect_existing) {
            if (needed(e)) entries.push_back({*spec_.workdir, e, true});
        }
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

}  // namespace cordon::mount_planner

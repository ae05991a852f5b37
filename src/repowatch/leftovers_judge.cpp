// RepoWatch's judgement (leftovers.hpp): every repository of the workdir that the run made or
// changed, as git would read it, and what is moved aside.

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "cordon/git_config.hpp"
#include "cordon/paths.hpp"
#include "leftovers_state.hpp"

namespace cordon {

using namespace watch;  // NOLINT(google-build-using-namespace): this module's own helpers

// --- judging ------------------------------------------------------------------------------------

// Every repository of the workdir as it is now, and every .git file.
void RepoWatch::State::judge_all() {
    for (uint32_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].gone || (!nodes[i].has_head && !nodes[i].has_git)) continue;
        UniqueFd tmp;
        const int fd = fd_of(i, tmp);
        if (fd < 0) continue;
        const std::string r = rel(i);
        if (nodes[i].has_head) judge_gitdir(fd, r, i);
        if (nodes[i].has_git) judge_gitfile(fd, r);
    }
}

// The directory at FD (REL), node NODE (kNone: reached through a .git file): if git might take
// it for a repository, what it would read there. That is any directory with a HEAD, valid or
// not, with objects and refs or without: git's rules (validate_headref, is_git_directory) and
// the variables that move objects/ (GIT_OBJECT_DIRECTORY) are never to be outguessed, and what
// git would not take costs only a look. A repository from before the run has only what the run
// changed judged; one made in the run, everything.
void RepoWatch::State::judge_gitdir(int fd, const std::string& rel, uint32_t node) {
    auto sx = stat_at(fd, "");
    if (!sx || std::find(judged.begin(), judged.end(), id_of(*sx)) != judged.end()) return;
    judged.push_back(id_of(*sx));
    if (!stat_at(fd, "HEAD")) return;  // git's first test: lstat("HEAD")
    const auto b = node == kNone ? before.end() : before.find(node);
    const Before* was = b == before.end() ? nullptr : &b->second;
    // The workdir's own .git has its config, hooks and commondir protected in every run: only
    // what changed there is judged, also while other runs commit and switch branches in it.
    const bool strict = was == nullptr && rel != ".git";
    // commondir: where git takes config, hooks, objects and refs from.
    std::optional<UniqueFd> common;
    std::string common_rel;
    if (auto csx = stat_at(fd, "commondir")) {
        auto text = read_small(fd, "commondir");
        std::string why;
        bool turned = false;  // a commondir from before, led astray by a symlink of the run's
        if (text) common = follow(rel, git_commondir_path(*text), why, common_rel, &turned);
        if ((strict || changed(*csx) || turned) && !common) {
            if (!text) why = "is not a file git reads";
            if (!why.empty())
                quarantine(fd, rel, "commondir",
                           "points the host's git at another repository's config and hooks, and " + why);
        }
    }
    const int cfd = common ? common->get() : fd;
    judge_config(fd, rel, "config", strict, was ? &was->config : nullptr);
    judge_config(fd, rel, "config.worktree", strict, was ? &was->config_worktree : nullptr);
    judge_includes(fd, rel, "config", 0);
    judge_includes(fd, rel, "config.worktree", 0);
    judge_hooks(fd, rel, strict, was);
    judge_todo(fd, rel, "rebase-merge", "git-rebase-todo", strict);
    judge_todo(fd, rel, "sequencer", "todo", strict);
    judge_symlinks(fd, rel);
    if (common) {
        auto csx = stat_at(cfd, "");
        const bool own = csx && id_of(*csx) == id_of(*sx);
        const auto known = csx ? by_id.find(id_of(*csx)) : by_id.end();
        const bool common_before = known != by_id.end() && before.count(known->second) != 0;
        if (!own && !(known != by_id.end() && nodes[known->second].has_head && common_before)) {
            judge_common(cfd, common_rel, !common_before);
        }
    }
}

// A common directory that is not itself a repository from before the run: its config and hooks.
void RepoWatch::State::judge_common(int gitdir, const std::string& rel, bool strict) {
    judge_config(gitdir, rel, "config", strict, nullptr);
    judge_includes(gitdir, rel, "config", 0);
    judge_hooks(gitdir, rel, strict, nullptr);
}

// WAS: the file from before the run, where the repository is from before (else nullptr).
void RepoWatch::State::judge_config(int gitdir, const std::string& rel, const char* name, bool strict,
                                    const Snapshot* was) {
    auto sx = stat_at(gitdir, name);
    if (!sx) return;
    // The user's own symlink: git reads what it leads to, judged as a file the config includes.
    if (S_ISLNK(sx->stx_mode) && !strict && !changed(*sx)) {
        char target[4096];
        const ssize_t n = ::readlinkat(gitdir, name, target, sizeof target);
        if (n <= 0 || static_cast<size_t>(n) >= sizeof target) return;
        std::string path(target, static_cast<size_t>(n));
        if (path[0] == '/') {
            auto in = in_workdir(path);
            if (!in) return;  // outside: not the command's to write
            path = *in;
        } else {
            path = join(rel, path);
        }
        judge_included(join(rel, name), "", 0, path, 1);
        return;
    }
    if (!strict && !changed(*sx)) return;
    std::string why;
    if (S_ISLNK(sx->stx_mode)) {
        why = "is a symlink, which the host's git would follow to read another file";
    } else if (auto text = read_small(gitdir, name)) {
        why = git_config_unsafe(*text);
        if (!why.empty()) why += ", which the host's git would run or follow";
    } else if (!S_ISREG(sx->stx_mode)) {
        return;  // a directory: git cannot read it
    } else {
        why = "is too large to judge (over 1 MiB)";
    }
    if (why.empty()) return;
    // Put back only what is surely from before: without the live runs' marks, a copy that is
    // unsafe itself may be another run's work (a user's own pager is then theirs to set again).
    std::string lost = was ? was->lost : "";
    if (was && was->text && !was->text->empty() && !runs_known) {
        const std::string old = git_config_unsafe(*was->text);
        if (!old.empty()) lost = "it " + old + ", and other runs in this workdir could not be ruled out";
    }
    if (!lost.empty()) why += " (the file from before the run is not put back: " + lost + ")";
    if (quarantine(gitdir, rel, name, why) && was && was->text && !was->text->empty() && lost.empty())
        restore(gitdir, name, *was->text, was->mode);
}

// The todo list of a rebase or cherry-pick in progress (DIR/NAME in the git directory), where
// the run made or changed it, or made, changed or moved in DIR (a directory moved back in a
// later run keeps its files' times, only its own ctime moves): an exec line in it is a command
// the host's git runs on `git rebase --continue` (or `git cherry-pick --continue`). One without
// is left, so that a rebase the command paused can still be continued.
void RepoWatch::State::judge_todo(int gitdir, const std::string& rel, const char* dir, const char* name, bool strict) {
    UniqueFd dfd = open_dir_at(gitdir, dir);
    auto dsx = dfd ? stat_at(dfd.get(), "") : std::nullopt;
    auto sx = dfd ? stat_at(dfd.get(), name) : std::nullopt;
    if (!sx || !dsx || (!strict && !changed(*sx) && !changed(*dsx))) return;
    std::string why;
    if (S_ISLNK(sx->stx_mode)) {
        why = "is a symlink, which the host's git would follow to read the commands it runs";
    } else if (auto text = read_small(dfd.get(), name)) {
        why = git_todo_unsafe(*text);
        // And what to do now: the paused rebase or pick has no todo list left to go on with.
        if (!why.empty()) {
            const char* abort = std::string_view(dir) == "sequencer" ? "git cherry-pick --abort or git revert --abort"
                                                                     : "git rebase --abort";
            why += ", which the host's git would run on --continue (to go on: read it, then move it back; or " +
                   std::string(abort) + ")";
        }
    } else if (S_ISREG(sx->stx_mode)) {
        why = "is too large to judge (over 1 MiB)";
    }
    if (!why.empty()) quarantine(dfd.get(), join(rel, dir), name, why);
}

// Symlinks the run left where the host's git writes through them: a reflog (logs/, which git
// appends to), the messages and state it writes at the top (COMMIT_EDITMSG, FETCH_HEAD,
// MERGE_MSG, ...) and in a rebase's or cherry-pick's state. git follows them, so the host's
// next commit would append to, or rewrite, what they lead to (a ~/.bashrc). A symlink made in
// the run, or in a directory the run made, changed or moved in (its files keep their times),
// is moved aside; hooks/ has its own judgement. Refs and the index are written by rename, which
// replaces a symlink.
void RepoWatch::State::judge_symlinks(int gitdir, const std::string& rel) {
    // What git writes by name at the top (not by rename), and the directories it writes into.
    static constexpr const char* kTop[] = {
        "COMMIT_EDITMSG", "TAG_EDITMSG",  "MERGE_MSG",    "SQUASH_MSG",   "FETCH_HEAD", "MERGE_MODE",
        "BISECT_LOG",     "BISECT_TERMS", "BISECT_NAMES", "BISECT_START", "gc.log",     "description",
        "logs",           "info",         "rebase-merge", "rebase-apply", "sequencer"};
    size_t budget = 4096;  // entries listed below them, per repository (cordon(1), BOUNDS)
    for (const char* name : kTop) judge_symlink_at(gitdir, rel, name, false, 0, budget);
}

// NAME in DIRFD (REL): moved aside if it is a symlink the run made, or one in a directory the run
// made, changed or moved in (DIR_CHANGED); a directory is looked through. One whose entries
// exceed the budget is moved aside whole where the run changed it (a flood would hide a link).
void RepoWatch::State::judge_symlink_at(int dirfd, const std::string& rel, const std::string& name, bool dir_changed,
                                        int depth, size_t& budget) {
    if (is_moved_aside(name)) return;  // git never reads it; and moved once is enough
    auto sx = stat_at(dirfd, name.c_str());
    if (!sx) return;
    const bool made = dir_changed || changed(*sx);
    if (S_ISLNK(sx->stx_mode)) {
        if (made) quarantine(dirfd, rel, name, "is a symlink, which the host's git would follow to write another file");
        return;
    }
    if (!S_ISDIR(sx->stx_mode) || depth >= 8) return;
    UniqueFd sub = open_dir_at(dirfd, name.c_str());
    if (!sub) return;
    std::vector<std::pair<std::string, unsigned char>> entries;
    bool over = false;
    char listing[4096];
    for_each_entry(
        sub.get(), listing, sizeof listing,
        [&](const char* entry, unsigned char type) {
            if (budget == 0) {
                over = true;
                return;
            }
            --budget;
            if (type == DT_LNK || type == DT_DIR || type == DT_UNKNOWN) entries.emplace_back(entry, type);
        },
        false);
    if (over) {
        if (made) quarantine(dirfd, rel, name, "holds more entries than cordon judges (4,096), and the run changed it");
        return;
    }
    const std::string here = join(rel, name);
    for (const auto& entry : entries) judge_symlink_at(sub.get(), here, entry.first, made, depth + 1, budget);
}

// Hooks: every entry but git's *.sample files, where the run made or changed it.
void RepoWatch::State::judge_hooks(int gitdir, const std::string& rel, bool strict, const Before* was) {
    auto sx = stat_at(gitdir, "hooks");
    if (!sx) return;
    if (!is_dir(*sx)) {
        if (strict || changed(*sx))
            quarantine(gitdir, rel, "hooks", "is not a directory, and the host's git would run what it leads to");
        return;
    }
    UniqueFd hooks = open_dir_at(gitdir, "hooks");
    auto hsx = hooks ? stat_at(hooks.get(), "") : std::nullopt;
    if (!hsx) return;
    const bool same_dir = was && was->hooks == id_of(*hsx);
    std::vector<std::string> unsafe;
    for_each_entry(
        hooks.get(), buf, sizeof buf,
        [&](const char* name, unsigned char) {
            const std::string_view n = name;
            // git's examples, and what cordon moved aside before: git runs hooks by their exact
            // names, so neither runs (a strictly judged common directory would else rename the
            // same file again in every run, its name growing).
            if (is_sample(n) || is_moved_aside(n)) return;
            auto esx = stat_at(hooks.get(), name);
            if (!esx) return;
            bool known = false;
            if (same_dir) {
                const auto old = was->hook_entries.find(n);
                known = old != was->hook_entries.end() && old->second == esx->stx_ino;
            }
            if (strict || changed(*esx) || !known) unsafe.emplace_back(name);
        },
        false);
    for (const auto& name : unsafe)
        quarantine(hooks.get(), join(rel, "hooks"), name, "is a hook, which the host's git would run");
}

// An entry named .git that is not a directory: a symlink git follows, or a .git file (worktrees
// and submodules) naming the repository git is to use. Judged where the run made or changed it;
// one from before only where the run put a symlink on the way to what it names.
void RepoWatch::State::judge_gitfile(int dirfd, const std::string& rel) {
    if (rel.empty() && !own_writable) return;  // the workdir's own: read-only in a namespace jail
    auto sx = stat_at(dirfd, ".git");
    if (!sx || is_dir(*sx)) return;
    const bool made = changed(*sx);
    if (S_ISLNK(sx->stx_mode)) {
        std::string why = "is a symlink, which the host's git would follow to another repository";
        if (!made) {  // the user's: moved aside only where the run put a symlink on its way
            char link[4096];
            const ssize_t n = ::readlinkat(dirfd, ".git", link, sizeof link - 1);
            std::string how, unused;
            bool turned = false;
            if (n > 0) (void)follow(rel, std::string(link, static_cast<size_t>(n)), how, unused, &turned);
            if (!turned) return;
            why += ", and " + how;
        }
        quarantine(dirfd, rel, ".git", why);
        return;
    }
    auto text = read_small(dirfd, ".git");
    auto path = text ? git_file_path(*text) : std::nullopt;
    if (!path) return;  // git cannot use it
    std::string why, target_rel;
    bool turned = false;
    auto target = follow(rel, *path, why, target_rel, &turned);
    if (!made) {
        if (turned) quarantine(dirfd, rel, ".git", "names the repository the host's git is to use, and " + why);
        return;
    }
    if (target) {
        judge_gitdir(target->get(), target_rel, [&] {
            auto tsx = stat_at(target->get(), "");
            auto k = tsx ? by_id.find(id_of(*tsx)) : by_id.end();
            return k == by_id.end() ? kNone : k->second;
        }());
    } else if (!why.empty()) {
        quarantine(dirfd, rel, ".git", "names the repository the host's git is to use, and " + why);
    }
}

// TARGET as git reads it in a .git file or commondir of FROM_REL: the directory, when it is in
// the workdir and the kernel resolves it there exactly as git would, with no symlink on the way.
// Else nullopt, with WHY saying why ("" when it does not exist: git cannot use it either), and
// TURNED set when a symlink on the way (past the user's own) is one the run made or moved there.
// TARGET is never tidied before it is opened: "a/../b" is the kernel's, through whatever "a"
// is, and a path that cannot be resolved that way is one to move aside, not one to guess at.
std::optional<UniqueFd> RepoWatch::State::follow(const std::string& from_rel, const std::string& target,
                                                 std::string& why, std::string& to_rel, bool* turned) {
    std::string path;  // from the workdir, as written
    if (!target.empty() && target[0] == '/') {
        auto in = in_workdir(target);
        if (!in) {
            why = "leads out of the workdir (" + target + ")";
            return std::nullopt;
        }
        path = *in;
    } else {
        path = from_rel.empty() ? target : from_rel + "/" + target;
    }
    UniqueFd fd = open_beneath(root_fd.get(), path);
    if (!fd) {
        const int err = errno;
        if (err != ENOENT && err != ENOTDIR) why = "leads through a symlink or out of the workdir (" + target + ")";
        if (err == ELOOP && turned) {
            *turned = turned_on_way(path);
            if (*turned) why = "the command put a symlink on its way (" + target + ")";
        }
        return std::nullopt;
    }
    // Reached with no symlink on the way: its ".." are the lexical ones.
    const std::string norm = normalize_path(root + "/" + path, "/");
    to_rel = norm.size() <= root.size() ? "" : norm.substr(root.size() + (root == "/" ? 0 : 1));
    return fd;
}

// The absolute path TARGET from the workdir, when it starts with the workdir's path or its real
// path (git writes that one) as written: no other spelling is taken for one inside.
std::optional<std::string> RepoWatch::State::in_workdir(const std::string& target) const {
    for (const std::string* dir : {&root, &root_real}) {
        if (dir->empty() || target.compare(0, dir->size(), *dir) != 0) continue;
        if (*dir != "/" && target.size() > dir->size() && target[dir->size()] != '/') continue;
        std::string rest = target.substr(dir->size());
        while (!rest.empty() && rest[0] == '/') rest.erase(0, 1);
        return rest;
    }
    return std::nullopt;
}

// Resolving PATH (from the workdir): whether it meets a symlink the run made or moved there (its
// ctime), following those from before as the kernel would (at most 40) while they stay in the
// workdir: a pointer from before is the user's unless the run turned its way. Else where it
// leads, through no symlink.
RepoWatch::State::Way RepoWatch::State::walk_way(const std::string& path) const {
    Way way;
    std::vector<std::string> done;  // real directories from the workdir: ".." is lexical there
    std::vector<std::string> todo;  // what is left, last first
    auto push = [&](const std::string& p) {
        for (size_t end = p.size(); end != std::string::npos && end > 0;) {
            const size_t slash = p.rfind('/', end - 1);
            const size_t start = slash == std::string::npos ? 0 : slash + 1;
            todo.push_back(p.substr(start, end - start));
            end = slash;
        }
    };
    auto at_done = [&] {
        std::string at;
        for (const auto& d : done) at = join(at, d);
        return at;
    };
    push(path);
    for (int links = 0; !todo.empty();) {
        const std::string name = std::move(todo.back());
        todo.pop_back();
        if (name.empty() || name == ".") continue;
        if (name == "..") {
            if (done.empty()) return way;  // out of the workdir
            done.pop_back();
            continue;
        }
        const std::string at = at_done();
        UniqueFd dir = open_beneath(root_fd.get(), at);
        auto sx = dir ? stat_at(dir.get(), name.c_str()) : std::nullopt;
        if (!sx) return way;
        if (!S_ISLNK(sx->stx_mode)) {
            done.push_back(name);
            continue;
        }
        if (changed(*sx)) {
            way.turned = true;
            way.link = join(at, name);
            return way;
        }
        char link[4096];
        const ssize_t n = ::readlinkat(dir.get(), name.c_str(), link, sizeof link - 1);
        if (n <= 0 || ++links > 40) return way;
        std::string to(link, static_cast<size_t>(n));
        if (to[0] == '/') {
            auto in = in_workdir(to);
            if (!in) return way;
            done.clear();
            to = *in;
        }
        push(to);
    }
    way.real = at_done();
    way.exists = true;
    return way;
}

// The files the config NAME in DIRFD (REL) includes (include.path, includeIf.*.path), as git
// resolves them: relative to the including file's directory, "~/" from $HOME. Those inside the
// workdir that the run made or changed are judged as configs; those outside it are the host's,
// which the jail reaches only through a --rw tree (cordon(1), WHAT THE JAIL MAY LEAVE BEHIND).
void RepoWatch::State::judge_includes(int dirfd, const std::string& rel, const char* name, int depth) {
    constexpr int kMaxDepth = 10;  // git's MAX_INCLUDE_DEPTH
    auto text = read_small(dirfd, name);
    if (!text || depth >= kMaxDepth) return;
    // Most configs include nothing: a key spelled in any case holds "include" in any case.
    const auto has = std::search(text->begin(), text->end(), std::begin("include"), std::end("include") - 1,
                                 [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
    if (has == text->end()) return;
    const std::string from = join(rel, name);
    for (const GitConfigEntry& e : parse_git_config(*text).entries) {
        const bool include = e.key == "include.path" || (e.key.rfind("includeif.", 0) == 0 && e.key.size() > 15 &&
                                                         e.key.compare(e.key.size() - 5, 5, ".path") == 0);
        if (!include || !e.value || e.value->empty()) continue;
        std::string path = e.value->substr(0, e.value->find('\0'));
        if (path == "~" || path.rfind("~/", 0) == 0) {
            const char* home = std::getenv("HOME");
            if (home == nullptr || *home == '\0') continue;
            path = home + path.substr(1);
        } else if (path[0] == '~' || path.rfind("%(prefix)/", 0) == 0) {
            continue;  // another user's home, or git's own prefix: not the workdir
        }
        if (path[0] == '/') {
            auto in = in_workdir(path);
            if (!in) continue;
            path = *in;
        } else {
            path = join(rel, path);
        }
        judge_included(from, e.key, e.line, path, depth + 1);
    }
}

// PATH (from the workdir, as git would open it), included by the config FROM (KEY at LINE), or
// what FROM leads to when it is a symlink (KEY empty).
void RepoWatch::State::judge_included(const std::string& from, const std::string& key, int line,
                                      const std::string& path, int depth) {
    const std::string by = key.empty() ? "is what " + from + " (a symlink) leads to"
                                       : "is included by " + from + " (" + key + ", line " + std::to_string(line) + ")";
    const Way way = walk_way(path);
    if (way.turned) {
        const size_t slash = way.link.rfind('/');
        const std::string dir = slash == std::string::npos ? "" : way.link.substr(0, slash);
        UniqueFd dfd = open_beneath(root_fd.get(), dir);
        if (dfd)
            quarantine(dfd.get(), dir, way.link.substr(slash + 1),
                       "is a symlink the command put on the way to " + path + ", which " + from +
                           " includes: the host's git would read what it leads to as its config");
        return;
    }
    if (!way.exists || way.real.empty()) return;
    const size_t slash = way.real.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : way.real.substr(0, slash);
    const std::string name = way.real.substr(slash + 1);
    UniqueFd dfd = open_beneath(root_fd.get(), dir);
    auto sx = dfd ? stat_at(dfd.get(), name.c_str()) : std::nullopt;
    if (!sx || !S_ISREG(sx->stx_mode)) return;
    if (std::find(judged.begin(), judged.end(), id_of(*sx)) != judged.end()) return;  // a loop
    judged.push_back(id_of(*sx));
    if (changed(*sx)) {
        std::string why;
        if (auto text = read_small(dfd.get(), name.c_str())) {
            why = git_config_unsafe(*text);
            if (!why.empty()) why = by + ", and " + why + ", which the host's git would run or follow";
        } else {
            why = by + ", and is too large to judge (over 1 MiB)";
        }
        if (!why.empty()) {
            quarantine(dfd.get(), dir, name, why);
            return;
        }
    }
    judge_includes(dfd.get(), dir, name.c_str(), depth);
}

// Moves NAME in DIRFD (REL) aside, to NAME.cordon-unsafe (or .cordon-unsafe.N), which git never
// reads; the rename neither follows nor replaces anything.
bool RepoWatch::State::quarantine(int dirfd, const std::string& rel, const std::string& name, std::string why) {
    Quarantined q{join(rel, name), "", std::move(why)};
    for (int k = 0; k < 100; ++k) {
        std::string to = name + kSuffix + (k ? "." + std::to_string(k) : "");
        if (::renameat2(dirfd, name.c_str(), dirfd, to.c_str(), RENAME_NOREPLACE) == 0) {
            q.moved_to = join(rel, to);
            break;
        }
        if (errno != EEXIST) break;
    }
    const bool moved = !q.moved_to.empty();
    if (!moved) q.why += std::string(" (it could not be moved aside: ") + std::strerror(errno) + ")";
    out.push_back(std::move(q));
    return moved;
}

// A config the run changed goes back to what it was before, unless something is there again.
void RepoWatch::State::restore(int dirfd, const std::string& name, const std::string& content, mode_t mode) {
    // Made unreadable to others first (0600), then given its mode, never wider, umask or not.
    // Root's cordon gives it the owner of the directory that holds it: another user's repository
    // (a root caller's workdir of theirs, cordon(1) ROOT CALLERS) keeps its config theirs.
    UniqueFd fd(::openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    struct stat dir {};
    const bool owned = ::geteuid() != 0 || (::fstat(dirfd, &dir) == 0 &&
                                            (dir.st_uid == 0 || ::fchown(fd.get(), dir.st_uid, dir.st_gid) == 0));
    if (fd && owned && write_all(fd.get(), content.data(), content.size()) && ::fchmod(fd.get(), mode & 0777) == 0)
        out.back().restored = true;
}

}  // namespace cordon

// RepoWatch (leftovers.hpp): the workdir read once while the run goes on, read again where it
// changed, and every repository the run made or changed judged as git would read it.
#include "cordon/leftovers.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "cordon/fd.hpp"
#include "cordon/git_config.hpp"
#include "cordon/json.hpp"
#include "cordon/paths.hpp"
#include "cordon/placeholders.hpp"

namespace cordon {

namespace {

constexpr const char* kSuffix = ".cordon-unsafe";
constexpr size_t kMaxFile = size_t{1} << 20;  // a config or a .git file git would read whole
constexpr uint32_t kNone = UINT32_MAX;
// File systems stamp times with the coarse clock, and may lag it by a tick: a change is the
// run's when its ctime is at or after its start less this.
constexpr long kSlackNs = 20L * 1000 * 1000;

using Id = std::pair<dev_t, ino_t>;

// statx without following a final symlink; nullopt when NAME is not there.
std::optional<struct statx> stat_at(int dirfd, const char* name) {
    struct statx sx {};
    const int flags = AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC | (*name ? 0 : AT_EMPTY_PATH);
    if (::statx(dirfd, name, flags, STATX_TYPE | STATX_MODE | STATX_INO | STATX_CTIME | STATX_SIZE | STATX_NLINK,
                &sx) != 0) {
        return std::nullopt;
    }
    return sx;
}

Id id_of(const struct statx& sx) {
    return {makedev(sx.stx_dev_major, sx.stx_dev_minor), sx.stx_ino};
}

bool is_dir(const struct statx& sx) {
    return S_ISDIR(sx.stx_mode);
}

UniqueFd open_dir_at(int dirfd, const char* name) {
    return UniqueFd(::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

// A small regular file's content, read without following a symlink; nullopt if it is not one
// or is larger than MAX.
std::optional<std::string> read_small(int dirfd, const char* name, size_t max = kMaxFile) {
    // Never opened unless a regular file: opening a device or a FIFO can act.
    struct stat pre {};
    if (::fstatat(dirfd, name, &pre, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(pre.st_mode)) return std::nullopt;
    UniqueFd fd(::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) > max) {
        return std::nullopt;
    }
    std::string s(static_cast<size_t>(st.st_size), '\0');
    size_t got = 0;
    while (got < s.size()) {
        const ssize_t r = retry_eintr([&] { return ::read(fd.get(), s.data() + got, s.size() - got); });
        if (r <= 0) break;
        got += static_cast<size_t>(r);
    }
    s.resize(got);
    return s;
}

std::string trim_right(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
    return s;
}

// git's validate_headref: a symlink into refs/, "ref: refs/...", or an object id.
bool head_is_valid(int gitdir) {
    char link[256];
    const ssize_t n = ::readlinkat(gitdir, "HEAD", link, sizeof link - 1);
    if (n >= 0) return std::string_view(link, static_cast<size_t>(n)).rfind("refs/", 0) == 0;
    auto head = read_small(gitdir, "HEAD", 4096);
    if (!head) return false;
    std::string_view h = *head;
    if (h.rfind("ref:", 0) == 0) {
        h.remove_prefix(4);
        while (!h.empty() && (h.front() == ' ' || h.front() == '\t')) h.remove_prefix(1);
        return h.rfind("refs/", 0) == 0;
    }
    size_t hex = 0;
    while (hex < h.size() && std::isxdigit(static_cast<unsigned char>(h[hex]))) ++hex;
    return hex == 40 || hex == 64;
}

}  // namespace

// A directory as the walk read it.
struct Node {
    UniqueFd fd;  // kept while the budget allows; else reopened by its path
    uint32_t parent = kNone;
    std::string name;
    Id id{};
    bool gone = false;  // no longer there: removed, or moved (then found again as a new node)
    bool has_head = false;
    bool has_git = false;  // an entry named .git
};

// A repository as it was before the run: only where HEAD, objects, refs and commondir all
// predate it (else it counts as made in the run, and is judged whole). Its config files and
// hooks as they were, where those predate the run too.
struct Before {
    std::optional<std::string> config, config_worktree;      // nullopt: not known
    std::optional<Id> hooks;                                 // the hooks directory
    std::map<std::string, ino_t, std::less<>> hook_entries;  // its entries
};

struct RepoWatch::State {
    std::string root;       // the workdir
    std::string root_real;  // and its real path, which git writes into .git files
    struct timespec t0 {};
    UniqueFd root_fd;
    std::vector<Node> nodes;
    std::map<Id, uint32_t> by_id;
    std::map<uint32_t, Before> before;
    std::vector<Id> judged;
    std::vector<Quarantined> out;
    size_t fd_budget = 0;
    bool after = false;           // finish: the jail is gone
    bool fills_getdents = false;  // the workdir's file system (for_each_entry)
    uint32_t walked = 0;          // the nodes the walk found before finish
    rlimit old_nofile{};
    bool raised_nofile = false;
    // The run's mark in the private runtime directory while its judgement is pending, and the
    // marks of killed runs it took over (see take_over_killed).
    std::string mark;
    UniqueFd mark_fd;
    std::vector<std::pair<std::string, UniqueFd>> taken;
    alignas(8) char buf[32768];

    [[nodiscard]] bool changed(const struct statx& sx) const {
        const struct statx_timestamp& t = sx.stx_ctime;
        return t.tv_sec > t0.tv_sec || (t.tv_sec == t0.tv_sec && static_cast<long>(t.tv_nsec) >= t0.tv_nsec);
    }
    [[nodiscard]] std::string rel(uint32_t i) const;
    UniqueFd reopen(uint32_t i);
    int fd_of(uint32_t i, UniqueFd& tmp);
    uint32_t add_node(UniqueFd fd, uint32_t parent, const std::string& name, const struct statx& sx);
    void read_names(int fd, uint32_t i, std::vector<std::string>& subdirs);
    UniqueFd open_subdir(int fd, const std::string& name);
    void walk_from(uint32_t first);
    void note_before(uint32_t i, int fd);
    void reread_changed();
    void judge_all();
    void judge_gitdir(int fd, const std::string& rel, uint32_t node);
    void judge_common(int gitdir, const std::string& rel, bool strict);
    void judge_config(int gitdir, const std::string& rel, const char* name, bool strict,
                      const std::optional<std::string>& was);
    void judge_hooks(int gitdir, const std::string& rel, bool strict, const Before* was);
    void judge_gitfile(int dirfd, const std::string& rel);
    std::optional<UniqueFd> follow(const std::string& from_rel, const std::string& target, std::string& why,
                                   std::string& to_rel);
    bool quarantine(int dirfd, const std::string& rel, const std::string& name, std::string why);
    void restore(int dirfd, const std::string& name, const std::string& content);
    void take_over_killed();
    void drop_marks(bool done);
};

namespace {

std::string join(const std::string& rel, const std::string& name) {
    return rel.empty() ? name : rel + "/" + name;
}

bool accessible(int dirfd, const char* name) {
    return ::faccessat(dirfd, name, X_OK, 0) == 0;
}

// git's own example hooks, which it never runs.
bool is_sample(std::string_view name) {
    return name.size() > 7 && name.substr(name.size() - 7) == ".sample";
}

// FD's entries from its start (REWIND: it may have been read before). SHORT_IS_END: the file
// system fills getdents' buffer until the directory ends (ext4, xfs, btrfs, tmpfs do; FUSE and
// NFS need not), so a read that leaves room for a long name was the last.
template <typename Fn>
void for_each_entry(int fd, char* buf, size_t size, Fn&& fn, bool rewind, bool short_is_end = false) {
    if (rewind && ::lseek(fd, 0, SEEK_SET) < 0) return;
    for (;;) {
        const ssize_t n = ::getdents64(fd, buf, size);
        if (n <= 0) return;
        for (ssize_t off = 0; off < n;) {
            const auto* d = reinterpret_cast<const struct dirent64*>(buf + off);
            off += d->d_reclen;
            const std::string_view name = d->d_name;
            if (name != "." && name != "..") fn(d->d_name, d->d_type);
        }
        if (short_is_end && static_cast<size_t>(n) + 512 < size) return;
    }
}

}  // namespace

std::string RepoWatch::State::rel(uint32_t i) const {
    std::string r;
    for (; i != kNone && nodes[i].parent != kNone; i = nodes[i].parent)
        r = r.empty() ? nodes[i].name : nodes[i].name + "/" + r;
    return r;
}

// A node's directory by its path from the workdir, never through a symlink; invalid when it is
// not there, or another directory is there now.
UniqueFd RepoWatch::State::reopen(uint32_t i) {
    const std::string r = rel(i);
    struct open_how how {};
    how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, root_fd.get(), r.empty() ? "." : r.c_str(), &how, sizeof how)));
    auto sx = fd ? stat_at(fd.get(), "") : std::nullopt;
    if (!sx || id_of(*sx) != nodes[i].id) return {};
    return fd;
}

int RepoWatch::State::fd_of(uint32_t i, UniqueFd& tmp) {
    if (nodes[i].fd) return nodes[i].fd.get();
    tmp = reopen(i);
    return tmp.get();
}

uint32_t RepoWatch::State::add_node(UniqueFd fd, uint32_t parent, const std::string& name, const struct statx& sx) {
    const auto i = static_cast<uint32_t>(nodes.size());
    Node n;
    if (fd_budget > 0) {
        --fd_budget;
        n.fd = std::move(fd);
    }
    n.parent = parent;
    n.name = name;
    n.id = id_of(sx);
    // Found somewhere else than the walk saw it: moved there in the run.
    if (auto old = by_id.find(n.id); old != by_id.end()) nodes[old->second].gone = true;
    by_id[n.id] = i;
    nodes.push_back(std::move(n));
    return i;
}

// The names of node I that matter: its subdirectories (into SUBDIRS), HEAD and .git.
void RepoWatch::State::read_names(int fd, uint32_t i, std::vector<std::string>& subdirs) {
    bool head = false, git = false;
    for_each_entry(
        fd, buf, sizeof buf,
        [&](const char* name, unsigned char type) {
            if (std::strcmp(name, "HEAD") == 0) head = true;
            if (std::strcmp(name, ".git") == 0) git = true;
            if (type == DT_UNKNOWN) {
                auto sx = stat_at(fd, name);
                type = sx && is_dir(*sx) ? DT_DIR : DT_REG;
            }
            if (type == DT_DIR) subdirs.emplace_back(name);
        },
        after, fills_getdents && nodes[i].id.first == nodes[0].id.first);
    nodes[i].has_head = head;
    nodes[i].has_git = git;
}

// A subdirectory to read. After the run, one the command made unreadable to its owner (who
// could still enter it) is made readable again.
UniqueFd RepoWatch::State::open_subdir(int fd, const std::string& name) {
    UniqueFd sub = open_dir_at(fd, name.c_str());
    if (sub || errno != EACCES || !after) return sub;
    auto sx = stat_at(fd, name.c_str());
    if (!sx || !is_dir(*sx) || !changed(*sx) || sx->stx_uid != ::geteuid()) return sub;
    if (::fchmodat(fd, name.c_str(), (sx->stx_mode & 07777) | S_IRWXU, 0) != 0) return sub;
    return open_dir_at(fd, name.c_str());
}

// Reads node FIRST and what is below it that the walk has not read where it is now. A
// repository's objects/ is left out: git never runs there, and a .git file or commondir that
// leads there has its target judged anyway.
void RepoWatch::State::walk_from(uint32_t first) {
    std::vector<uint32_t> todo{first};
    std::vector<std::string> subdirs;
    while (!todo.empty()) {
        const uint32_t i = todo.back();
        todo.pop_back();
        UniqueFd tmp;
        const int fd = fd_of(i, tmp);
        if (fd < 0) continue;
        subdirs.clear();
        read_names(fd, i, subdirs);
        const bool repo = nodes[i].has_head && head_is_valid(fd);
        if (repo && !after) note_before(i, fd);
        for (const auto& name : subdirs) {
            if (repo && name == "objects") continue;
            UniqueFd sub = open_subdir(fd, name);
            auto sx = sub ? stat_at(sub.get(), "") : std::nullopt;
            if (!sx) continue;
            if (auto known = by_id.find(id_of(*sx)); known != by_id.end()) {
                const Node& k = nodes[known->second];
                // Read already: there, or before the run anywhere (a bind mount inside the
                // workdir), or after it (a bind mount that holds itself).
                if ((k.parent == i && k.name == name && !k.gone) || !after || known->second >= walked) continue;
            }
            todo.push_back(add_node(std::move(sub), i, name, *sx));
        }
    }
}

void RepoWatch::State::note_before(uint32_t i, int fd) {
    // objects/ by its birth: its ctime moves with every commit, of this run or another one.
    for (const char* part : {"HEAD", "refs", "commondir", "objects"}) {
        struct statx sx {};
        const bool objects = std::strcmp(part, "objects") == 0;
        if (::statx(fd, part, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_CTIME | STATX_BTIME, &sx) != 0) {
            if (std::strcmp(part, "commondir") == 0) continue;
            return;
        }
        const struct statx_timestamp& t = objects ? sx.stx_btime : sx.stx_ctime;
        if (objects && !(sx.stx_mask & STATX_BTIME)) continue;
        if (t.tv_sec > t0.tv_sec || (t.tv_sec == t0.tv_sec && static_cast<long>(t.tv_nsec) >= t0.tv_nsec)) return;
    }
    Before b;
    auto snapshot = [&](const char* name, std::optional<std::string>& into) {
        auto sx = stat_at(fd, name);
        if (!sx) {
            into = std::string();
            return;
        }
        if (changed(*sx)) return;
        into = read_small(fd, name);
        auto again = stat_at(fd, name);
        if (!again || again->stx_ino != sx->stx_ino || changed(*again)) into.reset();
    };
    snapshot("config", b.config);
    snapshot("config.worktree", b.config_worktree);
    UniqueFd hooks = open_dir_at(fd, "hooks");
    auto hsx = hooks ? stat_at(hooks.get(), "") : std::nullopt;
    if (hsx && !changed(*hsx)) {
        b.hooks = id_of(*hsx);
        for_each_entry(
            hooks.get(), buf, sizeof buf,
            [&](const char* name, unsigned char) {
                if (is_sample(name)) return;
                auto esx = stat_at(hooks.get(), name);
                if (esx && !changed(*esx)) b.hook_entries.emplace(name, esx->stx_ino);
            },
            false);
    }
    before[i] = std::move(b);
}

// A directory whose ctime moved since T0 had an entry made, removed or renamed in the run (or
// its own attributes changed): it is read again, and what is new below it is read whole.
void RepoWatch::State::reread_changed() {
    walked = static_cast<uint32_t>(nodes.size());
    for (uint32_t i = 0; i < walked; ++i) {
        if (nodes[i].gone) continue;
        UniqueFd tmp;
        const int fd = fd_of(i, tmp);
        auto sx = fd >= 0 ? stat_at(fd, "") : std::nullopt;
        if (!sx || sx->stx_nlink == 0 || id_of(*sx) != nodes[i].id) {
            nodes[i].gone = true;
            continue;
        }
        if (changed(*sx)) walk_from(i);
    }
}

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

// The directory at FD (REL), node NODE (kNone: reached through a .git file): if git takes it for
// a repository, what it would read there. A repository from before the run has only what the
// run changed judged; one made in the run, everything.
void RepoWatch::State::judge_gitdir(int fd, const std::string& rel, uint32_t node) {
    auto sx = stat_at(fd, "");
    if (!sx || std::find(judged.begin(), judged.end(), id_of(*sx)) != judged.end()) return;
    judged.push_back(id_of(*sx));
    if (!head_is_valid(fd)) return;
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
        if (text) common = follow(rel, trim_right(*text), why, common_rel);
        if ((strict || changed(*csx)) && !common) {
            if (!text) why = "is not a file git reads";
            if (!why.empty())
                quarantine(fd, rel, "commondir",
                           "points the host's git at another repository's config and hooks, and " + why);
        }
    }
    const int cfd = common ? common->get() : fd;
    if (!accessible(cfd, "objects") || !accessible(cfd, "refs")) return;  // not a repository to git
    judge_config(fd, rel, "config", strict, was ? was->config : std::nullopt);
    judge_config(fd, rel, "config.worktree", strict, was ? was->config_worktree : std::nullopt);
    judge_hooks(fd, rel, strict, was);
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
    judge_config(gitdir, rel, "config", strict, std::nullopt);
    judge_hooks(gitdir, rel, strict, nullptr);
}

void RepoWatch::State::judge_config(int gitdir, const std::string& rel, const char* name, bool strict,
                                    const std::optional<std::string>& was) {
    auto sx = stat_at(gitdir, name);
    if (!sx || (!strict && !changed(*sx))) return;
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
    if (quarantine(gitdir, rel, name, why) && was && !was->empty()) restore(gitdir, name, *was);
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
            if (is_sample(name)) return;
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
// and submodules) naming the repository git is to use. Judged where the run made or changed it.
void RepoWatch::State::judge_gitfile(int dirfd, const std::string& rel) {
    if (rel.empty()) return;  // the workdir's own: read-only in every run (a worktree's points out)
    auto sx = stat_at(dirfd, ".git");
    if (!sx || is_dir(*sx) || !changed(*sx)) return;
    if (S_ISLNK(sx->stx_mode)) {
        quarantine(dirfd, rel, ".git", "is a symlink, which the host's git would follow to another repository");
        return;
    }
    auto text = read_small(dirfd, ".git");
    if (!text || text->rfind("gitdir: ", 0) != 0) return;  // git cannot use it
    std::string why, target_rel;
    auto target = follow(rel, trim_right(text->substr(8)), why, target_rel);
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
// the workdir and reached without a symlink. Else nullopt, with WHY saying why ("" when it does
// not exist: git cannot use it either).
std::optional<UniqueFd> RepoWatch::State::follow(const std::string& from_rel, const std::string& target,
                                                 std::string& why, std::string& to_rel) {
    std::string path;
    if (!target.empty() && target[0] == '/') {
        path = normalize_path(target, "/");
        if (!root_real.empty() && path_at_or_under(path, root_real)) path = root + path.substr(root_real.size());
    } else {
        path = normalize_path(root + "/" + join(from_rel, target), "/");
    }
    if (!path_at_or_under(path, root)) {
        why = "leads out of the workdir (" + target + ")";
        return std::nullopt;
    }
    const std::string r = path.size() == root.size() ? "." : path.substr(root.size() + (root == "/" ? 0 : 1));
    struct open_how how {};
    how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, root_fd.get(), r.c_str(), &how, sizeof how)));
    to_rel = r == "." ? "" : r;
    if (fd) return fd;
    if (errno != ENOENT) why = "leads through a symlink or out of the workdir (" + target + ")";
    return std::nullopt;
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
void RepoWatch::State::restore(int dirfd, const std::string& name, const std::string& content) {
    UniqueFd fd(::openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (fd && write_all(fd.get(), content.data(), content.size())) out.back().restored = true;
}

// --- runs killed before their judgement -----------------------------------------------------------

namespace {

std::string format_mark(const struct timespec& t, const std::string& root) {
    return std::to_string(t.tv_sec) + " " + std::to_string(t.tv_nsec) + "\n" + root + "\n";
}

}  // namespace

// A run killed (SIGKILL) before it judged what it left would leave it unjudged for good: the
// next run would see it as older than itself. So each run keeps a mark, locked, in the private
// runtime directory while its judgement is pending: WATCH-<hash of the workdir>.<pid>.<time>,
// holding its T0 and the workdir. A later run in the same workdir that can lock a mark (its
// owner is gone) takes it over: it judges everything changed since the earliest such T0, writes
// that into its own mark before the command starts (so that a kill now loses nothing either),
// and removes the marks once it has judged.
void RepoWatch::State::take_over_killed() {
    if (private_runtime_dir().empty()) return;
    const std::string dir = private_runtime_dir() + "/watch";
    (void)::mkdir(dir.c_str(), 0700);  // inside the private runtime directory: ours alone
    char hash[24];
    std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(root));
    const std::string prefix = std::string("watch-") + hash + ".";
    UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dfd) return;
    std::vector<std::string> names;
    for_each_entry(
        dfd.get(), buf, sizeof buf,
        [&](const char* name, unsigned char) {
            if (std::string_view(name).rfind(prefix, 0) == 0) names.emplace_back(name);
        },
        false);
    for (const auto& name : names) {
        UniqueFd fd(::openat(dfd.get(), name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
        if (!fd || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;  // its run is alive
        auto text = read_small(dfd.get(), name.c_str(), 8192);
        struct timespec t {};
        long long sec = 0, nsec = 0;
        if (!text || std::sscanf(text->c_str(), "%lld %lld", &sec, &nsec) != 2 ||
            text->find("\n" + root + "\n") == std::string::npos) {
            continue;
        }
        t.tv_sec = static_cast<time_t>(sec);
        t.tv_nsec = static_cast<long>(nsec);
        if (t.tv_sec < t0.tv_sec || (t.tv_sec == t0.tv_sec && t.tv_nsec < t0.tv_nsec)) t0 = t;
        taken.emplace_back(dir + "/" + name, std::move(fd));
    }
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    mark = dir + "/" + prefix + std::to_string(::getpid()) + "." + std::to_string(now.tv_nsec);
    mark_fd.reset(::open(mark.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    const std::string text = format_mark(t0, root);
    if (!mark_fd || ::flock(mark_fd.get(), LOCK_EX) != 0 || !write_all(mark_fd.get(), text.data(), text.size())) {
        if (mark_fd) ::unlink(mark.c_str());
        mark_fd.reset();
        mark.clear();
    }
}

// After the judgement (DONE) the marks go; a run that never started its command leaves those
// it took over for the next one.
void RepoWatch::State::drop_marks(bool done) {
    if (done) {
        for (auto& [path, fd] : taken) ::unlink(path.c_str());
    }
    taken.clear();
    if (!mark.empty()) ::unlink(mark.c_str());
    mark_fd.reset();
    mark.clear();
}

// --- RepoWatch ----------------------------------------------------------------------------------

RepoWatch::RepoWatch(std::unique_ptr<State> state) : state_(std::move(state)) {}

RepoWatch::~RepoWatch() {
    cancel();
}

std::unique_ptr<RepoWatch> RepoWatch::start(const std::string& workdir) {
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
    now.tv_nsec -= kSlackNs;
    if (now.tv_nsec < 0) {
        now.tv_nsec += 1000L * 1000 * 1000;
        --now.tv_sec;
    }
    return start(workdir, now);
}

std::unique_ptr<RepoWatch> RepoWatch::start(const std::string& workdir, struct timespec now) {
    auto s = std::make_unique<State>();
    s->root = normalize_path(workdir, "/");
    if (char* real = ::realpath(s->root.c_str(), nullptr)) {
        s->root_real = real;
        std::free(real);  // NOLINT(cppcoreguidelines-no-malloc)
    }
    s->t0 = now;
    s->root_fd = open_dir_at(AT_FDCWD, s->root.c_str());
    auto sx = s->root_fd ? stat_at(s->root_fd.get(), "") : std::nullopt;
    if (!sx) return nullptr;
    struct statfs fs {};
    if (::fstatfs(s->root_fd.get(), &fs) == 0) {
        s->fills_getdents = fs.f_type == EXT4_SUPER_MAGIC || fs.f_type == XFS_SUPER_MAGIC ||
                            fs.f_type == BTRFS_SUPER_MAGIC || fs.f_type == TMPFS_MAGIC;
    }
    s->take_over_killed();
    // A descriptor per directory, up to kKeptFds, so that finish asks each with one fstat (the
    // rest are opened again by path). The supervisor has no thread yet (a growing descriptor
    // table would wait for an RCU grace period at each doubling beside one).
    constexpr rlim_t kKeptFds = 8192;
    constexpr rlim_t kMargin = 1024;  // for the supervisor's own: the jail's listeners come later
    if (::getrlimit(RLIMIT_NOFILE, &s->old_nofile) == 0) {
        rlimit raised = s->old_nofile;
        raised.rlim_cur = std::min<rlim_t>(raised.rlim_max, kKeptFds + kMargin);
        s->raised_nofile = raised.rlim_cur > s->old_nofile.rlim_cur && ::setrlimit(RLIMIT_NOFILE, &raised) == 0;
        const rlim_t cur = s->raised_nofile ? raised.rlim_cur : s->old_nofile.rlim_cur;
        s->fd_budget = cur > kMargin ? static_cast<size_t>(cur - kMargin) : 0;
    }
    s->add_node(UniqueFd(::fcntl(s->root_fd.get(), F_DUPFD_CLOEXEC, 0)), kNone, "", *sx);
    State* state = s.get();
    state->walk_from(0);
    return std::unique_ptr<RepoWatch>(new RepoWatch(std::move(s)));
}

std::vector<Quarantined> RepoWatch::finish() {
    State& s = *state_;
    s.after = true;
    s.reread_changed();
    s.judge_all();
    s.drop_marks(true);
    std::vector<Quarantined> out = std::move(s.out);
    cancel();
    return out;
}

void RepoWatch::cancel() {
    if (!state_) return;
    state_->nodes.clear();
    state_->drop_marks(false);
    if (state_->raised_nofile) ::setrlimit(RLIMIT_NOFILE, &state_->old_nofile);
    state_.reset();
}

std::string quarantined_json(const Quarantined& q) {
    JsonObject j;
    j.add("path", q.path);
    j.add_raw("moved_to", q.moved_to.empty() ? "null" : json_quote(q.moved_to));
    j.add("why", q.why);
    j.add("restored", q.restored);
    return j.str();
}

}  // namespace cordon

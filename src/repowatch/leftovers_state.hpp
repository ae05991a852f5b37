// RepoWatch's state (leftovers.hpp), shared by its parts: the walk (leftovers.cpp), the
// judgement (leftovers_judge.cpp) and the marks of runs killed before theirs (leftovers_marks.cpp).
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "cordon/fd.hpp"
#include "cordon/leftovers.hpp"
#include "leftovers_watcher.hpp"
#include "tree_cache.hpp"

namespace cordon::watch {

constexpr const char* kSuffix = ".cordon-unsafe";
constexpr size_t kMaxFile = size_t{1} << 20;  // a config or a .git file git would read whole
// All the copies of configs from before one run keeps (cordon(1), BOUNDS): past it, none.
constexpr size_t kSnapshotBudget = size_t{8} << 20;
constexpr uint32_t kNone = UINT32_MAX;
// A tree this many directories large is read whole before the command starts; a larger one,
// with events (leftovers_events.cpp), is watched instead, its first run reading the rest while
// the command runs.
constexpr size_t kAlwaysWalk = 256;
// File systems stamp times with the coarse clock, and may lag it by a tick: a change is the
// run's when its ctime is at or after its start less this.
constexpr long kSlackNs = 20L * 1000 * 1000;

using Id = std::pair<dev_t, ino_t>;

// Time A (seconds, nanoseconds) is before B.
inline bool precedes(int64_t a_sec, int64_t a_nsec, const struct timespec& b) {
    return a_sec < b.tv_sec || (a_sec == b.tv_sec && a_nsec < b.tv_nsec);
}

// T less the file systems' slack (kSlackNs).
inline struct timespec less_slack(struct timespec t) {
    t.tv_nsec -= kSlackNs;
    if (t.tv_nsec < 0) {
        t.tv_nsec += 1000L * 1000 * 1000;
        --t.tv_sec;
    }
    return t;
}

// The directory REL (relative to ROOT, "" for ROOT itself), never through a symlink, a magic
// link or out of ROOT.
inline UniqueFd open_beneath(int root, const std::string& rel) {
    return UniqueFd(
        openat2_at(root, rel, O_RDONLY | O_DIRECTORY, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS));
}

// statx without following a final symlink; nullopt when NAME is not there.
inline std::optional<struct statx> stat_at(int dirfd, const char* name) {
    struct statx sx {};
    const int flags = AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC | (*name ? 0 : AT_EMPTY_PATH);
    if (::statx(dirfd, name, flags, STATX_TYPE | STATX_MODE | STATX_INO | STATX_CTIME | STATX_SIZE | STATX_NLINK,
                &sx) != 0) {
        return std::nullopt;
    }
    return sx;
}

inline Id id_of(const struct statx& sx) {
    return {makedev(sx.stx_dev_major, sx.stx_dev_minor), sx.stx_ino};
}

inline bool is_dir(const struct statx& sx) {
    return S_ISDIR(sx.stx_mode);
}

inline UniqueFd open_dir_at(int dirfd, const char* name) {
    return UniqueFd(::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

// A small regular file's content, read without following a symlink; nullopt if it is not one
// or is larger than MAX.
inline std::optional<std::string> read_small(int dirfd, const char* name, size_t max = kMaxFile) {
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

inline std::string trim_right(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
    return s;
}

inline std::string join(const std::string& rel, const std::string& name) {
    return rel.empty() ? name : rel + "/" + name;
}

// git's own example hooks, which it never runs.
inline bool is_sample(std::string_view name) {
    return name.size() > 7 && name.ends_with(".sample");
}

// A name cordon moved something aside to (quarantine), which git never runs either.
inline bool is_moved_aside(std::string_view name) {
    const std::string_view suffix = kSuffix;
    return name.size() > suffix.size() && name.ends_with(suffix);
}

// The workdir's key in the private runtime directory's names (tree caches, marks, watchers).
inline std::string workdir_key(const std::string& root) {
    char hash[24];
    std::snprintf(hash, sizeof hash, "%016zx", std::hash<std::string>{}(root));
    return hash;
}

// FD's entries from its start (REWIND: it may have been read before). SHORT_IS_END: the file
// system fills getdents' buffer until the directory ends (ext4, xfs, btrfs, tmpfs do; FUSE and
// NFS need not), so a read that leaves room for a long name was the last.
template <typename Fn>
inline bool for_each_entry(int fd, char* buf, size_t size, Fn&& fn, bool rewind, bool short_is_end = false) {
    if (rewind && ::lseek(fd, 0, SEEK_SET) < 0) return false;
    for (;;) {
        const ssize_t n = ::getdents64(fd, buf, size);
        if (n <= 0) return n == 0;
        for (ssize_t off = 0; off < n;) {
            const auto* d = reinterpret_cast<const struct dirent64*>(buf + off);
            off += d->d_reclen;
            const std::string_view name = d->d_name;
            if (name != "." && name != "..") fn(d->d_name, d->d_type);
        }
        if (short_is_end && static_cast<size_t>(n) + 512 < size) return true;
    }
}

}  // namespace cordon::watch

namespace cordon {

using watch::Id;
using watch::kNone;

// A directory as the walk read it.
struct Node {
    UniqueFd fd;  // kept while the budget allows; else reopened by its path
    uint32_t parent = kNone;
    std::string name;
    Id id{};
    bool gone = false;                // no longer there: removed, or moved (then found again as a new node)
    bool has_head = false;            // an entry named HEAD, in any case (see read_names)
    bool has_git = false;             // an entry named .git, in any case
    bool complete = false;            // its listing was read whole (or taken from the tree cache)
    bool listed = false;              // its listing was read in this run
    bool whole = false;               // read by a walk after the run, with what is below it
    bool fresh = false;               // made or moved where it is in the run, or below one that was (events)
    bool probed = false;              // HEAD and .git were looked for (events)
    uint32_t cached = kNone;          // its entry in the tree cache, if any
    struct statx_timestamp ctime {};  // as last seen
};

// A config file as it was before the run, to be put back if the run leaves it unsafe: TEXT
// ("" where there was none), or nullopt with LOST saying why no copy was kept.
struct Snapshot {
    std::optional<std::string> text;
    std::string lost;
    mode_t mode = 0644;  // put back with the mode it had (a 0600 config may hold a token)
};

// A repository as it was before the run: only where its HEAD predates it, and so do its
// objects, refs and commondir where it has them (else it counts as made in the run, and is
// judged whole). Its config files and
// hooks as they were, where those predate the run too.
struct Before {
    Snapshot config, config_worktree;
    std::optional<Id> hooks;                                 // the hooks directory
    std::map<std::string, ino_t, std::less<>> hook_entries;  // its entries
};

struct RepoWatch::State {
    std::string root;       // the workdir
    std::string root_real;  // and its real path, which git writes into .git files
    struct timespec t0 {};
    // The start of the oldest run still live in the workdir (this one's T0 or earlier): only a
    // file older than that is surely no other run's work, and may be put back as from before.
    struct timespec trusted_before {};
    bool runs_known = false;                          // the live runs' marks could be read (else a copy is judged too)
    size_t snapshot_budget = watch::kSnapshotBudget;  // bytes of copies still allowed (Snapshot)
    UniqueFd root_fd;
    std::vector<Node> nodes;
    std::map<Id, uint32_t> by_id;
    std::map<uint32_t, Before> before;
    std::vector<Id> judged;
    std::vector<Quarantined> out;
    size_t fd_budget = 0;
    bool after = false;           // finish: the jail is gone
    bool fills_getdents = false;  // the workdir's file system (for_each_entry)
    bool own_writable = false;    // the workdir's own .git file is judged too (the Landlock jail)
    uint32_t walked = 0;          // the nodes the walk found before finish
    rlimit old_nofile{};
    bool raised_nofile = false;
    // The run's mark in the private runtime directory while its judgement is pending, and the
    // marks of killed runs it took over (see take_over_killed).
    std::string mark;
    UniqueFd mark_fd;
    std::vector<std::pair<std::string, UniqueFd>> taken;
    // The tree as the last run saw it (tree_cache.hpp), and when this run's listings were
    // last all valid (the start of finish).
    std::optional<TreeCache> cache;
    std::string cache_path;
    struct timespec listed_at {};
    size_t listings_read = 0;  // directories read, not taken from the cache
    // Events (leftovers_events.cpp): a fanotify group marking the workdir's file system, which
    // reports each directory where an entry was made, removed, renamed, written or changed.
    struct EventDir {
        std::string handle;                                      // its file handle: type, then the bytes
        std::optional<std::string> rel;                          // or, from the watcher, its path
        std::vector<std::string> made;                           // directories made or moved there
        std::vector<std::pair<std::string, std::string>> files;  // other entries named, with their handles
    };
    UniqueFd fan;
    std::optional<watcher::Client> watcher;  // or the watcher's (leftovers_watcher.hpp)
    bool fan_refused = false;                // the kernel or the caller's rights refused a group
    bool watcher_lost = false;               // the watcher lost events, or ended: start a new one
    bool events_lost = false;                // the queue overflowed, or past the bounds: the walk judges
    bool sparse = false;                     // no walk before the run: the nodes are the cache's repositories
    bool symlink_made = false;               // a symlink was made or moved in the run: every .git file is judged
    bool link_made = false;                  // a file the run touched has another name: the walk judges
    bool common_seen = false;                // a directory the run touched may be a common dir: the walk judges
    bool unsafe_written = false;             // a file the run wrote reads as an unsafe git config: the walk judges
    uint64_t written_budget = uint64_t{16} << 20;              // bytes of the run's files that judge_event_file reads
    bool watch_links = false;                                  // read_names looks for such symlinks
    std::map<std::string, uint32_t, std::less<>> event_index;  // by handle
    std::vector<EventDir> event_dirs;
    std::set<std::pair<uint32_t, std::string>, std::less<>> event_names;  // (event dir, name), each once
    size_t queue_max = 0;  // the kernel's bound on a group's queue (max_queued_events)
    // A first run in the workdir with events reads the tree on a thread while the run goes on,
    // cut at finish (past kAlwaysWalk directories); the rest is read after the run (walk_sparse).
    std::thread walker;
    std::atomic<bool> stop_walk{false};
    std::vector<uint32_t> walk_todo;
    bool cut = false;                                     // the walk before the run was cut: WALK_TODO is left
    alignas(8) char ebuf[32768];                          // the events' own: the walker has BUF
    std::map<std::string, uint32_t, std::less<>> by_rel;  // nodes found by their path (events)
    alignas(8) char buf[32768];

    // Changed in the run: ctime at or after T0.
    [[nodiscard]] bool changed(const struct statx& sx) const {
        return !watch::precedes(sx.stx_ctime.tv_sec, sx.stx_ctime.tv_nsec, t0);
    }
    // The events do not suffice (leftovers_events.cpp): the whole tree is read after the run. The
    // watcher's view holds every repository, so what leads to one needs no walk there.
    [[nodiscard]] bool needs_walk() const {
        return events_lost || unsafe_written || (!watcher && (symlink_made || link_made || common_seen));
    }
    [[nodiscard]] std::string rel(uint32_t i) const;
    UniqueFd reopen(uint32_t i);
    int fd_of(uint32_t i, UniqueFd& tmp);
    uint32_t add_node(UniqueFd fd, uint32_t parent, const std::string& name, Id id,
                      const struct statx_timestamp& ctime);
    std::optional<struct statx> stat_node(uint32_t i) const;
    bool use_cached(uint32_t i, std::vector<uint32_t>& todo);
    uint32_t cached_child(uint32_t i, const std::string& name, Id id) const;
    void save_cache();
    void load_cache();
    [[nodiscard]] TreeCache tree_of(const std::vector<bool>* keep) const;
    void read_names(int fd, uint32_t i, std::vector<std::string>& subdirs);
    UniqueFd open_subdir(int fd, const std::string& name);
    void walk_from(uint32_t first);
    void walk_list(std::vector<uint32_t>& todo, bool stoppable);
    void stop_walker();
    void note_before(uint32_t i, int fd, bool after_run);
    void reread_changed();
    // Events (leftovers_events.cpp).
    bool open_events();
    bool open_watcher();
    void ask_watcher();
    void watcher_events();
    void drain_events();
    void release_events();
    void note_event(const std::string& dir, const char* name, uint64_t mask, const std::string& object);
    [[nodiscard]] UniqueFd open_handle(const std::string& key, int flags) const;
    void judge_event_file(uint32_t i, const std::string& name, const std::string& object,
                          std::vector<uint32_t>& touched);
    void judge_events();
    void walk_sparse();
    void infer_before();
    void note_cached_repos();
    void note_known(uint32_t i, bool head, bool git);
    void save_sparse_cache();
    uint32_t node_for(const std::string& rel);
    [[nodiscard]] bool made_in_run(uint32_t i) const;
    [[nodiscard]] bool mounts_below() const;
    void judge_all();
    void judge_gitdir(int fd, const std::string& rel, uint32_t node);
    void judge_common(int gitdir, const std::string& rel, bool strict);
    void judge_config(int gitdir, const std::string& rel, const char* name, bool strict, const Snapshot* was);
    void judge_includes(int dirfd, const std::string& rel, const char* name, int depth);
    void judge_included(const std::string& from, const std::string& key, int line, const std::string& path, int depth);
    void judge_todo(int gitdir, const std::string& rel, const char* dir, const char* name, bool strict);
    void judge_symlinks(int gitdir, const std::string& rel);
    void judge_symlink_at(int dirfd, const std::string& rel, const std::string& name, bool dir_changed, int depth,
                          size_t& budget);
    void judge_hooks(int gitdir, const std::string& rel, bool strict, const Before* was);
    void judge_gitfile(int dirfd, const std::string& rel);
    std::optional<UniqueFd> follow(const std::string& from_rel, const std::string& target, std::string& why,
                                   std::string& to_rel, bool* turned = nullptr);
    [[nodiscard]] std::optional<std::string> in_workdir(const std::string& target) const;
    [[nodiscard]] bool turned_on_way(const std::string& path) const { return walk_way(path).turned; }
    struct Way {
        bool turned = false;  // a symlink the run made or moved there is on the way
        std::string link;     // where that symlink is, from the workdir
        std::string real;     // else: where the path leads, through no symlink
        bool exists = false;  // and whether something is there
    };
    [[nodiscard]] Way walk_way(const std::string& path) const;
    bool quarantine(int dirfd, const std::string& rel, const std::string& name, std::string why);
    void restore(int dirfd, const std::string& name, const std::string& content, mode_t mode);
    void take_over_killed();
    void drop_marks(bool done);
    void close_node_fds();
    void drop_others(int dfd, const std::vector<std::string>& others);
};

}  // namespace cordon

// RepoWatch by events (leftovers.hpp). Where the caller may watch the workdir's whole file system
// (fanotify with directory-entry events needs CAP_SYS_ADMIN in the initial user namespace: root on
// the host), the kernel reports every directory in which the run made, removed, renamed, wrote or
// changed an entry, and a run costs what it changed instead of what the tree holds:
//
//   start    no walk: the repositories the last run left (the tree cache) are looked up by their
//            paths and noted as they are; only a first run in the workdir reads the tree
//   finish   the directories reported that lie in the workdir are read, with the subtrees made
//            or moved into them (whole), and the repositories around them are found by their
//            HEAD; a repository no run noted before this one is taken as from before where its
//            HEAD, refs and objects predate the run and no directory on its path was made or
//            moved in it (its config is then moved aside, not put back, when the run changed it)
//
// The walk (leftovers.cpp) judges instead where the events may be incomplete: the queue
// overflowed or passed the bounds, another file system is mounted below the workdir, a killed
// run's changes are to be judged, or the run made a symlink (a .git file or commondir the host
// made since the last run may lead through it, and only the walk finds those).
#include <sys/fanotify.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/fd.hpp"
#include "cordon/git_config.hpp"
#include "cordon/paths.hpp"
#include "leftovers_state.hpp"

namespace cordon {

using namespace watch;  // NOLINT(google-build-using-namespace): this module's own helpers

namespace {

// FAN_CLOSE_WRITE: a write through a shared mapping reports no FAN_MODIFY, but its file was
// opened for writing, and is closed by the end of the run at the latest.
constexpr uint64_t kEventMask =
    FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO | FAN_ATTRIB | FAN_MODIFY | FAN_CLOSE_WRITE | FAN_ONDIR;
// What one run's events may make the supervisor hold (cordon(1), BOUNDS); past it, the walk.
constexpr size_t kMaxEventDirs = size_t{1} << 15;
constexpr size_t kMaxMadeNames = size_t{1} << 16;

}  // namespace

// Whether a file system is mounted anywhere below the workdir (its events are not the mark's).
bool RepoWatch::State::mounts_below() const {
    return root_real.empty() || root_real == "/" || cordon::mounts_below(root_real);
}

// The fanotify group, where the kernel and the caller allow one and its events can be complete.
bool RepoWatch::State::open_events() {
    if (!taken.empty() || mounts_below()) return false;
    UniqueFd fd(::fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_DFID_NAME | FAN_REPORT_FID,
                                O_RDONLY | O_CLOEXEC));
    if (!fd || ::fanotify_mark(fd.get(), FAN_MARK_ADD | FAN_MARK_FILESYSTEM, kEventMask, root_fd.get(), nullptr) != 0) {
        fan_refused = true;  // the watcher's instead (leftovers_watcher.hpp)
        return false;
    }
    fan = std::move(fd);
    UniqueFd knob(::open("/proc/sys/fs/fanotify/max_queued_events", O_RDONLY | O_CLOEXEC));
    char text[32] = {};
    if (knob && ::read(knob.get(), text, sizeof text - 1) > 0) queue_max = std::strtoull(text, nullptr, 10);
    if (queue_max == 0) queue_max = 16384;
    return true;
}

// One event: directory DIR (a handle's key) had entry NAME (nullptr: itself) made, removed or
// changed; OBJECT is the entry's own handle (empty if none came).
void RepoWatch::State::note_event(const std::string& dir, const char* name, uint64_t mask, const std::string& object) {
    if (events_lost) return;
    auto it = event_index.find(dir);
    if (it == event_index.end()) {
        if (event_dirs.size() >= kMaxEventDirs) {
            events_lost = true;
            return;
        }
        it = event_index.emplace(dir, static_cast<uint32_t>(event_dirs.size())).first;
        event_dirs.push_back(EventDir{dir, std::nullopt, {}, {}});
    }
    // A directory made or moved there is read whole afterwards; another entry named is looked
    // at for other names (a hard link reaches a repository's files from anywhere).
    if (name == nullptr) return;
    const bool dir_made = (mask & FAN_ONDIR) != 0 && (mask & (FAN_CREATE | FAN_MOVED_TO)) != 0;
    if ((mask & FAN_ONDIR) != 0 && !dir_made) return;
    std::string key(name);
    if (!dir_made) key.append(1, '\0').append(object);
    if (event_names.size() >= kMaxMadeNames) {
        if (event_names.count({it->second, key}) == 0) events_lost = true;
        return;
    }
    if (!event_names.emplace(it->second, key).second) return;
    if (dir_made) {
        event_dirs[it->second].made.emplace_back(name);
    } else {
        event_dirs[it->second].files.emplace_back(name, object);
    }
}

namespace {

// The key of the handle in a DFID, DFID_NAME or FID record at BUF[AT, END) (type, then bytes),
// and where its name begins (DFID_NAME): empty if the record is malformed.
std::string handle_key(const char* buf, size_t at, size_t end, size_t& name_at) {
    const size_t handle_at = at + sizeof(struct fanotify_event_info_fid);
    struct file_handle fh {};
    if (handle_at + sizeof fh > end) return {};
    std::memcpy(&fh, buf + handle_at, sizeof fh);
    const size_t bytes_at = handle_at + sizeof fh;
    if (fh.handle_bytes > MAX_HANDLE_SZ || bytes_at + fh.handle_bytes > end) return {};
    std::string key(sizeof fh.handle_type + fh.handle_bytes, '\0');
    std::memcpy(key.data(), &fh.handle_type, sizeof fh.handle_type);
    std::memcpy(key.data() + sizeof fh.handle_type, buf + bytes_at, fh.handle_bytes);
    name_at = bytes_at + fh.handle_bytes;
    return key;
}

}  // namespace

// The object of handle KEY opened with FLAGS (not followed: it is what the kernel named).
UniqueFd RepoWatch::State::open_handle(const std::string& key, int flags) const {
    alignas(struct file_handle) char whole[sizeof(struct file_handle) + MAX_HANDLE_SZ];
    struct file_handle fh {};
    const size_t bytes = key.size() - sizeof fh.handle_type;
    if (key.size() < sizeof fh.handle_type || bytes > MAX_HANDLE_SZ) return UniqueFd();
    fh.handle_bytes = static_cast<unsigned int>(bytes);
    std::memcpy(&fh.handle_type, key.data(), sizeof fh.handle_type);
    std::memcpy(whole, &fh, sizeof fh);
    std::copy_n(key.begin() + sizeof fh.handle_type, bytes, whole + sizeof fh);
    return UniqueFd(::open_by_handle_at(root_fd.get(), reinterpret_cast<struct file_handle*>(whole), flags));
}

// The events queued (the poll loop calls this as they come, so that the queue does not overflow
// in a long run; finish once more). At most as many as the queue holds: the queue is in order,
// so those are all that were there when this began, and the host's own writes to the file
// system cannot keep it here.
void RepoWatch::State::drain_events() {
    if (!fan) return;
    const pid_t self = ::getpid();
    for (size_t read_now = 0; read_now <= queue_max;) {
        const ssize_t n = ::read(fan.get(), ebuf, sizeof ebuf);
        if (n <= 0) return;  // EAGAIN: none left
        const auto len = static_cast<size_t>(n);
        for (size_t off = 0; off + sizeof(struct fanotify_event_metadata) <= len;) {
            struct fanotify_event_metadata m {};
            std::memcpy(&m, ebuf + off, sizeof m);
            if (m.event_len < sizeof m || off + m.event_len > len) break;
            ++read_now;
            if (m.fd >= 0) ::close(m.fd);
            if (m.vers != FANOTIFY_METADATA_VERSION || (m.mask & FAN_Q_OVERFLOW) != 0) events_lost = true;
            const size_t end = off + m.event_len;
            // cordon's own (its placeholders, made and removed around the run) are not the run's.
            if (m.pid == self && (m.mask & FAN_Q_OVERFLOW) == 0) {
                off += m.event_len;
                continue;
            }
            std::string dir, object;
            const char* name = nullptr;
            for (size_t at = off + m.metadata_len; at + sizeof(struct fanotify_event_info_header) <= end;) {
                struct fanotify_event_info_header h {};
                std::memcpy(&h, ebuf + at, sizeof h);
                if (h.len == 0 || at + h.len > end) break;
                size_t name_at = 0;
                if (h.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME || h.info_type == FAN_EVENT_INFO_TYPE_DFID) {
                    dir = handle_key(ebuf, at, at + h.len, name_at);
                    if (!dir.empty() && h.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME && name_at < at + h.len &&
                        std::memchr(ebuf + name_at, '\0', at + h.len - name_at) != nullptr)
                        name = ebuf + name_at;
                } else if (h.info_type == FAN_EVENT_INFO_TYPE_FID) {
                    object = handle_key(ebuf, at, at + h.len, name_at);
                }
                at += h.len;
            }
            if (!dir.empty()) note_event(dir, name, m.mask, object);
            off += m.event_len;
        }
    }
}

// The node of directory REL (from the workdir) as it is now, opened without following a symlink
// (kNone when it is not there).
uint32_t RepoWatch::State::node_for(const std::string& rel) {
    if (rel.empty()) return 0;
    if (auto k = by_rel.find(rel); k != by_rel.end()) return k->second;
    const size_t slash = rel.rfind('/');
    const uint32_t parent = node_for(slash == std::string::npos ? std::string() : rel.substr(0, slash));
    if (parent == kNone) return kNone;
    const std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
    UniqueFd tmp;
    const int pfd = fd_of(parent, tmp);
    if (pfd < 0) return kNone;
    UniqueFd fd = open_subdir(pfd, name);  // after the run, made readable to its owner again
    auto sx = fd ? stat_at(fd.get(), "") : std::nullopt;
    if (!sx) return kNone;
    uint32_t i = kNone;
    if (auto k = by_id.find(id_of(*sx)); k != by_id.end()) {
        const Node& n = nodes[k->second];
        if (n.parent == parent && n.name == name && !n.gone) i = k->second;
    }
    if (i == kNone) i = add_node(std::move(fd), parent, name, id_of(*sx), sx->stx_ctime);
    by_rel[rel] = i;
    return i;
}

// Node I, or a directory above it, was made or moved where it is in the run.
bool RepoWatch::State::made_in_run(uint32_t i) const {
    for (; i != kNone; i = nodes[i].parent) {
        if (nodes[i].fresh) return true;
    }
    return false;
}

// Before the run, without a walk: the repositories and .git files the tree cache holds, where
// the same directory is still at the same path.
void RepoWatch::State::note_cached_repos() {
    const auto& dirs = cache->dirs;
    for (uint32_t c = 1; c < dirs.size(); ++c) {
        if (!dirs[c].has_head && !dirs[c].has_git) continue;
        std::string r;
        bool ok = true;
        for (uint32_t k = c; k != 0; k = dirs[k].parent) {
            if (dirs[k].parent == TreeCache::kNoParent || dirs[k].parent >= k) {
                ok = false;
                break;
            }
            r = r.empty() ? dirs[k].name : dirs[k].name + "/" + r;
        }
        if (!ok) continue;
        const uint32_t i = node_for(r);
        if (i == kNone || nodes[i].id != Id{dirs[c].dev, dirs[c].ino}) continue;
        nodes[i].cached = c;
        note_known(i, dirs[c].has_head, dirs[c].has_git);
    }
    if (dirs[0].has_git) nodes[0].has_git = true;
}

// Node I, which a view from before the run (the tree cache's, the watcher's) says holds a HEAD
// or a .git, noted so; one with a HEAD as it is now (Before), once.
void RepoWatch::State::note_known(uint32_t i, bool head, bool git) {
    nodes[i].has_head = nodes[i].has_head || head;
    nodes[i].has_git = nodes[i].has_git || git;
    if (!head || before.count(i) != 0) return;
    UniqueFd tmp;
    const int fd = fd_of(i, tmp);
    if (fd >= 0) note_before(i, fd, false);
}

namespace {

// TEXT, read as git reads a config (up to a bad line, as git does), sets a key git may run from:
// every such key has a section ("hello" alone, which git takes as a key, is in none).
bool sets_unsafe_key(std::string_view text) {
    const GitConfigParse parse = parse_git_config(text);
    return std::any_of(parse.entries.begin(), parse.entries.end(), [](const GitConfigEntry& e) {
        return e.key.find('.') != std::string::npos && !git_config_key_safe(e.key);
    });
}

}  // namespace

// An entry NAME of node I that the run made, wrote or changed, OBJECT its handle. One with
// another name (a hard link) sends the judging to the walk (LINK_MADE); one that is no longer
// there by that name (renamed, or a link removed) is looked for where it is now, and the
// directory that holds it is judged as one the events named (into TOUCHED).
void RepoWatch::State::judge_event_file(uint32_t i, const std::string& name, const std::string& object,
                                        std::vector<uint32_t>& touched) {
    UniqueFd tmp;
    const int fd = fd_of(i, tmp);
    if (fd < 0) return;
    auto fx = stat_at(fd, name.c_str());
    // The watcher sees every repository and .git file there is (the host's made since the last
    // run too), and each is judged: a link, a symlink or a common directory needs no walk to
    // find the repository it leads to.
    if (fx && !is_dir(*fx) && fx->stx_nlink > 1 && changed(*fx) && !watcher) {
        link_made = true;
        return;
    }
    // A file written that reads as a git config that runs code: a repository the host made
    // since the last run (no run saw it, and the events name nothing in it) may include it, or
    // have its config linked to it; only the walk finds that repository. Past the budget, the
    // walk too.
    if (fx && S_ISREG(fx->stx_mode) && changed(*fx) && !unsafe_written) {
        if (fx->stx_size > kMaxFile || fx->stx_size > written_budget) {
            unsafe_written = true;
            return;
        }
        written_budget -= fx->stx_size;
        auto text = read_small(fd, name.c_str());
        // With the watcher, only a file that reads as a config with a key git may run from walks
        // (the defence in depth costs nothing then): one that is no config at all (a source
        // file, a ref, HEAD) is one git refuses as a config.
        if (text && (watcher ? sets_unsafe_key(*text) : !git_config_unsafe(*text).empty())) {
            unsafe_written = true;
            return;
        }
    }
    if (object.empty()) return;
    UniqueFd obj = open_handle(object, O_PATH | O_CLOEXEC);
    if (!obj) return;  // removed: no name leads to it
    auto ox = stat_at(obj.get(), "");
    if (!ox) return;
    if (fx && id_of(*fx) == id_of(*ox)) return;  // still there by that name, its only one
    if (ox->stx_nlink > 1 && changed(*ox)) {
        link_made = true;
        return;
    }
    char proc[40];
    std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", obj.get());
    char path[4096];
    const ssize_t n = ::readlink(proc, path, sizeof path);
    const std::string prefix = root_real + "/";
    const std::string p =
        n > 0 && static_cast<size_t>(n) < sizeof path ? std::string(path, static_cast<size_t>(n)) : "";
    if (p.compare(0, prefix.size(), prefix) != 0) {
        link_made = true;  // not found in the workdir by its path: the walk finds it
        return;
    }
    const size_t slash = p.rfind('/');
    const std::string rel = slash + 1 > prefix.size() ? p.substr(prefix.size(), slash - prefix.size()) : "";
    const uint32_t d = node_for(rel);
    if (d == kNone) {
        link_made = true;
        return;
    }
    touched.push_back(d);
}

// After the run: each directory reported in the workdir read again, what was made in it read
// whole, and the directories above it probed for a HEAD (a change in .git/hooks is one to
// .git's repository).
void RepoWatch::State::judge_events() {
    by_rel.clear();
    for (Node& n : nodes) n.listed = n.whole = false;  // a listing from before the run is not this one
    watch_links = true;
    walked = static_cast<uint32_t>(nodes.size());
    const std::string prefix = root_real + "/";
    std::vector<uint32_t> touched;
    std::vector<std::string> subdirs;
    for (const EventDir& e : event_dirs) {
        std::string r;
        uint32_t i = kNone;
        if (e.rel) {  // the watcher's: its path now, with the jail gone
            r = *e.rel;
            i = node_for(r);
        } else {
            UniqueFd dir = open_handle(e.handle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (!dir) continue;  // removed since
            char proc[40];
            std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", dir.get());
            char path[4096];
            const ssize_t n = ::readlink(proc, path, sizeof path);
            if (n <= 0 || static_cast<size_t>(n) >= sizeof path) continue;
            const std::string p(path, static_cast<size_t>(n));
            if (p != root_real) {
                if (p.compare(0, prefix.size(), prefix) != 0) continue;  // not in the workdir
                r = p.substr(prefix.size());
            }
            auto sx = stat_at(dir.get(), "");
            i = node_for(r);
            if (i != kNone && (!sx || id_of(*sx) != nodes[i].id)) continue;
        }
        if (i == kNone) continue;
        touched.push_back(i);
        if (!nodes[i].listed) {
            UniqueFd tmp;
            const int fd = fd_of(i, tmp);
            if (fd < 0) continue;
            subdirs.clear();
            read_names(fd, i, subdirs);
        }
        // Read whole even where its own events listed it already (moved in, then written in).
        for (const auto& name : e.made) {
            const uint32_t c = node_for(join(r, name));
            if (c == kNone) continue;
            nodes[c].fresh = true;
            if (!nodes[c].whole) walk_from(c);
        }
        for (const auto& [name, object] : e.files) {
            if (!link_made) judge_event_file(i, name, object, touched);
        }
    }
    // A directory with objects/ and refs/ but no HEAD may be the common directory of a
    // repository elsewhere (its commondir, or a worktree's) that no run saw: only the walk finds
    // the repository whose config and hooks it holds.
    for (uint32_t i : touched) {
        for (uint32_t j = i; j != kNone && !nodes[j].probed; j = nodes[j].parent) {
            nodes[j].probed = true;
            UniqueFd tmp;
            const int fd = fd_of(j, tmp);
            if (fd < 0) continue;
            if (!nodes[j].listed && stat_at(fd, "HEAD")) nodes[j].has_head = true;
            if (nodes[j].has_head || common_seen || watcher) continue;
            auto ox = stat_at(fd, "objects");
            auto rx = ox && is_dir(*ox) ? stat_at(fd, "refs") : std::nullopt;
            common_seen = rx && is_dir(*rx);
        }
    }
}

// The watcher's, where one is ready (leftovers_watcher.hpp). Asked for its view only once the
// placeholders are made (ask_watcher): they are cordon's, not the run's.
bool RepoWatch::State::open_watcher() {
    if (!taken.empty()) return false;
    auto client = watcher::Client::connect(root, static_cast<dev_t>(nodes[0].id.first), nodes[0].id.second);
    if (!client || mounts_below()) return false;
    watcher = std::move(client);
    return true;
}

// The repositories and .git files the watcher sees now, noted as they are; from here on it keeps
// the run's events. Where it does not answer, the walk before the run is made now instead.
void RepoWatch::State::ask_watcher() {
    std::vector<watcher::Repo> repos;
    if (!watcher->start(repos)) {
        watcher.reset();
        watcher_lost = true;
        sparse = false;
        load_cache();
        walk_from(0);
        return;
    }
    for (const auto& repo : repos) {
        if (const uint32_t i = node_for(repo.rel); i != kNone) note_known(i, repo.head, repo.git);
    }
}

// The watcher's answer once the jail is gone, as events; none (the walk) where it has none.
void RepoWatch::State::watcher_events() {
    std::vector<watcher::Changed> changed;
    if (!watcher->finish(changed) || changed.size() > kMaxEventDirs) {
        events_lost = watcher_lost = true;
        return;
    }
    size_t names = 0;
    for (auto& c : changed) {
        names += c.made.size() + c.files.size();
        if (names > kMaxMadeNames) {
            events_lost = true;
            return;
        }
        EventDir e{std::string(), std::move(c.rel), std::move(c.made), {}};
        for (auto& f : c.files) e.files.emplace_back(std::move(f), std::string());
        event_dirs.push_back(std::move(e));
    }
}

// The group let go. Its last close waits out an RCU grace period (10 to 20 ms on this kernel,
// longer than a whole run): a helper process holds it until this one has closed its copy, and
// closes it then, out of the run's time.
void RepoWatch::State::release_events() {
    if (!fan) return;
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return fan.reset();
    const pid_t pid = ::fork();
    if (pid == 0) {
        for (Node& n : nodes) (void)n.fd.release();  // closed below
        (void)root_fd.release();
        close_fds_from(0, fan.get(), p[0]);
        char c = 0;
        while (::read(p[0], &c, 1) < 0 && errno == EINTR) {
        }
        ::_exit(0);
    }
    ::close(p[0]);
    fan.reset();
    ::close(p[1]);
}

// The walk before the run, told to end (after kAlwaysWalk directories) and waited for.
void RepoWatch::State::stop_walker() {
    if (!walker.joinable()) return;
    stop_walk.store(true, std::memory_order_relaxed);
    walker.join();
    if (!walk_todo.empty()) cut = sparse = true;
}

// Where the events cannot be trusted to be complete and there was no walk before the run: the
// whole tree, read now.
void RepoWatch::State::walk_sparse() {
    for (Node& n : nodes) n.listed = n.whole = false;
    walked = static_cast<uint32_t>(nodes.size());
    walk_from(0);
}

// Each repository found after the run that none noted before it: as from before where it is
// (Before), else made in the run.
void RepoWatch::State::infer_before() {
    for (uint32_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].gone || !nodes[i].has_head || before.count(i) != 0 || made_in_run(i)) continue;
        UniqueFd tmp;
        const int fd = fd_of(i, tmp);
        if (fd >= 0) note_before(i, fd, true);
    }
}

// The tree cache as events runs keep it: the repositories and .git files, and the directories
// on their way. Written only when it changes.
void RepoWatch::State::save_sparse_cache() {
    if (cache_path.empty()) return;
    std::vector<bool> keep(nodes.size(), false);
    for (uint32_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].gone || (!nodes[i].has_head && !nodes[i].has_git)) continue;
        for (uint32_t j = i; j != kNone && !keep[j]; j = nodes[j].parent) keep[j] = true;
    }
    keep[0] = true;
    const TreeCache c = tree_of(&keep);
    if (cache && cache->dirs.size() == c.dirs.size()) {
        bool same = true;
        for (size_t k = 0; k < c.dirs.size() && same; ++k) {
            const auto &a = cache->dirs[k], &b = c.dirs[k];
            same = a.parent == b.parent && a.name == b.name && a.ino == b.ino && a.dev == b.dev &&
                   a.has_head == b.has_head && a.has_git == b.has_git && !a.complete;
        }
        if (same) return;
    }
    (void)save_tree_cache(cache_path, c);
}

}  // namespace cordon

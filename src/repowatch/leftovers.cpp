// RepoWatch (leftovers.hpp): the workdir read once while the run goes on, read again where it
// changed, and every repository the run made or changed judged as git would read it.
#include "cordon/leftovers.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "cordon/fd.hpp"
#include "cordon/git_config.hpp"
#include "cordon/json.hpp"
#include "cordon/paths.hpp"
#include "cordon/runtime_dir.hpp"
#include "leftovers_state.hpp"
#include "tree_cache.hpp"

namespace cordon {

using namespace watch;  // NOLINT(google-build-using-namespace): this module's own helpers

std::string RepoWatch::State::rel(uint32_t i) const {
    std::string r;
    for (; i != kNone && nodes[i].parent != kNone; i = nodes[i].parent)
        r = r.empty() ? nodes[i].name : nodes[i].name + "/" + r;
    return r;
}

// A node's directory by its path from the workdir, never through a symlink; invalid when it is
// not there, or another directory is there now.
UniqueFd RepoWatch::State::reopen(uint32_t i) {
    UniqueFd fd = open_beneath(root_fd.get(), rel(i));
    auto sx = fd ? stat_at(fd.get(), "") : std::nullopt;
    if (!sx || id_of(*sx) != nodes[i].id) return {};
    return fd;
}

int RepoWatch::State::fd_of(uint32_t i, UniqueFd& tmp) {
    if (nodes[i].fd) return nodes[i].fd.get();
    tmp = reopen(i);
    return tmp.get();
}

uint32_t RepoWatch::State::add_node(UniqueFd fd, uint32_t parent, const std::string& name, Id id,
                                    const struct statx_timestamp& ctime) {
    const auto i = static_cast<uint32_t>(nodes.size());
    Node n;
    if (fd_budget > 0) {
        --fd_budget;
        n.fd = std::move(fd);
    }
    n.parent = parent;
    n.name = name;
    n.id = id;
    n.ctime = ctime;
    n.fresh = parent != kNone && nodes[parent].fresh;
    // Found somewhere else than the walk saw it: moved there in the run.
    if (auto old = by_id.find(n.id); old != by_id.end()) nodes[old->second].gone = true;
    by_id[n.id] = i;
    nodes.push_back(std::move(n));
    return i;
}

// The names of node I that matter: its subdirectories (into SUBDIRS), HEAD and .git. In any
// case: in a case-folding directory (ext4's and tmpfs' casefold) git's lstat("HEAD") finds
// "head"; judge_gitdir and judge_gitfile then look the names up as git does.
void RepoWatch::State::read_names(int fd, uint32_t i, std::vector<std::string>& subdirs) {
    bool head = false, git = false;
    const bool whole = for_each_entry(
        fd, buf, sizeof buf,
        [&](const char* name, unsigned char type) {
            if (::strcasecmp(name, "HEAD") == 0) head = true;
            if (::strcasecmp(name, ".git") == 0) git = true;
            if (type == DT_UNKNOWN) {
                auto sx = stat_at(fd, name);
                type = !sx ? DT_REG : is_dir(*sx) ? DT_DIR : S_ISLNK(sx->stx_mode) ? DT_LNK : DT_REG;
            }
            if (type == DT_DIR) subdirs.emplace_back(name);
            if (type == DT_LNK && watch_links && !symlink_made) {
                auto sx = stat_at(fd, name);
                symlink_made = sx && S_ISLNK(sx->stx_mode) && changed(*sx);
            }
        },
        after, fills_getdents && nodes[i].id.first == nodes[0].id.first);
    nodes[i].has_head = head;
    nodes[i].has_git = git;
    nodes[i].complete = whole;
    nodes[i].listed = true;
    ++listings_read;
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

// Reads node FIRST and what is below it that the walk has not read where it is now, a
// repository's objects/ too: git finds a repository or a .git file there as anywhere else.
void RepoWatch::State::walk_from(uint32_t first) {
    std::vector<uint32_t> todo{first};
    walk_list(todo, false);
}

// The walk of walk_from over TODO. STOPPABLE: it ends when told (stop_walk), once it has read
// kAlwaysWalk directories, with what is left in TODO: a tree that size is always read whole.
void RepoWatch::State::walk_list(std::vector<uint32_t>& todo, bool stoppable) {
    std::vector<std::string> subdirs;
    while (!todo.empty()) {
        if (stoppable && listings_read >= kAlwaysWalk && stop_walk.load(std::memory_order_relaxed)) return;
        const uint32_t i = todo.back();
        todo.pop_back();
        if (!after && nodes[i].cached != kNone && use_cached(i, todo)) continue;
        UniqueFd tmp;
        const int fd = fd_of(i, tmp);
        if (fd < 0) continue;
        subdirs.clear();
        read_names(fd, i, subdirs);
        if (after) nodes[i].whole = true;
        if (nodes[i].has_head && !after) note_before(i, fd, false);
        for (const auto& name : subdirs) {
            UniqueFd sub = open_subdir(fd, name);
            auto sx = sub ? stat_at(sub.get(), "") : std::nullopt;
            if (!sx) {
                // Not a directory any more is fine; one that could not be read leaves the
                // listing incomplete, never to be trusted from the cache.
                if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP) nodes[i].complete = false;
                continue;
            }
            if (auto known = by_id.find(id_of(*sx)); known != by_id.end()) {
                const Node& k = nodes[known->second];
                const bool here = k.parent == i && k.name == name && !k.gone;
                // Known but not read whole since the run (no walk before it: walk_sparse,
                // judge_events): read now.
                if (here && sparse && after && !k.whole) {
                    todo.push_back(known->second);
                    continue;
                }
                // Read already: there, or before the run anywhere (a bind mount inside the
                // workdir), or after it (a bind mount that holds itself).
                if (here || !after || known->second >= walked) continue;
            }
            const uint32_t j = add_node(std::move(sub), i, name, id_of(*sx), sx->stx_ctime);
            nodes[j].cached = cached_child(i, name, nodes[j].id);
            todo.push_back(j);
        }
    }
}

// Node I as it is now, by its path (never through a symlink at the end; the directories on
// the way are nodes checked before it).
std::optional<struct statx> RepoWatch::State::stat_node(uint32_t i) const {
    if (nodes[i].fd) return stat_at(nodes[i].fd.get(), "");
    const std::string r = rel(i);
    return stat_at(root_fd.get(), r.c_str());
}

// The child NAME (identity ID) of node I's entry in the tree cache, if it has one.
uint32_t RepoWatch::State::cached_child(uint32_t i, const std::string& name, Id id) const {
    if (!cache || nodes[i].cached == kNone) return kNone;
    for (uint32_t c : cache->children[nodes[i].cached]) {
        const TreeCache::Dir& d = cache->dirs[c];
        if (d.name == name && Id{d.dev, d.ino} == id) return c;
    }
    return kNone;
}

// Node I from the tree cache instead of a read, where its listing there still holds: the same
// directory, with the same ctime, older than the listing. Its repositories are still looked at.
bool RepoWatch::State::use_cached(uint32_t i, std::vector<uint32_t>& todo) {
    const TreeCache::Dir& c = cache->dirs[nodes[i].cached];
    auto sx = stat_node(i);
    if (!sx || !is_dir(*sx)) {
        nodes[i].gone = true;  // not there any more
        return true;
    }
    if (id_of(*sx) != nodes[i].id) {  // another directory there now: read it as new
        nodes[i].cached = kNone;
        if (by_id.count(id_of(*sx)) != 0) {
            nodes[i].gone = true;
            return true;
        }
        by_id.erase(nodes[i].id);
        nodes[i].id = id_of(*sx);
        by_id[nodes[i].id] = i;
        return false;
    }
    nodes[i].ctime = sx->stx_ctime;
    const bool older = precedes(c.ctime_sec, c.ctime_nsec, less_slack(cache->listed_at));
    if (!c.complete || !older || sx->stx_ctime.tv_sec != c.ctime_sec || sx->stx_ctime.tv_nsec != c.ctime_nsec) {
        return false;  // read it; its children may still come from the cache
    }
    nodes[i].has_head = c.has_head;
    nodes[i].has_git = c.has_git;
    nodes[i].complete = true;
    if (c.has_head) {
        UniqueFd tmp;
        const int fd = fd_of(i, tmp);
        if (fd >= 0) note_before(i, fd, false);
    }
    for (uint32_t cc : cache->children[nodes[i].cached]) {
        const TreeCache::Dir& d = cache->dirs[cc];
        if (by_id.count(Id{d.dev, d.ino}) != 0) continue;  // a bind mount seen already
        const uint32_t j = add_node(UniqueFd(), i, d.name, Id{d.dev, d.ino}, {});
        nodes[j].cached = cc;
        todo.push_back(j);
    }
    return true;
}

// The tree cache of the last run in the workdir, where there is one for this directory.
void RepoWatch::State::load_cache() {
    if (!cache_path.empty()) cache = load_tree_cache(cache_path, root);
    if (cache && !cache->dirs.empty() && Id{cache->dirs[0].dev, cache->dirs[0].ino} == nodes[0].id) nodes[0].cached = 0;
}

// The nodes still there (those KEEP marks, where given) as a tree cache, parents first; the
// listings of a sparse one (KEEP) are not complete.
TreeCache RepoWatch::State::tree_of(const std::vector<bool>* keep) const {
    TreeCache c;
    c.root = root;
    c.listed_at = listed_at;
    std::vector<uint32_t> index(nodes.size(), kNone);
    for (uint32_t i = 0; i < nodes.size(); ++i) {
        const Node& n = nodes[i];
        if ((keep && !(*keep)[i]) || n.gone || (n.parent != kNone && index[n.parent] == kNone)) continue;
        index[i] = static_cast<uint32_t>(c.dirs.size());
        c.dirs.push_back(TreeCache::Dir{n.parent == kNone ? TreeCache::kNoParent : index[n.parent], n.name,
                                        static_cast<uint64_t>(n.id.first), static_cast<uint64_t>(n.id.second),
                                        static_cast<int64_t>(n.ctime.tv_sec), n.ctime.tv_nsec, n.has_head, n.has_git,
                                        keep == nullptr && n.complete});
    }
    return c;
}

// The tree as this run leaves it, for the next (every node still there, parents first).
void RepoWatch::State::save_cache() {
    // A few listings read again (the workdir's top and .git, where placeholders come and go)
    // are cheaper than a new cache each run: renaming a file over the old one costs more.
    constexpr size_t kReadsWorthSaving = 16;
    if (cache_path.empty() || (cache && listings_read <= kReadsWorthSaving)) return;
    const TreeCache c = tree_of(nullptr);
    (void)save_tree_cache(cache_path, c);
}

// Node I, whose HEAD predates the run, as it was before it (Before). Whether HEAD is valid
// does not matter: every directory with a HEAD is judged in every run, so what one holds from
// before is what earlier runs left and were judged on, or the user's own. AFTER_RUN: noted only
// now (leftovers_events.cpp), where no directory on its path was made in the run: what is older
// than the run is from before it, and no copy is kept of what the run changed.
void RepoWatch::State::note_before(uint32_t i, int fd, bool after_run) {
    // objects/ by its birth: its ctime moves with every commit, of this run or another one.
    for (const char* part : {"HEAD", "refs", "commondir", "objects"}) {
        struct statx sx {};
        const bool objects = std::strcmp(part, "objects") == 0;
        if (::statx(fd, part, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC, STATX_CTIME | STATX_BTIME, &sx) != 0) {
            if (std::strcmp(part, "HEAD") != 0) continue;
            return;
        }
        const struct statx_timestamp& t = objects ? sx.stx_btime : sx.stx_ctime;
        if (objects && !(sx.stx_mask & STATX_BTIME)) continue;
        if (!precedes(t.tv_sec, t.tv_nsec, t0)) return;
    }
    Before b;
    // Kept only while the budget lasts: a jail can leave any number of repositories, their
    // configs hard links to one large file, and a later run's copies would grow with them.
    auto snapshot = [&](const char* name, Snapshot& into) {
        auto sx = stat_at(fd, name);
        if (after_run) {  // judged only where the run changed it: then there is no copy
            into.lost = "cordon had not read this repository before the run";
            return;
        }
        if (!sx) {
            into.text = std::string();
            return;
        }
        if (changed(*sx)) {
            into.lost = "it changed as the run started";
            return;
        }
        if (precedes(sx->stx_ctime.tv_sec, sx->stx_ctime.tv_nsec, t0) &&
            !precedes(sx->stx_ctime.tv_sec, sx->stx_ctime.tv_nsec, trusted_before)) {
            into.lost = "it changed while another run in this workdir went on, which may have written it";
            return;
        }
        if (sx->stx_size > kMaxFile) {
            into.lost = "it was over 1 MiB";
            return;
        }
        if (sx->stx_size > snapshot_budget) {
            into.lost = "no copy was kept: this run's budget for copies (8 MiB) was spent";
            return;
        }
        into.text = read_small(fd, name, std::min(kMaxFile, snapshot_budget));
        auto again = stat_at(fd, name);
        if (!into.text || !again || again->stx_ino != sx->stx_ino || changed(*again)) {
            into.text.reset();
            into.lost = "it changed while it was read";
            return;
        }
        snapshot_budget -= into.text->size();
        into.mode = sx->stx_mode & 07777;
    };
    snapshot("config", b.config);
    snapshot("config.worktree", b.config_worktree);
    UniqueFd hooks = open_dir_at(fd, "hooks");
    auto hsx = hooks ? stat_at(hooks.get(), "") : std::nullopt;
    bool hooks_before = hsx && !changed(*hsx);
    if (hsx && after_run) {  // the same directory unless it was made or moved there in the run
        const auto made = by_rel.find(join(rel(i), "hooks"));
        hooks_before = made == by_rel.end() || !nodes[made->second].fresh;
    }
    if (hooks_before) {
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
        if (nodes[i].gone || (nodes[i].parent != kNone && nodes[nodes[i].parent].gone)) {
            nodes[i].gone = true;
            continue;
        }
        auto sx = stat_node(i);
        if (!sx || !is_dir(*sx) || sx->stx_nlink == 0 || id_of(*sx) != nodes[i].id) {
            nodes[i].gone = true;
            continue;
        }
        nodes[i].ctime = sx->stx_ctime;
        if (changed(*sx)) walk_from(i);
    }
}

// --- RepoWatch ----------------------------------------------------------------------------------

RepoWatch::RepoWatch(std::unique_ptr<State> state) : state_(std::move(state)) {}

RepoWatch::~RepoWatch() {
    cancel();
}

std::unique_ptr<RepoWatch> RepoWatch::start(const std::string& workdir) {
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
    return start(workdir, less_slack(now));
}

std::unique_ptr<RepoWatch> RepoWatch::start(const std::string& workdir, struct timespec now) {
    auto s = std::make_unique<State>();
    s->root = normalize_path(workdir, "/");
    if (char real[PATH_MAX]; real_path(s->root, real)) s->root_real = real;
    s->t0 = now;
    s->root_fd = open_dir_at(AT_FDCWD, s->root.c_str());
    auto sx = s->root_fd ? stat_at(s->root_fd.get(), "") : std::nullopt;
    if (!sx) return nullptr;
    struct statfs fs {};
    if (::fstatfs(s->root_fd.get(), &fs) == 0) {
        s->fills_getdents = fs.f_type == EXT4_SUPER_MAGIC || fs.f_type == XFS_SUPER_MAGIC ||
                            fs.f_type == BTRFS_SUPER_MAGIC || fs.f_type == TMPFS_MAGIC;
    }
    s->trusted_before = s->t0;
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
    s->add_node(UniqueFd(::fcntl(s->root_fd.get(), F_DUPFD_CLOEXEC, 0)), kNone, "", id_of(*sx), sx->stx_ctime);
    State* state = s.get();
    // A watcher's view needs no tree cache (reading a large one costs more than the rest).
    if (state->open_watcher()) {
        state->sparse = true;
        return std::unique_ptr<RepoWatch>(new RepoWatch(std::move(s)));
    }
    state->load_cache();
    // With events (leftovers_events.cpp) only a first run in the workdir reads the tree, and
    // that on a thread while the run goes on, after a head start. A tree no larger than the
    // head start is read (or checked against its cache) instead: that costs less than a group.
    const bool cached = state->nodes[0].cached == 0;
    const bool small = cached && state->cache->dirs[0].complete && state->cache->dirs.size() <= kAlwaysWalk;
    if (cached && !small && state->open_events()) {
        state->sparse = true;
        state->note_cached_repos();
    } else if (!cached) {
        // The first kAlwaysWalk directories read now, before the command can change them; the
        // rest it races, and only what is older than the run counts as from before (note_before).
        state->walk_todo = {0};
        state->stop_walk.store(true, std::memory_order_relaxed);
        state->walk_list(state->walk_todo, true);
        state->stop_walk.store(false, std::memory_order_relaxed);
        if (!state->walk_todo.empty() && state->open_events()) {
            // The descriptor table grown now: grown beside a thread, each doubling would wait
            // for an RCU grace period. The walker keeps fewer descriptors than fit.
            constexpr int kTable = 2048;
            constexpr size_t kWalkerFds = 512;
            if (int high = ::fcntl(state->root_fd.get(), F_DUPFD_CLOEXEC, kTable - 1); high >= 0) ::close(high);
            state->fd_budget = std::min(state->fd_budget, kWalkerFds);
            try {
                state->walker = std::thread([state] { state->walk_list(state->walk_todo, true); });
            } catch (const std::system_error&) {
                state->walk_list(state->walk_todo, false);
            }
        } else {
            state->walk_list(state->walk_todo, false);
        }
    } else {
        state->walk_from(0);
    }
    return std::unique_ptr<RepoWatch>(new RepoWatch(std::move(s)));
}

std::vector<Quarantined> RepoWatch::finish() {
    State& s = *state_;
    s.stop_walker();  // before AFTER changes: the walker reads it
    s.after = true;
    ::clock_gettime(CLOCK_REALTIME_COARSE, &s.listed_at);
    if (s.fan || s.watcher) {
        if (s.fan) {
            s.drain_events();
        } else {
            s.watcher_events();
        }
        // A walk before the run that did not reach the end: what it left is read now, and the
        // repositories there are judged as ones no run saw (infer_before), whatever their events.
        if (s.cut) {
            s.walked = static_cast<uint32_t>(s.nodes.size());
            s.walk_list(s.walk_todo, false);
            s.walk_todo.clear();
        }
        if (!s.events_lost) s.judge_events();
        if (s.needs_walk()) {
            if (s.sparse) {
                s.walk_sparse();
            } else {
                s.reread_changed();
            }
        }
        // Moved or removed since they were noted (a move is found where it led, as new).
        for (uint32_t i = 1; i < s.nodes.size(); ++i) {
            if (!s.nodes[i].gone && (s.nodes[i].has_head || s.nodes[i].has_git) && !s.reopen(i)) s.nodes[i].gone = true;
        }
        if (!s.events_lost) s.infer_before();
        s.judge_all();
        // The watcher keeps the tree: the cache stays the last walk's, for when it ends.
        if (s.fan) s.save_sparse_cache();
    } else {
        s.reread_changed();
        s.judge_all();
        s.save_cache();
    }
    s.drop_marks(true);
    // A large tree that fanotify cannot watch for this caller: a watcher for the next runs.
    const bool spawn = (s.fan_refused && !s.watcher && s.nodes.size() > kAlwaysWalk) || s.watcher_lost;
    const std::string root = s.root;
    judged_by_ = s.needs_walk() ? "walk" : s.fan ? "events" : s.watcher ? "watcher" : "walk";
    std::vector<Quarantined> out = std::move(s.out);
    cancel();
    if (spawn) watcher::spawn(root);
    return out;
}

// The nodes' descriptors closed in runs of consecutive numbers, one close_range each: a walk
// leaves thousands, and one close each is a system call each.
void RepoWatch::State::close_node_fds() {
    std::vector<unsigned> fds;
    fds.reserve(nodes.size());
    for (Node& n : nodes) {
        if (n.fd) fds.push_back(static_cast<unsigned>(n.fd.release()));
    }
    std::sort(fds.begin(), fds.end());
    for (size_t a = 0; a < fds.size();) {
        size_t b = a;
        while (b + 1 < fds.size() && fds[b + 1] == fds[b] + 1) ++b;
        if (::close_range(fds[a], fds[b], 0) != 0) {
            for (size_t k = a; k <= b; ++k) ::close(static_cast<int>(fds[k]));
        }
        a = b + 1;
    }
}

void RepoWatch::before_command() {
    if (state_ && state_->watcher) state_->ask_watcher();
}

void RepoWatch::own_protections_writable() {
    if (state_) state_->own_writable = true;
}

int RepoWatch::events_fd() const {
    return state_ && state_->fan ? state_->fan.get() : -1;
}

void RepoWatch::on_events() {
    if (state_) state_->drain_events();
}

void RepoWatch::cancel() {
    if (!state_) return;
    state_->stop_walker();
    state_->release_events();
    state_->close_node_fds();
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

// RepoWatch's watcher (leftovers_watcher.hpp). fanotify's directory-entry events need
// CAP_SYS_ADMIN on the host; inotify needs nothing, but watches one directory each, and setting
// them up costs a walk. So a run in a large workdir that could not use fanotify starts, when it
// ends, a process that sets them up once and keeps them:
//
//   the watcher   cordon itself, started as "cordon-repowatch ROOT DIR" in a session of its
//                 own, not dumpable (no process of the user's may trace it), stdio on
//                 /dev/null. It holds DIR/HASH.lock for its life (one per workdir), reads the
//                 tree with a watch on each directory before it listens on DIR/HASH.sock (so a
//                 run that reaches it is watched whole), and then follows the events: a
//                 directory made or moved in is watched and read (opened a name at a time from
//                 the workdir; one whose path went stale is kept until the events say where it
//                 went, one that cannot be read ends the watcher), one removed or moved out is
//                 forgotten. It ends after ten minutes without a run, when the workdir is
//                 removed or moved, and on anything that makes its view incomplete: the queue
//                 overflowed, a watch refused (fs.inotify.max_user_watches), over a million
//                 directories, or one 512 deep (then no new watcher is started for ten minutes).
//   a run         connects while the child builds the jail and asks 'S': the watcher takes
//                 every queued event, and answers the directories that hold a HEAD or a .git
//                 now; from then on it keeps the events. Once the jail is gone the run asks
//                 'F': the kernel queued every event of the jail's system calls before they
//                 returned, so the watcher takes the queue to its end and answers every
//                 directory with events since 'S', with the names. RepoWatch judges those as
//                 it judges fanotify's (leftovers_events.cpp), and walks where the watcher
//                 lost events, is gone, or does not answer in time.
//
// DIR is in cordon's private runtime directory (0700, the user's), out of every jail's sight;
// both ends check the other's uid (SO_PEERCRED), and a run checks that the watcher's workdir is
// its own by device and inode. A jail that reaches the socket anyway (the Landlock jail shares
// the host's view) learns names it can read, and can end the watcher, which only makes the runs
// walk. The watcher never reads a file, follows a symlink or runs anything.
#include "leftovers_watcher.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "cordon/diag.hpp"
#include "cordon/leftovers.hpp"
#include "cordon/runtime_dir.hpp"
#include "leftovers_state.hpp"
#include "leftovers_watcher_daemon.hpp"

namespace cordon::watcher {

namespace {

using namespace wire;  // NOLINT(google-build-using-namespace): the protocol's own

constexpr size_t kMaxNodes = size_t{1} << 20;
constexpr size_t kMaxDepth = 512;
constexpr size_t kMaxClients = 64;
constexpr int kIdleSeconds = 600;
// No IN_MODIFY: a file opened for writing reports IN_CLOSE_WRITE when closed, and by the 'F'
// of a run every file its jail held is closed (as with fanotify's FAN_CLOSE_WRITE).
constexpr uint32_t kMask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_CLOSE_WRITE |
                           IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;

bool is_name(const char* name, const char* of) {
    return ::strcasecmp(name, of) == 0;
}

}  // namespace

// --- the watcher --------------------------------------------------------------------------------

uint32_t Daemon::add_node(uint32_t parent, const std::string& name) {
    uint32_t i = 0;
    if (!free_.empty()) {
        i = free_.back();
        free_.pop_back();
    } else {
        i = static_cast<uint32_t>(nodes_.size());
        nodes_.emplace_back();
    }
    Node& n = nodes_[i];
    n.parent = parent;
    n.name = name;
    n.wd = -1;
    n.head = n.git = false;
    n.live = true;
    if (parent != kNoNode) children_[{parent, name}] = i;
    return i;
}

uint32_t Daemon::child(uint32_t parent, const std::string& name) const {
    auto it = children_.find({parent, name});
    return it == children_.end() ? kNoNode : it->second;
}

// Node TOP and what is below it forgotten, their watches removed.
void Daemon::forget(uint32_t top) {
    std::vector<uint32_t> todo{top};
    while (!todo.empty()) {
        const uint32_t i = todo.back();
        todo.pop_back();
        Node& n = nodes_[i];
        if (!n.live) continue;
        for (auto it = children_.lower_bound({i, std::string()}); it != children_.end() && it->first.first == i;) {
            todo.push_back(it->second);
            it = children_.erase(it);
        }
        if (n.parent != kNoNode) {
            auto up = children_.find({n.parent, n.name});
            if (up != children_.end() && up->second == i) children_.erase(up);
        }
        if (n.wd >= 0) {
            (void)::inotify_rm_watch(ino_.get(), n.wd);
            by_wd_.erase(n.wd);
        }
        n.live = false;
        ++n.gen;
        repos_.erase(i);
        n.name.clear();
        free_.push_back(i);
    }
}

bool Daemon::watch(uint32_t i, int fd) {
    char proc[40];
    std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    const int wd = ::inotify_add_watch(ino_.get(), proc, kMask);
    if (wd < 0) {
        failed_ = true;  // ENOSPC: fs.inotify.max_user_watches
        return false;
    }
    // The same directory twice (a bind mount below the workdir): the view would be wrong.
    if (auto other = by_wd_.find(wd); other != by_wd_.end() && other->second != i) return false;
    nodes_[i].wd = wd;
    by_wd_[wd] = i;
    return true;
}

// Node I's listing: HEAD and .git looked for, its subdirectories into SUBDIRS.
bool Daemon::list(uint32_t i, int fd, std::vector<std::string>& subdirs) {
    bool head = false, git = false;
    const bool whole = watch::for_each_entry(
        fd, dents_, sizeof dents_,
        [&](const char* name, unsigned char type) {
            head = head || is_name(name, "HEAD");
            git = git || is_name(name, ".git");
            if (type == DT_UNKNOWN) {
                struct stat st {};
                type = ::fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
            }
            if (type == DT_DIR) subdirs.emplace_back(name);
        },
        false);
    if (!whole) return errno == ENOENT;  // removed meanwhile: its events say so
    nodes_[i].head = head;
    nodes_[i].git = git;
    if (head || git) {
        repos_.insert(i);
    } else {
        repos_.erase(i);
    }
    return true;
}

// Node TOP (open at FD) watched and read, then each directory below it: a watch first, then the
// listing, so that an entry made meanwhile is in one or the other. One descriptor per level.
bool Daemon::scan(uint32_t top, UniqueFd fd) {
    struct Frame {
        uint32_t node;
        UniqueFd fd;
        std::vector<std::string> subdirs;
        size_t next = 0;
    };
    std::vector<Frame> stack;
    auto enter = [&](uint32_t i, UniqueFd dir) {
        if (!watch(i, dir.get())) return false;
        Frame f{i, std::move(dir), {}, 0};
        if (!list(i, f.fd.get(), f.subdirs)) return false;
        stack.push_back(std::move(f));
        return true;
    };
    if (!enter(top, std::move(fd))) return false;
    while (!stack.empty()) {
        Frame& f = stack.back();
        if (f.next == f.subdirs.size()) {
            stack.pop_back();
            continue;
        }
        const std::string name = f.subdirs[f.next++];
        UniqueFd sub(::openat(f.fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!sub) {
            if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) continue;  // its events say so
            failed_ = true;  // unreadable (EACCES): a view without it is not whole
            return false;
        }
        if (stack.size() >= kMaxDepth || nodes_.size() - free_.size() >= kMaxNodes) {
            failed_ = true;
            return false;
        }
        const uint32_t parent = f.node;
        uint32_t i = child(parent, name);
        if (i != kNoNode) forget(i);
        i = add_node(parent, name);
        if (!enter(i, std::move(sub))) return false;
    }
    return true;
}

std::string Daemon::rel(uint32_t i) const {
    std::string r;
    for (; i != kNoNode && nodes_[i].parent != kNoNode; i = nodes_[i].parent)
        r = r.empty() ? nodes_[i].name : nodes_[i].name + "/" + r;
    return r;
}

// Directory REL of the workdir, one component at a time from the workdir (no PATH_MAX, no
// symlink followed), the last for reading; the workdir is opened anew each time and checked to be
// the same directory (a descriptor kept open would hold back its IN_DELETE_SELF). Invalid with
// errno set; ROOT_GONE says the workdir itself is not there.
UniqueFd Daemon::open_rel(const std::string& rel, bool& root_gone) const {
    UniqueFd fd(::open(root_.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    root_gone = !fd || ::fstat(fd.get(), &st) != 0 || st.st_dev != dev_ || st.st_ino != root_ino_;
    if (root_gone) return UniqueFd();
    for (size_t at = 0; at < rel.size();) {
        size_t end = rel.find('/', at);
        if (end == std::string::npos) end = rel.size();
        const std::string part = rel.substr(at, end - at);
        const int flags = (end == rel.size() ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
        fd.reset(::openat(fd.get(), part.c_str(), flags));
        if (!fd) return fd;
        at = end + 1;
    }
    return fd;
}

void Daemon::note(uint32_t node, Kind kind, const char* name) {
    bool live = false;
    for (const Conn& c : conns_) live = live || c.started;
    ++seq_;
    if (!live) {  // no run to keep them for
        dropped_to_ = seq_;
        return;
    }
    if (log_.size() >= kMaxLog) {
        dropped_to_ = log_.front().seq;
        log_.pop_front();
    }
    log_.push_back(Event{seq_, node, nodes_[node].gen, kind, name ? std::string(name) : std::string()});
}

// Every event queued, taken in: false where the view is no longer whole.
bool Daemon::drain() {
    for (int round = 0;; ++round) {
        bool any = false;
        if (!read_queue(any)) return false;
        if (made_.empty()) return true;
        if (!watch_made()) return false;
        if (made_.empty()) return true;
        // A directory made whose path no longer leads to it: the rename or removal that moved it
        // is queued as its system call ends. Read on for it, a while; then the view is lost.
        constexpr int kRounds = 200;
        if (round >= kRounds) return false;
        if (!any) {
            const struct timespec ms { 0, 1000L * 1000 };
            ::nanosleep(&ms, nullptr);
        }
    }
}

// The queue read to its end, each event taken in (ANY: there was one).
bool Daemon::read_queue(bool& any) {
    for (;;) {
        const ssize_t n = ::read(ino_.get(), buf_, sizeof buf_);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) break;
        if (n <= 0) return false;
        any = true;
        for (ssize_t off = 0; off + static_cast<ssize_t>(sizeof(struct inotify_event)) <= n;) {
            struct inotify_event e {};
            std::memcpy(&e, buf_ + off, sizeof e);
            const char* name = e.len > 0 ? buf_ + off + sizeof e : nullptr;
            off += static_cast<ssize_t>(sizeof e + e.len);
            if ((e.mask & IN_Q_OVERFLOW) != 0) return false;
            auto at = by_wd_.find(e.wd);
            if (at == by_wd_.end()) continue;  // a watch forgotten already
            const uint32_t d = at->second;
            if ((e.mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)) != 0) {
                if (d == 0) return false;  // the workdir itself removed or moved
                if ((e.mask & IN_MOVE_SELF) == 0) forget(d);
                continue;
            }
            if (name == nullptr || *name == '\0') {
                note(d, kItself, nullptr);
                continue;
            }
            const bool dir = (e.mask & IN_ISDIR) != 0;
            note(d, dir && (e.mask & (IN_CREATE | IN_MOVED_TO)) != 0 ? kMade : kEntry, name);
            if (is_name(name, "HEAD") || is_name(name, ".git")) {
                if ((e.mask & (IN_CREATE | IN_MOVED_TO)) != 0) {
                    (is_name(name, "HEAD") ? nodes_[d].head : nodes_[d].git) = true;
                    repos_.insert(d);
                }
                // Removed or moved away: the listing says whether another spelling stays; an
                // answer in between may name it still (it is only looked at).
            }
            if (!dir) continue;
            // A directory is known by its path only (inotify names no inode), and a path is
            // opened after its event: so one removed or moved away is forgotten with what is
            // below it, and one moved in is read anew where it lands, as one made there. A
            // node is never relabelled: the directory at a path when it was opened may not be
            // the one a later move event was about.
            if ((e.mask & (IN_DELETE | IN_MOVED_FROM)) != 0) {
                std::erase_if(made_, [&](const Made& m) { return m.parent == d && m.name == name; });
                if (const uint32_t c = child(d, name); c != kNoNode) forget(c);
            } else if ((e.mask & IN_MOVED_TO) != 0 && child(d, name) != kNoNode) {
                // Onto a directory that is there: a rename over an empty one, or an exchange
                // (RENAME_EXCHANGE), whose two moves inotify cannot tell apart from here. The
                // view would be wrong either way: it is lost.
                return false;
            } else if ((e.mask & (IN_CREATE | IN_MOVED_TO)) != 0) {
                made_.push_back(Made{d, nodes_[d].gen, name});
            }
        }
    }
    return true;
}

// Each directory made watched and read. One that cannot be opened for another reason than its
// path (a mode without read: inotify needs it, a descriptor table full) loses the view; one whose
// path no longer leads to it stays in MADE_ for the events that say where it went.
bool Daemon::watch_made() {
    std::vector<Made> left;
    for (Made& m : made_) {
        if (!nodes_[m.parent].live || nodes_[m.parent].gen != m.gen) continue;  // went with its parent
        const std::string r = rel(m.parent);
        bool root_gone = false;
        UniqueFd fd = open_rel(r.empty() ? m.name : r + "/" + m.name, root_gone);
        if (root_gone) return false;
        if (!fd) {
            if (errno != ENOENT && errno != ENOTDIR) return false;
            left.push_back(std::move(m));
            continue;
        }
        if (const uint32_t old = child(m.parent, m.name); old != kNoNode) forget(old);
        if (!scan(add_node(m.parent, m.name), std::move(fd))) return false;
    }
    made_ = std::move(left);
    return true;
}

bool Daemon::setup() {
    lock_.reset(::open(paths_.lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!lock_ || ::flock(lock_.get(), LOCK_EX | LOCK_NB) != 0) return false;  // one runs
    UniqueFd top(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!top || ::fstat(top.get(), &st) != 0) return false;
    dev_ = st.st_dev;
    root_ino_ = st.st_ino;
    ino_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    if (!ino_) {
        failed_ = true;
        return false;
    }
    if (!scan(add_node(kNoNode, ""), std::move(top)) || !drain()) return false;
    listen_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    struct sockaddr_un addr {};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, paths_.sock.c_str(), paths_.sock.size() + 1);
    (void)::unlink(paths_.sock.c_str());
    return listen_ && ::bind(listen_.get(), reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) == 0 &&
           ::listen(listen_.get(), 16) == 0;
}

int Daemon::run() {
    if (!setup()) {
        if (failed_) {
            UniqueFd f(::open(paths_.failed.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
        }
        return 0;
    }
    (void)::unlink(paths_.failed.c_str());
    struct timespec idle_since {};
    ::clock_gettime(CLOCK_MONOTONIC, &idle_since);
    for (;;) {
        std::vector<struct pollfd> fds{{ino_.get(), POLLIN, 0}, {listen_.get(), POLLIN, 0}};
        for (const Conn& c : conns_) fds.push_back({c.fd.get(), POLLIN, 0});
        struct timespec now {};
        ::clock_gettime(CLOCK_MONOTONIC, &now);
        const long idle = now.tv_sec - idle_since.tv_sec;
        if (conns_.empty() && idle >= kIdleSeconds) break;
        const int timeout = conns_.empty() ? static_cast<int>((kIdleSeconds - idle) * 1000) : -1;
        if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) break;
        if ((fds[0].revents & POLLIN) != 0 && !drain()) break;
        bool lost = false;
        for (size_t k = 0; k + 2 < fds.size(); ++k) {
            const short ev = fds[k + 2].revents;
            if ((ev & POLLIN) != 0) {
                // Taken to the queue's end first: what the run did is all in it by now.
                if (!drain()) {
                    lost = true;
                    break;
                }
                serve(conns_[k]);
            } else if ((ev & (POLLHUP | POLLERR)) != 0) {
                conns_[k].fd.reset();
            }
        }
        if (lost) break;
        if ((fds[1].revents & POLLIN) != 0) {
            UniqueFd c(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
            struct ucred cred {};
            socklen_t len = sizeof cred;
            if (c && conns_.size() < kMaxClients && ::getsockopt(c.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
                cred.uid == ::geteuid()) {
                const struct timeval two_seconds { 2, 0 };
                (void)::setsockopt(c.get(), SOL_SOCKET, SO_SNDTIMEO, &two_seconds, sizeof two_seconds);
                conns_.push_back(Conn{std::move(c), false, 0});
            }
        }
        std::erase_if(conns_, [](const Conn& c) { return !c.fd; });
        if (conns_.empty()) {
            log_.clear();
            dropped_to_ = seq_;
            ::clock_gettime(CLOCK_MONOTONIC, &idle_since);
        }
    }
    // The socket goes with the watcher, which still holds the lock (the lock file stays: a
    // starting watcher may have it open).
    (void)::unlink(paths_.sock.c_str());
    if (failed_) {
        UniqueFd f(::open(paths_.failed.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    }
    return 0;
}

int daemon_main(const std::vector<std::string>& args) {
    if (args.size() != 2 || args[0].empty() || args[0][0] != '/' || args[1].empty() || args[1][0] != '/') {
        diag::write_line(diag::Show::Always, "cordon-repowatch: started by cordon, not by hand");
        return 125;
    }
    ::umask(077);
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 || ::chdir("/") != 0) return 1;
    close_fds_from(3, -1, -1);
    (void)::signal(SIGPIPE, SIG_IGN);
    (void)::signal(SIGHUP, SIG_IGN);
    struct stat st {};
    if (::lstat(args[1].c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
        (st.st_mode & 077) != 0) {
        return 1;
    }
    Paths paths = paths_in(args[1], args[0]);
    if (paths.sock.size() >= sizeof(sockaddr_un::sun_path)) return 1;
    return Daemon(args[0], std::move(paths)).run();
}

}  // namespace cordon::watcher

namespace cordon {

int repowatch_daemon_main(const std::vector<std::string>& args) {
    return watcher::daemon_main(args);
}

}  // namespace cordon

#include "cordon/placeholders.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "cordon/paths.hpp"
#include "cordon/runtime_dir.hpp"

namespace cordon {

namespace {

int ms_since(const struct timespec& t0) {
    struct timespec now {};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<int>((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
}

// Only "." and ".." in the directory open on FD (read from the start: FD is fresh).
bool dir_empty(int fd) {
    alignas(8) char buf[512];
    long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n <= 0) return n == 0;
    for (long off = 0; off < n;) {
        const auto* d = reinterpret_cast<const struct dirent64*>(buf + off);
        const char* name = d->d_name;
        if (!(name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))) return false;
        off += d->d_reclen;
    }
    return ::syscall(SYS_getdents64, fd, buf, sizeof buf) == 0;
}

// A file that appears at NAME with CONTENT already in it, or not at all (a run killed midway
// leaves nothing half made): written unnamed (O_TMPFILE), then linked; where the file system
// cannot, written under a temporary name and renamed.
int create_with_content(int dirfd, const char* name, const std::string& content) {
    UniqueFd fd(::openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, kPlaceholderFileMode));
    if (fd) {
        if (!write_all(fd.get(), content.data(), content.size())) return -1;
        char proc[64];
        std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd.get());
        return ::linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW);
    }
    char tmp[96];
    std::snprintf(tmp, sizeof tmp, ".cordon-%d-%s", static_cast<int>(::getpid()), name);
    fd.reset(::openat(dirfd, tmp, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, kPlaceholderFileMode));
    if (!fd) return -1;
    int rc = write_all(fd.get(), content.data(), content.size())
                 ? ::renameat2(dirfd, tmp, dirfd, name, RENAME_NOREPLACE)
                 : -1;
    int err = errno;
    if (rc != 0) ::unlinkat(dirfd, tmp, 0);
    errno = err;
    return rc;
}

// FD carries a POSIX ACL: its own, or a default one that what is made in it inherits. A
// directory made in another user's directory with a default ACL inherits theirs (user:U:rwx):
// never pooled, or our next workdir would hold a directory that user may write.
bool has_acl(int fd) {
    for (const char* name : {"system.posix_acl_access", "system.posix_acl_default"}) {
        if (::fgetxattr(fd, name, nullptr, 0) >= 0) return true;
    }
    return false;
}

// The creating call carries the mark: the mode is exact only with no umask in the way.
int create_marked(int dirfd, const char* name, const Placeholder& ph) {
    mode_t old = ::umask(0);
    int rc = ph.type == Placeholder::Type::Dir ? ::mkdirat(dirfd, name, kPlaceholderDirMode)
             : ph.content.empty()              ? ::mknodat(dirfd, name, S_IFREG | kPlaceholderFileMode, 0)
                                               : create_with_content(dirfd, name, ph.content);
    int err = errno;
    ::umask(old);
    errno = err;
    return rc;
}

// A file placeholder that still holds what it was made with.
bool holds(int fd, const struct stat& st, const std::string& content) {
    if (static_cast<size_t>(st.st_size) != content.size()) return false;
    if (content.empty()) return true;
    std::string now(content.size(), '\0');
    return ::pread(fd, now.data(), now.size(), 0) == static_cast<ssize_t>(now.size()) && now == content;
}

// The pool of empty placeholder directories (placeholders.hpp), private to the user.
constexpr size_t kPoolMax = 64;

// Where pools may be, in order: the user's cache, then a private directory in /tmp (for a
// HOME that cannot be written, or on another file system than the project). Each is used for
// the directories on its own file system.
std::vector<std::string> pool_dirs() {
    std::vector<std::string> dirs;
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    const char* home = std::getenv("HOME");
    if (xdg && *xdg == '/')
        dirs.push_back(std::string(xdg) + "/cordon/placeholders");
    else if (home && *home == '/' && std::strcmp(home, "/") != 0)
        dirs.push_back(std::string(home) + "/.cache/cordon/placeholders");
    dirs.push_back(private_tmp_dir() + "/placeholders");
    return dirs;
}

// PATH, made if missing (with its parents), and opened if it is a directory only its owner,
// this user, may use.
UniqueFd open_private_dir(const std::string& path) {
    std::string dir;
    for (const std::string_view name : path_components(path)) {
        dir += '/';
        dir += name;
        (void)::mkdir(dir.c_str(), 0700);
    }
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) return UniqueFd();
    return fd;
}

// Set DIRFD's modification time back to MTIME (its access time untouched).
void restore_mtime(int dirfd, const std::string& path, const struct timespec& mtime) {
    const struct timespec times[2] = {{0, UTIME_OMIT}, mtime};
    if (::utimensat(dirfd, "", times, AT_EMPTY_PATH) != 0) {
        (void)::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW);
    }
}

}  // namespace

Result<size_t> Placeholders::open_parent(const std::string& path, const std::string& for_placeholder) {
    for (size_t i = 0; i < parents_.size(); ++i) {
        if (parents_[i].path == path) return i;
    }
    UniqueFd fd(openat2_at(AT_FDCWD, path, O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS));
    if (!fd) return sys_error("protected path " + for_placeholder + ": open " + path);
    UniqueFd turn;
    struct stat st {};
    if (!private_runtime_dir().empty() && ::fstat(fd.get(), &st) == 0) {
        char name[64];
        std::snprintf(name, sizeof name, "/%llx-%llx.lock", static_cast<unsigned long long>(st.st_dev),
                      static_cast<unsigned long long>(st.st_ino));
        turn.reset(::open((private_runtime_dir() + name).c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    }
    parents_.push_back(Parent{path, std::move(fd), std::move(turn)});
    return parents_.size() - 1;
}

Placeholders::Pool& Placeholders::pool(int dirfd) {
    struct stat parent {};
    if (::fstat(dirfd, &parent) != 0) return pool_none_;
    if (pools_.empty()) {
        for (const auto& dir : pool_dirs()) pools_.push_back(Pool{dir, false, UniqueFd(), 0, {}, 0});
    }
    for (Pool& p : pools_) {
        if (!p.tried) {
            p.tried = true;
            p.fd = open_private_dir(p.path);
            struct stat st {};
            if (!p.fd || ::fstat(p.fd.get(), &st) != 0) {
                p.fd.reset();
                continue;
            }
            p.dev = st.st_dev;
            alignas(8) char buf[4096];
            for (long n = 0; (n = ::syscall(SYS_getdents64, p.fd.get(), buf, sizeof buf)) > 0;) {
                for (long off = 0; off < n;) {
                    const auto* d = reinterpret_cast<const struct dirent64*>(buf + off);
                    if (d->d_name[0] != '.') p.entries.emplace_back(d->d_name);
                    off += d->d_reclen;
                }
            }
            p.size = p.entries.size();
        }
        if (p.fd && p.dev == parent.st_dev) return p;
    }
    return pool_none_;
}

int Placeholders::take_from_pool(int dirfd, const std::string& name) {
    Pool& p = pool(dirfd);
    while (p.fd && !p.entries.empty()) {
        const std::string entry = std::move(p.entries.back());
        p.entries.pop_back();
        struct stat st {};
        UniqueFd fd(::openat(p.fd.get(), entry.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!fd || ::fstat(fd.get(), &st) != 0 || !is_placeholder_mode(st.st_mode) || st.st_uid != ::geteuid() ||
            has_acl(fd.get()) || !dir_empty(fd.get())) {
            continue;  // gone (another run took it), or not an empty one of ours
        }
        if (::renameat2(p.fd.get(), entry.c_str(), dirfd, name.c_str(), RENAME_NOREPLACE) == 0) {
            --p.size;
            return 0;
        }
        if (errno == EEXIST) return EEXIST;  // the placeholder exists now: join it
    }
    return ENOENT;
}

bool Placeholders::return_to_pool(int dirfd, const std::string& name, int fd, ino_t ino) {
    Pool& p = pool(dirfd);
    if (!p.fd || p.size >= kPoolMax) return false;
    char entry[32];
    std::snprintf(entry, sizeof entry, "i%llx", static_cast<unsigned long long>(ino));
    if (::renameat2(dirfd, name.c_str(), p.fd.get(), entry, RENAME_NOREPLACE) != 0) return false;
    // Something the host put in it just now goes back where it was (FD, still open on it,
    // is read from the start again).
    if (::lseek(fd, 0, SEEK_SET) != 0 || !dir_empty(fd)) {
        (void)::renameat2(p.fd.get(), entry, dirfd, name.c_str(), RENAME_NOREPLACE);
        return false;
    }
    ++p.size;
    return true;
}

Result<Placeholders::Step> Placeholders::try_acquire(size_t parent, const std::string& name, const Placeholder& ph) {
    const Placeholder::Type type = ph.type;
    const int dirfd = parents_[parent].fd.get();
    const std::string path = parents_[parent].path + "/" + name;
    const int taken = type == Placeholder::Type::Dir ? take_from_pool(dirfd, name) : ENOENT;
    const bool created = taken == 0 || (taken != EEXIST && create_marked(dirfd, name.c_str(), ph) == 0);
    if (taken == EEXIST) errno = EEXIST;
    if (!created && errno != EEXIST) {
        Error e = sys_error("protected path: create " + path);
        e.hint =
            "cordon keeps the protected paths of a writable workdir with placeholders made on the host; "
            "--workdir-readonly runs without them";
        return e;
    }
    // Whatever is there now, never through a symlink, and never waiting on a FIFO.
    UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT) return Step::Retry;  // removed since: make it again
        if (created) return sys_error("protected path: open " + path);
        return Step::HostsOwn;  // a symlink, socket or unreadable entry of the host's
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return sys_error("protected path: stat " + path);
    if (!created && !is_placeholder_mode(st.st_mode)) return Step::HostsOwn;
    if (::flock(fd.get(), LOCK_SH | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK) return Step::Busy;
        return sys_error("protected path: lock " + path);
    }
    // Locked: no other run can remove it now. Still the one at PATH (not removed, or removed
    // and made again, between the open and the lock)?
    struct stat now {};
    if (::fstatat(dirfd, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_ino != st.st_ino ||
        now.st_dev != st.st_dev) {
        return Step::Retry;
    }
    // What it holds now is what must still be there when it is removed (one another run made,
    // perhaps with another profile's content, included).
    std::string content = ph.content;
    if (!created && S_ISREG(st.st_mode)) {
        content.assign(static_cast<size_t>(std::min<off_t>(st.st_size, 4096)), '\0');
        if (::pread(fd.get(), content.data(), content.size(), 0) != static_cast<ssize_t>(content.size()))
            content.clear();
    }
    held_.push_back(Held{parent, name, std::move(fd), st.st_dev, st.st_ino, std::move(content)});
    return created ? Step::Made : Step::Held;
}

Result<std::unique_ptr<Placeholders>> Placeholders::acquire(const std::vector<Placeholder>& todo, const Wait& wait) {
    std::unique_ptr<Placeholders> owner(new Placeholders());
    CORDON_TRY(owner->acquire_all(todo, wait));  // on error, OWNER releases what it holds
    return owner;
}

Status Placeholders::acquire_all(const std::vector<Placeholder>& todo, const Wait& wait) {
    std::vector<bool> done(todo.size(), false);
    for (size_t first = 0; first < todo.size(); ++first) {
        if (done[first]) continue;
        // One directory at a time, all its placeholders in one turn.
        const std::string& p0 = todo[first].path;
        const std::string parent_path(path_parent(p0));
        auto parent = open_parent(parent_path, p0);
        if (!parent) return parent.error();
        Parent& dir = parents_[*parent];
        struct timespec t0 {};
        ::clock_gettime(CLOCK_MONOTONIC, &t0);
        if (dir.turn) {
            while (::flock(dir.turn.get(), LOCK_EX | LOCK_NB) != 0) {
                if (errno != EWOULDBLOCK) {
                    dir.turn.reset();  // no turns here: placeholders still work
                    break;
                }
                if (!wait(parent_path, ms_since(t0))) return sys_error("protected path " + p0, EINTR);
            }
        }
        struct stat before {};
        const bool have_time = ::fstat(dir.fd.get(), &before) == 0;
        bool made = false;
        Status result;
        for (size_t i = first; i < todo.size() && result; ++i) {
            const std::string& path = todo[i].path;
            if (done[i] || path_parent(path) != parent_path) continue;
            done[i] = true;
            const std::string name(path_basename(path));
            // Retries come from races with runs of another user (who do not share our turns)
            // making and removing the same placeholder: each means progress elsewhere, so the
            // bound only guards against a broken host.
            ::clock_gettime(CLOCK_MONOTONIC, &t0);
            for (int attempt = 0;; ++attempt) {
                if (attempt == 10000) {
                    result = make_error("protected path " + path, "it keeps changing; try again");
                    break;
                }
                auto step = try_acquire(*parent, name, todo[i]);
                if (!step) {
                    result = step.error();
                    break;
                }
                if (*step == Step::Made) made = true;
                if (*step == Step::Made || *step == Step::Held || *step == Step::HostsOwn) break;
                if (*step == Step::Busy) {
                    if (!wait(path, ms_since(t0))) {
                        result = sys_error("protected path " + path, EINTR);
                        break;
                    }
                }
            }
        }
        // The directory's time as if no placeholder had been made in it.
        if (made && have_time) restore_mtime(dir.fd.get(), dir.path, before.st_mtim);
        if (dir.turn) (void)::flock(dir.turn.get(), LOCK_UN);
        if (!result) return result;
    }
    return {};
}

void Placeholders::release() {
    for (size_t p = 0; p < parents_.size(); ++p) {
        Parent& dir = parents_[p];
        // Our turn, briefly: a run waiting for a stranger's lock holds it meanwhile, and cleanup
        // must not wait on that for long. Without the turn, the removal is just as safe; only
        // the directory's time is left as the removal sets it.
        bool turn = false;
        if (dir.turn) {
            for (int i = 0; i < 500 && !turn; ++i) {
                turn = ::flock(dir.turn.get(), LOCK_EX | LOCK_NB) == 0;
                if (!turn) {
                    const struct timespec ms { 0, 2000000 };
                    ::nanosleep(&ms, nullptr);
                }
            }
        }
        struct stat before {};
        const bool have_time = ::fstat(dir.fd.get(), &before) == 0;
        bool removed = false;
        for (auto h = held_.rbegin(); h != held_.rend(); ++h) {
            if (h->parent != p) continue;
            // Another run still uses it: that run removes it.
            if (::flock(h->fd.get(), LOCK_EX | LOCK_NB) != 0) continue;
            struct stat at {
            }, st{};
            if (::fstatat(dir.fd.get(), h->name.c_str(), &at, AT_SYMLINK_NOFOLLOW) != 0 || at.st_ino != h->ino ||
                at.st_dev != h->dev || ::fstat(h->fd.get(), &st) != 0) {
                continue;  // gone already, or the host's own entry in its place
            }
            const bool is_dir = S_ISDIR(st.st_mode);
            const bool marked = is_placeholder_mode(st.st_mode);
            // Only a directory of ours goes to the pool, from which another of our runs, in any
            // workdir, takes it: one that another user made with the placeholders' mode (their
            // workdir, their directory) is removed, never pooled, or that user could keep a
            // descriptor of it and write into our next workdir; so is one with an ACL (has_acl).
            const bool ours = st.st_uid == ::geteuid() && !has_acl(h->fd.get());
            const bool untouched = marked && (is_dir ? dir_empty(h->fd.get()) : holds(h->fd.get(), st, h->content));
            if (untouched && ((is_dir && ours && return_to_pool(dir.fd.get(), h->name, h->fd.get(), st.st_ino)) ||
                              ::unlinkat(dir.fd.get(), h->name.c_str(), is_dir ? AT_REMOVEDIR : 0) == 0)) {
                removed = true;
            } else if (marked && !untouched && ours) {
                // The host filled it: it is the host's now, with an ordinary mode.
                mode_t um = ::umask(0);
                ::umask(um);
                (void)::fchmod(h->fd.get(), (is_dir ? 0777 : 0666) & ~um);
            }
        }
        if (removed && turn && have_time) restore_mtime(dir.fd.get(), dir.path, before.st_mtim);
        if (turn) (void)::flock(dir.turn.get(), LOCK_UN);
    }
    held_.clear();
    parents_.clear();
}

}  // namespace cordon

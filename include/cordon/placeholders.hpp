// The host side of protected paths that do not exist: the placeholders of one run (see
// Placeholder in mount_plan.hpp), made or adopted while the jail is built, held for the whole
// run, and removed by the last run that uses them.
//
// Many runs may share a workdir, and any of them may be killed at any moment, so the kernel
// counts the users: each run holds a shared flock(2) on every placeholder it uses, and only a
// run that can turn that into an exclusive lock (no other run holds it) removes it. A run
// killed with SIGKILL loses its locks with its descriptors; whatever it was the last user of
// stays until the next run that protects the same name adopts it and, last again, removes it.
// A placeholder that the host has filled meanwhile (an editor created .vscode/settings.json)
// is the host's: its mark is cleared and it stays.
//
// Empty directories are not made and removed each time but kept in a pool on the same file
// system ($XDG_CACHE_HOME/cordon/placeholders, or /tmp/cordon-UID/placeholders; private to
// the user and out of every jail's reach) and renamed in and out: removing a directory frees its disk block, which on a
// file system mounted with discard waits for the disk, and so, in the kernel's journal, may the next run. Where the
// pool is on another file system, they are made and removed as usual.
//
// Placeholder operations leave the parent directory's modification time as they found it. To
// make that exact when runs overlap, the operations of all of a user's runs on one directory
// take turns, behind a lock file named after the directory in a private runtime directory
// (/run/cordon for root, $XDG_RUNTIME_DIR/cordon, or /tmp/cordon-UID), never a lock on the
// project directory itself, which a user's own script may hold.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cordon/error.hpp"
#include "cordon/fd.hpp"
#include "cordon/mount_plan.hpp"
#include "cordon/placeholder_calls.hpp"

namespace cordon {

// Owns the placeholders of one run, like RunCgroup its cgroup: acquire() makes or adopts them
// all, and the destructor releases them, also on every early return of the supervisor.
class Placeholders final {
public:
    // Called while another process holds a placeholder's lock exclusively (another run that is
    // removing it, for a moment): PATH is the placeholder, WAITED_MS the time waited so far.
    // It waits up to a few milliseconds and returns false to give up (the run was interrupted).
    using Wait = std::function<bool(const std::string& path, int waited_ms)>;

    // Make or adopt every placeholder of TODO, in order. A path that turns out to be the
    // host's own entry (created meanwhile, unmarked) is left to the host and simply bound.
    // Errors: a placeholder that cannot be created; err == EINTR when WAIT gave up. Those
    // acquired before an error are released before it returns.
    static Result<std::unique_ptr<Placeholders>> acquire(const std::vector<Placeholder>& todo, const Wait& wait);

    Placeholders(const Placeholders&) = delete;
    Placeholders& operator=(const Placeholders&) = delete;
    // Remove what no other run holds and is still untouched; clear the mark of what the host
    // filled.
    ~Placeholders() { release(); }

    [[nodiscard]] size_t held() const { return held_.size(); }
    // What it holds, by identity: a bind mount of a placeholder shows the same.
    [[nodiscard]] std::vector<FileId> ids() const {
        std::vector<FileId> out;
        out.reserve(held_.size());
        for (const auto& h : held_) out.push_back(FileId{h.dev, h.ino});
        return out;
    }

private:
    Placeholders() = default;
    Status acquire_all(const std::vector<Placeholder>& todo, const Wait& wait);
    void release();

    struct Parent {
        std::string path;
        UniqueFd fd;    // O_PATH, opened without following symlinks
        UniqueFd turn;  // the lock file of the directory's turns (invalid: none available)
    };
    struct Held {
        size_t parent;
        std::string name;
        UniqueFd fd;  // O_RDONLY: the shared lock lives on it
        dev_t dev;
        ino_t ino;
        std::string content;  // a file placeholder's, as made
    };
    enum class Step { Made, Held, HostsOwn, Retry, Busy };
    Result<Step> try_acquire(size_t parent, const std::string& name, const Placeholder& ph);
    Result<size_t> open_parent(const std::string& path, const std::string& for_placeholder);

    // The pool of empty placeholder directories (see above): opened on first need.
    struct Pool {
        std::string path;
        bool tried = false;
        UniqueFd fd;
        dev_t dev = 0;
        std::vector<std::string> entries;  // as listed when opened; taken ones are dropped
        size_t size = 0;                   // entries in it, as far as this run knows
    };
    int take_from_pool(int dirfd, const std::string& name);  // 0, or errno
    bool return_to_pool(int dirfd, const std::string& name, int fd, ino_t ino);
    Pool& pool(int dirfd);

    std::vector<Parent> parents_;
    std::vector<Held> held_;
    std::vector<Pool> pools_;  // one per candidate place (placeholders.cpp)
    Pool pool_none_;           // for a directory on another file system than every pool
};

}  // namespace cordon

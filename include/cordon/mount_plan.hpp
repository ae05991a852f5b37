// The mount plan: the ordered list of filesystem operations that builds the jail's root.
// Planning is pure (it asks the host filesystem only through HostFs), so it is unit-tested;
// src/jail/mounts.cpp replays a plan inside the new mount namespace.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cordon/error.hpp"
#include "cordon/spec.hpp"

namespace cordon {

struct MountOp {
    enum class Kind {
        Bind,       // source (host) on dest; readonly/devices as flagged
        Tmpfs,      // a private tmpfs of `size` bytes
        Proc,       // a fresh procfs for the jail's pid namespace
        Dev,        // minimal /dev: null zero full random urandom tty, pts, ptmx, shm, fd links
        Dir,        // an empty directory
        Symlink,    // dest -> source
        RemountRo,  // make dest (and its submounts) read-only
        HideFile,   // an empty, unreadable, read-only file over dest
        HideDir,    // an empty, read-only directory over dest
    };
    Kind kind = Kind::Dir;
    std::string source;
    std::string dest;
    bool readonly = false;
    bool devices = false;      // Bind: keep device nodes usable
    bool optional = false;     // skip when the source does not exist
    bool no_symlinks = false;  // dest must not traverse any symlink (protected paths)
    uint64_t size = 0;
    mode_t mode = 0755;
    std::string why;           // "system", "workdir", "protect", "--bind", ... for --dry-run
};

// The host filesystem as the planner sees it.
struct HostFs {
    enum class Type { Missing, File, Dir, Symlink, Other };
    std::function<Type(const std::string&)> type;                          // lstat
    std::function<std::string(const std::string&)> readlink;               // symlink target
    std::function<std::vector<std::string>(const std::string&)> glob;     // pattern -> matches
};
HostFs real_host_fs();

// A protected path that does not exist yet: the supervisor creates it (empty) on the host
// before the jail starts and removes it afterwards, so that it can be mounted read-only.
//   File     the protected path itself: an empty read-only regular file, as a /dev/null mask
//   Dir      the protected path itself, asked for with a trailing '/': an empty directory
//   Barrier  a missing directory on the way to a protected path (.git for .git/hooks): an
//            empty socket inode. Nothing can be created below a non-directory, and, unlike an
//            empty regular file, git's repository discovery passes over it as over a missing
//            .git. It costs no disk block to create or free, unlike a directory.
struct Placeholder {
    enum class Type { File, Dir, Barrier };
    std::string path;  // absolute
    Type type = Type::File;
};

struct MountPlan {
    std::vector<MountOp> ops;
    std::vector<Placeholder> placeholders;  // to create, in order (parents first)
};

// Errors: a protected path that traverses a symlink (it could redirect setup outside the jail).
Result<MountPlan> plan_mounts(const Spec& spec, const HostFs& fs);

std::string describe(const MountOp& op);

}  // namespace cordon

// The mount plan: the ordered list of filesystem operations that builds the jail's root.
// Planning is pure (it asks the host filesystem only through HostFs), so it is unit-tested;
// src/jail/fs/mounts.cpp replays a plan inside the new mount namespace.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cordon/error.hpp"
#include "cordon/spec.hpp"

namespace cordon {

// The host's device nodes a Dev op binds into its /dev (tty only where the host has one).
inline constexpr const char* kDevNodes[] = {"null", "zero", "full", "random", "urandom", "tty"};

struct MountOp {
    enum class Kind {
        Bind,       // source (host) on dest; readonly/devices as flagged
        Tmpfs,      // a private tmpfs of `size` bytes
        Proc,       // a fresh procfs for the jail's pid namespace
        Dev,        // minimal /dev: null zero full random urandom tty, pts, ptmx, shm, fd links
        Dir,        // an empty directory
        Symlink,    // dest -> source
        RemountRo,  // make dest (and its submounts) read-only
        HideFile,   // an empty, unreadable, read-only file over dest (over a symlink itself
                    // with no_symlinks)
        HideDir,    // an empty, read-only directory over dest
        RebindRo,   // dest, already in the jail (under /proc), bound onto itself read-only
    };
    Kind kind = Kind::Dir;
    std::string source{};
    std::string dest{};
    bool readonly = false;
    bool devices = false;         // Bind: keep device nodes usable
    bool optional = false;        // skip when the source does not exist
    bool no_symlinks = false;     // dest must not traverse any symlink (protected paths)
    uint64_t size = 0;            // Tmpfs
    mode_t mode = 0755;           // Tmpfs, Dir
    std::string why{};            // "system", "workdir", "protect", "--bind", ... for --dry-run
    bool in_jail = false;         // Bind: the source is dest as the jail being built shows it (a
                                  // protected path bound onto itself), not a host path
    bool host_root_only = false;  // applied only when the jail's uid is the host's uid 0
};

// The host filesystem as the planner sees it.
struct HostFs {
    // Placeholder: a directory or an empty file that carries cordon's mark (see Placeholder).
    enum class Type { Missing, File, Dir, Symlink, Other, Placeholder };
    std::function<Type(const std::string&)> type;                      // lstat
    std::function<std::string(const std::string&)> readlink;           // symlink target
    std::function<std::vector<std::string>(const std::string&)> glob;  // pattern -> matches
    std::function<std::string(const std::string&)> read;               // a small file ("" if none)
    // The names in a directory, sorted (empty if it cannot be read): one read instead of a
    // lookup per protected name, most of which are missing. Optional.
    std::function<std::vector<std::string>(const std::string&)> list;
    // The same names with their types as the directory reports them (Missing where it does not
    // say: its file system keeps no type there). Optional.
    std::function<std::vector<std::pair<std::string, Type>>(const std::string&)> entries;
};
HostFs real_host_fs();

// A protected path that does not exist yet: the supervisor creates it on the host while the
// jail is built, the jail binds it read-only, and the last run that uses it removes it
// (src/jail/placeholders.cpp). Placeholders are what tools expect at those names:
//   Dir   an empty directory: the path asked for with a trailing '/' (.claude/, .vscode/),
//         and every missing directory on the way to a protected path (.git for .git/hooks).
//         Inside the jail nothing can be created in it; on the host, an editor or git that
//         creates the directory meanwhile finds it there and can fill it.
//   File  an empty file: the path asked for without a trailing '/' (.git/config, .mcp.json),
//         or one with what its tool reads as nothing at all (placeholder-content: "." in
//         .git/commondir, which git reads and must not find empty).
// Both carry cordon's mark, a mode no tool gives these names (sticky, not group or other
// writable: kPlaceholderDirMode, kPlaceholderFileMode), set atomically by the creating call
// itself, so a run killed at any moment leaves nothing that a later run cannot recognise.
struct Placeholder {
    enum class Type { File, Dir };
    std::string path;  // absolute
    Type type = Type::File;
    std::string content;  // File: what it holds (placeholder-content; usually nothing)
};
constexpr mode_t kPlaceholderDirMode = 01755;
constexpr mode_t kPlaceholderFileMode = 01444;
// True for a directory or an empty-or-not regular file with the placeholder mark (lstat mode).
bool is_placeholder_mode(mode_t st_mode);

// What a fresh /proc keeps from the payload: host-global knobs read-only, host-wide information
// masked. Entries a kernel lacks are skipped. Most of them matter only to a jail whose uid is the
// host's uid 0 (a root caller's classic jail, see cordon(1), ROOT CALLERS): they are root's and
// not world-writable or world-readable, so they are applied only there; the rest, to every jail.
struct ProcEntry {
    enum class Action { ReadOnly, MaskFile, MaskDir };
    const char* name;  // relative to the proc mount: "sys", "sysrq-trigger", ...
    Action action;
    bool host_root_only;
};
const std::vector<ProcEntry>& proc_protection();

struct MountPlan {
    std::vector<MountOp> ops;
    std::vector<Placeholder> placeholders;  // to create, in order (parents first)
    std::vector<std::string> notes;         // what the user should know (a symlinked protected path)
    // The hand-off to the supervisor: it creates the placeholders while the child builds the
    // jail, so ops[*handoff], the first op that mounts one, waits until they exist; the ops
    // before it need nothing from the supervisor. None when no op mounts a placeholder.
    std::optional<size_t> handoff;
};

// A protected path that is, or passes through, a symlink is not followed: the symlink itself is
// covered by an empty read-only file (a note says so).
Result<MountPlan> plan_mounts(const Spec& spec, const HostFs& fs);

std::string describe(const MountOp& op);

}  // namespace cordon

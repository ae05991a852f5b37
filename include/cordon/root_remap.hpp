// A root caller's jail runs as an unprivileged host uid (kRootJailId), not as host root: no
// kernel check of uid 0 (a knob that looks at the writer's uid, a root-only file, a daemon that
// trusts peers of uid 0) can reach it. What the caller's files need, the supervisor provides
// before clone: every host bind of the mount plan is made here, as root, into a detached mount
// that the jail attaches (the jail's uid may not even reach /root); and the caller's own trees
// (the workdir, HOME entries, writable binds) are idmapped from root to kRootJailId, so the jail
// owns what root owns there and what it writes stays root's on disk. The system's trees are
// bound as they are: their root-owned files are nobody's to the jail, as to an unprivileged
// caller's, and a root-only file there (a key under /etc) is unreadable.
#pragma once

#include <memory>
#include <vector>

#include "cordon/error.hpp"
#include "cordon/fd.hpp"
#include "cordon/mount_plan.hpp"
#include "cordon/spec.hpp"

namespace cordon {

class RootRemap final {
public:
    // Everything before clone. An error means this host or file system cannot do it (idmapped
    // mounts need Linux 5.12 and a file system that supports them: ext4, xfs, btrfs, tmpfs from
    // 6.3, ...); the caller then runs the classic jail, whose uid 0 is the host's.
    static Result<std::unique_ptr<RootRemap>> prepare(const Spec& spec, const MountPlan& plan);

    RootRemap(const RootRemap&) = delete;
    RootRemap& operator=(const RootRemap&) = delete;
    ~RootRemap();

    // One entry per op of the plan: a detached mount for the jail to attach, -2 for an optional
    // bind whose source is missing (skip it), -1 for an op the jail makes itself.
    [[nodiscard]] const std::vector<int>& premounts() const { return premounts_; }

private:
    RootRemap() = default;
    std::vector<int> premounts_;
};

// Which binds show the caller's own files and are idmapped: writable ones, and read-only ones
// outside the system's trees (/usr, /etc, /opt, /var, /lib*, ...): the workdir, HOME entries,
// a repository shown with --ro. Device binds never are.
bool remap_idmaps(const Spec& spec, const MountOp& op);

}  // namespace cordon

// A root caller's jail runs as an unprivileged host uid (kRootJailId), not as host root: no
// kernel check of uid 0 (a knob that looks at the writer's uid, a root-only file, a daemon that
// trusts peers of uid 0) can reach it. The caller's own trees (the workdir, HOME entries,
// writable binds, --ro data) are shown through mounts idmapped from root to kRootJailId, so the
// jail owns what root owns there and what it writes stays root's on disk. Only root may idmap
// them, so the supervisor makes those mounts before clone and the jail attaches them where the
// plan says. The system's trees are bound by the jail itself, as they are: their root-owned
// files are nobody's to it, as to an unprivileged caller's, and a root-only file there (a key
// under /etc) is unreadable.
//
// A workdir that another user owns (a project of the user's bind-mounted into a root container,
// a CI runner's checkout) is idmapped from that owner instead: the jail (no capabilities, so the owner of what it
// writes) owns what the owner owns there, and what it writes there is the owner's on disk; root's files there are
// nobody's to it.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <sys/types.h>

#include <vector>

#include "cordon/error.hpp"
#include "cordon/fd.hpp"
#include "cordon/mount_plan.hpp"
#include "cordon/spec.hpp"

namespace cordon {

// Which binds show the caller's own files, and are made by the supervisor, idmapped: writable
// ones, and read-only ones outside the system's trees (/usr, /etc, /opt, /var, /lib*, ...), for
// a root caller. Device binds never are.
bool remap_idmaps(const Spec& spec, const MountOp& op);

// The idmapped mounts of a remapped jail: for each op of the plan, a detached mount for the
// jail to attach, kSkipPremount for an optional bind whose source is missing, or -1.
constexpr int kSkipPremount = -2;
class Premounts final {
public:
    // Errors mean this host or file system cannot do it (idmapped mounts need Linux 5.12 and a
    // file system that supports them: ext4, xfs, btrfs, tmpfs from 6.3, ...): the caller then
    // runs the classic jail, whose uid 0 is the host's.
    static Result<Premounts> make(const Spec& spec, const MountPlan& plan);

    Premounts() = default;
    Premounts(Premounts&& o) noexcept : fds_(std::move(o.fds_)), helpers_(std::move(o.helpers_)) {}
    Premounts& operator=(Premounts&&) = delete;
    Premounts(const Premounts&) = delete;
    Premounts& operator=(const Premounts&) = delete;
    ~Premounts();

    [[nodiscard]] const std::vector<int>& fds() const { return fds_; }

private:
    std::vector<int> fds_;
    // The idmaps' helpers (root's, the workdir owner's), killed already: reaped here, after
    // clone, when they have long died (a death takes some 50 us that start-up need not wait for).
    std::vector<pid_t> helpers_;
};

}  // namespace cordon

// A root caller's jail runs as an unprivileged host uid (kRootJailId), not as host root: no
// kernel check of uid 0 (a knob that looks at the writer's uid, a root-only file, a daemon that
// trusts peers of uid 0) can reach it. The caller's own trees (the workdir, HOME entries,
// writable binds, --ro data) are shown through mounts idmapped from root to kRootJailId, so the
// jail owns what root owns there and what it writes stays root's on disk. Only root may idmap
// them, so the supervisor makes those mounts, once the jail's user namespace (which maps the
// jail's uid 0 to kRootJailId: the very idmap) has its maps, and hands them to the jail, which
// attaches them where the plan says. The system's trees are bound by the jail itself, as they
// are: their root-owned files are nobody's to it, as to an unprivileged caller's, and a
// root-only file there (a key under /etc) is unreadable.
#pragma once

#include <sys/types.h>

#include <vector>

#include "cordon/error.hpp"
#include "cordon/fd.hpp"
#include "cordon/mount_plan.hpp"
#include "cordon/spec.hpp"

namespace cordon {

// Which binds show the caller's own files, and are made by the supervisor, idmapped: writable
// ones, and read-only ones outside the system's trees (/usr, /etc, /opt, /var, /lib*, ...).
// Device binds never are.
bool remap_idmaps(const Spec& spec, const MountOp& op);

// The idmapped mounts, one per op that remap_idmaps() picks, in plan order; an invalid fd for an
// optional bind whose source is missing.
struct Premounts {
    std::vector<UniqueFd> fds;
};

// The user namespace of the idmap: the jail's own when it maps uid and gid 0 (the default: the
// root caller's ids), else one made for it. INIT's maps must be written.
Result<UniqueFd> idmap_userns(pid_t init, const Spec& spec);

// Errors mean this file system cannot be idmapped here (idmapped mounts need Linux 5.12 and a
// file system that supports them: ext4, xfs, btrfs, tmpfs from 6.3, ...).
Result<Premounts> premount(const Spec& spec, const MountPlan& plan, int userns_fd);

// Over the sync socket: the supervisor sends them in one message; the jail receives them when it
// first needs one, as fds indexed like plan.ops (-1 where none; -2: skip the op).
Status send_premounts(int sock, const Premounts& p);
bool receive_premounts(int sock, const Spec& spec, const MountPlan& plan, std::vector<int>& out);

}  // namespace cordon

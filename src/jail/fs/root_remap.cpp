#include "cordon/root_remap.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <optional>
#include <string>
#include <utility>

#include "cordon/fd.hpp"
#include "cordon/jail.hpp"
#include "cordon/kernel_steps.hpp"
#include "cordon/paths.hpp"

namespace cordon {

namespace {

// The idmap's user namespace belongs to a helper that does nothing but wait to be killed: it
// shares our memory and descriptors (no page tables to copy) and has no exit signal (our
// SIGCHLD is for the jail's init). We write its maps (root may map anything), take its
// namespace, and kill it; it is reaped with the Premounts, after the jail's clone.
// It dies with us, also when we are SIGKILLed before we kill it: else it would keep our
// descriptors (cordon's stdout among them) open for good. ARG is our pid.
int wait_forever(void* arg) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::syscall(SYS_getppid) != *static_cast<const pid_t*>(arg)) {
        ::_exit(1);
    }
    for (;;) ::pause();
    return 0;
}

void reap(pid_t pid) {
    while (::waitpid(pid, nullptr, __WALL) < 0 && errno == EINTR) {
    }
}

struct IdmapHelper {
    pid_t pid = -1;
    ~IdmapHelper() {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            reap(pid);
        }
    }
};

// DISK: the on-disk owner and group that become kRootJailId (root's, or the workdir owner's).
Result<UniqueFd> make_idmap(IdmapHelper& helper, uid_t disk_uid, gid_t disk_gid) {
    alignas(16) static char stack[16 * 1024];
    static pid_t parent = 0;
    parent = ::getpid();
    helper.pid = ::clone(wait_forever, stack + sizeof stack, CLONE_NEWUSER | CLONE_VM | CLONE_FILES, &parent);
    if (helper.pid < 0) return sys_error("root remap: start the idmap's namespace");
    const IdMap uid[] = {{disk_uid, kRootJailId, 1}};
    const IdMap gid[] = {{disk_gid, kRootJailId, 1}};
    const std::string proc = "/proc/" + std::to_string(helper.pid);
    if (kernel::write_id_maps(proc.c_str(), kernel::Setgroups::Leave, uid, gid) != kernel::IdMapStep::Done) {
        return sys_error("root remap: write the idmap's maps");
    }
    UniqueFd ns(::open((proc + "/ns/user").c_str(), O_RDONLY | O_CLOEXEC));
    if (!ns) return sys_error("root remap: open the idmap's namespace");
    ::kill(helper.pid, SIGKILL);
    return ns;
}

}  // namespace

bool remap_idmaps(const Spec& spec, const MountOp& op) {
    if (op.kind != MountOp::Kind::Bind || op.devices || op.in_jail || spec.host_uid != 0) return false;
    if (!op.readonly) return true;
    // The system's trees, where root-only files are the host's secrets (keys under /etc, ...).
    static const char* const kSystem[] = {"/usr",    "/bin", "/sbin", "/lib",  "/lib32", "/lib64",
                                          "/libx32", "/etc", "/boot", "/dev",  "/proc",  "/sys",
                                          "/run",    "/var", "/opt",  "/snap", "/nix"};
    if (op.source == "/") return false;
    for (const char* dir : kSystem) {
        if (path_at_or_under(op.source, dir)) return false;
    }
    return true;
}

// OP shows the workdir, or something in it, of a workdir that another user owns
// (Spec::workdir_owner_uid): idmapped from that owner. (The git directories a linked worktree's
// .git file leads to are shown only where they are the caller's: spec_workdir.cpp.)
bool owner_tree(const Spec& spec, const MountOp& op) {
    return spec.workdir_owner_uid != 0 && spec.workdir && path_at_or_under(op.source, *spec.workdir);
}

Result<Premounts> Premounts::make(const Spec& spec, const MountPlan& plan) {
    Premounts p;
    p.fds_.assign(plan.ops.size(), -1);
    IdmapHelper helpers[2];  // root's, the workdir owner's
    std::optional<UniqueFd> idmaps[2];
    for (size_t i = 0; i < plan.ops.size(); ++i) {
        const MountOp& op = plan.ops[i];
        if (!remap_idmaps(spec, op)) continue;
        const int which = owner_tree(spec, op) ? 1 : 0;
        std::optional<UniqueFd>& idmap = idmaps[which];
        if (!idmap) {
            auto ns = which == 1 ? make_idmap(helpers[1], spec.workdir_owner_uid, spec.workdir_owner_gid)
                                 : make_idmap(helpers[0], 0, 0);
            if (!ns) return ns.error();
            idmap = std::move(*ns);
        }
        UniqueFd src(openat2_at(AT_FDCWD, op.source, O_PATH,
                                RESOLVE_NO_MAGICLINKS | (op.no_symlinks ? RESOLVE_NO_SYMLINKS : 0)));
        if (!src) {
            if (errno == ENOENT && op.optional) {
                p.fds_[i] = kSkipPremount;
                continue;
            }
            return sys_error("root remap: open " + op.source);
        }
        // The owner's workdir is the directory the checks chose, not one swapped in since.
        struct stat st {};
        if (which == 1 && op.source == *spec.workdir &&
            (::fstat(src.get(), &st) != 0 || st.st_dev != spec.workdir_dev || st.st_ino != spec.workdir_ino)) {
            Error e = make_error("root remap", "the workdir " + op.source + " was replaced while cordon started");
            e.err = ESTALE;
            return e;
        }
        UniqueFd tree(::open_tree(src.get(), "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH));
        if (!tree) return sys_error("root remap: clone " + op.source);
        // A slave of the host's mounts, as the jail's own binds are: on some kernels (6.1) a clone
        // joins its source's peer group, and mounts the jail made on it would reach the host.
        struct mount_attr attr {};
        attr.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (op.readonly ? MOUNT_ATTR_RDONLY : 0);
        attr.userns_fd = static_cast<uint64_t>(idmap->get());
        attr.propagation = MS_SLAVE;
        if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) {
            Error e = sys_error("root remap: idmap " + op.source);
            if (e.err == EINVAL || e.err == EPERM || e.err == EOPNOTSUPP) {
                e.why = "its file system does not support idmapped mounts here";
            }
            return e;
        }
        p.fds_[i] = tree.release();
    }
    for (IdmapHelper& h : helpers) {
        if (h.pid > 0) p.helpers_.push_back(std::exchange(h.pid, -1));
    }
    return p;
}

Premounts::~Premounts() {
    for (pid_t pid : helpers_) reap(pid);
    for (int fd : fds_) {
        if (fd >= 0) ::close(fd);
    }
}

}  // namespace cordon

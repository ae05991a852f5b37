#include "cordon/root_remap.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "cordon/jail.hpp"

namespace cordon {

namespace {

bool under(const std::string& path, const std::string& dir) {
    return !dir.empty() && dir != "/" &&
           (path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/'));
}

// What the helper below shares with us: its results, and the maps prepared for it.
struct Helper {
    char map[32];
    int fd = -1;
    int err = 0;
    const char* step = "";
};

bool write_at(const char* path, const char* data) {
    int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    size_t len = std::strlen(data);
    bool ok = ::write(fd, data, len) == static_cast<ssize_t>(len);
    ::close(fd);
    return ok;
}

// Runs in a child that shares our memory and descriptor table (CLONE_VM | CLONE_FILES, and we
// sleep until it exits: CLONE_VFORK). It becomes kRootJailId, makes a user namespace and maps
// root to itself there (a process may map its own ids without privilege), and opens the
// namespace into our table. Only system calls: nothing here allocates.
int idmap_helper(void* arg) {
    auto* h = static_cast<Helper*>(arg);
    auto fail = [&](const char* step) {
        h->err = errno;
        h->step = step;
        return 1;
    };
    const auto id = static_cast<long>(kRootJailId);
    if (::syscall(SYS_setgroups, 0, nullptr) != 0) return fail("setgroups");
    if (::syscall(SYS_setresgid, id, id, id) != 0 || ::syscall(SYS_setresuid, id, id, id) != 0) return fail("setresuid");
    // Changing ids made our memory (the supervisor's too: it is shared) non-dumpable, and with it
    // /proc/self root's: dumpable again, or our own maps could not be written.
    if (::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0) return fail("make the idmap helper dumpable");
    if (::unshare(CLONE_NEWUSER) != 0) return fail("unshare a user namespace");
    if (!write_at("/proc/self/setgroups", "deny") || !write_at("/proc/self/uid_map", h->map) ||
        !write_at("/proc/self/gid_map", h->map)) {
        return fail("write the idmap's maps");
    }
    h->fd = ::open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
    if (h->fd < 0) return fail("open the idmap's namespace");
    return 0;
}

// A user namespace that maps uid and gid 0 to kRootJailId: the idmap of the caller's trees.
Result<UniqueFd> make_idmap() {
    Helper h;
    std::snprintf(h.map, sizeof h.map, "0 %u 1", kRootJailId);
    constexpr size_t kStack = 32 * 1024;
    void* stack = ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) return sys_error("root remap: allocate a stack");
    // No exit signal: the supervisor's SIGCHLD is for the jail's init.
    pid_t pid = ::clone(idmap_helper, static_cast<char*>(stack) + kStack, CLONE_VM | CLONE_VFORK | CLONE_FILES, &h);
    int clone_err = errno;
    if (pid > 0) {
        while (::waitpid(pid, nullptr, __WALL) < 0 && errno == EINTR) {
        }
    }
    ::munmap(stack, kStack);
    if (pid < 0) return sys_error("root remap: start the idmap helper", clone_err);
    if (h.fd < 0) return sys_error(std::string("root remap: ") + h.step, h.err);
    return UniqueFd(h.fd);
}

}  // namespace

bool remap_idmaps(const Spec& spec, const MountOp& op) {
    if (op.kind != MountOp::Kind::Bind || op.devices || op.in_jail || spec.host_uid != 0) return false;
    if (!op.readonly) return true;
    // The system's trees, where root-only files are the host's secrets (keys under /etc, ...).
    static const char* const kSystem[] = {"/usr",  "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/boot",
                                          "/dev",  "/proc", "/sys", "/run", "/var",   "/opt",   "/snap",   "/nix"};
    if (op.source == "/") return false;
    for (const char* dir : kSystem) {
        if (under(op.source, dir)) return false;
    }
    return true;
}

Result<UniqueFd> idmap_userns(pid_t init, const Spec& spec) {
    if (spec.uid == 0 && spec.gid == 0) {
        const std::string path = "/proc/" + std::to_string(init) + "/ns/user";
        UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd) return sys_error("root remap: open " + path);
        return fd;
    }
    return make_idmap();
}

Result<Premounts> premount(const Spec& spec, const MountPlan& plan, int userns_fd) {
    Premounts p;
    for (const MountOp& op : plan.ops) {
        if (!remap_idmaps(spec, op)) continue;
        struct open_how how {};
        how.flags = O_PATH | O_CLOEXEC;
        how.resolve = RESOLVE_NO_MAGICLINKS | (op.no_symlinks ? RESOLVE_NO_SYMLINKS : 0);
        UniqueFd src(static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, op.source.c_str(), &how, sizeof how)));
        if (!src) {
            if (errno == ENOENT && op.optional) {
                p.fds.emplace_back();
                continue;
            }
            return sys_error("root remap: open " + op.source);
        }
        UniqueFd tree(::open_tree(src.get(), "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH));
        if (!tree) return sys_error("root remap: clone " + op.source);
        // A slave of the host's mounts, as the jail's own binds are: on some kernels (6.1) a clone
        // joins its source's peer group, and mounts the jail made on it would reach the host.
        struct mount_attr attr {};
        attr.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (op.readonly ? MOUNT_ATTR_RDONLY : 0);
        attr.userns_fd = static_cast<uint64_t>(userns_fd);
        attr.propagation = MS_SLAVE;
        if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0) {
            Error e = sys_error("root remap: idmap " + op.source);
            if (e.err == EINVAL || e.err == EPERM || e.err == EOPNOTSUPP) {
                e.why = "its file system does not support idmapped mounts here";
            }
            return e;
        }
        p.fds.push_back(std::move(tree));
    }
    return p;
}

Status send_premounts(int sock, const Premounts& p) {
    if (p.fds.empty()) return {};  // the jail expects none either
    std::vector<uint8_t> present;
    std::vector<int> fds;
    for (const auto& fd : p.fds) {
        present.push_back(fd ? 1 : 0);
        if (fd) fds.push_back(fd.get());
    }
    present.push_back(0);  // never an empty message
    struct iovec iov {present.data(), present.size()};
    std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()));
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (!fds.empty()) {
        msg.msg_control = control.data();
        msg.msg_controllen = control.size();
        struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    if (retry_eintr([&] { return ::sendmsg(sock, &msg, MSG_NOSIGNAL); }) < 0) return sys_error("root remap: hand the mounts to the jail");
    return {};
}

bool receive_premounts(int sock, const Spec& spec, const MountPlan& plan, std::vector<int>& out) {
    size_t n = 0;
    for (const MountOp& op : plan.ops) n += remap_idmaps(spec, op) ? 1 : 0;
    std::vector<uint8_t> present(n + 1);
    std::vector<char> control(CMSG_SPACE(sizeof(int) * n));
    struct iovec iov {present.data(), present.size()};
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    ssize_t got = retry_eintr([&] { return ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC); });
    if (got != static_cast<ssize_t>(present.size())) return false;
    std::vector<int> fds;
    for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            fds.resize(k);
            std::memcpy(fds.data(), CMSG_DATA(c), k * sizeof(int));
        }
    }
    out.assign(plan.ops.size(), -1);
    size_t next_op = 0, next_fd = 0;
    for (size_t i = 0; i < plan.ops.size(); ++i) {
        if (!remap_idmaps(spec, plan.ops[i])) continue;
        if (present[next_op++]) {
            if (next_fd >= fds.size()) return false;
            out[i] = fds[next_fd++];
        } else {
            out[i] = -2;
        }
    }
    return true;
}

}  // namespace cordon

// bwrap mode's filesystem, in the child: bubblewrap's order. Every host source is resolved
// first (symlinks and all, as the caller sees them), then a tmpfs becomes the root with the old
// root under /oldroot and the new one being built under /newroot; the ops are replayed in
// command-line order, each destination resolved inside /newroot (openat2 RESOLVE_IN_ROOT, so a
// symlink in the new tree cannot send a mount outside it); then /oldroot is dropped and /newroot
// becomes /.
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "cordon/fd.hpp"
#include "cordon/kernel_steps.hpp"
#include "cordon/paths.hpp"
#include "setup.hpp"

namespace cordon::bwrap {
namespace {

using K = Op::Kind;

// A failure: the text bubblewrap would print, and errno.
bool failed(ChildError& error, std::string text, int err = errno) {
    error = {std::move(text), err};
    return false;
}

std::string relative(const std::string& dest) {
    size_t start = dest.find_first_not_of('/');
    return start == std::string::npos ? "." : dest.substr(start);
}

// DEST resolved inside the new root as it is now (mounts made by earlier ops included).
int open_in_root(const std::string& dest, int flags) {
    UniqueFd root(::open("/newroot", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root) return -1;
    return openat2_at(root.get(), dest, flags, RESOLVE_IN_ROOT);
}

// The path through which mount(2) and chmod(2) reach what FD is (the host's /proc, under /oldroot).
std::string fd_path(int fd) {
    return "/oldroot/proc/self/fd/" + std::to_string(fd);
}

// A parent directory made for an op with --perms MODE: the owner keeps rwx, and each of group
// and other that had any bit gets r-x (bubblewrap's rule).
mode_t parent_mode(std::optional<mode_t> perms) {
    if (!perms) return 0755;
    mode_t mode = 0700;
    if ((*perms & 0070) != 0) mode |= 0050;
    if ((*perms & 0007) != 0) mode |= 0005;
    return mode;
}

// The parent of DEST inside the new root, made (with PARENT_MODE) where it is missing; NAME gets
// DEST's last component.
int open_parent(const std::string& dest, mode_t mode, std::string& name) {
    std::string rel = relative(dest);
    const size_t slash = rel.rfind('/');
    name = slash == std::string::npos ? rel : rel.substr(slash + 1);
    const std::string parent = slash == std::string::npos ? "." : rel.substr(0, slash);
    std::string prefix;
    size_t start = 0;
    while (start <= parent.size() && parent != ".") {
        size_t end = parent.find('/', start);
        if (end == std::string::npos) end = parent.size();
        const std::string part = parent.substr(start, end - start);
        start = end + 1;
        if (part.empty()) continue;
        const std::string at = prefix.empty() ? "." : prefix;
        prefix += (prefix.empty() ? "" : "/") + part;
        UniqueFd probe(open_in_root(prefix, O_PATH | O_DIRECTORY));
        if (probe) continue;
        if (errno != ENOENT) return -1;
        UniqueFd up(open_in_root(at, O_PATH | O_DIRECTORY));
        // The umask is cleared while the ops run (child.cpp): mkdirat gives MODE exactly. No
        // chmod by name after it: a rename could put a symlink there first.
        if (!up || (::mkdirat(up.get(), part.c_str(), mode) != 0 && errno != EEXIST)) return -1;
    }
    return open_in_root(parent, O_PATH | O_DIRECTORY);
}

enum class Node { Dir, File };

// DEST as a directory or file, made (with MODE) where it is missing; an O_PATH descriptor.
int make_dest(const std::string& dest, Node node, mode_t mode, std::optional<mode_t> perms) {
    int fd = open_in_root(dest, O_PATH);
    if (fd >= 0 || errno != ENOENT) return fd;
    std::string name;
    UniqueFd parent(open_parent(dest, parent_mode(perms), name));
    if (!parent) return -1;
    int r = node == Node::Dir ? ::mkdirat(parent.get(), name.c_str(), mode)
                              : ::mknodat(parent.get(), name.c_str(), S_IFREG | mode, 0);
    if (r != 0 && errno != EEXIST) return -1;
    return open_in_root(dest, O_PATH);
}

// Read FD to its end.
bool slurp(int fd, std::string& data) {
    char buf[16384];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) return true;
        data.append(buf, static_cast<size_t>(n));
    }
}

// Restrict the mount at FD (and with RECURSIVE its submounts): nosuid always, nodev unless
// DEVICES, read-only if READONLY. Flags the kernel locked stay as they are.
bool restrict_mount(int fd, bool recursive, bool devices, bool readonly) {
    mount_attr attr{};
    attr.attr_set = MOUNT_ATTR_NOSUID | (devices ? 0 : MOUNT_ATTR_NODEV) | (readonly ? MOUNT_ATTR_RDONLY : 0);
    const unsigned flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
    return ::syscall(SYS_mount_setattr, fd, "", flags, &attr, sizeof attr) == 0;
}

// Mount SOURCE (a path the mount call can reach) on DEST as a bind, then restrict it.
bool bind_onto(const std::string& source, const std::string& dest, Node node, bool devices, bool readonly,
               ChildError& error) {
    UniqueFd target(make_dest(dest, node, node == Node::Dir ? 0755 : 0444, std::nullopt));
    if (!target) return failed(error, "Can't create file at " + dest);
    if (::mount(source.c_str(), fd_path(target.get()).c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
        return failed(error, "Can't bind mount " + source + " on " + dest);
    }
    UniqueFd mounted(open_in_root(dest, O_PATH));
    if (!mounted || !restrict_mount(mounted.get(), true, devices, readonly)) {
        return failed(error, "Can't remount " + dest);
    }
    return true;
}

bool is_dir(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// A filesystem mounted on the directory DEST (made if missing).
bool mount_fs(const std::string& dest, const char* type, unsigned long flags, const std::string& data,
              ChildError& error) {
    UniqueFd target(make_dest(dest, Node::Dir, 0755, std::nullopt));
    if (!target) return failed(error, "Can't mkdir " + dest);
    if (::mount(type, fd_path(target.get()).c_str(), type, flags, data.empty() ? nullptr : data.c_str()) != 0) {
        return failed(error, std::string("Can't mount ") + type + " on " + dest);
    }
    return true;
}

// --proc: a new proc, or where the kernel refuses one (the host's pid namespace seen from a user
// namespace) a bind of the host's; then bubblewrap's covers over what is writable and global.
bool mount_proc(const std::string& dest, ChildError& error) {
    UniqueFd target(make_dest(dest, Node::Dir, 0755, std::nullopt));
    if (!target) return failed(error, "Can't mkdir " + dest);
    const std::string at = fd_path(target.get());
    if (::mount("proc", at.c_str(), "proc", MS_NOSUID | MS_NOEXEC | MS_NODEV, nullptr) != 0) {
        if (errno != EPERM && errno != EINVAL) return failed(error, "Can't mount proc on " + dest);
        if (!bind_onto("/oldroot/proc", dest, Node::Dir, false, false, error)) return false;
    }
    for (const char* sub : {"sys", "sysrq-trigger", "irq", "bus"}) {
        const std::string path = dest + "/" + sub;
        UniqueFd fd(open_in_root(path, O_PATH));
        if (!fd || ::access(fd_path(fd.get()).c_str(), W_OK) != 0) continue;
        if (!bind_onto(fd_path(fd.get()), path, is_dir(fd_path(fd.get())) ? Node::Dir : Node::File, false, true,
                       error)) {
            return false;
        }
    }
    return true;
}

bool make_symlink(const std::string& target, const std::string& dest, ChildError& error) {
    std::string name;
    UniqueFd parent(open_parent(dest, 0755, name));
    if (!parent) return failed(error, "Can't make symlink at " + dest);
    if (::symlinkat(target.c_str(), parent.get(), name.c_str()) == 0) return true;
    const int err = errno;
    char existing[PATH_MAX];
    const ssize_t n = ::readlinkat(parent.get(), name.c_str(), existing, sizeof existing - 1);
    if (err == EEXIST && n >= 0 && std::string(existing, static_cast<size_t>(n)) == target) return true;
    if (err == EEXIST && n >= 0) {
        return failed(error,
                      "Can't make symlink at " + dest + ": existing destination is " +
                          std::string(existing, static_cast<size_t>(n)),
                      0);
    }
    return failed(error, "Can't make symlink at " + dest, err);
}

// --dev: a tmpfs with the host's harmless devices bound in, the standard links, a private
// devpts, and, where stdout is a terminal, that terminal as console (as bubblewrap: the command
// holds it already, and ttyname(3) and tty(1) then find it).
bool mount_dev(const Plan& plan, const std::string& dest, ChildError& error) {
    if (!mount_fs(dest, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755", error)) return false;
    for (const char* node : {"null", "zero", "full", "random", "urandom", "tty"}) {
        if (!bind_onto(std::string("/oldroot/dev/") + node, dest + "/" + node, Node::File, true, false, error)) {
            return false;
        }
    }
    const std::pair<const char*, const char*> links[] = {{"/proc/self/fd", "fd"},       {"/proc/self/fd/0", "stdin"},
                                                         {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"},
                                                         {"/proc/kcore", "core"},       {"pts/ptmx", "ptmx"}};
    for (const auto& [target, name] : links) {
        if (!make_symlink(target, dest + "/" + name, error)) return false;
    }
    UniqueFd shm(make_dest(dest + "/shm", Node::Dir, 0755, std::nullopt));
    if (!shm) return failed(error, "Can't mkdir " + dest + "/shm");
    if (!mount_fs(dest + "/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620", error)) {
        return false;
    }
    if (plan.host_tty.empty()) return true;
    return bind_onto("/oldroot" + plan.host_tty, dest + "/console", Node::File, true, false, error);
}

// --file, --bind-data, --ro-bind-data: FD's contents in a new file, at DEST or bound onto it.
bool data_op(const Op& op, int serial, ChildError& error) {
    std::string data;
    if (!slurp(op.fd, data)) return failed(error, "Can't read from fd " + std::to_string(op.fd));
    const bool bind = op.kind != K::File;
    const mode_t mode = op.perms.value_or(bind ? 0600 : 0666);
    std::string path;
    UniqueFd file;
    if (bind) {
        path = "/bwrap-data-" + std::to_string(serial);
        file.reset(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    } else {
        UniqueFd dest(make_dest(op.dest, Node::File, 0600, op.perms));
        if (dest) file.reset(::open(fd_path(dest.get()).c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));
    }
    if (!file) return failed(error, "Can't create file at " + op.dest);
    if (!write_all(file.get(), data.data(), data.size()) || ::fchmod(file.get(), mode) != 0) {
        return failed(error, "Can't write data to file " + op.dest);
    }
    if (!bind) return true;
    return bind_onto(path, op.dest, Node::File, false, op.kind == K::RoBindData, error);
}

std::string escape_overlay(const std::string& path) {
    std::string out;
    for (char c : path) {
        if (c == ':' || c == ',' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

// The overlays: SOURCES are resolved paths (layers bottom first, then RWSRC and WORKDIR).
bool overlay_op(const Op& op, const std::vector<std::string>& sources, int serial, bool userns, ChildError& error) {
    const size_t layers = op.overlay_srcs.size();
    std::string data = "lowerdir=";
    for (size_t i = layers; i-- > 0;) data += escape_overlay(sources[i]) + (i == 0 ? "" : ":");
    std::string upper, work;
    if (op.kind == K::Overlay) {
        upper = sources[layers];
        work = sources[layers + 1];
    } else if (op.kind == K::TmpOverlay) {
        upper = "/bwrap-overlay-upper-" + std::to_string(serial);
        work = "/bwrap-overlay-work-" + std::to_string(serial);
        if (::mkdir(upper.c_str(), 0755) != 0 || ::mkdir(work.c_str(), 0755) != 0) {
            return failed(error, "Can't make overlay directories for " + op.dest);
        }
    }
    if (!upper.empty()) data += ",upperdir=" + escape_overlay(upper) + ",workdir=" + escape_overlay(work);
    if (userns) data += ",userxattr";
    const unsigned long readonly = op.kind == K::RoOverlay ? MS_RDONLY : 0;
    return mount_fs(op.dest, "overlay", MS_NOSUID | MS_NODEV | readonly, data, error);
}

bool chmod_op(const Op& op, ChildError& error) {
    UniqueFd fd(open_in_root(op.dest, O_PATH));
    if (!fd || ::chmod(fd_path(fd.get()).c_str(), *op.perms) != 0) {
        return failed(error, "Can't chmod " + std::to_string(*op.perms) + " " + op.dest);
    }
    return true;
}

bool remount_ro(const Op& op, ChildError& error) {
    UniqueFd fd(open_in_root(op.dest, O_PATH));
    if (!fd || !restrict_mount(fd.get(), false, true, true))
        return failed(error, "Can't remount readonly on " + op.dest);
    return true;
}

bool dir_op(const Op& op, ChildError& error) {
    // mkdirat makes it with --perms exactly (the umask is cleared) and, as bubblewrap's mkdir, without
    // set-id bits; nothing is changed by name afterwards, where a rename could have put a symlink.
    UniqueFd fd(make_dest(op.dest, Node::Dir, op.perms.value_or(0755), op.perms));
    if (!fd) return failed(error, "Can't mkdir " + op.dest);
    return true;
}

bool tmpfs_op(const Op& op, ChildError& error) {
    char data[64];
    std::snprintf(data, sizeof data, "mode=%04o", op.perms.value_or(0755));
    std::string options = data;
    if (op.size) options += ",size=" + std::to_string(*op.size);
    return mount_fs(op.dest, "tmpfs", MS_NOSUID | MS_NODEV, options, error);
}

// The mode bubblewrap takes an op to have for the parents it makes (parent_mode): --perms, or
// the default of an op that takes one, else 0 (parents 0700).
mode_t op_perms(const Op& op) {
    if (op.perms) return *op.perms;
    switch (op.kind) {
        case K::Dir:
        case K::Tmpfs:
            return 0755;
        case K::File:
            return 0666;
        case K::BindData:
        case K::RoBindData:
            return 0600;
        default:
            return 0;
    }
}

// One op; SOURCES are its resolved host paths (empty for a skipped -try op). The parents of its
// destination are made first, as bubblewrap makes them (not for the ops that make nothing).
bool apply_op(const Plan& plan, const Op& op, const std::vector<std::string>& sources, int serial, ChildError& error) {
    const bool skipped = (op.kind == K::Bind || op.kind == K::RoBind || op.kind == K::DevBind) && sources.empty();
    if (!skipped && op.kind != K::RemountRo && op.kind != K::Chmod && op.kind != K::LockFile) {
        std::string name;
        UniqueFd parent(open_parent(op.dest, parent_mode(op_perms(op)), name));
        if (!parent) return failed(error, "Can't mkdir parents for " + op.dest);
    }
    switch (op.kind) {
        case K::Bind:
        case K::RoBind:
        case K::DevBind:
            if (sources.empty()) return true;
            return bind_onto(sources[0], op.dest, is_dir(sources[0]) ? Node::Dir : Node::File, op.kind == K::DevBind,
                             op.kind == K::RoBind, error);
        case K::BindFd:
        case K::RoBindFd: {
            // The bind follows the descriptor's path, walked again: a rename racing it could put
            // another tree there (CVE-2024-42472's class), so what was mounted must be the
            // descriptor's file, as bubblewrap checks, or the sandbox is not built. Then the
            // descriptor is closed, as bubblewrap closes it.
            struct stat want {
            }, got{};
            if (::fstat(op.fd, &want) != 0) return failed(error, "Can't stat fd " + std::to_string(op.fd));
            const bool dir = S_ISDIR(want.st_mode);
            bool bound =
                bind_onto(sources[0], op.dest, dir ? Node::Dir : Node::File, false, op.kind == K::RoBindFd, error);
            if (bound) {
                UniqueFd mounted(open_in_root(op.dest, O_PATH));
                if (!mounted || ::fstat(mounted.get(), &got) != 0 || got.st_dev != want.st_dev ||
                    got.st_ino != want.st_ino) {
                    bound = failed(error, "Race condition binding dirfd", 0);
                }
            }
            ::close(op.fd);
            return bound;
        }
        case K::RemountRo:
            return remount_ro(op, error);
        case K::Proc:
            return mount_proc(op.dest, error);
        case K::Dev:
            return mount_dev(plan, op.dest, error);
        case K::Tmpfs:
            return tmpfs_op(op, error);
        case K::Mqueue:
            return mount_fs(op.dest, "mqueue", 0, "", error);
        case K::Dir:
            return dir_op(op, error);
        case K::File:
        case K::BindData:
        case K::RoBindData:
            return data_op(op, serial, error);
        case K::Symlink:
            return make_symlink(op.source, op.dest, error);
        case K::Chmod:
            return chmod_op(op, error);
        case K::Overlay:
        case K::TmpOverlay:
        case K::RoOverlay:
            return overlay_op(op, sources, serial, plan.new_userns, error);
        case K::LockFile:
            return true;  // after the pivot, in the finished tree
    }
    return true;
}

// --bind-fd FD: the path FD names in this mount namespace (its mount is the caller's namespace's,
// which cannot be bound from here), checked to be the same file.
bool resolve_fd(const Op& op, std::vector<std::string>& resolved, ChildError& error) {
    char path[PATH_MAX];
    const std::string link = "/proc/self/fd/" + std::to_string(op.fd);
    const ssize_t n = ::readlink(link.c_str(), path, sizeof path - 1);
    if (n <= 0 || path[0] != '/') return failed(error, "Can't find source path of fd " + std::to_string(op.fd));
    path[n] = '\0';
    struct stat by_fd {
    }, by_path{};
    if (::fstat(op.fd, &by_fd) != 0 || ::stat(path, &by_path) != 0 || by_fd.st_dev != by_path.st_dev ||
        by_fd.st_ino != by_path.st_ino) {
        return failed(error, "Can't bind fd " + std::to_string(op.fd) + ": its path names another file", 0);
    }
    resolved.push_back(std::string("/oldroot") + (std::strcmp(path, "/") == 0 ? "" : path));
    return true;
}

// Each op's host paths, resolved before the pivot as the caller sees them, under /oldroot.
// A -try op whose source is missing gets none (it is skipped).
bool resolve_sources(const Options& options, std::vector<std::vector<std::string>>& sources, ChildError& error) {
    for (const Op& op : options.ops) {
        std::vector<std::string> wanted;
        if (op.kind == K::Bind || op.kind == K::RoBind || op.kind == K::DevBind) wanted.push_back(op.source);
        wanted.insert(wanted.end(), op.overlay_srcs.begin(), op.overlay_srcs.end());
        if (op.kind == K::Overlay) {
            wanted.push_back(op.source);
            wanted.push_back(op.workdir);
        }
        std::vector<std::string> resolved;
        if ((op.kind == K::BindFd || op.kind == K::RoBindFd) && !resolve_fd(op, resolved, error)) return false;
        bool missing = false;
        for (const std::string& path : wanted) {
            char real[PATH_MAX];
            if (!real_path(path, real)) {
                if (op.optional && errno == ENOENT) {
                    missing = true;
                    break;
                }
                return failed(error, "Can't find source path " + path);
            }
            resolved.push_back(std::string("/oldroot") + (std::strcmp(real, "/") == 0 ? "" : real));
        }
        if (missing) resolved.clear();
        sources.push_back(std::move(resolved));
    }
    return true;
}

// A tmpfs on /tmp (there is one on every system; this mount namespace's own) becomes the root;
// the host's goes to /oldroot, the jail's is built on /newroot.
bool enter_base(ChildError& error) {
    if (::mount(nullptr, "/", nullptr, MS_SLAVE | MS_REC, nullptr) != 0) return failed(error, "Failed to make / slave");
    switch (kernel::enter_setup_root("/tmp", "mode=0755", MS_BIND | MS_REC)) {
        case kernel::SetupRootStep::Done:
            break;
        case kernel::SetupRootStep::MountTmpfs:
            return failed(error, "Failed to mount tmpfs on /tmp");
        case kernel::SetupRootStep::Chdir:
        case kernel::SetupRootStep::MakeDirs:
            return failed(error, "Creating newroot failed");
        case kernel::SetupRootStep::BindNewroot:
            return failed(error, "setting up newroot bind");
        case kernel::SetupRootStep::PivotRoot:
            return failed(error, "pivot_root");
    }
    if (::chdir("/") != 0) return failed(error, "chdir / (base path)");
    return true;
}

bool enter_newroot(ChildError& error) {
    if (::umount2("/oldroot", MNT_DETACH) != 0) return failed(error, "unmount old root");
    switch (kernel::pivot_into("/newroot")) {
        case kernel::PivotStep::Done:
            return true;
        case kernel::PivotStep::Chdir:
        case kernel::PivotStep::PivotRoot:
            return failed(error, "pivot_root(/newroot)");
        case kernel::PivotStep::Detach:
        case kernel::PivotStep::ChdirRoot:
            return failed(error, "unmount old root");
    }
    return true;
}

bool take_locks(const Options& options, std::vector<int>& locks, ChildError& error) {
    for (const Op& op : options.ops) {
        if (op.kind != K::LockFile) continue;
        const int fd = ::open(op.dest.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return failed(error, "Unable to open lock file " + op.dest);
        struct flock lock {};
        lock.l_type = F_RDLCK;
        lock.l_whence = SEEK_SET;
        if (::fcntl(fd, F_SETLK, &lock) < 0) return failed(error, "Unable to lock file " + op.dest);
        locks.push_back(fd);
    }
    return true;
}

}  // namespace

bool setup_mounts(const Plan& plan, std::vector<int>& locks, ChildError& error) {
    const Options& options = *plan.options;
    std::vector<std::vector<std::string>> sources;
    if (!resolve_sources(options, sources, error) || !enter_base(error)) return false;
    for (size_t i = 0; i < options.ops.size(); ++i) {
        if (!apply_op(plan, options.ops[i], sources[i], static_cast<int>(i), error)) return false;
    }
    return enter_newroot(error) && take_locks(options, locks, error);
}

}  // namespace cordon::bwrap

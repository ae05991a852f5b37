// Replays a MountPlan inside the child's new mount namespace.
//
// Layout during setup (as bubblewrap does it): a small tmpfs becomes the root, the host's root
// is reachable at /oldroot and the jail's future root is the tmpfs at /newroot. Every mount is
// made with file descriptors (open_tree/fsmount + move_mount), every source is resolved inside
// /oldroot and every destination inside /newroot with openat2(RESOLVE_IN_ROOT), so no symlink
// planted anywhere can point a mount outside the jail. At the end we pivot into /newroot,
// detach everything else and make the root tmpfs itself read-only.
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "cordon/fd.hpp"
#include "cordon/jail.hpp"
#include "cordon/kernel_steps.hpp"
#include "cordon/paths.hpp"
#include "cordon/root_remap.hpp"

namespace cordon {

namespace {

constexpr uint64_t kInRoot = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;

// What setup knows of the jail's tree while it builds it: each directory it opened there, held
// by its path. One that setup made itself, or the root of a tmpfs it mounted, is `fresh`: it
// holds exactly the names setup made in it, since nothing else writes to the jail's tree before
// the command starts (the supervisor's placeholders are made on the host, in the workdir, a
// bind: not fresh). A name missing from a fresh directory is made there without a lookup first,
// which saves most of setup's system calls.
// A mount on a directory makes everything known unknown but the jail's root: what it covers
// cannot be told from its path, since a symlink may have led there, or to a parent of a known
// directory, under another name. The root stays known: replay starts again from the new top
// after a mount on "/". (A bind that a symlink leads onto "/" covers the root too, unnoticed:
// later lookups still start in the covered root, as they did before this cache.) A mount on a
// file covers no directory.
class KnownTree final {
public:
    struct Dir {
        UniqueFd fd;
        bool fresh = false;
        bool no_symlinks = false;        // reached without following a symlink
        std::vector<std::string> names;  // fresh: what setup made in it
        [[nodiscard]] bool has(std::string_view name) const {
            return std::find(names.begin(), names.end(), name) != names.end();
        }
    };

    // The directory at PATH, if known and good for a lookup with RESOLVE.
    Dir* find(const std::string& path, uint64_t resolve) {
        auto it = dirs_.find(path);
        if (it == dirs_.end()) return nullptr;
        if ((resolve & RESOLVE_NO_SYMLINKS) != 0 && !it->second.no_symlinks) return nullptr;
        return &it->second;
    }
    Dir& add(const std::string& path, UniqueFd fd, bool fresh, bool no_symlinks) {
        Dir& d = dirs_[path];
        retired_.push_back(std::move(d.fd));
        d = Dir{std::move(fd), fresh, no_symlinks, {}};
        return d;
    }
    // A new entry NAME (file, directory or symlink) in the directory at PARENT.
    void made(const std::string& parent, std::string name) {
        auto it = dirs_.find(parent);
        if (it != dirs_.end() && it->second.fresh) it->second.names.push_back(std::move(name));
    }
    // Something was mounted on a directory. The descriptors forgotten stay open until the op
    // ends (retire): the op may still use the ones it holds.
    void forget_below_root() {
        for (auto it = dirs_.begin(); it != dirs_.end();) {
            if (it->first == "/") {
                ++it;
                continue;
            }
            retired_.push_back(std::move(it->second.fd));
            it = dirs_.erase(it);
        }
    }
    void retire() { retired_.clear(); }

private:
    std::map<std::string, Dir, std::less<>> dirs_;
    std::vector<UniqueFd> retired_;
};

// Where setup stands, and where a failing step is described.
struct Ctx {
    int oldroot;     // the host's root
    int newroot;     // the jail's root
    int empty_file;  // what hidden files show: an empty file of mode 0 in the setup root
    int empty_dir;   // and hidden directories: an empty directory there
    KnownTree* known;
    char* step;
    size_t step_len;
};

int fail(const Ctx& c, const char* what, const std::string& path) {
    int e = errno;
    std::snprintf(c.step, c.step_len, "%s %s", what, path.c_str());
    errno = e;
    return -1;
}

// True if PATH is known not to exist: the nearest known directory above it is fresh and lacks
// the next name on the way.
bool known_missing(const Ctx& c, const std::string& path, uint64_t resolve) {
    if (path == "/" || c.known->find(path, resolve) != nullptr) return false;
    const std::string parent_path(path_parent(path));
    if (const KnownTree::Dir* parent = c.known->find(parent_path, resolve)) {
        return parent->fresh && !parent->has(path_basename(path));
    }
    return known_missing(c, parent_path, resolve);
}

// The directory DEST, looked up in the jail's root, and known from then on.
int lookup_dir(const Ctx& c, const std::string& dest, uint64_t resolve) {
    const int fd = openat2_at(c.newroot, dest, O_PATH | O_DIRECTORY, resolve);
    if (fd < 0) return -1;
    return c.known->add(dest, UniqueFd(fd), false, (resolve & RESOLVE_NO_SYMLINKS) != 0).fd.get();
}

int ensure_dir(const Ctx& c, const std::string& dest, uint64_t resolve, mode_t mode);

// The directory to make the missing DEST in: its parent, made first if missing.
KnownTree::Dir* parent_for(const Ctx& c, const std::string& dest, uint64_t resolve) {
    const std::string parent_path(path_parent(dest));
    if (ensure_dir(c, parent_path, resolve, 0755) < 0) return nullptr;
    return c.known->find(parent_path, resolve);  // ensure_dir keeps what it returns known
}

// mkdir -p DEST inside the jail's root; returns an O_PATH descriptor of the directory, held by
// c.known (valid until the op ends). What it makes has MODE as mkdir(2) takes it (no set-id
// bits; a set-gid bit it inherits stays), as bubblewrap's, whose umask is cleared:
// apply_mounts clears ours while it runs.
int ensure_dir(const Ctx& c, const std::string& dest, uint64_t resolve, mode_t mode) {
    if (KnownTree::Dir* known = c.known->find(dest, resolve)) return known->fd.get();
    if (!known_missing(c, dest, resolve)) {  // it may be there: look
        if (const int fd = lookup_dir(c, dest, resolve); fd >= 0 || errno != ENOENT || dest == "/") return fd;
    }
    KnownTree::Dir* parent = parent_for(c, dest, resolve);
    if (parent == nullptr) return -1;
    const std::string name(path_basename(dest));
    if (::mkdirat(parent->fd.get(), name.c_str(), mode) != 0)
        return errno == EEXIST ? lookup_dir(c, dest, resolve) : -1;
    c.known->made(std::string(path_parent(dest)), name);
    // The directory just made, never a symlink another jail sharing the workdir renamed into its
    // place since.
    UniqueFd fd(::openat(parent->fd.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return -1;
    const bool chain = parent->no_symlinks;
    return c.known->add(dest, std::move(fd), true, chain).fd.get();
}

// An empty file at DEST inside the jail's root (a mount point for a file); an O_PATH descriptor
// the caller owns.
int ensure_file(const Ctx& c, const std::string& dest, uint64_t resolve) {
    if (!known_missing(c, dest, resolve)) {  // it may be there: look
        if (const int fd = openat2_at(c.newroot, dest, O_PATH, resolve); fd >= 0 || errno != ENOENT) return fd;
    }
    KnownTree::Dir* parent = parent_for(c, dest, resolve);
    if (parent == nullptr) return -1;
    const std::string name(path_basename(dest));
    if (::mknodat(parent->fd.get(), name.c_str(), S_IFREG | 0444, 0) != 0) {
        return errno == EEXIST ? openat2_at(c.newroot, dest, O_PATH, resolve) : -1;
    }
    c.known->made(std::string(path_parent(dest)), name);
    return ::openat(parent->fd.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
}

// What a mount is attached on: a directory (or what may be one), or a file.
enum class On { Dir, File };

// Attach the detached mount MNT on DEST.
int attach(const Ctx& c, int mnt, int dest, On on) {
    if (::move_mount(mnt, "", dest, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) return -1;
    if (on == On::Dir) c.known->forget_below_root();
    return 0;
}

int set_attr(int mnt, uint64_t set, bool recursive) {
    struct mount_attr attr {};
    attr.attr_set = set;
    return ::mount_setattr(mnt, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &attr, sizeof attr);
}

int new_fs(const char* type, std::initializer_list<std::pair<const char*, std::string>> options, uint64_t attrs) {
    UniqueFd fs(::fsopen(type, FSOPEN_CLOEXEC));
    if (!fs) return -1;
    for (const auto& [key, value] : options) {
        if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, key, value.c_str(), 0) != 0) return -1;
    }
    if (::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0) return -1;
    return ::fsmount(fs.get(), FSMOUNT_CLOEXEC, static_cast<unsigned>(attrs));
}

std::string octal(mode_t m) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%o", static_cast<unsigned>(m));
    return buf;
}

// A fresh tmpfs on DEST (at DEST_PATH); its root is known, empty, from then on.
int mount_tmpfs(const Ctx& c, int dest, const std::string& dest_path, uint64_t size, mode_t mode, uint64_t attrs) {
    UniqueFd mnt(new_fs("tmpfs", {{"size", std::to_string(size)}, {"mode", octal(mode)}}, attrs));
    if (!mnt || attach(c, mnt.get(), dest, On::Dir) != 0) return -1;
    // Whether a symlink led to DEST is not known here: no lookup without symlinks is served
    // from it.
    c.known->add(dest_path, std::move(mnt), true, false);
    return 0;
}

// Bind SRC (an fd anywhere) onto DEST with the given attributes, recursively.
int bind_fd(const Ctx& c, int src, int dest, On on, uint64_t attrs) {
    UniqueFd tree(::open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH));
    if (!tree) return -1;
    if (attrs && set_attr(tree.get(), attrs, true) != 0) return -1;
    return attach(c, tree.get(), dest, on);
}

// An empty read-only directory over DEST: a bind of the setup root's empty directory (no
// superblock to make, or to tear down after the run).
int bind_empty_dir(const Ctx& c, int dest) {
    return bind_fd(c, c.empty_dir, dest, On::Dir,
                   MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
}

// PREMOUNTED: the supervisor's ready-made tree for this op (a root caller's remapped jail, see
// root_remap.hpp), or kNoPremount; kSkipPremount when its optional source is missing.
constexpr int kNoPremount = -1;

int do_bind(const Ctx& c, const MountOp& op, int src_root, int premounted = kNoPremount) {
    if (premounted == kSkipPremount) return 0;
    uint64_t resolve = kInRoot | (op.no_symlinks ? RESOLVE_NO_SYMLINKS : 0);
    UniqueFd opened(premounted >= 0 ? -1 : openat2_at(op.in_jail ? c.newroot : src_root, op.source, O_PATH, resolve));
    const int src = premounted >= 0 ? premounted : opened.get();
    if (src < 0) {
        if (errno == ENOENT && op.optional) return 0;
        return fail(c, "open bind source", op.source);
    }
    uint64_t attrs = MOUNT_ATTR_NOSUID | (op.readonly ? MOUNT_ATTR_RDONLY : 0) | (op.devices ? 0 : MOUNT_ATTR_NODEV);
    if (op.in_jail && op.source == op.dest && premounted < 0) {
        // A path of the jail bound onto itself (a protected path): one lookup finds both ends.
        if (bind_fd(c, src, src, On::Dir, attrs) != 0) return fail(c, "bind-mount", op.source + " on " + op.dest);
        return 0;
    }
    struct stat st {};
    if (::fstat(src, &st) != 0) return fail(c, "stat", op.source);
    const On on = S_ISDIR(st.st_mode) ? On::Dir : On::File;
    UniqueFd dest_file;
    const int dest = on == On::Dir ? ensure_dir(c, op.dest, resolve, 0755)
                                   : (dest_file.reset(ensure_file(c, op.dest, resolve)), dest_file.get());
    if (dest < 0) return fail(c, "create mount point", op.dest);
    if (premounted >= 0) {  // its attributes are set already
        return attach(c, src, dest, on) == 0 ? 0 : fail(c, "attach", op.source + " on " + op.dest);
    }
    if (bind_fd(c, src, dest, on, attrs) != 0) return fail(c, "bind-mount", op.source + " on " + op.dest);
    return 0;
}

// A host device node NAME bound on DEV/NAME (a file made for it in the jail's fresh /dev).
int bind_node(const Ctx& c, const std::string& dev, const char* name, bool optional) {
    const std::string source = std::string("/dev/") + name, dest_path = dev + "/" + name;
    UniqueFd src(openat2_at(c.oldroot, source, O_PATH, kInRoot));
    if (!src) {
        if (errno == ENOENT && optional) return 0;
        return fail(c, "open bind source", source);
    }
    UniqueFd dest(ensure_file(c, dest_path, kInRoot));
    if (!dest) return fail(c, "create mount point", dest_path);
    if (bind_fd(c, src.get(), dest.get(), On::File, MOUNT_ATTR_NOSUID) != 0)
        return fail(c, "bind-mount", source + " on " + dest_path);
    return 0;
}

// The caller's terminal, if the jail's stdin, stdout or stderr is one, as DEV/console (as
// bubblewrap's --dev gives it): the jail's own devpts does not hold the host's pty, so without
// a name for it ttyname(3) and tty(1) fail. The jail holds the terminal open already; the node
// gives it a name, not more access.
int bind_console(const Ctx& c, const std::string& dev) {
    int tty = -1;
    for (int fd = 0; fd <= 2 && tty < 0; ++fd) {
        if (::isatty(fd)) tty = fd;
    }
    if (tty < 0) return 0;
    // Its node on the host: a pty's is /dev/pts/N (N from the device number, as devpts numbers
    // them), checked to be the same file (a pty of another devpts instance, or a terminal of
    // another kind: the jail goes without a name). /proc is not the host's here.
    struct stat want {};
    if (::fstat(tty, &want) != 0 || !S_ISCHR(want.st_mode)) return 0;
    const unsigned major = ::major(want.st_rdev), minor = ::minor(want.st_rdev);
    if (major < 136 || major > 143) return 0;  // UNIX98_PTY_SLAVE_MAJOR and its 7 followers
    const std::string name = "/dev/pts/" + std::to_string((major - 136) * 256 + minor);
    struct stat have {};
    UniqueFd src(openat2_at(c.oldroot, name, O_PATH, kInRoot | RESOLVE_NO_SYMLINKS));
    if (!src || ::fstat(src.get(), &have) != 0 || have.st_rdev != want.st_rdev || have.st_ino != want.st_ino ||
        have.st_dev != want.st_dev)
        return 0;
    UniqueFd dest(ensure_file(c, dev + "/console", kInRoot));
    if (!dest || bind_fd(c, src.get(), dest.get(), On::File, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC) != 0)
        return fail(c, "bind the terminal on", dev + "/console");
    return 0;
}

int do_dev(const Ctx& c, const std::string& dest_path) {
    // One tmpfs for /dev and /dev/shm: /dev itself ends read-only and holds only mount points,
    // so /dev/shm, a writable bind of its own directory, has the 64M to itself.
    const int dest = ensure_dir(c, dest_path, kInRoot, 0755);
    if (dest < 0) return fail(c, "create", dest_path);
    if (mount_tmpfs(c, dest, dest_path, 64 << 20, 0755, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC) != 0) {
        return fail(c, "mount tmpfs on", dest_path);
    }
    // The new tmpfs's root, and its pts and shm, made while it is known (mounts on files keep
    // it so); the descriptors stay good until this op ends.
    KnownTree::Dir* dev = c.known->find(dest_path, kInRoot);
    if (dev == nullptr) return fail(c, "open", dest_path);
    const int dir = dev->fd.get();
    for (const char* node : kDevNodes) {
        if (bind_node(c, dest_path, node, std::strcmp(node, "tty") == 0) != 0) return -1;
    }
    if (bind_console(c, dest_path) != 0) return -1;
    const int pts = ensure_dir(c, dest_path + "/pts", kInRoot, 0755);
    if (pts < 0) return fail(c, "create", dest_path + "/pts");
    const int shm = ensure_dir(c, dest_path + "/shm", kInRoot, 0755);
    if (shm < 0) return fail(c, "create", dest_path + "/shm");
    {
        UniqueFd mnt(new_fs("devpts", {{"ptmxmode", "0666"}, {"mode", "0620"}}, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC));
        if (!mnt || attach(c, mnt.get(), pts, On::Dir) != 0) return fail(c, "mount devpts on", dest_path + "/pts");
    }
    {
        UniqueFd tree(::open_tree(shm, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH));
        struct mount_attr attr {};
        attr.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
        attr.attr_clr = MOUNT_ATTR_NOEXEC;  // as a tmpfs of its own was: shared memory may be mapped executable
        if (!tree || ::fchmodat(dir, "shm", 01777, 0) != 0 ||
            ::mount_setattr(tree.get(), "", AT_EMPTY_PATH, &attr, sizeof attr) != 0 ||
            attach(c, tree.get(), shm, On::Dir) != 0) {
            return fail(c, "make a writable", dest_path + "/shm");
        }
    }
    const std::pair<const char*, const char*> links[] = {{"ptmx", "pts/ptmx"},
                                                         {"fd", "/proc/self/fd"},
                                                         {"stdin", "/proc/self/fd/0"},
                                                         {"stdout", "/proc/self/fd/1"},
                                                         {"stderr", "/proc/self/fd/2"}};
    for (const auto& [name, target] : links) {
        if (::symlinkat(target, dir, name) != 0 && errno != EEXIST) return fail(c, "symlink", dest_path + "/" + name);
    }
    // Nothing more may be created in /dev itself (pts and shm stay usable). The descriptor is
    // the tmpfs's root: the attribute is the mount's.
    if (set_attr(dir, MOUNT_ATTR_RDONLY, false) != 0) return fail(c, "remount read-only", dest_path);
    return 0;
}

int do_tmpfs(const Ctx& c, const MountOp& op) {
    const int dest = ensure_dir(c, op.dest, kInRoot, 0755);
    if (dest < 0) return fail(c, "create", op.dest);
    // An empty read-only tmpfs is an empty read-only directory.
    if (op.readonly) {
        return bind_empty_dir(c, dest) == 0 ? 0 : fail(c, "mount an empty read-only directory on", op.dest);
    }
    if (mount_tmpfs(c, dest, op.dest, op.size, op.mode, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) != 0) {
        return fail(c, "mount tmpfs on", op.dest);
    }
    return 0;
}

int do_proc(const Ctx& c, const MountOp& op) {
    const int dest = ensure_dir(c, op.dest, kInRoot, 0555);
    if (dest < 0) return fail(c, "create", op.dest);
    UniqueFd mnt(new_fs("proc", {}, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
    if (!mnt || attach(c, mnt.get(), dest, On::Dir) != 0) return fail(c, "mount proc on", op.dest);
    return 0;
}

int do_dir(const Ctx& c, const MountOp& op) {
    return ensure_dir(c, op.dest, kInRoot, op.mode) >= 0 ? 0 : fail(c, "create directory", op.dest);
}

int do_symlink(const Ctx& c, const MountOp& op) {
    const std::string parent_path(path_parent(op.dest));
    const int parent = ensure_dir(c, parent_path, kInRoot, 0755);
    if (parent < 0) return fail(c, "create", parent_path);
    const std::string name(path_basename(op.dest));
    if (::symlinkat(op.source.c_str(), parent, name.c_str()) != 0) return fail(c, "create symlink", op.dest);
    c.known->made(parent_path, name);
    return 0;
}

int do_remount_ro(const Ctx& c, const MountOp& op) {
    UniqueFd dest(openat2_at(c.newroot, op.dest, O_PATH, kInRoot));
    if (!dest || set_attr(dest.get(), MOUNT_ATTR_RDONLY, true) != 0) return fail(c, "remount read-only", op.dest);
    return 0;
}

int do_hide_file(const Ctx& c, const MountOp& op) {
    UniqueFd dest(op.no_symlinks ? openat2_at(c.newroot, op.dest, O_PATH | O_NOFOLLOW, kInRoot | RESOLVE_NO_SYMLINKS)
                                 : openat2_at(c.newroot, op.dest, O_PATH, kInRoot));
    if (!dest && errno == ENOENT) return 0;  // not exposed: nothing to hide
    if (!dest) return fail(c, "open", op.dest);
    // DEST is no directory (an empty file does not mount on one): a file, or a symlink itself.
    if (bind_fd(c, c.empty_file, dest.get(), On::File,
                MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC) != 0) {
        return fail(c, "hide", op.dest);
    }
    return 0;
}

int do_hide_dir(const Ctx& c, const MountOp& op) {
    UniqueFd dest(openat2_at(c.newroot, op.dest, O_PATH | O_DIRECTORY, kInRoot));
    if (!dest && errno == ENOENT) return 0;
    if (!dest) return fail(c, "open", op.dest);
    return bind_empty_dir(c, dest.get()) == 0 ? 0 : fail(c, "hide", op.dest);
}

int do_rebind_ro(const Ctx& c, const MountOp& op) {
    UniqueFd dest(openat2_at(c.newroot, op.dest, O_PATH, kInRoot | RESOLVE_NO_SYMLINKS));
    if (!dest && errno == ENOENT && op.optional) return 0;
    if (!dest ||
        bind_fd(c, dest.get(), dest.get(), On::Dir, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) != 0) {
        return fail(c, "make read-only", op.dest);
    }
    return 0;
}

int apply_one(const Ctx& c, const MountOp& op, int premounted) {
    using K = MountOp::Kind;
    switch (op.kind) {
        case K::Bind:
            return do_bind(c, op, c.oldroot, premounted);
        case K::Tmpfs:
            return do_tmpfs(c, op);
        case K::Proc:
            return do_proc(c, op);
        case K::Dev:
            return do_dev(c, op.dest);
        case K::Dir:
            return do_dir(c, op);
        case K::Symlink:
            return do_symlink(c, op);
        case K::RemountRo:
            return do_remount_ro(c, op);
        case K::HideFile:
            return do_hide_file(c, op);
        case K::HideDir:
            return do_hide_dir(c, op);
        case K::RebindRo:
            return do_rebind_ro(c, op);
    }
    return 0;
}

bool check(const Ctx& c, bool ok, const char* what) {
    if (!ok) fail(c, what, "");
    return ok;
}

// The descriptors that setup works through, once the setup tmpfs is the root.
struct SetupRoot {
    UniqueFd empty_file;  // in the setup tmpfs: the empty file and directory that hides show
    UniqueFd empty_dir;
    UniqueFd oldroot;    // the host's root
    UniqueFd newroot;    // the jail's root, /newroot
    bool moved = false;  // no pivot_root: the setup tmpfs was moved over / (see enter_setup_root)
};

// The setup tmpfs becomes the root, with the host's root at /oldroot and the jail's at /newroot.
int enter_setup_root(const Ctx& c, SetupRoot& root) {
    // Nothing we do may propagate back to the host.
    if (!check(c, ::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) == 0, "make / a slave mount")) return -1;
    // The setup tmpfs needs some directory to sit on; after the first pivot_root it becomes the
    // root and the host's tree (this directory included) is whole again under /oldroot.
    const char* base_dir = nullptr;
    for (const char* candidate : {"/tmp", "/run", "/mnt", "/dev"}) {
        struct stat st {};
        if (::stat(candidate, &st) == 0 && S_ISDIR(st.st_mode)) {
            base_dir = candidate;
            break;
        }
    }
    if (!check(c, base_dir != nullptr, "find a directory for the setup tmpfs (/tmp, /run, /mnt, /dev)")) return -1;
    // One tmpfs holds both the setup root and, in its directory newroot (bound onto itself so
    // that it is a mount of its own), the jail's root: one superblock to make and tear down.
    // The host's root, for the case below where it cannot be pivoted away from.
    UniqueFd host_root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!check(c, host_root.valid(), "open the host's root")) return -1;
    using Step = kernel::SetupRootStep;
    const Step step = kernel::enter_setup_root(base_dir, "mode=0755,size=4m", MS_BIND);
    switch (step) {
        case Step::Done:
        case Step::PivotRoot:
            break;
        case Step::MountTmpfs:
            return fail(c, "mount the setup tmpfs", "");
        case Step::Chdir:
            return fail(c, "chdir to the setup tmpfs", "");
        case Step::MakeDirs:
            return fail(c, "mkdir newroot/oldroot", "");
        case Step::BindNewroot:
            return fail(c, "bind the root directory onto itself", "");
    }
    // pivot_root refuses a root that is not a mount with a parent: the initramfs (rootfs) of
    // minimal VMs and microVM images, or a chroot. There, as container runtimes do, the setup
    // tmpfs is moved over / and chrooted into; the host's tree stays reachable only through
    // host_root, closed when setup ends. The final pivot (pivot_into_jail), from the setup tmpfs
    // into the jail's root, works either way: the setup tmpfs is then a mount whose parent is
    // rootfs.
    if (step == Step::PivotRoot) {
        if (!check(c, errno == EINVAL, "pivot_root")) return -1;
        if (!check(c, ::mount(".", "/", nullptr, MS_MOVE, nullptr) == 0,
                   "move the setup tmpfs over / (no pivot_root here)") ||
            !check(c, ::chroot(".") == 0, "chroot into the setup tmpfs")) {
            return -1;
        }
        root.moved = true;
    }
    if (!check(c, ::chdir("/") == 0, "chdir /")) return -1;
    // What hidden files and directories show: an empty file (mode 0) and an empty directory.
    if (!check(c, ::mknod("/.cordon-empty", S_IFREG, 0) == 0, "create the empty file")) return -1;
    if (!check(c, ::mkdir("/.cordon-empty-dir", 0755) == 0, "create the empty directory")) return -1;
    root.empty_file.reset(::open("/.cordon-empty", O_PATH | O_NOFOLLOW | O_CLOEXEC));
    root.empty_dir.reset(::open("/.cordon-empty-dir", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    root.oldroot.reset(root.moved ? host_root.release() : ::open("/oldroot", O_PATH | O_DIRECTORY | O_CLOEXEC));
    host_root.reset();
    root.newroot.reset(::open("/newroot", O_PATH | O_DIRECTORY | O_CLOEXEC));
    return check(c, root.empty_file && root.empty_dir && root.oldroot && root.newroot, "open the setup directories")
               ? 0
               : -1;
}

// The plan's ops, in order, with the hand-off before the op that needs it.
int replay(Ctx& c, SetupRoot& root, const MountPlan& plan, const std::vector<int>& premounts, bool jail_is_host_root,
           const std::function<bool()>& handoff) {
    for (size_t i = 0; i < plan.ops.size(); ++i) {
        const MountOp& op = plan.ops[i];
        if (plan.handoff == i && !(handoff && handoff())) {
            if (errno == 0) errno = EIO;
            return fail(c, "wait for the protected-path placeholders", "");
        }
        // Protection that only a jail whose uid is the host's uid 0 needs (ProcEntry).
        if (op.host_root_only && !jail_is_host_root) continue;
        if (apply_one(c, op, i < premounts.size() ? premounts[i] : kNoPremount) != 0) return -1;
        c.known->retire();
        // A mount on the jail's root itself (--ro-bind / /, --tmpfs /) covers the directory our
        // descriptor holds: later destinations must resolve in the new top, as the final pivot
        // does, or they would land underneath, unseen (the host's /proc instead of a fresh one).
        if (op.dest == "/") {
            root.newroot.reset(::open("/newroot", O_PATH | O_DIRECTORY | O_CLOEXEC));
            if (!root.newroot) return fail(c, "open the new root", "/");
            c.newroot = root.newroot.get();
            c.known->add("/", UniqueFd(::fcntl(c.newroot, F_DUPFD_CLOEXEC, 0)), false, true);
        }
    }
    return 0;
}

// Make /newroot the root, then leave the setup root behind and with it the host's tree below it
// at /oldroot: one detach of the whole stack (each detach waits for an RCU grace period).
// /oldroot is private first, so nothing of it propagates.
int pivot_into_jail(const Ctx& c, bool moved) {
    if (!moved &&
        !check(c, ::mount(nullptr, "/oldroot", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0, "make /oldroot private")) {
        return -1;
    }
    switch (kernel::pivot_into("/newroot")) {
        case kernel::PivotStep::Done:
            break;
        case kernel::PivotStep::Chdir:
            return fail(c, "chdir /newroot", "");
        case kernel::PivotStep::PivotRoot:
            return fail(c, "pivot_root into the new root", "");
        case kernel::PivotStep::Detach:
            return fail(c, "detach the setup root and the host's tree", "");
        case kernel::PivotStep::ChdirRoot:
            return fail(c, "chdir /", "");
    }
    // After a move, the initramfs stays beneath the jail's root in this mount namespace: no path
    // leads there (nothing is above the root), no descriptor either (oldroot closes on return),
    // and nothing in the jail may mount, unmount or chroot.
    UniqueFd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    return check(c, root && set_attr(root.get(), MOUNT_ATTR_RDONLY, false) == 0, "make the root read-only") ? 0 : -1;
}

}  // namespace

bool wait_proceed(int sync_fd) {
    char proceed = 0;
    ssize_t n = retry_eintr([&] { return ::recv(sync_fd, &proceed, 1, 0); });
    return n == 1 && proceed == 1;
}

int apply_mounts(const MountPlan& plan, const std::vector<int>& premounts, bool jail_is_host_root,
                 const std::function<bool()>& handoff, char* step, size_t step_len) {
    Ctx c{-1, -1, -1, -1, nullptr, step, step_len};
    SetupRoot root;
    KnownTree known;
    // Modes exactly as planned (ensure_dir, ensure_file, --perms); the command gets the caller's.
    struct UmaskCleared {
        mode_t saved = ::umask(0);
        ~UmaskCleared() { ::umask(saved); }
    } cleared;
    if (enter_setup_root(c, root) != 0) return -1;
    c = Ctx{
        root.oldroot.get(), root.newroot.get(), root.empty_file.get(), root.empty_dir.get(), &known, step, step_len};
    // The jail's root: an empty directory of the setup tmpfs, bound onto itself.
    UniqueFd top(::fcntl(c.newroot, F_DUPFD_CLOEXEC, 0));
    if (!top) return fail(c, "open the new root", "/");
    known.add("/", std::move(top), true, true);
    if (replay(c, root, plan, premounts, jail_is_host_root, handoff) != 0) return -1;
    return pivot_into_jail(c, root.moved);
}

}  // namespace cordon

// Answers to the calls that trip over cordon's protections without changing anything
// (cordon/placeholder_calls.hpp).
#include "cordon/placeholder_calls.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "cordon/exec_notify.hpp"
#include "cordon/fd.hpp"
#include "cordon/mount_plan.hpp"

namespace cordon {

namespace {

constexpr int kNrFchmodat2 = 452;  // Linux 6.6; Debian 12's headers predate it

// /proc/PID/fd/FD: the descriptor of the process, reopened here or its link read.
std::string fd_path(pid_t pid, int fd) {
    return "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
}

// The process's filesystem uid, as the host numbers it (the fourth field of Uid:).
bool fsuid_of(pid_t pid, uid_t& out) {
    auto status = read_file("/proc/" + std::to_string(pid) + "/status");
    if (!status) return false;
    size_t at = status->find("\nUid:");
    if (at == std::string::npos) return false;
    unsigned long ids[4] = {};
    if (std::sscanf(status->c_str() + at + 5, "%lu %lu %lu %lu", &ids[0], &ids[1], &ids[2], &ids[3]) != 4) return false;
    out = static_cast<uid_t>(ids[3]);
    return true;
}

// What one notified call names: the file (opened O_PATH by the supervisor, through the jail's
// root) and what is asked of it.
struct Target {
    UniqueFd fd;
    bool remove = false;  // rmdir, unlinkat(AT_REMOVEDIR)
    mode_t mode = 0;      // the chmods: the mode asked for
};

// The file a path names for PID, resolved as the process would inside its root, relative to
// DIRFD (AT_FDCWD: its cwd), in one openat2 under RESOLVE_IN_ROOT: the answer must cost little,
// as every chmod and directory removal of the jail waits for it. A walk through /proc meets the
// jail's proc, whose self and magic links mean nothing to the supervisor: it fails, and the
// kernel answers the call. REMOVE: a path whose last component is "." or ".." (EINVAL for
// rmdir) or that ends in a slash after a symlink (ENOTDIR) is left to the kernel too.
UniqueFd open_for(pid_t pid, int dirfd, uint64_t path_addr, bool follow_last, bool empty_path, bool remove) {
    const std::string proc = "/proc/" + std::to_string(pid);
    auto path = read_c_string(pid, path_addr, 4096);
    if (!path) return {};
    if (path->empty()) {
        // fchmodat2(fd, "", mode, AT_EMPTY_PATH): the descriptor's file
        if (!empty_path || dirfd == AT_FDCWD) return {};
        return UniqueFd(::open(fd_path(pid, dirfd).c_str(), O_PATH | O_CLOEXEC));
    }
    std::string full = std::move(*path);
    if (remove) {
        // A trailing slash names a directory: a symlink there fails with ENOTDIR, which the
        // target opened without following it (no directory) leaves to the kernel.
        while (full.size() > 1 && full.back() == '/') full.pop_back();
        const std::string_view last = std::string_view(full).substr(full.find_last_of('/') + 1);
        if (last == "." || last == "..") return {};
    }
    if (full[0] != '/') {
        const std::string base = read_link(dirfd == AT_FDCWD ? proc + "/cwd" : fd_path(pid, dirfd));
        if (base.empty() || base[0] != '/') return {};
        full = base + "/" + full;
    }
    const UniqueFd root(::open((proc + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root) return {};
    return UniqueFd(
        openat2_at(root.get(), full, O_PATH | (follow_last ? 0 : O_NOFOLLOW), RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS));
}

// fchmod of a descriptor opened with O_PATH fails with EBADF: the kernel's to say.
bool opened_for_path_only(pid_t pid, int fd) {
    auto info = read_file("/proc/" + std::to_string(pid) + "/fdinfo/" + std::to_string(fd));
    if (!info) return true;
    const size_t at = info->find("flags:");
    return at == std::string::npos || (std::strtoul(info->c_str() + at + 6, nullptr, 8) & O_PATH) != 0;
}

// An empty directory (the host may have filled a placeholder meanwhile: then the kernel answers).
bool empty_dir(int path_fd) {
    const UniqueFd dir(openat2_at(path_fd, "", O_RDONLY | O_DIRECTORY, 0));
    if (!dir) return false;
    std::array<char, 1024> buf{};
    for (;;) {
        const long n = ::syscall(SYS_getdents64, dir.get(), buf.data(), buf.size());
        if (n <= 0) return n == 0;
        for (long off = 0; off < n;) {
            const auto* name = buf.data() + off + 19;  // struct linux_dirent64: d_name
            if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0) return false;
            unsigned short reclen = 0;
            std::memcpy(&reclen, buf.data() + off + 16, sizeof reclen);
            off += reclen;
        }
    }
}

Target target_of(pid_t pid, const seccomp_data& d) {
    Target t;
    const auto arg_fd = [&](int i) { return static_cast<int>(d.args[i]); };
    const auto arg_mode = [&](int i) { return static_cast<mode_t>(d.args[i]) & 07777; };
    switch (static_cast<int>(d.nr)) {
        case __NR_rmdir:
            t.remove = true;
            t.fd = open_for(pid, AT_FDCWD, d.args[0], false, false, true);
            break;
        case __NR_unlinkat:
            t.remove = true;
            t.fd = open_for(pid, arg_fd(0), d.args[1], false, false, true);
            break;
        case __NR_chmod:
            t.mode = arg_mode(1);
            t.fd = open_for(pid, AT_FDCWD, d.args[0], true, false, false);
            break;
        case __NR_fchmodat:
            t.mode = arg_mode(2);
            t.fd = open_for(pid, arg_fd(0), d.args[1], true, false, false);
            break;
        case kNrFchmodat2: {
            const auto flags = static_cast<int>(d.args[3]);
            t.mode = arg_mode(2);
            t.fd = open_for(pid, arg_fd(0), d.args[1], !(flags & AT_SYMLINK_NOFOLLOW), flags & AT_EMPTY_PATH, false);
            break;
        }
        case __NR_fchmod:
            t.mode = arg_mode(1);
            if (opened_for_path_only(pid, arg_fd(0))) break;
            t.fd.reset(::open(fd_path(pid, arg_fd(0)).c_str(), O_PATH | O_CLOEXEC));
            break;
        default:
            break;
    }
    return t;
}

}  // namespace

const std::vector<int>& placeholder_calls() {
    static const std::vector<int> calls = {__NR_rmdir,    __NR_unlinkat, __NR_chmod,
                                           __NR_fchmodat, kNrFchmodat2,  __NR_fchmod};
    return calls;
}

bool is_placeholder_call(int nr) {
    const auto& calls = placeholder_calls();
    return std::find(calls.begin(), calls.end(), nr) != calls.end();
}

PlaceholderAnswer answer_placeholder_call(pid_t pid, const seccomp_data& data,
                                          const std::vector<FileId>& placeholders) {
    if (static_cast<int>(data.nr) == __NR_unlinkat && !(static_cast<int>(data.args[2]) & AT_REMOVEDIR))
        return PlaceholderAnswer::Continue;
    const Target t = target_of(pid, data);
    struct stat st {};
    if (!t.fd || ::fstat(t.fd.get(), &st) != 0) return PlaceholderAnswer::Continue;
    // Only a read-only file system or mount makes these fail where they would succeed outside.
    struct statvfs vfs {};
    if (::fstatvfs(t.fd.get(), &vfs) != 0 || !(vfs.f_flag & ST_RDONLY)) return PlaceholderAnswer::Continue;
    const bool placeholder =
        is_placeholder_mode(st.st_mode) &&
        std::find(placeholders.begin(), placeholders.end(), FileId{st.st_dev, st.st_ino}) != placeholders.end();
    if (t.remove)
        return placeholder && S_ISDIR(st.st_mode) && empty_dir(t.fd.get()) ? PlaceholderAnswer::Succeed
                                                                           : PlaceholderAnswer::Continue;
    if (placeholder) return PlaceholderAnswer::Succeed;
    // A chmod that changes nothing, by the file's owner, succeeds outside whatever the mount.
    uid_t fsuid = 0;
    if (S_ISLNK(st.st_mode) || (st.st_mode & 07777) != t.mode || !fsuid_of(pid, fsuid) || fsuid != st.st_uid)
        return PlaceholderAnswer::Continue;
    return PlaceholderAnswer::Succeed;
}

}  // namespace cordon

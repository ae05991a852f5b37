#include "cordon/fd.hpp"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace cordon {

namespace {

// openat2 with RESOLVE_NO_SYMLINKS walked by hand, for where openat2 is refused with ENOSYS
// (cordon inside cordon: the outer jail's filter refuses it, its mode being out of a filter's
// reach). Each component is opened with O_NOFOLLOW and checked, so no symlink is followed; ".."
// goes back to the directory the walk came from (after the kernel's search check of the one it
// leaves), never through the kernel's "..", which a concurrent rename could lead out; at the
// start it is an error under RESOLVE_BENEATH, stays there under RESOLVE_IN_ROOT, and is the
// real parent otherwise. With AT_FDCWD the walk starts at the working directory, or at "/" for
// an absolute PATH (the working directory under RESOLVE_IN_ROOT, as openat2 takes it). No
// allocation: usable after clone. -1 with errno as openat2 would set it, but for a path deeper
// than kDepth directories (ENAMETOOLONG) and one descriptor per level (EMFILE near the limit).
// Where the walk of PATH starts (a descriptor of its own), as openat2 takes DIRFD and PATH.
int walk_start(int dirfd, const char* path, bool beneath, bool in_root) {
    if (dirfd != AT_FDCWD) return ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    if (*path != '/' || in_root) return ::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (beneath) {
        errno = EXDEV;
        return -1;
    }
    return ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
}

// The next component of P into NAME ("." for none), LAST set when nothing follows it; what
// follows, or nullptr for a name longer than NAME_MAX.
const char* next_component(const char* p, char (&name)[NAME_MAX + 1], bool& last) {
    while (*p == '/') ++p;
    const char* end = p;
    while (*end != '\0' && *end != '/') ++end;
    const size_t len = static_cast<size_t>(end - p);
    if (len > NAME_MAX) return nullptr;
    while (*end == '/') ++end;
    last = *end == '\0';
    std::memcpy(name, len == 0 ? "." : p, len == 0 ? 1 : len);
    name[len == 0 ? 1 : len] = '\0';
    return end;
}

// NAME in DIR, the walk's last component, opened with FLAGS and no symlink followed: -1 with
// openat2's errno (ELOOP at a symlink, unless the caller's own O_NOFOLLOW asks for it).
int open_last(int dir, const char* name, int flags, bool dir_wanted) {
    if (dir_wanted && (flags & O_CREAT) != 0) {
        errno = EISDIR;
        return -1;
    }
    const bool nofollow = (flags & O_NOFOLLOW) != 0;  // the caller's: a symlink at the end is its answer
    const int fd = ::openat(dir, name, flags | O_NOFOLLOW | O_CLOEXEC | (dir_wanted ? O_DIRECTORY : 0), 0);
    struct stat st {};
    if (fd < 0) {  // a symlink where a directory was asked for is ENOTDIR here, ELOOP to openat2
        const int err = errno;
        const bool link =
            err == ENOTDIR && !nofollow && ::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
        errno = link ? ELOOP : err;
        return -1;
    }
    if ((flags & O_PATH) != 0 && !nofollow && (::fstat(fd, &st) != 0 || S_ISLNK(st.st_mode))) {
        ::close(fd);
        errno = ELOOP;
        return -1;
    }
    return fd;
}

int open_without_symlinks(int dirfd, const char* path, int flags, uint64_t resolve) {
    constexpr int kDepth = PATH_MAX / 2;  // "a/" repeated: the deepest path PATH_MAX allows
    const bool beneath = (resolve & RESOLVE_BENEATH) != 0, in_root = (resolve & RESOLVE_IN_ROOT) != 0;
    constexpr int kPathFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    const size_t length = std::strlen(path);
    if ((beneath && in_root) || ((flags & O_PATH) != 0 && (flags & ~kPathFlags) != 0)) {
        errno = EINVAL;
        return -1;
    }
    if (length >= PATH_MAX) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fds[kDepth];  // fds[0]: where the walk starts; the rest are its own
    int depth = 0;
    fds[0] = walk_start(dirfd, path, beneath, in_root);
    if (fds[0] < 0) return -1;
    auto unwind = [&](int err) {
        for (int i = depth; i >= 0; --i) ::close(fds[i]);
        errno = err;
        return -1;
    };
    // The kernel's search check of the directory held (what "." and ".." cost it).
    auto searchable = [&] {
        const int self = ::openat(fds[depth], ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (self >= 0) ::close(self);
        return self >= 0;
    };
    if (length == 0) return unwind(ENOENT);
    const bool dir_wanted = path[length - 1] == '/';
    char name[NAME_MAX + 1];
    bool last = false;
    for (const char* p = path;;) {
        p = next_component(p, name, last);
        if (p == nullptr) return unwind(ENAMETOOLONG);
        const bool dots = std::strcmp(name, "..") == 0;
        if ((dots || (std::strcmp(name, ".") == 0 && !last)) && !searchable()) return unwind(errno);
        if (dots && depth > 0) {
            ::close(fds[depth--]);
        } else if (dots && beneath) {
            return unwind(EXDEV);
        } else if (dots && !in_root) {
            const int up = ::openat(fds[0], "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
            if (up < 0) return unwind(errno);
            ::close(fds[0]);
            fds[0] = up;
        }
        if (last) {
            const int fd = open_last(fds[depth], dots ? "." : name, flags, dir_wanted);
            const int err = errno;
            (void)unwind(fd < 0 ? err : 0);
            return fd;
        }
        if (dots || std::strcmp(name, ".") == 0) continue;
        const int next = ::openat(fds[depth], name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) return unwind(errno);
        struct stat st {};
        if (::fstat(next, &st) != 0 || !S_ISDIR(st.st_mode) || depth + 1 == kDepth) {
            const int err = S_ISLNK(st.st_mode) ? ELOOP : depth + 1 == kDepth ? ENAMETOOLONG : ENOTDIR;
            ::close(next);
            return unwind(err);
        }
        fds[++depth] = next;
    }
}

}  // namespace

bool write_all(int fd, const void* buf, size_t len) {
    const char* p = static_cast<const char*>(buf);
    while (len > 0) {
        ssize_t n = retry_eintr([&] { return ::write(fd, p, len); });
        if (n < 0) return false;
        p += n;
        len -= static_cast<size_t>(n);
    }
    return true;
}

int openat2_at(int dirfd, const std::string& path, int flags, uint64_t resolve) {
    struct open_how how {};
    how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
    how.resolve = resolve;
    const char* rel = path.c_str();
    if (dirfd != AT_FDCWD) {
        while (*rel == '/') ++rel;
        if (*rel == '\0') rel = ".";
    }
    // With RESOLVE_BENEATH or RESOLVE_IN_ROOT, a ".." walked while anything on the system renamed
    // or mounted fails with EAGAIN (the kernel cannot tell whether it escaped): asked again.
    constexpr int kRaceRetries = 1000;
    for (int tries = 0;; ++tries) {
        const long fd = retry_eintr([&] { return ::syscall(SYS_openat2, dirfd, rel, &how, sizeof how); });
        if (fd >= 0 || errno != EAGAIN || (resolve & RESOLVE_CACHED) != 0 || tries == kRaceRetries) {
            if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
            break;
        }
    }
    // Refused (ENOSYS): what openat can do alone, or the walk by hand that keeps openat2's word.
    constexpr uint64_t kWalkable = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH | RESOLVE_IN_ROOT;
    if (resolve == 0) return static_cast<int>(retry_eintr([&] { return ::openat(dirfd, rel, flags | O_CLOEXEC, 0); }));
    if ((resolve & RESOLVE_NO_SYMLINKS) != 0 && (resolve & ~kWalkable) == 0)
        return open_without_symlinks(dirfd, rel, flags, resolve);
    errno = ENOSYS;
    return -1;
}

void close_fds_from(int first, int keep_a, int keep_b) {
    if (keep_a > keep_b) std::swap(keep_a, keep_b);
    for (int keep : {keep_a, keep_b}) {
        if (keep < first) continue;
        if (keep > first) ::close_range(static_cast<unsigned>(first), static_cast<unsigned>(keep) - 1, 0);
        first = keep + 1;
    }
    ::close_range(static_cast<unsigned>(first), ~0U, 0);
}

Result<std::string> read_file(const std::string& path) {
    UniqueFd fd(retry_eintr([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC); }));
    if (!fd) return sys_error("open " + path);
    return read_fd(fd.get(), path);
}

Result<std::string> read_fd(int fd, const std::string& path) {
    // A regular file is read into a string of its size: one allocation (the heap pages a run
    // touches are page faults) and no growth for the read that finds the end. What is past that
    // size, and a file whose size says nothing (procfs), is read in 8 KiB steps.
    std::string out;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size < (1 << 30)) {
        out.resize(static_cast<size_t>(st.st_size));
        const ssize_t n = retry_eintr([&] { return ::read(fd, out.data(), out.size()); });
        if (n < 0) return sys_error("read " + path);
        out.resize(static_cast<size_t>(n));
    }
    char buf[8192];
    for (;;) {
        const ssize_t n = retry_eintr([&] { return ::read(fd, buf, sizeof buf); });
        if (n < 0) return sys_error("read " + path);
        if (n == 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

bool fd_holds(int fd, std::string_view text) {
    struct stat before {};
    if (::fstat(fd, &before) != 0 || !S_ISREG(before.st_mode) || static_cast<uint64_t>(before.st_size) != text.size())
        return false;
    char buf[16384];
    // Up to the size fstat gave: a file that grew meanwhile has another size, or times, after.
    for (size_t at = 0; at < text.size();) {
        const ssize_t n = retry_eintr([&] { return ::pread(fd, buf, sizeof buf, static_cast<off_t>(at)); });
        if (n <= 0) return false;
        const auto got = static_cast<size_t>(n);
        if (at + got > text.size() || std::memcmp(buf, text.data() + at, got) != 0) return false;
        at += got;
    }
    struct stat after {};
    const auto same = [](const timespec& a, const timespec& b) {
        return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
    };
    return ::fstat(fd, &after) == 0 && after.st_size == before.st_size && after.st_ino == before.st_ino &&
           after.st_dev == before.st_dev && same(after.st_mtim, before.st_mtim) && same(after.st_ctim, before.st_ctim);
}

Status write_file(const std::string& path, const std::string& data) {
    UniqueFd fd(retry_eintr([&] { return ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_TRUNC); }));
    if (!fd) return sys_error("open " + path);
    if (!write_all(fd.get(), data.data(), data.size())) return sys_error("write " + path);
    return {};
}

}  // namespace cordon

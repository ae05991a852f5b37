// RAII for file descriptors and small EINTR-safe syscall helpers.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "cordon/error.hpp"

namespace cordon {

class UniqueFd final {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& o) noexcept {
        if (this != &o) reset(std::exchange(o.fd_, -1));
        return *this;
    }
    ~UniqueFd() { reset(); }

    [[nodiscard]] int get() const { return fd_; }
    [[nodiscard]] bool valid() const { return fd_ >= 0; }
    explicit operator bool() const { return valid(); }
    int release() { return std::exchange(fd_, -1); }
    void reset(int fd = -1) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

// Retry a syscall-like expression while it fails with EINTR.
template <typename F>
auto retry_eintr(F&& f) {
    decltype(f()) r;
    do {
        r = f();
    } while (r == -1 && errno == EINTR);
    return r;
}

// Closes every fd from FIRST up except KEEP_A and KEEP_B (-1: none). Only system calls: for a
// process that may not allocate.
void close_fds_from(int first, int keep_a, int keep_b);

// openat2(DIRFD, PATH, FLAGS | O_CLOEXEC, RESOLVE), retried on EINTR and on the EAGAIN of a
// ".." walked during another process's rename (bounded; not under RESOLVE_CACHED); the one
// wrapper of it. Where openat2 is refused (ENOSYS: inside cordon's own jail, whose filter
// refuses it), RESOLVE 0 is openat, and RESOLVE_NO_SYMLINKS (with BENEATH, IN_ROOT or
// NO_MAGICLINKS) a walk by hand with the same answers; the rest stays ENOSYS.
// Under a DIRFD, PATH's leading slashes are dropped (so an absolute path is taken under DIRFD, as
// RESOLVE_IN_ROOT means) and "" is "."; with AT_FDCWD, PATH is taken as given. -1 with errno set.
int openat2_at(int dirfd, const std::string& path, int flags, uint64_t resolve);

// Whole-buffer I/O; return false with errno set on failure.
bool write_all(int fd, const void* buf, size_t len);
Result<std::string> read_file(const std::string& path);
// The same from FD, opened on PATH (named in errors), from its offset.
Result<std::string> read_fd(int fd, const std::string& path);
Status write_file(const std::string& path, const std::string& data);
// The regular file open at FD holds TEXT, byte for byte: compared in 16 KiB steps without
// moving FD's offset, so the file is not copied onto the heap (whose fresh pages are page
// faults at start-up). A file that changed while it was compared (its size, times or inode,
// before and after) does not hold it.
bool fd_holds(int fd, std::string_view text);
// The entry of SHIPPED (built-in files, each with its .text) that the file open at FD holds, or
// null: one fstat, and fd_holds for an entry of the file's size.
template <class Entry>
const Entry* shipped_file_at(int fd, std::span<const Entry> shipped) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return nullptr;
    for (const Entry& e : shipped) {
        if (static_cast<uint64_t>(st.st_size) == e.text.size() && fd_holds(fd, e.text)) return &e;
    }
    return nullptr;
}

}  // namespace cordon

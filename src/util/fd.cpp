#include "cordon/fd.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>

namespace cordon {

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
        if (fd >= 0 || errno != EAGAIN || (resolve & RESOLVE_CACHED) != 0 || tries == kRaceRetries)
            return static_cast<int>(fd);
    }
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
    std::string out;
    char buf[8192];
    for (;;) {
        ssize_t n = retry_eintr([&] { return ::read(fd.get(), buf, sizeof buf); });
        if (n < 0) return sys_error("read " + path);
        if (n == 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

Status write_file(const std::string& path, const std::string& data) {
    UniqueFd fd(retry_eintr([&] { return ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_TRUNC); }));
    if (!fd) return sys_error("open " + path);
    if (!write_all(fd.get(), data.data(), data.size())) return sys_error("write " + path);
    return {};
}

}  // namespace cordon

// What an exec really runs (cordon/exec_identity.hpp): a script's "#!" line as binfmt_script
// reads it, and a copy of a system program known by its contents.
#include "cordon/exec_identity.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <utility>

#include "cordon/fd.hpp"
#include "cordon/paths.hpp"

namespace cordon {

namespace {

bool spacetab(char c) {
    return c == ' ' || c == '\t';
}
bool terminator(char c) {
    return spacetab(c) || c == '\0';
}

// The regular file PATH inside ROOT, opened for reading: no symlink leaves ROOT, no magic link
// is followed, and a FIFO or device is never waited on.
UniqueFd open_regular(int root, const std::string& path, struct stat& st) {
    UniqueFd fd(openat2_at(root, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS));
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
    return fd;
}

bool same_contents(int a, int b, off_t size) {
    // On the heap for the call, not in static or thread-local storage: every run would carry
    // those 128 KiB (a thread-local block is allocated, and placed before the heap, at start-up).
    constexpr size_t kChunk = 65536;
    const auto buf = std::make_unique_for_overwrite<char[]>(2 * kChunk);
    char* const x = buf.get();
    char* const y = buf.get() + kChunk;
    for (off_t at = 0; at < size;) {
        const auto want = static_cast<size_t>(std::min<off_t>(size - at, static_cast<off_t>(kChunk)));
        const ssize_t n = retry_eintr([&] { return ::pread(a, x, want, at); });
        const ssize_t m = retry_eintr([&] { return ::pread(b, y, want, at); });
        if (n <= 0 || n != m || std::memcmp(x, y, static_cast<size_t>(n)) != 0) return false;
        at += n;
    }
    return true;
}

}  // namespace

std::optional<Shebang> parse_shebang(std::string_view head) {
    // The kernel's buffer: the file's first bytes, NUL-padded. Without a newline in it, the line
    // ends before its last byte.
    std::string buf(head.substr(0, kShebangMax));
    buf.resize(kShebangMax, '\0');
    if (buf[0] != '#' || buf[1] != '!') return std::nullopt;
    const size_t last = kShebangMax - 1;
    size_t end = buf.find('\n');
    if (end == std::string::npos) {
        // No newline: the interpreter must still end within the buffer, else it is truncated.
        size_t p = 2;
        while (p < last && spacetab(buf[p])) ++p;
        if (p >= last) return std::nullopt;
        while (p < last && !terminator(buf[p])) ++p;
        if (p >= last) return std::nullopt;
        end = last;
    }
    while (end > 2 && spacetab(buf[end - 1])) --end;
    size_t name = 2;
    while (name < end && spacetab(buf[name])) ++name;
    if (name >= end) return std::nullopt;
    size_t sep = name;
    while (sep < end && !terminator(buf[sep])) ++sep;
    Shebang s;
    s.interpreter = buf.substr(name, sep - name);
    if (sep < end && buf[sep] != '\0') {
        size_t arg = sep;
        while (arg < end && spacetab(buf[arg])) ++arg;
        if (arg < end) {
            std::string a = buf.substr(arg, end - arg);
            s.arg = a.substr(0, a.find('\0'));
        }
    }
    return s;
}

std::string read_head_in_root(int root, const std::string& path, size_t max) {
    struct stat st {};
    UniqueFd fd = open_regular(root, path, st);
    if (!fd) return {};
    std::string head(max, '\0');
    const ssize_t n = retry_eintr([&] { return ::pread(fd.get(), head.data(), max, 0); });
    head.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return head;
}

void ProgramIdentity::build_index(int root) {
    indexed_ = true;
    // The programs, and the dynamic loaders among the libraries (a copy of one runs any program).
    static constexpr std::pair<const char*, bool> dirs[] = {{"usr/bin", false},
                                                            {"usr/sbin", false},
                                                            {"usr/local/bin", false},
                                                            {"usr/local/sbin", false},
                                                            {"usr/lib", true},
                                                            {"usr/lib64", true},
                                                            {"usr/lib/x86_64-linux-gnu", true},
                                                            {"usr/lib/aarch64-linux-gnu", true},
                                                            {"lib", true},
                                                            {"lib64", true}};
    for (auto [dir, loaders_only] : dirs) {
        UniqueFd d(openat2_at(root, dir, O_RDONLY | O_DIRECTORY, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS));
        if (!d) continue;
        DIR* stream = ::fdopendir(d.release());
        if (stream == nullptr) continue;
        const int fd = ::dirfd(stream);
        while (const dirent* e = ::readdir(stream)) {
            if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN) continue;
            if (loaders_only && !is_loader_name(e->d_name)) continue;
            struct stat st {};
            if (::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
                (st.st_mode & 0111) == 0 || st.st_size == 0) {
                continue;
            }
            by_size_.emplace(st.st_size, std::string("/") + dir + "/" + e->d_name);
        }
        ::closedir(stream);
    }
}

std::string ProgramIdentity::identify(int root, const std::string& path) {
    struct stat st {};
    UniqueFd fd = open_regular(root, path, st);
    if (!fd) return {};
    struct statvfs vfs {};
    if (::fstatvfs(fd.get(), &vfs) != 0 || (vfs.f_flag & ST_RDONLY) != 0) return {};
    const std::string key = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
                            std::to_string(st.st_size) + ":" + std::to_string(st.st_ctim.tv_sec) + "." +
                            std::to_string(st.st_ctim.tv_nsec);
    if (auto it = known_.find(key); it != known_.end()) return it->second;
    if (!indexed_) build_index(root);
    std::string found;
    auto [first, end] = by_size_.equal_range(st.st_size);
    for (auto it = first; it != end && found.empty(); ++it) {
        struct stat other {};
        UniqueFd candidate = open_regular(root, it->second, other);
        if (candidate && other.st_size == st.st_size && same_contents(fd.get(), candidate.get(), st.st_size)) {
            found = it->second;
        }
    }
    if (known_.size() >= kKept) known_.clear();
    known_.emplace(key, found);
    return found;
}

}  // namespace cordon

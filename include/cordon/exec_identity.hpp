// What an exec really runs, beyond the name it is given (EXEC-TIME CHECKS in cordon(1)): the
// interpreter a script's "#!" line names, which the kernel runs within the same execve, and a
// system program found by its contents when a copy of it runs under another name.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cordon {

// binfmt_script reads this many bytes of a file for its "#!" line.
inline constexpr size_t kShebangMax = 256;

struct Shebang {
    std::string interpreter;
    std::optional<std::string> arg;  // the rest of the line, one word whatever its spaces
};

// The kernel's reading of a file's first bytes: nullopt if they do not start with "#!" or name
// no interpreter.
std::optional<Shebang> parse_shebang(std::string_view head);

// Up to MAX first bytes of the regular file PATH (in the jail's terms) under ROOT, resolved
// inside it; "" if it is not one or cannot be read.
std::string read_head_in_root(int root, const std::string& path, size_t max);

// The system programs of a jail, indexed by size on first use (its /usr/bin, /usr/sbin,
// /usr/local/bin, /usr/local/sbin, and the dynamic loaders in /usr/lib*, /lib*, as the jail sees
// them), to know a copy of one by its contents.
class ProgramIdentity {
public:
    // The system program whose contents are PATH's ("" for none), for a regular file on a mount
    // the jail can write (one on a read-only mount is known by its name: the jail made none of
    // them). Results are kept per file (device, inode, size and ctime, which no call can set back),
    // at most kKept of them.
    std::string identify(int root, const std::string& path);

    static constexpr size_t kKept = 4096;

private:
    void build_index(int root);
    bool indexed_ = false;
    std::unordered_multimap<off_t, std::string> by_size_;
    std::unordered_map<std::string, std::string> known_;
};

}  // namespace cordon

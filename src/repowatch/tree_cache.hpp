// The workdir's directory tree as the last run saw it (leftovers.hpp), kept between runs in
// cordon's private runtime directory, out of every jail's reach: which directories each
// directory holds, with its identity and ctime, so that the next run reads only the directories
// that changed since (a statx each for the rest). A listing is trusted only where the directory's
// ctime is still the one recorded and older than the time the listings were read: the kernel
// moves ctime on every entry made, removed or renamed, and user space cannot set it back.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

namespace cordon {

struct TreeCache {
    static constexpr uint32_t kNoParent = UINT32_MAX;
    struct Dir {
        uint32_t parent = kNoParent;  // an earlier entry; kNoParent: the workdir
        std::string name;
        uint64_t dev = 0, ino = 0;
        int64_t ctime_sec = 0;
        uint32_t ctime_nsec = 0;
        bool has_head = false, has_git = false;
        bool complete = false;  // its listing was read whole (else it is never trusted)
    };
    std::string root;
    struct timespec listed_at {};                 // every listing was read after this
    std::vector<Dir> dirs;                        // parents before children
    std::vector<std::vector<uint32_t>> children;  // made by load
};

// The cache at PATH for ROOT; nullopt when there is none, or it is for another root, or it does
// not hold together.
std::optional<TreeCache> load_tree_cache(const std::string& path, const std::string& root);
// Writes CACHE to PATH whole, or not at all (a new file renamed over the old).
bool save_tree_cache(const std::string& path, const TreeCache& cache);

}  // namespace cordon

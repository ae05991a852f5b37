// RepoWatch's watcher (leftovers_watcher.cpp): for a caller that cannot watch the workdir's file
// system with fanotify, one process per user and workdir that keeps an inotify watch on every
// directory of the workdir and its tree in memory between runs, so that a run asks it twice
// instead of reading every directory before and after.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <ctime>

#include <optional>
#include <string>
#include <vector>

#include "cordon/fd.hpp"

namespace cordon::watcher {

// A directory that holds an entry named HEAD or .git (in any case), from the workdir.
struct Repo {
    std::string rel;
    bool head = false, git = false;
};

// A directory that had events since the run's start: the subdirectories made or moved there
// (MADE), and the other entries made, removed, renamed, written or changed there (FILES).
struct Changed {
    std::string rel;
    std::vector<std::string> made, files;
};

// One run's connection, held from start to finish: the watcher counts the run as live (and
// keeps its events) while it is open.
class Client final {
public:
    // The watcher of ROOT (whose directory is DEV:INO), where one is ready; nullopt otherwise.
    static std::optional<Client> connect(const std::string& root, dev_t dev, ino_t ino);
    // The repositories now; from here on the run's events are kept.
    bool start(std::vector<Repo>& repos);
    // Every directory with events since start; false where the watcher lost some (or is gone).
    bool finish(std::vector<Changed>& changed);

private:
    bool ask(char what, std::string& body);
    UniqueFd fd_;
    dev_t dev_ = 0;
    ino_t ino_ = 0;
};

// What both ends share: the answers' bounds, and where a workdir's watcher listens.
namespace wire {
constexpr uint32_t kMagic = 0x31777263;        // "crw1", an answer's first word
constexpr size_t kMaxLog = size_t{1} << 17;    // events kept for live runs; past it, theirs are lost
constexpr size_t kMaxRepos = size_t{1} << 16;  // in an 'S' answer; past it, the runs walk
constexpr size_t kMaxAnswer = size_t{64} << 20;
constexpr time_t kFailedPause = 600;  // after a watcher met a limit: seconds without a new one
struct Paths {
    std::string dir, sock, lock, failed;
};
// DIR/HASH.sock, .lock and .failed for workdir ROOT.
Paths paths_in(const std::string& dir, const std::string& root);
// The same in the private runtime directory's "watcher" (not made here: spawn makes it);
// nullopt where there is none, or the socket's name would not fit in sun_path.
std::optional<Paths> paths_for(const std::string& root);
// CORDON_WATCHER=off: no watcher is started or asked.
bool off_by_env();
}  // namespace wire

// Starts a watcher for ROOT in the background unless one runs, or the last failed lately, or
// CORDON_WATCHER is "off". Best effort: a run without one walks.
void spawn(const std::string& root);

// The watcher process itself (cordon started as "cordon-repowatch ROOT DIR").
int daemon_main(const std::vector<std::string>& args);

}  // namespace cordon::watcher

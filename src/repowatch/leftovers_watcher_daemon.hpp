// The watcher process of RepoWatch (leftovers_watcher.cpp: its tree and the events that change
// it), shared with its answers to the runs (leftovers_watcher_answers.cpp).
#pragma once

#include <sys/inotify.h>
#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cordon/fd.hpp"
#include "leftovers_watcher.hpp"

namespace cordon::watcher {

constexpr uint32_t kNoNode = UINT32_MAX;

// The watcher process: a node per directory of the workdir with its inotify watch, the events
// kept for the runs that asked 'S', and the runs' connections.
class Daemon final {
public:
    Daemon(std::string root, wire::Paths paths) : root_(std::move(root)), paths_(std::move(paths)) {}
    int run();

private:
    struct Node {
        int wd = -1;
        uint32_t parent = kNoNode;
        uint32_t gen = 0;
        std::string name;
        bool head = false, git = false, live = false;
    };
    enum Kind : uint8_t { kItself, kMade, kEntry };
    struct Event {
        uint64_t seq;
        uint32_t node, gen;
        Kind kind;
        std::string name;
    };
    struct Conn {
        UniqueFd fd;
        bool started = false;
        uint64_t epoch = 0;
    };

    bool setup();
    uint32_t add_node(uint32_t parent, const std::string& name);
    void forget(uint32_t top);
    uint32_t child(uint32_t parent, const std::string& name) const;
    bool watch(uint32_t i, int fd);
    bool list(uint32_t i, int fd, std::vector<std::string>& subdirs);
    bool scan(uint32_t top, UniqueFd fd);
    UniqueFd open_rel(const std::string& rel, bool& root_gone) const;
    bool watch_made();
    [[nodiscard]] std::string rel(uint32_t i) const;
    bool drain();
    bool read_queue(bool& any);
    void note(uint32_t node, Kind kind, const char* name);
    void serve(Conn& c);
    std::string answer_start() const;
    std::string answer_finish(const Conn& c) const;

    std::string root_;
    wire::Paths paths_;
    UniqueFd lock_, ino_, listen_;
    dev_t dev_ = 0;
    ino_t root_ino_ = 0;
    std::vector<Node> nodes_;
    std::vector<uint32_t> free_;
    std::unordered_map<int, uint32_t> by_wd_;
    std::set<uint32_t> repos_;  // the nodes with a HEAD or a .git
    std::map<std::pair<uint32_t, std::string>, uint32_t> children_;
    // Directories made or moved in, to be watched and read: by parent (and its generation) and name.
    struct Made {
        uint32_t parent, gen;
        std::string name;
    };
    std::vector<Made> made_;
    std::deque<Event> log_;
    uint64_t seq_ = 0, dropped_to_ = 0;  // events up to DROPPED_TO_ are no longer kept
    std::vector<Conn> conns_;
    bool failed_ = false;  // a limit: no new watcher for a while
    alignas(struct inotify_event) char buf_[65536];
    alignas(8) char dents_[32768];  // getdents64 records are 8-byte aligned within it
};

}  // namespace cordon::watcher

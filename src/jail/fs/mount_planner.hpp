// The mount planner (mount_plan.cpp), shared with its walk of the protected paths
// (mount_plan_protect.cpp): the ranks that order the ops, and the planning steps' state.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cordon/mount_plan.hpp"

namespace cordon::mount_planner {

using K = MountOp::Kind;

// Ops from profiles and --ro/--rw/--tmpfs/--hide are sorted so that a parent is always mounted
// before anything below it (depth first), then by rank, then in the order given. Among ops at the
// same depth, each rank may cover the ones before it on the same path.
enum class Rank {
    Workdir,     // first, so that an explicit --tmpfs or --ro of the workdir itself wins over it
    Fresh,       // new filesystems: --tmpfs, the private HOME, /proc and its protection, /dev
    HostPaths,   // --ro and --rw: the host's paths shown in the jail
    Hides,       // --hide: over what the host's paths show
    Protection,  // protected paths, the pins on the way to them, cordon's config
};

struct Ranked {
    size_t depth;
    Rank rank;
    size_t seq;
    MountOp op;
};

// The number of components of PATH ("/": 0).
size_t depth(const std::string& path);
// Whether S has a glob character.
bool has_wildcard(std::string_view s);
// The host's answers, each asked once (many entries share a path: .git, .git/worktrees/*).
HostFs caching(const HostFs& host);

// A protected path: ENTRY below BASE, a host directory the jail can write.
struct Protected {
    std::string base;
    std::string entry;  // relative to base; a trailing '/' means a directory
    bool only_existing;
};

// The planning steps, in the order plan_mounts() calls them, and what they share.
class Planner {
public:
    Planner(const Spec& spec, const HostFs& host) : spec_(spec), fs_(caching(host)) {}

    void plan_workdir();
    void plan_fresh_filesystems();
    void plan_host_paths();
    void plan_hides();
    void plan_protected_paths();
    void plan_workdir_parents();
    void order_ranked();
    void plan_mount_request(const MountRequest& req);
    void find_handoff();
    MountPlan take() { return std::move(plan_); }

private:
    void add(Rank rank, MountOp op) {
        size_t d = depth(op.dest);
        ranked_.push_back(Ranked{d, rank, ranked_.size(), std::move(op)});
    }
    void plan_workdir_git();
    void expose(const std::string& path, bool readonly, const char* why);
    std::string writable_base(const std::string& dir) const;
    void plan_cordon_dirs(std::vector<Protected>& entries);
    void expand_patterns(std::vector<Protected>& entries);
    void add_git_entries(std::vector<Protected>& entries);
    bool covered(const std::string& base, const std::string& path) const;
    HostFs::Type type_in_base(const std::string& base, std::string_view name, const std::string& path);
    void protect(const Protected& p);
    bool first_pin(const std::string& path);
    void pin(const std::vector<std::string>& dirs);
    void cover_symlink(const std::string& path);
    void placehold(const std::string& base, const std::string& path, Placeholder::Type type);

    const Spec& spec_;
    HostFs fs_;
    MountPlan plan_;
    std::vector<Ranked> ranked_;
    std::vector<std::string> hidden_;  // what the hide patterns matched
    std::vector<std::string> pinned_;  // bound onto themselves by the protected-path walk
    std::vector<std::pair<std::string, std::vector<std::string>>> listed_;  // a base's names
};

}  // namespace cordon::mount_planner

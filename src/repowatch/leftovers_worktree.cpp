// RepoWatch's judgement of a linked worktree's own git directory (leftovers.hpp), outside the
// workdir: its rebase and cherry-pick state.
#include <fcntl.h>
#include <sys/stat.h>

#include <string_view>

#include "cordon/git_config.hpp"
#include "leftovers_state.hpp"

namespace cordon {

using namespace watch;  // NOLINT(google-build-using-namespace): this module's own helpers

namespace {

// A sequencer's opts (git's config format): a strategy = VALUE line whose value holds a slash.
bool strategy_with_path(std::string_view text, bool config_format) {
    if (!config_format) return text.find('/') != std::string_view::npos;
    for (size_t at = 0; at < text.size();) {
        size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(at, end - at);
        at = end + 1;
        const size_t key = line.find_first_not_of(" \t");
        if (key == std::string_view::npos || line.substr(key, 8) != "strategy") continue;
        const size_t eq = line.find_first_not_of(" \t", key + 8);
        if (eq != std::string_view::npos && line[eq] == '=' && line.find('/', eq) != std::string_view::npos)
            return true;
    }
    return false;
}

}  // namespace

std::vector<Quarantined> RepoWatch::judge_worktree_gitdir(const std::string& gitdir) const {
    std::vector<Quarantined> out;
    UniqueFd top(::open(gitdir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!top) return out;
    for (const char* dir : {"rebase-merge", "sequencer"}) {
        auto dsx = stat_at(top.get(), dir);
        if (!dsx) continue;
        if (S_ISLNK(dsx->stx_mode)) {
            if (state_->changed(*dsx))
                out.push_back(move_aside(top.get(), gitdir, dir,
                                         "is a symlink, which the host's git would follow to read what it runs"));
            continue;
        }
        UniqueFd dfd = open_dir_at(top.get(), dir);
        if (!dfd) continue;
        const std::string rel = gitdir + "/" + dir;
        for (const char* name : {"git-rebase-todo", "todo", "strategy", "opts"}) {
            auto sx = stat_at(dfd.get(), name);
            if (!sx || !state_->changed(*sx)) continue;
            const std::string_view n = name;
            const bool strategy = n == "strategy" || n == "opts";
            std::string why;
            if (S_ISLNK(sx->stx_mode)) {
                why = "is a symlink, which the host's git would follow to read what it runs";
            } else if (auto text = read_small(dfd.get(), name)) {
                // git runs a strategy as the program git-merge-STRATEGY: one with a slash is a
                // path (relative to the worktree, which the command writes).
                if (strategy && strategy_with_path(*text, n == "opts")) {
                    why = "names a merge strategy with a path, which the host's git would run on --continue";
                } else if (!strategy) {
                    why = git_todo_unsafe(*text);
                    if (!why.empty()) why += ", which the host's git would run on --continue";
                }
            } else if (S_ISREG(sx->stx_mode)) {
                why = "is too large to judge (over 1 MiB)";
            }
            if (!why.empty()) out.push_back(move_aside(dfd.get(), rel, name, why));
        }
    }
    return out;
}

}  // namespace cordon

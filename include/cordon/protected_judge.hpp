// The Landlock jail's protected paths (cordon(1), ISOLATION). Landlock only grants, and a right
// on a directory covers every name in it, so the jail cannot let the command make files at the
// workdir's top and in .git while refusing .claude/, .vscode/ or .envrc there. Those paths are
// writable in that jail during the run and judged when it ends, as RepoWatch judges what git
// reads (leftovers.hpp): each one the run made, changed, removed or led elsewhere is moved
// aside to NAME.cordon-unsafe, a name no tool reads, and a small file from before is put back.
// git's own (config, config.worktree, hooks, commondir below a .git) are RepoWatch's: it judges
// them as git reads them, and puts the config from before back.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <memory>
#include <string>
#include <vector>

#include "cordon/leftovers.hpp"

namespace cordon {

class ProtectedJudge final {
public:
    // A look at each of PATHS (absolute; those outside WORKDIR and git's own are left) as it is
    // before the command starts; nullptr when there is nothing to judge.
    static std::unique_ptr<ProtectedJudge> before(const std::string& workdir, const std::vector<std::string>& paths);

    ProtectedJudge(const ProtectedJudge&) = delete;
    ProtectedJudge& operator=(const ProtectedJudge&) = delete;
    ~ProtectedJudge();

    // The jail is gone: what the run changed, moved aside (paths relative to the workdir).
    std::vector<Quarantined> after();

    struct State;

private:
    explicit ProtectedJudge(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

// True for a protected path that RepoWatch judges (REL relative to the workdir): config,
// config.worktree, hooks and commondir below a directory named .git.
bool judged_by_repowatch(const std::string& rel);

}  // namespace cordon

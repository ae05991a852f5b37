// What a run leaves in the workdir for the host's git (cordon(1), WHAT THE JAIL MAY LEAVE
// BEHIND): git takes any directory with a valid HEAD, objects/ and refs/ (or a commondir) for a
// repository, with its own config and hooks, and follows any .git file or commondir to another.
// The workdir's own .git is protected by mounts; a repository below it, made or changed by the
// command, can only be looked at afterwards. RepoWatch does that:
//
//   start    after clone, while the child builds the jail and before the command may start:
//            the run's start time T0, and one read of every directory of the workdir (keeping
//            a descriptor of each), noting the repositories it finds with their state from
//            before the run
//   finish   once the jail is gone: every directory whose ctime moved since T0 is read again
//            (ctime cannot be set back from user space), a new subtree is read whole, and every
//            repository made or changed in the run is judged. What git could run or follow is
//            moved aside, to NAME.cordon-unsafe: a config with a key git may run (as judged by
//            git_config_unsafe), a hook, a .git symlink, a .git file or commondir that leads out
//            of the workdir or through a symlink. A config the command changed in a repository
//            that was there before gets back its content from before the run.
//
// Nothing is judged that the run did not touch: a repository of the user's own, with hooks and
// a pager of their choice, stays as it is. Everything is done through descriptors opened
// without following symlinks, so the jail's links cannot turn the supervisor's renames
// elsewhere.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <ctime>
#include <memory>
#include <string>
#include <vector>

namespace cordon {

// One thing moved aside.
struct Quarantined {
    std::string path;       // relative to the workdir: "sub/.git/config"
    std::string moved_to;   // likewise: "sub/.git/config.cordon-unsafe"
    std::string why;        // "sets core.fsmonitor (line 3), which git runs"
    bool restored = false;  // the content from before the run was put back at PATH
};

class RepoWatch final {
public:
    // Begins watching WORKDIR; nullptr when it cannot be opened (nothing to watch). NOW is the
    // run's start on the file system's clock (CLOCK_REALTIME_COARSE); tests pass their own.
    static std::unique_ptr<RepoWatch> start(const std::string& workdir);
    static std::unique_ptr<RepoWatch> start(const std::string& workdir, struct timespec now);

    RepoWatch(const RepoWatch&) = delete;
    RepoWatch& operator=(const RepoWatch&) = delete;
    ~RepoWatch();

    // The placeholders are made, and the command is about to start: where the watcher's view
    // is used, from here on (cordon's own placeholders are not the run's).
    void before_command();
    // The workdir's own protected paths are writable in this run (the Landlock jail): its own
    // .git file is judged too, as a nested one is.
    void own_protections_writable();
    // Where the run is watched by events (leftovers_events.cpp): their descriptor, to be polled
    // while the run goes on (-1 where there is none), and what takes them off the queue.
    [[nodiscard]] int events_fd() const;
    void on_events();
    // The jail is gone: judge what the run made or changed and move aside what is unsafe.
    std::vector<Quarantined> finish();
    // The command never ran: judge nothing.
    void cancel();
    // After finish: what told it what the run changed: "events" (fanotify), "watcher" (the
    // watcher process), or "walk" (the walk, also where either of those fell short).
    [[nodiscard]] const char* judged_by() const { return judged_by_; }

    struct State;

private:
    explicit RepoWatch(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
    const char* judged_by_ = "walk";
};

// RepoWatch's watcher process (cordon started as "cordon-repowatch": leftovers_watcher.cpp).
int repowatch_daemon_main(const std::vector<std::string>& args);

// The findings as JSON objects for --status-json's "quarantined".
std::string quarantined_json(const Quarantined& q);

}  // namespace cordon

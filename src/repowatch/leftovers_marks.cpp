// The marks of runs killed before their judgement (leftovers.hpp), in cordon's private runtime
// directory, and the tree caches beside them.
#include <sys/file.h>

#include <cerrno>
#include <cstdio>
#include <functional>

#include "cordon/runtime_dir.hpp"
#include "leftovers_state.hpp"

namespace cordon {

using namespace watch;  // NOLINT(google-build-using-namespace): this module's own helpers

// --- runs killed before their judgement -----------------------------------------------------------

namespace {

std::string format_mark(const struct timespec& t, const std::string& root) {
    return std::to_string(t.tv_sec) + " " + std::to_string(t.tv_nsec) + "\n" + root + "\n";
}

}  // namespace

// A run killed (SIGKILL) before it judged what it left would leave it unjudged for good: the
// next run would see it as older than itself. So each run keeps a mark, locked, in the private
// runtime directory while its judgement is pending: WATCH-<hash of the workdir>.<pid>.<time>,
// holding its T0 and the workdir. A later run in the same workdir that can lock a mark (its
// owner is gone) takes it over: it judges everything changed since the earliest such T0, writes
// that into its own mark before the command starts (so that a kill now loses nothing either),
// and removes the marks once it has judged.
void RepoWatch::State::take_over_killed() {
    if (private_runtime_dir().empty()) return;
    const std::string dir = private_runtime_dir() + "/watch";
    (void)::mkdir(dir.c_str(), 0700);  // inside the private runtime directory: ours alone
    const std::string hash = workdir_key(root);
    const std::string prefix = std::string("watch-") + hash + ".";
    cache_path = dir + "/tree-" + hash;
    UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dfd) return;
    std::vector<std::string> names, others;
    for_each_entry(
        dfd.get(), buf, sizeof buf,
        [&](const char* name, unsigned char) {
            if (std::string_view(name).rfind(prefix, 0) == 0) {
                names.emplace_back(name);
            } else if (name != "tree-" + hash) {
                others.emplace_back(name);
            }
        },
        false);
    drop_others(dfd.get(), others);
    // A live run's mark is written before its command starts, so whatever that command wrote is
    // newer than the mark's T0: files newer than the oldest such T0 are not trusted as from before.
    std::optional<struct timespec> oldest_live;
    for (const auto& name : names) {
        UniqueFd fd(::openat(dfd.get(), name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
        if (!fd) continue;
        const bool live = ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0;
        auto text = read_small(dfd.get(), name.c_str(), 8192);
        struct timespec t {};
        long long sec = 0, nsec = 0;
        if (!text || std::sscanf(text->c_str(), "%lld %lld", &sec, &nsec) != 2 ||
            text->find("\n" + root + "\n") == std::string::npos) {
            continue;
        }
        t.tv_sec = static_cast<time_t>(sec);
        t.tv_nsec = static_cast<long>(nsec);
        if (live) {  // its run goes on, and judges itself
            if (!oldest_live || precedes(t.tv_sec, t.tv_nsec, *oldest_live)) oldest_live = t;
            continue;
        }
        if (precedes(t.tv_sec, t.tv_nsec, t0)) t0 = t;
        taken.emplace_back(dir + "/" + name, std::move(fd));
    }
    runs_known = true;
    trusted_before = t0;
    if (oldest_live && precedes(oldest_live->tv_sec, oldest_live->tv_nsec, t0)) trusted_before = *oldest_live;
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    mark = dir + "/" + prefix + std::to_string(::getpid()) + "." + std::to_string(now.tv_nsec);
    mark_fd.reset(::open(mark.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    const std::string text = format_mark(t0, root);
    if (!mark_fd || ::flock(mark_fd.get(), LOCK_EX) != 0 || !write_all(mark_fd.get(), text.data(), text.size())) {
        if (mark_fd) ::unlink(mark.c_str());
        mark_fd.reset();
        mark.clear();
    }
}

// The directory holds a tree cache per workdir and the marks of killed runs, which a run in
// their workdir takes over. Past kKeepOthers entries of other workdirs, the caches go (they only
// save time) and so do the marks whose workdir is gone.
void RepoWatch::State::drop_others(int dfd, const std::vector<std::string>& others) {
    constexpr size_t kKeepOthers = 256;
    if (others.size() <= kKeepOthers) return;
    for (const auto& name : others) {
        if (name.rfind("tree-", 0) == 0) {
            ::unlinkat(dfd, name.c_str(), 0);
            continue;
        }
        UniqueFd fd(::openat(dfd, name.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
        if (!fd || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;
        auto text = read_small(dfd, name.c_str(), 8192);
        const size_t nl = text ? text->find('\n') : std::string::npos;
        if (nl == std::string::npos) continue;
        const std::string wd = trim_right(text->substr(nl + 1));
        struct stat st {};
        if (::stat(wd.c_str(), &st) != 0 && errno == ENOENT) ::unlinkat(dfd, name.c_str(), 0);
    }
}

// After the judgement (DONE) the marks go; a run that never started its command leaves those
// it took over for the next one.
void RepoWatch::State::drop_marks(bool done) {
    if (done) {
        for (auto& [path, fd] : taken) ::unlink(path.c_str());
    }
    taken.clear();
    if (!mark.empty()) ::unlink(mark.c_str());
    mark_fd.reset();
    mark.clear();
}

}  // namespace cordon

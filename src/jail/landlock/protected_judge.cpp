#include "cordon/protected_judge.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string_view>

#include "cordon/fd.hpp"
#include "cordon/paths.hpp"

namespace cordon {

namespace {

// Bounds (cordon(1), BOUNDS): entries looked at below one protected directory, its depth, and
// the files from before kept to be put back.
constexpr size_t kMaxEntries = 4096;
constexpr int kMaxDepth = 16;
constexpr size_t kMaxCopy = size_t{64} * 1024;
constexpr size_t kCopyBudget = size_t{1024} * 1024;

std::vector<std::string> components(const std::string& rel) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= rel.size()) {
        const size_t end = std::min(rel.find('/', start), rel.size());
        if (end > start) out.emplace_back(rel.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

std::optional<struct statx> look_at(int dirfd, const char* name) {
    struct statx sx {};
    if (::statx(dirfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | (*name ? 0 : AT_EMPTY_PATH),
                STATX_TYPE | STATX_MODE | STATX_INO | STATX_CTIME | STATX_SIZE, &sx) != 0) {
        return std::nullopt;
    }
    return sx;
}

std::string stamp(const struct statx& sx) {
    return std::to_string(sx.stx_mode) + " " + std::to_string(sx.stx_ino) + " " + std::to_string(sx.stx_ctime.tv_sec) +
           "." + std::to_string(sx.stx_ctime.tv_nsec) + " " + std::to_string(sx.stx_size);
}

// One protected path as it was, or is: the inode and type of each directory on its way (up to
// the first that is not one), and a print of it and all below it. The ctime that it records
// moves on every change of content, name, link or mode, and nothing in user space sets it back.
struct Look {
    std::vector<std::string> way;  // "ino type" per directory on the way
    bool blocked = false;          // the way stops at something that is not a directory
    bool exists = false;
    bool overflow = false;
    mode_t mode = 0;
    std::string print;
    std::optional<std::string> copy;  // a small regular file's content
};

class Looker {
public:
    explicit Looker(int workdir) : workdir_(workdir) {}

    // The directory holding the last of PARTS, opened without following anything, and the
    // way to it recorded in LOOK; an invalid fd where the way stops.
    UniqueFd parent(const std::vector<std::string>& parts, Look& look) const {
        UniqueFd dir(::fcntl(workdir_, F_DUPFD_CLOEXEC, 0));
        for (size_t i = 0; i + 1 < parts.size() && dir; ++i) {
            auto sx = look_at(dir.get(), parts[i].c_str());
            if (!sx) return {};
            look.way.push_back(std::to_string(sx->stx_ino) + " " + std::to_string(sx->stx_mode & S_IFMT));
            if (!S_ISDIR(sx->stx_mode)) {
                look.blocked = true;
                return {};
            }
            dir = UniqueFd(::openat(dir.get(), parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        }
        return dir;
    }

    Look look(const std::vector<std::string>& parts, size_t& copy_budget) const {
        Look look;
        UniqueFd dir = parent(parts, look);
        if (!dir) return look;
        auto sx = look_at(dir.get(), parts.back().c_str());
        if (!sx) return look;
        look.exists = true;
        look.mode = sx->stx_mode;
        look.print = stamp(*sx);
        if (S_ISDIR(sx->stx_mode)) {
            size_t entries = 0;
            UniqueFd sub(::openat(dir.get(), parts.back().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!sub || !walk(std::move(sub), 0, entries, look.print)) look.overflow = true;
        } else if (S_ISREG(sx->stx_mode) && sx->stx_size <= kMaxCopy && sx->stx_size <= copy_budget) {
            look.copy = read_file(dir.get(), parts.back().c_str());
            if (look.copy) copy_budget -= look.copy->size();
        }
        return look;
    }

private:
    // Everything below DIR into PRINT, name by name in order; false past the bounds.
    static bool walk(UniqueFd dir, int depth, size_t& entries, std::string& print) {
        if (depth > kMaxDepth) return false;
        std::vector<std::string> names;
        alignas(8) char buf[8192];
        for (long n = 0; (n = ::syscall(SYS_getdents64, dir.get(), buf, sizeof buf)) > 0;) {
            for (long off = 0; off < n;) {
                const auto* d = reinterpret_cast<const struct dirent64*>(buf + off);
                off += d->d_reclen;
                const std::string_view name = d->d_name;
                if (name == "." || name == "..") continue;
                if (++entries > kMaxEntries) return false;
                names.emplace_back(name);
            }
        }
        std::sort(names.begin(), names.end());
        for (const auto& name : names) {
            auto sx = look_at(dir.get(), name.c_str());
            if (!sx) continue;
            print += "\n" + std::to_string(depth) + " " + name + " " + stamp(*sx);
            if (!S_ISDIR(sx->stx_mode)) continue;
            UniqueFd sub(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!sub || !walk(std::move(sub), depth + 1, entries, print)) return false;
        }
        return true;
    }

    static std::optional<std::string> read_file(int dir, const char* name) {
        UniqueFd fd(::openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        if (!fd) return std::nullopt;
        std::string out;
        char buf[8192];
        for (ssize_t n = 0; (n = ::read(fd.get(), buf, sizeof buf)) > 0;) {
            out.append(buf, static_cast<size_t>(n));
            if (out.size() > kMaxCopy) return std::nullopt;
        }
        return out;
    }

    int workdir_;
};

struct Watched {
    std::string rel;
    std::vector<std::string> parts;
    Look was;
};

}  // namespace

bool judged_by_repowatch(const std::string& rel) {
    const auto parts = components(rel);
    if (parts.size() < 2) return false;
    const std::string& name = parts.back();
    if (name != "config" && name != "config.worktree" && name != "hooks" && name != "commondir") return false;
    return std::find(parts.begin(), parts.end() - 1, ".git") != parts.end() - 1;
}

struct ProtectedJudge::State {
    UniqueFd workdir;
    std::vector<Watched> paths;
};

ProtectedJudge::ProtectedJudge(std::unique_ptr<State> state) : state_(std::move(state)) {}
ProtectedJudge::~ProtectedJudge() = default;

std::unique_ptr<ProtectedJudge> ProtectedJudge::before(const std::string& workdir,
                                                       const std::vector<std::string>& paths) {
    auto state = std::make_unique<State>();
    state->workdir = UniqueFd(::open(workdir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!state->workdir) return nullptr;
    const Looker looker(state->workdir.get());
    size_t budget = kCopyBudget;
    for (const auto& path : paths) {
        if (!path_under(path, workdir)) continue;
        std::string rel = path.substr(workdir == "/" ? 1 : workdir.size() + 1);
        if (judged_by_repowatch(rel)) continue;
        if (std::any_of(state->paths.begin(), state->paths.end(), [&](const Watched& w) { return w.rel == rel; }))
            continue;
        Watched w{rel, components(rel), {}};
        if (w.parts.empty()) continue;
        w.was = looker.look(w.parts, budget);
        state->paths.push_back(std::move(w));
    }
    if (state->paths.empty()) return nullptr;
    return std::unique_ptr<ProtectedJudge>(new ProtectedJudge(std::move(state)));
}

namespace {

std::string join_parts(const std::vector<std::string>& parts, size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i) out += (i ? "/" : "") + parts[i];
    return out;
}

// NAME in DIR renamed to a free NAME.cordon-unsafe[.N]; the new name, or "" where none could be.
std::string move_aside(int dir, const std::string& name) {
    for (int i = 0; i < 100; ++i) {
        std::string to = name + ".cordon-unsafe" + (i ? "." + std::to_string(i) : "");
        if (::renameat2(dir, name.c_str(), dir, to.c_str(), RENAME_NOREPLACE) == 0) return to;
        if (errno != EEXIST) return "";
    }
    return "";
}

bool put_back(int dir, const std::string& name, const Look& was) {
    UniqueFd fd(::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return false;
    return write_all(fd.get(), was.copy->data(), was.copy->size()) && ::fchmod(fd.get(), was.mode & 07777) == 0;
}

constexpr const char* kWhy = " (the Landlock jail cannot keep it read-only)";

}  // namespace

std::vector<Quarantined> ProtectedJudge::after() {
    std::vector<Quarantined> out;
    const Looker looker(state_->workdir.get());
    for (const Watched& w : state_->paths) {
        size_t no_copies = 0;
        Look now = looker.look(w.parts, no_copies);
        if (now.way == w.was.way && now.exists == w.was.exists && now.print == w.was.print && !now.overflow &&
            !w.was.overflow) {
            continue;
        }
        Quarantined q;
        size_t depth = w.parts.size();
        size_t same = 0;
        while (same < now.way.size() && same < w.was.way.size() && now.way[same] == w.was.way[same]) ++same;
        if (same < w.was.way.size() && same >= now.way.size()) {
            out.push_back(
                Quarantined{w.rel, "", "is a protected path, removed by the command" + std::string(kWhy), false});
            continue;
        }
        if (same < w.was.way.size() || now.blocked) {
            // A directory on the way was replaced, or the way now leads through something else
            // (a symlink a tool would follow to the protected name): that is moved aside.
            depth = same < w.was.way.size() ? same + 1 : now.way.size();
            q.why = "leads to the protected path " + w.rel + ", and was made or replaced by the command" + kWhy;
        } else if (!now.exists) {
            if (!w.was.exists) continue;  // directories made on the way, and nothing in them
            q.why = "is a protected path, removed by the command" + std::string(kWhy);
        } else if (now.overflow || w.was.overflow) {
            q.why = "is a protected directory of more than " + std::to_string(kMaxEntries) +
                    " entries, which cordon cannot judge one by one" + kWhy;
        } else {
            q.why =
                std::string("is a protected path, ") + (w.was.exists ? "changed" : "made") + " by the command" + kWhy;
        }
        const std::vector<std::string> parts(w.parts.begin(), w.parts.begin() + static_cast<long>(depth));
        q.path = join_parts(parts, depth);
        Look unused;
        UniqueFd dir = looker.parent(parts, unused);
        if (!dir) continue;
        if (now.exists || depth < w.parts.size()) {
            const std::string to = move_aside(dir.get(), parts.back());
            if (to.empty()) {
                q.why += "; it could not be moved aside";
            } else {
                q.moved_to = join_parts(parts, depth - 1) + (depth > 1 ? "/" : "") + to;
            }
        }
        if (depth == w.parts.size() && w.was.copy && (now.exists ? !q.moved_to.empty() : true)) {
            q.restored = put_back(dir.get(), parts.back(), w.was);
        }
        out.push_back(std::move(q));
    }
    return out;
}

}  // namespace cordon

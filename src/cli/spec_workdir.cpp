// build_spec's workdir step: which directory the jail shares, and how (spec_steps.hpp).
#include "spec_steps.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cordon/fd.hpp"
#include "cordon/git_config.hpp"
#include "cordon/paths.hpp"

namespace cordon::spec_steps {

namespace {

// --workdir DIR: an existing directory, resolved.
Result<std::string> explicit_workdir(const std::string& wd, const HostInfo& host) {
    std::string n = normalize_path(wd, host.cwd);
    struct stat st {};
    if (::stat(n.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return make_error("--workdir", "'" + wd + "' is not a directory");
    }
    char real[PATH_MAX];
    if (!real_path(n, real)) return sys_error("--workdir: " + wd);
    return std::string(real);
}

// GITDIR is a git directory as git's is_git_directory takes one: a valid HEAD (a symlink into
// refs/, "ref: refs/...", or an object name), and objects/ and refs/ (or a commondir).
bool is_git_directory(const std::string& gitdir) {
    struct stat st {};
    const std::string head = gitdir + "/HEAD";
    if (::lstat(head.c_str(), &st) != 0) return false;
    if (S_ISLNK(st.st_mode)) {
        char target[256];
        const ssize_t n = ::readlink(head.c_str(), target, sizeof target);
        if (n < 5 || std::string_view(target, static_cast<size_t>(n)).rfind("refs/", 0) != 0) return false;
    } else {
        auto text = read_small_file(head);
        if (!text) return false;
        const bool ref = text->rfind("ref:", 0) == 0 && text->find("refs/") != std::string::npos;
        const size_t hex = text->find_first_not_of("0123456789abcdef");
        if (!ref && hex != 40 && hex != 64) return false;
    }
    if (::stat((gitdir + "/commondir").c_str(), &st) == 0) return true;
    struct stat objects {
    }, refs{};
    return ::stat((gitdir + "/objects").c_str(), &objects) == 0 && S_ISDIR(objects.st_mode) &&
           ::stat((gitdir + "/refs").c_str(), &refs) == 0 && S_ISDIR(refs.st_mode);
}

// What DIR's .git entry makes of DIR for git: a repository's top (Yes), nothing (No: git looks
// further up), or one git refuses for its owner (Refused: "dubious ownership", safe.directory's
// default, which stops git's search too). For a root caller, a repository that one other user
// owns whole (its top and its .git directory) is a top too: there the jail may take that
// owner's ids (owner_idmap; root_may_take says where), so git inside finds it its own, as a
// CI job's root finds a runner's checkout with safe.directory set.
enum class Top { Yes, No, Refused };
Top repository_at(const std::string& dir) {
    const std::string dotgit = dir == "/" ? std::string("/.git") : dir + "/.git";
    struct stat st {};
    if (::lstat(dotgit.c_str(), &st) != 0) return Top::No;
    std::string gitdir = dotgit;
    if (S_ISREG(st.st_mode)) {  // a worktree's or a submodule's: "gitdir: PATH"
        auto text = read_small_file(dotgit);
        auto path = text ? git_file_path(*text) : std::nullopt;
        if (!path) return Top::No;
        gitdir = path->empty() ? dir : (*path)[0] == '/' ? *path : dir + "/" + *path;
    } else if (::stat(dotgit.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return Top::No;
    }
    if (!is_git_directory(gitdir)) return Top::No;
    struct stat top {
    }, git{};
    if (::stat(dir.c_str(), &top) != 0 || ::stat(gitdir.c_str(), &git) != 0) return Top::No;
    if (top.st_uid == ::geteuid() && git.st_uid == ::geteuid()) return Top::Yes;
    const bool git_dir_here = gitdir == dotgit;  // not a worktree's or submodule's .git file
    return ::geteuid() == 0 && git_dir_here && top.st_uid == git.st_uid ? Top::Yes : Top::Refused;
}

// The top of the git repository that holds DIR (a real path), found as git finds it: the first
// directory from DIR up whose .git is a repository git takes, not past a file system boundary
// (git's GIT_DISCOVERY_ACROSS_FILESYSTEM default) or a GIT_CEILING_DIRECTORIES entry (each
// taken as its real path, as git takes it); nullopt where there is none, or git would refuse it.
std::optional<std::string> repository_top(const std::string& dir, const HostInfo& host) {
    std::vector<std::string> ceilings;
    for (const auto& kv : host.environ) {
        if (kv.rfind("GIT_CEILING_DIRECTORIES=", 0) != 0) continue;
        const std::string list = kv.substr(24);
        for (size_t at = 0; at <= list.size();) {
            size_t end = list.find(':', at);
            if (end == std::string::npos) end = list.size();
            if (end > at) {
                const std::string entry = normalize_path(list.substr(at, end - at), "/");
                char real[PATH_MAX];
                ceilings.push_back(real_path(entry, real) ? std::string(real) : entry);
            }
            at = end + 1;
        }
    }
    struct stat first {};
    if (::stat(dir.c_str(), &first) != 0) return std::nullopt;
    for (std::string d = dir;;) {
        switch (repository_at(d)) {
            case Top::Yes:
                return d;
            case Top::Refused:
                return std::nullopt;
            case Top::No:
                break;
        }
        if (d == "/") return std::nullopt;
        const size_t slash = d.rfind('/');
        const std::string up = slash == 0 ? "/" : d.substr(0, slash);
        if (std::find(ceilings.begin(), ceilings.end(), up) != ceilings.end()) return std::nullopt;
        struct stat st {};
        if (::stat(up.c_str(), &st) != 0 || st.st_dev != first.st_dev) return std::nullopt;
        d = up;
    }
}

// DIR's real path, or "" where it has none.
std::string real_dir(const std::string& dir) {
    char real[PATH_MAX];
    struct stat st {};
    return real_path(dir, real) && ::stat(real, &st) == 0 && S_ISDIR(st.st_mode) ? std::string(real) : std::string();
}

// Where the workdir WD is a linked worktree or a submodule's checkout, the git directories its
// .git file leads to that lie outside it, as git finds them (the .git file's gitdir, and the
// commondir that names); both empty where git would not take them (not ours: git refuses a
// repository of another owner), or where either holds the workdir or is HOME or a system
// directory. UNSAFE is set_workdir's test of the latter.
template <typename Unsafe>
void find_workdir_git_dirs(const std::string& wd, const Unsafe& unsafe, Spec& s, RunOptions& o) {
    const std::string dotgit = wd == "/" ? std::string("/.git") : wd + "/.git";
    struct stat st {};
    if (::lstat(dotgit.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
    auto text = read_small_file(dotgit);
    auto path = text ? git_file_path(*text) : std::nullopt;
    if (!path || path->empty()) return;
    const std::string gitdir = real_dir(normalize_path(*path, wd));
    if (gitdir.empty() || !is_git_directory(gitdir)) return;
    std::string common;
    if (auto named = read_small_file(gitdir + "/commondir")) {
        common = real_dir(normalize_path(git_commondir_path(*named), gitdir));
        if (common.empty()) return;  // git fails there too
    }
    const std::string* dirs[] = {&gitdir, &common};
    for (const std::string* d : dirs) {
        if (d->empty()) continue;
        if (::stat(d->c_str(), &st) != 0 || st.st_uid != ::geteuid()) return;
        if (path_at_or_under(*d, wd)) return;  // shown with the workdir already
        if (path_at_or_under(wd, *d) || unsafe(*d)) {
            const std::string why = "the workdir's git directory " + *d +
                                    " is not shared (it holds the workdir, or is /, HOME or a system directory): "
                                    "git cannot read the repository inside the jail";
            o.workdir_note = o.workdir_note.empty() ? why : o.workdir_note + "; " + why;
            return;
        }
    }
    s.workdir_gitdir = gitdir;
    s.workdir_commondir = common;
}

// A root caller's workdir WD that another user owns: that owner's uid and the group to idmap it
// from (cordon(1), ROOT CALLERS), or nullopt, with WHY set where the owner's files stay nobody's
// for a reason to tell. Never where the jail would write what the owner's shell or tools run:
// the owner's HOME (compared by device and inode with it and each directory above it, so that
// no spelling, symlink or bind mount of it passes), a directory that looks like a HOME (shell
// start-up files, .ssh, .gitconfig: an owner without a passwd line, a HOME bind-mounted into a
// container), or one with another file system mounted below it (the idmap would take that
// too). The group is the owner's primary one; without a passwd line, the top's group only where
// it is the owner's own (gid = uid): else a group the owner is not in would be the jail's.
std::optional<std::pair<uid_t, gid_t>> owner_idmap(const std::string& wd, struct stat& top, std::string& why) {
    if (::stat(wd.c_str(), &top) != 0 || top.st_uid == 0) return std::nullopt;
    const auto owner = passwd_entry(top.st_uid);
    const std::string who = owner ? owner->name : "uid " + std::to_string(top.st_uid);
    if (owner && !owner->home.empty()) {
        char real[PATH_MAX];
        std::string d = real_path(owner->home, real) ? std::string(real) : owner->home;
        struct stat home {};
        const bool have_home = ::stat(d.c_str(), &home) == 0;
        for (;;) {
            struct stat st {};
            if (::stat(d.c_str(), &st) == 0 && st.st_dev == top.st_dev && st.st_ino == top.st_ino) {
                why = "is the home directory of " + who + ", or holds it";
                return std::nullopt;
            }
            if (d.empty() || d == "/") break;
            d = std::string(path_parent(d));
        }
        // Below that HOME, in a dot directory or ~/bin: where their tools and PATH take from
        // (~/.local/bin, ~/.config, ~/.cargo). Found by device and inode too.
        for (std::string below = wd; have_home && below != "/";) {
            const std::string up(path_parent(below));
            struct stat st {};
            if (::stat(up.c_str(), &st) == 0 && st.st_dev == home.st_dev && st.st_ino == home.st_ino) {
                const std::string_view first = path_basename(below);
                if (first.starts_with(".") || first == "bin") {
                    why =
                        "is in " + std::string(first) + " of " + who + "'s home directory, where their tools run from";
                    return std::nullopt;
                }
                break;
            }
            below = up;
        }
    }
    for (const char* dot : {".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zprofile", ".zshenv",
                            ".ssh", ".gitconfig"}) {
        struct stat st {};
        if (::fstatat(AT_FDCWD, (wd + "/" + dot).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
            why = "belongs to " + who + " and looks like a home directory (it holds " + dot + ")";
            return std::nullopt;
        }
    }
    if (mounts_below(wd)) {
        why = "belongs to " + who + " and has another file system mounted below it";
        return std::nullopt;
    }
    if (owner) return std::pair{top.st_uid, owner->gid};
    if (top.st_gid == top.st_uid) return std::pair{top.st_uid, top.st_gid};
    why = "belongs to " + who + ", who has no passwd line, and to group " + std::to_string(top.st_gid) +
          ", which need not be theirs";
    return std::nullopt;
}

}  // namespace

std::optional<std::string> read_small_file(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 4096) return std::nullopt;
    std::string text(static_cast<size_t>(st.st_size), '\0');
    if (::read(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) return std::nullopt;
    return text;
}

// Whether a root caller's workdir may be TOP, the repository that holds the current directory
// CWD, instead of CWD alone: where root owns TOP, or where another user owns TOP, CWD and the
// repository's .git (repository_at), has a passwd line, and TOP may be idmapped from them
// (owner_idmap: not their HOME or a directory in it that their tools read, nothing that looks
// like a HOME). A directory of root's own inside their checkout stays root's workdir.
bool root_may_take(const std::string& top, const std::string& cwd) {
    if (::geteuid() != 0) return true;  // repository_at took only the caller's own
    struct stat t {
    }, c{};
    if (::stat(top.c_str(), &t) != 0 || ::stat(cwd.c_str(), &c) != 0) return false;
    if (t.st_uid == 0) return true;
    std::string why;
    return c.st_uid == t.st_uid && passwd_entry(t.st_uid) && owner_idmap(top, t, why);
}

// The workdir: explicit (--workdir / profile) is honoured; the implicit one is the current
// directory, or the top of the git repository that holds it (so that git works from a
// subdirectory, and the repository's protections apply where its .git is), and it is refused
// when it is /, HOME, an ancestor of HOME or a system directory.
Status set_workdir(const SettingsLayer& merged, const HostInfo& host, Spec& s, RunOptions& o) {
    // HOME may be spelled through a symlink: its resolved form is compared too, resolved at the
    // first directory looked at.
    std::optional<std::string> home_real;
    auto unsafe = [&](const std::string& d) {
        if (!home_real) {
            char real[PATH_MAX];
            home_real = real_path(host.home, real) ? std::string(real) : host.home;
        }
        return is_unsafe_workdir(d, host.home) || is_unsafe_workdir(d, *home_real);
    };
    if (auto wd = get_string(merged, "workdir")) {
        if (*wd != "none") {
            CORDON_ASSIGN_OR_RETURN(s.workdir, explicit_workdir(*wd, host));
        }
    } else if (!s.no_profile) {
        char real[PATH_MAX];
        std::string cwd = real_path(host.cwd, real) ? std::string(real) : host.cwd;
        if (unsafe(cwd) && s.private_home && (cwd == host.home || cwd == *home_real)) {
            o.workdir_note = "the current directory is HOME (" + cwd +
                             "), which is not shared: the jail's HOME is private, and what is written there is "
                             "discarded when the run ends (pass --workdir DIR to share a directory)";
        } else if (unsafe(cwd)) {
            o.workdir_note = "the current directory " + cwd +
                             " is /, HOME, an ancestor of HOME or a system directory, and is not shared: nothing "
                             "written there reaches the host (pass --workdir DIR to share a directory)";
        } else {
            s.workdir = cwd;
            // A subdirectory of a repository: the repository's top, unless that is one of the
            // places above (a HOME kept in git): then the current directory alone, as before.
            if (auto top = repository_top(cwd, host); top && *top != cwd && !unsafe(*top) && root_may_take(*top, cwd)) {
                s.workdir = *top;
                o.workdir_note = "the workdir is the git repository " + *top +
                                 ", which holds the current directory (pass --workdir . for the directory alone)";
            }
        }
    }
    s.workdir_readonly = get_bool(merged, "workdir-readonly");
    if (s.workdir) find_workdir_git_dirs(*s.workdir, unsafe, s, o);
    // A project the caller can read but not write (root's, a read-only file system) runs
    // read-only, as --workdir-readonly runs it: the jail could not write there anyway, and its
    // protections need placeholders made there.
    if (s.workdir && !s.workdir_readonly && ::faccessat(AT_FDCWD, s.workdir->c_str(), W_OK, AT_EACCESS) != 0 &&
        (errno == EACCES || errno == EPERM || errno == EROFS)) {
        s.workdir_readonly = true;
        const std::string why = errno == EROFS ? "is on a read-only file system" : "is not writable by you";
        const std::string ro = "the workdir " + *s.workdir + " " + why + ": it is shared read-only";
        o.workdir_note = o.workdir_note.empty() ? ro : o.workdir_note + "; " + ro;
    }
    // A root caller's jail owns what root owns in the workdir; in one another user owns (a CI
    // job running as root in a checkout of the runner's user), what that owner owns there
    // instead, where owner_idmap allows it: cordon(1), ROOT CALLERS.
    if (s.workdir && !s.workdir_readonly && host.uid == 0) {
        std::string why;
        struct stat top {};
        if (auto owner = owner_idmap(*s.workdir, top, why)) {
            s.workdir_owner_uid = owner->first;
            s.workdir_owner_gid = owner->second;
            s.workdir_dev = top.st_dev;
            s.workdir_ino = top.st_ino;
        } else if (!why.empty()) {
            why = "the workdir " + *s.workdir + " " + why +
                  ": the jail writes only what root owns there (cordon(1), ROOT CALLERS)";
            o.workdir_note = o.workdir_note.empty() ? why : o.workdir_note + "; " + why;
        }
    }
    return {};
}

void set_chdir(const SettingsLayer& merged, const HostInfo& host, Spec& s) {
    s.chdir_explicit = get_string(merged, "chdir").has_value();
    s.chdir = get_string(merged, "chdir").value_or(host.cwd);
    s.chdir = normalize_path(s.chdir, host.cwd);
}

}  // namespace cordon::spec_steps

// Paths: lexical operations on them, and where cordon finds its data files.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon {

// Lexical operations: nothing here asks the file system. They expect absolute, normal paths
// (what normalize_path returns), in which "/" is the ancestor of every other path; none allocates
// but normalize_path and path_components' vector.

// Normalise an absolute or cwd-relative path lexically: "//a/./b/../c/" -> "/a/c".
std::string normalize_path(const std::string& path, const std::string& cwd);
// PATH is DIR or below it: "/a/b" and "/a" are at or under "/a", "/ab" is not. (Inline: the
// mount planner asks this hundreds of times.)
inline bool path_at_or_under(std::string_view path, std::string_view dir) {
    return path.size() >= dir.size() && path.compare(0, dir.size(), dir) == 0 &&
           (path.size() == dir.size() || path[dir.size()] == '/' || dir == "/");
}
// PATH is below DIR, not DIR itself.
inline bool path_under(std::string_view path, std::string_view dir) {
    return path.size() > dir.size() && path_at_or_under(path, dir);
}
// The directory that holds PATH: "/a/b" -> "/a", "/a" -> "/", "/" -> "/" (and "a" -> "/").
std::string_view path_parent(std::string_view path);
// What follows the last '/': "/a/b" -> "b", "a" -> "a"; "" for "/" and for "/a/".
std::string_view path_basename(std::string_view path);
// The file name of a dynamic loader (ld.so, ld-linux-x86-64.so.2, ld64.so.2, ld-musl-*.so.1),
// which run as a program maps the program it is given.
bool is_loader_name(std::string_view name);
// The names between the '/'s, in order, empty ones left out: "/a//b/" and "a/b" -> {"a", "b"}.
std::vector<std::string_view> path_components(std::string_view path);

// realpath(3): PATH with every symlink resolved, into REAL (PATH_MAX bytes); false with errno
// (ENOENT: nothing there). Where /proc is missing, realpath(3) itself.
bool real_path(const std::string& path, char* real);

// <prefix>/share/cordon for the running executable (/proc/self/exe/../../share/cordon),
// so a build tree (<build>/bin/cordon, <build>/share/cordon) works like an installed one.
std::string data_dir();

// The user's configuration directory: $XDG_CONFIG_HOME when it is an absolute path (the XDG
// spec says to ignore relative ones), else HOME/.config; "" when neither is usable. The search
// path trusts $(config_home)/cordon and the jail keeps exactly that directory read-only, so both
// must come from here.
std::string config_home(const std::string& home);
// $XDG_CACHE_HOME if absolute, else HOME/.cache; empty if neither is usable. cordon keeps the
// policy-example cache and the pool of placeholder directories in its cordon/ subdirectory.
std::string cache_home(const std::string& home);

// The search path for KIND ("profiles" or "policies"): $ENV_VAR (colon list),
// $XDG_CONFIG_HOME/cordon/KIND (or ~/.config/cordon/KIND), /etc/cordon/KIND, data_dir()/KIND;
// only the directories trusted_location accepts.
std::vector<std::string> search_path(const std::string& kind, const char* env_var);
// Why PATH (resolved) may not be trusted to hold cordon's profiles or policies, or "": it and
// every directory above it must belong to root or the caller and be writable by no one else
// (a sticky directory above it, /tmp, may be; group write only for root's group or the caller's).
// A data directory next to a binary in /tmp/x/bin must not let another user write the profile
// that a root caller's run then uses.
std::string untrusted_because(const std::string& path);

// UID's name and home directory from /etc/passwd, for a caller without USER or HOME. cordon is
// a static executable, which cannot load the C library's NSS modules: a user known only to a
// directory service (LDAP, SSSD) has no entry here, and gets cordon's fallbacks (cordon(1)).
struct PasswdEntry {
    std::string name;
    std::string home;
    gid_t gid = 0;  // the primary group
};
std::optional<PasswdEntry> passwd_entry(uid_t uid);

// A field of /proc/self/mountinfo (a mount point, a root) with its \ooo escapes undone: the
// kernel writes space, tab, newline and backslash so.
std::string unescape_mountinfo(std::string_view field);
// Whether a file system is mounted anywhere below DIR (a real path, not "/"), as
// /proc/self/mountinfo lists the mounts (its octal escapes undone); true where that cannot be
// read.
bool mounts_below(const std::string& dir);

}  // namespace cordon

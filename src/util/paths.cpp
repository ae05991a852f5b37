#include "cordon/paths.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string_view>
#include <unordered_map>

#include "cordon/fd.hpp"

namespace cordon {

std::string normalize_path(const std::string& path, const std::string& cwd) {
    std::string out;
    if (path.empty() || path[0] != '/') {
        out.reserve(cwd.size() + 1 + path.size());
        out = cwd;
        if (out.empty() || out.back() != '/') out += '/';
    }
    out += path;
    while (out.size() > 1 && out.back() == '/') out.pop_back();
    // Most paths are normal already (the planner asks for hundreds): then nothing is rebuilt.
    auto normal = [&] {
        if (out.empty() || out[0] != '/') return false;
        for (size_t i = 0; i < out.size(); ++i) {
            if (out[i] != '/') continue;
            if (i + 1 < out.size() && out[i + 1] == '/') return false;
            if (out.compare(i, 3, "/./") == 0 || out.compare(i, 4, "/../") == 0) return false;
            if (i + 2 == out.size() && out[i + 1] == '.') return false;
            if (i + 3 == out.size() && out.compare(i + 1, 2, "..") == 0) return false;
        }
        return true;
    };
    if (normal()) return out;
    // Component by component, in place: '.' and empty ones dropped, '..' takes one back
    // (never above the root).
    std::string norm;
    norm.reserve(out.size());
    size_t i = 0;
    while (i <= out.size()) {
        size_t j = out.find('/', i);
        if (j == std::string::npos) j = out.size();
        const std::string_view comp(out.data() + i, j - i);
        if (comp == "..") {
            norm.resize(norm.rfind('/') == std::string::npos ? 0 : norm.rfind('/'));
        } else if (!comp.empty() && comp != ".") {
            norm += '/';
            norm += comp;
        }
        i = j + 1;
    }
    return norm.empty() ? "/" : norm;
}

std::string_view path_parent(std::string_view path) {
    const size_t slash = path.rfind('/');
    return slash == 0 || slash == std::string_view::npos ? "/" : path.substr(0, slash);
}

bool is_loader_name(std::string_view name) {
    static constexpr std::string_view prefixes[] = {"ld-linux", "ld64.so.", "ld-musl-", "ld.so"};
    for (std::string_view p : prefixes) {
        if (name.substr(0, p.size()) == p && name.find(".so") != std::string_view::npos) return true;
    }
    return false;
}

std::string_view path_basename(std::string_view path) {
    return path.substr(path.rfind('/') + 1);
}

std::vector<std::string_view> path_components(std::string_view path) {
    std::vector<std::string_view> out;
    for (size_t pos = 0; pos < path.size();) {
        size_t next = path.find('/', pos);
        if (next == std::string_view::npos) next = path.size();
        if (next > pos) out.push_back(path.substr(pos, next - pos));
        pos = next + 1;
    }
    return out;
}

std::string data_dir() {
    // /proc/self/exe does not change: read once (each search path asks).
    static const std::string dir = [] {
        char buf[PATH_MAX];
        ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
        if (n <= 0) return std::string("/usr/share/cordon");
        // <prefix>/bin/cordon; a prefix of "/" is spelled "" so the result does not start with "//".
        const std::string_view prefix = path_parent(path_parent(std::string_view(buf, static_cast<size_t>(n))));
        return std::string(prefix == "/" ? "" : prefix) + "/" CORDON_DATADIR_REL;
    }();
    return dir;
}

std::string config_home(const std::string& home) {
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && xdg[0] == '/') return xdg;
    if (!home.empty() && home[0] == '/' && home != "/") return home + "/.config";
    return {};
}

std::string cache_home(const std::string& home) {
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && xdg[0] == '/') return xdg;
    if (!home.empty() && home[0] == '/' && home != "/") return home + "/.cache";
    return {};
}

// glibc's realpath(3) reads each component as a link, one system call each; an O_PATH open
// and its /proc/self/fd link take three for any depth.
bool real_path(const std::string& path, char* real) {
    const int fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return false;
    char link[32];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = ::readlink(link, real, PATH_MAX - 1);
    ::close(fd);
    if (n > 0 && real[0] == '/') {
        real[n] = '\0';
        return true;
    }
    return ::realpath(path.c_str(), real) != nullptr;
}

namespace {

// Why the entry P itself (lstat: a symlink is its own entry) may not be trusted, or "". LAST:
// P is the file or directory asked about, not one above it.
std::string untrusted_entry(const std::string& p, bool last) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return "cannot stat " + p;
    if (st.st_uid != 0 && st.st_uid != ::geteuid()) return p + " belongs to uid " + std::to_string(st.st_uid);
    if (S_ISLNK(st.st_mode)) return "";  // its mode means nothing; where it leads is checked too
    const bool sticky_dir = S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0 && !last;
    if ((st.st_mode & S_IWOTH) != 0 && !sticky_dir) return p + " is writable by everyone";
    if ((st.st_mode & S_IWGRP) != 0 && st.st_gid != 0 && st.st_gid != ::getegid() && !sticky_dir)
        return p + " is writable by group " + std::to_string(st.st_gid);
    // An access ACL may grant write to anyone; the mode does not show whom.
    if (::lgetxattr(p.c_str(), "system.posix_acl_access", nullptr, 0) > 0) return p + " has an access ACL";
    return "";
}

// The same for P and every directory above it, as spelled (not resolved). One run asks about
// the same directories many times (each kind's search path, each file found on it, given and
// resolved), so each entry's answer is kept for the rest of the process: a short-lived one
// (cordon and bwrap mode start, search, then run); an entry that passed belongs to root or the
// caller and is writable by no one else, so no one else can change its answer meanwhile.
std::string untrusted_chain(std::string p) {
    static std::unordered_map<std::string, std::string> answers[2];  // [last]
    for (bool last = true;; last = false) {
        auto& known = answers[last ? 1 : 0];
        auto it = known.find(p);
        if (it == known.end()) it = known.emplace(p, untrusted_entry(p, last)).first;
        if (!it->second.empty()) return it->second;
        if (p == "/" || p.empty()) return "";
        p = std::string(path_parent(p));
    }
}

// Why PATH, as given and as resolved, may not be trusted (untrusted_because's question).
std::string untrusted_resolved(const std::string& path) {
    char real[PATH_MAX];
    if (!real_path(path, real)) {
        if (errno == ENOENT || errno == ENOTDIR) return "";             // nothing there to trust or not
        return "cannot resolve " + path + ": " + std::strerror(errno);  // fail closed
    }
    // The path as given (a symlink on the way is an entry of its own: its owner counts) and as
    // resolved (where the links lead); one chain where they are the same.
    char cwd[PATH_MAX];
    std::string given = path;
    if (given.empty() || given[0] != '/') given = std::string(::getcwd(cwd, sizeof cwd) ? cwd : "/") + "/" + given;
    given = normalize_path(given, "/");
    if (std::string why = untrusted_chain(given); !why.empty()) return why;
    return given == real ? "" : untrusted_chain(real);
}

}  // namespace

std::string untrusted_because(const std::string& path) {
    static std::unordered_map<std::string, std::string> answers;  // as untrusted_chain's, absolute paths
    const bool absolute = !path.empty() && path[0] == '/';
    if (auto it = answers.find(path); absolute && it != answers.end()) return it->second;
    std::string why = untrusted_resolved(path);
    if (absolute) answers.emplace(path, why);
    return why;
}

std::vector<std::string> search_path(const std::string& kind, const char* env_var) {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv(env_var); env && *env) {
        std::string s(env);
        size_t start = 0;
        while (start <= s.size()) {
            size_t end = s.find(':', start);
            if (end == std::string::npos) end = s.size();
            if (end > start) dirs.push_back(s.substr(start, end - start));
            start = end + 1;
        }
    }
    const char* home = std::getenv("HOME");
    if (std::string config = config_home(home ? home : ""); !config.empty()) {
        dirs.push_back(config + "/cordon/" + kind);
    }
    dirs.push_back("/etc/cordon/" + kind);
    dirs.push_back(data_dir() + "/" + kind);
    std::erase_if(dirs, [](const std::string& d) { return !untrusted_because(d).empty(); });
    return dirs;
}

std::optional<PasswdEntry> passwd_entry(uid_t uid) {
    // name:password:uid:gid:gecos:home:shell
    std::ifstream in("/etc/passwd");
    for (std::string line; std::getline(in, line);) {
        std::string_view fields[7];
        size_t n = 0, start = 0;
        while (n < 7) {
            const size_t colon = line.find(':', start);
            fields[n++] =
                std::string_view(line).substr(start, colon == std::string::npos ? std::string::npos : colon - start);
            if (colon == std::string::npos) break;
            start = colon + 1;
        }
        if (n < 6) continue;
        uid_t id = 0;
        const auto [end, ec] = std::from_chars(fields[2].data(), fields[2].data() + fields[2].size(), id);
        if (ec != std::errc() || end != fields[2].data() + fields[2].size() || id != uid) continue;
        gid_t gid = 0;
        const auto [gend, gec] = std::from_chars(fields[3].data(), fields[3].data() + fields[3].size(), gid);
        if (gec != std::errc() || gend != fields[3].data() + fields[3].size()) gid = 0;
        return PasswdEntry{std::string(fields[0]), std::string(fields[5]), gid};
    }
    return std::nullopt;
}

std::string unescape_mountinfo(std::string_view field) {
    std::string out;
    for (size_t i = 0; i < field.size(); ++i) {
        const auto octal = [&](size_t k) { return field[k] >= '0' && field[k] <= '7'; };
        if (field[i] == '\\' && i + 3 < field.size() && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
            out += static_cast<char>(((field[i + 1] - '0') << 6) | ((field[i + 2] - '0') << 3) | (field[i + 3] - '0'));
            i += 3;
        } else {
            out += field[i];
        }
    }
    return out;
}

bool mounts_below(const std::string& dir) {
    auto text = read_file("/proc/self/mountinfo");
    if (!text) return true;
    const std::string prefix = dir + "/";
    for (size_t at = 0; at < text->size();) {
        size_t end = text->find('\n', at);
        if (end == std::string::npos) end = text->size();
        const std::string_view line(text->data() + at, end - at);
        at = end + 1;
        // ID PARENT MAJOR:MINOR ROOT MOUNT-POINT ...; the mount point's \ooo escapes undone
        size_t pos = 0;
        for (int field = 0; field < 4 && pos != std::string_view::npos; ++field) {
            pos = line.find(' ', pos);
            if (pos != std::string_view::npos) ++pos;
        }
        if (pos == std::string_view::npos) continue;
        const std::string point = unescape_mountinfo(line.substr(pos, line.find(' ', pos) - pos));
        if (point.compare(0, prefix.size(), prefix) == 0) return true;
    }
    return false;
}

}  // namespace cordon

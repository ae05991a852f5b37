#include "cordon/paths.hpp"

#include <unistd.h>

#include <charconv>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <string_view>

namespace cordon {

std::string data_dir() {
    char buf[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return "/usr/share/cordon";
    std::string exe(buf, static_cast<size_t>(n));
    std::string bindir = exe.substr(0, exe.rfind('/'));
    std::string prefix = bindir.substr(0, bindir.rfind('/'));
    return prefix + "/" CORDON_DATADIR_REL;
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
        return PasswdEntry{std::string(fields[0]), std::string(fields[5])};
    }
    return std::nullopt;
}

}  // namespace cordon

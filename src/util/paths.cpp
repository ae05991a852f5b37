#include "cordon/paths.hpp"

#include <unistd.h>

#include <climits>
#include <cstdlib>

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
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) {
        dirs.push_back(std::string(xdg) + "/cordon/" + kind);
    } else if (const char* home = std::getenv("HOME"); home && *home) {
        dirs.push_back(std::string(home) + "/.config/cordon/" + kind);
    }
    dirs.push_back("/etc/cordon/" + kind);
    dirs.push_back(data_dir() + "/" + kind);
    return dirs;
}

}  // namespace cordon

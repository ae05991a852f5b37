#include "cordon/runtime_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace cordon {

std::string private_tmp_dir() {
    return "/tmp/cordon-" + std::to_string(::geteuid());
}

const std::string& private_runtime_dir() {
    static const std::string dir = [] {
        const uid_t uid = ::geteuid();
        std::string d;
        const char* xdg = std::getenv("XDG_RUNTIME_DIR");
        struct stat st {};
        if (uid == 0) {
            d = "/run/cordon";
        } else if (xdg && *xdg == '/' && ::stat(xdg, &st) == 0 && st.st_uid == uid) {
            d = std::string(xdg) + "/cordon";
        } else {
            d = private_tmp_dir();
        }
        (void)::mkdir(d.c_str(), 0700);
        if (::lstat(d.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077) != 0) {
            return std::string();
        }
        return d;
    }();
    return dir;
}

}  // namespace cordon

// bubblewrap's capability arithmetic, shared by bwrap mode (run.cpp) and the extras' translation
// (extras.cpp).
#include <sys/capability.h>

#include <cctype>
#include <string>
#include <vector>

#include "cordon/bwrap.hpp"

namespace cordon::bwrap {

// What the payload keeps: a root caller's effective set and nothing otherwise, then
// --cap-add/--cap-drop in order.
Result<std::vector<int>> capabilities(const Options& o, bool privileged) {
    const int last = static_cast<int>(cap_max_bits()) - 1;
    std::vector<bool> keep(static_cast<size_t>(last + 1), false);
    if (privileged) {
        cap_t current = cap_get_proc();
        for (int cap = 0; cap <= last && current != nullptr; ++cap) {
            cap_flag_value_t value = CAP_CLEAR;
            cap_get_flag(current, cap, CAP_EFFECTIVE, &value);
            keep[static_cast<size_t>(cap)] = value == CAP_SET;
        }
        cap_free(current);
    }
    for (const CapChange& c : o.caps) {
        if (c.name == "ALL") {
            keep.assign(keep.size(), c.add);
            continue;
        }
        cap_value_t cap = 0;
        std::string lower = c.name;
        for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        if (::cap_from_name(lower.c_str(), &cap) != 0 || cap > last) {
            return make_error("bwrap", c.name + " is not a valid capability");
        }
        keep[static_cast<size_t>(cap)] = c.add;
    }
    std::vector<int> caps;
    for (int cap = 0; cap <= last; ++cap) {
        if (keep[static_cast<size_t>(cap)]) caps.push_back(cap);
    }
    return caps;
}

}  // namespace cordon::bwrap

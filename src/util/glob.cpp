#include "cordon/glob.hpp"

#include <fnmatch.h>

#include <string>

namespace cordon {

bool wildcard_match(std::string_view pat, std::string_view s) {
    // Brackets and escapes: fnmatch's own rules.
    if (pat.find_first_of("[\\") != std::string_view::npos) {
        return ::fnmatch(std::string(pat).c_str(), std::string(s).c_str(), 0) == 0;
    }
    // Greedy with backtracking to the last '*': linear for one star, O(n*m) at worst.
    size_t p = 0, i = 0, star = std::string_view::npos, mark = 0;
    while (i < s.size()) {
        if (p < pat.size() && (pat[p] == '?' || pat[p] == s[i])) {
            ++p;
            ++i;
        } else if (p < pat.size() && pat[p] == '*') {
            star = p++;
            mark = i;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            i = ++mark;
        } else {
            return false;
        }
    }
    while (p < pat.size() && pat[p] == '*') ++p;
    return p == pat.size();
}

}  // namespace cordon

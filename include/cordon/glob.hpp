// Shell-style wildcard matching of a whole string, as fnmatch(3) with no flags ('*' also
// matches '/'), without allocating for the common patterns made of '*', '?' and literals.
#pragma once

#include <string_view>

namespace cordon {

bool wildcard_match(std::string_view pattern, std::string_view s);

}  // namespace cordon

// Files of the source tree, for tests that compare what is built in with what ships.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace cordon::test {

// The repository's root, as CMake knows it (tests/CMakeLists.txt). Not derived from __FILE__,
// which a package build rewrites (dpkg-buildpackage passes -ffile-prefix-map).
inline std::string source_dir() {
    return CORDON_SOURCE_DIR;
}

inline std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace cordon::test

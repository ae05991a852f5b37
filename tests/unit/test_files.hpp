// Files of the source tree, for tests that compare what is built in with what ships.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace cordon::test {

// The repository's root, from this file's path at build time.
inline std::string source_dir() {
    std::string f = __FILE__;
    return f.substr(0, f.rfind("/tests/"));
}

inline std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace cordon::test

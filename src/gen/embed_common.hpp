// Shared by the build-time generators (embed_policies, embed_core): NAME=FILE arguments and
// byte arrays in generated C++.
#pragma once

#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

namespace cordon::gen {

struct NamedFile {
    std::string name, path, text;
};

// "NAME=FILE" read whole; nullopt after a message on stderr naming TOOL.
inline std::optional<NamedFile> read_named_file(const char* tool, const std::string& arg) {
    size_t eq = arg.find('=');
    if (eq == std::string::npos) {
        std::fprintf(stderr, "%s: %s: expected NAME=FILE\n", tool, arg.c_str());
        return std::nullopt;
    }
    NamedFile f{arg.substr(0, eq), arg.substr(eq + 1), {}};
    std::ifstream in(f.path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    if (!in) {
        std::fprintf(stderr, "%s: cannot read %s\n", tool, f.path.c_str());
        return std::nullopt;
    }
    f.text = ss.str();
    return f;
}

// `const char NAME[] = {...};` holding BYTES and a trailing 0.
inline std::string byte_array(const std::string& name, const std::string& bytes) {
    std::string out = "const char " + name + "[] = {";
    for (size_t i = 0; i < bytes.size(); ++i) {
        if (i % 16 == 0) out += "\n   ";
        out += " " + std::to_string(static_cast<int>(static_cast<signed char>(bytes[i]))) + ",";
    }
    return out + "\n    0};\n";
}

}  // namespace cordon::gen

#include "cordon/error.hpp"

#include <cstring>

namespace cordon {

namespace {

// TEXT with its control bytes as \xNN: a value echoed in a message (a profile's, an option's)
// cannot start a line of its own that looks like cordon's.
std::string printable(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (unsigned char c : text) {
        if (c < 0x20 || c == 0x7f) {
            static constexpr char kHex[] = "0123456789abcdef";
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

}  // namespace

std::string Error::message() const {
    std::string out = "cordon: " + printable(what);
    if (!why.empty()) out += ": " + printable(why);
    if (err != 0) out += std::string(": ") + std::strerror(err);
    for (const auto& more : also) out += "\n" + more;
    if (!hint.empty()) out += "\ncordon: hint: " + hint;
    return out;
}

}  // namespace cordon

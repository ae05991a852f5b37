#include "cordon/error.hpp"

#include <cstring>

namespace cordon {

std::string Error::message() const {
    std::string out = "cordon: " + what;
    if (!why.empty()) out += ": " + why;
    if (err != 0) out += std::string(": ") + std::strerror(err);
    for (const auto& more : also) out += "\n" + more;
    if (!hint.empty()) out += "\ncordon: hint: " + hint;
    return out;
}

}  // namespace cordon

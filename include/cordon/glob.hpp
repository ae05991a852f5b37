// Shell-style wildcard matching of a whole string, as fnmatch(3) with no flags ('*' also
// matches '/'), without allocating for the common patterns made of '*', '?' and literals.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cordon {

// A pattern split once into what matching needs, for matching many strings.
class Wildcard {
public:
    explicit Wildcard(std::string_view pattern);
    [[nodiscard]] bool matches(std::string_view s) const;
    // The same, for a string whose chars_of() the caller computed once for many patterns.
    [[nodiscard]] bool matches(std::string_view s, uint64_t s_chars) const;
    [[nodiscard]] static uint64_t chars_of(std::string_view s);

private:
    std::string pattern_;
    bool use_fnmatch_ = false;  // brackets or escapes: fnmatch's own rules
    bool has_star_ = false;
    bool has_question_ = false;
    std::string head_, tail_;          // before the first '*', after the last
    std::vector<std::string> middle_;  // the non-empty segments in between (copies: movable)
    uint64_t need_ = 0;                // "*A*B*" patterns: one bit per character (mod 64) a match must contain
};

bool wildcard_match(std::string_view pattern, std::string_view s);

}  // namespace cordon

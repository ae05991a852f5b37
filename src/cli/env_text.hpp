// Character tests and searches that the environment filter's two halves share
// (src/cli/env_filter.cpp, src/cli/secret_values.cpp): ASCII only, as variable names and the
// formats looked for are.
#pragma once

#include <string>
#include <string_view>

namespace cordon::envtext {

inline bool is_upper(char c) {
    return c >= 'A' && c <= 'Z';
}
inline bool is_lower(char c) {
    return c >= 'a' && c <= 'z';
}
inline bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
inline bool is_alnum(char c) {
    return is_upper(c) || is_lower(c) || is_digit(c);
}
inline bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
inline char to_lower(char c) {
    return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c;
}
inline char to_upper(char c) {
    return is_lower(c) ? static_cast<char>(c - 'a' + 'A') : c;
}

inline std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = to_upper(c);
    return out;
}

// S at POS starts with WORD (lower case), in any case.
inline bool at_ci(std::string_view s, size_t pos, std::string_view word) {
    if (pos + word.size() > s.size()) return false;
    for (size_t k = 0; k < word.size(); ++k) {
        if (to_lower(s[pos + k]) != word[k]) return false;
    }
    return true;
}

// The first position at or after FROM where S holds WORD (lower case) in any case, or npos.
inline size_t find_ci(std::string_view s, std::string_view word, size_t from = 0) {
    for (size_t pos = from; pos + word.size() <= s.size(); ++pos) {
        if (at_ci(s, pos, word)) return pos;
    }
    return std::string_view::npos;
}

// A token starts at POS: at the start, or after a character that cannot be part of it.
inline bool boundary_before(std::string_view s, size_t pos) {
    return pos == 0 || !is_alnum(s[pos - 1]);
}

// How many characters from POS satisfy PRED, counting to CAP at most (a bound keeps a scan that
// starts at many positions of a long value from reading the rest of it from each).
template <class Pred>
size_t run_length(std::string_view s, size_t pos, Pred pred, size_t cap = std::string_view::npos) {
    size_t n = 0;
    while (n < cap && pos + n < s.size() && pred(s[pos + n])) ++n;
    return n;
}

}  // namespace cordon::envtext

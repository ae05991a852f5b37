#include "cordon/glob.hpp"

#include <fnmatch.h>

#include <cstring>

namespace cordon {

namespace {

// SEG (literals, and '?' when QUESTION) matches S at POS.
bool segment_at(std::string_view seg, std::string_view s, size_t pos, bool question) {
    if (pos + seg.size() > s.size()) return false;
    if (!question) return std::memcmp(seg.data(), s.data() + pos, seg.size()) == 0;
    for (size_t k = 0; k < seg.size(); ++k) {
        if (seg[k] != '?' && seg[k] != s[pos + k]) return false;
    }
    return true;
}

// The first position at or after FROM where SEG matches within S, or npos.
size_t find_segment(std::string_view seg, std::string_view s, size_t from, bool question) {
    if (from > s.size()) return std::string_view::npos;
    if (!question) {
        const void* at = ::memmem(s.data() + from, s.size() - from, seg.data(), seg.size());
        return at ? static_cast<size_t>(static_cast<const char*>(at) - s.data()) : std::string_view::npos;
    }
    for (size_t pos = from; pos + seg.size() <= s.size(); ++pos) {
        if (segment_at(seg, s, pos, true)) return pos;
    }
    return std::string_view::npos;
}

uint64_t char_bit(char ch) {
    return uint64_t{1} << (static_cast<unsigned char>(ch) & 63U);
}

}  // namespace

Wildcard::Wildcard(std::string_view pattern) : pattern_(pattern) {
    const std::string_view pat = pattern_;
    use_fnmatch_ = pat.find_first_of("[\\") != std::string_view::npos;
    has_question_ = pat.find('?') != std::string_view::npos;
    size_t star = pat.find('*');
    has_star_ = star != std::string_view::npos;
    if (use_fnmatch_ || !has_star_) return;
    size_t last_star = pat.rfind('*');
    head_ = pat.substr(0, star);
    tail_ = pat.substr(last_star + 1);
    for (size_t p = star + 1; p < last_star;) {
        size_t next = pat.find('*', p);
        if (next > p) middle_.emplace_back(pat.substr(p, next - p));
        p = next + 1;
    }
    // With nothing anchored at either end, the cheap test is whether s has every character
    // the segments need (env-strip's "*PASSWORD*" against each variable name).
    if (head_.empty() && tail_.empty() && !has_question_) {
        for (const std::string& seg : middle_) {
            for (char ch : seg) need_ |= char_bit(ch);
        }
    }
}

// The pattern is segments of literals and '?' separated by '*': the first segment anchors at
// the start, the last at the end, and those between match leftmost, in order (with only '*'
// and '?' the leftmost choice never loses a match).
uint64_t Wildcard::chars_of(std::string_view s) {
    uint64_t chars = 0;
    for (char ch : s) chars |= char_bit(ch);
    return chars;
}

bool Wildcard::matches(std::string_view s) const {
    return matches(s, need_ != 0 ? chars_of(s) : 0);
}

bool Wildcard::matches(std::string_view s, uint64_t s_chars) const {
    if (use_fnmatch_) return ::fnmatch(pattern_.c_str(), std::string(s).c_str(), 0) == 0;
    if (!has_star_) return pattern_.size() == s.size() && segment_at(pattern_, s, 0, has_question_);
    if (head_.size() + tail_.size() > s.size()) return false;
    if ((need_ & ~s_chars) != 0) return false;
    // Most strings fail on their first or last character: test those before anything else.
    if (!head_.empty() && head_[0] != '?' && head_[0] != s[0]) return false;
    if (!tail_.empty() && tail_.back() != '?' && tail_.back() != s.back()) return false;
    if (!segment_at(head_, s, 0, has_question_) || !segment_at(tail_, s, s.size() - tail_.size(), has_question_)) {
        return false;
    }
    size_t pos = head_.size();
    const std::string_view inner = s.substr(0, s.size() - tail_.size());
    for (const std::string& seg : middle_) {
        size_t at = find_segment(seg, inner, pos, has_question_);
        if (at == std::string_view::npos) return false;
        pos = at + seg.size();
    }
    return true;
}

bool wildcard_match(std::string_view pattern, std::string_view s) {
    return Wildcard(pattern).matches(s);
}

}  // namespace cordon

// Cutting what the jail makes the supervisor record (cordon/bounds.hpp).
#include "cordon/bounds.hpp"

#include <algorithm>

namespace cordon {

namespace {

// The longest start of TEXT of at most MAX bytes that does not end inside a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view text, size_t max) {
    if (text.size() <= max) return text;
    size_t end = max;
    // Back over continuation bytes (10xxxxxx) to the lead byte of the cut sequence, at most
    // three: past that the text is no UTF-8, and any cut is as good.
    size_t back = 0;
    while (end > 0 && back < 3 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
        --end;
        ++back;
    }
    if (back == 3 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) end = max;
    return text.substr(0, end);
}

}  // namespace

std::string clip_text(std::string_view text, size_t max) {
    if (text.size() <= max) return std::string(text);
    // The marker names the original size, so that it fits MAX with the start it follows.
    const std::string marker = "...[" + std::to_string(text.size()) + " bytes]";
    if (marker.size() >= max) return std::string(utf8_prefix(text, max));
    std::string out(utf8_prefix(text, max - marker.size()));
    return out + marker;
}

ArgvRecord clip_argv(const std::vector<std::string>& argv, const ArgvBounds& bounds) {
    ArgvRecord rec;
    rec.argc = argv.size();
    size_t left = bounds.max_total_bytes;
    for (const auto& word : argv) {
        rec.bytes += word.size() + 1;
        if (rec.argv.size() >= bounds.max_words || left == 0) {
            rec.truncated = true;
            continue;
        }
        const size_t room = std::min(bounds.max_word_bytes, left - 1);  // and its NUL
        if (word.size() > room) {
            rec.truncated = true;
            rec.argv.push_back(clip_text(word, room));
        } else {
            rec.argv.push_back(word);
        }
        left -= std::min(left, rec.argv.back().size() + 1);
    }
    return rec;
}

}  // namespace cordon

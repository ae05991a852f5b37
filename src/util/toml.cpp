#include "cordon/toml.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace cordon {

namespace {

// Code points toml++ 3.3 mishandles, each range moved to kShieldBase + its offset.
struct Range {
    char32_t first, last;
};
constexpr Range kBad[] = {{0xA1, 0x499}, {0x2C5E, 0x3057}, {0xFB26, 0xFEFE}};
constexpr char32_t kShieldBase = 0xE000;  // Private Use Area: toml++ classifies it safely
constexpr char32_t kShieldEnd = kShieldBase + (0x499 - 0xA1 + 1) + (0x3057 - 0x2C5E + 1) + (0xFEFE - 0xFB26 + 1);

// Decode one well-formed UTF-8 sequence at s[i]: its code point, and i advanced past it. False
// for malformed input: a bad or truncated sequence, an overlong form, a surrogate, or past
// U+10FFFF, which toml++'s decoder refuses too. It is left for toml++ to report, passed through
// byte by byte (an overlong '/' must not become one).
bool decode(std::string_view s, size_t& i, char32_t& cp) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < len; ++k) {
        unsigned char cc = static_cast<unsigned char>(s[i + k]);
        if ((cc >> 6) != 2) return false;
        cp = (cp << 6) | (cc & 0x3F);
    }
    const char32_t least = len == 1 ? 0 : len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
    return true;
}

void encode(char32_t cp, std::string& out) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

template <typename Map>
std::optional<std::string> remap(std::string_view text, Map map) {
    std::string out;
    out.reserve(text.size() + 16);
    for (size_t i = 0; i < text.size();) {
        char32_t cp = 0;
        size_t start = i;
        if (static_cast<unsigned char>(text[i]) < 0x80 || !decode(text, i, cp)) {
            out += text[start];
            i = start + 1;
            continue;
        }
        auto mapped = map(cp);
        if (!mapped) return std::nullopt;
        encode(*mapped, out);
    }
    return out;
}

// The strings below NODE, and the keys of its tables, as the text had them.
void unshield_node(toml::node& node) {
    if (auto* s = node.as_string()) {
        s->get() = unshield_unicode(s->get());
    } else if (auto* arr = node.as_array()) {
        for (auto& e : *arr) unshield_node(e);
    } else if (auto* tbl = node.as_table()) {
        std::vector<std::pair<std::string, std::string>> renamed;  // a shielded key, and its text
        for (auto&& [k, v] : *tbl) {
            unshield_node(v);
            if (std::string key = unshield_unicode(k.str()); key != k.str())
                renamed.emplace_back(k.str(), std::move(key));
        }
        // Each such entry again under its own key (where the text put it), its node moved over.
        for (auto& [from, text] : renamed) {
            auto at = tbl->find(from);
            toml::key to(std::move(text), at->first.source());
            at->second.visit([&](auto& v) { tbl->insert_or_assign(std::move(to), std::move(v)); });
            tbl->erase(at);
        }
    }
}

// Whether TEXT is all well-formed UTF-8 (decode).
bool valid_utf8(std::string_view text) {
    for (size_t i = 0; i < text.size();) {
        char32_t cp = 0;
        if (!decode(text, i, cp)) return false;
    }
    return true;
}

// toml++ reads a comment one character at a time, through its UTF-8 decoder: most of a shipped
// profile is comments, and they were two thirds of its parse (230 of 330 us on the development
// VM, every run). Lines that hold only a comment keep only its '#' here, and their line break
// (so line and column numbers stay those of TEXT), where that cannot change what toml++ makes
// of the text (fuzz/policy_fuzz.cpp compares the two):
// - not in a text with a multi-line string, where a line starting with '#' may be a string's;
// - not in a text with malformed UTF-8, which toml++'s decoder finds ahead of the parse (a
//   shorter text would show another of its errors first);
// - only a comment of tabs and printable ASCII: any other character toml++ may refuse in a
//   comment, and it is left to say so;
// - not in the lines after the last one with anything but a comment: an error at the end of the
//   text is placed where the text ends.
void drop_comment_lines(std::string& text) {
    if (text.find("\"\"\"") != std::string::npos || text.find("'''") != std::string::npos) return;
    if (!valid_utf8(text)) return;
    std::string out;
    out.reserve(text.size());
    // Just after the last line with more than blanks or a comment, in TEXT and in OUT: from
    // there on, TEXT is kept as it is.
    size_t text_mark = 0, out_mark = 0;
    for (size_t at = 0; at < text.size();) {
        const size_t end = std::min(text.find('\n', at), text.size());
        size_t first = at;
        while (first < end && (text[first] == ' ' || text[first] == '\t')) ++first;
        const size_t last = end > first && text[end - 1] == '\r' ? end - 1 : end;  // a comment's end
        size_t keep_to = end;
        if (first < end && text[first] == '#') {
            const bool plain = std::all_of(text.begin() + static_cast<std::ptrdiff_t>(first),
                                           text.begin() + static_cast<std::ptrdiff_t>(last),
                                           [](char c) { return c == '\t' || (c >= 0x20 && c < 0x7F); });
            if (plain) keep_to = first + 1;  // the '#' stays: the line is still there for toml++
        }
        out.append(text, at, keep_to - at);
        if (end < text.size()) out += '\n';
        if (first < last && text[first] != '#') {
            text_mark = std::min(end + 1, text.size());
            out_mark = out.size();
        }
        at = end + 1;
    }
    out.resize(out_mark);
    out.append(text, text_mark, std::string::npos);
    text = std::move(out);
}

}  // namespace

std::optional<std::string> shield_unicode(std::string_view text) {
    if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
        return std::string(text);
    }
    return remap(text, [](char32_t cp) -> std::optional<char32_t> {
        if (cp >= kShieldBase && cp < kShieldEnd) return std::nullopt;
        char32_t offset = 0;
        for (const auto& r : kBad) {
            if (cp >= r.first && cp <= r.last) return kShieldBase + offset + (cp - r.first);
            offset += r.last - r.first + 1;
        }
        return cp;
    });
}

std::string unshield_unicode(std::string_view text) {
    return *remap(text, [](char32_t cp) -> std::optional<char32_t> {
        if (cp < kShieldBase || cp >= kShieldEnd) return cp;
        char32_t offset = cp - kShieldBase;
        for (const auto& r : kBad) {
            if (offset <= r.last - r.first) return r.first + offset;
            offset -= r.last - r.first + 1;
        }
        return cp;
    });
}

Result<toml::table> parse_toml(std::string_view text, const std::string& path) {
    auto shielded = shield_unicode(text);
    if (!shielded) {
        size_t line = 1, column = 1;
        for (size_t i = 0; i < text.size();) {
            char32_t cp = 0;
            size_t start = i;
            if (static_cast<unsigned char>(text[i]) >= 0x80 && decode(text, i, cp)) {
                if (cp >= kShieldBase && cp < kShieldEnd) break;
            } else {
                i = start + 1;
            }
            if (text[start] == '\n')
                line++, column = 1;
            else
                column++;
        }
        return make_error(path + ":" + std::to_string(line) + ":" + std::to_string(column),
                          "a private-use character (U+E000-U+EBED), which cordon does not accept");
    }
    try {
        // Most files are ASCII, or carry non-ASCII text only outside the shielded ranges: then
        // nothing was moved and the tree needs no walk back.
        const bool moved = *shielded != text;
        drop_comment_lines(*shielded);
        toml::table tbl = toml::parse(*shielded, path);
        if (moved) unshield_node(tbl);
        return tbl;
    } catch (const toml::parse_error& e) {
        return make_error(
            path + ":" + std::to_string(e.source().begin.line) + ":" + std::to_string(e.source().begin.column),
            unshield_unicode(e.description()));
    }
}

}  // namespace cordon

#include "cordon/json.hpp"

#include <cstdio>

namespace cordon {

namespace {

// The length of the valid UTF-8 sequence at S[I] (a lead byte of 0x80 or more), 0 if it is not
// one: a stray continuation byte, a truncated sequence, an overlong form, a surrogate, or a code
// point past U+10FFFF.
size_t utf8_length(const std::string& s, size_t i) {
    const auto byte = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0U; };
    const unsigned c = byte(i);
    size_t n = 0;
    unsigned lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
    for (size_t k = 2; k < n; ++k) {
        if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
    }
    return n;
}

}  // namespace

// JSON text must be UTF-8: a byte that is not part of a valid sequence (an argv of the jail's,
// a file name) becomes U+FFFD, so every line cordon writes parses.
std::string json_quote(const std::string& s) {
    std::string out = "\"";
    for (size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else if (c < 0x80) {
                    out += static_cast<char>(c);
                } else if (size_t n = utf8_length(s, i); n > 0) {
                    out.append(s, i, n);
                    i += n - 1;
                } else {
                    out += "\\ufffd";
                }
        }
    }
    return out + "\"";
}

void JsonObject::key(const std::string& k) {
    if (!body_.empty()) body_ += ",";
    body_ += json_quote(k) + ":";
}
JsonObject& JsonObject::add(const std::string& k, const std::string& v) {
    key(k);
    body_ += json_quote(v);
    return *this;
}
JsonObject& JsonObject::add(const std::string& k, const char* v) {
    return add(k, std::string(v));
}
JsonObject& JsonObject::add(const std::string& k, int64_t v) {
    key(k);
    body_ += std::to_string(v);
    return *this;
}
JsonObject& JsonObject::add(const std::string& k, bool v) {
    key(k);
    body_ += v ? "true" : "false";
    return *this;
}
JsonObject& JsonObject::add_null(const std::string& k) {
    key(k);
    body_ += "null";
    return *this;
}
JsonObject& JsonObject::add_raw(const std::string& k, const std::string& json) {
    key(k);
    body_ += json;
    return *this;
}
JsonObject& JsonObject::add(const std::string& k, const std::vector<std::string>& values) {
    key(k);
    body_ += "[";
    for (size_t i = 0; i < values.size(); ++i) body_ += (i ? "," : "") + json_quote(values[i]);
    body_ += "]";
    return *this;
}

}  // namespace cordon

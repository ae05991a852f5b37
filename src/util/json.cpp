#include "cordon/json.hpp"

#include <cstdio>

namespace cordon {

std::string json_quote(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
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
                } else {
                    out += static_cast<char>(c);
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

// A tiny JSON writer for status objects and --dry-run --json style output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cordon {

std::string json_quote(const std::string& s);

// Builds one flat-or-nested object in insertion order: obj.add("a", 1).add("b", "x").str()
class JsonObject {
public:
    JsonObject& add(const std::string& key, const std::string& value);
    JsonObject& add(const std::string& key, const char* value);
    JsonObject& add(const std::string& key, int64_t value);
    JsonObject& add(const std::string& key, bool value);
    JsonObject& add_null(const std::string& key);
    JsonObject& add_raw(const std::string& key, const std::string& json);
    JsonObject& add(const std::string& key, const std::vector<std::string>& values);
    [[nodiscard]] std::string str() const { return "{" + body_ + "}"; }

private:
    void key(const std::string& k);
    std::string body_;
};

}  // namespace cordon

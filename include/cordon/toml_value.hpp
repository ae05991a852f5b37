// A TOML document as plain data with source positions: what the profile loader reads, decoupled
// from toml++ so that the shipped profiles can be compiled into cordon at build time and read
// back at start-up without the TOML parser.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.hpp"
#include "cordon/toml.hpp"

namespace cordon {

struct TomlValue {
    enum class Kind : unsigned char { String, Integer, Boolean, Array, Table, Other };
    Kind kind = Kind::Other;
    std::string str;     // String
    int64_t number = 0;  // Integer; Boolean (0 or 1)
    uint32_t line = 0, column = 0;
    std::vector<TomlValue> items;  // Array elements; Table values, in toml++'s (key) order
    struct Key {
        std::string name;
        uint32_t line = 0, column = 0;
        bool operator==(const Key&) const = default;
    };
    std::vector<Key> keys;  // Table: parallel to items

    bool operator==(const TomlValue&) const = default;
};

TomlValue to_toml_value(const toml::node& n);

// TEXT parsed with parse_toml() (errors name PATH:LINE:COL), as a TomlValue table.
Result<TomlValue> parse_toml_value(std::string_view text, const std::string& path);

// The compact binary form, private to one build of cordon.
std::string serialize_toml_value(const TomlValue& v);
Result<TomlValue> deserialize_toml_value(std::string_view bytes);

// Shipped TOML files compiled at build time (src/gen/embed_core.cpp): the exact text and the
// serialized TomlValue of each.
struct EmbeddedToml {
    std::string_view name, text, compiled;
};
std::span<const EmbeddedToml> embedded_profiles();

}  // namespace cordon

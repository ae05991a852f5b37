#include "cordon/toml_value.hpp"

#include <cstring>

#include "cordon/toml.hpp"

namespace cordon {

TomlValue to_toml_value(const toml::node& n) {
    TomlValue v;
    v.line = n.source().begin.line;
    v.column = n.source().begin.column;
    if (n.is_string()) {
        v.kind = TomlValue::Kind::String;
        v.str = *n.value<std::string>();
    } else if (n.is_integer()) {
        v.kind = TomlValue::Kind::Integer;
        v.number = *n.value<int64_t>();
    } else if (n.is_boolean()) {
        v.kind = TomlValue::Kind::Boolean;
        v.number = *n.value<bool>() ? 1 : 0;
    } else if (const toml::array* arr = n.as_array()) {
        v.kind = TomlValue::Kind::Array;
        for (const auto& e : *arr) v.items.push_back(to_toml_value(e));
    } else if (const toml::table* tbl = n.as_table()) {
        v.kind = TomlValue::Kind::Table;
        for (auto&& [k, e] : *tbl) {
            v.keys.push_back({std::string(k.str()), k.source().begin.line, k.source().begin.column});
            v.items.push_back(to_toml_value(e));
        }
    }
    return v;
}

Result<TomlValue> parse_toml_value(std::string_view text, const std::string& path) {
    auto tbl = parse_toml(text, path);
    if (!tbl) return tbl.error();
    return to_toml_value(*tbl);
}

namespace {

void put_u32(std::string& out, uint32_t x) { out.append(reinterpret_cast<const char*>(&x), sizeof x); }
void put_str(std::string& out, std::string_view s) {
    put_u32(out, static_cast<uint32_t>(s.size()));
    out.append(s);
}

void put(std::string& out, const TomlValue& v) {
    out += static_cast<char>(v.kind);
    put_u32(out, v.line);
    put_u32(out, v.column);
    switch (v.kind) {
        case TomlValue::Kind::String: put_str(out, v.str); break;
        case TomlValue::Kind::Integer:
        case TomlValue::Kind::Boolean: out.append(reinterpret_cast<const char*>(&v.number), sizeof v.number); break;
        case TomlValue::Kind::Array:
        case TomlValue::Kind::Table:
            put_u32(out, static_cast<uint32_t>(v.items.size()));
            for (size_t i = 0; i < v.items.size(); ++i) {
                if (v.kind == TomlValue::Kind::Table) {
                    put_str(out, v.keys[i].name);
                    put_u32(out, v.keys[i].line);
                    put_u32(out, v.keys[i].column);
                }
                put(out, v.items[i]);
            }
            break;
        case TomlValue::Kind::Other: break;
    }
}

// Bounds-checked reads; the first bad one sets `bad` for good.
struct Reader {
    std::string_view in;
    size_t pos = 0;
    bool bad = false;

    bool have(size_t n) {
        if (bad || n > in.size() - pos) bad = true;
        return !bad;
    }
    uint32_t u32() {
        uint32_t x = 0;
        if (have(sizeof x)) std::memcpy(&x, in.data() + pos, sizeof x), pos += sizeof x;
        return x;
    }
    std::string str() {
        uint32_t n = u32();
        if (!have(n)) return {};
        std::string s(in.substr(pos, n));
        pos += n;
        return s;
    }
    void get(TomlValue& v, int depth) {
        if (depth > 64 || !have(1)) {
            bad = true;
            return;
        }
        auto kind = static_cast<unsigned char>(in[pos++]);
        if (kind > static_cast<unsigned char>(TomlValue::Kind::Other)) {
            bad = true;
            return;
        }
        v.kind = static_cast<TomlValue::Kind>(kind);
        v.line = u32();
        v.column = u32();
        switch (v.kind) {
            case TomlValue::Kind::String: v.str = str(); break;
            case TomlValue::Kind::Integer:
            case TomlValue::Kind::Boolean:
                if (have(sizeof v.number)) std::memcpy(&v.number, in.data() + pos, sizeof v.number), pos += sizeof v.number;
                break;
            case TomlValue::Kind::Array:
            case TomlValue::Kind::Table: {
                uint32_t n = u32();
                if (!have(static_cast<size_t>(n) * 9)) return;  // each item takes at least 9 bytes
                v.items.resize(n);
                if (v.kind == TomlValue::Kind::Table) v.keys.resize(n);
                for (uint32_t i = 0; i < n && !bad; ++i) {
                    if (v.kind == TomlValue::Kind::Table) {
                        v.keys[i].name = str();
                        v.keys[i].line = u32();
                        v.keys[i].column = u32();
                    }
                    get(v.items[i], depth + 1);
                }
                break;
            }
            case TomlValue::Kind::Other: break;
        }
    }
};

}  // namespace

std::string serialize_toml_value(const TomlValue& v) {
    std::string out = "cordon-toml/1\n";
    put(out, v);
    return out;
}

Result<TomlValue> deserialize_toml_value(std::string_view bytes) {
    constexpr std::string_view kMagic = "cordon-toml/1\n";
    Reader r{bytes, 0, false};
    if (bytes.substr(0, kMagic.size()) != kMagic) r.bad = true;
    else r.pos = kMagic.size();
    TomlValue v;
    r.get(v, 0);
    if (r.bad || r.pos != bytes.size()) {
        return make_error("compiled profile", "the data compiled into cordon is damaged; reinstall cordon");
    }
    return v;
}

}  // namespace cordon

#include "cordon/toml_value.hpp"

#include "cordon/bytes.hpp"
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
    CORDON_ASSIGN_OR_RETURN(const toml::table tbl, parse_toml(text, path));
    return to_toml_value(tbl);
}

namespace {

constexpr std::string_view kTomlMagic = "cordon-toml/1\n";

void put(ByteWriter& w, const TomlValue& v) {
    w.byte(static_cast<unsigned char>(v.kind));
    w.u32(v.line);
    w.u32(v.column);
    switch (v.kind) {
        case TomlValue::Kind::String:
            w.str(v.str);
            break;
        case TomlValue::Kind::Integer:
        case TomlValue::Kind::Boolean:
            w.raw(&v.number, sizeof v.number);
            break;
        case TomlValue::Kind::Array:
        case TomlValue::Kind::Table:
            w.u32(static_cast<uint32_t>(v.items.size()));
            for (size_t i = 0; i < v.items.size(); ++i) {
                if (v.kind == TomlValue::Kind::Table) {
                    w.str(v.keys[i].name);
                    w.u32(v.keys[i].line);
                    w.u32(v.keys[i].column);
                }
                put(w, v.items[i]);
            }
            break;
        case TomlValue::Kind::Other:
            break;
    }
}

void get(ByteReader& r, TomlValue& v, int depth) {
    if (depth > 64) {
        r.reject();
        return;
    }
    v.kind = r.enumerator(TomlValue::Kind::Other);
    v.line = r.u32();
    v.column = r.u32();
    switch (v.kind) {
        case TomlValue::Kind::String:
            v.str = r.str();
            break;
        case TomlValue::Kind::Integer:
        case TomlValue::Kind::Boolean:
            r.raw(&v.number, sizeof v.number);
            break;
        case TomlValue::Kind::Array:
        case TomlValue::Kind::Table: {
            const size_t n = r.count(9);  // each item takes at least 9 bytes
            v.items.resize(n);
            if (v.kind == TomlValue::Kind::Table) v.keys.resize(n);
            for (size_t i = 0; i < n && !r.bad(); ++i) {
                if (v.kind == TomlValue::Kind::Table) {
                    v.keys[i].name = r.str();
                    v.keys[i].line = r.u32();
                    v.keys[i].column = r.u32();
                }
                get(r, v.items[i], depth + 1);
            }
            break;
        }
        case TomlValue::Kind::Other:
            break;
    }
}

}  // namespace

std::string serialize_toml_value(const TomlValue& v) {
    ByteWriter w;
    w.raw(kTomlMagic.data(), kTomlMagic.size());
    put(w, v);
    return w.take();
}

Result<TomlValue> deserialize_toml_value(std::string_view bytes) {
    ByteReader r(bytes);
    TomlValue v;
    if (r.expect(kTomlMagic)) get(r, v, 0);
    if (r.bad() || !r.at_end()) {
        return make_error("compiled profile", "the data compiled into cordon is damaged; reinstall cordon");
    }
    return v;
}

}  // namespace cordon

#include "cordon/profile.hpp"

#include <sys/stat.h>

#include <toml++/toml.h>
#include <algorithm>
#include <charconv>
#include <set>

#include "cordon/builtin.hpp"
#include "cordon/fd.hpp"
#include "cordon/paths.hpp"
#include "cordon/toml.hpp"
#include "cordon/toml_value.hpp"

namespace cordon {

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string suggestion(const std::string& key) {
    std::string best;
    size_t best_d = 3;
    std::vector<std::string> names = {"description", "extends"};
    for (const auto& k : all_keys()) names.emplace_back(k.name);
    for (const auto& n : names) {
        size_t d = edit_distance(key, n);
        if (d < best_d) {
            best_d = d;
            best = n;
        }
    }
    return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

const char* type_name(KeyType t) {
    switch (t) {
        case KeyType::String:
            return "a string";
        case KeyType::Bool:
            return "true or false";
        case KeyType::UInt:
            return "a non-negative integer";
        case KeyType::Size:
            return "a size string such as \"512M\"";
        case KeyType::Duration:
            return "a duration string such as \"90s\"";
        case KeyType::List:
            return "an array of strings";
        case KeyType::PairList:
            return "a table of NAME = \"VALUE\"";
        case KeyType::Ops:
            return "an array";
    }
    return "?";
}

}  // namespace

Result<std::string> expand_vars(const std::string& text, const Vars& vars) {
    std::string out;
    size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') {
            size_t end = text.find('}', i + 2);
            if (end == std::string::npos) return make_error("'" + text + "'", "unterminated ${");
            std::string name = text.substr(i + 2, end - i - 2);
            auto it = vars.find(name);
            std::string lazy;
            if (it == vars.end() && name == "USER" && vars.lazy_user)
                lazy = vars.lazy_user();
            else if (it == vars.end())
                return make_error("'" + text + "'", "unknown variable ${" + name + "}");
            const std::string& value = it == vars.end() ? lazy : it->second;
            if (value.empty()) return make_error("'" + text + "'", "variable ${" + name + "} is not defined here");
            out += value;
            i = end + 1;
        } else {
            out += text[i++];
        }
    }
    return out;
}

namespace {

// TEXT as a TomlValue: the compiled form when it is a shipped profile byte for byte, else parsed.
Result<TomlValue> profile_tree(const std::string& text, const std::string& path) {
    for (const EmbeddedToml& e : embedded_profiles()) {
        if (e.text == text) return deserialize_toml_value(e.compiled);
    }
    return parse_toml_value(text, path);
}

// "PATH:LINE:COLUMN", built in place: a profile has one per value.
std::string where(const std::string& path, uint32_t line, uint32_t column) {
    char buf[24];
    std::string out;
    out.reserve(path.size() + 12);
    out += path;
    out += ':';
    out.append(buf, std::to_chars(buf, buf + sizeof buf, line).ptr);
    out += ':';
    out.append(buf, std::to_chars(buf, buf + sizeof buf, column).ptr);
    return out;
}
std::string where(const std::string& path, const TomlValue& v) {
    return where(path, v.line, v.column);
}

using K = TomlValue::Kind;

}  // namespace

Result<Layer> parse_profile(const std::string& text, const std::string& path, const Vars& vars,
                            std::vector<std::string>* extends, std::vector<std::string>* extends_where,
                            bool item_origins) {
    auto parsed = profile_tree(text, path);
    if (!parsed) return parsed.error();
    const TomlValue& tbl = *parsed;
    Layer layer;
    layer.origin = path;
    // Tables come in key order; primitives must keep the file's order, so they are collected
    // with their position and sorted at the end.
    std::vector<std::pair<std::pair<uint32_t, uint32_t>, OpValue>> ops;
    auto string_at = [&](const TomlValue& n, const std::string& key, bool expand) -> Result<std::string> {
        if (n.kind != K::String) return make_error(where(path, n), "'" + key + "' must hold strings");
        if (!expand) return n.str;
        auto r = expand_vars(n.str, vars);
        if (!r) return make_error(where(path, n), r.error().what + ": " + r.error().why);
        return r;
    };

    for (size_t idx = 0; idx < tbl.items.size(); ++idx) {
        const std::string& key = tbl.keys[idx].name;
        const TomlValue& node = tbl.items[idx];
        std::string at = where(path, node);
        if (key == "description") {
            if (node.kind != K::String) return make_error(at, "'description' must be a string");
            continue;
        }
        if (key == "extends") {
            if (node.kind != K::Array) return make_error(at, "'extends' must be an array of profile names");
            for (const auto& e : node.items) {
                auto s = string_at(e, key, false);
                if (!s) return s.error();
                if (extends) extends->push_back(*s);
                if (extends_where) extends_where->push_back(where(path, e));
            }
            continue;
        }
        const KeyInfo* info = find_key(key);
        if (!info || !info->profile_ok) {
            return make_error(where(path, tbl.keys[idx].line, tbl.keys[idx].column),
                              "unknown key '" + key + "'" + suggestion(key));
        }
        if (!info->available) {
            return make_error(at,
                              "'" + key + "' is not available in this version of cordon; refusing to run without it");
        }
        auto wrong_type = [&] { return make_error(at, "'" + key + "' must be " + type_name(info->type)); };
        layer.where[key] = at;
        switch (info->type) {
            case KeyType::String: {
                if (node.kind != K::String) return wrong_type();
                auto s = string_at(node, key, true);
                if (!s) return s.error();
                layer.values[key] = *s;
                break;
            }
            case KeyType::Bool:
                if (node.kind != K::Boolean) return wrong_type();
                layer.values[key] = node.number != 0;
                break;
            case KeyType::UInt: {
                if (node.kind != K::Integer) return wrong_type();
                int64_t v = node.number;
                if (v < 0 || v > 0xFFFFFFFELL) return make_error(at, "'" + key + "': value out of range");
                layer.values[key] = static_cast<uint64_t>(v);
                break;
            }
            case KeyType::Size:
            case KeyType::Duration: {
                if (node.kind != K::String) return wrong_type();
                auto q = parse_quantity(info->type, node.str);
                if (!q) return make_error(at, "'" + key + "': " + q.error().what + ": " + q.error().why);
                layer.values[key] = std::move(*q);
                break;
            }
            case KeyType::List: {
                if (node.kind != K::Array) return wrong_type();
                std::vector<std::string> list;
                for (const auto& e : node.items) {
                    auto s = string_at(e, key, true);
                    if (!s) return s.error();
                    list.push_back(*s);
                    if (item_origins) layer.item_where[key].push_back(where(path, e));
                }
                layer.values[key] = list;
                break;
            }
            case KeyType::PairList: {
                if (node.kind != K::Table) return wrong_type();
                std::vector<PairValue> pairs;
                for (size_t i = 0; i < node.items.size(); ++i) {
                    auto s = string_at(node.items[i], key, false);
                    if (!s) return s.error();
                    pairs.emplace_back(node.keys[i].name, *s);
                    if (item_origins) layer.item_where[key].push_back(where(path, node.items[i]));
                }
                layer.values[key] = pairs;
                break;
            }
            case KeyType::Ops: {
                if (node.kind != K::Array) return wrong_type();
                for (const auto& e : node.items) {
                    std::vector<std::string> args;
                    if (info->arity == 1) {
                        auto s = string_at(e, key, true);
                        if (!s) return s.error();
                        args.push_back(*s);
                    } else {
                        if (e.kind != K::Array || e.items.size() != 2) {
                            return make_error(where(path, e), "'" + key + "' entries must be [\"SRC\", \"DEST\"]");
                        }
                        for (const auto& p : e.items) {
                            auto s = string_at(p, key, true);
                            if (!s) return s.error();
                            args.push_back(*s);
                        }
                    }
                    ops.emplace_back(std::make_pair(e.line, e.column),
                                     OpValue{mount_request(key, std::move(args)), where(path, e)});
                }
                break;
            }
        }
    }
    if (!ops.empty()) {
        std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        std::vector<OpValue> ordered;
        ordered.reserve(ops.size());
        for (auto& [pos, op] : ops) ordered.push_back(std::move(op));
        layer.values["ops"] = ordered;
    }
    return layer;
}

Result<std::string> find_profile(const std::string& name) {
    if (name.find('/') != std::string::npos) return name;
    if (name.empty() || name[0] == '.') return make_error("--profile", "invalid profile name '" + name + "'");
    for (const auto& dir : search_path("profiles", "CORDON_PROFILE_PATH")) {
        std::string candidate = dir + "/" + name + ".toml";
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0) return candidate;
    }
    if (auto builtin = builtin_profile(name)) return *builtin;
    Error e = make_error("profile '" + name + "'", "not found");
    std::string dirs;
    for (const auto& dir : search_path("profiles", "CORDON_PROFILE_PATH")) dirs += (dirs.empty() ? "" : ":") + dir;
    e.hint = "searched " + dirs;
    return e;
}

namespace {

// `at` is where NAME was named (an extends entry), for messages; empty for the command line.
Status load_one(const std::string& name, const std::string& at, const Vars& vars, bool item_origins,
                std::vector<std::string>& stack, std::set<std::string>& done, Layer& out) {
    auto path = find_profile(name);
    if (!path) {
        if (!at.empty()) path.error().what = at + ": extends " + path.error().what;
        return path.error();
    }
    if (std::find(stack.begin(), stack.end(), *path) != stack.end()) {
        std::string chain;
        for (const auto& s : stack) chain += s + " -> ";
        return make_error(at.empty() ? *path : at, "profiles extend each other in a cycle: " + chain + *path);
    }
    if (done.count(*path)) return {};
    auto text = read_data_file(*path);
    if (!text) return make_error(*path, "cannot read this profile", text.error().err);
    std::vector<std::string> parents, parents_where;
    auto layer = parse_profile(*text, *path, vars, &parents, &parents_where, item_origins);
    if (!layer) return layer.error();
    stack.push_back(*path);
    for (size_t i = 0; i < parents.size(); ++i) {
        // A parent named by path is relative to the file that names it.
        std::string p = parents[i];
        if (p.find('/') != std::string::npos && p[0] != '/') p = path->substr(0, path->rfind('/') + 1) + p;
        CORDON_TRY(load_one(p, parents_where[i], vars, item_origins, stack, done, out));
    }
    stack.pop_back();
    done.insert(*path);
    merge_layer(out, *layer);
    return {};
}

}  // namespace

Result<Layer> load_profiles(const std::vector<std::string>& names, const Vars& vars, bool item_origins) {
    Layer merged;
    merged.origin = "profiles";
    std::set<std::string> done;
    for (const auto& name : names) {
        std::vector<std::string> stack;
        CORDON_TRY(load_one(name, "", vars, item_origins, stack, done, merged));
    }
    return merged;
}

}  // namespace cordon

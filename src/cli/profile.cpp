#include "cordon/profile.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <set>
#include <toml++/toml.h>

#include "cordon/fd.hpp"
#include "cordon/paths.hpp"
#include "cordon/toml.hpp"

namespace cordon {

namespace {

std::string where(const std::string& path, const toml::source_region& src) {
    return path + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column);
}

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
        case KeyType::String: return "a string";
        case KeyType::Bool: return "true or false";
        case KeyType::UInt: return "a non-negative integer";
        case KeyType::Size: return "a size string such as \"512M\"";
        case KeyType::Duration: return "a duration string such as \"90s\"";
        case KeyType::List: return "an array of strings";
        case KeyType::PairList: return "a table of NAME = \"VALUE\"";
        case KeyType::Ops: return "an array";
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
            if (it == vars.end()) return make_error("'" + text + "'", "unknown variable ${" + name + "}");
            if (it->second.empty()) return make_error("'" + text + "'", "variable ${" + name + "} is not defined here");
            out += it->second;
            i = end + 1;
        } else {
            out += text[i++];
        }
    }
    return out;
}

Result<Layer> parse_profile(const std::string& text, const std::string& path, const Vars& vars,
                            std::vector<std::string>* extends, std::vector<std::string>* extends_where) {
    auto parsed = parse_toml(text, path);
    if (!parsed) return parsed.error();
    toml::table& tbl = *parsed;
    Layer layer;
    layer.origin = path;
    // toml++ walks a table in key order; primitives must keep the file's order, so they are
    // collected with their position and sorted at the end.
    std::vector<std::pair<std::pair<uint32_t, uint32_t>, OpValue>> ops;
    auto string_at = [&](const toml::node& n, const std::string& key, bool expand) -> Result<std::string> {
        auto s = n.value<std::string>();
        if (!s || !n.is_string()) return make_error(where(path, n.source()), "'" + key + "' must hold strings");
        if (!expand) return *s;
        auto r = expand_vars(*s, vars);
        if (!r) return make_error(where(path, n.source()), r.error().what + ": " + r.error().why);
        return r;
    };

    for (auto&& [k, node] : tbl) {
        std::string key(k.str());
        std::string at = where(path, node.source());
        if (key == "description") {
            if (!node.is_string()) return make_error(at, "'description' must be a string");
            continue;
        }
        if (key == "extends") {
            const toml::array* arr = node.as_array();
            if (!arr) return make_error(at, "'extends' must be an array of profile names");
            for (const auto& e : *arr) {
                auto s = string_at(e, key, false);
                if (!s) return s.error();
                if (extends) extends->push_back(*s);
                if (extends_where) extends_where->push_back(where(path, e.source()));
            }
            continue;
        }
        const KeyInfo* info = find_key(key);
        if (!info || !info->profile_ok) {
            return make_error(where(path, k.source()), "unknown key '" + key + "'" + suggestion(key));
        }
        if (!info->available) {
            return make_error(at, "'" + key + "' is not available in this version of cordon; refusing to run without it");
        }
        auto wrong_type = [&] {
            return make_error(at, "'" + key + "' must be " + type_name(info->type));
        };
        layer.where[key] = at;
        switch (info->type) {
            case KeyType::String: {
                if (!node.is_string()) return wrong_type();
                auto s = string_at(node, key, true);
                if (!s) return s.error();
                layer.values[key] = *s;
                break;
            }
            case KeyType::Bool:
                if (!node.is_boolean()) return wrong_type();
                layer.values[key] = *node.value<bool>();
                break;
            case KeyType::UInt: {
                if (!node.is_integer()) return wrong_type();
                int64_t v = *node.value<int64_t>();
                if (v < 0 || v > 0xFFFFFFFELL) return make_error(at, "'" + key + "': value out of range");
                layer.values[key] = static_cast<uint64_t>(v);
                break;
            }
            case KeyType::Size:
            case KeyType::Duration: {
                if (!node.is_string()) return wrong_type();
                std::string s = *node.value<std::string>();
                auto r = info->type == KeyType::Size ? parse_size(s) : parse_duration_ms(s);
                if (!r) return make_error(at, "'" + key + "': " + r.error().what + ": " + r.error().why);
                layer.values[key] = s;
                break;
            }
            case KeyType::List: {
                const toml::array* arr = node.as_array();
                if (!arr) return wrong_type();
                std::vector<std::string> list;
                for (const auto& e : *arr) {
                    auto s = string_at(e, key, true);
                    if (!s) return s.error();
                    list.push_back(*s);
                    layer.item_where[key].push_back(where(path, e.source()));
                }
                layer.values[key] = list;
                break;
            }
            case KeyType::PairList: {
                const toml::table* t = node.as_table();
                if (!t) return wrong_type();
                std::vector<PairValue> pairs;
                for (auto&& [name, v] : *t) {
                    auto s = string_at(v, key, false);
                    if (!s) return s.error();
                    pairs.emplace_back(std::string(name.str()), *s);
                    layer.item_where[key].push_back(where(path, v.source()));
                }
                layer.values[key] = pairs;
                break;
            }
            case KeyType::Ops: {
                const toml::array* arr = node.as_array();
                if (!arr) return wrong_type();
                for (const auto& e : *arr) {
                    std::vector<std::string> args;
                    if (info->arity == 1) {
                        auto s = string_at(e, key, true);
                        if (!s) return s.error();
                        args.push_back(*s);
                    } else {
                        const toml::array* pair = e.as_array();
                        if (!pair || pair->size() != 2) {
                            return make_error(where(path, e.source()), "'" + key + "' entries must be [\"SRC\", \"DEST\"]");
                        }
                        for (const auto& p : *pair) {
                            auto s = string_at(p, key, true);
                            if (!s) return s.error();
                            args.push_back(*s);
                        }
                    }
                    ops.emplace_back(std::make_pair(e.source().begin.line, e.source().begin.column),
                                     OpValue{key, args, where(path, e.source())});
                }
                break;
            }
        }
    }
    if (!ops.empty()) {
        std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        std::vector<OpValue> ordered;
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
    Error e = make_error("profile '" + name + "'", "not found");
    std::string dirs;
    for (const auto& dir : search_path("profiles", "CORDON_PROFILE_PATH")) dirs += (dirs.empty() ? "" : ":") + dir;
    e.hint = "searched " + dirs;
    return e;
}

namespace {

// `at` is where NAME was named (an extends entry), for messages; empty for the command line.
Status load_one(const std::string& name, const std::string& at, const Vars& vars, std::vector<std::string>& stack,
                std::set<std::string>& done, Layer& out) {
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
    auto text = read_file(*path);
    if (!text) return make_error(*path, "cannot read this profile", text.error().err);
    std::vector<std::string> parents, parents_where;
    auto layer = parse_profile(*text, *path, vars, &parents, &parents_where);
    if (!layer) return layer.error();
    stack.push_back(*path);
    for (size_t i = 0; i < parents.size(); ++i) {
        // A parent named by path is relative to the file that names it.
        std::string p = parents[i];
        if (p.find('/') != std::string::npos && p[0] != '/') p = path->substr(0, path->rfind('/') + 1) + p;
        CORDON_TRY(load_one(p, parents_where[i], vars, stack, done, out));
    }
    stack.pop_back();
    done.insert(*path);
    merge_layer(out, *layer);
    return {};
}

}  // namespace

Result<Layer> load_profiles(const std::vector<std::string>& names, const Vars& vars) {
    Layer merged;
    merged.origin = "profiles";
    std::set<std::string> done;
    for (const auto& name : names) {
        std::vector<std::string> stack;
        CORDON_TRY(load_one(name, "", vars, stack, done, merged));
    }
    return merged;
}

}  // namespace cordon

#include "cordon/profile.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <toml++/toml.h>
#include <algorithm>
#include <charconv>
#include <optional>
#include <set>

#include "cordon/builtin.hpp"
#include "cordon/fd.hpp"
#include "cordon/net.hpp"
#include "cordon/paths.hpp"
#include "cordon/toml.hpp"
#include "cordon/toml_value.hpp"

namespace cordon {

namespace {

// Edits from A to B: insertions, deletions, substitutions and swaps of two neighbours ("gti"
// is one from "git"), each counted once (the optimal string alignment distance).
size_t edit_distance(const std::string& a, const std::string& b) {
    const size_t w = b.size() + 1;
    std::vector<size_t> d((a.size() + 1) * w);
    for (size_t i = 0; i <= a.size(); ++i) d[i * w] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t best = std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1,
                                    d[(i - 1) * w + j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                best = std::min(best, d[(i - 2) * w + j - 2] + 1);
            d[i * w + j] = best;
        }
    }
    return d[a.size() * w + b.size()];
}

// " (did you mean 'NAME'?)" for the one of NAMES nearest to WORD, if one is near; or "".
std::string nearest(const std::string& word, const std::vector<std::string>& names) {
    std::string best;
    // Near: at most 2 edits, and fewer than half the word's length (" " is near nothing).
    size_t best_d = std::min<size_t>(3, word.size() / 2 + 1);
    for (const auto& n : names) {
        size_t d = edit_distance(word, n);
        if (d < best_d) {
            best_d = d;
            best = n;
        }
    }
    return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

std::string suggestion(const std::string& key) {
    std::vector<std::string> names = {"description", "extends"};
    for (const auto& k : all_keys()) {
        if (k.profile_ok) names.emplace_back(k.name);
    }
    return nearest(key, names);
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
            if (it == vars.end() && name == "USER" && vars.lazy_user) {
                lazy = vars.lazy_user();
            } else if (auto d = vars.derived.find(name); it == vars.end() && d != vars.derived.end()) {
                CORDON_ASSIGN_OR_RETURN(lazy, d->second());
            } else if (it == vars.end()) {
                return make_error("'" + text + "'", "unknown variable ${" + name + "}");
            }
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

// The TOML kind a key of TYPE takes.
K toml_kind(KeyType type) {
    switch (type) {
        case KeyType::String:
        case KeyType::Size:
        case KeyType::Duration:
            return K::String;
        case KeyType::Bool:
            return K::Boolean;
        case KeyType::UInt:
            return K::Integer;
        case KeyType::List:
        case KeyType::Ops:
            return K::Array;
        case KeyType::PairList:
            return K::Table;
    }
    return K::Other;
}

// A key whose metavar lists its values ("none|host") takes one of them; checked here so that
// the message names the file and line, with the other errors of the file.
Status check_choice(const KeyInfo& info, const std::string& value, const std::string& at) {
    const std::string_view choices = info.metavar;
    if (choices.find('|') == std::string_view::npos ||
        choices.find_first_not_of("abcdefghijklmnopqrstuvwxyz-|") != std::string_view::npos)
        return {};
    std::vector<std::string> names;
    std::string listed;
    for (size_t start = 0; start <= choices.size();) {
        const size_t bar = std::min(choices.find('|', start), choices.size());
        names.emplace_back(choices.substr(start, bar - start));
        start = bar + 1;
    }
    if (std::find(names.begin(), names.end(), value) != names.end()) return {};
    for (size_t i = 0; i < names.size(); ++i) {
        listed += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    }
    return make_error(at, "'" + std::string(info.name) + "': invalid value '" + value + "': expected " + listed +
                              nearest(value, names));
}

// One profile file's values on their way into a SettingsLayer: each key's value checked,
// converted and placed with its file:line:column.
class ProfileReader {
public:
    ProfileReader(const std::string& path, const Vars& vars, bool item_origins)
        : path_(path), vars_(vars), item_origins_(item_origins) {
        layer_.origin = path;
    }

    // The parents that `extends` (NODE, at AT) names, and where each is named.
    Status read_extends(const TomlValue& node, const std::string& at, std::vector<std::string>* extends,
                        std::vector<std::string>* extends_where) const;
    // A setting: KEY (a long option name) with the value NODE, at AT.
    Status read_setting(const TomlValue::Key& key, const TomlValue& node, const std::string& at);
    // The layer, its primitives in the file's order.
    SettingsLayer finish() &&;

private:
    Result<std::string> string_at(const TomlValue& n, const std::string& key, bool expand) const;
    Status read_list(const std::string& key, const TomlValue& node);
    Status read_pairs(const std::string& key, const TomlValue& node);
    Status read_ops(const std::string& key, int arity, const TomlValue& node);
    Result<std::vector<std::string>> primitive_args(const std::string& key, int arity, const TomlValue& e) const;

    const std::string& path_;
    const Vars& vars_;
    bool item_origins_;
    SettingsLayer layer_;
    // Tables come in key order; primitives must keep the file's order, so they are collected
    // with their position and sorted at the end.
    std::vector<std::pair<std::pair<uint32_t, uint32_t>, OpValue>> ops_;
};

Result<std::string> ProfileReader::string_at(const TomlValue& n, const std::string& key, bool expand) const {
    if (n.kind != K::String) return make_error(where(path_, n), "'" + key + "' must hold strings");
    if (!expand) return n.str;
    auto r = expand_vars(n.str, vars_);
    if (!r) return make_error(where(path_, n), r.error().what + ": " + r.error().why);
    return r;
}

Status ProfileReader::read_extends(const TomlValue& node, const std::string& at, std::vector<std::string>* extends,
                                   std::vector<std::string>* extends_where) const {
    if (node.kind != K::Array) return make_error(at, "'extends' must be an array of profile names");
    for (const auto& e : node.items) {
        CORDON_ASSIGN_OR_RETURN(std::string name, string_at(e, "extends", false));
        if (extends) extends->push_back(std::move(name));
        if (extends_where) extends_where->push_back(where(path_, e));
    }
    return {};
}

Status ProfileReader::read_setting(const TomlValue::Key& k, const TomlValue& node, const std::string& at) {
    const std::string& key = k.name;
    const KeyInfo* info = find_key(key);
    if (info != nullptr && !info->profile_ok) {
        return make_error(where(path_, k.line, k.column),
                          "'" + key + "' is a command-line option (--" + key + "), not a profile key");
    }
    if (!info) {
        return make_error(where(path_, k.line, k.column), "unknown key '" + key + "'" + suggestion(key));
    }
    layer_.where[key] = at;
    if (node.kind != toml_kind(info->type)) return make_error(at, "'" + key + "' must be " + type_name(info->type));
    switch (info->type) {
        case KeyType::String: {
            CORDON_ASSIGN_OR_RETURN(std::string value, string_at(node, key, true));
            CORDON_TRY(check_choice(*info, value, at));
            layer_.values[key] = std::move(value);
            return {};
        }
        case KeyType::Bool:
            layer_.values[key] = node.number != 0;
            return {};
        case KeyType::UInt: {
            int64_t v = node.number;
            if (v < 0 || v > 0xFFFFFFFELL) return make_error(at, "'" + key + "': value out of range");
            layer_.values[key] = static_cast<uint64_t>(v);
            return {};
        }
        case KeyType::Size:
        case KeyType::Duration: {
            auto q = parse_quantity(info->type, node.str);
            if (!q) return make_error(at, "'" + key + "': " + q.error().what + ": " + q.error().why);
            layer_.values[key] = std::move(*q);
            return {};
        }
        case KeyType::List:
            return read_list(key, node);
        case KeyType::PairList:
            return read_pairs(key, node);
        case KeyType::Ops:
            return read_ops(key, info->arity, node);
    }
    return {};
}

Status ProfileReader::read_list(const std::string& key, const TomlValue& node) {
    std::vector<std::string> list;
    for (const auto& e : node.items) {
        CORDON_ASSIGN_OR_RETURN(std::string item, string_at(e, key, true));
        // An allow-host entry is checked here too, so that its error names the file and line
        // with the file's other errors (the run checks it again, as the command line's).
        if (key == "allow-host") {
            if (auto rule = parse_allow_host(item); !rule)
                return make_error(where(path_, e), "'allow-host': " + rule.error().why);
        }
        list.push_back(std::move(item));
        if (item_origins_) layer_.item_where[key].push_back(where(path_, e));
    }
    layer_.values[key] = list;
    return {};
}

Status ProfileReader::read_pairs(const std::string& key, const TomlValue& node) {
    std::vector<PairValue> pairs;
    for (size_t i = 0; i < node.items.size(); ++i) {
        CORDON_ASSIGN_OR_RETURN(std::string value, string_at(node.items[i], key, false));
        pairs.emplace_back(node.keys[i].name, std::move(value));
        if (item_origins_) layer_.item_where[key].push_back(where(path_, node.items[i]));
    }
    layer_.values[key] = pairs;
    return {};
}

Status ProfileReader::read_ops(const std::string& key, int arity, const TomlValue& node) {
    for (const auto& e : node.items) {
        CORDON_ASSIGN_OR_RETURN(std::vector<std::string> args, primitive_args(key, arity, e));
        ops_.emplace_back(std::make_pair(e.line, e.column),
                          OpValue{mount_request(key, std::move(args)), where(path_, e)});
    }
    return {};
}

// One entry of a primitive's array: "DEST", or ["SRC", "DEST"] (ARITY 2).
Result<std::vector<std::string>> ProfileReader::primitive_args(const std::string& key, int arity,
                                                               const TomlValue& e) const {
    std::vector<std::string> args;
    if (arity == 1) {
        CORDON_ASSIGN_OR_RETURN(std::string dest, string_at(e, key, true));
        args.push_back(std::move(dest));
        return args;
    }
    if (e.kind != K::Array || e.items.size() != 2) {
        return make_error(where(path_, e), "'" + key + "' entries must be [\"SRC\", \"DEST\"]");
    }
    for (const auto& p : e.items) {
        CORDON_ASSIGN_OR_RETURN(std::string arg, string_at(p, key, true));
        args.push_back(std::move(arg));
    }
    return args;
}

SettingsLayer ProfileReader::finish() && {
    if (!ops_.empty()) {
        std::stable_sort(ops_.begin(), ops_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        std::vector<OpValue> ordered;
        ordered.reserve(ops_.size());
        for (auto& [pos, op] : ops_) ordered.push_back(std::move(op));
        layer_.values["ops"] = ordered;
    }
    return std::move(layer_);
}

}  // namespace

namespace {

// A profile's settings from its tree (parse_profile's, or a shipped profile's compiled one).
Result<SettingsLayer> profile_from_tree(const TomlValue& tbl, const std::string& path, const Vars& vars,
                                        std::vector<std::string>* extends, std::vector<std::string>* extends_where,
                                        bool item_origins) {
    ProfileReader reader(path, vars, item_origins);
    // The keys in the file's order (the tree holds them in key order), every bad one reported.
    std::vector<size_t> order(tbl.items.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return std::pair(tbl.keys[a].line, tbl.keys[a].column) < std::pair(tbl.keys[b].line, tbl.keys[b].column);
    });
    std::optional<Error> first;
    auto read_key = [&](size_t idx) -> Status {
        const std::string& key = tbl.keys[idx].name;
        const TomlValue& node = tbl.items[idx];
        std::string at = where(path, node);
        if (key == "description") {
            if (node.kind != K::String) return make_error(at, "'description' must be a string");
            return {};
        }
        if (key == "extends") return reader.read_extends(node, at, extends, extends_where);
        return reader.read_setting(tbl.keys[idx], node, at);
    };
    constexpr size_t kMaxReported = 20;
    size_t more = 0;
    for (size_t idx : order) {
        auto st = read_key(idx);
        if (st) continue;
        if (!first) {
            first = std::move(st.error());
        } else if (first->also.size() < kMaxReported) {
            first->also.push_back(st.error().message());
        } else {
            ++more;
        }
    }
    if (first && more > 0)
        first->also.push_back("cordon: " + path + ": ... and " + std::to_string(more) + " more errors");
    if (first) return std::move(*first);
    return std::move(reader).finish();
}

// The profile at PATH (a file, or a built-in one): a shipped profile's compiled tree where the
// file is one byte for byte (without reading it onto the heap), else its text parsed.
Result<SettingsLayer> load_profile_file(const std::string& path, const Vars& vars, std::vector<std::string>* extends,
                                        std::vector<std::string>* extends_where, bool item_origins) {
    UniqueFd fd;
    if (!is_builtin(path)) {
        fd.reset(retry_eintr([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC); }));
        if (!fd) return make_error(path, "cannot read this profile", errno);
        if (const EmbeddedToml* e = shipped_file_at(fd.get(), embedded_profiles())) {
            CORDON_ASSIGN_OR_RETURN(const TomlValue tbl, deserialize_toml_value(e->compiled));
            return profile_from_tree(tbl, path, vars, extends, extends_where, item_origins);
        }
    }
    auto text = fd ? read_fd(fd.get(), path) : read_data_file(path);
    if (!text) return make_error(path, "cannot read this profile", text.error().err);
    return parse_profile(*text, path, vars, extends, extends_where, item_origins);
}

}  // namespace

Result<SettingsLayer> parse_profile(const std::string& text, const std::string& path, const Vars& vars,
                                    std::vector<std::string>* extends, std::vector<std::string>* extends_where,
                                    bool item_origins) {
    CORDON_ASSIGN_OR_RETURN(const TomlValue tbl, profile_tree(text, path));
    return profile_from_tree(tbl, path, vars, extends, extends_where, item_origins);
}

Result<std::string> find_profile(const std::string& name) {
    if (name.find('/') != std::string::npos) return name;
    if (name.empty() || name[0] == '.') return make_error("--profile", "invalid profile name '" + name + "'");
    for (const auto& dir : search_path("profiles", "CORDON_PROFILE_PATH")) {
        std::string candidate = dir + "/" + name + ".toml";
        struct stat st {};
        if (::stat(candidate.c_str(), &st) != 0) continue;
        if (std::string why = untrusted_because(candidate); !why.empty())
            return make_error("profile '" + name + "'", candidate + " is not trusted: " + why);
        return candidate;
    }
    if (auto builtin = builtin_profile(name)) return *builtin;
    std::vector<ProfileEntry> known = list_profiles();
    add_builtin_profiles(known);
    std::vector<std::string> names;
    names.reserve(known.size());
    for (const auto& k : known) names.push_back(k.name);
    Error e = make_error("profile '" + name + "'", "not found" + nearest(name, names));
    std::string dirs;
    for (const auto& dir : search_path("profiles", "CORDON_PROFILE_PATH")) dirs += (dirs.empty() ? "" : ":") + dir;
    e.hint = "searched " + dirs;
    return e;
}

namespace {

// `at` is where NAME was named (an extends entry), for messages; empty for the command line.
Status load_one(const std::string& name, const std::string& at, const Vars& vars, bool item_origins,
                std::vector<std::string>& stack, std::set<std::string>& done, SettingsLayer& out) {
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
    std::vector<std::string> parents, parents_where;
    auto layer = load_profile_file(*path, vars, &parents, &parents_where, item_origins);
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

Result<SettingsLayer> load_profiles(const std::vector<std::string>& names, const Vars& vars, bool item_origins) {
    SettingsLayer merged;
    merged.origin = "profiles";
    std::set<std::string> done;
    for (const auto& name : names) {
        std::vector<std::string> stack;
        CORDON_TRY(load_one(name, "", vars, item_origins, stack, done, merged));
    }
    return merged;
}

}  // namespace cordon

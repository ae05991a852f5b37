#include "cordon/builtin.hpp"

#include <algorithm>
#include <memory>

#include "cordon/fd.hpp"
#include "cordon/policy/rules.hpp"
#include "cordon/toml_value.hpp"

namespace cordon {

namespace {

constexpr std::string_view kProfiles = "profiles/";
constexpr std::string_view kPolicies = "policies/";
constexpr std::string_view kSuffix = ".toml";

std::string origin(std::string_view kind, std::string_view name) {
    std::string out(kBuiltinPrefix);
    out += kind;
    out += name;
    out += kSuffix;
    return out;
}

// NAME, if PATH is "built-in:KIND/NAME.toml".
std::optional<std::string_view> name_in(std::string_view path, std::string_view kind) {
    if (!path.starts_with(kBuiltinPrefix)) return std::nullopt;
    path.remove_prefix(kBuiltinPrefix.size());
    if (!path.starts_with(kind) || !path.ends_with(kSuffix)) return std::nullopt;
    return path.substr(kind.size(), path.size() - kind.size() - kSuffix.size());
}

const EmbeddedToml* embedded_profile(std::string_view name) {
    for (const EmbeddedToml& e : embedded_profiles()) {
        if (e.name == name) return &e;
    }
    return nullptr;
}

const policy::EmbeddedPolicy* embedded_policy(std::string_view name) {
    for (const policy::EmbeddedPolicy& e : policy::embedded_policies()) {
        if (e.name == name) return &e;
    }
    return nullptr;
}

std::optional<std::string_view> builtin_text(std::string_view path) {
    if (auto name = name_in(path, kProfiles)) {
        if (const EmbeddedToml* e = embedded_profile(*name)) return e->text;
    }
    if (auto name = name_in(path, kPolicies)) {
        if (const policy::EmbeddedPolicy* e = embedded_policy(*name)) return e->text;
    }
    return std::nullopt;
}

// The built-in profile's description, read from its compiled form (no TOML parsing).
std::string description_of(const EmbeddedToml& e) {
    auto tree = deserialize_toml_value(e.compiled);
    if (!tree) return {};
    for (size_t i = 0; i < tree->keys.size(); ++i) {
        if (tree->keys[i].name == "description" && tree->items[i].kind == TomlValue::Kind::String) {
            return tree->items[i].str;
        }
    }
    return {};
}

bool file_holds(const std::string& path, std::string_view text) {
    auto on_disk = read_file(path);
    return on_disk && *on_disk == text;
}

// A built-in policy's compiled form, as policy::load takes one: the build's tests decode it in
// full; its records are decoded per check, and one found damaged there denies.
Status add_compiled(policy::PolicySet& set, std::string_view compiled, const std::string& path) {
    set.add_compiled(compiled, path);
    return {};
}

// A policy file in a set that also holds built-in policies. policy::load cannot add to a set,
// so this repeats its steps for one file, without its cache of passing examples (only such
// mixed sets, found with a copied executable, pay for running the examples each time).
Status add_file(policy::PolicySet& set, const std::string& path) {
    CORDON_ASSIGN_OR_RETURN(std::string text, read_file(path));
    for (const policy::EmbeddedPolicy& e : policy::embedded_policies()) {
        if (e.text == text) return add_compiled(set, e.compiled, path);
    }
    CORDON_ASSIGN_OR_RETURN(policy::Policy p, policy::parse_policy(text, path));
    if (auto failures = policy::run_examples(p); !failures.empty()) {
        const std::string& first = failures.front();
        const size_t colon = first.find(": ");
        return make_error(first.substr(0, colon), first.substr(colon + 2));
    }
    set.add(std::make_shared<const policy::Policy>(std::move(p)));
    return {};
}

}  // namespace

bool is_builtin(std::string_view path) {
    return path.starts_with(kBuiltinPrefix);
}

std::optional<std::string> builtin_profile(std::string_view name) {
    if (embedded_profile(name) == nullptr) return std::nullopt;
    return origin(kProfiles, name);
}

Result<std::string> read_data_file(const std::string& path) {
    if (!is_builtin(path)) return read_file(path);
    if (auto text = builtin_text(path)) return std::string(*text);
    return make_error(path, "no such file is built into this cordon", ENOENT);
}

void add_builtin_profiles(std::vector<ProfileEntry>& entries) {
    for (const EmbeddedToml& e : embedded_profiles()) {
        auto found =
            std::find_if(entries.begin(), entries.end(), [&](const ProfileEntry& p) { return p.name == e.name; });
        if (found == entries.end()) {
            entries.push_back(ProfileEntry{std::string(e.name), origin(kProfiles, e.name), description_of(e), {}});
            continue;
        }
        const bool installed_copy = file_holds(found->path, e.text) ||
                                    std::any_of(found->shadowed.begin(), found->shadowed.end(),
                                                [&](const std::string& path) { return file_holds(path, e.text); });
        if (!installed_copy) found->shadowed.push_back(origin(kProfiles, e.name));
    }
}

Result<std::string> resolve_policy(const std::string& name_or_path) {
    if (is_builtin(name_or_path)) {
        if (auto name = name_in(name_or_path, kPolicies); name && embedded_policy(*name)) return name_or_path;
        return make_error("policy " + name_or_path, "no such policy is built into this cordon");
    }
    auto found = policy::find_policy(name_or_path);
    if (!found && name_or_path.find('/') == std::string::npos && embedded_policy(name_or_path)) {
        return origin(kPolicies, name_or_path);
    }
    return found;
}

Result<policy::PolicySet> load_policies(const std::vector<std::string>& names_or_paths) {
    std::vector<std::string> paths;
    bool any_builtin = false;
    for (const auto& n : names_or_paths) {
        CORDON_ASSIGN_OR_RETURN(std::string path, resolve_policy(n));
        any_builtin = any_builtin || is_builtin(path);
        paths.push_back(std::move(path));
    }
    // Every policy a file (an installed or a built tree): the policy library's loader, given the
    // paths found above (a path is not searched for again).
    if (!any_builtin) return policy::load(paths);
    policy::PolicySet set;
    for (const auto& path : paths) {
        if (auto name = name_in(path, kPolicies)) {
            CORDON_TRY(add_compiled(set, embedded_policy(*name)->compiled, path));
        } else {
            CORDON_TRY(add_file(set, path));
        }
    }
    return set;
}

std::vector<std::string> builtin_policies() {
    std::vector<std::string> out;
    for (const policy::EmbeddedPolicy& e : policy::embedded_policies()) out.push_back(origin(kPolicies, e.name));
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace cordon

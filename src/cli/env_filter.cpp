#include "cordon/env_filter.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "env_text.hpp"

namespace cordon {

namespace {

using namespace envtext;

// Whether one git configuration entry carries a credential: an extra HTTP header, a credential
// helper or setting, an askpass program (each unless emptied: an empty credential.helper resets
// the list), or a secret in the key (url.<URL with password>.insteadOf) or the value.
bool git_entry_is_credential(std::string_view key, std::string_view value) {
    const std::string k = [&] {
        std::string out;
        for (char c : key) out += to_lower(c);
        return out;
    }();
    const bool set = !value.empty();
    if (set && (k.rfind("credential.", 0) == 0 || k == "core.askpass" ||
                (k.rfind("http.", 0) == 0 && k.size() > 12 && k.compare(k.size() - 12, 12, ".extraheader") == 0))) {
        return true;
    }
    return secret_in_value(key) != SecretValue::None || secret_in_value(value) != SecretValue::None;
}

// GIT_CONFIG_PARAMETERS: git's own quoting, 'key'='value' or 'key=value' (older gits) or 'key'
// (a boolean), separated by blanks, with ' written '\''. Nullopt when it is not that.
std::optional<std::vector<std::pair<std::string, std::string>>> git_parameters(std::string_view v) {
    std::vector<std::pair<std::string, std::string>> entries;
    size_t p = 0;
    auto quoted = [&]() -> std::optional<std::string> {
        if (p >= v.size() || v[p] != '\'') return std::nullopt;
        std::string out;
        for (++p; p < v.size(); ++p) {
            if (v[p] != '\'') {
                out += v[p];
            } else if (v.compare(p, 4, "'\\''") == 0) {
                out += '\'';
                p += 3;
            } else {
                ++p;
                return out;
            }
        }
        return std::nullopt;  // unterminated
    };
    while (true) {
        p += run_length(v, p, is_blank);
        if (p >= v.size()) return entries;
        auto key = quoted();
        if (!key) return std::nullopt;
        std::string value;
        if (p < v.size() && v[p] == '=') {
            ++p;
            auto val = quoted();
            if (!val) return std::nullopt;
            value = *val;
        } else if (size_t eq = key->find('='); eq != std::string::npos) {
            value = key->substr(eq + 1);
            key->resize(eq);
        }
        entries.emplace_back(std::move(*key), std::move(value));
    }
}

bool git_parameters_credential(std::string_view v) {
    auto entries = git_parameters(v);
    if (!entries) {
        // Not git's format: judged by what it holds, and by the names of the settings that
        // carry credentials anywhere in it (failing closed).
        return secret_in_value(v) != SecretValue::None || find_ci(v, "extraheader") != std::string_view::npos ||
               find_ci(v, "credential.") != std::string_view::npos || find_ci(v, "askpass") != std::string_view::npos;
    }
    return std::any_of(entries->begin(), entries->end(),
                       [](const auto& e) { return git_entry_is_credential(e.first, e.second); });
}

// GIT_CONFIG_KEY_<n> / GIT_CONFIG_VALUE_<n>: the kind and N, or nullopt. GIT_CONFIG_COUNT: N is -1.
struct GitMember {
    bool key = false;
    long n = -1;
};
std::optional<GitMember> git_member(std::string_view name) {
    if (name == "GIT_CONFIG_COUNT") return GitMember{};
    for (auto [prefix, is_key] : {std::pair{std::string_view("GIT_CONFIG_KEY_"), true},
                                  std::pair{std::string_view("GIT_CONFIG_VALUE_"), false}}) {
        if (name.rfind(prefix, 0) != 0) continue;
        const std::string_view digits = name.substr(prefix.size());
        if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), is_digit)) {
            return std::nullopt;
        }
        return GitMember{is_key, std::stol(std::string(digits))};
    }
    return std::nullopt;
}

std::pair<std::string_view, std::string_view> split_kv(const std::string& kv) {
    const size_t eq = kv.find('=');
    const std::string_view all(kv);
    if (eq == std::string::npos) return {all, {}};
    return {all.substr(0, eq), all.substr(eq + 1)};
}

}  // namespace

// Where NAME's words are: [begin, end) of each, in order (name_words' rules).
std::vector<std::pair<size_t, size_t>> word_spans(std::string_view name) {
    std::vector<std::pair<size_t, size_t>> spans;
    size_t start = std::string_view::npos;
    for (size_t i = 0; i <= name.size(); ++i) {
        const char c = i < name.size() ? name[i] : '\0';
        bool ends = !is_alnum(c);
        if (!ends && start != std::string_view::npos) {
            const char prev = name[i - 1];
            const bool camel = is_lower(prev) && is_upper(c);
            const bool acronym_end = is_upper(prev) && is_upper(c) && i + 1 < name.size() && is_lower(name[i + 1]);
            ends = camel || acronym_end || is_digit(prev) != is_digit(c);
        }
        if (ends && start != std::string_view::npos) {
            spans.emplace_back(start, i);
            start = std::string_view::npos;
        }
        if (is_alnum(c) && start == std::string_view::npos) start = i;
    }
    return spans;
}

std::vector<std::string> name_words(std::string_view name) {
    std::vector<std::string> words;
    for (auto [b, e] : word_spans(name)) words.push_back(upper(name.substr(b, e - b)));
    return words;
}

EnvRules env_rules(const SettingsLayer& merged) {
    EnvRules r;
    r.strip = get_list(merged, "env-strip");
    r.strip_words = get_list(merged, "env-strip-words");
    r.strip_except = get_list(merged, "env-strip-except");
    r.except_plain = get_pairs(merged, "env-strip-except-plain");
    r.url_passwords = get_bool(merged, "env-strip-url-passwords");
    r.secret_values = get_bool(merged, "env-strip-secret-values");
    r.pass = get_list(merged, "env-pass");
    r.unset = get_list(merged, "unsetenv");
    r.clear = get_bool(merged, "clearenv");
    return r;
}

EnvFilter::EnvFilter(EnvRules rules) : rules_(std::move(rules)) {
    for (const auto& p : rules_.strip) strip_.emplace_back(upper(p));
    for (const auto& p : rules_.strip_except) except_.emplace_back(upper(p));
    for (const auto& [p, kind] : rules_.except_plain) except_plain_.emplace_back(Wildcard(upper(p)), kind);
    for (const auto& w : rules_.strip_words) {
        if (auto words = name_words(w); !words.empty()) words_.push_back(std::move(words));
    }
    for (auto& p : rules_.pass) p = upper(p);
}

bool EnvFilter::passed(std::string_view name) const {
    return std::any_of(rules_.pass.begin(), rules_.pass.end(), [&](const std::string& p) {
        return p.size() == name.size() &&
               std::equal(p.begin(), p.end(), name.begin(), [](char a, char b) { return a == to_upper(b); });
    });
}

bool EnvFilter::name_is_credential(std::string_view name) const {
    const std::string u = upper(name);
    const uint64_t chars = Wildcard::chars_of(u);
    auto matches = [&](const Wildcard& w) { return w.matches(u, chars); };
    if (std::any_of(except_.begin(), except_.end(), matches)) return false;
    if (std::any_of(strip_.begin(), strip_.end(), matches)) return true;
    if (words_.empty()) return false;
    // The words as views of U, which has NAME's length.
    std::vector<std::string_view> words;
    for (auto [b, e] : word_spans(name)) words.push_back(std::string_view(u).substr(b, e - b));
    return std::any_of(words_.begin(), words_.end(), [&](const std::vector<std::string>& run) {
        return std::search(words.begin(), words.end(), run.begin(), run.end()) != words.end();
    });
}

bool EnvFilter::plain_exception(std::string_view name, std::string_view value) const {
    if (except_plain_.empty()) return false;
    const std::string u = upper(name);
    const uint64_t chars = Wildcard::chars_of(u);
    return std::any_of(except_plain_.begin(), except_plain_.end(), [&](const auto& entry) {
        return entry.first.matches(u, chars) && value_is_plain(value, entry.second);
    });
}

FilteredEnv EnvFilter::apply(const std::vector<std::string>& vars) const {
    const bool values = rules_.url_passwords || rules_.secret_values;
    // git's configuration set first: it goes as a whole, or stays as a whole.
    bool git_dirty = false;
    bool git_passed = false;
    if (values && !rules_.clear) {
        std::map<long, std::pair<std::string_view, std::string_view>> pairs;  // n -> key, value
        for (const auto& kv : vars) {
            auto [name, value] = split_kv(kv);
            auto m = git_member(name);
            if (!m) continue;
            git_passed = git_passed || passed(name);
            if (m->n < 0) continue;
            (m->key ? pairs[m->n].first : pairs[m->n].second) = value;
        }
        for (const auto& [n, entry] : pairs) {
            const auto [key, value] = entry;
            git_dirty = git_dirty || (rules_.secret_values ? git_entry_is_credential(key, value)
                                                           : has_url_password(key) || has_url_password(value));
        }
    }
    FilteredEnv out;
    for (const auto& kv : vars) {
        auto [name_view, value] = split_kv(kv);
        std::string name(name_view);
        auto remove = [&](EnvRemoval why, SecretValue what = SecretValue::None) {
            out.removed.push_back(RemovedVar{std::move(name), why, what});
        };
        if (rules_.clear) {
            remove(EnvRemoval::Cleared);
            continue;
        }
        // --env-pass wins over the profile's unsetenv, as over every rule below.
        if (passed(name)) {
            out.kept.push_back(kv);
            continue;
        }
        if (std::find(rules_.unset.begin(), rules_.unset.end(), name) != rules_.unset.end()) {
            remove(EnvRemoval::Unset);
            continue;
        }
        if (git_dirty && !git_passed && git_member(name)) {
            remove(EnvRemoval::GitSet, SecretValue::GitCredential);
            continue;
        }
        if (name_is_credential(name) && !plain_exception(name, value)) {
            remove(EnvRemoval::ByName);
            continue;
        }
        if (rules_.secret_values && name == "GIT_CONFIG_PARAMETERS" && git_parameters_credential(value)) {
            remove(EnvRemoval::ByValue, SecretValue::GitCredential);
            continue;
        }
        if (values && !(git_passed && git_member(name))) {
            if (SecretValue what = secret_in_value(value, rules_.url_passwords, rules_.secret_values);
                what != SecretValue::None) {
                remove(EnvRemoval::ByValue, what);
                continue;
            }
        }
        out.kept.push_back(kv);
    }
    return out;
}

}  // namespace cordon

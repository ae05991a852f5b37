// Policy files (TOML, cordon-policy(5)) to Policy data. Every error names FILE:LINE:COLUMN.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>

#include <toml++/toml.h>
#include <set>

#include "cordon/fd.hpp"
#include "cordon/paths.hpp"
#include "cordon/policy.hpp"
#include "cordon/policy/rules.hpp"
#include "cordon/toml.hpp"

namespace cordon::policy {
namespace {

class Loader {
public:
    explicit Loader(std::string origin) : origin_(std::move(origin)) {}

    Result<Policy> load(const toml::table& root) {
        Policy p;
        p.file = origin_;
        for (const auto& [key, node] : root) {
            std::string_view k = key.str();
            if (k == "description") {
                CORDON_ASSIGN_OR_RETURN(p.description, str(node, "description"));
            } else if (k == "default" || k == "on-unanalyzable") {
                CORDON_ASSIGN_OR_RETURN((k == "default" ? p.default_deny : p.unanalyzable_deny), decision(node));
            } else if (k == "on-uncertain") {
                CORDON_ASSIGN_OR_RETURN(p.uncertain_deny, uncertainty(node));
            } else if (k == "paths") {
                CORDON_TRY(paths(node));
            } else if (k == "programs") {
                CORDON_TRY(programs(node, p));
            } else if (k != "rule") {
                return err(key.source(), fmt::format("unknown key '{}' (expected description, default, "
                                                     "on-unanalyzable, on-uncertain, paths, programs or rule)",
                                                     k));
            }
        }
        if (const toml::node* rules = root.get("rule")) {
            const toml::array* arr = rules->as_array();
            if (!arr) return err(rules->source(), "'rule' must be an array of tables ([[rule]])");
            std::set<std::string> ids;
            for (const auto& r : *arr) {
                auto rule = this->rule(r);
                if (!rule) return rule.error();
                if (!ids.insert(rule->id).second) {
                    return err(r.source(), fmt::format("duplicate rule id '{}'", rule->id));
                }
                p.rules.push_back(std::move(*rule));
            }
        }
        return p;
    }

private:
    std::string origin_;
    std::map<std::string, std::vector<std::string>, std::less<>> sets_;

    std::string where(const toml::source_region& r) const {
        return fmt::format("{}:{}:{}", origin_, r.begin.line, r.begin.column);
    }
    Error err(const toml::source_region& r, std::string why) const { return make_error(where(r), std::move(why)); }

    Result<std::string> str(const toml::node& n, std::string_view what) const {
        if (auto v = n.value<std::string>(); v && n.is_string()) return *v;
        return err(n.source(), fmt::format("'{}' must be a string", what));
    }

    Result<bool> boolean(const toml::node& n, std::string_view what) const {
        if (n.is_boolean()) return *n.value<bool>();
        return err(n.source(), fmt::format("'{}' must be true or false", what));
    }

    // true for deny
    Result<bool> decision(const toml::node& n) const {
        CORDON_ASSIGN_OR_RETURN(std::string v, str(n, "decision"));
        if (v == "allow") return false;
        if (v == "deny") return true;
        return err(n.source(), fmt::format("'{}' is not a decision (allow or deny)", v));
    }

    // true for deny: on-uncertain = "defer" | "deny"
    Result<bool> uncertainty(const toml::node& n) const {
        CORDON_ASSIGN_OR_RETURN(std::string v, str(n, "on-uncertain"));
        if (v == "defer") return false;
        if (v == "deny") return true;
        return err(n.source(), fmt::format("'{}' is not a way to treat uncertainty (defer or deny)", v));
    }

    // A string or an array of strings; positions of each element for examples.
    Result<std::vector<std::pair<std::string, std::string>>> strings(const toml::node& n, std::string_view what) const {
        std::vector<std::pair<std::string, std::string>> out;
        if (n.is_string()) {
            out.emplace_back(*n.value<std::string>(), where(n.source()));
            return out;
        }
        const toml::array* arr = n.as_array();
        if (!arr) return err(n.source(), fmt::format("'{}' must be a string or an array of strings", what));
        for (const auto& e : *arr) {
            if (!e.is_string()) return err(e.source(), fmt::format("'{}' must hold strings only", what));
            out.emplace_back(*e.value<std::string>(), where(e.source()));
        }
        return out;
    }

    Result<std::vector<std::string>> plain_strings(const toml::node& n, std::string_view what) const {
        auto v = strings(n, what);
        if (!v) return v.error();
        std::vector<std::string> out;
        for (auto& [s, w] : *v) out.push_back(std::move(s));
        return out;
    }

    Status check_path(const std::string& pattern, const toml::node& n) const {
        auto p = compile_policy_path(pattern, kExampleHome);
        if (!p) return err(n.source(), fmt::format("bad path pattern '{}': {}", pattern, p.error().why));
        return {};
    }

    // Path sets may name other sets (@name); tables are unordered, so expand after reading all.
    Status paths(const toml::node& n) {
        const toml::table* t = n.as_table();
        if (!t) return err(n.source(), "'paths' must be a table of path lists");
        std::map<std::string, std::pair<std::vector<std::string>, const toml::node*>, std::less<>> raw;
        for (const auto& [key, list] : *t) {
            auto v = plain_strings(list, "paths." + std::string(key.str()));
            if (!v) return v.error();
            raw[std::string(key.str())] = {std::move(*v), &list};
        }
        for (const auto& [name, entry] : raw) {
            std::vector<std::string> out;
            CORDON_TRY(expand_set(raw, name, out, 0));
        }
        return {};
    }

    template <typename Raw>
    Status expand_set(const Raw& raw, const std::string& name, std::vector<std::string>& out, int depth) {
        const auto& [list, node] = raw.find(name)->second;
        if (depth > 16) return err(node->source(), fmt::format("path set '{}' refers to itself", name));
        std::vector<std::string> expanded;
        for (const auto& s : list) {
            if (!s.empty() && s[0] == '@') {
                auto it = raw.find(std::string_view(s).substr(1));
                if (it == raw.end()) return err(node->source(), fmt::format("unknown path set '{}'", s));
                CORDON_TRY(expand_set(raw, it->first, expanded, depth + 1));
                continue;
            }
            CORDON_TRY(check_path(s, *node));
            expanded.push_back(s);
        }
        out.insert(out.end(), expanded.begin(), expanded.end());
        sets_[name] = std::move(expanded);
        return {};
    }

    Status programs(const toml::node& n, Policy& p) const {
        const toml::table* t = n.as_table();
        if (!t) return err(n.source(), "'programs' must be a table ([programs.NAME])");
        for (const auto& [name, node] : *t) {
            const toml::table* pt = node.as_table();
            if (!pt) return err(node.source(), fmt::format("'programs.{}' must be a table", name.str()));
            ProgramSpec spec;
            for (const auto& [key, v] : *pt) {
                std::string_view k = key.str();
                if (k == "options") {
                    auto opts = plain_strings(v, "options");
                    if (!opts) return opts.error();
                    for (const auto& o : *opts) CORDON_TRY(option(o, v, spec));
                } else if (k == "abbreviations" || k == "permute") {
                    auto b = boolean(v, k);
                    if (!b) return b.error();
                    (k == "permute" ? spec.permute : spec.abbreviations) = *b;
                } else if (k == "key-value") {
                    auto kv = plain_strings(v, "key-value");
                    if (!kv) return kv.error();
                    spec.key_value = std::move(*kv);
                } else {
                    return err(key.source(), fmt::format("unknown key '{}' in programs.{} (expected options, "
                                                         "abbreviations, permute or key-value)",
                                                         k, name.str()));
                }
            }
            p.programs[std::string(name.str())] = std::move(spec);
        }
        return {};
    }

    // "-r -R --recursive": spellings of one option, the first canonical; "=" takes an argument,
    // "=?" an optional attached one.
    Status option(const std::string& text, const toml::node& n, ProgramSpec& spec) const {
        OptionSpec o;
        size_t index = spec.options.size();
        size_t i = 0;
        while (i < text.size()) {
            while (i < text.size() && text[i] == ' ') ++i;
            size_t e = text.find(' ', i);
            if (e == std::string::npos) e = text.size();
            std::string s = text.substr(i, e - i);
            i = e;
            if (s.empty()) continue;
            OptionSpec::Arg arg = OptionSpec::Arg::None;
            if (s.size() > 2 && s.compare(s.size() - 2, 2, "=?") == 0) {
                arg = OptionSpec::Arg::Optional;
                s.resize(s.size() - 2);
            } else if (s.size() > 1 && s.back() == '=') {
                arg = OptionSpec::Arg::Required;
                s.pop_back();
            }
            if (s.size() < 2 || s[0] != '-' || s == "--") {
                return err(n.source(), fmt::format("bad option spelling '{}' in '{}'", s, text));
            }
            if (o.canonical.empty()) {
                o.canonical = s;
                o.arg = arg;
            }
            if (!spec.spellings.emplace(s, index).second) {
                return err(n.source(), fmt::format("option '{}' is declared twice", s));
            }
            if (s.compare(0, 2, "--") == 0) spec.longs.push_back(s);
        }
        if (o.canonical.empty()) return err(n.source(), "empty option declaration");
        spec.options.push_back(std::move(o));
        return {};
    }

    Result<std::vector<std::string>> path_list(const toml::node& n, std::string_view what) const {
        auto v = plain_strings(n, what);
        if (!v) return v.error();
        std::vector<std::string> out;
        for (const auto& s : *v) {
            if (!s.empty() && s[0] == '@') {
                auto it = sets_.find(std::string_view(s).substr(1));
                if (it == sets_.end()) return err(n.source(), fmt::format("unknown path set '{}'", s));
                out.insert(out.end(), it->second.begin(), it->second.end());
            } else {
                CORDON_TRY(check_path(s, n));
                out.push_back(s);
            }
        }
        return out;
    }

    // "git push" alternatives: each a space-separated prefix of the operands.
    Status subcommands(const toml::node& v, Rule& r) const {
        CORDON_ASSIGN_OR_RETURN(auto alts, plain_strings(v, "subcommand"));
        for (const auto& alt : alts) {
            std::vector<std::string> words;
            size_t i = 0;
            while (i < alt.size()) {
                size_t e = alt.find(' ', i);
                if (e == std::string::npos) e = alt.size();
                if (e > i) words.push_back(alt.substr(i, e - i));
                i = e + 1;
            }
            if (words.empty()) return err(v.source(), "empty subcommand");
            r.subcommands.push_back(std::move(words));
        }
        return {};
    }

    Result<Rule::At> operands_at(const toml::node& v) const {
        CORDON_ASSIGN_OR_RETURN(std::string s, str(v, "operands-at"));
        if (s == "any") return Rule::At::Any;
        if (s == "first") return Rule::At::First;
        if (s == "last") return Rule::At::Last;
        if (s == "but-last") return Rule::At::ButLast;
        return err(v.source(), "'operands-at' is any, first or last, or but-last");
    }

    // One key of a [[rule]] table into R.
    Status rule_key(const toml::key& key, const toml::node& v, Rule& r, bool& have_decision) const {
        std::string_view k = key.str();
        if (k == "id" || k == "reason") {
            CORDON_ASSIGN_OR_RETURN((k == "id" ? r.id : r.reason), str(v, k));
        } else if (k == "decision") {
            CORDON_ASSIGN_OR_RETURN(r.deny, decision(v));
            have_decision = true;
        } else if (k == "program") {
            CORDON_ASSIGN_OR_RETURN(r.programs, plain_strings(v, k));
        } else if (k == "subcommand") {
            CORDON_TRY(subcommands(v, r));
        } else if (k == "flags" || k == "without-flags") {
            CORDON_ASSIGN_OR_RETURN(auto flags, plain_strings(v, k));
            for (const auto& f : flags) {
                if (f.size() < 2 || f[0] != '-') return err(v.source(), fmt::format("'{}' is not a flag", f));
            }
            (k == "flags" ? r.flags : r.without_flags) = std::move(flags);
        } else if (k == "operands") {
            CORDON_TRY(operands(v, r));
        } else if (k == "writes" || k == "cwd") {
            CORDON_ASSIGN_OR_RETURN(auto paths, path_list(v, k));
            for (auto& w : paths) {
                auto op = OperandPattern::make({}, std::move(w));
                if (!op) return err(v.source(), op.error().why);
                (k == "cwd" ? r.cwd : r.writes).push_back(std::move(*op));
            }
        } else if (k == "operands-at") {
            CORDON_ASSIGN_OR_RETURN(r.operands_at, operands_at(v));
        } else if (k == "unknown-operands") {
            CORDON_ASSIGN_OR_RETURN(std::string s, str(v, k));
            if (s != "match" && s != "ignore") return err(v.source(), "'unknown-operands' is match or ignore");
            r.unknown_operands_match = s == "match";
        } else if (k == "construct") {
            CORDON_ASSIGN_OR_RETURN(std::string s, str(v, k));
            if (s != "fork-bomb") return err(v.source(), fmt::format("unknown construct '{}' (fork-bomb)", s));
            r.has_construct = true;
            r.construct = Invocation::Construct::ForkBomb;
        } else if (k == "must-match" || k == "must-not-match") {
            CORDON_ASSIGN_OR_RETURN(auto examples, strings(v, k));
            auto& dst = k == "must-match" ? r.must_match : r.must_not_match;
            for (auto& [script, w] : examples) dst.push_back({std::move(script), std::move(w)});
        } else {
            return err(key.source(), fmt::format("unknown key '{}' in a rule", k));
        }
        return {};
    }

    Result<Rule> rule(const toml::node& n) const {
        const toml::table* t = n.as_table();
        if (!t) return err(n.source(), "each rule must be a table ([[rule]])");
        Rule r;
        r.where = where(n.source());
        bool have_decision = false;
        for (const auto& [key, v] : *t) CORDON_TRY(rule_key(key, v, r, have_decision));
        if (r.id.empty()) return err(n.source(), "a rule needs an 'id'");
        auto need = [&](bool ok, std::string_view what) -> Status {
            if (ok) return {};
            return err(n.source(), fmt::format("rule {}: {}", r.id, what));
        };
        CORDON_TRY(need(have_decision, "needs a 'decision' (allow or deny)"));
        CORDON_TRY(need(!r.reason.empty(), "needs a 'reason'"));
        CORDON_TRY(need(!r.programs.empty() || r.has_construct || !r.writes.empty(),
                        "needs 'program', 'writes' or 'construct'"));
        CORDON_TRY(need(!r.has_construct || (r.programs.empty() && r.flags.empty() && r.operands.empty() &&
                                             r.writes.empty() && r.subcommands.empty() && r.cwd.empty()),
                        "'construct' cannot be combined with other matchers"));
        CORDON_TRY(need(!r.must_match.empty(), "needs 'must-match' examples"));
        CORDON_TRY(need(!r.must_not_match.empty(), "needs 'must-not-match' examples"));
        return r;
    }

    Status operands(const toml::node& v, Rule& r) const {
        auto s = plain_strings(v, "operands");
        if (!s) return s.error();
        for (const auto& o : *s) {
            std::string key, pat = o;
            size_t eq = o.find('=');
            if (eq != std::string::npos && o.find('/') > eq && o[0] != '@' && o[0] != '~' && o[0] != '$') {
                key = o.substr(0, eq);
                pat = o.substr(eq + 1);
            }
            if (!pat.empty() && pat[0] == '@') {
                auto it = sets_.find(std::string_view(pat).substr(1));
                if (it == sets_.end()) return err(v.source(), fmt::format("unknown path set '{}'", pat));
                for (const auto& p : it->second) {
                    auto op = OperandPattern::make(key, p);
                    if (!op) return err(v.source(), op.error().why);
                    r.operands.push_back(std::move(*op));
                }
            } else {
                CORDON_TRY(check_path(pat, v));
                auto op = OperandPattern::make(key, pat);
                if (!op) return err(v.source(), op.error().why);
                r.operands.push_back(std::move(*op));
            }
        }
        return {};
    }
};

}  // namespace

Result<Policy> parse_policy(std::string_view text, const std::string& origin) {
    auto root = parse_toml(text, origin);
    if (!root) return root.error();
    return Loader(origin).load(*root);
}

Result<Policy> load_policy_file(const std::string& path) {
    auto text = read_file(path);
    if (!text) return text.error();
    return parse_policy(*text, path);
}

Result<std::string> find_policy(const std::string& name_or_path) {
    if (name_or_path.find('/') != std::string::npos) return name_or_path;
    if (name_or_path.empty()) return make_error("--policy", "empty policy name");
    auto dirs = search_path("policies", "CORDON_POLICY_PATH");
    for (const auto& d : dirs) {
        std::string candidate = d + "/" + name_or_path + ".toml";
        if (::access(candidate.c_str(), R_OK) != 0) continue;
        if (std::string why = untrusted_because(candidate); !why.empty())
            return make_error("policy " + name_or_path, candidate + " is not trusted: " + why);
        return candidate;
    }
    std::string searched;
    for (const auto& d : dirs) searched += (searched.empty() ? "" : ":") + d;
    Error e = make_error("policy " + name_or_path, "not found in " + searched);
    e.hint = "give a path (containing '/') or put NAME.toml in one of those directories";
    return e;
}

namespace {

// Running every rule's examples costs most of a policy's load time (about 0.6 ms for the
// default policy), on every run. Their outcome depends only on the file's bytes and on
// cordon's own version, so a passing run is remembered under that key in
// $XDG_CACHE_HOME/cordon/policy-ok/. A file that changed, or a new cordon, is checked again;
// a failing file is never remembered. Cache problems only cost the check, never skip it.
std::string examples_cache_dir() {
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    if (xdg && *xdg == '/') return std::string(xdg) + "/cordon/policy-ok";
    const char* home = std::getenv("HOME");
    if (home && *home == '/') return std::string(home) + "/.cache/cordon/policy-ok";
    return {};
}

std::string examples_key(const std::string& text) {
    return fmt::format("{:016x}-{:x}", std::hash<std::string>{}(text), text.size());
}

bool examples_known_good(const std::string& dir, const std::string& key, const std::string& stamp) {
    if (dir.empty()) return false;
    auto cached = read_file(dir + "/" + key);
    return cached && *cached == stamp;
}

void remember_examples_good(const std::string& dir, const std::string& key, const std::string& stamp) {
    if (dir.empty()) return;
    const std::string parent(path_parent(dir));
    ::mkdir(std::string(path_parent(parent)).c_str(), 0700);  // ~/.cache
    ::mkdir(parent.c_str(), 0700);
    ::mkdir(dir.c_str(), 0700);
    std::string tmp = dir + "/." + key + "." + std::to_string(::getpid());
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd) return;
    bool ok = write_all(fd.get(), stamp.data(), stamp.size());
    fd.reset();
    if (!ok || ::rename(tmp.c_str(), (dir + "/" + key).c_str()) != 0) ::unlink(tmp.c_str());
}

}  // namespace

Result<PolicySet> load(const std::vector<std::string>& names_or_paths) {
    PolicySet set;
    const std::string cache = examples_cache_dir();
    for (const auto& n : names_or_paths) {
        auto path = find_policy(n);
        if (!path) return path.error();
        // A shipped policy, byte for byte: its compiled form, whose examples passed at build time
        // and which the build's tests decode in full. Its records are decoded per check, those
        // that may match; one found damaged there denies (PolicySet::check).
        // Opened once: a FIFO's writer is met by this open alone.
        const UniqueFd fd(retry_eintr([&] { return ::open(path->c_str(), O_RDONLY | O_CLOEXEC); }));
        if (!fd) return sys_error("open " + *path);
        if (const EmbeddedPolicy* e = shipped_file_at(fd.get(), embedded_policies())) {
            set.add_compiled(e->compiled, *path);
            continue;
        }
        auto text = read_fd(fd.get(), *path);
        if (!text) return text.error();
        auto p = parse_policy(*text, *path);
        if (!p) return p.error();
        const std::string key = examples_key(*text);
        // The stamp holds the whole text so that a hash collision cannot vouch for another file.
        const std::string stamp = std::string(CORDON_VERSION) + "\n" + *text;
        if (!examples_known_good(cache, key, stamp)) {
            auto failures = run_examples(*p);
            if (!failures.empty()) {
                std::string first = failures.front();
                size_t colon = first.find(": ");
                return make_error(first.substr(0, colon), first.substr(colon + 2));
            }
            remember_examples_good(cache, key, stamp);
        }
        set.add(std::make_shared<const Policy>(std::move(*p)));
    }
    return set;
}

}  // namespace cordon::policy

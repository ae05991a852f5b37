// Rules against invocations, policies against command lines: deny wins, in every layer.
#include <fmt/format.h>

#include <algorithm>

#include "cordon/glob.hpp"
#include "cordon/json.hpp"
#include "cordon/policy.hpp"
#include "cordon/policy/rules.hpp"

namespace cordon::policy {

Result<OperandPattern> OperandPattern::make(std::string key, std::string path) {
    OperandPattern op;
    op.key = std::move(key);
    op.path = std::move(path);
    op.home_relative = !op.path.empty() && (op.path[0] == '~' || op.path[0] == '$');
    auto p = compile_policy_path(op.path, "/home/user");
    if (!p) return p.error();
    if (!op.home_relative) op.fixed = std::move(*p);
    return op;
}

const Pattern& Matcher::compiled(const OperandPattern& op) {
    if (!op.home_relative) return op.fixed;
    auto it = compiled_.find(&op.path);
    if (it != compiled_.end()) return it->second;
    const std::string& text = op.path;
    auto p = compile_policy_path(text, home_);
    // The loader validated every pattern, so this cannot fail for a loaded policy.
    return compiled_.emplace(&text, p ? std::move(*p) : Pattern{}).first->second;
}

const CommandLine& Matcher::line(const Policy& p, const Invocation& inv) {
    const ProgramSpec* spec = inv.argv.empty() ? nullptr : p.spec(basename(inv.argv[0].static_text()));
    if (line_for_ == &inv && line_spec_ == spec && !line_.program.empty()) return line_;
    line_ = normalize(inv.argv, spec);
    resolved_.clear();
    resolved_.reserve(line_.operands.size());
    for (const auto& op : line_.operands) resolved_.push_back(resolve_path(op, inv.cwd));
    line_for_ = &inv;
    line_spec_ = spec;
    return line_;
}

bool program_may_match(std::string_view program, const Field& argv0) {
    static const std::string empty;
    const std::string& word = argv0.pieces.empty() ? empty : argv0.pieces[0].text;
    std::string_view base = basename(word);
    if (program.find('/') != std::string_view::npos || program == base) return true;
    return program.find_first_of("*?[") != std::string_view::npos && wildcard_match(program, base);
}

bool program_may_match(const std::vector<std::string>& programs, const Field& argv0) {
    return std::any_of(programs.begin(), programs.end(),
                       [&](const std::string& p) { return program_may_match(std::string_view(p), argv0); });
}

namespace {

bool program_matches(const std::vector<std::string>& programs, const CommandLine& cl) {
    for (const auto& p : programs) {
        if (p.find('/') != std::string::npos) {
            if (cl.path == p) return true;
            Field f = Field::lit(cl.path);
            if (to_string(resolve_path(f, literal_pattern("/")).path) == p) return true;
        } else if (p.find_first_of("*?[") != std::string::npos ? wildcard_match(p, cl.program) : p == cl.program) {
            return true;
        }
    }
    return false;
}

bool has_any(const Pattern& p) {
    return std::any_of(p.begin(), p.end(), [](const Tok& t) { return t.kind == Tok::Kind::Any; });
}

bool has_flag(const CommandLine& cl, const ProgramSpec* spec, const std::string& flag) {
    std::string canon = spec ? spec->canonical(flag) : flag;
    return std::find(cl.flags.begin(), cl.flags.end(), canon) != cl.flags.end();
}

}  // namespace

namespace {

// Whether F, resolved to PATH, denotes one path whatever the unknowns of the script are:
// nothing unknown is left in PATH (/proc/$pid/root/etc is /etc whatever the pid), or what is
// left comes from a glob the agent wrote ("/u**" spells /usr too), not from an unknown piece, a
// working directory that is unknown or another process's /proc/PID/cwd.
bool known_path(const Field& f, const PathOperand& path, const Pattern& cwd) {
    if (!has_any(path.path)) return true;
    if (f.has_unknown() || f.starts_with("/proc/")) return false;
    return f.starts_with("/") || !has_any(cwd);
}

bool subcommand_matches(const Rule& r, const CommandLine& cl, size_t& first_operand) {
    for (const auto& sub : r.subcommands) {
        if (sub.size() > cl.operands.size()) continue;
        bool ok = true;
        for (size_t i = 0; i < sub.size() && ok; ++i) {
            ok = cl.operands[i].is_static() && cl.operands[i].static_text() == sub[i];
        }
        if (ok) {
            first_operand = sub.size();
            return true;
        }
    }
    return false;
}

}  // namespace

bool Matcher::operands_match(const Rule& r, const CommandLine& cl, const Invocation& inv, size_t from,
                             Unknowns unknowns) {
    size_t to = cl.operands.size();
    if (r.operands_at == Rule::At::First) to = std::min(to, from + 1);
    if (r.operands_at == Rule::At::Last && to > from) from = to - 1;
    if (r.operands_at == Rule::At::ButLast && to > from + 1) to -= 1;
    for (size_t i = from; i < to; ++i) {
        if (!r.unknown_operands_match && has_any(resolved_[i].path)) continue;
        if (unknowns == Unknowns::MatchNothing && !known_path(cl.operands[i], resolved_[i], inv.cwd)) continue;
        for (const auto& op : r.operands) {
            if (op.key == cl.kv_keys[i] && may_denote(resolved_[i], compiled(op))) return true;
        }
    }
    return false;
}

bool Matcher::writes_match(const Rule& r, const Invocation& inv, Unknowns unknowns) {
    for (const auto& w : inv.writes) {
        PathOperand target = resolve_path(w, inv.cwd);
        if (unknowns == Unknowns::MatchNothing && !known_path(w, target, inv.cwd)) continue;
        if (!r.unknown_operands_match && has_any(target.path)) continue;
        for (const auto& pat : r.writes) {
            if (may_denote(target, compiled(pat))) return true;
        }
    }
    return false;
}

bool Matcher::cwd_matches(const Rule& r, const Invocation& inv, Unknowns unknowns) {
    if (unknowns == Unknowns::MatchNothing && has_any(inv.cwd)) return false;
    PathOperand dir;
    dir.path = inv.cwd;
    return std::any_of(r.cwd.begin(), r.cwd.end(),
                       [&](const OperandPattern& p) { return may_denote(dir, compiled(p)); });
}

bool Matcher::command_matches(const Policy& p, const Rule& r, const Invocation& inv, Unknowns unknowns) {
    if (!r.programs.empty() && !program_may_match(r.programs, inv.argv[0])) return false;
    const CommandLine& cl = line(p, inv);
    const ProgramSpec* spec = p.spec(cl.program);
    if (!r.programs.empty() && !program_matches(r.programs, cl)) return false;
    size_t first_operand = 0;
    if (!r.subcommands.empty() && !subcommand_matches(r, cl, first_operand)) return false;
    for (const auto& f : r.flags) {
        if (!has_flag(cl, spec, f)) return false;
    }
    for (const auto& f : r.without_flags) {
        if (has_flag(cl, spec, f)) return false;
    }
    return r.operands.empty() || operands_match(r, cl, inv, first_operand, unknowns);
}

bool Matcher::matches(const Policy& p, const Rule& r, const Invocation& inv, Unknowns unknowns) {
    if (r.has_construct || inv.construct != Invocation::Construct::None) {
        return r.has_construct && inv.construct == r.construct;
    }
    if (inv.unanalyzable) return false;
    bool needs_line = !r.programs.empty() || !r.subcommands.empty() || !r.flags.empty() || !r.without_flags.empty() ||
                      !r.operands.empty();
    if (needs_line && (inv.argv.empty() || !command_matches(p, r, inv, unknowns))) return false;
    if (!r.cwd.empty() && !cwd_matches(r, inv, unknowns)) return false;
    return r.writes.empty() || writes_match(r, inv, unknowns);
}

const Rule* Matcher::first_match(const Policy& p, const Invocation& inv, bool deny) {
    for (const auto& r : p.rules) {
        if (r.deny == deny && matches(p, r, inv)) return &r;
    }
    return nullptr;
}

namespace {

struct Verdict {
    bool deny = false;
    bool certain = true;         // a denial that deferral leaves standing
    const Rule* rule = nullptr;  // null: the policy's default or on-unanalyzable
};

// A shell builtin that runs no other program: the shell does it without an exec. (exec,
// command, builtin and eval run what follows them, which is an invocation of its own.)
bool is_shell_builtin(const Invocation& inv) {
    static constexpr std::string_view builtins[] = {
        ".",       ":",        "[",         "alias",    "bg",      "bind",    "break",   "caller", "cd",
        "compgen", "complete", "compopt",   "continue", "declare", "dirs",    "disown",  "echo",   "enable",
        "exit",    "export",   "false",     "fc",       "fg",      "getopts", "hash",    "help",   "history",
        "jobs",    "kill",     "let",       "local",    "logout",  "mapfile", "popd",    "printf", "pushd",
        "pwd",     "read",     "readarray", "readonly", "return",  "set",     "shift",   "shopt",  "source",
        "suspend", "test",     "times",     "trap",     "true",    "type",    "typeset", "ulimit", "umask",
        "unalias", "unset",    "wait"};
    if (inv.argv.empty() || !inv.argv[0].is_static()) return false;
    const std::string word = inv.argv[0].static_text();
    return std::find(std::begin(builtins), std::end(builtins), word) != std::end(builtins);
}

// A denial by this rule of INV happens in the shell itself (a redirection, a builtin) or in
// busybox's own process, or is a shape of the script (a fork bomb): no exec follows that the
// exec-time check could judge.
bool never_deferred(const Rule& r, const Invocation& inv) {
    return !r.writes.empty() || r.has_construct || is_shell_builtin(inv) || inv.in_process;
}

// The deny rule that decides INV. Static mode: the first that may match. Deferral: the first
// that matches with unknowns matching nothing, else the first that may match, as uncertain.
Verdict deny_verdict(Matcher& m, const Policy& p, const Invocation& inv, CheckOptions options) {
    const Rule* uncertain = nullptr;
    for (const auto& r : p.rules) {
        if (!r.deny || !m.matches(p, r, inv)) continue;
        if (!options.defer_uncertain || p.uncertain_deny || never_deferred(r, inv) ||
            m.matches(p, r, inv, Unknowns::MatchNothing)) {
            return {true, true, &r};
        }
        if (!uncertain) uncertain = &r;
    }
    if (uncertain) return {true, false, uncertain};
    return {};
}

Verdict judge(Matcher& m, const Policy& p, const Invocation& inv, CheckOptions options) {
    if (inv.unanalyzable) return {p.unanalyzable_deny, p.uncertain_deny || inv.in_process, nullptr};
    if (Verdict v = deny_verdict(m, p, inv, options); v.deny) return v;
    if (const Rule* r = m.first_match(p, inv, false)) return {false, true, r};
    // Bare redirections and recognised constructs are judged by rules only.
    if (inv.argv.empty() || inv.construct != Invocation::Construct::None) return {false, true, nullptr};
    return {p.default_deny, true, nullptr};
}

Decision denial(const Policy& p, const Invocation& inv, const Verdict& v) {
    Decision d;
    d.allow = false;
    d.command = inv.text;
    d.policy_file = p.file;
    if (v.rule) {
        d.rule_id = v.rule->id;
        d.reason = v.rule->reason;
    } else if (inv.unanalyzable) {
        d.rule_id = "on-unanalyzable";
        d.reason = inv.why;
    } else {
        d.rule_id = "default";
        d.reason = "no rule allows it and the policy's default is deny";
    }
    return d;
}

Decision decide(const std::vector<std::shared_ptr<const Policy>>& policies, const std::vector<Invocation>& invs,
                const std::string& home, const std::string& whole, CheckOptions options) {
    Decision allow;
    allow.command = whole;
    if (policies.empty()) {
        allow.rule_id = "none";
        allow.reason = "no command policy";
        return allow;
    }
    allow.rule_id = "default";
    allow.reason = "no rule denies it";
    allow.policy_file = policies.front()->file;
    Matcher m(home);
    for (const auto& inv : invs) {
        for (const auto& p : policies) {
            Verdict v = judge(m, *p, inv, options);
            if (v.deny && (v.certain || !options.defer_uncertain)) return denial(*p, inv, v);
            if (v.deny) {
                std::string text = fmt::format("{} (rule {})", inv.text, denial(*p, inv, v).rule_id);
                auto& d = allow.deferred;
                if (std::find(d.begin(), d.end(), text) == d.end()) d.push_back(std::move(text));
            } else if (v.rule && allow.rule_id == "default") {
                allow.rule_id = v.rule->id;
                allow.reason = v.rule->reason;
                allow.policy_file = p->file;
            }
        }
    }
    return allow;
}

}  // namespace

Decision PolicySet::check_argv(const std::vector<std::string>& argv, const std::string& cwd, const std::string& home,
                               CheckOptions options) const {
    return check(analyze_argv(argv, cwd, home), home, quote_argv(argv), options);
}

Decision PolicySet::check_script(const std::string& script, const std::string& cwd, const std::string& home,
                                 CheckOptions options) const {
    return check(analyze_script(script, cwd, home), home, script, options);
}

Decision PolicySet::check(const std::vector<Invocation>& invs, const std::string& home, const std::string& whole,
                          CheckOptions options) const {
    std::vector<std::shared_ptr<const Policy>> policies;
    for (const auto& l : layers_) {
        if (l.policy) {
            policies.push_back(l.policy);
            continue;
        }
        auto p = deserialize_policy_for(l.compiled, l.file, invs);
        if (!p) {
            // Fail closed: a damaged built-in policy denies.
            Decision d;
            d.allow = false;
            d.command = whole;
            d.rule_id = "damaged-policy";
            d.reason = p.error().why;
            d.policy_file = l.file;
            return d;
        }
        policies.push_back(std::make_shared<const Policy>(std::move(*p)));
    }
    return decide(policies, invs, home, whole, options);
}

void PolicySet::add(std::shared_ptr<const Policy> p) {
    std::string file = p->file;
    layers_.push_back(Layer{std::move(p), {}, std::move(file)});
}

void PolicySet::add_compiled(std::string_view bytes, std::string file) {
    layers_.push_back(Layer{nullptr, bytes, std::move(file)});
}

void PolicySet::decode_all() {
    for (auto& l : layers_) {
        if (l.policy) continue;
        if (auto p = deserialize_policy(l.compiled, l.file)) l.policy = std::make_shared<const Policy>(std::move(*p));
    }
}

std::vector<std::string> PolicySet::files() const {
    std::vector<std::string> out;
    for (const auto& l : layers_) out.push_back(l.file);
    return out;
}

std::vector<std::string> run_examples(const Policy& p) {
    std::vector<std::string> failures;
    for (const auto& r : p.rules) {
        auto matched = [&](const Example& e) {
            Matcher m(kExampleHome);
            auto invs = analyze_script(e.script, kExampleCwd, kExampleHome);
            return std::any_of(invs.begin(), invs.end(), [&](const Invocation& inv) { return m.matches(p, r, inv); });
        };
        for (const auto& e : r.must_match) {
            if (!matched(e)) {
                failures.push_back(
                    fmt::format("{}: rule {}: must-match example does not match: {}", e.where, r.id, e.script));
            }
        }
        for (const auto& e : r.must_not_match) {
            if (matched(e)) {
                failures.push_back(
                    fmt::format("{}: rule {}: must-not-match example matches: {}", e.where, r.id, e.script));
            }
        }
    }
    return failures;
}

std::string format_denial(const Decision& d) {
    // One line: a script's newlines are shown as \n.
    std::string command;
    for (char c : d.command) command += c == '\n' ? std::string("\\n") : std::string(1, c);
    return fmt::format("cordon: denied: {} (rule {}: {})", command, d.rule_id, d.reason);
}

std::string to_json(const Decision& d) {
    return JsonObject()
        .add("decision", d.allow ? "allow" : "deny")
        .add("rule", d.rule_id)
        .add("reason", d.reason)
        .add("command", d.command)
        .add("policy", d.policy_file)
        .add("deferred", d.deferred)
        .str();
}

}  // namespace cordon::policy

// Policies as bytes: the compiled form of the shipped policy files, generated at build time by
// src/gen/embed_policies.cpp and read back at start-up instead of parsing TOML (cordon-policy(5)).
// The format is private to one build of cordon: length-prefixed fields in declaration order.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "cordon/bytes.hpp"
#include "cordon/glob.hpp"
#include "cordon/policy/analyze.hpp"
#include "cordon/policy/rules.hpp"

namespace cordon::policy {
namespace {

constexpr std::string_view kMagic = "cordon-policy/3\n";

class Writer : public ByteWriter {
public:
    explicit Writer(std::string origin) : origin_(std::move(origin)) {}

    // FILE:LINE:COLUMN without FILE, which the reader supplies.
    void where(std::string_view w) {
        const std::string prefix = origin_ + ":";
        const bool relative = w.substr(0, prefix.size()) == prefix;
        flag(relative);
        str(relative ? w.substr(prefix.size()) : w);
    }
    void strs(const std::vector<std::string>& v) {
        u32(static_cast<uint32_t>(v.size()));
        for (const auto& s : v) str(s);
    }
    void pattern(const Pattern& p) {
        u32(static_cast<uint32_t>(p.size()));
        for (const Tok& t : p) {
            byte(static_cast<unsigned char>(t.kind));
            byte(static_cast<unsigned char>(t.c));
        }
    }
    void operands(const std::vector<OperandPattern>& v) {
        u32(static_cast<uint32_t>(v.size()));
        for (const auto& o : v) {
            str(o.key);
            str(o.path);
            flag(o.home_relative);
            pattern(o.fixed);
        }
    }

private:
    std::string origin_;
};

class Reader : public ByteReader {
public:
    Reader(std::string_view in, std::string origin) : ByteReader(in), origin_(std::move(origin)) {}

    std::string where() {
        bool relative = flag();
        std::string w = str();
        return relative ? origin_ + ":" + w : w;
    }
    std::vector<std::string> strs() {
        std::vector<std::string> v(count(4));
        for (auto& s : v) s = str();
        return v;
    }
    // Tokens are most of a compiled policy: checked once for length, then read in one pass.
    Pattern pattern() {
        const size_t n = count(2);
        Pattern p(n);
        const auto* in = reinterpret_cast<const unsigned char*>(in_.data() + pos_);
        bool ok = true;
        for (size_t k = 0; k < n; ++k) {
            ok = ok && in[2 * k] <= static_cast<unsigned char>(Tok::Kind::Any);
            p[k].kind = static_cast<Tok::Kind>(in[2 * k]);
            p[k].c = static_cast<char>(in[2 * k + 1]);
        }
        if (!ok)
            fail();
        else
            pos_ += 2 * n;
        return p;
    }
    std::vector<OperandPattern> operands() {
        std::vector<OperandPattern> v(count(13));
        for (auto& o : v) {
            o.key = str();
            o.path = str();
            o.home_relative = flag();
            o.fixed = pattern();
        }
        return v;
    }

private:
    std::string origin_;
};

}  // namespace

// Layout: header (description, defaults); program specs, each a NAME and a length-prefixed
// record; rules, each a gate (its program globs and whether it is a construct rule, what decides
// whether it may match an invocation) and a length-prefixed record. A reader may skip records
// it does not need (deserialize_policy_for).
std::string serialize_policy(const Policy& p) {
    Writer w(p.file);
    for (char c : kMagic) w.byte(static_cast<unsigned char>(c));
    w.str(p.description);
    w.flag(p.default_deny);
    w.flag(p.unanalyzable_deny);
    w.flag(p.uncertain_deny);
    w.u32(static_cast<uint32_t>(p.programs.size()));
    for (const auto& [name, spec] : p.programs) {
        Writer rec(p.file);
        rec.u32(static_cast<uint32_t>(spec.options.size()));
        for (const auto& o : spec.options) {
            rec.str(o.canonical);
            rec.byte(static_cast<unsigned char>(o.arg));
        }
        rec.u32(static_cast<uint32_t>(spec.spellings.size()));
        for (const auto& [spelling, index] : spec.spellings) {
            rec.str(spelling);
            rec.u32(static_cast<uint32_t>(index));
        }
        rec.strs(spec.longs);
        rec.flag(spec.abbreviations);
        rec.flag(spec.permute);
        rec.strs(spec.key_value);
        w.str(name);
        w.str(rec.take());
    }
    w.u32(static_cast<uint32_t>(p.rules.size()));
    for (const Rule& r : p.rules) {
        w.strs(r.programs);
        w.flag(r.has_construct);
        Writer rec(p.file);
        rec.str(r.id);
        rec.flag(r.deny);
        rec.str(r.reason);
        rec.where(r.where);
        rec.u32(static_cast<uint32_t>(r.subcommands.size()));
        for (const auto& alt : r.subcommands) rec.strs(alt);
        rec.strs(r.flags);
        rec.strs(r.without_flags);
        rec.operands(r.operands);
        rec.byte(static_cast<unsigned char>(r.operands_at));
        rec.flag(r.unknown_operands_match);
        rec.operands(r.writes);
        rec.operands(r.cwd);
        rec.byte(static_cast<unsigned char>(r.construct));
        w.str(rec.take());
    }
    return w.take();
}

namespace {

ProgramSpec read_program(std::string_view bytes, Reader& outer) {
    Reader r(bytes, {});
    ProgramSpec spec;
    spec.options.resize(r.count(5));
    for (auto& o : spec.options) {
        o.canonical = r.str();
        o.arg = r.enumerator(OptionSpec::Arg::Optional);
    }
    for (size_t k = r.count(8); k > 0 && !r.bad(); --k) {
        std::string spelling = r.str();
        uint32_t index = r.u32();
        if (index >= spec.options.size()) r.reject();
        // Written in key order: each insertion goes at the end.
        spec.spellings.emplace_hint(spec.spellings.end(), std::move(spelling), index);
    }
    spec.longs = r.strs();
    spec.abbreviations = r.flag();
    spec.permute = r.flag();
    spec.key_value = r.strs();
    if (r.bad() || !r.at_end()) outer.reject();
    return spec;
}

void read_rule(std::string_view bytes, const std::string& origin, Rule& rule, Reader& outer) {
    Reader r(bytes, origin);
    rule.id = r.str();
    rule.deny = r.flag();
    rule.reason = r.str();
    rule.where = r.where();
    rule.subcommands.resize(r.count(4));
    for (auto& alt : rule.subcommands) alt = r.strs();
    rule.flags = r.strs();
    rule.without_flags = r.strs();
    rule.operands = r.operands();
    rule.operands_at = r.enumerator(Rule::At::ButLast);
    rule.unknown_operands_match = r.flag();
    rule.writes = r.operands();
    rule.cwd = r.operands();
    rule.construct = r.enumerator(Invocation::Construct::ForkBomb);
    if (r.bad() || !r.at_end()) outer.reject();
}

// WANT_PROGRAM and WANT_RULE choose what is decoded; the rest is skipped whole.
template <typename WantProgram, typename WantRule>
Result<Policy> decode(std::string_view bytes, const std::string& origin, WantProgram want_program, WantRule want_rule) {
    Reader r(bytes, origin);
    Policy p;
    p.file = origin;
    r.expect(kMagic);
    p.description = r.str();
    p.default_deny = r.flag();
    p.unanalyzable_deny = r.flag();
    p.uncertain_deny = r.flag();
    for (size_t n = r.count(8); n > 0 && !r.bad(); --n) {
        std::string_view name = r.view();
        std::string_view rec = r.view();
        if (want_program(name)) p.programs.emplace_hint(p.programs.end(), std::string(name), read_program(rec, r));
    }
    // A rule's gate is read as views: most rules are skipped, and skipping allocates nothing.
    std::vector<std::string_view> programs;
    for (size_t n = r.count(9); n > 0 && !r.bad(); --n) {
        programs.resize(r.count(4));
        for (auto& prog : programs) prog = r.view();
        const bool construct = r.flag();
        std::string_view rec = r.view();
        if (r.bad() || !want_rule(programs, construct)) continue;
        Rule rule;
        rule.programs.assign(programs.begin(), programs.end());
        rule.has_construct = construct;
        read_rule(rec, origin, rule, r);
        p.rules.push_back(std::move(rule));
    }
    if (r.bad() || !r.at_end()) {
        return make_error(origin, "the policy compiled into cordon is damaged; reinstall cordon");
    }
    return p;
}

}  // namespace

Result<Policy> deserialize_policy(std::string_view bytes, const std::string& origin) {
    return decode(
        bytes, origin, [](std::string_view) { return true; },
        [](const std::vector<std::string_view>&, bool) { return true; });
}

Result<Policy> deserialize_policy_for(std::string_view bytes, const std::string& origin,
                                      const std::vector<Invocation>& invs) {
    bool any_construct = false;
    std::vector<std::string> programs;    // as Matcher::line() looks up their option tables
    std::vector<std::string_view> words;  // as program_may_match() reads the command words
    for (const auto& inv : invs) {
        any_construct = any_construct || inv.construct != Invocation::Construct::None;
        if (inv.argv.empty()) continue;
        programs.emplace_back(basename(inv.argv[0].static_text()));
        words.push_back(basename(inv.argv[0].pieces.empty() ? std::string_view() : inv.argv[0].pieces[0].text));
    }
    auto want_program = [&](std::string_view name) {
        return std::find(programs.begin(), programs.end(), name) != programs.end();
    };
    // Exactly the rules Matcher::matches could accept for one of INVS: a program rule needs an
    // invocation whose command word may be one of its programs (as program_may_match decides),
    // a construct rule a construct; rules with neither always.
    auto want_rule = [&](const std::vector<std::string_view>& rule_programs, bool construct) {
        if (construct) return any_construct;
        if (rule_programs.empty()) return true;
        return std::any_of(rule_programs.begin(), rule_programs.end(), [&](std::string_view p) {
            if (p.find('/') != std::string_view::npos) return !words.empty();
            if (p.find_first_of("*?[") == std::string_view::npos) {
                return std::find(words.begin(), words.end(), p) != words.end();
            }
            return std::any_of(words.begin(), words.end(), [&](std::string_view w) { return wildcard_match(p, w); });
        });
    };
    return decode(bytes, origin, want_program, want_rule);
}

}  // namespace cordon::policy

// A loaded policy file as data, the per-program option tables that normalise command lines,
// and the rule matcher. Pure functions over immutable data.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.hpp"
#include "cordon/policy/analyze.hpp"
#include "cordon/policy/pattern.hpp"

namespace cordon::policy {

struct OptionSpec {
    enum class Arg : unsigned char { None, Required, Optional };
    std::string canonical;  // the first spelling: "-r" for "-r -R --recursive"
    Arg arg = Arg::None;
    bool operator==(const OptionSpec&) const = default;
};

// How one program spells its options (policy file: [programs.NAME]).
struct ProgramSpec {
    std::vector<OptionSpec> options;
    std::map<std::string, size_t, std::less<>> spellings;  // "-r", "--recursive", "-delete" -> option
    std::vector<std::string> longs;                        // "--..." spellings, for abbreviations
    bool abbreviations = true;                             // --rec = --recursive (GNU getopt_long)
    bool permute = true;                                   // options may follow operands (GNU)
    std::vector<std::string> key_value;                    // dd-style KEY=PATH operands
    bool operator==(const ProgramSpec&) const = default;

    [[nodiscard]] const OptionSpec* find(std::string_view spelling) const;
    [[nodiscard]] std::string canonical(std::string_view spelling) const;
};

// A command line after normalisation for one program spec.
struct CommandLine {
    std::string program;               // basename of argv[0]
    std::string path;                  // argv[0] as given
    std::vector<std::string> flags;    // canonical spellings; "?" for a flag not known statically
    std::vector<Field> operands;       // in order
    std::vector<std::string> kv_keys;  // parallel to operands: "of" for dd's of=PATH, else empty
};
CommandLine normalize(const std::vector<Field>& argv, const ProgramSpec* spec);

struct OperandPattern {
    std::string key;             // "of" in "of=/dev/sd*"; empty for plain operands
    std::string path;            // the path pattern (policy syntax, see pattern.hpp)
    bool home_relative = false;  // starts with ~ or $HOME: compiled per check, for its HOME
    Pattern fixed;               // otherwise compiled once, at load

    static Result<OperandPattern> make(std::string key, std::string path);
    bool operator==(const OperandPattern&) const = default;
};

struct Example {
    std::string script;
    std::string where;  // FILE:LINE:COLUMN
    bool operator==(const Example&) const = default;
};

struct Rule {
    std::string id;
    bool deny = true;
    std::string reason;
    std::string where;                                  // FILE:LINE:COLUMN of the rule
    std::vector<std::string> programs;                  // basename globs or absolute paths
    std::vector<std::vector<std::string>> subcommands;  // alternatives: {"git","push"} -> {"push"}
    std::vector<std::string> flags;                     // all present
    std::vector<std::string> without_flags;             // none present
    std::vector<OperandPattern> operands;               // any operand may denote any of them
    // Which operands count; ButLast: every one but the last (mv's sources), or the only one.
    enum class At : unsigned char { Any, First, Last, ButLast } operands_at = At::Any;
    bool unknown_operands_match = true;  // an operand not known statically may be anything
    std::vector<OperandPattern> writes;  // an output redirection target may denote one
    std::vector<OperandPattern> cwd;     // the working directory may be one (git clean in ~)
    bool has_construct = false;
    Invocation::Construct construct = Invocation::Construct::None;
    std::vector<Example> must_match, must_not_match;
    bool operator==(const Rule&) const = default;
};

struct Policy {
    std::string file;
    std::string description;
    bool default_deny = false;
    bool unanalyzable_deny = true;
    bool uncertain_deny = false;  // on-uncertain = "deny": no denial of this policy is deferred
    std::map<std::string, ProgramSpec, std::less<>> programs;
    std::vector<Rule> rules;

    [[nodiscard]] const ProgramSpec* spec(std::string_view program) const;
    bool operator==(const Policy&) const = default;
};

// The context examples run in (documented in cordon-policy(5)).
inline constexpr const char* kExampleHome = "/home/user";
inline constexpr const char* kExampleCwd = "/home/user/project";

// Parse a policy from TOML text; ORIGIN names it in errors ("policies/x.toml").
Result<Policy> parse_policy(std::string_view toml, const std::string& origin);
Result<Policy> load_policy_file(const std::string& path);
// Where NAME_OR_PATH lives: a path as is, a NAME on the policy search path.
Result<std::string> find_policy(const std::string& name_or_path);

// A policy as bytes and back, for the policies compiled into cordon at build time: loading
// one skips TOML parsing and the examples (they passed when cordon was built). The bytes name
// no file: positions are kept relative to it and DESERIALIZE_POLICY prefixes ORIGIN again.
// Examples are not kept.
std::string serialize_policy(const Policy& p);
Result<Policy> deserialize_policy(std::string_view bytes, const std::string& origin);
// Only what judging INVS needs: the rules that may match one of them (by command word or
// construct; rules with neither always) and the option tables of their programs. Decisions on
// INVS equal those of the whole policy.
Result<Policy> deserialize_policy_for(std::string_view bytes, const std::string& origin,
                                      const std::vector<Invocation>& invs);

// Whether a rule naming PROGRAMS (basename globs or absolute paths) may match a command whose
// first word is ARGV0: the matcher's first, cheap test, before normalising the command line.
bool program_may_match(const std::vector<std::string>& programs, const Field& argv0);
bool program_may_match(std::string_view program, const Field& argv0);

// A shipped policy file (policies/NAME.toml) and its compiled form, generated at build time.
struct EmbeddedPolicy {
    std::string_view name, text, compiled;
};
// All of them; load() uses the compiled form of a file whose bytes equal TEXT.
std::span<const EmbeddedPolicy> embedded_policies();

// Every example that does not behave: one message per failure ("FILE:L:C: rule X: ...").
std::vector<std::string> run_examples(const Policy& p);

// What an unknown piece of an operand or redirection target (a variable, a command
// substitution, a relative path in an unknown directory) may match: anything, for "may this
// operand be that path?", or nothing, for "is it that path whatever the unknowns are?".
enum class Unknowns : unsigned char { MayBeAnything, MatchNothing };

// Which rule of P matches INV, deny rules first; nullptr if none.
class Matcher {
public:
    explicit Matcher(std::string home) : home_(std::move(home)) {}
    [[nodiscard]] bool matches(const Policy& p, const Rule& r, const Invocation& inv,
                               Unknowns unknowns = Unknowns::MayBeAnything);
    const Rule* first_match(const Policy& p, const Invocation& inv, bool deny);

private:
    std::string home_;
    std::map<const std::string*, Pattern> compiled_;  // policy pattern text -> tokens for home_
    const Invocation* line_for_ = nullptr;            // cache of the last normalisation
    const ProgramSpec* line_spec_ = nullptr;
    CommandLine line_;
    std::vector<PathOperand> resolved_;

    const Pattern& compiled(const OperandPattern& op);
    const CommandLine& line(const Policy& p, const Invocation& inv);
    bool command_matches(const Policy& p, const Rule& r, const Invocation& inv, Unknowns unknowns);
    bool operands_match(const Rule& r, const CommandLine& cl, const Invocation& inv, size_t from, Unknowns unknowns);
    bool writes_match(const Rule& r, const Invocation& inv, Unknowns unknowns);
    bool cwd_matches(const Rule& r, const Invocation& inv, Unknowns unknowns);
};

}  // namespace cordon::policy

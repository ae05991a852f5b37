// The command policy (SPEC §6): decides allow/deny for a command line before it runs, and for
// every exec inside the jail. A second layer that stops a confused agent with a clear reason;
// the jail is the boundary.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.hpp"

namespace cordon::policy {

struct Policy;  // one loaded file (policy/rules.hpp)

inline constexpr const char* kDefaultPolicy = "default";

struct Decision {
    bool allow = true;
    std::string rule_id;      // the rule that decided, "on-unanalyzable", or "default"
    std::string reason;       // the rule's human reason
    std::string command;      // the simple command that triggered it, as text
    std::string policy_file;  // the file the deciding rule came from (empty: no policy)
    // An allowed command's uncertain denials, left to the exec-time check (CheckOptions), each
    // "COMMAND (rule ID)". Always empty in static mode and for a denial.
    std::vector<std::string> deferred;
};

// How a check treats what it cannot know statically (cordon-policy(5), UNCERTAINTY). A denial is
// certain when its rule still matches with every unknown piece (a variable, a command
// substitution, the directory after `cd "$x"`) matching nothing, and uncertain otherwise; an
// unanalyzable command is uncertain. Denials by `writes` and `construct` rules, a policy's
// default deny of a known program, and every denial of a policy with on-uncertain = "deny" are
// certain.
struct CheckOptions {
    // Static mode (false): every denial denies. Deferral (true): uncertain denials do not deny
    // but are listed in Decision::deferred, because each exec they lead to is checked with its
    // real argv inside the jail; a certain denial anywhere still denies.
    bool defer_uncertain = false;
};

// Immutable after loading; several policies are layered and any deny wins. Safe to share
// between threads (the exec-notify handler checks from the supervisor).
class PolicySet {
public:
    PolicySet() = default;  // no policy at all: everything is allowed (--no-policy)

    [[nodiscard]] Decision check_argv(const std::vector<std::string>& argv, const std::string& cwd,
                                      const std::string& home, CheckOptions options = {}) const;
    [[nodiscard]] Decision check_script(const std::string& script, const std::string& cwd, const std::string& home,
                                        CheckOptions options = {}) const;

    [[nodiscard]] bool empty() const { return layers_.empty(); }
    // The files loaded, in layer order (for --dry-run and the audit log).
    [[nodiscard]] std::vector<std::string> files() const;

    void add(std::shared_ptr<const Policy> p);
    // A policy compiled into cordon (policy/rules.hpp), named FILE: each check decodes only the
    // rules that may match what it judges.
    void add_compiled(std::string_view bytes, std::string file);
    // Decode every compiled layer in full, once: for a caller that judges many commands (the
    // supervisor, one judgement per exec), where decoding per check would be paid again each
    // time. A damaged layer stays compiled, so each check still fails closed on it.
    void decode_all();

private:
    struct Layer {
        std::shared_ptr<const Policy> policy;  // or:
        std::string_view compiled;
        std::string file;
    };
    std::vector<Layer> layers_;
    [[nodiscard]] Decision check(const std::vector<struct Invocation>& invs, const std::string& home,
                                 const std::string& whole, CheckOptions options) const;
};

// NAMES_OR_PATHS: a value containing '/' is a path; anything else is NAME.toml looked up on
// search_path("policies", "CORDON_POLICY_PATH"). Loading runs every rule's examples; a malformed
// file or a failing example is an error naming FILE:LINE:COLUMN. An empty list loads nothing.
Result<PolicySet> load(const std::vector<std::string>& names_or_paths);

// "cordon: denied: <command> (rule <id>: <reason>)", the run-time message for a denial, on one
// line (newlines in COMMAND shown as \n).
std::string format_denial(const Decision& d);
// The decision as one JSON object (cordon check --json, status and audit output).
std::string to_json(const Decision& d);

}  // namespace cordon::policy

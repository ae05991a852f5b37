// What the analyser knows while it walks a script: the working directory, variables with known
// values, positional parameters; and word expansion under that knowledge. Internal to src/policy.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cordon/policy/pattern.hpp"
#include "cordon/policy/shell.hpp"

namespace cordon::policy {

struct Scope {
    Pattern cwd;
    std::map<std::string, std::string, std::less<>> vars;  // known values; absent means unknown
    std::vector<std::optional<std::string>> positional;    // $0, $1, ...
    bool positional_known = false;
    bool custom_ifs = false;  // IFS was assigned: field splitting is no longer known

    void set(const std::string& name, const std::optional<std::string>& value);
    [[nodiscard]] std::optional<std::string> get(const std::string& name) const;

private:
    friend class Subshell;
    // While a Subshell is open, the values set() replaces, to put back when it closes.
    std::vector<std::pair<std::string, std::optional<std::string>>> journal_;
    int subshells_ = 0;
};

// A subshell's changes (variables, cd, set --) end with it. Cheaper than copying the scope:
// substitutions are everywhere, and a copy would cost every variable known so far.
class Subshell final {
public:
    explicit Subshell(Scope& sc)
        : sc_(sc),
          mark_(sc.journal_.size()),
          cwd_(sc.cwd),
          positional_(sc.positional),
          positional_known_(sc.positional_known),
          custom_ifs_(sc.custom_ifs) {
        ++sc_.subshells_;
    }
    ~Subshell();
    Subshell(const Subshell&) = delete;
    Subshell& operator=(const Subshell&) = delete;

private:
    Scope& sc_;
    size_t mark_;
    Pattern cwd_;
    std::vector<std::optional<std::string>> positional_;
    bool positional_known_;
    bool custom_ifs_;
};

// Runs the commands of a command or process substitution (in a copy of the scope: a subshell).
using RunSubstitution = std::function<void(const std::vector<Node>&, Scope&)>;

// A word to fields: parameter expansion with what is known, command substitution as Unknown,
// field splitting (SPLIT) of unquoted known values, globs kept as Glob pieces. Brace expansion
// happens before, with brace_expand.
std::vector<Field> expand_word(const Word& w, Scope& sc, bool split, const RunSubstitution& run);

// Bash brace expansion on unquoted literal text: a{b,c}d -> abd acd; {1..9} becomes a glob;
// too many results make the word unknown.
std::vector<Word> brace_expand(const Word& w);

// The single static string FIELDS denote, if there is one ("" for no field).
std::optional<std::string> static_value(const std::vector<Field>& fields);

}  // namespace cordon::policy

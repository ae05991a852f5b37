// From shell text or a real argv to the list of command invocations a policy has to judge:
// every simple command at any depth, with wrappers seen through and the working directory
// tracked. Pure data; the matcher (policy.hpp) decides.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/policy/pattern.hpp"

namespace cordon::policy {

struct Invocation {
    enum class Construct : unsigned char { None, ForkBomb };
    std::vector<Field> argv;    // empty for a bare redirection ("> /dev/sda")
    Pattern cwd;                // where it runs (may hold unknown parts after `cd "$x"`)
    std::vector<Field> writes;  // targets of output redirections
    std::string text;           // the simple command as written, for messages
    Construct construct = Construct::None;
    bool unanalyzable = false;  // the command word (or a script) cannot be known statically
    std::string why;            // for unanalyzable
};

std::vector<Invocation> analyze_script(std::string_view script, std::string_view cwd, std::string_view home);
std::vector<Invocation> analyze_argv(const std::vector<std::string>& argv, std::string_view cwd, std::string_view home);

// What a wrapper program runs (sudo, env, xargs, find -exec, sh -c, ...), from its argv.
struct Unwrapped {
    // StdinScript: a shell that reads its script from standard input (sh, bash -s).
    enum class Kind : unsigned char { None, Argv, Script, StdinScript, Unanalyzable };
    Kind kind = Kind::None;
    std::vector<std::vector<Field>> argvs;  // Argv: the inner command lines
    std::optional<Field> chdir;             // env -C DIR, sudo -D DIR
    Field script;                           // Script: the text for sh -c or eval
    std::vector<Field> positional;          // Script: $0, $1, ...
    bool same_shell = false;                // Script: eval runs in the current shell
    std::string why;                        // Unanalyzable
};

Unwrapped unwrap(const std::vector<Field>& argv);
// The index in the argv of the dynamic loader run as a program (is_loader_name(), paths.hpp) of
// the program it loads: past its options (argv.size() if none).
size_t loader_operand(const std::vector<std::string>& argv);
std::string_view basename(std::string_view path);
// argv joined with shell quoting where needed.
std::string quote_argv(const std::vector<std::string>& argv);

}  // namespace cordon::policy

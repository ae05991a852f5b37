// From shell text or a real argv to the list of command invocations a policy has to judge:
// every simple command at any depth, with wrappers seen through and the working directory
// tracked. Pure data; the matcher (policy.hpp) decides.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

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
    // Run by busybox or toybox inside their own process (the commands of their shell, of xargs,
    // of find -exec): no exec follows that the exec-time check could judge.
    bool in_process = false;
};

std::vector<Invocation> analyze_script(std::string_view script, std::string_view cwd, std::string_view home);
std::vector<Invocation> analyze_argv(const std::vector<std::string>& argv, std::string_view cwd, std::string_view home);

// What a wrapper program runs (sudo, env, xargs, find -exec, sh -c, ...), from its argv.
struct Unwrapped {
    // StdinScript: a shell that reads its script from standard input (sh, bash -s).
    // ScriptFile: a shell running a script file, or source FILE: its commands are checked at
    // exec time inside the jail (none is checked here).
    enum class Kind : unsigned char { None, Argv, Script, StdinScript, ScriptFile, Unanalyzable };
    Kind kind = Kind::None;
    std::vector<std::vector<Field>> argvs;  // Argv: the inner command lines
    std::optional<Field> chdir;             // env -C DIR, sudo -D DIR
    Field script;                           // Script: the text for sh -c or eval
    std::vector<Field> positional;          // Script: $0, $1, ...
    bool same_shell = false;                // Script: eval runs in the current shell
    std::string why;                        // Unanalyzable
};

Unwrapped unwrap(const std::vector<Field>& argv);
// busybox or toybox, under any name that begins with theirs (busyboxZ, toybox-0.8): they run
// their first argument as the applet, and run the commands of their shell, xargs and find
// -exec in their own process.
bool is_multicall(std::string_view prog);
// The index in the argv of the dynamic loader run as a program (is_loader_name(), paths.hpp) of
// the program it loads: past its options (argv.size() if none, or if its options run none:
// --list, --verify).
size_t loader_operand(const std::vector<std::string>& argv);
std::string_view basename(std::string_view path);
// argv joined with shell quoting where needed.
std::string quote_argv(const std::vector<std::string>& argv);

}  // namespace cordon::policy

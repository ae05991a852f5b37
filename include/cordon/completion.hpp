// `cordon completion bash|zsh|fish`: the completion script for that shell, generated from the
// command line's option table (cli.cpp, walked through CLI11) and the subcommand table
// (commands.hpp), so that it offers exactly what cordon accepts. Profile names are asked of
// `cordon profile list` when completing, so the user's own profiles appear too.
#pragma once

#ifdef CORDON_JAIL
#error "the jail does not see the CLI: it takes a Spec (CMakeLists.txt defines CORDON_JAIL for src/jail)"
#endif
#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.hpp"

namespace cordon {

// What an option of the command line takes, one entry per value (--bind: SRC, DEST).
struct OptionValue {
    enum class Kind { Text, Files, Dirs, Words, Profiles } kind = Kind::Text;
    std::string metavar;             // "SRC", "none|host"
    std::vector<std::string> words;  // Words: the choices ("none", "host")
};
struct OptionInfo {
    std::vector<std::string> names;  // "-p", "--profile"
    std::string help;
    std::vector<OptionValue> values;  // empty for a flag
    bool repeatable = false;
};
// Every option of the command line, in --help order.
std::vector<OptionInfo> option_table();

Result<std::string> completion_script(std::string_view shell);
// ARGS exclude "completion"; prints the script, returns the exit status.
int main_completion(const std::vector<std::string>& args);

}  // namespace cordon

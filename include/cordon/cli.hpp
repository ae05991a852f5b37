// The command line of SPEC §3, parsed with CLI11 into a SettingsLayer plus run-level choices.
#pragma once

#ifdef CORDON_JAIL
#error "the jail does not see the CLI: it takes a Spec (CMakeLists.txt defines CORDON_JAIL for src/jail)"
#endif
#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cordon/error.hpp"
#include "cordon/settings.hpp"

namespace CLI {
class App;
}

namespace cordon {

struct CliRequest {
    SettingsLayer layer;                // the command line's keys, merged last
    std::vector<std::string> profiles;  // -p/--profile, in order
    bool no_profile = false;
    bool no_policy = false;
    std::vector<std::string> command;   // COMMAND [ARG...]
    std::optional<std::string> script;  // -c SCRIPT
    bool dry_run = false;
    int verbosity = 0;  // -1 quiet, 0 normal, 1+ verbose: main sets cordon/diag.hpp's from it
    bool help = false;
    bool version = false;
    std::string help_text;
};

// Parse argv (without subcommands, which main dispatches first). Errors name the option.
Result<CliRequest> parse_command_line(const std::vector<std::string>& args);
// The value of cordon's option --NAME (its first occurrence), read from ARGS as the parser reads
// them (each option's values skipped, short options clustered), before they are parsed: for a
// --status-json written at a failure that parsing reports.
std::optional<std::string> option_value_in(const std::vector<std::string>& args, std::string_view name);
// Always through CLI11 (parse_command_line takes a shortcut for `[-q|-v]... -- COMMAND`).
// INSPECT, if given, sees the option table before ARGS are parsed (with "--help" among ARGS,
// every option is registered): the shell completions are generated from it (completion.cpp).
Result<CliRequest> parse_command_line_full(const std::vector<std::string>& args,
                                           const std::function<void(const CLI::App&)>& inspect = {});

}  // namespace cordon

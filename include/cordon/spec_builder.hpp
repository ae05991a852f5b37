// Building the Spec (cordon/spec.hpp) from the command line and the merged profile layer: the
// CLI's side of the Spec, which the jail never sees.
#pragma once

#ifdef CORDON_JAIL
#error "the jail does not see the CLI: it takes a Spec (CMakeLists.txt defines CORDON_JAIL for src/jail)"
#endif
#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/cli.hpp"
#include "cordon/error.hpp"
#include "cordon/settings.hpp"
#include "cordon/spec.hpp"

namespace cordon {

// What cordon knows about the caller, gathered once (injected by tests).
struct HostInfo {
    uid_t uid = 0;
    gid_t gid = 0;
    std::string cwd;
    std::string home;
    std::string user;                  // $USER; empty: looked up when a profile needs it
    std::vector<std::string> environ;  // NAME=VALUE
};
HostInfo current_host();

// "0.5" -> 50000 (microseconds per 100 ms period); at least 0.01 CPU.
Result<uint64_t> parse_cpus(const std::string& text);

// True for /, HOME, an ancestor of HOME, and system directories (/usr, /etc, /bin, ...).
bool is_unsafe_workdir(const std::string& dir, const std::string& home);

// Where --status-json and --audit write: a PATH, or fd:N (N at most 6 digits), read once here.
struct OutputTarget {
    std::string text;  // as given, for messages
    int fd = -1;       // N of fd:N; -1 for a PATH
    [[nodiscard]] bool is_fd() const { return fd >= 0; }
};
// TEXT as an output target, or nullopt: "fd:" with no number, or too long a one.
std::optional<OutputTarget> parse_output_target(std::string_view text);

// How cordon runs and reports, beside what the jail is: main.cpp's, never the jail's (the
// supervisor is given what it needs of them: SupervisorOptions in cordon/jail.hpp).
struct RunOptions {
    bool dry_run = false;
    std::optional<OutputTarget> status_json;  // --status-json
    std::vector<std::string> profiles;        // the profiles named, for --dry-run and -v
    std::string workdir_note;                 // why the current directory was not made writable
    std::string program_note;                 // the command is a program in HOME the jail does not see
    // How exec-time checks report (--on-deny, --audit); whether the run has them is
    // Prepared::exec_checks.
    bool kill_on_deny = false;
    std::optional<OutputTarget> audit;  // --audit
    // "NAME (what it holds)" for each variable removed for its value (or git's configuration
    // set): the note that says why (cordon/env_filter.hpp). Names only, never values.
    std::vector<std::string> env_value_removals;
};

// What the command line and profiles resolve to: the jail and how to run it.
struct ResolvedRun {
    Spec spec;
    RunOptions options;
};

// Build and validate the Spec and the run's options from the command line and the merged
// profile layer.
Result<ResolvedRun> build_spec(const CliRequest& cli, const SettingsLayer& merged, const HostInfo& host);

// `--profile auto`: the profile named after COMMAND's basename when one exists and the
// executable does not live in a location the caller can write; otherwise "default".
std::string auto_profile(const CliRequest& cli, const HostInfo& host);

// The full flow: load profiles named on the command line (or `default`), merge, build.
Result<ResolvedRun> resolve_spec(const CliRequest& cli, const HostInfo& host);

}  // namespace cordon

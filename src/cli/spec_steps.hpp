// The steps of build_spec (spec_builder.cpp) kept in files of their own: the workdir and the
// current directory (spec_workdir.cpp), the environment and what it says about the command
// (spec_env.cpp), the limits (spec_limits.cpp). Internal to src/cli.
#pragma once

#include "cordon/settings.hpp"
#include "cordon/spec_builder.hpp"

namespace cordon::spec_steps {

// The workdir: explicit (--workdir / profile), else the current directory or the top of the git
// repository that holds it; read-only where the caller cannot write it.
Status set_workdir(const SettingsLayer& merged, const HostInfo& host, Spec& s, RunOptions& o);
void set_chdir(const SettingsLayer& merged, const HostInfo& host, Spec& s);
// The environment: filtered, the git identity, --setenv.
Status set_environment(const SettingsLayer& merged, const HostInfo& host, Spec& s, RunOptions& o);
// A note when the command is a program in HOME that the jail does not show.
void note_hidden_program(const HostInfo& host, const Spec& s, RunOptions& o);
// --ssh-agent and --ssh-agent-key (spec_ssh_agent.cpp): the hosts with their keys from the
// caller's known_hosts, the caller's agent, the hosts added to the network allowlist.
Status set_ssh_agent(const SettingsLayer& merged, const HostInfo& host, Spec& s);
// --ssh-agent: SSH_AUTH_SOCK names the jail's socket (after the environment's filter).
void set_agent_environment(Spec& s);
// --timeout, the cgroup limits (SPEC §7) and --rlimit.
Status set_limits(const SettingsLayer& merged, Spec& s);
// A small file's text (a .git file, HEAD), read without following a final symlink; nullopt
// where it is not a regular file of 4 KiB or less (spec_workdir.cpp).
std::optional<std::string> read_small_file(const std::string& path);

}  // namespace cordon::spec_steps

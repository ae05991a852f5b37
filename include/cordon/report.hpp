// Reporting, the CLI's: what cordon prints about a run, --dry-run's resolved jail and
// --status-json's object.
#pragma once

#ifdef CORDON_JAIL
#error "the jail does not see the CLI: it takes a Spec (CMakeLists.txt defines CORDON_JAIL for src/jail)"
#endif
#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <string>

#include "cordon/error.hpp"
#include "cordon/fd.hpp"
#include "cordon/jail.hpp"
#include "cordon/spec_builder.hpp"

namespace cordon {

std::string format_dry_run(const Spec& spec, const RunOptions& options, const Prepared& prepared);
std::string status_json(const Outcome& outcome);
Status write_status_json(const OutputTarget& target, const Outcome& outcome);
// --status-json PATH, opened before the jail runs, so that the command may replace the path (a
// symlink or a FIFO in the workdir) but not the file cordon writes: a regular file, created if
// need be, never through a symlink, never waiting on a FIFO.
Result<UniqueFd> open_status_file(const std::string& path);
// The status object into FD (open_status_file's), from its start, the rest cut.
Status write_status_file(int fd, const std::string& path, const Outcome& outcome);
// Why a git command that failed with STATUS may have failed because of the jail (it cannot
// change the repository's protected config: git says "Device or resource busy"), or "".
std::string protected_git_note(const Spec& spec, int status);
// Why a package manager's or git's network command that failed with STATUS may have failed
// because of the jail: it has no network (the default), and says so only as a DNS error; or "".
std::string no_network_note(const Spec& spec, int status);

}  // namespace cordon

// Calls that would fail inside the jail only because of what cordon put there to protect the
// workdir, answered by the supervisor so that tools behave as they do outside (issue 28, item 9):
//
//   rmdir(2), unlinkat(2) with AT_REMOVEDIR   of a placeholder directory: a mount point (EBUSY)
//   chmod(2), fchmodat(2), fchmodat2, fchmod  of a placeholder: on a read-only mount (EROFS)
//                                             of a file the caller owns, on a read-only mount,
//                                             to the mode it already has (EROFS)
//
// `git clean -xfd` removes the untracked .claude/ and .vscode/ it finds; `chmod -R u+w .` walks
// over .git/hooks and .git/config. Each such call is answered with success and changes nothing:
// the placeholder stays (it is cordon's, removed by the last run that uses it), and the mode
// asked for is the mode the file has. Every other call of these goes on to the kernel unchanged,
// with the kernel's own checks: a chmod that would change a protected file still fails with
// EROFS, and removing anything else is the kernel's to decide.
//
// The filter notifies these calls to the exec listener (exec_notify.hpp), which hands them here.
// Nothing here acts on the file system: a wrong answer (a race that swaps the path while the
// supervisor looks) can only report success for a call that changed nothing in the jail.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace cordon {

// A file by identity, as stat(2) gives it: the placeholders of a run.
struct FileId {
    dev_t dev = 0;
    ino_t ino = 0;
    bool operator==(const FileId&) const = default;
};

// The syscalls the placeholder answers take; the filter (exec_filter) notifies exactly these,
// unlinkat only with AT_REMOVEDIR.
const std::vector<int>& placeholder_calls();
bool is_placeholder_call(int nr);

enum class PlaceholderAnswer { Continue, Succeed };

// The answer to one notified call of process PID (in the supervisor's pid namespace) with the
// call's DATA: Succeed to report success without running it, Continue to let the kernel run it.
// PLACEHOLDERS: the run's placeholders as the host made them (a bind keeps their identity).
PlaceholderAnswer answer_placeholder_call(pid_t pid, const seccomp_data& data, const std::vector<FileId>& placeholders);

}  // namespace cordon

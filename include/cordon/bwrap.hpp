// bwrap mode: bubblewrap's command line and behaviour (`cordon bwrap ARGS...`, or argv[0]
// `bwrap`). The caller's command line is the whole jail: no profile, no command policy, no exec
// checks. Parsing builds an ordered list of setup ops, as bubblewrap's does; the child replays
// them (src/bwrap/setup.cpp). CORDON_BWRAP_EXTRAS opts a run into cordon's own jail instead
// (src/bwrap/extras.cpp).
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

#include "cordon/error.hpp"

namespace cordon::bwrap {

// One setup op, in command-line order.
struct Op {
    enum class Kind {
        Bind,
        RoBind,
        DevBind,
        BindFd,
        RoBindFd,
        RemountRo,
        Proc,
        Dev,
        Tmpfs,
        Mqueue,
        Dir,
        File,
        BindData,
        RoBindData,
        Symlink,
        Chmod,
        Overlay,     // --overlay RWSRC WORKDIR DEST
        TmpOverlay,  // --tmp-overlay DEST
        RoOverlay,   // --ro-overlay DEST
        LockFile,
    };
    Kind kind = Kind::Dir;
    std::string source;  // binds: the host path; Symlink: the target; Overlay: RWSRC
    std::string dest;
    std::string workdir;                    // Overlay: WORKDIR
    std::vector<std::string> overlay_srcs;  // the overlays: the --overlay-src layers, bottom first
    int fd = -1;                            // the *-fd and data ops
    bool optional = false;                  // the -try forms
    std::optional<mode_t> perms;            // --perms, or Chmod's mode
    std::optional<uint64_t> size;           // --size (Tmpfs)
};

struct CapChange {
    bool add = false;
    std::string name;  // "ALL" or a capability name
};

struct Options {
    std::vector<Op> ops;
    std::vector<std::string> argv;  // COMMAND [ARG...]
    std::optional<std::string> argv0;
    bool unshare_user = false, unshare_user_try = false, unshare_ipc = false, unshare_pid = false, unshare_net = false,
         unshare_uts = false, unshare_cgroup = false, unshare_cgroup_try = false;
    int userns_fd = -1, userns2_fd = -1, pidns_fd = -1;
    bool disable_userns = false, assert_userns_disabled = false;
    std::optional<uid_t> uid;
    std::optional<gid_t> gid;
    std::optional<std::string> hostname, chdir;
    std::vector<std::string> env;  // the environment after --setenv/--unsetenv/--clearenv
    int sync_fd = -1, block_fd = -1, userns_block_fd = -1, info_fd = -1, json_status_fd = -1;
    std::vector<int> seccomp_fds;
    bool seccomp_single = false;  // --seccomp (not repeatable) rather than --add-seccomp-fd
    bool die_with_parent = false, as_pid_1 = false, new_session = false, level_prefix = false;
    std::vector<CapChange> caps;
    bool help = false, version = false;
    std::vector<std::string> warnings;  // bubblewrap's warnings about the command line
};

// Parse bubblewrap's command line (ARGS exclude argv[0]). ENV is the caller's environment, to
// which --setenv/--unsetenv/--clearenv apply in order. A failure is bubblewrap's kind of message
// without its "bwrap: " prefix, e.g. "--bind takes two arguments".
Result<Options> parse(const std::vector<std::string>& args, std::vector<std::string> env);

// `--help`'s text: bubblewrap's usage, then what cordon supports and what differs.
std::string help_text(std::string_view prog);

// Whether this process runs in bwrap mode by its name: argv[0]'s basename is `bwrap`, or it was
// started as /proc/self/exe by a process of a bwrap-mode jail (how nested callers re-run it).
bool invoked_as_bwrap(std::string_view argv0);

// The whole of bwrap mode: parse ARGS, answer --help/--version, run natively or (with
// CORDON_BWRAP_EXTRAS) as cordon; returns the exit status. PROG is what usage names.
int main_entry(const std::vector<std::string>& args, std::string_view prog);
// `cordon bwrap ARGS...` (the subcommand table's entry).
int main_subcommand(const std::vector<std::string>& args);

// Run the jail; returns the exit status (bubblewrap's: 1 for its own failures).
int run(const Options& options);

// The capabilities the command keeps, as bubblewrap computes them: a PRIVILEGED (root) caller's
// effective set, else none, then each --cap-add/--cap-drop in order.
Result<std::vector<int>> capabilities(const Options& options, bool privileged);

// The extras (CORDON_BWRAP_EXTRAS): the cordon command line that runs OPTIONS in cordon's jail
// with the extra options appended, or an error naming what bwrap mode cannot carry over.
// PRIVILEGED: the caller is root (the capabilities' starting set).
Result<std::vector<std::string>> cordon_command_line(const Options& options, const std::string& extras,
                                                     bool privileged);
// The environment bwrap mode computed for the command, PWD as bubblewrap sets it (--chdir, else
// CWD). Under the extras it reaches cordon in kCommandEnvVar, a variable of cordon's own
// environment (which only the caller may read, unlike a command line), while cordon keeps the
// caller's environment for its own settings (search paths, HOME): what the command line sets
// reaches the command only.
std::vector<std::string> command_environ(const Options& options, const std::string& cwd);
inline constexpr std::string_view kCommandEnvVar = "CORDON_BWRAP_COMMAND_ENV";
// ENV as one string: each NAME=VALUE as its length in decimal, ':', then its bytes.
std::string encode_environ(const std::vector<std::string>& env);
// And back; nullopt for a TEXT that is not such a string.
std::optional<std::vector<std::string>> decode_environ(std::string_view text);

}  // namespace cordon::bwrap

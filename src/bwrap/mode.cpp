// bwrap mode's entry: how it is recognised, and its --help.
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/bwrap.hpp"
#include "cordon/fd.hpp"
#include "cordon/version.hpp"
#include "setup.hpp"

namespace cordon::bwrap {

bool invoked_as_bwrap(std::string_view argv0) {
    const size_t slash = argv0.rfind('/');
    const std::string_view base = slash == std::string_view::npos ? argv0 : argv0.substr(slash + 1);
    if (base == "bwrap") return true;
    if (argv0 != "/proc/self/exe") return false;
    // Re-run through /proc/self/exe (bubblewrap's own tests do, where the path of `bwrap` may
    // not be visible): bwrap mode if the process that started it is bwrap mode's, which names
    // itself so (run.cpp).
    auto comm = read_file("/proc/" + std::to_string(::getppid()) + "/comm");
    return comm && *comm == "bwrap\n";
}

// bubblewrap's option list (with cordon's notes), then what differs and the extras.
constexpr const char* kHelpBody =
    R"(cordon's bwrap mode: bubblewrap's command line and behaviour. The command line is the whole
jail: no profile, no command policy, no exec checks.

    --help                       Print this help
    --version                    Print version
    --args FD                    Parse NUL-separated args from FD
    --argv0 VALUE                Set argv[0] to the value VALUE before running the program
    --level-prefix               Prepend e.g. <3> to diagnostic messages
    --unshare-all                Unshare every namespace we support by default
    --share-net                  Retain the network namespace (can only combine with --unshare-all)
    --unshare-user               Create new user namespace (may be automatically implied if not root)
    --unshare-user-try           Create new user namespace if possible else continue by skipping it
    --unshare-ipc                Create new ipc namespace
    --unshare-pid                Create new pid namespace
    --unshare-net                Create new network namespace
    --unshare-uts                Create new uts namespace
    --unshare-cgroup             Create new cgroup namespace
    --unshare-cgroup-try         Create new cgroup namespace if possible else continue by skipping it
    --userns FD                  Use this user namespace (cannot combine with --unshare-user)
    --userns2 FD                 After setup switch to this user namespace, only useful with --userns
    --disable-userns             Disable further use of user namespaces inside sandbox
    --assert-userns-disabled     Fail unless further use of user namespace inside sandbox is disabled
    --pidns FD                   Use this pid namespace (as parent namespace if using --unshare-pid)
    --uid UID                    Custom uid in the sandbox (requires --unshare-user or --userns)
    --gid GID                    Custom gid in the sandbox (requires --unshare-user or --userns)
    --hostname NAME              Custom hostname in the sandbox (requires --unshare-uts)
    --chdir DIR                  Change directory to DIR
    --clearenv                   Unset all environment variables
    --setenv VAR VALUE           Set an environment variable
    --unsetenv VAR               Unset an environment variable
    --lock-file DEST             Take a lock on DEST while sandbox is running
    --sync-fd FD                 Keep this fd open while sandbox is running
    --bind SRC DEST              Bind mount the host path SRC on DEST
    --bind-try SRC DEST          Equal to --bind but ignores non-existent SRC
    --dev-bind SRC DEST          Bind mount the host path SRC on DEST, allowing device access
    --dev-bind-try SRC DEST      Equal to --dev-bind but ignores non-existent SRC
    --ro-bind SRC DEST           Bind mount the host path SRC readonly on DEST
    --ro-bind-try SRC DEST       Equal to --ro-bind but ignores non-existent SRC
    --bind-fd FD DEST            Bind open directory or path fd on DEST
    --ro-bind-fd FD DEST         Bind open directory or path fd read-only on DEST
    --remount-ro DEST            Remount DEST as readonly; does not recursively remount
    --overlay-src SRC            Read files from SRC in the following overlay
    --overlay RWSRC WORKDIR DEST Mount overlayfs on DEST, with RWSRC as the host path for writes and
                                 WORKDIR an empty directory on the same filesystem as RWSRC
    --tmp-overlay DEST           Mount overlayfs on DEST, with writes going to an invisible tmpfs
    --ro-overlay DEST            Mount overlayfs read-only on DEST
    --exec-label LABEL           Exec label for the sandbox (not supported: no SELinux labeling)
    --file-label LABEL           File label for temporary sandbox content (not supported, likewise)
    --proc DEST                  Mount new procfs on DEST
    --dev DEST                   Mount new dev on DEST
    --tmpfs DEST                 Mount new tmpfs on DEST
    --mqueue DEST                Mount new mqueue on DEST
    --dir DEST                   Create dir at DEST
    --file FD DEST               Copy from FD to destination DEST
    --bind-data FD DEST          Copy from FD to file which is bind-mounted on DEST
    --ro-bind-data FD DEST       Copy from FD to file which is readonly bind-mounted on DEST
    --symlink SRC DEST           Create symlink at DEST with target SRC
    --seccomp FD                 Load and use seccomp rules from FD (not repeatable)
    --add-seccomp-fd FD          Load and use seccomp rules from FD (repeatable)
    --block-fd FD                Block on FD until some data to read is available
    --userns-block-fd FD         Block on FD until the user namespace is ready
    --info-fd FD                 Write information about the running container to FD
    --json-status-fd FD          Write container status to FD as multiple JSON documents
    --new-session                Create a new terminal session
    --die-with-parent            Kills with SIGKILL child process (COMMAND) when bwrap or bwrap's parent dies.
    --as-pid-1                   Do not install a reaper process with PID=1
    --cap-add CAP                Add cap CAP when running as privileged user
    --cap-drop CAP               Drop cap CAP when running as privileged user
    --perms OCTAL                Set permissions of next argument (--bind-data, --file, etc.)
    --size BYTES                 Set size of next argument (only for --tmpfs)
    --chmod OCTAL PATH           Change permissions of PATH (must already exist)

Differences from bubblewrap:
    no setuid mode; --exec-label and --file-label fail ("labeling not supported"), as a
    bubblewrap built without SELinux does. The sandbox is built on a private tmpfs mounted over
    /tmp in the new mount namespace, so nothing is created on the host.

cordon's extras, opt-in: CORDON_BWRAP_EXTRAS="OPTIONS" runs the command line in cordon's own
jail (built from the same ops, with --no-profile) plus cordon OPTIONS, e.g.
    CORDON_BWRAP_EXTRAS="--memory 1G --limits best-effort --policy default --audit /tmp/a.jsonl"
--allow-host HOST among them narrows --share-net to the hosts named (refused with --unshare-net).
See BWRAP COMPATIBILITY in cordon(1).
)";

std::string help_text(std::string_view prog) {
    return "usage: " + std::string(prog) + " [OPTIONS...] [--] COMMAND [ARGS...]\n\n" + kHelpBody;
}

namespace {

// CORDON_BWRAP_EXTRAS: cordon runs the translated command line itself (its normal mode, so the
// limits, policy and audit are the ones cordon(1) documents).
int run_with_extras(const Options& options, const std::string& extras) {
    const bool privileged = ::getuid() == 0 && has_sys_admin();
    if (auto bad = check_options(options, privileged)) {
        print_error(options, *bad, 0);
        return 1;
    }
    auto translated = cordon_command_line(options, extras, privileged);
    if (!translated) {
        print_error(options, translated.error().why, 0);
        return 1;
    }
    std::vector<std::string> words{"cordon"};
    words.insert(words.end(), translated->begin(), translated->end());
    std::vector<char*> argv;
    argv.reserve(words.size() + 1);
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    // cordon keeps the caller's environment, less the variable that asked for this: its own
    // settings come from there, never from the command line; the command's is in kCommandEnvVar.
    char cwd[PATH_MAX];
    const std::string here = ::getcwd(cwd, sizeof cwd) ? cwd : "/";
    std::string command_env = std::string(kCommandEnvVar) + "=" + encode_environ(command_environ(options, here));
    const std::string command_env_prefix = std::string(kCommandEnvVar) + "=";
    std::vector<char*> envp;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string_view kv(*e);
        if (kv.rfind("CORDON_BWRAP_EXTRAS=", 0) != 0 && kv.rfind(command_env_prefix, 0) != 0) envp.push_back(*e);
    }
    envp.push_back(command_env.data());
    envp.push_back(nullptr);
    // --die-with-parent: cordon, which this process becomes, dies with the caller, and the jail
    // with cordon (the parent-death signal outlives execve).
    if (options.die_with_parent) (void)::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    ::execve("/proc/self/exe", argv.data(), envp.data());
    print_error(options, "execv /proc/self/exe (cordon, for CORDON_BWRAP_EXTRAS)", errno);
    return 1;
}

}  // namespace

int main_entry(const std::vector<std::string>& args, std::string_view prog) {
    if (args.empty()) {
        const std::string usage = help_text(prog);
        (void)write_all(STDERR_FILENO, usage.data(), usage.size());
        return 1;
    }
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    auto parsed = parse(args, std::move(env));
    if (!parsed) {
        print_error(Options{}, parsed.error().why, 0);
        return 1;
    }
    if (parsed->help) {
        std::fputs(help_text(prog).c_str(), stdout);
        return 0;
    }
    if (parsed->version) {
        std::printf("bubblewrap 0.11.1 (%s, bwrap mode)\n", version_string());
        return 0;
    }
    for (const std::string& warning : parsed->warnings) print_warning(*parsed, warning);
    const char* extras = std::getenv("CORDON_BWRAP_EXTRAS");
    if (extras != nullptr && *extras != '\0') return run_with_extras(*parsed, extras);
    return run(*parsed);
}

int main_subcommand(const std::vector<std::string>& args) {
    return main_entry(args, "cordon bwrap");
}

}  // namespace cordon::bwrap

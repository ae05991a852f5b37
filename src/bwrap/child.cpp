// bwrap mode's child, in the order bubblewrap takes its steps: wait for the id maps, limit user
// namespaces (the limit is set from the namespace that owns it, before the mounts), build the
// filesystem, name the host, choose the working directory, give up user namespaces and
// capabilities, then fork the waiting parent (pid 1 of a new pid namespace, or the holder of
// lock files) and exec the payload with the caller's seccomp programs as the very last step.
#include <fcntl.h>
#include <linux/filter.h>
#include <sched.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>

#include "cordon/fd.hpp"
#include "cordon/kernel_steps.hpp"
#include "cordon/net.hpp"
#include "setup.hpp"

namespace cordon::bwrap {
namespace {

// A setup failure: the message, 'S' on the report pipe (no exit code in the status JSON), exit 1.
[[noreturn]] void die(const Plan& plan, const std::string& text, int err) {
    print_error(*plan.options, text, err);
    (void)write_all(plan.report_fd, "S", 1);
    ::_exit(1);
}

// One byte from FD; false on EOF (the writer is gone without a word) or an error.
bool read_byte(int fd) {
    char c = 0;
    return retry_eintr([&] { return ::read(fd, &c, 1); }) == 1;
}

bool write_text(const std::string& path, const std::string& text) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
    return fd && write_all(fd.get(), text.data(), text.size());
}

// --disable-userns, first half: this user namespace allows one more, which the second half takes.
void limit_userns(const Plan& plan) {
    if (!write_text("/proc/sys/user/max_user_namespaces", "1")) {
        die(plan, "sysctl user.max_user_namespaces = 1", errno);
    }
}

// The second half: a nested user namespace (the same ids), so the one the limit counts in is full
// and its limit is out of the payload's reach.
void enter_nested_userns(const Plan& plan) {
    const uid_t uid = ::getuid();
    const gid_t gid = ::getgid();
    if (::unshare(CLONE_NEWUSER) != 0) die(plan, "unshare user namespace", errno);
    const IdMap uid_map[] = {{uid, uid, 1}};
    const IdMap gid_map[] = {{gid, gid, 1}};
    if (kernel::write_id_maps("/proc/self", kernel::Setgroups::TryDeny, uid_map, gid_map) != kernel::IdMapStep::Done) {
        die(plan, "setting up uid map for the nested user namespace", errno);
    }
}

void assert_userns_disabled(const Plan& plan) {
    if (::unshare(CLONE_NEWUSER) == 0) die(plan, "creation of new user namespaces was not disabled as requested", 0);
    if (errno != ENOSPC && errno != EUSERS)
        die(plan, "sandbox does not have expected user namespace restriction", errno);
}

// --chdir, or the caller's directory if the jail has it, else HOME, else /; PWD follows.
std::string choose_cwd(const Plan& plan) {
    const Options& o = *plan.options;
    if (o.chdir) {
        if (::chdir(o.chdir->c_str()) != 0) die(plan, "Can't chdir to " + *o.chdir, errno);
        return *o.chdir;
    }
    if (!plan.cwd.empty() && ::chdir(plan.cwd.c_str()) == 0) return plan.cwd;
    const char* home = std::getenv("HOME");
    if (home != nullptr && ::chdir(home) == 0) return home;
    if (::chdir("/") != 0) die(plan, "Can't chdir to /", errno);
    return "/";
}

// The payload's capabilities: what the bounding set still has of the kept ones, every other
// dropped from every set; for a non-root uid the ambient set is raised for them so that they
// survive the exec. Every capability's bounding bit is read (and any failure is fatal): no step
// of the setup is skipped because the kernel said no.
void drop_capabilities(const Plan& plan) {
    const int last = static_cast<int>(cap_max_bits()) - 1;
    std::vector<bool> bounding(static_cast<size_t>(last + 1), false);
    for (int cap = 0; cap <= last; ++cap) {
        const int r = ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
        if (r < 0) die(plan, "Reading the capability bounding set", errno);
        bounding[static_cast<size_t>(cap)] = r == 1;
    }
    std::vector<bool> keep(static_cast<size_t>(last + 1), false);
    std::vector<cap_value_t> kept;
    for (int cap : plan.keep_caps) {
        if (!bounding[static_cast<size_t>(cap)]) continue;
        keep[static_cast<size_t>(cap)] = true;
        kept.push_back(cap);
    }
    // Only what the bounding set holds is dropped from it: kept, or not there, is left alone.
    uint64_t leave = 0;
    for (int cap = 0; cap <= last; ++cap) {
        if (!bounding[static_cast<size_t>(cap)] || keep[static_cast<size_t>(cap)]) leave |= uint64_t{1} << cap;
    }
    if (kernel::drop_bounding_set(leave, last) != 0) die(plan, "Dropping capability from bounding set", errno);
    const bool root = ::getuid() == 0;
    // A root caller who changed nothing keeps its inheritable set (empty) as bubblewrap does.
    const bool changed = !plan.options->caps.empty();
    kernel::CapSets sets{};
    kernel::add_capabilities(sets, kept, /*inheritable=*/!root || changed);
    // As bubblewrap: a non-root uid keeps capabilities across the exec only when the command
    // line asked for some with --cap-add/--cap-drop.
    const std::span<const int> ambient = root || !changed ? std::span<const int>{} : std::span<const int>{kept};
    switch (kernel::set_capabilities(sets, ambient)) {
        case kernel::CapStep::Done:
            return;
        case kernel::CapStep::Capset:
            die(plan, "capset failed", errno);
        case kernel::CapStep::AmbientClear:
            die(plan, "Clearing ambient capabilities", errno);
        case kernel::CapStep::AmbientRaise:
            die(plan, "Adding ambient capability", errno);
    }
}

// --seccomp/--add-seccomp-fd: the programs the parent read, loaded in order.
void load_seccomp(const Plan& plan) {
    for (const std::string& program : plan.seccomp_programs) {
        const std::span<const sock_filter> code{reinterpret_cast<const sock_filter*>(program.data()),
                                                program.size() / sizeof(sock_filter)};
        if (kernel::load_seccomp_filter(code) != 0) {
            die(plan,
                errno == EINVAL ? "Unable to set up system call filtering as requested: prctl(PR_SET_SECCOMP) "
                                  "reported EINVAL. (Hint: this requires a kernel configured with "
                                  "CONFIG_SECCOMP and CONFIG_SECCOMP_FILTER.)"
                                : "prctl(PR_SET_SECCOMP)",
                errno);
        }
    }
}

[[noreturn]] void exec_payload(const Plan& plan, std::vector<std::string> env) {
    const Options& o = *plan.options;
    if (o.die_with_parent) (void)::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    std::vector<char*> argv;
    argv.reserve(o.argv.size() + 1);
    for (const std::string& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
    if (o.argv0) argv[0] = const_cast<char*>(o.argv0->c_str());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    envp.reserve(env.size() + 1);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    environ = envp.data();
    load_seccomp(plan);
    ::execvp(o.argv[0].c_str(), argv.data());
    const int err = errno;
    print_error(o, "execvp " + o.argv[0], err);
    (void)write_all(plan.report_fd, "E", 1);
    ::_exit(1);
}

// The waiting parent: reaps whatever ends up its child and leaves with the payload's status.
[[noreturn]] void wait_for_payload(const Plan& plan, pid_t payload) {
    ::close(plan.report_fd);
    if (plan.options->sync_fd >= 0) (void)::fcntl(plan.options->sync_fd, F_SETFD, 0);
    // pid 1 runs under the command's filters too, as bubblewrap's do_init does: the command could
    // otherwise have its parent make the calls they refuse (ptrace it, and call setxattr).
    load_seccomp(plan);
    for (;;) {
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, 0);
        if (pid < 0 && errno == EINTR) continue;
        if (pid < 0) ::_exit(1);
        if (pid != payload) continue;
        ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    }
}

void isolate_identity(const Plan& plan, std::vector<std::string>& env) {
    const Options& o = *plan.options;
    if (o.hostname && ::sethostname(o.hostname->c_str(), o.hostname->size()) != 0) die(plan, "sethostname", errno);
    const std::string cwd = choose_cwd(plan);
    std::erase_if(env, [](const std::string& e) { return e.rfind("PWD=", 0) == 0; });
    env.push_back("PWD=" + cwd);
    if (o.disable_userns) enter_nested_userns(plan);
    if (o.userns2_fd >= 0 && ::setns(o.userns2_fd, CLONE_NEWUSER) != 0) die(plan, "Setting userns2 failed", errno);
    if (o.assert_userns_disabled) assert_userns_disabled(plan);
}

}  // namespace

void child_main(const Plan& plan) {
    const Options& o = *plan.options;
    if (o.die_with_parent) (void)::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    // The reports are the parent's to write: the command never holds them open.
    if (o.info_fd >= 0) ::close(o.info_fd);
    if (o.json_status_fd >= 0) ::close(o.json_status_fd);
    if (!read_byte(plan.proceed_fd)) die(plan, "the parent ended before the setup could proceed", 0);
    ::close(plan.proceed_fd);
    if (o.block_fd >= 0) (void)read_byte(o.block_fd);  // data or EOF: either ends the wait
    if (o.disable_userns) limit_userns(plan);
    // As bubblewrap: a new network namespace's loopback up (servers and proxies on 127.0.0.1).
    if (o.unshare_net && bring_loopback_up() != 0) die(plan, "loopback: Failed to bring up lo", errno);
    std::vector<int> locks;
    ChildError error;
    // What the ops make has their modes exactly, as with bubblewrap (which clears its umask).
    const mode_t umask_was = ::umask(0);
    if (!setup_mounts(plan, locks, error)) die(plan, error.text, error.err);
    ::umask(umask_was);
    std::vector<std::string> env = o.env;
    isolate_identity(plan, env);
    drop_capabilities(plan);
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die(plan, "prctl(PR_SET_NO_NEW_PRIVS)", errno);
    // The new session is led by pid 1, before the fork, as bubblewrap's is: the command is then
    // no process group leader, and may call setsid() itself.
    if (o.new_session && ::setsid() == -1) die(plan, "setsid", errno);
    if (plan.need_init) {
        const pid_t payload = ::fork();
        if (payload < 0) die(plan, "Can't fork", errno);
        if (payload > 0) wait_for_payload(plan, payload);
        for (int fd : locks) ::close(fd);
        if (o.sync_fd >= 0) ::close(o.sync_fd);
    }
    exec_payload(plan, std::move(env));
}

}  // namespace cordon::bwrap

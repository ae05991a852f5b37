// bwrap mode's parent: check the options as bubblewrap does, clone the child into its
// namespaces, write its id maps, report it (--info-fd, --json-status-fd), wait, and leave with
// the payload's status (128+N for a signal; 1 for bubblewrap's own failures).
#include <fcntl.h>
#include <linux/filter.h>
#include <sched.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "cordon/fd.hpp"
#include "cordon/kernel_steps.hpp"
#include "cordon/seccomp.hpp"
#include "setup.hpp"

namespace cordon::bwrap {

std::optional<std::string> check_options(const Options& o, bool privileged) {
    if (o.argv.empty()) return "No command specified";
    if (o.userns_fd >= 0 && o.unshare_user) return "--userns not compatible --unshare-user";
    if (o.userns_fd >= 0 && o.unshare_user_try) return "--userns not compatible --unshare-user-try";
    if (o.userns2_fd >= 0 && o.userns_fd < 0) return "--userns2 requires --userns";
    if ((o.uid || o.gid) && !(o.unshare_user || o.unshare_user_try || o.userns_fd >= 0 || !privileged)) {
        return std::string(o.uid ? "--uid" : "--gid") + " requires --unshare-user or --userns";
    }
    if (o.hostname && !o.unshare_uts) return "Specifying --hostname requires --unshare-uts";
    if (o.as_pid_1 && !o.unshare_pid) return "Specifying --as-pid-1 requires --unshare-pid";
    if (o.userns_block_fd >= 0 && o.info_fd < 0) return "--userns-block-fd requires --info-fd";
    if (o.disable_userns && !(o.unshare_user || o.unshare_user_try || !privileged)) {
        return "--disable-userns requires --unshare-user";
    }
    if (o.disable_userns && o.userns_fd >= 0) return "--disable-userns is not compatible with --userns";
    if (o.disable_userns && o.userns_block_fd >= 0) return "--disable-userns is not compatible with --userns-block-fd";
    return std::nullopt;
}

namespace {

int clone_flags(const Options& o, const Plan& plan) {
    int flags = CLONE_NEWNS;
    if (plan.new_userns) flags |= CLONE_NEWUSER;
    if (o.unshare_pid) flags |= CLONE_NEWPID;
    if (o.unshare_net) flags |= CLONE_NEWNET;
    if (o.unshare_ipc) flags |= CLONE_NEWIPC;
    if (o.unshare_uts) flags |= CLONE_NEWUTS;
    struct stat st {};
    if (o.unshare_cgroup || (o.unshare_cgroup_try && ::stat("/proc/self/ns/cgroup", &st) == 0)) {
        flags |= CLONE_NEWCGROUP;
    }
    return flags;
}

// The child's maps: one id each, the caller's (0 for root) shown as --uid/--gid.
Status write_id_maps(const Options& o, pid_t child, bool privileged) {
    const std::string dir = "/proc/" + std::to_string(child);
    const uid_t uid = ::getuid();
    const gid_t gid = ::getgid();
    const IdMap uid_map[] = {{o.uid.value_or(uid), uid, 1}};
    const IdMap gid_map[] = {{o.gid.value_or(gid), gid, 1}};
    const auto setgroups = privileged ? kernel::Setgroups::Leave : kernel::Setgroups::Deny;
    switch (kernel::write_id_maps(dir.c_str(), setgroups, uid_map, gid_map)) {
        case kernel::IdMapStep::Done:
            return {};
        case kernel::IdMapStep::Setgroups:
            return sys_error("error writing to setgroups");
        case kernel::IdMapStep::UidMap:
            return sys_error("setting up uid map");
        case kernel::IdMapStep::GidMap:
            return sys_error("setting up gid map");
    }
    return {};
}

// {"child-pid": N, "cgroup-namespace": ..., ...}: what --info-fd and --json-status-fd report first.
std::string child_info(pid_t child, bool pretty) {
    const char* sep = pretty ? ",\n    " : ", ";
    std::string out = pretty ? "{\n    " : "{ ";
    out += "\"child-pid\": " + std::to_string(child);
    for (const char* ns : {"cgroup", "ipc", "mnt", "net", "pid", "uts"}) {
        struct stat st {};
        const std::string path = "/proc/" + std::to_string(child) + "/ns/" + ns;
        if (::stat(path.c_str(), &st) != 0) continue;
        out += sep + std::string("\"") + ns + "-namespace\": " + std::to_string(st.st_ino);
    }
    return out + (pretty ? "\n}\n" : " }\n");
}

// The report pipe's first byte: none (EOF) once the payload is exec'd, 'S' or 'E' on a failure.
bool payload_started(int report_fd) {
    char c = 0;
    const ssize_t n = retry_eintr([&] { return ::read(report_fd, &c, 1); });
    return n == 0;
}

int wait_child(pid_t child) {
    int status = 0;
    while (::waitpid(child, &status, 0) < 0) {
        if (errno != EINTR) return 1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// After clone: maps, reports, the proceed byte, then the wait.
int supervise(const Options& o, const Plan& plan, pid_t child, int proceed_fd, int report_fd) {
    if (plan.new_userns && o.userns_block_fd < 0) {
        if (auto s = write_id_maps(o, child, plan.privileged); !s) {
            print_error(o, s.error().what, s.error().err);
            ::kill(child, SIGKILL);
            (void)wait_child(child);
            return 1;
        }
    }
    if (o.info_fd >= 0) {
        const std::string info = child_info(child, true);
        (void)write_all(o.info_fd, info.data(), info.size());
        ::close(o.info_fd);
    }
    if (o.json_status_fd >= 0) {
        const std::string info = child_info(child, false);
        (void)write_all(o.json_status_fd, info.data(), info.size());
    }
    if (o.userns_block_fd >= 0) {
        char c = 0;
        (void)retry_eintr([&] { return ::read(o.userns_block_fd, &c, 1); });
    }
    (void)write_all(proceed_fd, "1", 1);
    ::close(proceed_fd);
    // The caller's descriptors are the child's now; holding them here would keep a pipe's
    // reader waiting for an EOF until the jail ends.
    close_fds_from(3, o.json_status_fd, report_fd);
    const bool started = payload_started(report_fd);
    const int code = wait_child(child);
    if (started && o.json_status_fd >= 0) {
        const std::string status = "{ \"exit-code\": " + std::to_string(code) + " }\n";
        (void)write_all(o.json_status_fd, status.data(), status.size());
    }
    return code;
}

// Each seccomp FD read to its end and closed (a repeated FD has nothing left to give).
Status read_seccomp(const Options& o, std::vector<std::string>& programs) {
    for (int fd : o.seccomp_fds) {
        std::string data;
        char buf[8192];
        for (ssize_t n = 0; (n = retry_eintr([&] { return ::read(fd, buf, sizeof buf); })) != 0;) {
            if (n < 0) return sys_error("Can't read seccomp data");
            data.append(buf, static_cast<size_t>(n));
        }
        ::close(fd);
        if (data.size() % sizeof(sock_filter) != 0)
            return make_error("Invalid seccomp data, must be multiple of 8", "");
        programs.push_back(std::move(data));
    }
    return {};
}

// A host-root caller's sandbox that can hold CAP_SETFCAP (kept, or as the root of a user namespace
// it makes, which maps to host root) could leave a file whose capabilities the host honours for
// any user who runs it: set-uid root by another name. Unlike bubblewrap, such a sandbox writes no
// extended attribute at all (ENOTSUP, as a file system without them) and has no io_uring, which
// could write one. An unprivileged caller's capabilities are never honoured outside its own
// user namespaces, so its sandbox keeps both, as with bubblewrap.
Status guard_file_caps(const Options& o, Plan& plan) {
    const bool host_root = ::getuid() == 0 || ::geteuid() == 0;
    const bool setfcap = std::find(plan.keep_caps.begin(), plan.keep_caps.end(), CAP_SETFCAP) != plan.keep_caps.end();
    if (!host_root || (!setfcap && o.disable_userns)) return {};
    CORDON_ASSIGN_OR_RETURN(std::vector<sock_filter> guard, xattr_guard_program());
    plan.seccomp_programs.insert(plan.seccomp_programs.begin(), std::string(reinterpret_cast<const char*>(guard.data()),
                                                                            guard.size() * sizeof guard[0]));
    return {};
}

}  // namespace

bool has_sys_admin() {
    cap_t caps = cap_get_proc();
    cap_flag_value_t value = CAP_CLEAR;
    if (caps != nullptr) cap_get_flag(caps, CAP_SYS_ADMIN, CAP_EFFECTIVE, &value);
    cap_free(caps);
    return value == CAP_SET;
}

void print_error(const Options& options, const std::string& text, int err) {
    std::string line = options.level_prefix ? "<3>bwrap: " : "bwrap: ";
    line += text;
    if (err != 0) line += std::string(": ") + std::strerror(err);
    line += "\n";
    (void)write_all(STDERR_FILENO, line.data(), line.size());
}

void print_warning(const Options& options, const std::string& text) {
    const std::string line = (options.level_prefix ? "<4>bwrap: " : "bwrap: ") + text + "\n";
    (void)write_all(STDERR_FILENO, line.data(), line.size());
}

int run(const Options& o) {
    // A caller that ignores SIGCHLD would have the kernel reap the sandbox before we can wait for
    // it: bubblewrap 0.11.1 resets it, and the command starts with it at its default too.
    (void)::signal(SIGCHLD, SIG_DFL);
    Plan plan;
    plan.options = &o;
    plan.privileged = ::getuid() == 0 && has_sys_admin();
    struct stat st {};
    const bool userns_try = o.unshare_user_try && ::stat("/proc/self/ns/user", &st) == 0;
    plan.new_userns = o.userns_fd < 0 && (o.unshare_user || userns_try || !plan.privileged);
    plan.need_init =
        !o.as_pid_1 && (o.unshare_pid || o.sync_fd >= 0 || std::any_of(o.ops.begin(), o.ops.end(), [](const Op& op) {
                            return op.kind == Op::Kind::LockFile;
                        }));
    if (auto bad = check_options(o, plan.privileged)) {
        print_error(o, *bad, 0);
        return 1;
    }
    auto caps = capabilities(o, plan.privileged);
    if (!caps) {
        print_error(o, caps.error().why, 0);
        return 1;
    }
    plan.keep_caps = std::move(*caps);
    if (auto s = read_seccomp(o, plan.seccomp_programs); !s) {
        print_error(o, s.error().what, s.error().err);
        return 1;
    }
    if (auto s = guard_file_caps(o, plan); !s) {
        print_error(o, s.error().what, s.error().err);
        return 1;
    }
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) != nullptr) plan.cwd = cwd;
    if (const char* tty = ::ttyname(STDOUT_FILENO); tty != nullptr && tty[0] == '/') plan.host_tty = tty;
    if (o.die_with_parent) (void)::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    // The outer half of a nested run (/proc/self/exe inside the jail) finds bwrap mode by this name.
    (void)::prctl(PR_SET_NAME, "bwrap", 0, 0, 0);
    // The user namespace first: the pid namespace may be one that it owns.
    if (o.userns_fd >= 0 && ::setns(o.userns_fd, CLONE_NEWUSER) != 0) {
        print_error(o, "Setting userns failed", errno);
        return 1;
    }
    if (o.pidns_fd >= 0 && ::setns(o.pidns_fd, CLONE_NEWPID) != 0) {
        print_error(o, "Setting pidns failed", errno);
        return 1;
    }
    int proceed[2];
    int report[2];
    if (::pipe2(proceed, O_CLOEXEC) != 0 || ::pipe2(report, O_CLOEXEC) != 0) {
        print_error(o, "pipe", errno);
        return 1;
    }
    const int flags = clone_flags(o, plan);
    const long pid = ::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (pid == 0) {
        ::close(proceed[1]);
        ::close(report[0]);
        plan.proceed_fd = proceed[0];
        plan.report_fd = report[1];
        child_main(plan);
    }
    ::close(proceed[0]);
    ::close(report[1]);
    if (pid < 0) {
        const int err = errno;
        print_error(o, "Creating new namespace failed", err);
        if (err == EPERM || err == ENOSPC) {
            print_error(o, "user namespaces may be disabled (user.max_user_namespaces), or refused here", 0);
        }
        return 1;
    }
    return supervise(o, plan, static_cast<pid_t>(pid), proceed[1], report[0]);
}

}  // namespace cordon::bwrap

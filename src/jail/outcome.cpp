// classify(): the one place that decides a run's reason and exit status (SPEC §3).
#include "cordon/outcome.hpp"

#include <sys/wait.h>

#include <csignal>
#include <utility>

namespace cordon {

namespace {

const char* const kUsernsHint =
    "cordon needs unprivileged user namespaces (--isolation auto runs a Landlock jail instead where they are "
    "refused). Check: sysctl user.max_user_namespaces (must be > 0), kernel.unprivileged_userns_clone=1 "
    "(Debian < 11), and on Ubuntu >= 23.10 kernel.apparmor_restrict_unprivileged_userns: install cordon's "
    "AppArmor profile (/etc/apparmor.d/usr.bin.cordon, from packaging/apparmor/usr.bin.cordon) and "
    "'apparmor_parser -r' it. Inside a container, the container must allow namespaces: docker run "
    "--security-opt seccomp=unconfined, or a seccomp profile that allows clone/unshare with CLONE_NEWUSER. "
    "'cordon doctor' says which applies here.";

Error child_error(const ChildFailure& f) {
    if (f.kind == ChildFailure::Kind::Exec) {
        if (f.err == ENOENT || f.err == ENOTDIR) {
            return Error{f.text, "command not found inside the jail", 0, {}, ErrorKind::NotFound, {}};
        }
        return Error{f.text, "cannot execute inside the jail", f.err, {}, ErrorKind::Denied, {}};
    }
    Error e = sys_error("jail setup failed: " + f.text, f.err);
    if (f.err == EPERM || f.err == EACCES) {
        e.hint =
            "the kernel refused a namespace operation; if user namespaces are restricted (AppArmor, "
            "SELinux, a container's seccomp policy) see 'cordon doctor' and the README";
    }
    if (f.err == ENOSYS) e.hint = "cordon needs Linux >= 5.12 (openat2, open_tree, move_mount, mount_setattr)";
    if (f.text.rfind("write /proc/self/", 0) == 0) e.hint = kUsernsHint;
    return e;
}

void set_signaled(Outcome& out, int sig) {
    out.reason = Outcome::Reason::Signaled;
    out.signal = sig;
    out.exit_code = 128 + sig;
}

// Reason, exit status, signal and error, before the OOM check.
void decide(const RunFacts& f, Outcome& out) {
    const bool payload_signaled = f.payload_status && WIFSIGNALED(*f.payload_status);
    if (f.denied_exec_ended) {
        out.reason = Outcome::Reason::Denied;
        out.exit_code = 126;
    } else if (f.timed_out) {
        out.reason = Outcome::Reason::Timeout;
        out.exit_code = 124;
        out.signal = payload_signaled ? WTERMSIG(*f.payload_status) : (f.timeout_killed ? SIGKILL : SIGTERM);
    } else if (f.interrupted) {
        set_signaled(out, f.interrupted);
    } else if (f.child_failure) {
        out.error = child_error(*f.child_failure);
        out.exit_code = static_cast<int>(out.error->kind);
        out.reason = out.exit_code == 125 ? Outcome::Reason::SetupError : Outcome::Reason::ExecError;
    } else if (f.payload_status && WIFEXITED(*f.payload_status)) {
        out.reason = Outcome::Reason::Exited;
        out.exit_code = WEXITSTATUS(*f.payload_status);
    } else if (payload_signaled) {
        set_signaled(out, WTERMSIG(*f.payload_status));
    } else if (f.init_status && WIFSIGNALED(*f.init_status)) {
        set_signaled(out, WTERMSIG(*f.init_status));
    } else {
        out.reason = Outcome::Reason::SetupError;
        out.exit_code = 125;
        out.error = make_error("the jail's init exited without reporting the command's status",
                               f.started ? "after the command started" : "before the command started");
    }
}

}  // namespace

Outcome classify(const RunFacts& f) {
    if (f.setup_failure) {
        Outcome out;
        out.error = f.setup_failure;
        out.wall_ms = f.wall_ms;
        return out;
    }
    if (f.gate_stop) {
        Outcome out = *f.gate_stop;
        out.wall_ms = f.wall_ms;
        return out;
    }
    Outcome out;
    out.wall_ms = f.wall_ms;
    out.cpu_ms = f.cpu_ms;
    out.peak_memory_bytes = f.peak_memory_bytes;
    out.oom_kills = f.oom_kills;
    out.layers = f.layers;
    out.denials = f.exec_denials.kept();
    out.denials_dropped = f.exec_denials.dropped() + f.net_denials_dropped;
    decide(f, out);
    // A refused connection is reported, and does not decide the run's status: the command saw it.
    out.denials.insert(out.denials.end(), f.net_denials.begin(), f.net_denials.end());
    // Killed by the OOM killer: SIGKILL, or a shell's 137 for its child's SIGKILL.
    const bool sigkilled = (out.reason == Outcome::Reason::Signaled && out.signal == SIGKILL) ||
                           (out.reason == Outcome::Reason::Exited && out.exit_code == 128 + SIGKILL);
    if (out.oom_kills > 0 && sigkilled) {
        out.reason = Outcome::Reason::Oom;
        out.signal = SIGKILL;
        out.exit_code = 128 + SIGKILL;
    }
    return out;
}

const char* const kCloneWhat = "cannot create the jail's namespaces (clone)";

Error clone_error(int err) {
    Error e = sys_error(kCloneWhat, err);
    if (err == EPERM || err == EACCES)
        e.hint = kUsernsHint;
    else if (err == ENOSPC || err == EUSERS)
        e.hint = "a namespace limit is exhausted or 0: sysctl user.max_user_namespaces";
    else if (err == EINVAL)
        e.hint = "this kernel lacks a namespace type cordon needs (user, mount, pid, net, ipc, uts, cgroup)";
    return e;
}

bool is_clone_error(const Error& e) {
    return e.what == kCloneWhat;
}

}  // namespace cordon

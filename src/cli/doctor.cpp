// `cordon doctor [--json]`: what this host supports, and what to do about what it does not.
#include <fcntl.h>
#include <sched.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cordon/cgroup.hpp"
#include "cordon/diag.hpp"
#include "cordon/doctor.hpp"
#include "cordon/fallback.hpp"
#include "cordon/fd.hpp"
#include "cordon/features.hpp"
#include "cordon/json.hpp"
#include "cordon/landlock.hpp"

namespace cordon {

namespace {

struct Finding {
    std::string check;
    std::string status;  // ok, warn, fail
    std::string detail;
    std::string fix;
};

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

std::string sysctl(const char* path) {
    auto r = read_file(path);
    return r ? trim(*r) : std::string();
}

Finding check_kernel() {
    struct utsname u {};
    ::uname(&u);
    int major = 0, minor = 0;
    std::sscanf(u.release, "%d.%d", &major, &minor);
    bool ok = major > 5 || (major == 5 && minor >= 12);
    return {"kernel", ok ? "ok" : "fail", std::string("Linux ") + u.release,
            ok ? "" : "cordon needs Linux >= 5.12 (openat2, open_tree, move_mount, mount_setattr)"};
}

// Whether this looks like a container (where its runtime's seccomp profile may refuse userns).
bool in_container() {
    return ::access("/.dockerenv", F_OK) == 0 || ::access("/run/.containerenv", F_OK) == 0 ||
           !sysctl("/run/systemd/container").empty();
}

// What refuses user namespaces here, as the exact fix for each cause found.
std::string userns_fix(const AppArmorFacts& apparmor) {
    std::vector<std::string> fixes;
    const std::string max = sysctl("/proc/sys/user/max_user_namespaces");
    if (max == "0") fixes.emplace_back("sudo sysctl -w user.max_user_namespaces=15000");
    if (sysctl("/proc/sys/kernel/unprivileged_userns_clone") == "0") {
        fixes.emplace_back("sudo sysctl -w kernel.unprivileged_userns_clone=1");
    }
    if (sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1" &&
        !confined_by_cordon_profile(apparmor)) {
        fixes.emplace_back(
            "Ubuntu's AppArmor restriction (kernel.apparmor_restrict_unprivileged_userns=1): sudo install -m 644 "
            "packaging/apparmor/usr.bin.cordon /etc/apparmor.d/usr.bin.cordon && sudo apparmor_parser -r "
            "/etc/apparmor.d/usr.bin.cordon (the .deb installs it for /usr/bin/cordon)");
    }
    if (fixes.empty() || in_container()) {
        fixes.emplace_back(
            "inside a container, its seccomp profile must allow clone/unshare with CLONE_NEWUSER: docker run "
            "--security-opt seccomp=unconfined, or a custom profile (docker's default refuses them)");
    }
    std::string out;
    for (const auto& f : fixes) out += (out.empty() ? "" : "; ") + f;
    return out;
}

Finding check_userns(const AppArmorFacts& apparmor) {
    const int err = probe_userns();
    std::string detail = "user.max_user_namespaces=" + sysctl("/proc/sys/user/max_user_namespaces");
    if (std::string v = sysctl("/proc/sys/kernel/unprivileged_userns_clone"); !v.empty()) {
        detail += ", kernel.unprivileged_userns_clone=" + v;
    }
    if (err == 0) return {"user namespaces", "ok", detail, ""};
    detail = std::string("refused here (unshare(CLONE_NEWUSER): ") + std::strerror(err) + "); " + detail;
    // --isolation auto runs the Landlock jail instead: a warning, unless there is none either.
    const bool landlock = landlock_unavailable(landlock_abi()).empty();
    return {"user namespaces", landlock ? "warn" : "fail", detail, userns_fix(apparmor)};
}

// What --isolation auto gives a run here (cordon(1), ISOLATION).
Finding check_isolation() {
    const int err = probe_userns();
    if (err == 0) return {"isolation", "ok", "auto: the namespace jail (user namespaces are allowed here)", ""};
    const int abi = landlock_abi();
    if (const std::string off = landlock_unavailable(abi); !off.empty()) {
        return {"isolation", "fail", "auto: no jail can be built here: user namespaces are refused and " + off,
                "allow user namespaces (see the user namespaces line)"};
    }
    return {"isolation", "warn",
            "auto: the Landlock jail (ABI " + std::to_string(abi) +
                "), with a warning that names what it cannot give (host processes visible, no private /tmp, ...); "
                "--isolation namespaces refuses to run",
            "allow user namespaces for the full jail (see the user namespaces line)"};
}

Finding check_apparmor(const AppArmorFacts& apparmor) {
    std::string v = sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    if (v.empty() || v == "0") {
        return {"AppArmor userns restriction", "ok", v.empty() ? "not present" : "off", ""};
    }
    if (confined_by_cordon_profile(apparmor)) {
        return {"AppArmor userns restriction", "ok",
                "kernel.apparmor_restrict_unprivileged_userns=1; cordon's profile grants it userns", ""};
    }
    return {"AppArmor userns restriction", "warn",
            "kernel.apparmor_restrict_unprivileged_userns=1 (Ubuntu >= 23.10): unprivileged user namespaces are "
            "refused to programs without an AppArmor profile that allows them",
            "sudo install -m 644 packaging/apparmor/usr.bin.cordon /etc/apparmor.d/usr.bin.cordon && sudo "
            "apparmor_parser -r /etc/apparmor.d/usr.bin.cordon (the .deb installs it for /usr/bin/cordon); or, for "
            "every program, sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"};
}

// The profile that grants cordon userns where AppArmor restricts it (packaging/apparmor).
Finding check_apparmor_profile(const AppArmorFacts& apparmor) {
    Verdict v = judge_apparmor_profile(apparmor);
    return {"AppArmor profile", std::move(v.status), std::move(v.detail), std::move(v.fix)};
}

// Features cordon may not use yet, reported as `cordon --version` does (cordon/features.hpp).
Finding check_feature(const Feature& f) {
    return {f.name, f.compiled_in && !f.available ? "warn" : "ok", f.summary(), ""};
}

Finding check_seccomp(const std::string& actions) {
    bool ok = actions.find("kill_process") != std::string::npos && actions.find("errno") != std::string::npos;
    return {"seccomp", ok ? "ok" : "fail", actions.empty() ? "no seccomp filter support" : "actions: " + actions,
            ok ? "" : "cordon needs a kernel with CONFIG_SECCOMP_FILTER"};
}

// The jail's second wall (cordon(1), LANDLOCK): never a failure, the jail runs without it.
Finding check_landlock() {
    const int abi = landlock_abi();
    if (const std::string off = landlock_unavailable(abi); !off.empty()) {
        std::string fix;
        if (abi == 1) {
            fix =
                "Linux >= 5.19 (ABI 2) gives the jail Landlock; 6.12 (ABI 6) also scopes abstract unix sockets and "
                "signals";
        } else if (abi == -EOPNOTSUPP) {
            fix = "add landlock to the lsm= kernel parameter (the active modules: /sys/kernel/security/lsm)";
        } else if (abi == -ENOSYS) {
            fix = "a kernel built with CONFIG_SECURITY_LANDLOCK (Linux >= 5.19)";
        } else {
            fix = "allow the landlock_* system calls (a container's seccomp profile refuses them)";
        }
        return {"landlock", "warn", off + "; the jail runs without this second wall", fix};
    }
    std::string detail = "ABI " + std::to_string(abi) + ": the jail's second wall behind its mounts";
    detail += abi >= 6 ? ", with abstract unix sockets and signals scoped to the jail"
                       : "; abstract unix sockets and signals are scoped from ABI 6 (Linux 6.12)";
    return {"landlock", "ok", detail, ""};
}

Finding check_jail() {
    // The real thing: the default jail around /bin/true, with this very binary.
    pid_t pid = ::fork();
    if (pid == 0) {
        int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        if (devnull >= 0) {
            ::dup2(devnull, 1);
            ::dup2(devnull, 2);
        }
        ::chdir("/");
        ::execl("/proc/self/exe", "cordon", "-q", "--no-policy", "--", "/bin/true", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    int status = 0;
    bool ok = pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    const char* which = probe_userns() == 0 ? "the default jail" : "the Landlock jail (see the isolation line)";
    return {
        "default jail", ok ? "ok" : "fail",
        ok ? std::string("cordon -- /bin/true ran in ") + which
           : "cordon -- /bin/true failed (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")",
        ok ? "" : "run cordon -v -- /bin/true to see the failing step"};
}

std::vector<Finding> check_cgroups() {
    std::vector<Finding> out;
    CgroupHost host = discover_cgroups();
    if (!host.mount) {
        out.push_back({"cgroup v2", "warn", "no cgroup2 filesystem mounted",
                       "--memory/--pids/--cpus need cgroup v2 (systemd.unified_cgroup_hierarchy=1)"});
        return out;
    }
    std::string controllers = host.dir.empty() ? "" : sysctl((host.dir + "/cgroup.controllers").c_str());
    std::string detail = "mounted at " + host.mount->mount_point + ", our cgroup " + host.path +
                         ", controllers: " + (controllers.empty() ? "none" : controllers);
    if (!host.v1.empty()) {
        detail += "; on cgroup v1:";
        for (const auto& c : host.v1) detail += " " + c;
    }
    out.push_back({"cgroup v2", "ok", detail, ""});
    bool any = false;
    for (const BackendProbe& probe : probe_cgroup_backends(host)) {
        const auto& r = probe.controllers;
        if (r) {
            std::string missing;
            for (const char* want : {"memory", "pids", "cpu"}) {
                if (std::find(r->begin(), r->end(), want) == r->end()) missing += std::string(" ") + want;
            }
            std::string fix;
            if (!missing.empty()) {
                fix = "the" + missing + " controller(s) are not offered here" +
                      (host.v1.empty()
                           ? std::string(": ask for a delegation that includes them")
                           : std::string(" (bound to cgroup v1): boot with systemd.unified_cgroup_hierarchy=1"));
            }
            out.push_back({"limits via " + probe.name, missing.empty() ? "ok" : "warn", backend_detail(probe), fix});
            any = any || missing.empty();
        } else {
            // Controllers bound to cgroup v1 are the cause that holds for everyone: no delegation
            // (and no root) gives a cgroup v2 cgroup a controller that v1 holds.
            std::string bound;
            for (const char* c : {"memory", "pids", "cpu"}) {
                if (std::find(host.v1.begin(), host.v1.end(), c) != host.v1.end()) bound += std::string(" ") + c;
            }
            std::string fix = r.error().hint;
            if (!bound.empty())
                fix = "the" + bound +
                      " controller(s) are bound to cgroup v1 on this host, so neither root nor a delegated cgroup "
                      "can have them on cgroup v2: boot with systemd.unified_cgroup_hierarchy=1 (the same for root "
                      "and every user), or use --limits best-effort";
            out.push_back({"limits via " + probe.name, "warn", backend_detail(probe), fix});
        }
    }
    if (!any) {
        out.push_back({"resource limits", "warn", "--memory, --pids and --cpus cannot be applied here",
                       "see the fixes above, or use --limits best-effort"});
    }
    return out;
}

}  // namespace

int main_doctor(const std::vector<std::string>& args) {
    bool json = false;
    for (const auto& a : args) {
        if (a == "--json") {
            json = true;
        } else {
            diag::error("doctor: unknown argument '{}' (usage: cordon doctor [--json])", a);
            return 125;
        }
    }
    const AppArmorFacts apparmor = probe_apparmor();
    const std::string actions = seccomp_actions();
    std::vector<Finding> findings = {check_kernel(),
                                     check_userns(apparmor),
                                     check_isolation(),
                                     check_apparmor(apparmor),
                                     check_apparmor_profile(apparmor),
                                     check_seccomp(actions),
                                     check_feature(seccomp_notify_feature(actions)),
                                     check_landlock(),
                                     check_jail()};
    for (auto& f : check_cgroups()) findings.push_back(std::move(f));
    bool failed = false;
    std::string arr = "[";
    for (const auto& f : findings) {
        failed = failed || f.status == "fail";
        if (json) {
            arr += (arr.size() > 1 ? "," : "") + JsonObject()
                                                     .add("check", f.check)
                                                     .add("status", f.status)
                                                     .add("detail", f.detail)
                                                     .add("fix", f.fix)
                                                     .str();
        } else {
            std::printf("%-5s %s: %s\n", f.status.c_str(), f.check.c_str(), f.detail.c_str());
            if (!f.fix.empty()) std::printf("      fix: %s\n", f.fix.c_str());
        }
    }
    if (json) std::printf("%s]\n", arr.c_str());
    return failed ? 1 : 0;
}

}  // namespace cordon

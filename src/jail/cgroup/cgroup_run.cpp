// The run's cgroup (SPEC §7): created before clone with the limits written, read for the
// status at exit, then emptied (cgroup.kill) and removed. Also removes what a cordon killed
// with SIGKILL left behind.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>

#include "cordon/cgroup.hpp"
#include "cordon/paths.hpp"

namespace cordon {

namespace {

constexpr const char* kPrefix = "cordon-";
constexpr const char* kSupervisorSuffix = ".supervisor";
constexpr int kDrainMs = 5000;  // how long to wait for killed processes to leave a cgroup

bool exists(const std::string& path) {
    return ::access(path.c_str(), F_OK) == 0;
}

std::string read_or_empty(const std::string& path) {
    auto r = read_file(path);
    return r ? *r : std::string();
}

Status write_cg(const std::string& path, const std::string& value) {
    if (auto s = write_file(path, value); !s) {
        s.error().what = "cgroup v2: write '" + value + "' to " + path;
        return s;
    }
    return {};
}

// Wait until DIR's cgroup.events says "populated 0" (the kernel signals changes with POLLPRI).
bool wait_empty(const std::string& dir, int timeout_ms) {
    UniqueFd ev(::open((dir + "/cgroup.events").c_str(), O_RDONLY | O_CLOEXEC));
    if (!ev) return false;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        char buf[256];
        ssize_t n = ::pread(ev.get(), buf, sizeof buf - 1, 0);
        if (n < 0) return false;
        if (stat_value(std::string_view(buf, static_cast<size_t>(n)), "populated") == 0u) return true;
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        struct pollfd p {
            ev.get(), POLLPRI, 0
        };
        (void)::poll(&p, 1, static_cast<int>(std::min<long>(left.count(), 100)));
    }
}

// SIGKILL every process in DIR and below; on kernels without cgroup.kill (< 5.14) freeze the
// tree first so nothing forks while we walk it.
void kill_tree(const std::string& dir) {
    if (exists(dir + "/cgroup.kill")) {
        (void)write_file(dir + "/cgroup.kill", "1");
        return;
    }
    bool frozen = write_file(dir + "/cgroup.freeze", "1").ok();
    if (frozen) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kDrainMs);
        while (stat_value(read_or_empty(dir + "/cgroup.events"), "frozen") != 1u &&
               std::chrono::steady_clock::now() < deadline) {
            ::usleep(10000);
        }
    }
    std::vector<std::string> todo{dir};
    while (!todo.empty()) {
        std::string d = todo.back();
        todo.pop_back();
        for (const auto& p : split_words(read_or_empty(d + "/cgroup.procs")))
            ::kill(static_cast<pid_t>(std::stol(p)), SIGKILL);
        if (DIR* dp = ::opendir(d.c_str())) {
            while (struct dirent* e = ::readdir(dp)) {
                if (e->d_type == DT_DIR && e->d_name[0] != '.') todo.push_back(d + "/" + e->d_name);
            }
            ::closedir(dp);
        }
    }
    if (frozen) (void)write_file(dir + "/cgroup.freeze", "0");
}

// rmdir DIR and every cgroup below it, deepest first.
void remove_tree(const std::string& dir) {
    if (DIR* dp = ::opendir(dir.c_str())) {
        std::vector<std::string> subs;
        while (struct dirent* e = ::readdir(dp)) {
            if (e->d_type == DT_DIR && e->d_name[0] != '.') subs.push_back(dir + "/" + e->d_name);
        }
        ::closedir(dp);
        for (const auto& s : subs) remove_tree(s);
    }
    ::rmdir(dir.c_str());
}

std::string self_comm() {
    std::string c = read_or_empty("/proc/self/comm");
    while (!c.empty() && c.back() == '\n') c.pop_back();
    return c;
}

}  // namespace

void remove_stale_cgroups(const std::string& base, const Cgroup2Mount& mount) {
    DIR* dp = ::opendir(base.c_str());
    if (!dp) return;
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(dp)) {
        if (e->d_type == DT_DIR && std::string_view(e->d_name).substr(0, 7) == kPrefix) names.emplace_back(e->d_name);
    }
    ::closedir(dp);
    const std::string comm = self_comm();
    for (const auto& name : names) {
        std::string digits =
            name.substr(7, name.find('.') == std::string::npos ? std::string::npos : name.find('.') - 7);
        if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9)
            continue;
        pid_t pid = static_cast<pid_t>(std::stol(digits));
        std::string suffix = name.substr(7 + digits.size());
        if (!suffix.empty() && suffix != kSupervisorSuffix) continue;
        // Still owned by a live supervisor: a process with that pid that is a cordon (same
        // name) or lives in this subtree (a supervisor stays in the base or below it). A
        // reused pid only delays the cleanup to a later run.
        if (pid == ::getpid()) continue;
        std::string their = read_or_empty("/proc/" + digits + "/comm");
        while (!their.empty() && their.back() == '\n') their.pop_back();
        if (!their.empty() && their == comm) continue;
        auto their_path = parse_cgroup2_path(read_or_empty("/proc/" + digits + "/cgroup"));
        auto their_dir = their_path ? cgroup_dir(mount, *their_path) : std::nullopt;
        if (their_dir && path_at_or_under(*their_dir, base)) continue;
        std::string dir = base + "/" + name;
        if (suffix.empty()) {
            kill_tree(dir);
            wait_empty(dir, kDrainMs);
        }
        remove_tree(dir);
    }
}

Result<std::unique_ptr<RunCgroup>> RunCgroup::create(const CgroupPlan& plan, const CgroupLimits& limits,
                                                     const CgroupHost& host) {
    auto backend = plan.backend == "systemd" ? systemd_backend() : cgroupfs_backend();
    auto base = backend->acquire(host);
    if (!base) return base.error();
    remove_stale_cgroups(base->dir, *host.mount);

    std::unique_ptr<RunCgroup> cg(new RunCgroup());
    cg->base_ = base->dir;
    const std::string name = kPrefix + std::to_string(::getpid());
    // 1. The no-internal-processes rule: a cgroup with controllers enabled for its children
    //    holds no process. When the base holds only us, the supervisor moves to a leaf.
    if (base->vacate) {
        cg->sup_dir_ = base->dir + "/" + name + kSupervisorSuffix;
        if (::mkdir(cg->sup_dir_.c_str(), 0755) != 0 && errno != EEXIST) {
            return sys_error("cgroup v2: create " + cg->sup_dir_);
        }
        CORDON_TRY(write_cg(cg->sup_dir_ + "/cgroup.procs", std::to_string(::getpid())));
    }
    // 2. The controllers for the run's cgroup, enabled in the base's subtree_control.
    auto enabled = split_words(read_or_empty(base->dir + "/cgroup.subtree_control"));
    for (const auto& c : plan.controllers) {
        if (std::find(enabled.begin(), enabled.end(), c) != enabled.end()) continue;
        if (auto s = write_cg(base->dir + "/cgroup.subtree_control", "+" + c); !s) {
            if (s.error().err == EBUSY) {
                s.error().why =
                    "the cgroup holds processes, and cgroup v2 forbids enabling controllers for the "
                    "children of a cgroup with processes";
                s.error().hint =
                    "start cordon as the only process of a delegated cgroup, e.g. "
                    "'systemd-run --user --scope -p Delegate=yes cordon ...'";
            }
            return s.error();
        }
        cg->enabled_.push_back(c);
    }
    // 3. The run's cgroup and its limits. From here on the destructor removes what exists.
    std::string dir = base->dir + "/" + name;
    if (::mkdir(dir.c_str(), 0755) != 0) return sys_error("cgroup v2: create " + dir);
    cg->dir_ = dir;
    // Only the planned controllers: --limits best-effort may have given up the others.
    auto planned = [&](const char* c) {
        return std::find(plan.controllers.begin(), plan.controllers.end(), c) != plan.controllers.end();
    };
    if (limits.memory && planned("memory")) {
        CORDON_TRY(write_cg(dir + "/memory.max", std::to_string(*limits.memory)));
        // Without swap accounting in the kernel there is no file, and nothing to limit.
        uint64_t swap = limits.memory_swap.value_or(0);
        if (exists(dir + "/memory.swap.max")) {
            CORDON_TRY(write_cg(dir + "/memory.swap.max", swap == UINT64_MAX ? "max" : std::to_string(swap)));
        } else if (swap != 0) {
            return make_error("--memory-swap",
                              "cannot apply the limit: this kernel has no swap accounting "
                              "(memory.swap.max is missing)");
        }
    }
    // The jail's init is one more task than the command's tree.
    if (limits.pids && planned("pids")) CORDON_TRY(write_cg(dir + "/pids.max", std::to_string(*limits.pids + 1)));
    if (limits.cpu_quota_us && planned("cpu"))
        CORDON_TRY(write_cg(dir + "/cpu.max", cpu_max_value(*limits.cpu_quota_us)));
    // 4. The jail's own leaf below the limits: the root of its cgroup namespace.
    std::string jail = dir + "/jail";
    if (::mkdir(jail.c_str(), 0755) != 0) return sys_error("cgroup v2: create " + jail);
    cg->jail_fd_.reset(::open(jail.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!cg->jail_fd_) return sys_error("cgroup v2: open " + jail);
    return cg;
}

Status RunCgroup::join(pid_t pid) const {
    return write_cg(dir_ + "/jail/cgroup.procs", std::to_string(pid));
}

void RunCgroup::kill_all() const {
    if (!dir_.empty()) kill_tree(dir_);
}

CgroupStats RunCgroup::stats() const {
    CgroupStats st;
    st.oom_kills = stat_value(read_or_empty(dir_ + "/memory.events"), "oom_kill").value_or(0);
    std::string cpu = read_or_empty(dir_ + "/cpu.stat");
    if (auto u = stat_value(cpu, "usage_usec")) {
        st.cpu_usec = *u;
        st.have_cpu = true;
    }
    st.nr_throttled = stat_value(cpu, "nr_throttled").value_or(0);
    std::string peak = read_or_empty(dir_ + "/memory.peak");
    if (!peak.empty() && std::isdigit(static_cast<unsigned char>(peak[0]))) st.peak_memory = std::stoull(peak);
    return st;
}

void RunCgroup::remove() {
    if (dir_.empty()) return;
    kill_tree(dir_);
    wait_empty(dir_, kDrainMs);
    remove_tree(dir_);
    dir_.clear();
}

RunCgroup::~RunCgroup() {
    jail_fd_.reset();
    remove();
    // The supervisor moved out of B: B held nobody else, so undo what we did to it and return.
    if (!sup_dir_.empty()) {
        for (const auto& c : enabled_) (void)write_file(base_ + "/cgroup.subtree_control", "-" + c);
        if (write_file(base_ + "/cgroup.procs", std::to_string(::getpid()))) ::rmdir(sup_dir_.c_str());
    }
}

}  // namespace cordon

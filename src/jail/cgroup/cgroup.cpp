// cgroup v2 discovery and planning (SPEC §7): what the host offers, which backend serves the
// run and which controllers it gets. Read-only: nothing here writes below /sys/fs/cgroup.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "cordon/cgroup.hpp"
#include "cordon/paths.hpp"

namespace cordon {

namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
    std::vector<std::string_view> out;
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        out.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}

bool writable(const std::string& path) {
    return ::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) == 0;
}

// We may create children in DIR, enable controllers for them and move processes through it.
bool manageable(const std::string& dir) {
    return writable(dir) && writable(dir + "/cgroup.procs") && writable(dir + "/cgroup.subtree_control");
}

std::vector<pid_t> procs_of(const std::string& dir) {
    std::vector<pid_t> out;
    auto text = read_file(dir + "/cgroup.procs");
    if (!text) return out;
    for (const auto& w : split_words(*text)) out.push_back(static_cast<pid_t>(std::stol(w)));
    return out;
}

const char* option_for(const std::string& controller) {
    if (controller == "memory") return "--memory";
    if (controller == "pids") return "--pids";
    return "--cpus";
}

const char* kBestEffortHint = "or pass --limits best-effort to run without the limit";

// The cgroupfs backend: our own cgroup (root, or a delegated subtree) or its delegated parent.
class CgroupfsBackend final : public CgroupBackend {
public:
    [[nodiscard]] const char* name() const override { return "cgroupfs"; }

    Result<std::vector<std::string>> check(const CgroupHost& host) override {
        auto base = locate(host);
        if (!base) return base.error();
        auto text = read_file(base->dir + "/cgroup.controllers");
        if (!text) return text.error();
        return split_words(*text);
    }

    Result<CgroupBase> acquire(const CgroupHost& host) override { return locate(host); }

private:
    static Result<CgroupBase> locate(const CgroupHost& host) {
        if (host.dir.empty()) {
            return make_error("cgroup v2", "this process's cgroup (" + host.path +
                                               ") is not visible under the cgroup2 mount at " +
                                               (host.mount ? host.mount->mount_point : std::string("?")));
        }
        BaseFacts f;
        // The real root has no cgroup.type; a cgroup namespace's root does, and is not exempt
        // from the no-internal-processes rule.
        f.own_is_root = host.path == "/" && ::access((host.dir + "/cgroup.type").c_str(), F_OK) != 0;
        f.own_writable = manageable(host.dir);
        const std::string parent(path_parent(host.dir));
        f.parent_writable = host.path != "/" && manageable(parent);
        f.own_procs = procs_of(host.dir);
        f.self = ::getpid();
        uid_t uid = ::geteuid();
        switch (choose_base(f)) {
            case BaseChoice::Own:
                return CgroupBase{host.dir, false};
            case BaseChoice::OwnVacated:
                return CgroupBase{host.dir, true};
            case BaseChoice::Parent:
                return CgroupBase{parent, false};
            case BaseChoice::Busy: {
                Error e = make_error("cgroup v2",
                                     "the delegated cgroup " + host.dir +
                                         " also holds other processes, and cgroup v2 allows no processes in "
                                         "a cgroup whose children have controllers (its parent is not delegated)");
                e.hint =
                    "start cordon as the only process of a delegated cgroup, e.g. "
                    "'systemd-run --user --scope -p Delegate=yes cordon ...', " +
                    std::string(kBestEffortHint);
                return e;
            }
            case BaseChoice::NotDelegated:
                break;
        }
        Error e = make_error("cgroup v2", "cordon's cgroup " + host.dir + " is not delegated to uid " +
                                              std::to_string(uid) + " (it cannot create cgroups there)");
        e.hint =
            "run as root, or in a delegated cgroup (systemd: 'systemd-run --user --scope -p Delegate=yes cordon ...', "
            "or a service with Delegate=yes), " +
            std::string(kBestEffortHint);
        return e;
    }
};

}  // namespace

std::vector<std::string> needed_controllers(const CgroupLimits& limits) {
    std::vector<std::string> out;
    if (limits.memory) out.emplace_back("memory");
    if (limits.pids) out.emplace_back("pids");
    if (limits.cpu_quota_us) out.emplace_back("cpu");
    return out;
}

std::optional<Cgroup2Mount> parse_cgroup2_mount(std::string_view mountinfo) {
    for (auto line : lines_of(mountinfo)) {
        size_t dash = line.find(" - ");
        if (dash == std::string_view::npos) continue;
        auto after = split_words(line.substr(dash + 3));
        if (after.empty() || after[0] != "cgroup2") continue;
        auto before = split_words(line.substr(0, dash));
        if (before.size() < 5) continue;
        return Cgroup2Mount{unescape_mountinfo(before[4]), unescape_mountinfo(before[3])};
    }
    return std::nullopt;
}

std::optional<std::string> parse_cgroup2_path(std::string_view proc_self_cgroup) {
    for (auto line : lines_of(proc_self_cgroup)) {
        if (line.substr(0, 3) == "0::") return std::string(line.substr(3));
    }
    return std::nullopt;
}

std::optional<std::string> cgroup_dir(const Cgroup2Mount& mount, const std::string& path) {
    if (path.empty() || path[0] != '/' || path.find("/..") != std::string::npos) return std::nullopt;
    std::string rel;
    if (mount.root == "/")
        rel = path;
    else if (path == mount.root)
        rel = "/";
    else if (path_under(path, mount.root))
        rel = path.substr(mount.root.size());
    else
        return std::nullopt;
    if (rel == "/") return mount.mount_point;
    return mount.mount_point + rel;
}

std::vector<std::string> split_words(std::string_view text) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
        size_t j = i;
        while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
        if (j > i) out.emplace_back(text.substr(i, j - i));
        i = j;
    }
    return out;
}

std::optional<uint64_t> stat_value(std::string_view text, std::string_view key) {
    for (auto line : lines_of(text)) {
        auto w = split_words(line);
        if (w.size() == 2 && w[0] == key && !w[1].empty() &&
            w[1].find_first_not_of("0123456789") == std::string::npos) {
            return std::stoull(w[1]);
        }
    }
    return std::nullopt;
}

std::vector<std::string> v1_controllers(std::string_view proc_cgroups) {
    std::vector<std::string> out;
    for (auto line : lines_of(proc_cgroups)) {
        if (line.empty() || line[0] == '#') continue;
        auto w = split_words(line);
        if (w.size() >= 4 && w[1] != "0" && w[3] == "1") out.push_back(w[0]);
    }
    return out;
}

std::string cpu_max_value(uint64_t quota_us) {
    return std::to_string(quota_us) + " " + std::to_string(CgroupLimits::kCpuPeriodUs);
}

CgroupHost discover_cgroups() {
    CgroupHost h;
    if (auto mi = read_file("/proc/self/mountinfo")) h.mount = parse_cgroup2_mount(*mi);
    if (auto cg = read_file("/proc/self/cgroup")) h.path = parse_cgroup2_path(*cg).value_or("");
    if (h.mount && !h.path.empty()) h.dir = cgroup_dir(*h.mount, h.path).value_or("");
    if (auto pc = read_file("/proc/cgroups")) h.v1 = v1_controllers(*pc);
    if (h.mount) {
        if (auto root = read_file(h.mount->mount_point + "/cgroup.controllers")) {
            h.v2_root.emplace();
            for (const auto& w : split_words(*root)) h.v2_root->emplace_back(w);
        }
    }
    return h;
}

BaseChoice choose_base(const BaseFacts& f) {
    if (f.own_is_root && f.own_writable) return BaseChoice::Own;
    bool alone = std::all_of(f.own_procs.begin(), f.own_procs.end(), [&](pid_t p) { return p == f.self; });
    if (f.own_writable && alone) return BaseChoice::OwnVacated;
    if (f.parent_writable) return BaseChoice::Parent;
    if (f.own_writable) return BaseChoice::Busy;
    return BaseChoice::NotDelegated;
}

std::unique_ptr<CgroupBackend> cgroupfs_backend() {
    return std::make_unique<CgroupfsBackend>();
}

namespace {

// NEED less the controllers a cgroup v1 hierarchy holds, which are out of every cgroup2
// backend's reach, for root and for anyone: an error naming the first (under best-effort a
// warning for each), said before what this caller could or could not delegate.
Result<std::vector<std::string>> reachable_controllers(const std::vector<std::string>& need, const CgroupLimits& limits,
                                                       const CgroupHost& host, std::vector<std::string>& warnings) {
    if (!host.v2_root || !host.mount) return need;
    std::string have;
    for (const auto& a : *host.v2_root) have += (have.empty() ? "" : " ") + a;
    std::vector<std::string> reachable;
    for (const auto& c : need) {
        if (contains(*host.v2_root, c) || !contains(host.v1, c)) {
            reachable.push_back(c);
            continue;
        }
        const std::string why = "the " + c +
                                " controller is bound to a cgroup v1 hierarchy on this host, so no cgroup v2 "
                                "cgroup can have it (the cgroup2 hierarchy at " +
                                host.mount->mount_point + " offers: " + (have.empty() ? "none" : have) + ")";
        if (limits.best_effort) {
            warnings.push_back(std::string(option_for(c)) + std::string(kNotApplied) + why);
            continue;
        }
        Error e = make_error(option_for(c), "cannot apply the limit: " + why);
        e.hint =
            "this is the host's cgroup setup, the same for root and every user: boot with "
            "systemd.unified_cgroup_hierarchy=1 (or cgroup_no_v1=all) for cgroup v2 limits, " +
            std::string(kBestEffortHint);
        return e;
    }
    return reachable;
}

}  // namespace

Result<std::optional<CgroupPlan>> plan_cgroup(const CgroupLimits& limits, const CgroupHost& host,
                                              std::vector<std::string>& warnings) {
    auto need = needed_controllers(limits);
    if (need.empty()) return std::optional<CgroupPlan>{};
    // One error for the whole request: the first limit named, why, and what to do.
    auto refuse = [&](Error e) -> Result<std::optional<CgroupPlan>> {
        if (!limits.best_effort) {
            e.why = "cannot apply the limit: " + e.what + ": " + e.why;
            e.what = option_for(need.front());
            return e;
        }
        for (const auto& c : need) {
            warnings.push_back(std::string(option_for(c)) + std::string(kNotApplied) + e.what + ": " + e.why);
        }
        return std::optional<CgroupPlan>{};
    };
    if (!host.mount) {
        Error e = make_error("cgroup v2", "no cgroup2 file system is mounted");
        e.hint = "mount cgroup2 on /sys/fs/cgroup (a cgroup v2 system), " + std::string(kBestEffortHint);
        return refuse(e);
    }
    CORDON_ASSIGN_OR_RETURN(need, reachable_controllers(need, limits, host, warnings));
    if (need.empty()) return std::optional<CgroupPlan>{};

    CgroupPlan plan;
    std::vector<std::string> available;
    auto fs = cgroupfs_backend();
    auto fs_ok = fs->check(host);
    if (fs_ok) {
        plan.backend = fs->name();
        available = *fs_ok;
    } else {
        // Not ours to manage: ask a systemd user manager for a delegated scope instead.
        auto sd_ok = systemd_backend()->check(host);
        if (!sd_ok) {
            Error e = fs_ok.error();
            e.why += "; no systemd user manager offers a transient scope instead (" + sd_ok.error().why + ")";
            return refuse(e);
        }
        plan.backend = "systemd";
        available = *sd_ok;
    }

    std::vector<std::string> missing;
    for (const auto& c : need) {
        if (contains(available, c))
            plan.controllers.push_back(c);
        else
            missing.push_back(c);
    }
    if (!missing.empty()) {
        const std::string& c = missing.front();
        std::string have;
        for (const auto& a : available) have += (have.empty() ? "" : " ") + a;
        std::string why =
            "the " + c + " controller is not available in cgroup v2 here (" +
            (plan.backend == std::string("cgroupfs") ? "the cgroup2 hierarchy at " + host.mount->mount_point
                                                     : std::string("the systemd user manager")) +
            " offers: " + (have.empty() ? "none" : have) + ")";
        Error e = make_error(option_for(c), "cannot apply the limit: " + why);
        if (contains(host.v1, c)) {
            e.hint = "this host binds the " + c +
                     " controller to a cgroup v1 hierarchy, where cgroup v2 cannot use it; boot with "
                     "systemd.unified_cgroup_hierarchy=1 (or cgroup_no_v1=all) for cgroup v2 limits, " +
                     kBestEffortHint;
        } else {
            e.hint = "the " + c +
                     " controller must be enabled for cordon's cgroup (as root, or ask for it to be "
                     "delegated: systemd's Delegate=" +
                     c + "), " + kBestEffortHint;
        }
        if (!limits.best_effort) return e;
        for (const auto& m : missing) {
            warnings.push_back(
                std::string(option_for(m)) + std::string(kNotApplied) + "the " + m +
                " controller is not available in cgroup v2 here (offered: " + (have.empty() ? "none" : have) + ")");
        }
        if (plan.controllers.empty()) return std::optional<CgroupPlan>{};
    }
    return std::optional<CgroupPlan>{plan};
}

}  // namespace cordon

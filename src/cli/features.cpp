#include "cordon/features.hpp"

#include <linux/landlock.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>

#include "cordon/exec_notify.hpp"
#include "cordon/fd.hpp"
#include "cordon/landlock.hpp"
#include "cordon/paths.hpp"
#include "cordon/settings.hpp"
#include "cordon/version.hpp"

namespace cordon {

namespace {

constexpr const char* kInstalledProfile = "/etc/apparmor.d/usr.bin.cordon";

std::string trimmed(const char* path) {
    auto text = read_file(path);
    if (!text) return {};
    std::string s = std::move(*text);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\0')) s.pop_back();
    return s;
}

bool exists(const std::string& path) {
    return ::access(path.c_str(), F_OK) == 0;
}

std::string own_executable() {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// Whether any line of /sys/kernel/security/apparmor/profiles ("NAME (MODE)") names PROFILE.
AppArmorFacts::Loaded profile_loaded(const std::string& profile) {
    auto text = read_file("/sys/kernel/security/apparmor/profiles");
    if (!text) return AppArmorFacts::Loaded::Unknown;
    const std::string line_start = profile + " (";
    for (size_t pos = 0; pos < text->size();) {
        if (text->compare(pos, line_start.size(), line_start) == 0) return AppArmorFacts::Loaded::Yes;
        const size_t next = text->find('\n', pos);
        if (next == std::string::npos) break;
        pos = next + 1;
    }
    return AppArmorFacts::Loaded::No;
}

// The controllers --memory, --pids and --cpus need.
constexpr std::array<const char*, 3> kLimitControllers = {"memory", "pids", "cpu"};

bool offers_all_limits(const BackendProbe& probe) {
    const auto& c = probe.controllers;
    return c && std::all_of(kLimitControllers.begin(), kLimitControllers.end(),
                            [&](const char* want) { return std::find(c->begin(), c->end(), want) != c->end(); });
}

std::string and_where(const AppArmorFacts& f) {
    if (!f.installed.empty()) return "; installed at " + f.installed;
    if (!f.shipped.empty()) return "; shipped at " + f.shipped + ", not installed";
    return "";
}

}  // namespace

std::string Feature::summary() const {
    return std::string(compiled_in ? "compiled in" : "not compiled in") + "; this host: " + detail;
}

std::string seccomp_actions() {
    return trimmed("/proc/sys/kernel/seccomp/actions_avail");
}

std::vector<BackendProbe> probe_cgroup_backends(const CgroupHost& host) {
    std::vector<BackendProbe> out;
    std::unique_ptr<CgroupBackend> backends[] = {cgroupfs_backend(), systemd_backend()};
    for (auto& backend : backends) out.push_back(BackendProbe{backend->name(), backend->check(host)});
    return out;
}

std::string backend_detail(const BackendProbe& probe) {
    if (!probe.controllers) return probe.controllers.error().why;
    std::string got;
    for (const auto& c : *probe.controllers) got += " " + c;
    return "controllers:" + (got.empty() ? std::string(" none") : got);
}

Feature seccomp_notify_feature(const std::string& actions) {
    Feature f;
    f.name = "seccomp user notification";
    // What exec-time policy checks use (--exec-checks; cordon(1), EXEC-TIME CHECKS).
    f.compiled_in = true;
    const bool action = (" " + actions + " ").find(" user_notif ") != std::string::npos;
    const ListenerProbe probe =
        action ? probe_exec_listener() : ListenerProbe{false, "the kernel offers no user_notif action"};
    f.available = probe.available;
    f.detail = f.available ? "yes: exec checks: on" : "no: exec checks: off (" + probe.why + ")";
    return f;
}

Feature landlock_feature() {
    Feature f;
    f.name = "Landlock";
    f.compiled_in = true;  // the second wall of every jail (cordon(1), LANDLOCK)
    const int abi = landlock_abi();
    const std::string off = landlock_unavailable(abi);
    f.available = off.empty();
    f.detail = f.available ? "ABI " + std::to_string(abi) : "no (" + off + ")";
    return f;
}

std::vector<Feature> probe_features() {
    std::vector<Feature> out = {seccomp_notify_feature(seccomp_actions())};
    const CgroupHost host = discover_cgroups();
    if (host.mount) {
        for (const auto& probe : probe_cgroup_backends(host)) {
            out.push_back(Feature{"limits via " + probe.name, true, offers_all_limits(probe), backend_detail(probe)});
        }
    } else {
        for (const char* name : {"cgroupfs", "systemd"}) {
            out.push_back(Feature{std::string("limits via ") + name, true, false, "no cgroup2 filesystem mounted"});
        }
    }
    out.push_back(landlock_feature());
    return out;
}

std::string version_report() {
    std::string out = std::string(version_string()) + "\n";
    for (const Feature& f : probe_features()) out += f.name + ": " + f.summary() + "\n";
    return out;
}

AppArmorFacts probe_apparmor() {
    AppArmorFacts f;
    f.enabled = trimmed("/sys/module/apparmor/parameters/enabled") == "Y";
    f.restricted = trimmed("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1";
    if (exists(kInstalledProfile)) f.installed = kInstalledProfile;
    if (std::string shipped = data_dir() + "/apparmor/usr.bin.cordon"; exists(shipped)) f.shipped = shipped;
    if (f.enabled) f.loaded = profile_loaded("cordon");
    f.label = trimmed("/proc/self/attr/apparmor/current");
    if (f.label.empty()) f.label = trimmed("/proc/self/attr/current");
    f.exe = own_executable();
    return f;
}

bool confined_by_cordon_profile(const AppArmorFacts& facts) {
    return facts.enabled && facts.label.starts_with("cordon (");
}

Verdict judge_apparmor_profile(const AppArmorFacts& f) {
    // Without the restriction the profile changes nothing: its absence is no problem.
    const std::string needed = f.restricted ? "warn" : "ok";
    if (!f.enabled) return {"ok", "AppArmor is not active here" + and_where(f), ""};
    if (confined_by_cordon_profile(f)) {
        return {"ok", "loaded; this executable runs under it (" + f.label + ")" + and_where(f), ""};
    }
    if (!f.installed.empty()) {
        switch (f.loaded) {
            case AppArmorFacts::Loaded::Yes:
                return {needed, "loaded from " + f.installed + ", but it confines /usr/bin/cordon, not " + f.exe,
                        f.restricted ? "run /usr/bin/cordon" : ""};
            case AppArmorFacts::Loaded::No:
                return {needed, "installed at " + f.installed + ", not loaded", "apparmor_parser -r " + f.installed};
            case AppArmorFacts::Loaded::Unknown:
                return {"ok",
                        "installed at " + f.installed +
                            "; whether it is loaded cannot be read here (/sys/kernel/security/apparmor/profiles)",
                        ""};
        }
    }
    const std::string source = f.shipped.empty() ? std::string("packaging/apparmor/usr.bin.cordon") : f.shipped;
    return {needed, f.shipped.empty() ? "not installed" : "shipped at " + f.shipped + ", not installed",
            f.restricted ? "with AppArmor 4 (/etc/apparmor.d/abi/4.0): install -m 644 " + source + " " +
                               kInstalledProfile + " && apparmor_parser -r " + kInstalledProfile
                         : ""};
}

}  // namespace cordon

#include "cordon/report.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "cordon/fallback.hpp"
#include "cordon/fd.hpp"
#include "cordon/json.hpp"
#include "cordon/net.hpp"
#include "cordon/paths.hpp"

namespace cordon {

namespace {

const char* reason_name(Outcome::Reason r) {
    switch (r) {
        case Outcome::Reason::Exited:
            return "exited";
        case Outcome::Reason::Signaled:
            return "signaled";
        case Outcome::Reason::Timeout:
            return "timeout";
        case Outcome::Reason::Oom:
            return "oom";
        case Outcome::Reason::SetupError:
            return "setup-error";
        case Outcome::Reason::ExecError:
            return "exec-error";
        case Outcome::Reason::Denied:
            return "denied";
        case Outcome::Reason::UsageError:
            return "usage-error";
    }
    return "?";
}

// Which jail the run gets and why: --isolation auto asks the kernel here (a child tries to make
// a user namespace), and where that is refused, the Landlock jail's plan follows.
std::string isolation_lines(const Spec& spec, const Prepared& prepared) {
    std::string o = "isolation:  ";
    std::optional<FallbackPlan> fallback = prepared.fallback;
    if (spec.isolation == Isolation::Landlock) {
        o += "landlock (--isolation landlock)\n";
    } else if (const int err = probe_userns(); err == 0) {
        return o + "namespaces (" + (spec.isolation == Isolation::Auto ? "auto: " : "") +
               "user namespaces are allowed here)\n";
    } else if (spec.isolation == Isolation::Namespaces || !userns_refused(err)) {
        return o + "namespaces, which cannot start here: user namespaces are refused (" + std::strerror(err) +
               "): the run fails (see cordon doctor)\n";
    } else {
        o += std::string("landlock (auto: user namespaces are refused here: ") + std::strerror(err) + ")\n";
        auto plan = plan_fallback(spec, prepared.mounts, landlock_abi(), real_host_fs());
        if (!plan) return o + "            which cannot be built: " + plan.error().message().substr(8) + "\n";
        fallback = std::move(*plan);
    }
    o += "            no namespaces: the host's files as the mount plan below would show them, through Landlock\n";
    for (const auto& line : describe(*fallback)) o += "            " + line + "\n";
    return o;
}

// --allow-host: the filter and its entries, each with its ports ("" without a filter).
std::string describe_allowed_hosts(const Spec& spec) {
    if (spec.allow_hosts.empty()) return "";
    std::string o =
        "\nnetwork:    filtered: only through the proxy (127.0.0.1:" + std::to_string(proxy_port(spec.allow_hosts)) +
        ") and the resolver (127.0.0.1:53) to";
    for (const auto& h : spec.allow_hosts) {
        o += "\n            " + h.text + " (port";
        for (size_t k = 0; k < h.ports.size(); ++k) o += (k ? ", " : " ") + std::to_string(h.ports[k]);
        o += ")";
    }
    return o;
}

// --ssh-agent: the hosts it signs for, with how many known keys each, and the caller's agent.
std::string describe_ssh_agent(const Spec& spec) {
    if (spec.ssh_agent_hosts.empty()) return "";
    std::string o = "\nssh-agent:  " + std::string(kJailAgentSocket) + ", relayed to " + spec.ssh_agent_upstream +
                    ": signs only for sessions bound to the keys of";
    for (const auto& h : spec.ssh_agent_hosts)
        o += "\n            " + h.text() + " (" + std::to_string(h.keys.size()) + " known key(s))";
    if (!spec.ssh_agent_keys.empty())
        o += "\n            with " + std::to_string(spec.ssh_agent_keys.size()) + " key(s) of --ssh-agent-key only";
    return o;
}

// The id maps and the workdir, with whose files the jail owns there.
std::string ids_and_workdir_lines(const Spec& spec, const RunOptions& options) {
    std::string o;
    // A root caller's jail is remapped where the file systems allow it (cordon(1), ROOT CALLERS).
    const bool remap = spec.host_uid == 0;
    o += "uid map:    " + format_id_map(uid_maps(spec, remap));
    o += "gid map:    " + format_id_map(gid_maps(spec, remap));
    if (remap) o += "            (a root caller's jail runs as host uid and gid " + std::to_string(kRootJailId) + ")\n";
    std::string how = spec.workdir_readonly ? "read-only" : "read-write";
    if (remap && spec.workdir && !spec.workdir_readonly && spec.workdir_owner_uid != 0) {
        how += "; owned by uid " + std::to_string(spec.workdir_owner_uid) +
               ", whose files there are the jail's, and what it writes there that uid's; root's are read-only";
    }
    o += "workdir:    " + (spec.workdir ? *spec.workdir + " (" + how + ")" : std::string("none (nothing writable)")) +
         "\n";
    if (!options.workdir_note.empty()) o += "            note: " + options.workdir_note + "\n";
    return o;
}

}  // namespace

std::string format_dry_run(const Spec& spec, const RunOptions& options, const Prepared& prepared) {
    std::string o;
    o += "command:    ";
    for (const auto& a : spec.argv) o += json_quote(a) + " ";
    o += "\nprofiles:   ";
    for (const auto& p : options.profiles) o += p + " ";
    if (spec.no_profile) o += "(none: --no-profile)";
    o += "\n" + isolation_lines(spec, prepared);
    o += "namespaces: user mount pid ipc uts cgroup";
    o += spec.share_net ? " (network: host)" : " net (loopback only)";
    o += describe_allowed_hosts(spec);
    o += describe_ssh_agent(spec);
    o += "\n" + ids_and_workdir_lines(spec, options);
    o += "chdir:      " + spec.chdir + "\n";
    o += "hostname:   " + spec.hostname.value_or("(unchanged)") + "\n";
    o += "mounts (in order):\n";
    o += "   0. tmpfs / (read-only once set up)\n";
    int i = 1;
    for (const auto& op : prepared.mounts.ops) {
        o += (i < 10 ? "   " : "  ") + std::to_string(i) + ". " + describe(op) + "\n";
        ++i;
    }
    if (!prepared.mounts.placeholders.empty()) {
        o += "placeholders (made on the host while a run needs them, removed by the last one):\n";
        for (const auto& ph : prepared.mounts.placeholders) {
            if (ph.type == Placeholder::Type::Dir) {
                o += "   " + ph.path + "/ (empty directory)\n";
            } else if (ph.content.empty()) {
                o += "   " + ph.path + " (empty file)\n";
            } else {
                o += "   " + ph.path + " (file holding " + json_quote(ph.content) + ")\n";
            }
        }
    }
    for (const auto& n : prepared.mounts.notes) o += "note:       " + n + "\n";
    o += "seccomp:    " + prepared.seccomp.name + " (" + std::to_string(seccomp_rules(prepared).size()) + " rules, " +
         std::to_string(prepared.bpf.size()) + " BPF instructions; other ABIs killed)\n";
    const std::vector<std::string> landlock = describe(prepared.landlock);
    for (size_t k = 0; k < landlock.size(); ++k) o += (k == 0 ? "landlock:   " : "            ") + landlock[k] + "\n";
    o += "caps:       none" + std::string(spec.cap_keep.empty() ? "" : " except");
    for (const auto& c : spec.cap_keep_names) o += " " + c;
    o += "; bounding set cleared; no_new_privs\n";
    o += "limits:     timeout " + (spec.timeout_ms ? std::to_string(*spec.timeout_ms) + "ms" : std::string("none"));
    for (const auto& r : spec.rlimits) {
        o += ", " + r.name + "=" + (r.soft == static_cast<uint64_t>(-1) ? "unlimited" : std::to_string(r.soft));
    }
    if (spec.limits.memory) {
        o += ", memory " + std::to_string(*spec.limits.memory) + " bytes (swap " +
             (spec.limits.memory_swap == UINT64_MAX ? std::string("max")
                                                    : std::to_string(spec.limits.memory_swap.value_or(0))) +
             ")";
    }
    if (spec.limits.pids) o += ", pids " + std::to_string(*spec.limits.pids);
    if (spec.limits.cpu_quota_us) o += ", cpu.max " + cpu_max_value(*spec.limits.cpu_quota_us);
    if (prepared.cgroup) {
        o += "\ncgroup:     " + prepared.cgroup->backend + " backend, controllers";
        for (const auto& c : prepared.cgroup->controllers) o += " " + c;
        o += " (leaf created per run)";
    }
    for (const auto& w : prepared.warnings) o += "\nwarning:    " + w;
    o += "\nenvironment:\n";
    for (const auto& e : spec.env) o += "   " + e + "\n";
    if (!spec.env_removed.empty()) {
        o += "removed from the environment:";
        for (const auto& n : spec.env_removed) o += " " + n;
        o += "\n";
    }
    if (!options.env_value_removals.empty()) {
        o += "removed for their values:";
        for (const auto& r : options.env_value_removals) o += " " + r;
        o += "\n";
    }
    return o;
}

namespace {

// OBJECTS, each already JSON, as one array.
std::string json_array(const std::vector<std::string>& objects) {
    std::string a = "[";
    for (size_t i = 0; i < objects.size(); ++i) a += (i ? "," : "") + objects[i];
    return a + "]";
}

}  // namespace

namespace {

// {"verified": true, "checked": ["seccomp", ...], "failed": [], "seccomp_filters": 2}
std::string layers_json(const LayerCheck& l) {
    std::vector<std::string> checked, failed;
    for (uint32_t bit = 1; bit <= LayerCheck::kLast; bit <<= 1) {
        if (l.checked & bit) checked.push_back(json_quote(LayerCheck::name(bit)));
        if (l.failed & bit) failed.push_back(json_quote(LayerCheck::name(bit)));
    }
    JsonObject o;
    o.add("verified", l.failed == 0).add_raw("checked", json_array(checked)).add_raw("failed", json_array(failed));
    if (l.seccomp_filters) o.add("seccomp_filters", static_cast<int64_t>(l.seccomp_filters));
    return o.str();
}

}  // namespace

std::string status_json(const Outcome& outcome) {
    JsonObject j;
    j.add("exit_code", static_cast<int64_t>(outcome.exit_code));
    j.add("reason", reason_name(outcome.reason));
    if (outcome.signal)
        j.add("signal", static_cast<int64_t>(outcome.signal));
    else
        j.add_null("signal");
    j.add("wall_ms", static_cast<int64_t>(outcome.wall_ms));
    j.add("cpu_ms", static_cast<int64_t>(outcome.cpu_ms));
    j.add("peak_memory_bytes", static_cast<int64_t>(outcome.peak_memory_bytes));
    if (outcome.oom_kills) j.add("oom_kills", static_cast<int64_t>(outcome.oom_kills));
    j.add_raw("denials", json_array(outcome.denials));
    j.add("denials_dropped", static_cast<int64_t>(outcome.denials_dropped));
    if (!outcome.isolation.empty()) j.add("isolation", outcome.isolation);
    if (outcome.isolation == "landlock") {
        std::string dropped = "[";
        for (size_t i = 0; i < outcome.dropped.size(); ++i) {
            dropped += (i ? "," : "") + json_quote(outcome.dropped[i]);
        }
        j.add_raw("dropped", dropped + "]");
    }
    if (!outcome.quarantined.empty()) {
        j.add_raw("quarantined", json_array(outcome.quarantined));
        if (outcome.quarantined_dropped)
            j.add("quarantined_dropped", static_cast<int64_t>(outcome.quarantined_dropped));
    }
    if (!outcome.limits_not_applied.empty()) {
        std::vector<std::string> quoted;
        for (const auto& l : outcome.limits_not_applied) quoted.push_back(json_quote(l));
        j.add_raw("limits_not_applied", json_array(quoted));
    }
    if (!outcome.repo_watch.empty()) j.add("repo_watch", outcome.repo_watch);
    if (outcome.layers) j.add_raw("layers", layers_json(*outcome.layers));
    if (outcome.error) j.add("error", outcome.error->message());
    return j.str() + "\n";
}

Status write_status_json(const OutputTarget& target, const Outcome& outcome) {
    if (target.is_fd()) {
        const std::string text = status_json(outcome);
        if (!write_all(target.fd, text.data(), text.size())) return sys_error("--status-json: write to " + target.text);
        return {};
    }
    CORDON_ASSIGN_OR_RETURN(UniqueFd fd, open_status_file(target.text));
    return write_status_file(fd.get(), target.text, outcome);
}

Result<UniqueFd> open_status_file(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644));
    if (!fd) return sys_error("--status-json: open " + path);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return sys_error("--status-json: stat " + path);
    if (!S_ISREG(st.st_mode)) return make_error("--status-json", path + " is not a regular file");
    return fd;
}

Status write_status_file(int fd, const std::string& path, const Outcome& outcome) {
    const std::string text = status_json(outcome);
    if (::ftruncate(fd, 0) != 0 || ::lseek(fd, 0, SEEK_SET) != 0 || !write_all(fd, text.data(), text.size()))
        return sys_error("--status-json: write " + path);
    return {};
}

namespace {

// The command's subcommand: the first word of ARGV after the program that is not an option
// (for git, after its own options: -C DIR and -c NAME=VALUE take one); "" where there is none.
std::string subcommand_of(const std::vector<std::string>& argv) {
    const bool git = !argv.empty() && path_basename(argv[0]) == "git";
    for (size_t i = 1; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (git && (a == "-C" || a == "-c")) {
            ++i;
        } else if (a.empty() || a[0] != '-') {
            return a;
        }
    }
    return "";
}

}  // namespace

// A network command that failed where the jail has no network: the tools report only a name
// that did not resolve (EAI_AGAIN, "Could not resolve host"). Said once, after the run.
std::string no_network_note(const Spec& spec, int status) {
    if (status == 0 || spec.argv.empty() || spec.share_net || !spec.allow_hosts.empty()) return "";
    struct Tool {
        std::string_view name;
        std::vector<std::string_view> subcommands;  // empty: any
        std::string_view profile;                   // that reaches its registry, or empty
    };
    static const std::vector<Tool> tools = {
        {"npm",
         {"install", "i", "ci", "add", "update", "upgrade", "view", "info", "outdated", "audit", "publish"},
         "npm"},
        {"npx", {}, "npm"},
        {"pnpm", {"install", "i", "add", "update", "up"}, "npm"},
        {"yarn", {"install", "add", "upgrade"}, "npm"},
        {"pip", {"install", "download"}, "pip"},
        {"pip3", {"install", "download"}, "pip"},
        {"cargo", {"fetch", "install", "update", "search", "publish"}, "cargo"},
        {"go", {"get", "install"}, "go"},
        {"git", {"fetch", "pull", "push", "clone", "ls-remote"}, ""},
        {"curl", {}, ""},
        {"wget", {}, ""},
    };
    const std::string name(path_basename(spec.argv[0]));
    const auto tool = std::find_if(tools.begin(), tools.end(), [&](const Tool& t) { return t.name == name; });
    if (tool == tools.end()) return "";
    const std::string sub = subcommand_of(spec.argv);
    if (!tool->subcommands.empty() &&
        std::find(tool->subcommands.begin(), tool->subcommands.end(), sub) == tool->subcommands.end())
        return "";
    std::string what = name + (tool->subcommands.empty() ? "" : " " + sub);
    std::string give =
        tool->profile.empty() ? std::string() : "-p " + std::string(tool->profile) + " reaches its registry, ";
    return what + " failed: if it could not resolve or reach a host, that is the jail: it has no network (the " +
           "default); " + give + "--allow-host HOST lets one host through, --net host shares the host's (cordon(1), " +
           "NETWORK)";
}

// git changes .git/config by renaming config.lock over it; onto the read-only bind of a
// protected path that rename fails with EBUSY, which git reports without saying why. The
// subcommands that write the repository's config, failing: say why, once, after the run.
std::string protected_git_note(const Spec& spec, int status) {
    if (status == 0 || spec.argv.empty() || !spec.workdir || spec.workdir_readonly) return "";
    if (path_basename(spec.argv[0]) != "git") return "";
    const std::string sub = subcommand_of(spec.argv);
    // Exit 1 is an answer for most of git (diff --exit-code, grep, nothing to commit); git stash
    // fails with it, and says nothing where its git directory cannot be written.
    if (status == 1 && sub != "stash") return "";
    // A linked worktree's (or a submodule checkout's) git directories are read-only inside.
    if (!spec.workdir_gitdir.empty()) {
        return "git failed: if git said \"Read-only file system\", that is the jail: in a linked worktree or a "
               "submodule's checkout the repository's git directories are read-only inside, so what writes the "
               "repository (commit, branch, switch, stash, fetch, rebase) fails (cordon(1), GIT WORKTREES); run "
               "cordon in the main checkout, or do it outside the jail";
    }
    if (std::find(spec.protect.begin(), spec.protect.end(), ".git/config") == spec.protect.end()) return "";
    static const std::vector<std::string_view> writers = {"config", "remote",      "submodule", "branch",
                                                          "push",   "maintenance", "lfs"};
    if (sub == "worktree") {
        return "git worktree failed: if git said \"Device or resource busy\" about .git/config or a directory in "
               ".git/worktrees, that is the jail: those are protected paths or hold them, read-only inside "
               "(cordon(1), PROTECTED PATHS); remove or prune the worktree outside the jail";
    }
    if (std::find(writers.begin(), writers.end(), sub) == writers.end()) return "";
    return "git " + sub +
           " failed: if git said \"Device or resource busy\" about .git/config, that is "
           "the jail: the repository's config is a protected path, read-only inside (cordon(1), PROTECTED "
           "PATHS); change it outside the jail";
}

}  // namespace cordon

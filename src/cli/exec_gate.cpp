// Judging one exec inside the jail with the command policy (cordon/exec_gate.hpp).
#include "cordon/exec_gate.hpp"

#include <fmt/format.h>

#include "cordon/json.hpp"
#include "cordon/paths.hpp"
#include "cordon/policy/analyze.hpp"

namespace cordon {

namespace {

// Programs that are many programs, named by argv[0].
bool multicall(std::string_view exe) {
    std::string_view base = path_basename(exe);
    return base == "busybox" || base == "toybox" || base == "coreutils";
}

bool path_like(const std::string& a) {
    return a == "." || a == ".." || (a.find('/') != std::string::npos && a[0] != '-');
}

}  // namespace

std::vector<std::vector<std::string>> exec_variants(const ExecRequest& r) {
    std::vector<std::vector<std::string>> out;
    std::vector<std::string> given = r.argv;
    if (given.empty()) given.push_back(r.path);
    out.push_back(given);
    if (!r.exe.empty() && !multicall(r.exe) && path_basename(r.exe) != path_basename(given[0])) {
        auto real = given;
        real[0] = r.exe;
        out.push_back(std::move(real));
    }
    if (r.root.valid()) {
        auto resolved = given;
        bool changed = false;
        for (size_t i = 1; i < resolved.size(); ++i) {
            if (!path_like(resolved[i])) continue;
            std::string real = resolve_in_root(r.root.get(), r.cwd, resolved[i], false, r.jail_pid);
            if (real != normalize_path(resolved[i], r.cwd)) {
                resolved[i] = std::move(real);
                changed = true;
            }
        }
        if (changed) out.push_back(std::move(resolved));
    }
    return out;
}

ExecJudgement judge_exec(const policy::PolicySet& policies, const ExecRequest& r, const std::string& home) {
    ExecJudgement j;
    j.executable = r.exe.empty() ? r.path : r.exe;
    const std::string text = policy::quote_argv(r.argv.empty() ? std::vector<std::string>{r.path} : r.argv);
    if (!r.error.empty()) {
        j.decision.allow = false;
        j.decision.rule_id = "exec-unreadable";
        j.decision.reason = r.error;
        j.decision.command = text;
        return j;
    }
    bool first = true;
    for (const auto& argv : exec_variants(r)) {
        policy::Decision d = policies.check_argv(argv, r.cwd, home, policy::CheckOptions{.defer_uncertain = true});
        d.command = text;
        if (first || !d.allow) j.decision = std::move(d);
        first = false;
        if (!j.decision.allow) break;
    }
    return j;
}

std::string audit_line(const ExecRequest& r, const ExecJudgement& j, double unix_time) {
    return JsonObject()
               .add_raw("time", fmt::format("{:.6f}", unix_time))
               .add("pid", static_cast<int64_t>(r.jail_pid ? r.jail_pid : jail_pid_of(r.pid)))
               .add("argv", r.argv)
               .add("cwd", r.cwd)
               .add("executable", j.executable)
               .add("decision", j.decision.allow ? "allow" : "deny")
               .add("rule", j.decision.rule_id)
               .add("reason", j.decision.reason)
               .str() +
           "\n";
}

}  // namespace cordon

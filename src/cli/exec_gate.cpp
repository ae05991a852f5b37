// Judging one exec inside the jail with the command policy (cordon/exec_gate.hpp).
#include "cordon/exec_gate.hpp"

#include <fmt/format.h>

#include "cordon/json.hpp"
#include "cordon/paths.hpp"
#include "cordon/policy/analyze.hpp"
#include "cordon/policy/names.hpp"

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

// The kernel follows at most five "#!" lines in one exec (exec_binprm's depth); one more is
// read, so that a chain the kernel would refuse (ELOOP) is still seen whole.
constexpr int kMaxInterpreters = 6;

std::vector<std::string> with_program(std::vector<std::string> argv, std::string program) {
    argv[0] = std::move(program);
    return argv;
}

// What a script or the loader names, resolved in the jail: a path through /proc or /dev (an
// interpreter "/proc/self/fd/5", "/dev/fd/5") with the process's own jail pid; "" when such a
// path leads to no regular file there, which the caller then refuses to judge blind.
std::string resolve_named(const ExecRequest& r, const std::string& path) {
    if (!special_path(path)) return resolve_in_root(r.root.get(), r.cwd, path, true, r.jail_pid);
    const pid_t self = r.jail_pid ? r.jail_pid : jail_pid_of(r.pid);
    std::string real = self > 0 ? resolve_in_root(r.root.get(), r.cwd, path, true, self) : "";
    // Still in /proc or /dev once resolved (a memfd, a deleted file): nothing to judge it as.
    const bool unresolved = real.starts_with("/proc/") || real.starts_with("/dev/");
    if (real.empty() || unresolved || read_head_in_root(r.root.get(), real, 1).empty()) return "";
    return real;
}

// What the kernel runs for a script: for each "#!" line (a script's interpreter may be one too),
// INTERPRETER [ARG] FILE ARGV[1...], where FILE is the path the exec was given. RUN and FILE end
// as the argv and the file of the binary really loaded; false if an interpreter could not be
// resolved.
bool add_interpreters(const ExecRequest& r, std::vector<std::string>& run, std::string& file,
                      std::vector<std::vector<std::string>>& out) {
    std::string as_given = r.path;
    for (int depth = 0; depth < kMaxInterpreters && !file.empty(); ++depth) {
        auto line = parse_shebang(read_head_in_root(r.root.get(), file, kShebangMax));
        if (!line) return true;
        std::vector<std::string> next{line->interpreter};
        if (line->arg) next.push_back(*line->arg);
        next.push_back(as_given);
        next.insert(next.end(), run.begin() + 1, run.end());
        out.push_back(next);
        std::string real = resolve_named(r, line->interpreter);
        if (real.empty() && special_path(line->interpreter)) return false;
        if (path_basename(real) != path_basename(line->interpreter)) out.push_back(with_program(next, real));
        run = std::move(next);
        as_given = line->interpreter;
        file = std::move(real);
    }
    return true;
}

// The dynamic loader run as a program maps the program it is given into its own process: no
// exec of its own follows, so that program is judged here, as it is and as the file it is.
// False if that program could not be resolved.
bool add_loaded_program(const ExecRequest& r, std::vector<std::string>& run, std::string& file,
                        std::vector<std::vector<std::string>>& out) {
    const size_t operand = policy::loader_operand(run);
    if (operand >= run.size()) return true;
    std::vector<std::string> loaded(run.begin() + static_cast<std::ptrdiff_t>(operand), run.end());
    out.push_back(loaded);
    file = resolve_named(r, loaded[0]);
    if (file.empty() && special_path(loaded[0])) return false;
    if (path_basename(file) != path_basename(loaded[0])) out.push_back(with_program(loaded, file));
    run = std::move(loaded);
    return true;
}

// What a record adds when it lost part of argv: the original's words and bytes.
void add_cut(JsonObject& o, const ArgvRecord& a) {
    if (!a.truncated) return;
    o.add("truncated", true).add("argc", static_cast<int64_t>(a.argc)).add("argv_bytes", static_cast<int64_t>(a.bytes));
}

}  // namespace

std::vector<std::vector<std::string>> argv0_variants(const std::vector<std::string>& argv, const std::string& argv0) {
    if (argv.empty()) return {};
    return policy::argv0_variants(argv, argv0, argv[0], [](std::string_view w) { return std::string(w); });
}

std::vector<std::vector<std::string>> loader_argv0_variants(const std::vector<std::string>& argv) {
    std::vector<std::vector<std::string>> out;
    if (argv.empty() || !is_loader_name(path_basename(argv[0]))) return out;
    const size_t operand = policy::loader_operand(argv);
    if (operand >= argv.size()) return out;
    const std::vector<std::string> loaded(argv.begin() + static_cast<std::ptrdiff_t>(operand), argv.end());
    for (size_t i = 1; i + 1 < operand; ++i) {
        if (argv[i] != "--argv0") continue;
        auto named = argv0_variants(loaded, argv[i + 1]);
        out.insert(out.end(), named.begin(), named.end());
    }
    return out;
}

std::vector<std::vector<std::string>> name_variants(const std::vector<std::string>& argv,
                                                    const std::optional<std::string>& argv0) {
    std::vector<std::vector<std::string>> out;
    if (argv.empty()) return out;
    auto add = [&](std::vector<std::vector<std::string>> lines) {
        for (auto& line : lines) {
            if (line != argv && std::find(out.begin(), out.end(), line) == out.end()) out.push_back(std::move(line));
        }
    };
    add(argv0_variants(argv, argv[0]));
    if (argv0) add(argv0_variants(argv, *argv0));
    add(loader_argv0_variants(argv));
    return out;
}

std::vector<std::vector<std::string>> exec_variants(const ExecRequest& r, ProgramIdentity* identity, bool* unresolved) {
    std::vector<std::vector<std::string>> out;
    std::vector<std::string> given = r.argv;
    if (given.empty()) given.push_back(r.path);
    out.push_back(given);
    // The loader's --argv0 NAME is the program's argv[0] (ld.so --argv0 git-clean git).
    for (const auto& named : loader_argv0_variants(r.exe.empty() ? given : with_program(given, r.exe))) {
        out.push_back(named);
    }
    if (!r.exe.empty() && !multicall(r.exe) && path_basename(r.exe) != path_basename(given[0])) {
        out.push_back(with_program(given, r.exe));
    }
    // busybox run as sh (a symlink, exec -a) is busybox sh.
    if (!r.exe.empty() && policy::is_multicall(path_basename(r.exe))) {
        for (auto& named : argv0_variants(with_program(given, r.exe), given[0])) {
            if (std::find(out.begin(), out.end(), named) == out.end()) out.push_back(std::move(named));
        }
    }
    // What argv[0] and the file's own name make it (busybox's -rm, git's git-clean).
    // (busybox's own file name never picks its applet: argv[0] does.)
    for (const std::string& name : {given[0], multicall(r.exe) ? std::string() : r.exe}) {
        auto named = argv0_variants(given, name);
        for (size_t i = 1; i < named.size(); ++i) {
            if (std::find(out.begin(), out.end(), named[i]) == out.end()) out.push_back(std::move(named[i]));
        }
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
    if (!r.root.valid() || r.exe.empty()) return out;
    std::vector<std::string> run = given;
    std::string file = r.exe;
    bool resolved_all = add_interpreters(r, run, file, out);
    // A copy of a system program under another name is that program; a copy of the loader is
    // the loader.
    auto copy_of = [&](const std::string& f) {
        if (identity == nullptr || f.empty()) return std::string();
        if (r.writable != nullptr && std::none_of(r.writable->begin(), r.writable->end(),
                                                  [&](const std::string& w) { return path_at_or_under(f, w); }))
            return std::string();  // the Landlock jail could not have made it
        return identity->identify(r.root.get(), f);
    };
    std::string system = copy_of(file);
    if (resolved_all && !file.empty() &&
        (is_loader_name(path_basename(file)) || is_loader_name(path_basename(system)))) {
        resolved_all = add_loaded_program(r, run, file, out);
        system = copy_of(file);
    }
    if (!system.empty() && path_basename(system) != path_basename(run[0])) {
        out.push_back(with_program(run, std::move(system)));
    }
    if (!resolved_all && unresolved != nullptr) *unresolved = true;
    return out;
}

ExecJudgement judge_exec(const policy::PolicySet& policies, const ExecRequest& r, const std::string& home,
                         ProgramIdentity* identity) {
    ExecJudgement j;
    j.executable = clip_text(r.exe.empty() ? r.path : r.exe);
    // Only the record is cut: every variant below is judged with the whole argv.
    j.shown = clip_argv(r.argv.empty() ? std::vector<std::string>{r.path} : r.argv, kRecordArgv);
    const std::string text = clip_text(policy::quote_argv(j.shown.argv), 2 * kRecordArgv.max_total_bytes);
    j.shown.argv.clear();
    auto unreadable = [&](const std::string& reason) {
        j.decision.allow = false;
        j.decision.rule_id = "exec-unreadable";
        j.decision.reason = clip_text(reason);
        j.decision.command = text;
        return j;
    };
    if (!r.error.empty()) return unreadable(r.error);
    bool unresolved = false;
    const auto variants = exec_variants(r, identity, &unresolved);
    if (unresolved) {
        return unreadable("its #! interpreter or the loader's program, a path through /proc or /dev, names no file");
    }
    bool first = true;
    for (const auto& argv : variants) {
        policy::Decision d = policies.check_argv(argv, r.cwd, home, policy::CheckOptions{.defer_uncertain = true});
        d.command = text;
        if (first || !d.allow) j.decision = std::move(d);
        first = false;
        if (!j.decision.allow) break;
    }
    j.decision.reason = clip_text(j.decision.reason);
    return j;
}

std::string exec_denial_line(const ExecJudgement& j) {
    std::string line = policy::format_denial(j.decision);
    if (j.shown.truncated) line += fmt::format(" [argv cut: {} words, {} bytes]", j.shown.argc, j.shown.bytes);
    return line;
}

std::string exec_denial_json(const ExecJudgement& j) {
    std::string json = policy::to_json(j.decision);
    if (!j.shown.truncated) return json;
    // The policy's fields, then what the record left out.
    JsonObject cut;
    add_cut(cut, j.shown);
    json.pop_back();
    return json + "," + cut.str().substr(1);
}

std::string audit_line(const ExecRequest& r, const ExecJudgement& j, double unix_time) {
    const ArgvRecord argv = clip_argv(r.argv, kAuditArgv);
    JsonObject o;
    o.add_raw("time", fmt::format("{:.6f}", unix_time))
        .add("pid", static_cast<int64_t>(r.jail_pid ? r.jail_pid : jail_pid_of(r.pid)))
        .add("argv", argv.argv);
    add_cut(o, argv);
    return o.add("cwd", clip_text(r.cwd))
               .add("executable", j.executable)
               .add("decision", j.decision.allow ? "allow" : "deny")
               .add("rule", j.decision.rule_id)
               .add("reason", j.decision.reason)
               .str() +
           "\n";
}

std::string command_audit_line(const std::vector<std::string>& argv, const std::string& cwd, const policy::Decision& d,
                               double unix_time) {
    const ArgvRecord clipped = clip_argv(argv, kAuditArgv);
    JsonObject o;
    o.add_raw("time", fmt::format("{:.6f}", unix_time)).add("kind", "command").add("argv", clipped.argv);
    add_cut(o, clipped);
    return o.add("cwd", clip_text(cwd))
               .add("command", clip_text(d.command))
               .add("decision", d.allow ? "allow" : "deny")
               .add("rule", d.rule_id)
               .add("reason", d.reason)
               .str() +
           "\n";
}

}  // namespace cordon

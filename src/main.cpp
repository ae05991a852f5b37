// cordon: parse -> build spec -> prepare -> supervise -> exit code. Exceptions from libraries
// become Results where they are thrown (toml++, CLI11, the shell parser); this is the last resort.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cordon/bounds.hpp"
#include "cordon/builtin.hpp"
#include "cordon/bwrap.hpp"
#include "cordon/cli.hpp"
#include "cordon/commands.hpp"
#include "cordon/diag.hpp"
#include "cordon/exec_gate.hpp"
#include "cordon/exec_notify.hpp"
#include "cordon/fd.hpp"
#include "cordon/features.hpp"
#include "cordon/jail.hpp"
#include "cordon/json.hpp"
#include "cordon/leftovers.hpp"
#include "cordon/policy.hpp"
#include "cordon/profile.hpp"
#include "cordon/report.hpp"
#include "cordon/settings.hpp"
#include "cordon/spec_builder.hpp"
#include "cordon/version.hpp"

namespace {

int report(const cordon::Error& e) {
    cordon::diag::error(e);
    return static_cast<int>(e.kind);
}

// After a run, everything on the host is already cleaned up (placeholders, cgroup); what is left
// is memory shared copy-on-write with the jail's init, which may still be exiting. Freeing it
// would copy pages only to drop them, so cordon leaves without destructors. The sanitizer build
// returns normally so that leak checking still covers the run.
int finish(int code) {
#if defined(__SANITIZE_ADDRESS__)
    return code;
#else
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
#endif
}

// --help and --version print and end the run; nullopt for every other command line.
std::optional<int> answer_help_or_version(const cordon::CliRequest& cli) {
    if (cli.help) {
        std::fputs(cli.help_text.c_str(), stdout);
        return 0;
    }
    if (cli.version) {
        std::fputs(cordon::version_report().c_str(), stdout);
        return 0;
    }
    return std::nullopt;
}

// Exec checks the host cannot give under --exec-checks auto (prepare() decided): the static check
// alone, said once.
void warn_exec_checks_off(const cordon::RunOptions& options, const cordon::Prepared& prepared) {
    if (prepared.exec_checks_unavailable.empty() || options.dry_run) return;
    cordon::diag::warning(
        "exec checks are off: {}; only the command line is checked, and strictly "
        "(--exec-checks required refuses instead)",
        prepared.exec_checks_unavailable);
}

std::string exec_checks_mode(const cordon::Spec& spec, const cordon::RunOptions& options,
                             const cordon::Prepared& prepared) {
    if (prepared.exec_checks) return options.kill_on_deny ? "on (a denied exec ends the run)" : "on";
    if (spec.no_policy) return "off (--no-policy)";
    if (spec.exec_checks == cordon::Spec::ExecChecks::Off) return "off (--exec-checks off)";
    return "off (" + prepared.exec_checks_unavailable + ")";
}

// --dry-run: the resolved jail and the command policy files; nothing runs.
int print_dry_run(const cordon::Spec& spec, const cordon::RunOptions& options, const cordon::Prepared& prepared,
                  const std::vector<std::string>& policy_names) {
    std::fputs(cordon::format_dry_run(spec, options, prepared).c_str(), stdout);
    std::string files;
    if (!spec.no_policy) {
        auto loaded = cordon::load_policies(policy_names);
        if (!loaded) return report(loaded.error());
        for (const auto& f : loaded->files()) files += " " + f;
    }
    std::printf("policy:    %s\n", files.empty() ? " none (--no-policy)" : files.c_str());
    std::printf("exec checks: %s\n", exec_checks_mode(spec, options, prepared).c_str());
    return 0;
}

// The network, for -v: host, none, or the allowed hosts.
std::string net_summary(const cordon::Spec& spec) {
    if (spec.share_net) return "host";
    if (spec.allow_hosts.empty()) return "none";
    std::string s = "filtered (";
    for (const auto& h : spec.allow_hosts) s += (s.back() == '(' ? "" : " ") + h.text;
    return s + ")";
}

// -v: one line on stderr that says what jail the command is about to run in.
void print_summary(const cordon::Spec& spec, const cordon::RunOptions& options, const cordon::Prepared& prepared,
                   const cordon::policy::PolicySet& policies) {
    std::string names;
    for (const auto& p : options.profiles) names += (names.empty() ? "" : ",") + p;
    cordon::diag::line(cordon::diag::Show::Verbose,
                       "jail: profiles {}; workdir {}; network {}; {} mounts; seccomp {}; policy {}",
                       names.empty() ? "(none)" : names, spec.workdir ? *spec.workdir : "none", net_summary(spec),
                       prepared.mounts.ops.size(), prepared.seccomp.name,
                       policies.empty()       ? "off"
                       : prepared.exec_checks ? "checked, allowed; every exec checked"
                                              : "checked, allowed");
}

// Variables removed for their values are named (their names do not say why they went); -v
// names every variable removed. Never a value.
void print_env_note(const cordon::Spec& spec, const cordon::RunOptions& options) {
    if (!options.env_value_removals.empty()) {
        std::string list;
        for (const auto& r : options.env_value_removals) list += (list.empty() ? "" : ", ") + r;
        cordon::diag::note("removed from the environment for what their values hold: {}; --env-pass NAME keeps one",
                           list);
    }
    if (!spec.env_removed.empty()) {
        std::string names;
        for (const auto& n : spec.env_removed) names += " " + n;
        cordon::diag::verbose("removed from the environment:{}", names);
    }
}

// Now, in Unix seconds, for the audit log.
double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The command policy's decision on the command (the jail's gate): nullopt lets it run, an
// Outcome ends the run (a policy that does not load, or a denial: on stderr and in the audit log).
std::optional<cordon::Outcome> admit(const cordon::Spec& spec, const cordon::RunOptions& options,
                                     const cordon::Prepared& prepared, const std::vector<std::string>& policy_names,
                                     int audit_fd, cordon::policy::PolicySet& policies) {
    if (!spec.no_policy) {
        auto loaded = cordon::load_policies(policy_names);
        if (!loaded) {
            cordon::Outcome failed;
            failed.error = loaded.error();
            failed.exit_code = static_cast<int>(loaded.error().kind);
            return failed;
        }
        policies = std::move(*loaded);
        const std::string cwd = spec.chdir;
        // With exec-time checks what is uncertain here is judged at the execs it leads to.
        const cordon::policy::CheckOptions mode{.defer_uncertain = prepared.exec_checks};
        auto decision = spec.via_shell ? policies.check_script(spec.argv[2], cwd, spec.home, mode)
                                       : policies.check_argv(spec.argv, cwd, spec.home, mode);
        // The command is judged as what its name, --argv0's or a loader's --argv0 makes it too
        // (busybox as rm, git-clean as git clean).
        if (!spec.via_shell) {
            for (const auto& argv : cordon::name_variants(spec.argv, spec.argv0)) {
                if (!decision.allow) break;
                decision = policies.check_argv(argv, cwd, spec.home, mode);
            }
        }
        if (!decision.allow) {
            cordon::diag::write_line(cordon::diag::Show::Always, cordon::policy::format_denial(decision));
            if (audit_fd >= 0) {
                const std::string line = cordon::command_audit_line(spec.argv, cwd, decision, unix_now());
                (void)cordon::write_all(audit_fd, line.data(), line.size());
            }
            cordon::Outcome denied;
            denied.reason = cordon::Outcome::Reason::Denied;
            denied.exit_code = 126;
            denied.denials.push_back(cordon::policy::to_json(decision));
            return denied;
        }
    }
    print_summary(spec, options, prepared, policies);
    return std::nullopt;
}

// What happened, on stderr and in the status file; the exit status.
int conclude(const cordon::Outcome& outcome, const cordon::RunOptions& options, int status_fd = -1) {
    if (outcome.error) report(*outcome.error);
    if (outcome.reason == cordon::Outcome::Reason::Timeout) {
        cordon::diag::line(cordon::diag::Show::Normal, "timeout: the command ran longer than --timeout and was killed");
    }
    if (options.status_json) {
        auto s = status_fd >= 0 ? cordon::write_status_file(status_fd, options.status_json->text, outcome)
                                : cordon::write_status_json(*options.status_json, outcome);
        if (!s) {
            report(s.error());
            return 125;
        }
    }
    return outcome.exit_code;
}

// --audit PATH|fd:N: where exec decisions are appended (-1: nowhere).
cordon::Result<int> open_audit(const cordon::RunOptions& options) {
    if (!options.audit) return -1;
    const cordon::OutputTarget& target = *options.audit;
    if (target.is_fd()) {
        if (::fcntl(target.fd, F_GETFD) < 0) return cordon::sys_error("--audit " + target.text);
        return target.fd;
    }
    int fd = ::open(target.text.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return cordon::sys_error("--audit " + target.text);
    return fd;
}

// The denials shown on stderr and kept for --status-json: the first kMaxStderrLines on stderr,
// each once in a row in both (a shell that tries each PATH entry in turn is denied once per
// entry, for one command).
struct DenialLines {
    cordon::LineBudget budget;
    pid_t last_pid = 0;
    std::string last;
};

// Each exec inside the jail: judged with the run's policies, reported on stderr, logged.
cordon::ExecVerdict judge(const cordon::Spec& spec, const cordon::RunOptions& options,
                          const cordon::policy::PolicySet& policies, int audit_fd, DenialLines& shown,
                          const cordon::ExecRequest& r) {
    static cordon::ProgramIdentity identity;  // the jail's system programs, indexed on first need
    cordon::ExecJudgement j = cordon::judge_exec(policies, r, spec.home, &identity);
    if (audit_fd >= 0) {
        const std::string line = cordon::audit_line(r, j, unix_now());
        (void)cordon::write_all(audit_fd, line.data(), line.size());
    }
    cordon::ExecVerdict v;
    if (j.decision.allow) return v;
    std::string line = cordon::exec_denial_line(j);
    const bool repeat = r.pid == shown.last_pid && line == shown.last;
    if (!repeat) {
        if (shown.budget.take()) cordon::diag::write_line(cordon::diag::Show::Always, line);
        shown.last_pid = r.pid;
        shown.last = std::move(line);
        v.denial_json = cordon::exec_denial_json(j);
    }
    v.allow = false;
    v.end_run = options.kill_on_deny;
    return v;
}

// --status-json's target as cordon's own options give it, for a failure before they are
// resolved: the first one, read as the option table reads the command line (each option's
// values skipped), up to "--" or the command, whose own arguments are never taken for
// cordon's; only where it is a PATH or fd:N.
std::optional<cordon::OutputTarget> status_target_of(const std::vector<std::string>& args) {
    const auto value = cordon::option_value_in(args, "status-json");
    return value ? cordon::parse_output_target(*value) : std::nullopt;
}

// A failure before the run, on stderr and (SPEC §9: at every exit, bad input included) in the
// status file, with REASON: usage-error for bad input, setup-error for what the host refused.
int refuse(const cordon::Error& e, const std::optional<cordon::OutputTarget>& status_target,
           cordon::Outcome::Reason reason) {
    const int code = report(e);
    if (!status_target) return code;
    cordon::Outcome failed;
    failed.reason = reason;
    failed.exit_code = code;
    failed.error = e;
    if (auto s = cordon::write_status_json(*status_target, failed); !s) report(s.error());
    return code;
}

int run(const std::vector<std::string>& args) {
    using Reason = cordon::Outcome::Reason;
    const std::optional<cordon::OutputTarget> early_target = status_target_of(args);
    auto cli = cordon::parse_command_line(args);
    if (!cli) return refuse(cli.error(), early_target, Reason::UsageError);
    cordon::diag::set_verbosity(cli->verbosity);  // -q, -v: what every line below may say
    if (auto answered = answer_help_or_version(*cli)) return *answered;
    auto resolved = cordon::resolve_spec(*cli, cordon::current_host());
    if (!resolved) {
        const std::optional<std::string> given = cordon::get_string(cli->layer, "status-json");
        return refuse(resolved.error(), given ? status_target_of({"--status-json", *given}) : std::nullopt,
                      Reason::UsageError);
    }
    // From here on the target is the resolved one (a profile may name it too).
    const std::optional<cordon::OutputTarget>& target = resolved->options.status_json;
    const cordon::Spec& spec = resolved->spec;
    const cordon::RunOptions& options = resolved->options;
    // The default profile lists "default"; with --no-profile and no --policy it still applies.
    const std::vector<std::string> policy_names =
        spec.policies.empty() ? std::vector<std::string>{"default"} : spec.policies;
    auto prepared = cordon::prepare(spec);
    if (!prepared) return refuse(prepared.error(), target, Reason::SetupError);
    if (options.dry_run) return print_dry_run(spec, options, *prepared, policy_names);
    warn_exec_checks_off(options, *prepared);
    if (!options.workdir_note.empty()) cordon::diag::note("{}", options.workdir_note);
    if (!options.program_note.empty()) cordon::diag::note("{}", options.program_note);
    print_env_note(spec, options);
    // The command policy decides while the child builds the jail: nothing of the command runs,
    // and no placeholder is made on the host, before it allows the command.
    auto audit = open_audit(options);
    if (!audit) return refuse(audit.error(), target, Reason::SetupError);
    cordon::UniqueFd status_file;
    if (options.status_json && !options.status_json->is_fd()) {
        auto f = cordon::open_status_file(options.status_json->text);
        if (!f) return refuse(f.error(), std::nullopt, Reason::SetupError);
        status_file = std::move(*f);
    }
    cordon::policy::PolicySet policies;  // loaded by admit, used again for each exec
    auto gate = [&]() { return admit(spec, options, *prepared, policy_names, *audit, policies); };
    // The second exec judged decodes the compiled policies in full, for all that follow: the
    // first is mostly the command's own, and a run that execs nothing more (start-up, as
    // bench/startup measures it) pays nothing for the decoding.
    int judged = 0;
    DenialLines denial_lines;
    auto exec_gate = [&](const cordon::ExecRequest& r) {
        if (++judged == 2) policies.decode_all();
        return judge(spec, options, policies, *audit, denial_lines, r);
    };
    const cordon::SupervisorOptions supervisor{options.status_json.has_value(), *audit};
    const cordon::Outcome outcome = cordon::run_jail(spec, *prepared, supervisor, gate, exec_gate);
    if (denial_lines.budget.held() > 0) {
        cordon::diag::error("denied: ... and {} more denied execs not shown (cordon(1), BOUNDS)",
                            denial_lines.budget.held());
    }
    if (outcome.reason == cordon::Outcome::Reason::Exited) {
        if (const std::string note = cordon::protected_git_note(spec, outcome.exit_code); !note.empty())
            cordon::diag::note("{}", note);
        if (const std::string note = cordon::no_network_note(spec, outcome.exit_code); !note.empty())
            cordon::diag::note("{}", note);
    }
    return finish(conclude(outcome, options, status_file.get()));
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        // Started as `bwrap` (a symlink): bubblewrap's command line, not cordon's.
        if (argc > 0 && cordon::bwrap::invoked_as_bwrap(argv[0])) return cordon::bwrap::main_entry(args, argv[0]);
        // Started by a run as RepoWatch's watcher (leftovers.hpp).
        if (argc > 0 && std::string_view(argv[0]) == "cordon-repowatch") return cordon::repowatch_daemon_main(args);
        // Subcommands are recognised only as the first argument ("cordon -- check" runs check).
        if (const cordon::Subcommand* sub = args.empty() ? nullptr : cordon::find_subcommand(args[0])) {
            return sub->run({args.begin() + 1, args.end()});
        }
        return run(args);
    } catch (const std::exception& e) {
        cordon::diag::error("internal error: {}", e.what());
        return 125;
    }
}

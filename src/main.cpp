// cordon: parse -> build spec -> prepare -> supervise -> exit code. Exceptions from libraries
// become Results where they are thrown (toml++, CLI11, the shell parser); this is the last resort.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cordon/builtin.hpp"
#include "cordon/cli.hpp"
#include "cordon/commands.hpp"
#include "cordon/fd.hpp"
#include "cordon/features.hpp"
#include "cordon/jail.hpp"
#include "cordon/json.hpp"
#include "cordon/policy.hpp"
#include "cordon/profile.hpp"
#include "cordon/report.hpp"
#include "cordon/spec_builder.hpp"
#include "cordon/version.hpp"

namespace {

int report(const cordon::Error& e) {
    std::fprintf(stderr, "%s\n", e.message().c_str());
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

int run(const std::vector<std::string>& args) {
    auto cli = cordon::parse_command_line(args);
    if (!cli) return report(cli.error());
    if (cli->help) {
        std::fputs(cli->help_text.c_str(), stdout);
        return 0;
    }
    if (cli->version) {
        std::fputs(cordon::version_report().c_str(), stdout);
        return 0;
    }
    auto resolved = cordon::resolve_spec(*cli, cordon::current_host());
    if (!resolved) return report(resolved.error());
    const cordon::Spec& spec = resolved->spec;
    const cordon::RunOptions& options = resolved->options;
    // The default profile lists "default"; with --no-profile and no --policy it still applies.
    const std::vector<std::string> policy_names =
        spec.policies.empty() ? std::vector<std::string>{"default"} : spec.policies;
    auto prepared = cordon::prepare(spec);
    if (!prepared) return report(prepared.error());
    if (options.dry_run) {
        std::fputs(cordon::format_dry_run(spec, options, *prepared).c_str(), stdout);
        std::string files;
        if (!spec.no_policy) {
            auto loaded = cordon::load_policies(policy_names);
            if (!loaded) return report(loaded.error());
            for (const auto& f : loaded->files()) files += " " + f;
        }
        std::printf("policy:    %s\n", files.empty() ? " none (--no-policy)" : files.c_str());
        return 0;
    }
    if (!options.workdir_note.empty() && options.verbosity >= 0) {
        std::fprintf(stderr, "cordon: note: %s\n", options.workdir_note.c_str());
    }
    // The command policy decides while the child builds the jail: nothing of the command runs,
    // and no placeholder is made on the host, before it allows the command.
    auto gate = [&]() -> std::optional<cordon::Outcome> {
        cordon::policy::PolicySet policies;
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
            auto decision = spec.via_shell ? policies.check_script(spec.argv[2], cwd, spec.home)
                                           : policies.check_argv(spec.argv, cwd, spec.home);
            if (!decision.allow) {
                std::fprintf(stderr, "%s\n", cordon::policy::format_denial(decision).c_str());
                cordon::Outcome denied;
                denied.reason = cordon::Outcome::Reason::Denied;
                denied.exit_code = 126;
                denied.denials.push_back(cordon::policy::to_json(decision));
                return denied;
            }
        }
        if (options.verbosity > 0) {
            std::string names;
            for (const auto& p : options.profiles) names += (names.empty() ? "" : ",") + p;
            std::fprintf(stderr,
                         "cordon: jail: profiles %s; workdir %s; network %s; %zu mounts; seccomp %s; policy %s\n",
                         names.empty() ? "(none)" : names.c_str(), spec.workdir ? spec.workdir->c_str() : "none",
                         spec.share_net ? "host" : "none", prepared->mounts.ops.size(), prepared->seccomp.name.c_str(),
                         policies.empty() ? "off" : "checked, allowed");
        }
        return std::nullopt;
    };
    const cordon::SupervisorOptions supervisor{options.verbosity, options.status_json.has_value()};
    cordon::Outcome outcome = cordon::run_jail(spec, *prepared, supervisor, gate);
    if (outcome.error) report(*outcome.error);
    if (outcome.reason == cordon::Outcome::Reason::Timeout && options.verbosity >= 0) {
        std::fprintf(stderr, "cordon: timeout: the command ran longer than --timeout and was killed\n");
    }
    if (options.status_json) {
        if (auto s = cordon::write_status_json(*options.status_json, outcome); !s) {
            report(s.error());
            return finish(125);
        }
    }
    return finish(outcome.exit_code);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        // Subcommands are recognised only as the first argument ("cordon -- check" runs check).
        if (const cordon::Subcommand* sub = args.empty() ? nullptr : cordon::find_subcommand(args[0])) {
            return sub->run({args.begin() + 1, args.end()});
        }
        return run(args);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cordon: internal error: %s\n", e.what());
        return 125;
    }
}

// cordon: parse -> build spec -> prepare -> supervise -> exit code. The only catch site.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "cordon/cli.hpp"
#include "cordon/fd.hpp"
#include "cordon/jail.hpp"
#include "cordon/json.hpp"
#include "cordon/output.hpp"
#include "cordon/spec.hpp"
#include "cordon/version.hpp"

namespace {

int report(const cordon::Error& e) {
    std::fprintf(stderr, "%s\n", e.message().c_str());
    return static_cast<int>(e.kind);
}

int run(const std::vector<std::string>& args) {
    auto cli = cordon::parse_command_line(args);
    if (!cli) return report(cli.error());
    if (cli->help) {
        std::fputs(cli->help_text.c_str(), stdout);
        return 0;
    }
    if (cli->version) {
        std::printf("%s\n", cordon::version_string());
        return 0;
    }
    auto spec = cordon::resolve_spec(*cli, cordon::current_host());
    if (!spec) return report(spec.error());
    auto prepared = cordon::prepare(*spec);
    if (!prepared) return report(prepared.error());
    if (spec->dry_run) {
        std::fputs(cordon::format_dry_run(*spec, *prepared).c_str(), stdout);
        return 0;
    }
    if (!spec->workdir_note.empty() && spec->verbosity >= 0) {
        std::fprintf(stderr, "cordon: note: %s\n", spec->workdir_note.c_str());
    }
    cordon::Outcome outcome = cordon::run_jail(*spec, *prepared);
    if (outcome.error) report(*outcome.error);
    if (outcome.reason == cordon::Outcome::Reason::Timeout && spec->verbosity >= 0) {
        std::fprintf(stderr, "cordon: timeout: the command ran longer than --timeout and was killed\n");
    }
    if (spec->status_json) {
        if (auto s = cordon::write_status_json(*spec->status_json, outcome); !s) {
            report(s.error());
            return 125;
        }
    }
    return outcome.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        return run(args);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cordon: internal error: %s\n", e.what());
        return 125;
    }
}

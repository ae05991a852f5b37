#include "cordon/check_cmd.hpp"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "cordon/builtin.hpp"
#include "cordon/diag.hpp"
#include "cordon/paths.hpp"
#include "cordon/policy.hpp"
#include "cordon/policy/rules.hpp"

namespace cordon {

using namespace policy;

namespace {

constexpr int kExitAllow = 0;
constexpr int kExitDeny = 126;
constexpr int kExitError = 125;

constexpr const char* kCheckUsage =
    "usage: cordon check [--policy NAME|PATH]... [--no-policy] [--static] [--json]\n"
    "                    (-c SCRIPT | --batch FILE [-z] | [--] COMMAND [ARG...])\n"
    "Decide allow or deny for a command line with the command policy; nothing is run.\n"
    "Like a run with exec-time checks, leave what cannot be known statically (an unknown\n"
    "operand or directory, eval of unknown text, a pipe into a shell) to the check of each\n"
    "exec inside the jail: such a command prints 'allow (deferred: ...)'. What is certain\n"
    "is denied at once.\n"
    "  --static   deny what may be dangerous, as a check without exec-time checks must\n"
    "  --json     print the decision as one JSON object (with \"deferred\": [...])\n"
    "  --batch FILE  check each line of FILE (- for standard input) as a -c SCRIPT, in order,\n"
    "             with the policies loaded once; with --json one object a line\n"
    "  -z         with --batch: the scripts are separated by NUL bytes, not newlines\n"
    "Exit status: 0 allow, 126 deny (with --batch: any denied), 125 error.\n";

constexpr const char* kPolicyUsage =
    "usage: cordon policy test FILE|NAME|--built-in...\n"
    "Load each policy and run its rules' must-match and must-not-match examples. A NAME on no\n"
    "directory of the policy search path is the policy built into cordon; --built-in tests every\n"
    "built-in policy, even one that a file on the search path overrides.\n"
    "Exit status: 0 all pass, 1 an example fails, 125 a file cannot be loaded.\n";

int fail(const Error& e) {
    diag::error(e);
    return kExitError;
}

std::string current_dir() {
    char buf[PATH_MAX];
    if (::getcwd(buf, sizeof buf)) return buf;
    return "/";
}

std::string home_dir() {
    if (const char* h = std::getenv("HOME"); h && *h == '/') return h;
    if (auto pw = passwd_entry(::getuid()); pw && !pw->home.empty()) return pw->home;
    return "/";
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
    std::string out;
    for (const auto& i : items) {
        if (!out.empty()) out += sep;
        out += i;
    }
    return out;
}

struct CheckArgs {
    std::vector<std::string> policies;
    bool no_policy = false;
    bool json = false;
    bool static_only = false;  // --static: uncertain denials deny
    bool help = false;
    std::optional<std::string> script;
    std::optional<std::string> batch;  // --batch FILE: scripts, one a record
    bool null_separated = false;       // -z: records end with NUL, not newline
    std::vector<std::string> argv;
};

Result<CheckArgs> parse_check(const std::vector<std::string>& args) {
    CheckArgs c;
    size_t i = 0;
    auto value = [&](const std::string& opt) -> Result<std::string> {
        if (i + 1 >= args.size()) return make_error(opt, "needs a value");
        return args[++i];
    };
    for (; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a == "--policy") {
            auto v = value(a);
            if (!v) return v.error();
            c.policies.push_back(*v);
        } else if (a.rfind("--policy=", 0) == 0) {
            c.policies.push_back(a.substr(9));
        } else if (a == "--no-policy") {
            c.no_policy = true;
        } else if (a == "--json") {
            c.json = true;
        } else if (a == "--static") {
            c.static_only = true;
        } else if (a == "-h" || a == "--help") {
            c.help = true;
            return c;
        } else if (a == "-c") {
            auto v = value(a);
            if (!v) return v.error();
            c.script = *v;
        } else if (a == "--batch") {
            auto v = value(a);
            if (!v) return v.error();
            c.batch = *v;
        } else if (a.rfind("--batch=", 0) == 0) {
            c.batch = a.substr(8);
        } else if (a == "-z") {
            c.null_separated = true;
        } else if (!a.empty() && a[0] == '-') {
            Error e = make_error(a, "unknown option for cordon check");
            e.hint = "see cordon check --help";
            return e;
        } else {
            break;
        }
    }
    c.argv.assign(args.begin() + static_cast<std::ptrdiff_t>(std::min(i, args.size())), args.end());
    const int given = int(c.script.has_value()) + int(c.batch.has_value()) + int(!c.argv.empty());
    if (given > 1) return make_error("check", "give one of -c SCRIPT, --batch FILE or a COMMAND");
    if (given == 0) return make_error("check", "nothing to check: give -c SCRIPT, --batch FILE or a COMMAND");
    if (c.null_separated && !c.batch) return make_error("-z", "needs --batch FILE");
    if (c.batch && c.batch->empty()) return make_error("--batch", "needs a file name (or - for standard input)");
    if (c.no_policy && !c.policies.empty()) return make_error("--no-policy", "cannot be combined with --policy");
    return c;
}

// The policies `cordon policy test ARGS` tests: --built-in stands for every built-in one.
std::vector<std::string> policy_test_names(const std::vector<std::string>& args) {
    std::vector<std::string> names;
    for (const auto& a : args) {
        if (a != "--built-in") {
            names.push_back(a);
            continue;
        }
        for (auto& builtin : builtin_policies()) names.push_back(std::move(builtin));
    }
    return names;
}

// The records of a --batch file: lines (a last one without its newline included), or with -z
// NUL-terminated scripts. An empty record is skipped: it holds no command.
Result<std::vector<std::string>> read_batch(const std::string& file, bool null_separated) {
    std::FILE* in = file == "-" ? stdin : std::fopen(file.c_str(), "re");
    if (!in) return sys_error("--batch " + file);
    std::vector<std::string> records;
    const char end = null_separated ? '\0' : '\n';
    char* line = nullptr;
    size_t capacity = 0;
    ssize_t n = 0;
    errno = 0;
    while ((n = ::getdelim(&line, &capacity, end, in)) > 0) {
        std::string_view record(line, static_cast<size_t>(n));
        if (record.back() == end) record.remove_suffix(1);
        if (!record.empty()) records.emplace_back(record);
    }
    const int err = std::ferror(in) != 0 ? (errno != 0 ? errno : EIO) : 0;
    std::free(line);  // NOLINT(cppcoreguidelines-no-malloc): getdelim's buffer
    if (in != stdin) std::fclose(in);
    if (err != 0) return sys_error("--batch " + file, err);
    return records;
}

// One decision as `cordon check` prints it.
void print_decision(const Decision& d, bool json) {
    if (json) {
        std::printf("%s\n", to_json(d).c_str());
    } else if (d.allow && d.deferred.empty()) {
        std::printf("allow: %s\n", d.command.c_str());
    } else if (d.allow) {
        std::printf("allow (deferred: %s): %s\n", join(d.deferred, "; ").c_str(), d.command.c_str());
    } else {
        std::printf("deny: %s (rule %s: %s)\n", d.command.c_str(), d.rule_id.c_str(), d.reason.c_str());
        std::printf("policy: %s\n", d.policy_file.c_str());
    }
}

}  // namespace

int main_check(const std::vector<std::string>& args) {
    auto parsed = parse_check(args);
    if (!parsed) return fail(parsed.error());
    const CheckArgs& c = *parsed;
    if (c.help) {
        std::fputs(kCheckUsage, stdout);
        return kExitAllow;
    }
    PolicySet set;
    if (!c.no_policy) {
        auto loaded = load_policies(c.policies.empty() ? std::vector<std::string>{kDefaultPolicy} : c.policies);
        if (!loaded) return fail(loaded.error());
        set = std::move(*loaded);
    }
    std::string cwd = current_dir(), home = home_dir();
    const CheckOptions options{.defer_uncertain = !c.static_only};
    if (c.batch) {
        auto records = read_batch(*c.batch, c.null_separated);
        if (!records) return fail(records.error());
        bool all_allowed = true;
        for (const std::string& script : *records) {
            Decision d = set.check_script(script, cwd, home, options);
            print_decision(d, c.json);
            all_allowed = all_allowed && d.allow;
        }
        return all_allowed ? kExitAllow : kExitDeny;
    }
    Decision d =
        c.script ? set.check_script(*c.script, cwd, home, options) : set.check_argv(c.argv, cwd, home, options);
    print_decision(d, c.json);
    return d.allow ? kExitAllow : kExitDeny;
}

int main_policy(const std::vector<std::string>& args) {
    if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
        std::fputs(kPolicyUsage, stdout);
        return 0;
    }
    if (args.empty() || args[0] != "test" || args.size() < 2) {
        Error e = make_error("policy", args.empty()        ? "missing subcommand (expected test)"
                                       : args[0] != "test" ? "unknown subcommand '" + args[0] + "' (expected test)"
                                                           : "test needs at least one policy FILE or NAME");
        e.hint = "cordon policy test FILE|NAME|--built-in...";
        return fail(e);
    }
    int status = 0;
    for (const auto& name : policy_test_names({args.begin() + 1, args.end()})) {
        auto path = resolve_policy(name);
        if (!path) {
            status = fail(path.error());
            continue;
        }
        auto text = read_data_file(*path);
        auto p = text ? parse_policy(*text, *path) : Result<Policy>(text.error());
        if (!p) {
            status = fail(p.error());
            continue;
        }
        size_t examples = 0;
        for (const auto& r : p->rules) examples += r.must_match.size() + r.must_not_match.size();
        auto failures = run_examples(*p);
        for (const auto& f : failures) diag::error("{}", f.c_str());  // up to a NUL: no raw NUL to a terminal
        std::printf("%s: %zu rules, %zu examples, %zu failed\n", path->c_str(), p->rules.size(), examples,
                    failures.size());
        if (!failures.empty() && status == 0) status = 1;
    }
    return status;
}

}  // namespace cordon

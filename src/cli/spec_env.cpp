// build_spec's environment step, and what the host's PATH says about the command (spec_steps.hpp).
#include "spec_steps.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "cordon/bwrap.hpp"
#include "cordon/env_filter.hpp"
#include "cordon/fd.hpp"
#include "cordon/git_config.hpp"
#include "cordon/paths.hpp"
#include "cordon/wildmatch.hpp"

namespace cordon::spec_steps {

namespace {

// VAR's value in ENV, or nullopt.
std::optional<std::string> env_value(const std::vector<std::string>& env, std::string_view var) {
    for (const auto& kv : env) {
        if (kv.size() > var.size() && kv.compare(0, var.size(), var) == 0 && kv[var.size()] == '=')
            return kv.substr(var.size() + 1);
    }
    return std::nullopt;
}

// The environment the jail's starts from: the caller's, or under bwrap mode's extras the one its
// command line computed (bwrap::kCommandEnvVar); never that variable itself.
Result<std::vector<std::string>> command_environment(const HostInfo& host) {
    const std::string var(bwrap::kCommandEnvVar);
    std::vector<std::string> base = host.environ;
    if (auto encoded = env_value(host.environ, var)) {
        auto decoded = bwrap::decode_environ(*encoded);
        if (!decoded) return make_error(var, "not an environment bwrap mode wrote");
        base = std::move(*decoded);
    }
    std::erase_if(base, [&var](const std::string& kv) { return kv.rfind(var + "=", 0) == 0; });
    return base;
}

// Where a config's includes are judged from: HOME for "~/", and the repository the command
// works in for includeIf's gitdir: and onbranch: conditions, looked at only when one is met.
struct IncludeContext {
    std::string home;
    const Spec* spec = nullptr;
    // Files still to be read for one identity: includes may branch at every level, and git's
    // depth of 10 alone would allow a thousand reads of 1 MiB each.
    mutable int files_left = 64;
    // The matching steps left for all the conditions met (git_wildmatch): a config of another
    // user's repository may hold thousands of costly ones. About 0.1 s in all; past it every
    // condition is false.
    mutable size_t steps_left = 4000000;
    // The workdir's git directory as a real path ("" where there is none) and its HEAD's
    // branch without refs/heads/ ("" when detached), once a condition asks.
    struct Repo {
        std::string gitdir, branch;
    };
    mutable std::optional<Repo> repo;
    const Repo& repository() const;
};

// The workdir's git directory (a linked worktree's own, else .git), as git names it.
std::string workdir_git_dir(const Spec& s) {
    return s.workdir_gitdir.empty() ? *s.workdir + "/.git" : s.workdir_gitdir;
}

const IncludeContext::Repo& IncludeContext::repository() const {
    if (repo) return *repo;
    repo.emplace();
    if (spec == nullptr || !spec->workdir) return *repo;
    char real[PATH_MAX];
    struct stat st {};
    if (!real_path(workdir_git_dir(*spec), real) || ::stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) return *repo;
    repo->gitdir = real;
    // HEAD's branch as git resolves it: "ref:" and blanks, then the name, trailing blanks
    // dropped; a branch that is itself a symbolic ref followed (from the common directory, up
    // to git's 5 levels); the name without refs/heads/ where the last one is a branch.
    const std::string common = spec->workdir_commondir.empty() ? repo->gitdir : spec->workdir_commondir;
    auto target = [](const std::optional<std::string>& text) -> std::optional<std::string> {
        if (!text || text->rfind("ref:", 0) != 0) return std::nullopt;
        const size_t from = text->find_first_not_of(" \t\n\r\v\f", 4);
        const size_t to = text->find_last_not_of(" \t\n\r\v\f");
        if (from == std::string::npos || to < from) return std::nullopt;
        return text->substr(from, to - from + 1);
    };
    std::optional<std::string> name = target(read_small_file(repo->gitdir + "/HEAD"));
    for (int depth = 0; name && depth < 5 && name->rfind("refs/", 0) == 0; ++depth) {
        if (name->find("..") != std::string::npos) return *repo;  // git refuses such a name
        auto next = target(read_small_file(common + "/" + *name));
        if (!next) break;
        name = std::move(next);
    }
    if (name && name->rfind("refs/heads/", 0) == 0) repo->branch = name->substr(11);
    return *repo;
}

// PATH as git's include.path names it, from the config file FROM: "~/" from HOME, a relative
// path from FROM's directory.
std::string include_target(const std::string& path, const std::string& from, const IncludeContext& ctx) {
    if (path.rfind("~/", 0) == 0) return ctx.home.empty() ? std::string() : ctx.home + path.substr(1);
    if (!path.empty() && path[0] == '/') return path;
    return std::string(path_parent(from)) + "/" + path;
}

// Whether git takes includeIf's CONDITION as true for the workdir's repository, as git 2.39
// decides it (config.c, include_by_gitdir and include_by_branch): "~/" is HOME, a relative
// pattern gets "**/" before it, one ending in '/' gets "**" after it, and "./" is the directory
// of the including file (its real path), which is compared as written and not as a pattern.
// hasconfig: and what git does not know are false, as git takes them.
bool include_if(std::string_view condition, const std::string& from, const IncludeContext& ctx) {
    const bool fold = condition.rfind("gitdir/i:", 0) == 0;
    if (fold || condition.rfind("gitdir:", 0) == 0) {
        const std::string& gitdir = ctx.repository().gitdir;
        if (gitdir.empty()) return false;
        std::string pattern(condition.substr(condition.find(':') + 1));
        size_t prefix = 0;  // the part compared as written
        // Another user's HOME (~user/) and git's %(prefix)/: not looked up, taken as no match.
        if ((pattern.rfind('~', 0) == 0 && pattern.rfind("~/", 0) != 0) || pattern.rfind("%(prefix)/", 0) == 0)
            return false;
        if (pattern.rfind("~/", 0) == 0) {
            if (ctx.home.empty()) return false;
            pattern = ctx.home + pattern.substr(1);
        } else if (pattern.rfind("./", 0) == 0) {
            char real[PATH_MAX];
            if (!real_path(from, real)) return false;
            const std::string dir(path_parent(real));
            pattern = dir + pattern.substr(1);
            prefix = dir.size() + 1;
        } else if (pattern.empty() || pattern[0] != '/') {
            pattern = "**/" + pattern;
        }
        if (!pattern.empty() && pattern.back() == '/') pattern += "**";
        if (prefix > 0) {
            if (gitdir.size() < prefix) return false;
            const auto same = [fold](char a, char b) {
                return fold ? std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b))
                            : a == b;
            };
            if (!std::equal(pattern.begin(), pattern.begin() + static_cast<std::ptrdiff_t>(prefix), gitdir.begin(),
                            same))
                return false;
        }
        return git_wildmatch(std::string_view(pattern).substr(prefix), std::string_view(gitdir).substr(prefix), fold,
                             ctx.steps_left);
    }
    if (condition.rfind("onbranch:", 0) == 0) {
        const std::string& branch = ctx.repository().branch;
        if (branch.empty()) return false;
        std::string pattern(condition.substr(9));
        if (!pattern.empty() && pattern.back() == '/') pattern += "**";
        return git_wildmatch(pattern, branch, false, ctx.steps_left);
    }
    return false;
}

// The last values of user.name and user.email in the git config file PATH and the files it
// includes (include.path, and includeIf.*.path where the condition holds), each taking effect
// where it is included, as git reads them, to git's depth of 10 (and 64 files in all). Read with
// git's own grammar (git_config.hpp).
struct GitIdentity {
    std::optional<std::string> name, email;
    std::string name_from, email_from;  // the file each was read from
    [[nodiscard]] const std::optional<std::string>& of(std::string_view key) const {
        return key == "user.name" ? name : email;
    }
    [[nodiscard]] const std::string& from(std::string_view key) const {
        return key == "user.name" ? name_from : email_from;
    }
};
void read_git_identity(const std::string& path, const IncludeContext& ctx, int depth, GitIdentity& out) {
    // A regular file only, never waiting on a FIFO, at most 1 MiB (as git reads a config file).
    constexpr off_t kMaxConfig = 1 << 20;
    if (ctx.files_left <= 0) return;
    --ctx.files_left;
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kMaxConfig) return;
    std::string buf(static_cast<size_t>(st.st_size), '\0');
    const ssize_t got = ::read(fd.get(), buf.data(), buf.size());
    if (got < 0) return;
    buf.resize(static_cast<size_t>(got));
    for (const auto& e : parse_git_config(buf).entries) {
        if (e.key == "user.name") {
            out.name = e.value;
            out.name_from = path;
        }
        if (e.key == "user.email") {
            out.email = e.value;
            out.email_from = path;
        }
        const std::string_view key = e.key;
        if (!e.value || e.value->empty() || depth >= 10 || !key.ends_with(".path")) continue;
        const bool plain = key == "include.path";
        const bool conditional = key.rfind("includeif.", 0) == 0 && key.size() > 15 &&
                                 include_if(key.substr(10, key.size() - 15), path, ctx);
        if (plain || conditional) {
            const std::string target = include_target(*e.value, path, ctx);
            if (!target.empty()) read_git_identity(target, ctx, depth + 1, out);
        }
    }
}
GitIdentity git_identity_in(const std::string& path, const IncludeContext& ctx) {
    GitIdentity out;
    read_git_identity(path, ctx, 0, out);
    return out;
}

// The caller's git identity for a private HOME that does not show ~/.gitconfig: user.name and
// user.email of the caller's global git config and what it includes, and nothing else of it,
// as GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n entries (so `git commit` has an author). Left out
// where git would not use it: the environment names an author or configures git itself, the
// workdir's repository sets the key, or --unsetenv GIT_CONFIG_COUNT asks for none; and where
// the jail shows ~/.gitconfig (-p git) and the value is in that file itself, not in a file it
// includes that the jail does not show.
void add_git_identity(const SettingsLayer& merged, const HostInfo& host, const Spec& s, std::vector<std::string>& env) {
    if (!s.private_home || host.home.empty() || env_value(env, "GIT_CONFIG_COUNT")) return;
    const std::string gitconfig = normalize_path(host.home + "/.gitconfig", "/");
    const bool shown = std::find(s.ro.begin(), s.ro.end(), gitconfig) != s.ro.end();  // -p git
    const auto unset = get_list(merged, "unsetenv");
    if (std::find(unset.begin(), unset.end(), "GIT_CONFIG_COUNT") != unset.end()) return;
    std::string xdg = config_home(host.home);
    const std::string global[] = {xdg.empty() ? std::string() : xdg + "/git/config", gitconfig};
    constexpr size_t kMaxValue = 256;
    // Each file read once, for both keys.
    IncludeContext ctx;
    ctx.home = host.home;
    ctx.spec = &s;
    const GitIdentity repo = s.workdir ? git_identity_in(workdir_git_dir(s) + "/config", ctx) : GitIdentity{};
    const GitIdentity globals[] = {global[0].empty() ? GitIdentity{} : git_identity_in(global[0], ctx),
                                   git_identity_in(global[1], ctx)};
    int n = 0;
    for (const auto& [key, author, committer] : {std::tuple{"user.name", "GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"},
                                                 std::tuple{"user.email", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"}}) {
        if (env_value(env, author) || env_value(env, committer)) continue;
        if (repo.of(key)) continue;
        std::optional<std::string> value;
        std::string from;
        for (const auto& file : globals) {  // git reads the XDG file first; ~/.gitconfig wins
            if (file.of(key)) {
                value = file.of(key);
                from = file.from(key);
            }
        }
        if (shown && from == gitconfig) continue;  // git reads it there itself
        if (!value || value->empty() || value->size() > kMaxValue || value->find('\n') != std::string::npos) continue;
        env.push_back("GIT_CONFIG_KEY_" + std::to_string(n) + "=" + key);
        env.push_back("GIT_CONFIG_VALUE_" + std::to_string(n) + "=" + *value);
        ++n;
    }
    if (n > 0) env.push_back("GIT_CONFIG_COUNT=" + std::to_string(n));
}

}  // namespace

// The command, when it is a program the host finds in HOME (pyenv's, nvm's, ~/.local/bin's)
// and the jail's private HOME does not show: inside, PATH may find another program or none.
void note_hidden_program(const HostInfo& host, const Spec& s, RunOptions& o) {
    if (!s.private_home || s.via_shell || s.argv.empty() || s.argv[0].find('/') != std::string::npos) return;
    if (host.home.empty() || host.home == "/") return;
    const std::string path = env_value(host.environ, "PATH").value_or("/usr/local/bin:/usr/bin:/bin");
    for (size_t start = 0; start <= path.size();) {
        const size_t end = std::min(path.find(':', start), path.size());
        const std::string dir = path.substr(start, end - start);
        start = end + 1;
        if (dir.empty() || dir[0] != '/') continue;
        const std::string exe = normalize_path(dir + "/" + s.argv[0], "/");
        if (::access(exe.c_str(), X_OK) != 0) continue;
        if (!path_under(exe, host.home)) return;
        auto shown = [&](const std::vector<std::string>& list) {
            return std::any_of(list.begin(), list.end(),
                               [&](const std::string& p) { return path_at_or_under(exe, p); });
        };
        if (shown(s.ro) || shown(s.rw) || (s.workdir && path_at_or_under(exe, *s.workdir))) return;
        o.program_note = "'" + s.argv[0] + "' is " + exe +
                         " on the host, in HOME, which the jail does not show (its HOME is private): inside, PATH "
                         "finds another program or none (--ro " +
                         dir + " shows it)";
        return;
    }
}

// The caller's environment, filtered, then the explicit --setenv edits. What was removed for
// its value is named (never shown) in a note: the name alone does not say why it went.
Status set_environment(const SettingsLayer& merged, const HostInfo& host, Spec& s, RunOptions& o) {
    CORDON_ASSIGN_OR_RETURN(const std::vector<std::string> base, command_environment(host));
    FilteredEnv filtered = EnvFilter(env_rules(merged)).apply(base);
    std::vector<std::string> env = std::move(filtered.kept);
    for (auto& removed : filtered.removed) {
        if (removed.why == EnvRemoval::ByValue || removed.why == EnvRemoval::GitSet) {
            o.env_value_removals.push_back(removed.name + " (" + std::string(describe(removed.what)) + ")");
        }
        s.env_removed.push_back(std::move(removed.name));
    }
    add_git_identity(merged, host, s, env);
    for (const auto& [name, value] : get_pairs(merged, "setenv")) {
        if (name.empty() || name.find('=') != std::string::npos) {
            return make_error("--setenv", "invalid variable name '" + name + "'");
        }
        const std::string prefix = name + "=";
        std::erase_if(env, [&prefix](const std::string& kv) { return kv.rfind(prefix, 0) == 0; });
        env.push_back(name + "=" + value);
    }
    s.env = env;
    return {};
}

}  // namespace cordon::spec_steps

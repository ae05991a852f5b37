#include "cordon/registries.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <ctime>

#include "cordon/fd.hpp"

namespace cordon {

namespace {

constexpr int kCommandTimeoutMs = 10000;
constexpr time_t kCacheSeconds = 3600;

std::string trim(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    size_t i = 0;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    return s.substr(i);
}

// ARGV's standard output (at most 4 KiB), run in DIR with stdin and stderr on /dev/null.
std::string run_for_output(const std::vector<std::string>& argv, const std::string& dir) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return "";
    UniqueFd rd(out[0]), wr(out[1]);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, wr.get(), 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addchdir_np(&fa, dir.c_str());
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    const int err = ::posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    wr.reset();
    if (err != 0) return "";
    std::string text;
    char buf[512];
    const auto deadline = std::time(nullptr) + kCommandTimeoutMs / 1000;
    for (;;) {
        struct pollfd p = {rd.get(), POLLIN, 0};
        if (std::time(nullptr) > deadline || ::poll(&p, 1, kCommandTimeoutMs) != 1) {
            ::kill(pid, SIGKILL);
            text.clear();
            break;
        }
        const ssize_t r = ::read(rd.get(), buf, sizeof buf);
        if (r <= 0) break;
        if (text.size() < 4096) text.append(buf, static_cast<size_t>(r));
    }
    ::waitpid(pid, nullptr, 0);
    return trim(text);
}

time_t mtime(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_mtime : 0;
}

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? trim(v) : std::string();
}

std::string first_line(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

Result<std::string> host_of(const std::string& var, const std::string& url, const std::string& from) {
    if (auto h = url_allow_host(url)) return *h;
    return make_error("${" + var + "}",
                      from.empty() ? "could not be found" : "'" + url + "' (from " + from + ") is not an http(s) URL");
}

// npm's registry: npm_config_registry (npm's own environment setting), else what
// `npm config get registry` says (the user's and the global npmrc; not the project's).
Result<std::string> npm_registry(const std::string& home, const std::string& cache_dir) {
    for (const char* name : {"npm_config_registry", "NPM_CONFIG_REGISTRY"}) {
        if (std::string v = env(name); !v.empty()) return host_of("NPM_REGISTRY_HOST", v, name);
    }
    const std::string url = first_line(cached_command_output({"npm", "config", "get", "registry"}, cache_dir,
                                                             "npm-registry", home, {home + "/.npmrc"}));
    if (url.empty()) {
        Error e =
            make_error("${NPM_REGISTRY_HOST}", "npm's registry is unknown: `npm config get registry` said nothing");
        e.hint = "set npm_config_registry, or use --allow-host with a profile of your own";
        return e;
    }
    return host_of("NPM_REGISTRY_HOST", url, "npm config get registry");
}

// pip's index and file hosts: PIP_INDEX_URL, else the index pip itself names as its default
// (and where that index serves its files).
Result<std::string> pip_host(const std::string& home, const std::string& cache_dir, bool files) {
    const std::string var = files ? "PIP_FILES_HOST" : "PIP_INDEX_HOST";
    if (std::string v = env("PIP_INDEX_URL"); !v.empty() && !files) return host_of(var, v, "PIP_INDEX_URL");
    const std::string out = cached_command_output(
        {"python3", "-c",
         "from pip._internal.models.index import PyPI; print(PyPI.url); print(PyPI.file_storage_domain)"},
        cache_dir, "pip-index", home, {});
    const size_t nl = out.find('\n');
    if (nl == std::string::npos) {
        Error e = make_error("${" + var + "}", "pip's index is unknown: python3 -m pip did not name it");
        e.hint = "set PIP_INDEX_URL, or use --allow-host with a profile of your own";
        return e;
    }
    return files ? host_of(var, "https://" + trim(out.substr(nl + 1)), "pip") : host_of(var, out.substr(0, nl), "pip");
}

// Go's module proxy (the first of GOPROXY that is one) and checksum database (GOSUMDB; its URL
// when one is given, else https://NAME), as `go env` says; without a database, the proxy again.
Result<std::string> go_host(const std::string& home, const std::string& cache_dir, bool sumdb) {
    const std::string var = sumdb ? "GO_SUMDB_HOST" : "GO_PROXY_HOST";
    const std::string out = cached_command_output({"go", "env", "GOPROXY", "GOSUMDB"}, cache_dir, "go-env", home, {});
    const size_t nl = out.find('\n');
    if (out.empty()) return make_error("${" + var + "}", "Go's module proxy is unknown: `go env GOPROXY` said nothing");
    std::string proxy;
    std::string list = out.substr(0, nl);
    for (size_t at = 0; at <= list.size();) {
        const size_t end = list.find_first_of(",|", at);
        std::string item = trim(list.substr(at, end == std::string::npos ? std::string::npos : end - at));
        if (item.rfind("http", 0) == 0) {
            proxy = item;
            break;
        }
        if (end == std::string::npos) break;
        at = end + 1;
    }
    if (proxy.empty()) return make_error("${" + var + "}", "GOPROXY names no proxy ('" + list + "')");
    std::string db = nl == std::string::npos ? "" : trim(out.substr(nl + 1));
    if (!sumdb || db.empty() || db == "off") return host_of(var, proxy, "GOPROXY");
    if (const size_t sp = db.find(' '); sp != std::string::npos)
        return host_of(var, trim(db.substr(sp + 1)), "GOSUMDB");
    return host_of(var, "https://" + db.substr(0, db.find('+')), "GOSUMDB");
}

}  // namespace

std::optional<std::string> url_allow_host(std::string_view url) {
    std::string_view rest;
    std::string_view default_port;
    if (url.rfind("https://", 0) == 0) {
        rest = url.substr(8);
        default_port = "443";
    } else if (url.rfind("http://", 0) == 0) {
        rest = url.substr(7);
        default_port = "80";
    } else {
        return std::nullopt;
    }
    std::string_view auth = rest.substr(0, rest.find_first_of("/?#"));
    if (const size_t at = auth.rfind('@'); at != std::string_view::npos) auth.remove_prefix(at + 1);
    const size_t colon = auth.rfind(':');
    if (colon != std::string_view::npos && auth.find(']', colon) == std::string_view::npos &&
        auth.substr(colon + 1) == default_port)
        auth = auth.substr(0, colon);
    if (auth.empty()) return std::nullopt;
    std::string out(auth);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string cached_command_output(const std::vector<std::string>& argv, const std::string& cache_dir,
                                  const std::string& name, const std::string& home,
                                  const std::vector<std::string>& newer_than) {
    const std::string cache = cache_dir.empty() ? "" : cache_dir + "/" + name;
    if (!cache.empty()) {
        const time_t cached = mtime(cache);
        bool fresh = cached != 0 && std::time(nullptr) - cached < kCacheSeconds;
        for (const auto& f : newer_than) fresh = fresh && mtime(f) < cached;
        if (fresh) {
            UniqueFd fd(::open(cache.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
            char buf[4096];
            const ssize_t r = fd ? ::read(fd.get(), buf, sizeof buf) : -1;
            if (r > 0) return trim(std::string(buf, static_cast<size_t>(r)));
        }
    }
    std::string out = run_for_output(argv, home.empty() ? "/" : home);
    if (!out.empty() && !cache.empty()) {
        (void)::mkdir(cache_dir.c_str(), 0700);
        const std::string tmp = cache + "." + std::to_string(::getpid());
        UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
        if (fd && write_all(fd.get(), out.data(), out.size()) && ::rename(tmp.c_str(), cache.c_str()) == 0) return out;
        (void)::unlink(tmp.c_str());
    }
    return out;
}

std::vector<DerivedVar> registry_vars(const std::string& home, const std::string& cache_dir) {
    return {
        {"NPM_REGISTRY_HOST", [=] { return npm_registry(home, cache_dir); }},
        {"PIP_INDEX_HOST", [=] { return pip_host(home, cache_dir, false); }},
        {"PIP_FILES_HOST", [=] { return pip_host(home, cache_dir, true); }},
        {"GO_PROXY_HOST", [=] { return go_host(home, cache_dir, false); }},
        {"GO_SUMDB_HOST", [=] { return go_host(home, cache_dir, true); }},
    };
}

}  // namespace cordon

// Where the package managers' profiles may connect (cordon-profile(5), DERIVED HOSTS): their
// registries' hosts, taken at run time from each tool's own configuration, never written into a
// profile. A profile names them as variables (${NPM_REGISTRY_HOST}, ...) in its allow-host list.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.hpp"

namespace cordon {

// "HOST" of a URL "scheme://[user@]HOST[:PORT][/...]", with ":PORT" when PORT is not the
// scheme's default; nullopt for what is no http(s) URL.
std::optional<std::string> url_allow_host(std::string_view url);

// A line of a command's output, the command run with its working directory in HOME (so that no
// project's configuration, which the jail may have written, is read) and cached for an hour in
// CACHE_DIR/NAME (a file newer than the cache, such as the tool's configuration, makes it
// stale). Empty if the command is missing or says nothing within its time.
std::string cached_command_output(const std::vector<std::string>& argv, const std::string& cache_dir,
                                  const std::string& name, const std::string& home,
                                  const std::vector<std::string>& newer_than);

// The derived variables, for profile_vars: NAME -> how to compute it (evaluated only when a
// profile uses it).
struct DerivedVar {
    std::string name;
    std::function<Result<std::string>()> compute;
};
std::vector<DerivedVar> registry_vars(const std::string& home, const std::string& cache_dir);

}  // namespace cordon

// Profiles: TOML files whose keys are the long option names (SPEC §5).
#pragma once

#ifdef CORDON_JAIL
#error "the jail does not see the CLI: it takes a Spec (CMakeLists.txt defines CORDON_JAIL for src/jail)"
#endif
#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cordon/error.hpp"
#include "cordon/settings.hpp"

namespace cordon {

// Values for ${HOME}, ${WORKDIR}, ${XDG_CACHE_HOME}, ${XDG_CONFIG_HOME}, ${UID}, ${USER}, and the
// package registries' hosts (${NPM_REGISTRY_HOST}, ...: cordon/registries.hpp).
// Without $USER in the environment, ${USER} comes from the password database (/etc/passwd),
// read only when a profile uses it.
struct Vars : std::map<std::string, std::string> {
    using std::map<std::string, std::string>::map;
    std::function<std::string()> lazy_user;  // ${USER} when the map has no USER
    // Computed when a profile uses them, once (the registries' hosts, cordon/registries.hpp).
    std::map<std::string, std::function<Result<std::string>()>> derived;
};

// Parse one profile file's text into a SettingsLayer. `path` is used in messages (file:line:col).
// `extends` receives the parents it names, in order.
// `extends_where`, if given, receives the file:line:col of each parent's name. `item_origins`:
// whether to record every list element's file:line:col (only `cordon profile show` shows them;
// a run does without the hundreds of strings).
Result<SettingsLayer> parse_profile(const std::string& text, const std::string& path, const Vars& vars,
                                    std::vector<std::string>* extends,
                                    std::vector<std::string>* extends_where = nullptr, bool item_origins = true);

// Find NAME on the profile search path (a value containing '/' is a path).
Result<std::string> find_profile(const std::string& name_or_path);

// Load the named profiles with their parents (depth first, each file once; a cycle is an
// error) and merge them in order into one SettingsLayer.
Result<SettingsLayer> load_profiles(const std::vector<std::string>& names, const Vars& vars, bool item_origins = false);

// Replace ${NAME} in `text`; an unknown or undefined variable is an error naming it.
Result<std::string> expand_vars(const std::string& text, const Vars& vars);

}  // namespace cordon

namespace cordon {

// The variables a profile may use, for the caller (HOME, USER, UID, XDG_*; WORKDIR = `workdir`).
Vars profile_vars(const std::string& home, const std::string& user, unsigned uid, const std::string& workdir);

// One profile file found on the search path.
struct ProfileEntry {
    std::string name;
    std::string path;
    std::string description;
    std::vector<std::string> shadowed;  // same name further down the search path
};
std::vector<ProfileEntry> list_profiles();

// `cordon profile list | show NAME [--json]`; ARGS exclude "profile". Prints; returns the status.
int main_profile(const std::vector<std::string>& args);

}  // namespace cordon

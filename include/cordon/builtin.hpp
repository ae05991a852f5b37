// The shipped profiles and command policies are part of the executable (src/gen compiles them
// in at build time). A NAME found on no directory of its search path is the built-in file of
// that name, so a copied executable works on its own; a file of the same name on the search
// path overrides the built-in one.
#pragma once

#ifdef CORDON_JAIL
#error "the jail does not see the CLI: it takes a Spec (CMakeLists.txt defines CORDON_JAIL for src/jail)"
#endif
#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.hpp"
#include "cordon/policy.hpp"
#include "cordon/profile.hpp"

namespace cordon {

// A built-in file's name where a path would be: "built-in:profiles/NAME.toml",
// "built-in:policies/NAME.toml". Messages, --dry-run and `cordon profile list` show it, and it
// names the built-in file wherever a profile or command policy path is accepted.
inline constexpr std::string_view kBuiltinPrefix = "built-in:";

[[nodiscard]] bool is_builtin(std::string_view path);

// "built-in:profiles/NAME.toml" if a profile NAME is built in.
std::optional<std::string> builtin_profile(std::string_view name);

// PATH's text: the built-in file it names, or the file on disk.
Result<std::string> read_data_file(const std::string& path);

// Completes a listing of the profile search path (list_profiles) with the built-in profiles:
// one that no file on the path names is an entry of its own; one that a file overrides is
// listed among what that entry shadows, unless a file of that name holds exactly its text (an
// installed copy of the same profile).
void add_builtin_profiles(std::vector<ProfileEntry>& entries);

// policy::find_policy, then the built-in policy NAME.
Result<std::string> resolve_policy(const std::string& name_or_path);
// policy::load with the same fallback.
Result<policy::PolicySet> load_policies(const std::vector<std::string>& names_or_paths);
// Every built-in policy's name ("built-in:policies/NAME.toml"), in name order.
std::vector<std::string> builtin_policies();

}  // namespace cordon

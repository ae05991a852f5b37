// Where cordon finds its data files.
#pragma once

#include <string>
#include <vector>

namespace cordon {

// <prefix>/share/cordon for the running executable (/proc/self/exe/../../share/cordon),
// so a build tree (<build>/bin/cordon, <build>/share/cordon) works like an installed one.
std::string data_dir();

// The search path for KIND ("profiles" or "policies"): $ENV_VAR (colon list),
// $XDG_CONFIG_HOME/cordon/KIND (or ~/.config/cordon/KIND), /etc/cordon/KIND, data_dir()/KIND.
std::vector<std::string> search_path(const std::string& kind, const char* env_var);

}  // namespace cordon

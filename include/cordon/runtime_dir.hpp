// cordon's private directories on the host, outside every jail: where runs of one user meet
// (placeholder turns, RepoWatch's marks, caches and watchers).
#pragma once

#include <string>

namespace cordon {

// The private runtime directory: /run/cordon for root, $XDG_RUNTIME_DIR/cordon (when the user
// owns $XDG_RUNTIME_DIR), else /tmp/cordon-UID. Made if missing; "" when it is not a directory
// of this user's with mode 0700 (then the callers do without it).
const std::string& private_runtime_dir();

// /tmp/cordon-UID: the fallback above, and the placeholder pool of last resort.
std::string private_tmp_dir();

}  // namespace cordon

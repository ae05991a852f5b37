#include "cordon/version.hpp"
namespace cordon {
const char* version_string() {
    return "cordon " CORDON_VERSION;
}
}  // namespace cordon

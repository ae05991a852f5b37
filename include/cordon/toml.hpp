// The one way cordon parses TOML (profiles, policies, syscall policies).
#pragma once

#include <toml++/toml.h>
#include <string>
#include <string_view>

#include "cordon/error.hpp"

namespace cordon {

// Parse TEXT (named PATH in messages); errors read "PATH:LINE:COL: why".
//
// toml++ 3.3 (Debian 12) reaches __builtin_unreachable() when it asks whether certain non-ASCII
// characters are whitespace (U+00A1-U+0499, U+2C5E-U+3057, U+FB26-U+FEFE, outside strings; found
// by fuzz/policy_fuzz.cpp). So toml++ never sees them: they are moved into the Private Use Area
// before parsing (which keeps line and column numbers) and moved back in every string value.
Result<toml::table> parse_toml(std::string_view text, const std::string& path);

// The two halves of that mapping, exposed for tests. shield_unicode fails (nullopt) on text
// that already holds characters of the private range it uses.
std::optional<std::string> shield_unicode(std::string_view text);
std::string unshield_unicode(std::string_view text);

}  // namespace cordon

// Settings in text that carry a credential (src/cli/secret_settings.cpp), for the value rules
// of src/cli/secret_values.cpp.
#pragma once

#include <string_view>

namespace cordon::secretsettings {

// A value that names a state rather than hiding one: 0 1 on off true false yes no, any case.
bool flag_word(std::string_view w);

// KEY=VALUE, KEY = VALUE, "KEY": "VALUE", YAML's KEY: VALUE, netrc and XML with a credential's
// KEY and a VALUE that looks like a secret.
bool has_credential_setting(std::string_view v);

// USER:PASSWORD and nothing else, with a password that looks like one.
bool plain_user_password(std::string_view v);

}  // namespace cordon::secretsettings

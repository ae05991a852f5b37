// Which of the caller's environment variables stay out of the jail (SPEC §4, host secrets):
// names that say "credential", values that are one whatever the name, and git's configuration
// variables as the one set git reads them as. Pure: the rules come from the merged profile
// layer, the environment from HostInfo, and nothing here prints a value.
#pragma once

#ifdef CORDON_JAIL
#error "the jail does not see the CLI: it takes a Spec (CMakeLists.txt defines CORDON_JAIL for src/jail)"
#endif
#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cordon/glob.hpp"
#include "cordon/settings.hpp"

namespace cordon {

// What a value holds that makes it a credential, whatever the variable is called.
enum class SecretValue : unsigned char {
    None,
    UrlPassword,    // scheme://user:password@host, or scheme://TOKEN@host (a long secret-looking user)
    AuthHeader,     // Authorization: ..., Bearer TOKEN, Basic base64(user:password), Cookie: ...
    PrivateKey,     // -----BEGIN ... PRIVATE KEY-----, also base64-encoded
    Token,          // a well-known token prefix: ghp_, glpat-, xoxb-, AKIA, npm_, sk-, AIza, ...
    Jwt,            // eyJ....eyJ....
    Setting,        // password=..., AccountKey=..., "client_secret": "..." (connection strings, JSON)
    GitCredential,  // git configuration carrying http.extraHeader, a credential helper, askpass
    UserPassword,   // user:password and nothing else (ETCDCTL_USER=root:pw, Bundler's BUNDLE_<HOST>)
};

// "HTTP credentials", "a private key", ...: for notes, which name variables, never values.
std::string_view describe(SecretValue what);

// Whether VALUE holds a URL with a password (an empty password does not count), or with a user
// name that is a token: 32 characters or more of letters, digits and '_', with both letters
// and digits.
bool has_url_password(std::string_view value);

// Whether VALUE is plainly no secret, as KIND says: "flag" (true false yes no on off, any case,
// or a number of at most 3 digits), "fingerprint" (a PGP key's: 16, 40 or 64 hex digits, maybe
// after 0x, maybe in groups of 4). Any other KIND: false.
bool value_is_plain(std::string_view value, std::string_view kind);

// The first credential found in VALUE (any case, anywhere: after leading blanks, on any line,
// inside base64), or None. URL passwords only when URL_PASSWORDS; the rest only when OTHERS.
SecretValue secret_in_value(std::string_view value, bool url_passwords = true, bool others = true);

// NAME split into words, upper case: at every character that is not a letter or a digit,
// between a lower-case letter and an upper-case one (authToken), before the last capital of a
// run followed by lower case (JWTSecret), and between letters and digits (TOKEN2, OAUTH2).
std::vector<std::string> name_words(std::string_view name);

// The profile's rules (the keys env-strip, env-strip-words, env-strip-except,
// env-strip-except-plain, env-strip-url-passwords, env-strip-secret-values, env-pass, unsetenv,
// clearenv).
struct EnvRules {
    std::vector<std::string> strip;         // globs on the upper-cased name
    std::vector<std::string> strip_words;   // words, or runs of words written WORD_WORD
    std::vector<std::string> strip_except;  // globs: names the name rules leave (values still checked)
    // glob, kind: names the name rules leave when the value is plain (value_is_plain)
    std::vector<std::pair<std::string, std::string>> except_plain;
    bool url_passwords = false;
    bool secret_values = false;
    std::vector<std::string> pass;   // kept whatever the rules say (any case); not with clear
    std::vector<std::string> unset;  // removed (exact name)
    bool clear = false;
};

// The rules of MERGED, the command line over the profiles.
EnvRules env_rules(const SettingsLayer& merged);

// Why a variable was removed.
enum class EnvRemoval : unsigned char { Cleared, Unset, ByName, ByValue, GitSet };

struct RemovedVar {
    std::string name;
    EnvRemoval why = EnvRemoval::ByName;
    SecretValue what = SecretValue::None;  // ByValue and GitSet: what the value (or the set) holds
};

struct FilteredEnv {
    std::vector<std::string> kept;  // NAME=VALUE, in the caller's order
    std::vector<RemovedVar> removed;
};

class EnvFilter {
public:
    explicit EnvFilter(EnvRules rules);

    // Whether the name rules remove NAME (strip globs and words, less strip_except).
    [[nodiscard]] bool name_is_credential(std::string_view name) const;
    // Whether an except_plain entry leaves NAME, for VALUE.
    [[nodiscard]] bool plain_exception(std::string_view name, std::string_view value) const;
    // VARS (NAME=VALUE each) filtered. GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n> and
    // GIT_CONFIG_VALUE_<n> go together when any pair carries a credential: git reads them as one
    // set and refuses a set with a member missing.
    [[nodiscard]] FilteredEnv apply(const std::vector<std::string>& vars) const;

private:
    [[nodiscard]] bool passed(std::string_view name) const;

    EnvRules rules_;
    std::vector<Wildcard> strip_, except_;
    std::vector<std::pair<Wildcard, std::string>> except_plain_;
    std::vector<std::vector<std::string>> words_;
};

}  // namespace cordon

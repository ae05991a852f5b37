// What makes a value a credential, whatever the variable's name (cordon/env_filter.hpp).
#include <algorithm>
#include <array>
#include <optional>

#include "cordon/env_filter.hpp"
#include "env_text.hpp"
#include "secret_settings.hpp"

namespace cordon {

namespace {

using namespace envtext;
using namespace secretsettings;

bool base64_char(char c) {
    return is_alnum(c) || c == '+' || c == '/' || c == '-' || c == '_';
}

int base64_value(char c) {
    if (is_upper(c)) return c - 'A';
    if (is_lower(c)) return c - 'a' + 26;
    if (is_digit(c)) return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

// TEXT decoded as base64 (standard or URL alphabet, padding and blanks skipped), or nullopt
// when something else is in it.
std::optional<std::string> base64_decode(std::string_view text) {
    std::string out;
    unsigned acc = 0;
    int bits = 0;
    for (char c : text) {
        if (is_blank(c) || c == '=') continue;
        const int v = base64_value(c);
        if (v < 0) return std::nullopt;
        acc = (acc << 6U) | static_cast<unsigned>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> static_cast<unsigned>(bits)) & 0xFFU);
        }
    }
    return out;
}

bool has_private_key(std::string_view v);

// A base64-encoded PEM block inside other text (a kubeconfig's client-key-data: LS0tLS1CRUdJTi...):
// "LS0tLS1CRUdJT" is how "-----BEGIN" starts in base64.
bool has_embedded_base64_key(std::string_view v) {
    for (size_t at = v.find("LS0tLS1CRUdJT"); at != std::string_view::npos; at = v.find("LS0tLS1CRUdJT", at)) {
        const size_t n = run_length(v, at, [](char c) { return base64_char(c) || c == '='; });
        auto decoded = base64_decode(v.substr(at, n));
        if (decoded && decoded->find("-----", 0) == 0 && has_private_key(*decoded)) return true;
        at += n;  // each run decoded once
    }
    return false;
}

// -----BEGIN <label with PRIVATE and KEY>----- (PEM: RSA, EC, OPENSSH, ENCRYPTED, PGP ... BLOCK),
// or a PuTTY key file.
bool has_private_key(std::string_view v) {
    if (v.find("-----") == std::string_view::npos) {
        return v.find("PuTTY-User-Key-File-") != std::string_view::npos || has_embedded_base64_key(v);
    }
    for (size_t at = find_ci(v, "-----begin"); at != std::string_view::npos; at = find_ci(v, "-----begin", at + 10)) {
        const size_t label = at + 10;
        const size_t end = v.find("-----", label);
        if (end == std::string_view::npos || end - label > 80) continue;
        const std::string_view l = v.substr(label, end - label);
        if (find_ci(l, "private") != std::string_view::npos && find_ci(l, "key") != std::string_view::npos) return true;
    }
    return v.find("PuTTY-User-Key-File-") != std::string_view::npos || has_embedded_base64_key(v);
}

// Header names whose value is a credential, as an HTTP header line or git's http.extraHeader
// would carry them ("authorization" also ends "proxy-authorization").
constexpr std::array<std::string_view, 7> kCredentialHeaders = {
    "authorization", "private-token", "job-token", "deploy-token", "x-api-key", "x-auth-token", "cookie",
};

bool has_auth_header(std::string_view v) {
    // Every form has a colon or a blank: most values (paths, names, numbers) are passed over here.
    const bool colon = v.find(':') != std::string_view::npos;
    if (!colon && v.find_first_of(" \t") == std::string_view::npos) return false;
    for (std::string_view header : kCredentialHeaders) {
        if (!colon) break;
        for (size_t at = find_ci(v, header); at != std::string_view::npos; at = find_ci(v, header, at + 1)) {
            if (!boundary_before(v, at)) continue;
            size_t p = at + header.size();
            p += run_length(v, p, [](char c) { return c == ' ' || c == '\t'; });
            if (p >= v.size() || v[p] != ':') continue;
            ++p;
            p += run_length(v, p, [](char c) { return c == ' ' || c == '\t'; });
            if (p < v.size() && !is_blank(v[p])) return true;
        }
    }
    // The credentials without the header's name: "Bearer TOKEN", "Basic base64(user:password)".
    for (size_t at = find_ci(v, "bearer"); at != std::string_view::npos; at = find_ci(v, "bearer", at + 1)) {
        if (!boundary_before(v, at)) continue;
        size_t p = at + 6;
        const size_t blanks = run_length(v, p, [](char c) { return c == ' ' || c == '\t'; });
        if (blanks == 0) continue;
        p += blanks;
        const size_t n = run_length(v, p, [](char c) {
            return is_alnum(c) || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=' || c == '-';
        });
        const std::string_view token = v.substr(p, n);
        if (n >= 24 || (n >= 16 && std::any_of(token.begin(), token.end(), is_digit))) return true;
    }
    for (size_t at = find_ci(v, "basic"); at != std::string_view::npos; at = find_ci(v, "basic", at + 1)) {
        if (!boundary_before(v, at)) continue;
        size_t p = at + 5;
        const size_t blanks = run_length(v, p, [](char c) { return c == ' ' || c == '\t'; });
        if (blanks == 0) continue;
        p += blanks;
        const size_t n = run_length(v, p, [](char c) { return base64_char(c) || c == '='; });
        if (n < 8) continue;
        auto decoded = base64_decode(v.substr(p, n));
        if (decoded && decoded->find(':') != std::string::npos &&
            std::all_of(decoded->begin(), decoded->end(), [](char c) { return c >= 0x20 && c < 0x7f; })) {
            return true;
        }
    }
    return false;
}

// The characters a token's body is made of.
enum class Body : unsigned char { Alnum, Word, Dashed, Dotted, UpperDigit, Alpha };

bool body_char(Body b, char c) {
    switch (b) {
        case Body::Alnum:
            return is_alnum(c);
        case Body::Word:
            return is_alnum(c) || c == '_';
        case Body::Dashed:
            return is_alnum(c) || c == '_' || c == '-';
        case Body::Dotted:
            return is_alnum(c) || c == '_' || c == '-' || c == '.';
        case Body::UpperDigit:
            return is_upper(c) || is_digit(c);
        case Body::Alpha:
            return is_upper(c) || is_lower(c);
    }
    return false;
}

struct TokenPrefix {
    std::string_view prefix;  // case-sensitive, as the issuer writes it
    size_t min_body;          // characters after the prefix, at least
    Body body;
    bool exact = false;        // the body is exactly MIN_BODY long (AKIA...: 16, then no more)
    bool needs_digit = false;  // a generic prefix (sk-): the body must look random
};

// Issuers' documented token formats. The minimum lengths are below the real ones (GitHub's are
// 36 after ghp_, GitLab's 20 after glpat-) so that a format's future variant still counts, and
// far above words that start the same way.
constexpr auto kTokenPrefixes = std::to_array<TokenPrefix>({
    {"ghp_", 30, Body::Alnum},  // GitHub: personal, OAuth, user-to-server, server-to-server, refresh
    {"gho_", 30, Body::Alnum},
    {"ghu_", 30, Body::Alnum},
    {"ghs_", 30, Body::Alnum},
    {"ghr_", 30, Body::Alnum},
    {"github_pat_", 40, Body::Word},  // GitHub fine-grained
    {"glpat-", 20, Body::Dashed},     // GitLab: personal, deploy, runner, trigger, CI build, feed,
    {"gldt-", 20, Body::Dashed},      // OAuth application secret, incoming mail
    {"glrt-", 20, Body::Dashed},
    {"glptt-", 20, Body::Dashed},
    {"glcbt-", 20, Body::Dashed},
    {"glft-", 20, Body::Dashed},
    {"gloas-", 20, Body::Dashed},
    {"glimt-", 20, Body::Dashed},
    {"xoxa-", 10, Body::Dashed},  // Slack: app, bot, refresh, user, session tokens; app-level
    {"xoxb-", 10, Body::Dashed},
    {"xoxe-", 10, Body::Dashed},
    {"xoxp-", 10, Body::Dashed},
    {"xoxr-", 10, Body::Dashed},
    {"xoxs-", 10, Body::Dashed},
    {"xapp-", 10, Body::Dashed},
    {"AKIA", 16, Body::UpperDigit, true},  // AWS access key ids: long-term, temporary (STS)
    {"ASIA", 16, Body::UpperDigit, true},
    {"npm_", 36, Body::Alnum},      // npm access tokens
    {"sk_live_", 16, Body::Alnum},  // Stripe secret and restricted keys, webhook secrets
    {"rk_live_", 16, Body::Alnum},
    {"sk_test_", 16, Body::Alnum},
    {"whsec_", 24, Body::Alnum},
    {"sk-", 32, Body::Dashed, false, true},      // OpenAI (sk-, sk-proj-), Anthropic (sk-ant-)
    {"AIza", 35, Body::Dashed},                  // Google API keys
    {"hf_", 30, Body::Alpha},                    // Hugging Face
    {"pypi-AgEIcHlwaS5vcmc", 20, Body::Dashed},  // PyPI: a macaroon for pypi.org
    {"dckr_pat_", 20, Body::Dashed},             // Docker Hub
    {"dop_v1_", 40, Body::Alnum},                // DigitalOcean
    {"shpat_", 32, Body::Alnum},                 // Shopify
    {"shpss_", 32, Body::Alnum},
    {"SG.", 60, Body::Dotted},      // SendGrid: SG.<id>.<secret>
    {"ATATT", 50, Body::Dashed},    // Atlassian API tokens
    {"glsoat-", 20, Body::Dashed},  // GitLab service account
    {"hvs.", 20, Body::Dashed},     // HashiCorp Vault service and batch tokens
    {"hvb.", 20, Body::Dashed},
    {"AGE-SECRET-KEY-1", 50, Body::UpperDigit},  // age's private keys
    {"tskey-", 20, Body::Dashed},                // Tailscale
    {"squ_", 30, Body::Alnum},                   // SonarQube: user, project, global analysis tokens
    {"sqp_", 30, Body::Alnum},
    {"sqa_", 30, Body::Alnum},
});

bool token_at(std::string_view v, size_t pos, const TokenPrefix& t) {
    if (v.compare(pos, t.prefix.size(), t.prefix) != 0) return false;
    const size_t start = pos + t.prefix.size();
    // Enough of the body to judge it: its exact length and the character after it, or the
    // minimum and room to find a digit.
    const size_t cap = t.exact ? t.min_body + 1 : std::max<size_t>(t.min_body, 256);
    const size_t n = run_length(
        v, start, [&](char c) { return body_char(t.body, c); }, cap);
    if (t.exact ? n != t.min_body || (start + n < v.size() && is_alnum(v[start + n])) : n < t.min_body) return false;
    if (t.needs_digit) {
        const std::string_view body = v.substr(start, n);
        return std::any_of(body.begin(), body.end(), is_digit);
    }
    return true;
}

// A JSON Web Token: base64url of '{"...' twice, and a signature (empty for alg "none").
bool jwt_at(std::string_view v, size_t pos) {
    auto segment = [&](size_t p, size_t cap) {
        return v.compare(p, 3, "eyJ") == 0 ? run_length(
                                                 v, p, [](char c) { return body_char(Body::Dashed, c); }, cap)
                                           : 0;
    };
    // A header is a few dozen characters (alg, typ, kid); the claims may be long, and are read
    // only after a header.
    const size_t header = segment(pos, 2048);
    if (header < 10 || pos + header >= v.size() || v[pos + header] != '.') return false;
    const size_t claims = segment(pos + header + 1, std::string_view::npos);
    const size_t end = pos + header + 1 + claims;
    return claims >= 10 && end < v.size() && v[end] == '.';
}

// The characters a token of kTokenPrefixes, or a JWT, starts with.
constexpr std::array<bool, 256> kTokenStarts = [] {
    std::array<bool, 256> starts{};
    for (const auto& t : kTokenPrefixes) starts[static_cast<unsigned char>(t.prefix[0])] = true;
    starts['e'] = true;
    return starts;
}();

SecretValue token_in(std::string_view v) {
    for (size_t pos = 0; pos < v.size(); ++pos) {
        const char c = v[pos];
        if (!kTokenStarts[static_cast<unsigned char>(c)] || !boundary_before(v, pos)) continue;
        if (c == 'e' && jwt_at(v, pos)) return SecretValue::Jwt;
        for (const auto& t : kTokenPrefixes) {
            if (t.prefix[0] == c && token_at(v, pos, t)) return SecretValue::Token;
        }
    }
    return SecretValue::None;
}

// A URL whose path is the secret: whoever has it may post as the hook or the bot (Slack's and
// Discord's webhooks, Teams' incoming webhooks, a Telegram bot's token after /bot). A marker,
// then at least MIN characters of the path's alphabet.
struct SecretPath {
    std::string_view marker;
    size_t min;
};
constexpr auto kSecretPaths = std::to_array<SecretPath>({
    {"hooks.slack.com/services/", 20},
    {"hooks.slack.com/workflows/", 20},
    {"hooks.slack.com/triggers/", 20},
    {"discord.com/api/webhooks/", 30},
    {"discordapp.com/api/webhooks/", 30},
    {"webhook.office.com/webhookb2/", 30},
    {"api.telegram.org/bot", 30},
});
bool has_secret_path(std::string_view v) {
    for (const auto& sp : kSecretPaths) {
        for (size_t at = find_ci(v, sp.marker); at != std::string_view::npos; at = find_ci(v, sp.marker, at + 1)) {
            const size_t p = at + sp.marker.size();
            const size_t n = run_length(
                v, p, [](char c) { return is_alnum(c) || c == '/' || c == '_' || c == '-' || c == ':' || c == '@'; },
                sp.min);
            if (n >= sp.min) return true;
        }
    }
    return false;
}

// What VALUE holds on its face, without decoding anything.
SecretValue plain_secret(std::string_view value, bool url_passwords, bool others) {
    if (url_passwords && has_url_password(value)) return SecretValue::UrlPassword;
    if (!others) return SecretValue::None;
    if (has_private_key(value)) return SecretValue::PrivateKey;
    if (has_auth_header(value)) return SecretValue::AuthHeader;
    if (SecretValue t = token_in(value); t != SecretValue::None) return t;
    if (has_secret_path(value)) return SecretValue::Token;
    if (has_credential_setting(value)) return SecretValue::Setting;
    if (plain_user_password(value)) return SecretValue::UserPassword;
    return SecretValue::None;
}

// VALUE decoded, when it is nothing but base64 (line breaks allowed, blanks around it) of at
// least 16 characters; nullopt otherwise.
std::optional<std::string> base64_text(std::string_view value) {
    while (!value.empty() && is_blank(value.front())) value.remove_prefix(1);
    while (!value.empty() && is_blank(value.back())) value.remove_suffix(1);
    if (value.size() < 16 || !std::all_of(value.begin(), value.end(), [](char c) {
            return base64_char(c) || c == '=' || c == '\n' || c == '\r';
        })) {
        return std::nullopt;
    }
    return base64_decode(value);
}

// At least 95% printable ASCII or blanks.
bool mostly_text(std::string_view d) {
    const auto text = std::count_if(d.begin(), d.end(), [](char c) { return (c >= 0x20 && c < 0x7f) || is_blank(c); });
    return static_cast<size_t>(text) * 20 >= d.size() * 19;
}

// USER:PASSWORD and nothing else, in printable ASCII without blanks: what Basic credentials and
// npm's _auth encode. HOST:PORT (digits after the colon) is not.
bool user_password(std::string_view text) {
    const size_t colon = text.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 >= text.size()) return false;
    const std::string_view after = text.substr(colon + 1);
    return !std::all_of(after.begin(), after.end(), is_digit) &&
           std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

}  // namespace

std::string_view describe(SecretValue what) {
    switch (what) {
        case SecretValue::None:
            return "nothing";
        case SecretValue::UrlPassword:
            return "a URL with a password";
        case SecretValue::AuthHeader:
            return "HTTP credentials";
        case SecretValue::PrivateKey:
            return "a private key";
        case SecretValue::Token:
            return "a token of a known issuer";
        case SecretValue::Jwt:
            return "a JSON Web Token";
        case SecretValue::Setting:
            return "a password or key setting";
        case SecretValue::GitCredential:
            return "git credentials";
        case SecretValue::UserPassword:
            return "a user name and password";
    }
    return "a credential";
}

namespace {

// A user name that is a token (https://TOKEN@github.com/..., Azure DevOps' PAT): long, letters
// and digits (and '_'), both. Not '-': a long hyphenated name is a name; the tokens that hold
// one (glpat-...) are found by their prefix.
bool token_user(std::string_view user) {
    return user.size() >= 32 &&
           std::all_of(user.begin(), user.end(), [](char c) { return body_char(Body::Word, c); }) &&
           std::any_of(user.begin(), user.end(), is_digit) &&
           std::any_of(user.begin(), user.end(), [](char c) { return is_upper(c) || is_lower(c); });
}

}  // namespace

bool has_url_password(std::string_view value) {
    for (size_t at = value.find("://"); at != std::string_view::npos; at = value.find("://", at + 3)) {
        // The user: up to the first ':', or to the end of the authority (a token alone as the
        // user). Each scan is bounded, so many "://" in a long value stay linear.
        const size_t u = at + 3;
        const size_t user_len = run_length(
            value, u,
            [](char c) { return !is_blank(c) && std::string_view(":/?#\"'").find(c) == std::string_view::npos; }, 256);
        const std::string_view user = value.substr(u, user_len);
        size_t p = u + user_len;
        if (p >= value.size() || value[p] != ':') {
            const size_t last_at = user.rfind('@');
            if (last_at != std::string_view::npos && token_user(user.substr(0, last_at))) return true;
            continue;
        }
        // The password: to the '@' before the host. libpq and SQLAlchemy take '?', '#', quotes
        // and blanks into it; a port before a query or text does not count (host:8080?next=a@b).
        ++p;
        const size_t n = run_length(
            value, p, [](char c) { return c != '@' && c != '/' && c != '\n' && c != '\r'; }, 256);
        if (n == 0 || p + n >= value.size() || value[p + n] != '@' || is_blank(value[p])) continue;
        const std::string_view password = value.substr(p, n);
        const size_t odd = password.find_first_of("?#\"' \t");
        if (odd != std::string_view::npos) {
            const std::string_view before = password.substr(0, odd);
            if (before.empty() || std::all_of(before.begin(), before.end(), is_digit)) continue;
        }
        return true;
    }
    return false;
}

bool value_is_plain(std::string_view value, std::string_view kind) {
    if (kind == "flag") {
        return flag_word(value) ||
               (!value.empty() && value.size() <= 3 && std::all_of(value.begin(), value.end(), is_digit));
    }
    if (kind == "fingerprint") {
        if (value.size() > 2 && value[0] == '0' && (value[1] == 'x' || value[1] == 'X')) value.remove_prefix(2);
        size_t digits = 0;
        size_t group = 0;
        for (size_t i = 0; i < value.size(); ++i) {
            const char c = value[i];
            if (c == ' ') {
                // gpg --fingerprint: groups of 4, two blanks in the middle
                if (i == 0) return false;
                if (value[i - 1] == ' ') {
                    if (i >= 2 && value[i - 2] == ' ') return false;
                    continue;
                }
                if (group != 4) return false;
                group = 0;
                continue;
            }
            if (!is_digit(c) && !(to_lower(c) >= 'a' && to_lower(c) <= 'f')) return false;
            ++digits;
            ++group;
        }
        return (digits == 16 || digits == 40 || digits == 64) && value.back() != ' ';
    }
    return false;
}

SecretValue secret_in_value(std::string_view value, bool url_passwords, bool others) {
    if (SecretValue plain = plain_secret(value, url_passwords, others); plain != SecretValue::None || !others) {
        return plain;
    }
    // A value that is all base64 may be a key, a credentials file or user:password encoded to fit
    // in a variable (CI systems' secret variables often are), once or twice; deeper is not
    // looked for.
    std::string text(value);
    for (int depth = 0; depth < 2; ++depth) {
        auto decoded = base64_text(text);
        // Only text can be a key, a token or credentials: random bytes (a hash, an id) are not
        // looked at.
        if (!decoded || !mostly_text(*decoded)) break;
        if (user_password(*decoded)) return SecretValue::AuthHeader;
        if (SecretValue inner = plain_secret(*decoded, url_passwords, true); inner != SecretValue::None) return inner;
        text = std::move(*decoded);
    }
    return SecretValue::None;
}

}  // namespace cordon

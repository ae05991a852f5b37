// Settings in text that carry a credential: KEY=VALUE and its kin in the syntaxes of connection
// strings, command lines, config files, JSON, YAML, netrc and XML, and user:password values
// (secret_settings.hpp). Each scan is bounded, as in secret_values.cpp.
#include "secret_settings.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "env_text.hpp"

namespace cordon::secretsettings {

using namespace envtext;

// A value that names a state rather than hiding one: what a build flag is set to
// (-DUSE_TOKEN=ON, -DHAVE_PASSWD=1), any case.
bool flag_word(std::string_view w) {
    static constexpr std::array<std::string_view, 8> kFlags = {"0", "1", "on", "off", "true", "false", "yes", "no"};
    return std::any_of(kFlags.begin(), kFlags.end(),
                       [&](std::string_view f) { return f.size() == w.size() && at_ci(w, 0, f); });
}

namespace {

// A reference to a secret kept elsewhere, $NAME or ${...} and nothing else (compose files'
// password: ${DB_PASSWORD}, -Dpassword=$PASS): not the secret itself. W: up to a delimiter.
bool reference(std::string_view w) {
    if (w.size() < 2 || w[0] != '$') return false;
    if (w[1] == '{') return w.back() == '}' && w.find_first_of(" \t") == std::string_view::npos;
    return std::all_of(w.begin() + 1, w.end(), [](char c) { return is_alnum(c) || c == '_'; });
}

// What a config file's KEY = VALUE or a YAML KEY: VALUE line sets, from P to the end of its line
// (bounded): whether it looks like a secret. A quoted value is one when it is not empty; an
// unquoted one when it is not a flag, not a comment and has no blank inside (a line of prose,
// "password: now hashed", is words).
bool line_value_is_secret(std::string_view v, size_t p) {
    p += run_length(v, p, [](char c) { return c == ' ' || c == '\t'; });
    const size_t n = run_length(
        v, p, [](char c) { return c != '\n' && c != '\r'; }, 512);
    std::string_view value = v.substr(p, n);
    while (!value.empty() && is_blank(value.back())) value.remove_suffix(1);
    if (value.empty() || value[0] == '#') return false;
    if (value[0] == '"' || value[0] == '\'') {
        const size_t close = value.find(value[0], 1);
        const std::string_view inner = value.substr(1, close == std::string_view::npos ? close : close - 1);
        return !inner.empty() && !reference(inner);
    }
    if (const size_t comment = value.find(" #"); comment != std::string_view::npos) value = value.substr(0, comment);
    return !flag_word(value) && !reference(value) && value.find_first_of(" \t") == std::string_view::npos;
}

// A setting's name that says its value is a credential. KEY: lower case, the part after its
// last '.' (Java's -Dhttp.proxyPassword, spring.datasource.password), without '-' and '_'
// (client_secret, api-key, _authToken).
bool credential_setting(std::string_view key) {
    if (size_t dot = key.rfind('.'); dot != std::string_view::npos) key = key.substr(dot + 1);
    std::string k;
    for (char c : key) {
        if (c != '-' && c != '_') k += to_lower(c);
    }
    // "signature": presigned URLs (X-Amz-Signature, X-Goog-Signature); "sig": Azure's SAS.
    static constexpr std::array<std::string_view, 10> kEndings = {
        "password", "passwd",    "passphrase", "secret",     "token",
        "apikey",   "secretkey", "accesskey",  "accountkey", "signature",
    };
    static constexpr std::array<std::string_view, 6> kWhole = {"pwd",           "pass",       "auth",
                                                               "authorization", "privatekey", "sig"};
    auto ends = [&](std::string_view e) {
        return k.size() >= e.size() && k.compare(k.size() - e.size(), e.size(), e) == 0;
    };
    return std::any_of(kEndings.begin(), kEndings.end(), ends) ||
           std::find(kWhole.begin(), kWhole.end(), k) != kWhole.end();
}

bool setting_key_char(char c) {
    return is_alnum(c) || c == '_' || c == '.' || c == '-';
}

// KEY: VALUE at the start of a line (YAML: a kubeconfig's token:, a compose file's password:),
// with a VALUE that looks like a secret (line_value_is_secret).
bool has_yaml_credential(std::string_view v) {
    for (size_t colon = v.find(": "); colon != std::string_view::npos; colon = v.find(": ", colon + 1)) {
        size_t start = colon;
        while (start > 0 && setting_key_char(v[start - 1])) --start;
        size_t line = start;
        while (line > 0 && (v[line - 1] == ' ' || v[line - 1] == '\t' || v[line - 1] == '-')) --line;
        if (line > 0 && v[line - 1] != '\n') continue;
        const std::string_view key = v.substr(start, colon - start);
        if (key.empty() || !credential_setting(key)) continue;
        if (line_value_is_secret(v, colon + 2)) return true;
    }
    return false;
}

// netrc's tokens from a "machine" token on: KEYWORD VALUE pairs (default alone), blank-separated
// on one line or more, with a password among them. Anything else ends them, so prose with the
// word "machine" in it is not netrc.
bool has_netrc_password(std::string_view v) {
    static constexpr std::array<std::string_view, 6> kKeywords = {"machine", "login",   "password",
                                                                  "account", "default", "port"};
    for (size_t at = find_ci(v, "machine"); at != std::string_view::npos; at = find_ci(v, "machine", at + 1)) {
        if (at > 0 && !is_blank(v[at - 1])) continue;
        size_t p = at;
        auto next_token = [&] {
            p += run_length(v, p, is_blank);
            const size_t n = run_length(v, p, [](char c) { return !is_blank(c); });
            const std::string_view t = v.substr(p, n);
            p += n;
            return t;
        };
        // A few entries' worth: each start reads a bounded number of tokens.
        for (int pair = 0; pair < 16; ++pair) {
            const std::string_view keyword = next_token();
            auto is = [&](std::string_view k) { return keyword.size() == k.size() && at_ci(keyword, 0, k); };
            if (std::none_of(kKeywords.begin(), kKeywords.end(), is)) break;
            if (is("default")) continue;
            const std::string_view value = next_token();
            if (value.empty()) break;
            if (is("password")) return true;
        }
    }
    return false;
}

// <KEY>VALUE</KEY> with a credential's KEY (Maven's settings.xml: <password>, <passphrase>) and
// a VALUE that is neither empty nor a reference (${env.PASSWORD}) nor a path.
bool has_xml_credential(std::string_view v) {
    for (size_t lt = v.find('<'); lt != std::string_view::npos; lt = v.find('<', lt + 1)) {
        const size_t n = run_length(v, lt + 1, setting_key_char, 64);
        const size_t gt = lt + 1 + n;
        if (n == 0 || gt >= v.size() || v[gt] != '>' || !credential_setting(v.substr(lt + 1, n))) continue;
        const size_t p = gt + 1 + run_length(v, gt + 1, is_blank, 64);
        if (p < v.size() && std::string_view("</~").find(v[p]) == std::string_view::npos &&
            v.compare(p, 2, "${") != 0) {
            return true;
        }
    }
    return false;
}

// --KEY VALUE: a command line's option with a credential's KEY and its value as the next word
// (mysqldump --password s3cret, vault login --token ...). Not a value that is another option,
// a path, a reference ($PW), a flag word or option syntax of its own (docker build's --secret
// id=npm,src=.npmrc); not --auth or --sig, whose values are mostly methods and names.
bool has_option_credential(std::string_view v) {
    for (size_t at = v.find("--"); at != std::string_view::npos; at = v.find("--", at + 2)) {
        if (at > 0 && !is_blank(v[at - 1])) continue;
        const size_t n = run_length(v, at + 2, setting_key_char, 64);
        const std::string_view key = v.substr(at + 2, n);
        if (n == 0 || !credential_setting(key)) continue;
        std::string k;
        for (char c : key) {
            if (c != '-' && c != '_') k += to_lower(c);
        }
        if (k == "auth" || k == "sig") continue;
        size_t p = at + 2 + n;
        const size_t blanks = run_length(
            v, p, [](char c) { return c == ' ' || c == '\t'; }, 16);
        if (blanks == 0) continue;
        p += blanks;
        std::string_view value = v.substr(p, run_length(
                                                 v, p, [](char c) { return !is_blank(c); }, 256));
        if (value.size() >= 2 && (value[0] == '"' || value[0] == '\'') && value.back() == value[0])
            value = value.substr(1, value.size() - 2);
        if (value.size() < 4 || std::string_view("-/~.$").find(value[0]) != std::string_view::npos) continue;
        if (flag_word(value) || reference(value)) continue;
        if (const size_t eq = value.find('='); eq != std::string_view::npos && eq + 2 < value.size()) continue;
        return true;
    }
    return false;
}

// A line of a PostgreSQL password file: HOST:PORT:DATABASE:USER:PASSWORD (a '\\' escapes a
// ':'), the host with a letter in it or '*', the port digits or '*', every field there, and a
// password of 4 characters or more; nothing blank.
bool has_pgpass_line(std::string_view v) {
    for (size_t start = 0; start < v.size();) {
        size_t end = v.find('\n', start);
        if (end == std::string_view::npos) end = v.size();
        std::string_view line = v.substr(start, std::min<size_t>(end - start, 1024));
        start = end + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty() || line[0] == '#' || std::any_of(line.begin(), line.end(), is_blank)) continue;
        std::vector<size_t> colons;
        for (size_t i = 0; i < line.size() && colons.size() < 5; ++i) {
            if (line[i] == ':' && (i == 0 || line[i - 1] != '\\')) colons.push_back(i);
        }
        if (colons.size() != 4) continue;
        const std::string_view host = line.substr(0, colons[0]);
        const std::string_view port = line.substr(colons[0] + 1, colons[1] - colons[0] - 1);
        const bool host_ok =
            host == "*" || std::any_of(host.begin(), host.end(), [](char c) { return is_upper(c) || is_lower(c); });
        const bool port_ok = port == "*" || (!port.empty() && std::all_of(port.begin(), port.end(), is_digit));
        const bool fields = colons[2] > colons[1] + 1 && colons[3] > colons[2] + 1;
        if (host_ok && port_ok && fields && line.size() - colons[3] - 1 >= 4) return true;
    }
    return false;
}

}  // namespace

// KEY=VALUE (connection strings, query strings, JVM and command-line options), KEY = VALUE
// (config files: INI, TOML, .npmrc, AWS's credentials), "KEY": "VALUE" and 'KEY': 'VALUE'
// (JSON, Python), YAML's KEY: VALUE, netrc and XML, with a credential's KEY and a VALUE that is
// not empty. Not a flag (-DUSE_TOKEN=ON) either; a "pwd" that is a path is a working directory.
bool has_credential_setting(std::string_view v) {
    for (size_t eq = v.find('='); eq != std::string_view::npos; eq = v.find('=', eq + 1)) {
        size_t key_end = eq;
        for (int k = 0; k < 8 && key_end > 0 && (v[key_end - 1] == ' ' || v[key_end - 1] == '\t'); ++k) --key_end;
        const bool spaced = key_end != eq;
        size_t start = key_end;
        while (start > 0 && key_end - start < 128 && setting_key_char(v[start - 1])) --start;
        const std::string_view key = v.substr(start, key_end - start);
        if (key.empty() || !credential_setting(key)) continue;
        if (spaced) {
            // A config file's line: the key starts it (after blanks), or follows .npmrc's
            // //registry/: prefix. Elsewhere "KEY = ..." is prose or code.
            size_t line = start;
            for (int k = 0; k < 64 && line > 0 && (v[line - 1] == ' ' || v[line - 1] == '\t'); ++k) --line;
            const bool starts_line = line == 0 || v[line - 1] == '\n' || v[line - 1] == '\r';
            if ((starts_line || v[start - 1] == ':') && line_value_is_secret(v, eq + 1)) return true;
            continue;
        }
        size_t p = eq + 1;
        if (p < v.size() && (v[p] == '"' || v[p] == '\'')) ++p;
        if (p >= v.size() || is_blank(v[p]) || std::string_view("\"';&,").find(v[p]) != std::string_view::npos)
            continue;
        const size_t n = run_length(
            v, p, [](char c) { return !is_blank(c) && std::string_view("\"';&,").find(c) == std::string_view::npos; },
            256);
        if (flag_word(v.substr(p, n)) || reference(v.substr(p, n))) continue;
        const bool pwd =
            key.size() >= 3 && at_ci(key, key.size() - 3, "pwd") && (key.size() == 3 || !is_alnum(key[key.size() - 4]));
        if (pwd && (v[p] == '/' || v[p] == '~' || v[p] == '$')) continue;
        return true;
    }
    for (size_t colon = v.find(':'); colon != std::string_view::npos; colon = v.find(':', colon + 1)) {
        size_t q = colon;
        while (q > 0 && v[q - 1] == ' ') --q;
        if (q == 0 || (v[q - 1] != '"' && v[q - 1] != '\'')) continue;
        const char quote = v[q - 1];
        size_t start = q - 1;
        while (start > 0 && setting_key_char(v[start - 1])) --start;
        if (start == 0 || v[start - 1] != quote) continue;
        const std::string_view key = v.substr(start, q - 1 - start);
        if (key.empty() || !credential_setting(key)) continue;
        size_t p = colon + 1;
        p += run_length(v, p, [](char c) { return c == ' '; });
        if (p + 1 < v.size() && (v[p] == '"' || v[p] == '\'') && v[p + 1] != v[p]) return true;
    }
    return has_yaml_credential(v) || has_netrc_password(v) || has_xml_credential(v) || has_option_credential(v) ||
           has_pgpass_line(v);
}

// USER:PASSWORD and nothing else, in the variable's own value (ETCDCTL_USER=root:pw, Bundler's
// BUNDLE_<HOST>=user:pw). Other NAME:THING values are common (image:tag, host:port, user:group,
// sha256:digest, release:v2alpha1), so the password must look like one: 8 to 128 characters
// without blanks, '/' or ':', with digits and either both cases or a symbol besides a tag's or
// a version's . - _ + (python:3.12-slim is not), and not a digest's hex.
bool plain_user_password(std::string_view v) {
    const size_t colon = v.find(':');
    if (colon == std::string_view::npos || colon == 0 || colon > 64) return false;
    const std::string_view user = v.substr(0, colon);
    const std::string_view pw = v.substr(colon + 1);
    if (pw.size() < 8 || pw.size() > 128) return false;
    if (!std::all_of(user.begin(), user.end(),
                     [](char c) { return is_alnum(c) || c == '_' || c == '-' || c == '.' || c == '@'; })) {
        return false;
    }
    if (!std::all_of(pw.begin(), pw.end(), [](char c) { return c > 0x20 && c < 0x7f && c != ':' && c != '/'; })) {
        return false;
    }
    const bool upper = std::any_of(pw.begin(), pw.end(), is_upper);
    const bool lower = std::any_of(pw.begin(), pw.end(), is_lower);
    const bool digit = std::any_of(pw.begin(), pw.end(), is_digit);
    const bool symbol = std::any_of(pw.begin(), pw.end(), [](char c) {
        return !is_alnum(c) && std::string_view(".-_+").find(c) == std::string_view::npos;
    });
    const bool hex = std::all_of(pw.begin(), pw.end(),
                                 [](char c) { return is_digit(c) || (to_lower(c) >= 'a' && to_lower(c) <= 'f'); });
    if (hex && pw.size() >= 32) return false;
    return digit && ((upper && lower) || (symbol && (upper || lower)));
}

}  // namespace cordon::secretsettings

// The environment filter (cordon/env_filter.hpp): words of names, credentials in values, git's
// configuration set, and the shipped default profile over what CI systems really set
// (tests/unit/data/ci_env_corpus.txt).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <sstream>

#include "cordon/env_filter.hpp"
#include "cordon/profile.hpp"
#include "test_files.hpp"

using namespace cordon;
using Strings = std::vector<std::string>;

namespace {

EnvRules word_rules() {
    EnvRules r;
    r.strip = {"*TOKEN", "*_KEY", "*_PWD"};
    r.strip_words = {"SECRET", "SECRETS", "SESSION", "AUTH", "JWT", "COOKIE", "CREDENTIALS", "API_KEY"};
    r.strip_except = {"XDG_SESSION_*", "DESKTOP_SESSION"};
    return r;
}

EnvRules value_rules() {
    EnvRules r;
    r.url_passwords = true;
    r.secret_values = true;
    return r;
}

const RemovedVar* removed(const FilteredEnv& f, const std::string& name) {
    auto it = std::find_if(f.removed.begin(), f.removed.end(), [&](const RemovedVar& r) { return r.name == name; });
    return it == f.removed.end() ? nullptr : &*it;
}

// The default profile, as shipped (not the build's compiled copy: the file under review).
EnvRules default_profile_rules() {
    const Vars vars = {{"HOME", "/home/u"},
                       {"UID", "1000"},
                       {"USER", "u"},
                       {"WORKDIR", "/home/u/p"},
                       {"XDG_CACHE_HOME", "/home/u/.cache"},
                       {"XDG_CONFIG_HOME", "/home/u/.config"}};
    auto layer = load_profiles({test::source_dir() + "/profiles/default.toml"}, vars);
    REQUIRE(layer.ok());
    return env_rules(*layer);
}

// A corpus line's VALUE: \n is a newline, \\ a backslash.
std::string unescape(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == 'n' || s[i + 1] == '\\')) {
            out += s[i + 1] == 'n' ? '\n' : '\\';
            ++i;
        } else {
            out += s[i];
        }
    }
    return out;
}

struct CorpusLine {
    std::string verdict, reason, name, kv;
    int line = 0;
};

std::vector<CorpusLine> read_corpus() {
    std::istringstream in(test::slurp(test::source_dir() + "/tests/unit/data/ci_env_corpus.txt"));
    std::vector<CorpusLine> lines;
    std::string text;
    for (int n = 1; std::getline(in, text); ++n) {
        if (text.empty() || text[0] == '#') continue;
        std::istringstream words(text);
        CorpusLine c;
        c.line = n;
        words >> c.verdict >> c.reason;
        std::getline(words >> std::ws, c.kv);
        c.name = c.kv.substr(0, c.kv.find('='));
        c.kv = unescape(c.kv);
        lines.push_back(c);
    }
    return lines;
}

}  // namespace

TEST_CASE("name_words: split at separators, case changes and digits", "[env]") {
    CHECK(name_words("MYSQL_PWD") == Strings{"MYSQL", "PWD"});
    CHECK(name_words("OLDPWD") == Strings{"OLDPWD"});
    CHECK(name_words("npm_config__authToken") == Strings{"NPM", "CONFIG", "AUTH", "TOKEN"});
    CHECK(name_words("CI_JOB_JWT_V2") == Strings{"CI", "JOB", "JWT", "V", "2"});
    CHECK(name_words("JWTSecret") == Strings{"JWT", "SECRET"});
    CHECK(name_words("TOKEN2") == Strings{"TOKEN", "2"});
    CHECK(name_words("OP_SESSION_my-team.x") == Strings{"OP", "SESSION", "MY", "TEAM", "X"});
    CHECK(name_words("XAUTHORITY") == Strings{"XAUTHORITY"});
    CHECK(name_words("__") == Strings{});
}

TEST_CASE("EnvFilter: names by words and shapes, with exceptions", "[env]") {
    const EnvFilter f(word_rules());
    for (const char* name : {"SECRET", "MY_SECRETS", "app_secret", "SESSION", "OP_SESSION_my", "BW_SESSION", "AUTH",
                             "COMPOSER_AUTH", "CI_JOB_JWT_V2", "COOKIE", "CREDENTIALS", "MYSQL_PWD", "mysql_pwd",
                             "API_KEY_FILE", "apiKey", "ghToken", "mySecret2", "Secret_", "DB_PWD"}) {
        INFO(name);
        CHECK(f.name_is_credential(name));
    }
    for (const char* name : {"PWD", "OLDPWD", "XAUTHORITY", "XDG_SESSION_ID", "xdg_session_type", "DESKTOP_SESSION",
                             "TOKENIZERS_PARALLELISM", "SECRETARY", "AUTHOR", "GIT_AUTHOR_NAME", "SESSIONS_DIR",
                             "PASSWORD_LIKE_NOTHING_HERE_X"}) {
        INFO(name);
        CHECK_FALSE(f.name_is_credential(name));
    }
}

TEST_CASE("secret_in_value: what counts, anywhere in the value", "[env]") {
    using S = SecretValue;
    const std::vector<std::pair<std::string, S>> secrets = {
        {"https://u:p@h/x", S::UrlPassword},
        {"  \n  redis://:pw@cache:6379/0", S::UrlPassword},
        {"Authorization: Bearer abc", S::AuthHeader},
        {"authorization:token", S::AuthHeader},
        {"x\nPROXY-AUTHORIZATION:  Basic Zm9vOmJhcg==", S::AuthHeader},
        {"-H 'Cookie: sid=1'", S::AuthHeader},
        {"x-api-key: 123", S::AuthHeader},
        {"bearer 0123456789abcdefXYZ", S::AuthHeader},
        {"curl -u x --header=Basic dXNlcjpwYXNzd29yZA==", S::AuthHeader},
        {"-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----", S::PrivateKey},
        {"-----begin pgp private key block-----", S::PrivateKey},
        {"PuTTY-User-Key-File-3: ssh-ed25519", S::PrivateKey},
        // base64 of "-----BEGIN PRIVATE KEY-----\nMIIE\n", and the same wrapped at 20 columns
        {"LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUUK", S::PrivateKey},
        {"LS0tLS1CRUdJTiBQUklW\nQVRFIEtFWS0tLS0tCk1J\nSUUK\n", S::PrivateKey},
        {"ghp_0123456789abcdefghijklmnopqrstuvwxyz", S::Token},
        {"token=ghs_0123456789abcdefghijklmnopqrstuv", S::Token},
        {"x ghs_0123456789abcdefghijklmnopqrstuv", S::Token},
        {"github_pat_11ABCDEFG0_abcdefghijklmnopqrstuvwxyz0123456789", S::Token},
        {"glpat-abcdefghijklmnopqrst", S::Token},
        {"xoxb-1234-5678-abcdef", S::Token},
        {"xoxp-1234567890", S::Token},
        {"AKIAIOSFODNN7EXAMPLE", S::Token},
        {"key id ASIAIOSFODNN7EXAMPLE, region eu", S::Token},
        {"npm_abcdefghijklmnopqrstuvwxyz0123456789", S::Token},
        {"sk_live_abcdefghijklmnop", S::Token},
        {"sk-abcdefghijklmnopqrstuvwxyz012345", S::Token},
        {"sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123", S::Token},
        {"AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", S::Token},
        {"hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", S::Token},
        {"eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", S::Jwt},
        {"jdbc:mysql://db/app?user=a&password=b", S::Setting},
        {"Server=db;User Id=a;Pwd=s3cret;", S::Setting},
        {"AccountName=a;AccountKey=abc==", S::Setting},
        {"{\"client_secret\": \"abc\"}", S::Setting},
        {"-Dhttp.proxyPassword=x", S::Setting},
        {"//registry.npmjs.org/:_authToken=abc", S::Setting},
        // Found by attacking the first version: twice base64, a bare base64 user:password (npm's
        // _auth), presigned and SAS URLs, a long bearer token without digits.
        {"TFMwdExTMUNSVWRKVGlCUVVrbFdRVlJGSUV0RldTMHRMUzB0Q2sxSlNVVUsK", S::PrivateKey},
        {"dXNlcjpwYXNzd29yZA==", S::AuthHeader},
        {"https://a.blob.core.windows.net/c?sv=2021-08-06&ss=b&sig=abcDEF%3D", S::Setting},
        {"https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4&X-Amz-Signature=0a1b2c", S::Setting},
        {"Bearer abcdefghijklmnopqrstuvwxyz", S::AuthHeader},
        {"\r\n\t  Authorization: x\r\n", S::AuthHeader},
        // The second round: JSON and YAML, a base64 key inside YAML, more issuers.
        {"{\"headers\": {\"Authorization\": \"Bearer x\"}}", S::Setting},
        {"apiVersion: v1\nusers:\n- name: ci\n  user:\n    password: hunter2\n", S::Setting},
        {"token: abc", S::Setting},
        {"users:\n- user:\n    client-key-data: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUUK\n", S::PrivateKey},
        {"hvs.CAESIJabcdefghijklmnopqrstuvwxyz0123", S::Token},
        {"AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ", S::Token},
    };
    for (const auto& [value, what] : secrets) {
        INFO(value);
        CHECK(secret_in_value(value) == what);
    }
    for (const char* value : {
             "",
             "https://u@h/x",
             "https://h/p?q=a:b@c",
             "git@github.com:org/repo.git",
             "ffac537e6cbbf934b08745a378932722df287a53",
             "0184990a-477b-4fa8-9968-496074483cee",
             "Bearer of bad news",                         // "Bearer" with no token
             "Basic setup complete",                       // "Basic" with no base64(user:password)
             "AUTHORIZATION",                              // a header's name alone
             "cookie:",                                    // no value
             "disk-0123456789abcdefghijklmnopqrstuvwxyz",  // sk- inside a word
             "task-runner-with-a-very-long-hyphenated-name",
             "sk-this-is-a-long-hyphenated-slug-without-digits",
             "AKIAIOSFODNN7EXAMPLEX",  // 17 characters: not a key id
             "ghp_short",
             "xoxb-",
             "password=",
             "password=\"\"",
             "PWD=/home/u/src",  // a working directory
             "--max-old-space-size=4096 -Dfile.encoding=UTF-8",
             "rs=0:di=01;34:ln=01;36:*.tar=01;31",
             "unix:path=/run/user/1000/bus",
             "local/host:@/tmp/.ICE-unix/2211,unix/host:/tmp/.ICE-unix/2211",
             "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
             "-----BEGIN PUBLIC KEY-----",
             "{\"image\":\"node:20\",\"password\":\"\"}",
             "*_PASSWORD,*_SECRET,*_TOKEN,*_PRIVATE_KEY",
             "bG9jYWxob3N0OjgwODA=",  // base64 of localhost:8080
             "Fix the login form and more words here",
             "SGVsbG8gd29ybGQgdGhpcyBpcyB0ZXh0",          // base64 of plain text
             "https://u:pa/ss@host/x",                    // not a URL with a password: '/' ends the authority
             "password: ''\ntoken: # none\nname: ci",     // YAML with empty credentials
             "see the password: field",                   // not at the start of a line
             "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==",  // base64 of a certificate's BEGIN line
         }) {
        INFO(value);
        CHECK(secret_in_value(value) == SecretValue::None);
    }
    // Each family can be turned off.
    CHECK(secret_in_value("https://u:p@h/", false, true) == SecretValue::None);
    CHECK(secret_in_value("Authorization: x", true, false) == SecretValue::None);
    CHECK(secret_in_value("https://u:p@h/", true, false) == SecretValue::UrlPassword);
}

TEST_CASE("secret_in_value: the second review's false positives and negatives", "[env]") {
    using S = SecretValue;
    const std::vector<std::pair<std::string, S>> secrets = {
        // Passwords with the characters libpq and SQLAlchemy take into one; a token as the user.
        {"postgresql://app:s3cr?t@db/app", S::UrlPassword},
        {"postgresql://app:s3cr#t@db/app", S::UrlPassword},
        {"postgresql://app:s3\"cr3t@db/app", S::UrlPassword},
        {"postgresql://app:s3 cr3t@db/app", S::UrlPassword},
        {"postgres://me@corp.example:pw@db/app", S::UrlPassword},
        {"https://0a1b2c3d4e5f60718293a4b5c6d7e8f901a2b3c4@github.com/o/r.git", S::UrlPassword},
        {"https://abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop@dev.azure.com/o/p/_git/r", S::UrlPassword},
        // user:password and nothing else.
        {"root:SuperSecret99", S::UserPassword},
        {"deploy:s3cr3t!x", S::UserPassword},
        {"ci@example.com:Xy7#kq9!pL", S::UserPassword},
        {"squ_0123456789abcdef0123456789abcdef01234567", S::Token},
        {"sqp_0123456789abcdef0123456789abcdef01234567", S::Token},
        // Settings in the syntax of config files.
        {"password = hunter2x", S::Setting},
        {"[db]\nhost = h\n  password = 'two words'\n", S::Setting},
        {"//registry.example/:_authToken = 0184990a-477b-4fa8-9968-496074483cee", S::Setting},
        {"[registry]\ntoken = \"cio0123456789abcdef\"", S::Setting},
        {"[default]\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG", S::Setting},
        {"machine api.example.com login ci password s3cretvalue", S::Setting},
        {"machine h\n  login u\n  password p", S::Setting},
        {"<server><password>s3cret</password></server>", S::Setting},
        {"<Passphrase>x</Passphrase>", S::Setting},
        {"{\"password\":\"x\"}", S::Setting},
        {"{'password': 'x1y2'}", S::Setting},
        {"-DDB_PASSWORD=hunter2", S::Setting},
        {"password: hunter2", S::Setting},
        {"password: \"correct horse\"", S::Setting},
        {"password: ${DB_PASSWORD}x9", S::Setting},
        {"-Dpassword=$PASS$WORD", S::Setting},
        // The third review: webhook and bot URLs, options with their value as the next word,
        // a PostgreSQL password file's line.
        {"https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFG/aBcDeFgHiJkLmNoPqRsTuVwX", S::Token},
        {"https://discord.com/api/webhooks/123456789012345678/aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", S::Token},
        {"https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/sendMessage", S::Token},
        {"https://org.webhook.office.com/webhookb2/0184990a-477b-4fa8-9968-496074483cee@x/IncomingWebhook/ab",
         S::Token},
        {"--password Pa55word123", S::Setting},
        {"mysqldump --user app --password 's3cr3t!x' app", S::Setting},
        {"vault login --token hvsX0123456789", S::Setting},
        {"db.example.com:5432:app:appuser:Pa55word123", S::Setting},
        {"# pgpass\nlocalhost:*:*:postgres:hunter2x\n", S::Setting},
    };
    for (const auto& [value, what] : secrets) {
        INFO(value);
        CHECK(secret_in_value(value) == what);
    }
    for (const char* value : {
             "-DHAVE_PASSWD=1 -O2",
             "-DUSE_TOKEN=ON",
             "-DWITH_AUTH=off -DSECRET_SCAN=FALSE -DPASSWORD_CHECK=true -Dauth=0 -Dtoken=no",
             "Hash passwords\n\npassword: now hashed with argon2\ntoken: rotated by the job\n",
             "password = not set here",
             "password = true",
             "password: yes",
             "http://localhost:8080?next=me@example.com",
             "see http://localhost:3000 or mail me@example.com",
             "Visit https://example.com: ask bob@example.com",
             "[\"http://a:80\", \"b@c\"]",
             "https://git@example.com/o/r.git",
             "https://short-user-name@example.com/",
             "https://build-agent-for-project-1234567890@example.com/",
             "release:v2alpha1",
             "abcd1234:efgh5678",  // Bundler's BUNDLE_<HOST> goes by its name, not by this value
             "python:3.12-slim-bookworm",
             "node:20-alpine",
             "development:test",
             "sha256:0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
             "localhost:8080",
             "1000:1000",
             "/usr/local/bin:/usr/bin",
             "<password>${env.MAVEN_PASSWORD}</password>",
             "<password></password>",
             "the machine is fast; enter a password when asked",
             "a password = prompt",
             // References to secrets kept elsewhere: compose files, shell, JVM options.
             "services:\n  db:\n    environment:\n      password: ${DB_PASSWORD}\n      token: \"${TOKEN}\"\n",
             "-Dpassword=$PASS -Dtoken=${CI_TOKEN}",
             "password = $DB_PASSWORD",
             // The third review's rules, where they must not reach.
             "https://hooks.slack.com/services/",
             "see https://api.telegram.org/bots for the API",
             "docker login --password-stdin -u ci registry.example",
             "--password $DB_PASSWORD --token ${CI_TOKEN}",
             "--token /run/secrets/token --password -",
             "docker build --secret id=npm,src=.npmrc .",
             "--auth basic --sig none",
             "--password true",
             "fe80:0:0:0:1",
             "12:30:45:00:0000",
             "localhost:5432:app:user:",
         }) {
        INFO(value);
        CHECK(secret_in_value(value) == SecretValue::None);
    }
}

TEST_CASE("secret_in_value: the new rules stay linear on long hostile values", "[env]") {
    // Each pattern repeated to 512 KiB: a scan from every occurrence to the end would take
    // minutes; the bounded scans take milliseconds.
    for (const char* unit :
         {"machine ", "machine login ", "://a:", "://a:b ", "<password>", "<password", "password = ", "\npassword = ",
          ":password =", ":token: ", "a=", "'password': ", "x:", "${", "postgresql://u:p?", "https://"}) {
        std::string v;
        while (v.size() < (512U << 10U)) v += unit;
        INFO(unit);
        (void)secret_in_value(v);
        CHECK(true);
    }
}

TEST_CASE("EnvFilter: names the rules take, kept for a plain value", "[env]") {
    EnvRules r = word_rules();
    r.strip_words.emplace_back("PASS");
    r.except_plain = {{"*_PASS", "flag"}, {"PASS_*", "flag"},          {"*AUTH", "flag"},
                      {"*TOKEN", "flag"}, {"*GPG_KEY", "fingerprint"}, {"OTHER_KEY", "no-such-kind"}};
    const EnvFilter f(r);
    auto out = f.apply({"TEST_PASS=true", "PASS_COUNT=3", "DISABLE_AUTH=YES", "X_TOKEN=0",
                        "GPG_KEY=E3FF2839C048B25C084DEBE9B26995E310250568",
                        "SPACED_GPG_KEY=E3FF 2839 C048 B25C 084D  EBE9 B269 95E3 1025 0568",
                        "MY_API_KEY=abcd1234abcd1234abcd1234abcd1234", "SESSION=1", "DB_PASS=hunter2", "OTHER_KEY=1",
                        "SIGN_KEY=0xE3FF2839C048B25C084DEBE9B26995E310250568", "PASS_COUNT_X=1000"});
    CHECK(out.kept == Strings{"TEST_PASS=true", "PASS_COUNT=3", "DISABLE_AUTH=YES", "X_TOKEN=0",
                              "GPG_KEY=E3FF2839C048B25C084DEBE9B26995E310250568",
                              "SPACED_GPG_KEY=E3FF 2839 C048 B25C 084D  EBE9 B269 95E3 1025 0568"});
    for (const char* name : {"MY_API_KEY", "SESSION", "DB_PASS", "OTHER_KEY", "SIGN_KEY", "PASS_COUNT_X"}) {
        INFO(name);
        REQUIRE(removed(out, name));
        CHECK(removed(out, name)->why == EnvRemoval::ByName);
    }
    CHECK(value_is_plain("e3ff 2839 c048 b25c 084d ebe9 b269 95e3 1025 0568", "fingerprint"));
    CHECK(value_is_plain("0xB26995E310250568", "fingerprint"));
    CHECK_FALSE(value_is_plain("E3FF2839C048B25C084DEBE9B26995E31025056", "fingerprint"));
    CHECK_FALSE(value_is_plain("1000", "flag"));
    CHECK_FALSE(value_is_plain("", "no-such-kind"));
}

TEST_CASE("EnvFilter: values under harmless names, never printed", "[env]") {
    const EnvFilter f(value_rules());
    auto out = f.apply({"A=Authorization: Bearer 0123456789abcdefghij", "B=plain", "C=postgres://a:b@h/d",
                        "D=-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----", "E="});
    CHECK(out.kept == Strings{"B=plain", "E="});
    REQUIRE(removed(out, "A"));
    CHECK(removed(out, "A")->why == EnvRemoval::ByValue);
    CHECK(removed(out, "A")->what == SecretValue::AuthHeader);
    CHECK(removed(out, "C")->what == SecretValue::UrlPassword);
    CHECK(removed(out, "D")->what == SecretValue::PrivateKey);
    // What a note says: the kind, not the value.
    CHECK(describe(SecretValue::AuthHeader).find("0123") == std::string_view::npos);
}

TEST_CASE("EnvFilter: git's configuration set goes whole, or stays", "[env]") {
    const EnvFilter f(value_rules());
    const Strings dirty = {"GIT_CONFIG_COUNT=2",
                           "GIT_CONFIG_KEY_0=safe.directory",
                           "GIT_CONFIG_VALUE_0=*",
                           "GIT_CONFIG_KEY_1=http.https://github.com/.extraHeader",
                           "GIT_CONFIG_VALUE_1=AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX2Zha2U=",
                           "LANG=C"};
    auto out = f.apply(dirty);
    CHECK(out.kept == Strings{"LANG=C"});
    REQUIRE(out.removed.size() == 5);
    for (const auto& r : out.removed) CHECK(r.why == EnvRemoval::GitSet);

    // A credential helper, an askpass program, a password in an insteadOf URL: the same.
    for (const Strings& set : {Strings{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=credential.helper",
                                       "GIT_CONFIG_VALUE_0=!f() { echo password=x; }; f"},
                               Strings{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.askPass",
                                       "GIT_CONFIG_VALUE_0=/usr/local/bin/hand-out-token"},
                               Strings{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=url.https://u:tok@h/.insteadOf",
                                       "GIT_CONFIG_VALUE_0=https://h/"}}) {
        INFO(set[1]);
        CHECK(f.apply(set).kept.empty());
    }
    // Harmless settings stay, and so does an emptied credential helper (which turns helpers off).
    const Strings clean = {"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*",
                           "GIT_CONFIG_KEY_1=credential.helper", "GIT_CONFIG_VALUE_1="};
    CHECK(f.apply(clean).kept == clean);

    // --env-pass of any member keeps the set whole.
    EnvRules passing = value_rules();
    passing.pass = {"git_config_value_1"};
    CHECK(EnvFilter(passing).apply(dirty).kept == dirty);

    // GIT_CONFIG_PARAMETERS, in git's quoting (both forms) or not.
    for (const char* v :
         {"'http.https://github.com/.extraheader'='AUTHORIZATION: basic eC1hY2Nlc3M6eA=='",
          "'core.quotepath=false' 'credential.helper=store'", "'url.https://u:p@h/.insteadof'='https://h/'",
          "'user.name'='it'\\''s me' 'http.extraHeader'='X-Token: 1'", "not quoted credential.helper=x"}) {
        INFO(v);
        auto p = f.apply({std::string("GIT_CONFIG_PARAMETERS=") + v});
        REQUIRE(p.removed.size() == 1);
        CHECK(p.removed[0].what == SecretValue::GitCredential);
    }
    for (const char* v : {"'core.quotepath'='false'", "'safe.directory'='*' 'credential.helper'=''", "'color.ui'"}) {
        INFO(v);
        CHECK(f.apply({std::string("GIT_CONFIG_PARAMETERS=") + v}).removed.empty());
    }
}

TEST_CASE("EnvFilter: --env-pass, --unsetenv and --clearenv", "[env]") {
    EnvRules r = word_rules();
    r.url_passwords = r.secret_values = true;
    r.pass = {"my_secrets", "NOTE"};
    r.unset = {"LANG"};
    auto out = EnvFilter(r).apply({"MY_SECRETS=1", "NOTE=Authorization: x", "LANG=C", "SECRET=2"});
    CHECK(out.kept == Strings{"MY_SECRETS=1", "NOTE=Authorization: x"});
    CHECK(removed(out, "LANG")->why == EnvRemoval::Unset);
    CHECK(removed(out, "SECRET")->why == EnvRemoval::ByName);
    r.clear = true;
    auto cleared = EnvFilter(r).apply({"MY_SECRETS=1", "LANG=C"});
    CHECK(cleared.kept.empty());
    CHECK(cleared.removed.size() == 2);
}

TEST_CASE("the default profile over what CI systems set (tests/unit/data/ci_env_corpus.txt)", "[env]") {
    const auto corpus = read_corpus();
    REQUIRE(corpus.size() > 300);
    Strings vars;
    std::map<std::string, int> seen;
    for (const auto& c : corpus) {
        INFO("line " << c.line << ": " << c.name);
        CHECK(++seen[c.name] == 1);  // one environment: each name once
        CHECK((c.verdict == "keep" || c.verdict == "strip"));
        if (c.verdict == "strip") CHECK((c.reason == "name" || c.reason == "value" || c.reason == "git"));
        vars.push_back(c.kv);
    }
    const FilteredEnv out = EnvFilter(default_profile_rules()).apply(vars);
    for (const auto& c : corpus) {
        INFO("line " << c.line << ": " << c.verdict << " " << c.reason << " " << c.name);
        const RemovedVar* r = removed(out, c.name);
        if (c.verdict == "keep") {
            CHECK(r == nullptr);
            continue;
        }
        CHECK(r != nullptr);
        if (r == nullptr) continue;
        const auto want = c.reason == "name"  ? EnvRemoval::ByName
                          : c.reason == "git" ? EnvRemoval::GitSet
                                              : EnvRemoval::ByValue;
        CHECK(r->why == want);
    }
    CHECK(out.kept.size() + out.removed.size() == vars.size());
}

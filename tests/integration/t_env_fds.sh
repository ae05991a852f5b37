#!/usr/bin/env bash
# Environment filtering and inherited file descriptors.
source "$TESTLIB"

export GITHUB_TOKEN=ghp_secret AWS_SECRET_ACCESS_KEY=aws_secret NPM_TOKEN=npm_secret MY_API_KEY=k DB_PASSWORD=pw
export ORDINARY_VAR=visible
run "$CORDON" -- /usr/bin/env
expect_no_out "ghp_secret" "GITHUB_TOKEN is removed"
expect_no_out "aws_secret" "AWS_* is removed"
expect_no_out "npm_secret" "*_TOKEN is removed"
expect_no_out "^MY_API_KEY=" "*_KEY is removed"
expect_no_out "^DB_PASSWORD=" "*PASSWORD* is removed"
expect_out "^ORDINARY_VAR=visible$" "ordinary variables pass"
run "$CORDON" --env-pass GITHUB_TOKEN -- /usr/bin/env
expect_out "^GITHUB_TOKEN=ghp_secret$" "--env-pass keeps one variable"
expect_no_out "npm_secret" "--env-pass keeps only that one"
run "$CORDON" --setenv FOO "bar baz" --unsetenv ORDINARY_VAR -- /usr/bin/env
expect_out "^FOO=bar baz$" "--setenv"
expect_no_out "^ORDINARY_VAR=" "--unsetenv"
run "$CORDON" --clearenv --setenv ONLY 1 -- /usr/bin/env
[[ $(grep -c . "$OUT/out") -eq 1 ]] && expect_out "^ONLY=1$" "--clearenv leaves only --setenv" || not_ok "--clearenv left: $(tr '\n' ' ' < "$OUT/out")"
unset GITHUB_TOKEN AWS_SECRET_ACCESS_KEY NPM_TOKEN MY_API_KEY DB_PASSWORD
# The forms the list used to miss: names in other cases, personal access tokens, webhooks, DSNs,
# and any URL with a password, whatever the variable is called.
export npm_config__authToken=npmauth_secret GH_PAT=pat_secret SLACK_WEBHOOK_URL=https://hooks.invalid/hook_secret \
  SENTRY_DSN=https://dsn_secret@o1.invalid/1 DATABASE_URL=postgres://app:url_secret@db.invalid/app \
  MY_MIRROR=https://mirror.invalid/simple TOKENIZERS_PARALLELISM=false
run "$CORDON" -- /usr/bin/env
for s in npmauth_secret pat_secret hook_secret dsn_secret url_secret; do
  expect_no_out "$s" "a credential in the environment is removed ($s)"
done
expect_out "^MY_MIRROR=https://mirror.invalid/simple$" "a URL without a password stays"
expect_out "^TOKENIZERS_PARALLELISM=false$" "a name that merely starts with TOKEN stays"
run "$CORDON" --env-pass NPM_CONFIG__AUTHTOKEN -- /usr/bin/env
expect_out "^npm_config__authToken=npmauth_secret$" "--env-pass matches in any case"
unset npm_config__authToken GH_PAT SLACK_WEBHOOK_URL SENTRY_DSN DATABASE_URL MY_MIRROR TOKENIZERS_PARALLELISM

# Issue 23, part 5: the names the list still missed, credentials by value under names that say
# nothing, git's configuration set, and harmless names that look like credentials. No value may
# appear inside the jail or in cordon's notes, which name what went.
export MYSQL_PWD=pwd_secret CI_JOB_JWT=jwt_secret OP_SESSION_my=op_secret SECRET=bare_secret \
  MY_SECRETS=secrets_secret CREDENTIALS=cred_secret COOKIE=cookie_secret SESSION=session_secret \
  AUTH=auth_secret GIT_CONFIG_PARAMETERS="'http.https://github.com/.extraheader'='AUTHORIZATION: basic gcp_secret'" \
  GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*' \
  GIT_CONFIG_KEY_1=http.extraHeader GIT_CONFIG_VALUE_1="Authorization: Bearer gcv_secret_0123456789"
export DEPLOY_HEADERS="Authorization: Bearer hdr_secret_0123456789" UPLOAD=ghp_tok0secret0123456789abcdefghijklmn \
  SIGNING="$(printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nkey_secret\n-----END OPENSSH PRIVATE KEY-----')" \
  MIRROR_URL=https://mirror:url_secret@mirror.invalid/simple
export XDG_SESSION_ID=7 XDG_SESSION_TYPE=tty DESKTOP_SESSION=ubuntu XAUTHORITY=/run/user/0/xauth \
  GITHUB_SHA=ffac537e6cbbf934b08745a378932722df287a53 CI_COMMIT_REF_NAME=main BUILD_NUMBER=42 RUNNER_OS=Linux \
  TERM=xterm OLDPWD=/tmp PWD
secrets=(pwd_secret jwt_secret op_secret bare_secret secrets_secret cred_secret cookie_secret session_secret
  auth_secret gcp_secret gcv_secret hdr_secret tok0secret key_secret url_secret)
run "$CORDON" -- /usr/bin/env
for s in "${secrets[@]}"; do
  expect_no_out "$s" "a credential is removed ($s)"
done
expect_no_out "^GIT_CONFIG_" "git's GIT_CONFIG_* set goes whole"
for kv in XDG_SESSION_ID=7 XDG_SESSION_TYPE=tty DESKTOP_SESSION=ubuntu XAUTHORITY=/run/user/0/xauth \
  GITHUB_SHA=ffac537e6cbbf934b08745a378932722df287a53 CI_COMMIT_REF_NAME=main BUILD_NUMBER=42 RUNNER_OS=Linux \
  TERM=xterm OLDPWD=/tmp "PWD=$PWD" LANG=C.UTF-8 "HOME=$HOME"; do
  expect_out "^$kv\$" "a harmless variable stays (${kv%%=*})"
done
expect_err "removed from the environment for what their values hold: .*DEPLOY_HEADERS \(HTTP credentials\)" \
  "the note names a variable removed for its value, and why"
expect_err "SIGNING \(a private key\).*UPLOAD \(a token|UPLOAD \(a token.*SIGNING \(a private key\)" \
  "the note names a private key and a token"
expect_err "GIT_CONFIG_PARAMETERS \(git credentials\)" "the note names GIT_CONFIG_PARAMETERS"
for s in "${secrets[@]}"; do
  expect_no_err "$s" "no note shows a value ($s)"
done
run "$CORDON" -v -- /bin/true
expect_err "removed from the environment:.* MYSQL_PWD.* SESSION" "-v names every variable removed"
for s in "${secrets[@]}"; do
  expect_no_err "$s" "-v shows no value ($s)"
done
run "$CORDON" -q -- /bin/true
expect_no_err "removed from the environment" "-q: no note"
# Explicit pass-through: --env-pass (any case) keeps one, whatever rule took it; naming one
# member of git's set keeps the set whole; --setenv gives the jail a value of the caller's choice.
run "$CORDON" --env-pass mysql_pwd --env-pass DEPLOY_HEADERS --env-pass GIT_CONFIG_COUNT --setenv SESSION chosen -- /usr/bin/env
expect_out "^MYSQL_PWD=pwd_secret$" "--env-pass keeps a name-matched variable"
expect_out "^DEPLOY_HEADERS=Authorization: Bearer hdr_secret_0123456789$" "--env-pass keeps a value-matched variable"
expect_out "^GIT_CONFIG_VALUE_1=Authorization: Bearer gcv_secret_0123456789$" "--env-pass GIT_CONFIG_COUNT keeps the set"
expect_out "^GIT_CONFIG_KEY_0=safe.directory$" "... all of it"
expect_out "^SESSION=chosen$" "--setenv sets a stripped name"
expect_no_out "session_secret|op_secret" "passing one keeps only that one"
expect_no_err "DEPLOY_HEADERS" "a passed variable is not in the note"
unset MYSQL_PWD CI_JOB_JWT OP_SESSION_my SECRET MY_SECRETS CREDENTIALS COOKIE SESSION AUTH GIT_CONFIG_PARAMETERS \
  GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_VALUE_0 GIT_CONFIG_KEY_1 GIT_CONFIG_VALUE_1 DEPLOY_HEADERS UPLOAD \
  SIGNING MIRROR_URL XDG_SESSION_ID XDG_SESSION_TYPE DESKTOP_SESSION XAUTHORITY GITHUB_SHA CI_COMMIT_REF_NAME \
  BUILD_NUMBER RUNNER_OS

# The second review: harmless values and names that were taken, credentials that got through.
# The kept ones pass unchanged; the others go, and no note shows their values.
export CFLAGS="-DHAVE_PASSWD=1 -O2" CMAKE_ARGS=-DUSE_TOKEN=ON GPG_KEY=E3FF2839C048B25C084DEBE9B26995E310250568 \
  KDE_SESSION_VERSION=5 PASSWORD_STORE_DIR=/tmp/pass-store TEST_PASS=true \
  COMMIT_MSG="$(printf 'Hash them\n\npassword: now hashed\n')"
export PG_URL='postgresql://app:pgq?secret@db.invalid/app' ETCDCTL_USER=root:EtcdSecret99 \
  CLONE_URL=https://0a1b2c3d4e5f60718293a4b5c6d7e8f9clonesecret@github.com/o/r.git \
  INI_TEXT="$(printf '[db]\npassword = ini_secret9\n')" HONEYCOMB_WRITEKEY=hc_secret
run "$CORDON" -- /usr/bin/env
for kv in "CFLAGS=-DHAVE_PASSWD=1 -O2" CMAKE_ARGS=-DUSE_TOKEN=ON GPG_KEY=E3FF2839C048B25C084DEBE9B26995E310250568 \
  KDE_SESSION_VERSION=5 PASSWORD_STORE_DIR=/tmp/pass-store TEST_PASS=true "password: now hashed"; do
  expect_out "^$kv\$" "a harmless variable stays (${kv%%=*})"
done
for s in pgq EtcdSecret99 clonesecret ini_secret9 hc_secret; do
  expect_no_out "$s" "a credential is removed ($s)"
  expect_no_err "$s" "no note shows a value ($s)"
done
expect_err "ETCDCTL_USER \(a user name and password\)" "the note names a user:password value"
unset CFLAGS CMAKE_ARGS GPG_KEY KDE_SESSION_VERSION PASSWORD_STORE_DIR TEST_PASS COMMIT_MSG PG_URL ETCDCTL_USER \
  CLONE_URL INI_TEXT HONEYCOMB_WRITEKEY

# A secret on an inherited fd 7 (and 9) must not be reachable inside.
echo "FD-SECRET" > "$SCRATCH/fdsecret"
run bash -c "exec 7<'$SCRATCH/fdsecret' 9<'$SCRATCH/fdsecret'; '$CORDON' -- /bin/sh -c 'ls /proc/self/fd; cat <&7; cat /proc/self/fd/9'"
expect_no_out "FD-SECRET" "inherited fds 7 and 9 are closed"
expect_no_out "^7$" "fd 7 is not open inside"
expect_out "^0$" "stdin stays open"
rm -f "$SCRATCH/fdsecret"
finish

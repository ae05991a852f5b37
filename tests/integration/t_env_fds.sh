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

# A secret on an inherited fd 7 (and 9) must not be reachable inside.
echo "FD-SECRET" > "$SCRATCH/fdsecret"
run bash -c "exec 7<'$SCRATCH/fdsecret' 9<'$SCRATCH/fdsecret'; '$CORDON' -- /bin/sh -c 'ls /proc/self/fd; cat <&7; cat /proc/self/fd/9'"
expect_no_out "FD-SECRET" "inherited fds 7 and 9 are closed"
expect_no_out "^7$" "fd 7 is not open inside"
expect_out "^0$" "stdin stays open"
rm -f "$SCRATCH/fdsecret"
finish

#!/bin/bash
# Run every command of corpus.txt through `cordon check -c`, with and without --static, and
# compare the decisions.
# usage: run-corpus.sh CORDON CORPUS POLICY_DIR
set -u
cordon=$(realpath "$1") corpus=$(realpath "$2") policies=$(realpath "$3")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export HOME=/home/user CORDON_POLICY_PATH=$policies
unset XDG_CONFIG_HOME
# The shipped policy is compiled into cordon; a copy with one more comment line is not, so
# it goes through the TOML parser. Both must give every corpus decision, and the same words.
mkdir parsed
{ cat "$policies/default.toml"; echo "# a copy that differs from the shipped file"; } > parsed/default.toml
pass=0 fail=0
# One line in one mode: MODE is --defer (no option: as a run with exec-time checks) or --static.
# Sets got (the output) and got_status.
check() {
    local mode=$1 script=$2 out_parsed status_parsed
    local opts=()
    [[ $mode == --static ]] && opts=(--static)
    got=$("$cordon" check "${opts[@]}" -c "$script" 2>&1)
    got_status=$?
    out_parsed=$(CORDON_POLICY_PATH=$work/parsed "$cordon" check "${opts[@]}" -c "$script" 2>&1)
    status_parsed=$?
    if [[ $status_parsed -ne $got_status || ${out_parsed//$work\/parsed/$policies} != "$got" ]]; then
        fail=$((fail + 1))
        printf 'FAIL (compiled and parsed policy differ, %s): %s\n    compiled: %s\n    parsed:   %s\n' \
            "$mode" "$script" "$got" "$out_parsed"
    fi
}
while IFS= read -r line || [[ -n $line ]]; do
    [[ -z $line || $line == \#* ]] && continue
    want=${line%% *} script=${line#* }
    if [[ $want == *:nl ]]; then
        want=${want%:nl}
        script=${script//\\n/$'\n'}
    fi
    # What each mode must answer: the exit status, and whether the allow lists deferred denials.
    case $want in
        allow) expect_static=0 expect=0 deferred=no ;;
        deny) expect_static=126 expect=126 deferred=no ;;
        defer) expect_static=126 expect=0 deferred=yes ;;
        *) echo "bad corpus line: $line" >&2; exit 2 ;;
    esac
    check --static "$script"
    out_static=$got status_static=$got_status
    check --defer "$script"
    out=$got status=$got_status
    got_deferred=no
    [[ $out == "allow (deferred: "* ]] && got_deferred=yes
    if [[ $status_static -eq $expect_static && $status -eq $expect && $got_deferred == "$deferred" ]]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        printf 'FAIL (want %s, got exit %d with --static, %d without): %s\n    --static: %s\n    default:  %s\n' \
            "$want" "$status_static" "$status" "$script" "$out_static" "$out"
    fi
done < "$corpus"
# --json is well-formed enough for a line-oriented consumer, and a denial names the rule.
json=$("$cordon" check --json -c 'sudo rm -rf /')
if [[ $json != *'"decision":"deny","rule":"rm-recursive-protected"'* ]]; then
    echo "FAIL: --json output: $json"
    fail=$((fail + 1))
fi
# The argv form never goes through a shell: quotes and $ in arguments are data.
if ! "$cordon" check -- echo '$(rm -rf /)' >/dev/null; then
    echo "FAIL: argv form treated data as shell text"
    fail=$((fail + 1))
fi
"$cordon" check -- sudo rm -rf / >/dev/null
status=$?
if [[ $status -ne 126 ]]; then
    echo "FAIL: argv form: sudo rm -rf / gave exit $status"
    fail=$((fail + 1))
fi
# Errors: 125 with a cordon: prefix.
err=$("$cordon" check --policy /nonexistent/p.toml -c ls 2>&1)
status=$?
if [[ $status -ne 125 || $err != "cordon: "* ]]; then
    echo "FAIL: a missing policy file gave exit $status: $err"
    fail=$((fail + 1))
fi
echo "corpus: $pass passed, $fail failed"
[[ $fail -eq 0 ]]

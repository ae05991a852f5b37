#!/bin/bash
# Run every command of corpus.txt through `cordon check`, with and without --static, with the
# compiled-in and with a parsed copy of the default policy, and compare the decisions.
# The whole corpus goes through `cordon check --batch` (one process per mode and policy); every
# STRIDE-th line also through its own `cordon check -c`, which must answer as the batch did.
# usage: run-corpus.sh CORDON CORPUS POLICY_DIR [STRIDE]     (STRIDE default 8; 1: every line)
set -u
cordon=$(realpath "$1") corpus=$(realpath "$2") policies=$(realpath "$3") stride=${4:-8}
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

# The corpus, as the lists want[] and script[], and the scripts NUL-separated in $work/batch.
want=() script=()
while IFS= read -r line || [[ -n $line ]]; do
    [[ -z $line || $line == \#* ]] && continue
    w=${line%% *} s=${line#* }
    if [[ $w == *:nl ]]; then
        w=${w%:nl}
        s=${s//\\n/$'\n'}
    fi
    case $w in
        allow | deny | defer) ;;
        *) echo "bad corpus line: $line" >&2; exit 2 ;;
    esac
    want+=("$w") script+=("$s")
done < "$corpus"
printf '%s\0' "${script[@]}" > batch
n=${#script[@]}

# batch NAME OPTS...: the JSON decisions of the whole corpus in $work/NAME (one a line),
# with the compiled policy, and in $work/NAME.parsed with the parsed one.
batch() {
    local name=$1
    shift
    "$cordon" check "$@" --json -z --batch batch > "$name" 2> "$name.err"
    CORDON_POLICY_PATH=$work/parsed "$cordon" check "$@" --json -z --batch batch > "$name.parsed" 2> "$name.parsed.err"
    local f
    for f in "$name" "$name.parsed"; do
        if [[ -s $f.err || $(wc -l < "$f") -ne $n ]]; then
            echo "FAIL: cordon check --batch ($name): $(wc -l < "$f") decisions for $n scripts: $(head -c 300 "$f.err")"
            exit 1
        fi
    done
}
batch static --static
batch defer
mapfile -t d_static < static
mapfile -t d_static_parsed < static.parsed
mapfile -t d_defer < defer
mapfile -t d_defer_parsed < defer.parsed

# The exit status and deferral a JSON decision stands for, as "STATUS DEFERRED". A deny may
# list deferrals of its own; the corpus asks only whether an allow deferred.
answer() {
    if [[ $1 == '{"decision":"deny",'* ]]; then
        echo "126 no"
    elif [[ $1 == *',"deferred":[]}' ]]; then
        echo "0 no"
    else
        echo "0 yes"
    fi
}

for ((i = 0; i < n; i++)); do
    s=${script[i]}
    # What each mode must answer: the exit status, and whether the allow lists deferred denials.
    case ${want[i]} in
        allow) expect_static="0 no" expect="0 no" ;;
        deny) expect_static="126 no" expect="126 no" ;;
        defer) expect_static="126 no" expect="0 yes" ;;
    esac
    ok=1
    for mode in static defer; do
        declare -n compiled=d_$mode parsed=d_${mode}_parsed
        if [[ ${parsed[i]//$work\/parsed/$policies} != "${compiled[i]}" ]]; then
            ok=0
            printf 'FAIL (compiled and parsed policy differ, %s): %s\n    compiled: %s\n    parsed:   %s\n' \
                "$mode" "$s" "${compiled[i]}" "${parsed[i]}"
        fi
    done
    got_static=$(answer "${d_static[i]}") got=$(answer "${d_defer[i]}")
    if [[ $got_static != "$expect_static" || $got != "$expect" ]]; then
        ok=0
        printf 'FAIL (want %s, got "%s" with --static, "%s" without): %s\n    --static: %s\n    default:  %s\n' \
            "${want[i]}" "$got_static" "$got" "$s" "${d_static[i]}" "${d_defer[i]}"
    fi
    # The sample: the line on its own, as a user runs it, answers as the batch did.
    if ((i % stride == 0)); then
        for mode in static defer; do
            opts=()
            [[ $mode == static ]] && opts=(--static)
            declare -n decisions=d_$mode
            one_json=$("$cordon" check "${opts[@]}" --json -c "$s" 2>&1)
            one=$("$cordon" check "${opts[@]}" -c "$s" 2>&1)
            one_status=$?
            one_deferred=no
            [[ $one == "allow (deferred: "* ]] && one_deferred=yes
            if [[ $one_json != "${decisions[i]}" || "$one_status $one_deferred" != "$(answer "${decisions[i]}")" ]]; then
                ok=0
                printf 'FAIL (check -c differs from --batch, %s): %s\n    -c:      exit %d: %s\n    --batch: %s\n' \
                    "$mode" "$s" "$one_status" "$one" "${decisions[i]}"
            fi
        done
    fi
    if ((ok)); then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
# The batch's own exit status: 126 when any script is denied, 0 when all are allowed.
"$cordon" check --batch batch -z > /dev/null
[[ $? -eq 126 ]] || { echo "FAIL: --batch of the corpus did not exit 126"; fail=$((fail + 1)); }
printf 'ls\necho hi\n' | "$cordon" check --batch - > /dev/null ||
    { echo "FAIL: --batch - of two allowed lines did not exit 0"; fail=$((fail + 1)); }
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
err=$("$cordon" check --batch /nonexistent/corpus 2>&1)
status=$?
if [[ $status -ne 125 || $err != "cordon: --batch /nonexistent/corpus: "* ]]; then
    echo "FAIL: a missing --batch file gave exit $status: $err"
    fail=$((fail + 1))
fi
echo "corpus: $pass passed, $fail failed ($n lines in both modes; 1 in $stride also on its own)"
[[ $fail -eq 0 ]]

#!/usr/bin/env bash
# Runs that share a workdir (an agent's parallel tool calls, CI matrix jobs in one checkout):
# none fails because of another, nested workdirs and different profiles included; placeholders
# never outlive the last run that needs them, also when runs are killed with SIGKILL; what the
# host sees meanwhile is what its tools expect; a signal ends a stalled setup at once.
source "$TESTLIB"
# Each round starts its runs at once, so every round makes them contend at each step (setup,
# placeholders, RepoWatch's marks, teardown); more rounds only repeat that. 5 rounds of 16 keep
# the suite's time bounded on 2 cores under the sanitizers; CORDON_PARALLEL_ROUNDS=50 for a soak.
rounds=${CORDON_PARALLEL_ROUNDS:-5}

# parallel N ROUNDS DIR CMD...: N runs at once, ROUNDS times, in DIR; prints the failures.
parallel() {
  local n=$1 rounds=$2 dir=$3 r i
  shift 3
  for ((r = 0; r < rounds; r++)); do
    for ((i = 0; i < n; i++)); do
      (cd "$dir" && "$@" >/dev/null 2>"$OUT/par.$i") || { echo "round $r run $i: exit $?: $(head -c 300 "$OUT/par.$i")"; } &
    done
    wait
  done
}

# wait_started FILE...: until each FILE holds the line "started" its run's command printed once
# setup was done. Bounded at 60 s: no fixed pause fits the sanitizer build on a loaded machine.
wait_started() {
  local t n
  for ((t = 0; t < 600; t++)); do
    n=$(grep -lx started "$@" 2>/dev/null | wc -l)
    [[ $n -eq $# ]] && return 0
    sleep 0.1
  done
  not_ok "only $n of $# runs started within 60 s"
}

mkdir -p "$WORK/repo/src" "$WORK/plain"
git -C "$WORK/repo" init -q
echo 'int main(){}' > "$WORK/repo/src/main.c"
git -C "$WORK/repo" -c user.name=t -c user.email=t@t add -A && git -C "$WORK/repo" -c user.name=t -c user.email=t@t commit -qm init
echo data > "$WORK/plain/file"
# Older times than any run's, so that a changed directory time shows.
touch -d '2020-01-02 03:04:05' "$WORK/repo" "$WORK/repo/.git" "$WORK/plain"

for d in repo plain; do
  before=$(snapshot "$WORK/$d")
  failures=$(parallel 16 "$rounds" "$WORK/$d" "$CORDON" -q -- /bin/true)
  after=$(snapshot "$WORK/$d")
  [[ -z $failures ]] && ok "$d: 16 parallel runs x $rounds rounds, none failed" || not_ok "$d: failures: $(echo "$failures" | head -5)"
  [[ $before == "$after" ]] && ok "$d: the listing, times included, is unchanged afterwards" ||
    { not_ok "$d: listing changed"; diff <(echo "$before") <(echo "$after") | head -10; }
done

# Nested workdirs and different profiles, all at once.
mkdir -p "$WORK/repo/sub"
touch -d '2020-01-02 03:04:05' "$WORK/repo" "$WORK/repo/sub"
before=$(snapshot "$WORK/repo")
failures=$( {
  parallel 4 "$rounds" "$WORK/repo" "$CORDON" -q -- /bin/true &
  parallel 4 "$rounds" "$WORK/repo/sub" "$CORDON" -q -- /bin/true &
  parallel 2 "$rounds" "$WORK/repo" "$CORDON" -q -p git -- /bin/true &
  parallel 2 "$rounds" "$WORK/repo/sub" "$CORDON" -q --protect .tool-versions --protect .mcp.json -- /bin/true &
  wait; } )
after=$(snapshot "$WORK/repo")
[[ -z $failures ]] && ok "nested workdirs and different profiles in parallel: none failed" || not_ok "nested: $(echo "$failures" | head -5)"
[[ $before == "$after" ]] && ok "nested: the listing is unchanged afterwards" ||
  { not_ok "nested: listing changed"; diff <(echo "$before") <(echo "$after") | head -10; }

# While one run holds the placeholders, another run's end must not take them away from it: a
# run that starts and ends during a long one leaves the long one's protection in place.
pushd "$WORK/plain" >/dev/null
"$CORDON" -q -- /bin/sh -c "$GUARD; echo started; sleep 2; mkdir .claude/x 2>/dev/null; echo claude=\$?; mkdir -p .git/hooks 2>/dev/null; echo hooks=\$?" >"$OUT/long" 2>&1 &
long=$!
wait_started "$OUT/long"
run "$CORDON" -q -- /bin/true
short_rc=$rc
[[ -d .claude ]] && ok "a placeholder stays while another run still uses it" || not_ok "the short run removed .claude under the long one"
wait $long
popd >/dev/null
[[ $short_rc -eq 0 ]] && grep -q "^claude=[1-9]" "$OUT/long" && grep -q "^hooks=[1-9]" "$OUT/long" &&
  ok "the long run stays protected after a short run in the same workdir ended" ||
  not_ok "long run: short exit $short_rc, $(cat "$OUT/long")"

# SIGKILL: one of 4 parallel runs is killed mid-run; the others succeed; one more run restores
# the listing. Then all of them are killed: the next run removes what they left.
for victims in one all; do
  before=$(snapshot "$WORK/plain")
  pids=()
  rm -f "$OUT"/k.[1-4]
  for i in 1 2 3 4; do
    (cd "$WORK/plain" && exec "$CORDON" -q -- /bin/sh -c 'echo started; sleep 4; echo fine') >"$OUT/k.$i" 2>&1 &
    pids+=($!)
  done
  # Kill only once every command runs (setup done, placeholders made).
  wait_started "$OUT"/k.[1-4]
  if [[ $victims == one ]]; then kill -KILL "${pids[1]}"; else kill -KILL "${pids[@]}"; fi
  bad=0
  for i in 0 1 2 3; do
    rc=0
    wait "${pids[$i]}" || rc=$?
    if [[ $victims == one && $i -ne 1 ]] && { [[ $rc -ne 0 ]] || ! grep -q '^fine$' "$OUT/k.$((i + 1))"; }; then bad=1; fi
  done
  if [[ $victims == one ]]; then
    [[ $bad -eq 0 ]] && ok "one of 4 parallel runs killed with SIGKILL: the other 3 succeed" || not_ok "survivors failed: $(cat "$OUT"/k.*)"
  else
    [[ -d $WORK/plain/.claude ]] && ok "all 4 killed with SIGKILL: their placeholders are still there" || not_ok "nothing left after killing all"
  fi
  sleep 0.2  # the killed runs' jails end with them (PDEATHSIG)
  pushd "$WORK/plain" >/dev/null
  run "$CORDON" -q -- /bin/true
  popd >/dev/null
  after=$(snapshot "$WORK/plain")
  [[ $rc -eq 0 && $before == "$after" ]] && ok "SIGKILL of $victims: after one more run the listing equals the one before" ||
    { not_ok "SIGKILL of $victims: exit $rc, listing changed"; diff <(echo "$before") <(echo "$after") | head -10; }
done

# What the host sees during a run: empty directories where tools make directories. An editor
# can create its settings meanwhile; they stay after the run, as the host's (unmarked). An
# empty directory of the user's own with the name is never taken for a placeholder.
mkdir -p "$WORK/edit" && mkdir "$WORK/edit/.idea"
pushd "$WORK/edit" >/dev/null
"$CORDON" -q -- /bin/sh -c 'echo started; sleep 2' >"$OUT/edit" 2>&1 &
pid=$!
wait_started "$OUT/edit"
kinds=$(stat -c '%F' .claude .vscode .git 2>&1 | sort -u)
mkdir -p .vscode && echo '{}' > .vscode/settings.json && host_rc=0 || host_rc=$?
wait $pid
popd >/dev/null
[[ $kinds == directory ]] && ok "during a run the host sees .claude, .vscode and .git as directories" || not_ok "host sees: $kinds"
[[ $host_rc -eq 0 ]] && ok "an editor on the host can create .vscode/settings.json during a run" || not_ok "host write failed"
[[ -f $WORK/edit/.vscode/settings.json && $(stat -c %a "$WORK/edit/.vscode") != 1755 ]] &&
  ok "the filled .vscode stays after the run, unmarked" || not_ok ".vscode after the run: $(ls -la "$WORK/edit")"
[[ -d $WORK/edit/.idea && ! -e $WORK/edit/.claude && ! -e $WORK/edit/.git ]] &&
  ok "the user's own empty .idea stays; the placeholders are gone" || not_ok "edit: $(ls -A "$WORK/edit")"

# A stalled setup: a stranger holds a lock on a placeholder the run needs. SIGTERM and SIGINT
# end cordon promptly, with the jail gone and nothing of the run left behind.
mkdir -p "$WORK/stall" && mkdir -m 1755 "$WORK/stall/.claude"
# The holder is the sleep itself (its lock on an inherited descriptor), so that killing it by its
# pid ends it: a sleep left behind would hold the test's output open for its 30 seconds.
(exec 9<"$WORK/stall/.claude" && flock -x 9 && exec sleep 30) >/dev/null 2>&1 &
holder=$!
# Until the lock is held (flock -n fails then); polled, bounded at 60 s.
for ((t = 0; t < 600; t++)); do flock -n "$WORK/stall/.claude" true 2>/dev/null || break; sleep 0.1; done
for sig in TERM INT; do
  before=$(snapshot "$WORK/stall")
  (cd "$WORK/stall" && exec "$CORDON" -- /bin/sh -c 'echo RAN') >"$OUT/stall.out" 2>"$OUT/stall.err" &
  pid=$!
  # Until cordon says what it waits for (after a second of waiting), or ends; bounded at 60 s.
  for ((t = 0; t < 600; t++)); do
    grep -q "waiting for .*\.claude, locked by another process" "$OUT/stall.err" && break
    [[ -n $(alive $pid) ]] || break
    sleep 0.1
  done
  [[ -n $(alive $pid) ]] && ok "SIG$sig: setup is stalled on the locked placeholder" || not_ok "SIG$sig: cordon did not wait"
  grep -q "waiting for .*\.claude, locked by another process" "$OUT/stall.err" && ok "SIG$sig: cordon says what it waits for" ||
    not_ok "SIG$sig: no note: $(cat "$OUT/stall.err")"
  start=$(date +%s%N)
  kill -$sig $pid
  rc=0
  wait $pid || rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  want=$((128 + $(kill -l $sig)))
  [[ $rc -eq $want && $ms -lt 1000 ]] && ok "SIG$sig during a stalled setup ends cordon in ${ms} ms (exit $rc)" ||
    not_ok "SIG$sig: exit $rc (want $want) after ${ms} ms"
  ! grep -q RAN "$OUT/stall.out" && ok "SIG$sig: the command never ran" || not_ok "SIG$sig: the command ran"
  after=$(snapshot "$WORK/stall")
  [[ $before == "$after" ]] && ok "SIG$sig: nothing of the run is left in the workdir" ||
    { not_ok "SIG$sig: listing changed"; diff <(echo "$before") <(echo "$after") | head; }
done
kill $holder
wait $holder 2>/dev/null || true
finish

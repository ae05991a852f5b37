#!/bin/sh
# The cgroup v2 limit tests (SPEC §7), run inside the test VM by tests/vm/init with busybox sh.
# usage: limits.sh MODE
#   root      as root in the root cgroup (cordon's base: /sys/fs/cgroup)
#   user      as uid 1000 in a leaf of a fully delegated subtree ($DELEGATED)
#   pidsonly  as uid 1000 in a delegated subtree offering only the pids controller ($PIDSONLY)
#   plain     as uid 1000 in a cgroup that is not delegated ($PLAIN)
# Every check prints "CORDON-VM: ok MODE ID - ..." or "CORDON-VM: not ok MODE ID - ..." plus
# diagnostics; tests/vm/CMakeLists.txt lists the IDs that CTest expects.
MODE=$1
CG=/sys/fs/cgroup
T=$(mktemp -d)
J="$CORDON --no-policy"  # the command policy is not what these tests are about

pass() { echo "CORDON-VM: ok $MODE $1 - $2"; }
fail() {
  echo "CORDON-VM: not ok $MODE $1 - $2"
  sed 's/^/CORDON-VM: #   stderr: /' "$T/err" | head -6
  sed 's/^/CORDON-VM: #   stdout: /' "$T/out" | head -4
  sed 's/^/CORDON-VM: #   status: /' "$T/json" | head -2
}
# run CMD...: stdout, stderr and --status-json fd:3 go to $T/{out,err,json}; status in $rc.
run() {
  rc=0
  "$@" >"$T/out" 2>"$T/err" 3>"$T/json" </dev/null || rc=$?
}
json_num() { sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" "$T/json"; }
leftovers() { ls -d "$1"/cordon-* 2>/dev/null; }
# expect_clean ID BASE: no cgroup of cordon's is left in BASE.
expect_clean() {
  if [ -z "$(leftovers "$2")" ]; then pass "$1" "no cordon cgroup left in $2"
  else fail "$1" "left behind: $(leftovers "$2" | tr '\n' ' ')"; fi
}

case $MODE in
  root) BASE=$CG ;;
  user) BASE=$DELEGATED ;;
  pidsonly) BASE=$PIDSONLY ;;
  plain) BASE=$PLAIN ;;
esac

limit_tests() {
  # A memory hog is OOM-killed at --memory and reported as oom.
  run "$CORDON" --memory 64M --status-json fd:3 -- "$HELPER" hog 512
  if [ $rc -eq 137 ] && grep -q 'oom' "$T/err" && grep -q '"reason":"oom"' "$T/json" &&
     grep -q '"exit_code":137' "$T/json"; then
    pass oom "--memory 64M: hog killed, exit 137, oom on stderr and in the status"
  else fail oom "--memory 64M hog: exit $rc"; fi
  expect_clean clean-oom "$BASE"

  # Within the limit the command runs, and the cgroup's peak memory is reported.
  run $J --memory 64M --status-json fd:3 -- "$HELPER" hog 16
  peak=$(json_num peak_memory_bytes)
  if [ $rc -eq 0 ] && grep -q 'allocated 16' "$T/out" && [ "${peak:-0}" -ge 16777216 ] &&
     [ "${peak:-0}" -le 67108864 ]; then
    pass peak "--memory 64M: 16M fits; peak_memory_bytes $peak"
  else fail peak "16M under --memory 64M: exit $rc, peak ${peak:-none}"; fi

  # A fork loop stops at --pids: 8 tasks for the command's tree (the helper and 7 children).
  run $J --pids 8 -- "$HELPER" forks 50
  if [ $rc -eq 0 ] && grep -q '^forked 7 then Resource temporarily unavailable' "$T/out"; then
    pass pids "--pids 8: the fork loop got 7 children, then EAGAIN"
  else fail pids "--pids 8: exit $rc, $(cat "$T/out")"; fi

  # --cpus 0.5 throttles a busy loop to about half a core: cpu.stat counts throttled periods
  # (read while it runs) and the CPU time is at most ~60% of the wall time.
  $J --cpus 0.5 --status-json fd:3 -- "$HELPER" spin 4 >"$T/out" 2>"$T/err" 3>"$T/json" </dev/null &
  pid=$!
  stat=
  while kill -0 $pid 2>/dev/null; do
    s=$(cat "$BASE/cordon-$pid/cpu.stat" 2>/dev/null) && [ -n "$s" ] && stat=$s
    sleep 0.2
  done
  rc=0
  wait $pid || rc=$?
  throttled=$(echo "$stat" | sed -n 's/^nr_throttled //p')
  cpu=$(json_num cpu_ms)
  wall=$(json_num wall_ms)
  if [ $rc -eq 0 ] && [ "${throttled:-0}" -gt 0 ] && [ -n "$cpu" ] && [ -n "$wall" ] &&
     [ $((cpu * 100)) -le $((wall * 60)) ] && [ $((cpu * 100)) -ge $((wall * 20)) ]; then
    pass cpus "--cpus 0.5: nr_throttled $throttled, cpu ${cpu}ms of ${wall}ms wall"
  else fail cpus "--cpus 0.5: exit $rc, nr_throttled ${throttled:-?}, cpu ${cpu:-?}ms, wall ${wall:-?}ms"; fi

  # Without clone3 (Linux < 5.3, or a container's seccomp profile) the supervisor moves the child
  # into the cgroup before it runs anything and the child creates its cgroup namespace there.
  run "$HELPER" noclone3 $J --memory 64M --status-json fd:3 -- "$HELPER" hog 512
  if [ $rc -eq 137 ] && grep -q '"reason":"oom"' "$T/json"; then pass fallback-oom "without clone3: oom at --memory"
  else fail fallback-oom "without clone3: exit $rc"; fi
  run "$HELPER" noclone3 $J --pids 8 -- cat /proc/self/cgroup
  if [ $rc -eq 0 ] && [ "$(cat "$T/out")" = "0::/" ] && [ -z "$(leftovers "$BASE")" ]; then
    pass fallback-cgroupns "without clone3: the payload's cgroup is / and nothing is left"
  else fail fallback-cgroupns "without clone3: exit $rc, $(cat "$T/out"), left: $(leftovers "$BASE")"; fi

  # The jail's cgroup namespace: the payload sees its own cgroup as the root.
  run $J --memory 64M -- cat /proc/self/cgroup
  if [ $rc -eq 0 ] && [ "$(cat "$T/out")" = "0::/" ]; then pass cgroupns "the payload's cgroup is / in its namespace"
  else fail cgroupns "/proc/self/cgroup inside: $(cat "$T/out")"; fi

  # --timeout kills the whole tree through the cgroup (TERM is ignored, so SIGKILL is needed).
  run $J --memory 64M --timeout 1s -- /bin/sh -c 'trap "" TERM; sleep 1001 & sleep 1002 & while :; do sleep 1; done'
  if [ $rc -eq 124 ]; then pass timeout "--timeout with a cgroup: exit 124"; else fail timeout "exit $rc"; fi
  if ps -o args | grep -q '^sleep 100[12]'; then fail clean-timeout "payload processes survived the timeout"
  elif [ -n "$(leftovers "$BASE")" ]; then fail clean-timeout "cgroup left: $(leftovers "$BASE")"
  else pass clean-timeout "no process and no cgroup left after the timeout"; fi

  # cordon killed with SIGKILL: its jail dies with it; the cgroup it leaves is removed by the
  # next run.
  $J --memory 64M -- sleep 1003 >/dev/null 2>&1 </dev/null &
  pid=$!
  i=0
  while [ $i -lt 100 ] && [ "$(wc -l < "$BASE/cordon-$pid/jail/cgroup.procs" 2>/dev/null || echo 0)" -lt 2 ]; do
    sleep 0.1
    i=$((i + 1))
  done
  kill -9 $pid
  wait $pid 2>/dev/null
  i=0
  while [ $i -lt 100 ] && ps -o args | grep -q '^sleep 1003'; do sleep 0.1; i=$((i + 1)); done
  if ps -o args | grep -q '^sleep 1003'; then fail sigkill-stale "the payload outlived a SIGKILLed cordon"
  elif [ -d "$BASE/cordon-$pid" ]; then pass sigkill-stale "SIGKILL of cordon: payload gone, cgroup cordon-$pid left"
  else fail sigkill-stale "cordon-$pid was never created (setup did not get that far)"; fi
  run $J --memory 64M -- true
  if [ $rc -eq 0 ] && [ -z "$(leftovers "$BASE")" ]; then pass sigkill-cleaned "the next run removed the stale cgroup"
  else fail sigkill-cleaned "exit $rc, left: $(leftovers "$BASE")"; fi
}

case $MODE in
  root|user)
    limit_tests
    ;;
esac

if [ "$MODE" = root ]; then
  # The supervisor alone in its cgroup: it moves to a leaf (no internal processes), the limits
  # work, and afterwards the cgroup is as it was: no children, no controllers enabled.
  A=$CG/alone.scope
  mkdir $A
  run sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' $A $J --memory 64M --status-json fd:3 -- "$HELPER" hog 512
  if [ $rc -eq 137 ] && grep -q '"reason":"oom"' "$T/json"; then pass vacate-oom "alone in its cgroup: oom reported"
  else fail vacate-oom "alone in its cgroup: exit $rc"; fi
  if [ -z "$(ls -d $A/*/ 2>/dev/null)" ] && [ -z "$(cat $A/cgroup.subtree_control)" ] && rmdir $A; then
    pass vacate-clean "the supervisor's leaf is gone and the cgroup is restored"
  else fail vacate-clean "left in $A: $(ls -d $A/*/ 2>/dev/null) subtree_control: $(cat $A/cgroup.subtree_control)"; fi
fi

if [ "$MODE" = pidsonly ]; then
  run $J --memory 32M -- true
  if [ $rc -eq 125 ] && grep -q '^cordon: --memory: cannot apply the limit: the memory controller is not available' "$T/err" &&
     grep -q 'hint:.*best-effort' "$T/err"; then
    pass unavailable-125 "--memory without the memory controller: exit 125 with why and what to do"
  else fail unavailable-125 "exit $rc"; fi
  run $J --limits best-effort --memory 32M -- echo ran
  if [ $rc -eq 0 ] && grep -q '^ran$' "$T/out" && grep -q '^cordon: warning: --memory not applied' "$T/err"; then
    pass best-effort-warns "--limits best-effort: a warning, and the command runs"
  else fail best-effort-warns "exit $rc"; fi
  run $J --limits best-effort --memory 32M --pids 8 -- "$HELPER" forks 50
  if [ $rc -eq 0 ] && grep -q '^forked 7 ' "$T/out" && grep -q 'warning: --memory not applied' "$T/err"; then
    pass best-effort-partial "best-effort applies --pids and warns about --memory"
  else fail best-effort-partial "exit $rc: $(cat "$T/out")"; fi
  expect_clean clean "$BASE"
fi

if [ "$MODE" = plain ]; then
  run $J --memory 32M -- true
  if [ $rc -eq 125 ] && grep -q 'not delegated to uid 1000' "$T/err" && grep -q 'hint:.*Delegate=yes' "$T/err"; then
    pass not-delegated "a cgroup that is not delegated: exit 125 with why and what to do"
  else fail not-delegated "exit $rc"; fi
  run $J --limits best-effort --pids 8 -- echo ran
  if [ $rc -eq 0 ] && grep -q '^ran$' "$T/out" && grep -q 'warning: --pids not applied' "$T/err"; then
    pass best-effort-runs "not delegated, best-effort: warns and runs"
  else fail best-effort-runs "exit $rc"; fi
fi
rm -rf "$T"

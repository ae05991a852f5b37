#!/usr/bin/env bash
# Processes (SPEC §4): new pid namespace, unkillable host processes, a small init, signal relay,
# and the payload dies with cordon.
source "$TESTLIB"

sleep 300 &
host_sleeper=$!
trap 'kill $host_sleeper 2>/dev/null' EXIT

jailed 'ps -e -o pid=,comm= | wc -l; ps -e -o pid= | sort -n | tail -1'
expect_no_out "^ *${host_sleeper}$" "host processes are invisible"
jailed 'kill -9 -1; echo survived'
sleep 0.2
[[ -n $(alive "$host_sleeper") ]] && ok "a host process survives kill -9 -1 inside" || not_ok "kill -9 -1 killed a host process"
jailed "kill -9 $host_sleeper 2>&1; echo rc=\$?"
expect_out "rc=[1-9]" "a host pid cannot be signalled from inside"
[[ -n $(alive "$host_sleeper") ]] && ok "the host process is still alive" || not_ok "host process died"

jailed 'cat /proc/1/environ >/dev/null 2>&1 && echo READ-ENVIRON; cat /proc/1/mem >/dev/null 2>&1 && echo READ-MEM; ls -l /proc/1/exe >/dev/null 2>&1 && echo READ-EXE; kill -9 1; echo still=$?'
expect_no_out "READ-ENVIRON" "init's environment is unreadable"
expect_no_out "READ-MEM" "init's memory is unreadable"
expect_no_out "READ-EXE" "init's exe link is unreadable"
jailed 'kill -KILL 1; sleep 0.2; echo after'
expect_out "^after$" "SIGKILL to init from inside has no effect"

# Zombies are reaped by init: a double-forked orphan does not stay defunct.
jailed '(sh -c "sleep 0.1 &" &); sleep 0.5; ps -e -o stat= | grep -c Z'
expect_out "^0$" "orphans are reaped"

# kill(cordon) with SIGTERM is relayed to the payload.
"$CORDON" -- /bin/sh -c 'trap "echo got-term; exit 7" TERM; while :; do sleep 0.1; done' >"$OUT/out" 2>"$OUT/err" &
cpid=$!
sleep 1
kill -TERM "$cpid"
rc=0; wait "$cpid" || rc=$?
[[ $rc -eq 7 ]] && ok "SIGTERM to cordon reaches the payload (exit 7)" || not_ok "SIGTERM relay: exit $rc"
expect_out "got-term" "the payload's TERM trap ran"

# A SIGTERM while the jail is still being built is not lost: before cordon blocks it, it ends
# cordon; after, it ends the run before or right after the command starts (143 either way).
# 20 tries, 0-4 ms after cordon starts; stops at the first miss.
term_missed=
for i in $(seq 0 19); do
  "$CORDON" -- sleep 3 >/dev/null 2>&1 &
  cpid=$!
  sleep "$(awk -v i="$i" 'BEGIN { printf "%.4f", 0.0002 * i }')"
  t0=$(date +%s%N)
  kill -TERM "$cpid"
  rc=0; wait "$cpid" || rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  if [[ $rc -ne 143 ]] || ((ms > 2000)); then term_missed="try $i: exit $rc after ${ms} ms"; break; fi
done
if [[ -z $term_missed ]]; then ok "SIGTERM during jail startup ends the run with 143 (20 tries, 0-4 ms)"
else not_ok "SIGTERM during jail startup was lost: $term_missed"; fi

# The command runs on every CPU cordon's caller allowed it: the supervisor starts init on
# another CPU than its own, and gives it the caller's set back before the command exists.
# Both jails, and a caller restricted to one CPU (taskset), whose one CPU stays the command's.
want=$(sh -c "$CPUS_LINE")
jailed "$CPUS_LINE"
expect_out "^${want}\$" "the command gets the caller's CPUs ($want)"
if (($(landlock_abi) >= 2)); then
  run "$CORDON" -q --isolation landlock -- /bin/sh -c "$CPUS_LINE"
  expect_out "^${want}\$" "the Landlock jail's command gets the caller's CPUs ($want)"
else
  skip "no Landlock jail on this kernel: its CPUs are not checked"
fi
if [[ $(nproc) -ge 2 ]]; then
  last=$(($(nproc) - 1))
  run taskset -c "$last" "$CORDON" -- /bin/sh -c "$GUARD; $CPUS_LINE"
  expect_out "^${last}\$" "a caller restricted to CPU $last: the command runs there alone"
else
  skip "one CPU here: nothing to restrict"
fi

# SIGKILL of cordon kills the whole jail.
"$CORDON" -- /bin/sh -c 'sleep 300 & sleep 300' >/dev/null 2>&1 &
cpid=$!
# Until both sleeps run (polled, bounded at 30 s: no fixed pause fits every machine's load).
for ((t = 0; t < 300; t++)); do
  init=$(cat /proc/"$cpid"/task/*/children 2>/dev/null | tr ' ' '\n' | head -1)
  kids=$(cat /proc/"$init"/task/*/children 2>/dev/null)
  grand=""; for k in $kids; do grand+=" $(cat /proc/"$k"/task/*/children 2>/dev/null)"; done
  [[ $(ps -o comm= -p "$(echo $kids $grand | tr ' ' ,)" 2>/dev/null | grep -c '^sleep$') -ge 2 ]] && break
  sleep 0.1
done
all="$init $kids $grand"
kill -KILL "$cpid"; wait "$cpid" 2>/dev/null || true
sleep 0.5
alive=$(alive $all)
[[ -n $init && -n $kids && -z $alive ]] && ok "SIGKILL of cordon kills the payload and its children" || not_ok "left alive after SIGKILL:$alive (init=$init kids=$kids)"
finish

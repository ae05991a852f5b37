#!/usr/bin/env bash
# Every exit status of SPEC §3 except 126-for-policy, and --status-json.
source "$TESTLIB"

expect_exit 0 "true passes through" "$CORDON" -- true
expect_exit 1 "false passes through" "$CORDON" -- false
expect_exit 42 "an arbitrary status passes through" "$CORDON" -c 'exit 42'
expect_exit 143 "killed by SIGTERM is 128+15" "$CORDON" -- /bin/sh -c 'kill -TERM $$'
expect_exit 137 "killed by SIGKILL is 128+9" "$CORDON" -- /bin/sh -c 'kill -KILL $$'
expect_exit 127 "a missing command is 127" "$CORDON" -- cordon-no-such-command
expect_err "cordon-no-such-command: command not found inside the jail" "127 says what was not found"
expect_exit 127 "a missing absolute path is 127" "$CORDON" -- /nonexistent/bin/x
printf '#!/bin/sh\necho hi\n' > "$WORK/noexec.sh"
chmod 0644 "$WORK/noexec.sh"
expect_exit 126 "a file without exec permission is 126" "$CORDON" -- "$WORK/noexec.sh"
expect_err "^cordon: .*noexec.sh: cannot execute inside the jail: Permission denied" "126 says why"
rm -f "$WORK/noexec.sh"

start=$(date +%s)
expect_exit 124 "--timeout expiry is 124" "$CORDON" --timeout 1s -- sleep 30
elapsed=$(($(date +%s) - start))
if ((elapsed < 10)); then ok "timeout kills promptly (${elapsed}s)"; else not_ok "timeout took ${elapsed}s"; fi
expect_err "timeout" "timeout is reported on stderr"
expect_exit 124 "--timeout kills a payload that ignores SIGTERM" "$CORDON" --timeout 1s -- /bin/sh -c 'trap "" TERM; while :; do sleep 1; done'

expect_exit 125 "an unknown option is 125" "$CORDON" --no-such-option -- true
expect_err "^cordon: " "errors start with cordon:"
expect_exit 125 "a bad size names option and value" "$CORDON" --tmpfs-size 12Q -- true
expect_err "--tmpfs-size.*12Q" "the bad size message names --tmpfs-size and 12Q"
expect_exit 125 "a bad duration names option and value" "$CORDON" --timeout 10x -- true
expect_err "--timeout.*10x" "the bad duration message names --timeout and 10x"
expect_exit 125 "a bad --net value" "$CORDON" --net maybe -- true
expect_exit 125 "a missing --ro path" "$CORDON" --ro /nonexistent-cordon-path -- true
expect_exit 125 "a bad --audit target is refused, not ignored" "$CORDON" --audit fd:x -- true
expect_err "--audit" "the refusal names --audit"
expect_exit 125 "an --audit file that cannot be opened" "$CORDON" --audit /nonexistent-cordon-dir/audit.jsonl -- true
expect_err "--audit /nonexistent-cordon-dir/audit.jsonl" "the error names the file"
expect_exit 125 "a missing profile" "$CORDON" -p no-such-profile -- true
expect_err "profile 'no-such-profile'.*not found" "the missing profile is named"

# Nothing runs after an error: the marker must not appear.
marker="$WORK/should-not-exist"
expect_exit 125 "nothing is executed after a bad option" "$CORDON" --timeout nope -- touch "$marker"
if [[ -e $marker ]]; then not_ok "the command ran despite the error"; else ok "the command did not run"; fi

# --status-json: a path and an inherited fd.
expect_exit 3 "status json run" "$CORDON" --status-json "$WORK/status.json" -c 'exit 3'
if grep -q '"exit_code":3' "$WORK/status.json" && grep -q '"reason":"exited"' "$WORK/status.json" &&
   grep -q '"wall_ms":' "$WORK/status.json" && grep -q '"cpu_ms":' "$WORK/status.json" &&
   grep -q '"peak_memory_bytes":' "$WORK/status.json" && grep -q '"denials":\[\]' "$WORK/status.json"; then
  ok "status json has exit_code, reason, wall_ms, cpu_ms, peak_memory_bytes, denials"
else
  not_ok "status json content: $(cat "$WORK/status.json")"
fi
json=$("$CORDON" --status-json fd:3 -- /bin/sh -c 'kill -TERM $$' 3>&1 >/dev/null 2>&1 || true)
if [[ $json == *'"reason":"signaled"'* && $json == *'"signal":15'* && $json == *'"exit_code":143'* ]]; then
  ok "status json to fd:3 reports signaled/15/143"
else
  not_ok "status json on fd:3: $json"
fi
json=$("$CORDON" --timeout 1s --status-json fd:3 -- sleep 30 3>&1 >/dev/null 2>&1 || true)
if [[ $json == *'"reason":"timeout"'* && $json == *'"exit_code":124'* ]]; then ok "status json reports timeout"; else not_ok "timeout json: $json"; fi
# --status-json at every exit, bad input included (SPEC §9): a CI step that always parses it.
# Each case: the file holds one strict JSON object with exit 125, the reason, and the message
# naming what was wrong; nothing ran.
strict_json() {  # FILE: one JSON object, valid UTF-8, printed as KEY=VALUE lines for the checks
  python3 -c 'import json,sys; d=json.loads(open(sys.argv[1],"rb").read().decode("utf-8")); [print(f"{k}={v}") for k,v in d.items()]' "$1"
}
bad_input() {  # DESCRIPTION REASON NEEDLE ARGS...: ARGS fail before the run
  local desc=$1 reason=$2 needle=$3
  shift 3
  rm -f "$WORK/status.json" "$marker"
  run "$CORDON" "$@" --status-json "$WORK/status.json" -- touch "$marker"
  local fields
  fields=$(strict_json "$WORK/status.json" 2>&1)
  if [[ $rc -eq 125 && ! -e $marker && $fields == *"exit_code=125"* && $fields == *"reason=$reason"* &&
        $fields == *"$needle"* ]]; then
    ok "status json for $desc: exit 125, $reason, names it"
  else
    not_ok "status json for $desc (rc $rc): $fields"
  fi
}
bad_input "a bad --timeout" usage-error "--timeout" --timeout nope
bad_input "an unknown profile" usage-error "nosuchprofile" -p nosuchprofile
bad_input "a missing --rw path" usage-error "/nonexistent/cordon-rw" --rw /nonexistent/cordon-rw
bad_input "an unknown option" usage-error "--no-such-option" --no-such-option
bad_input "a bad --memory" usage-error "--memory" --memory 12Q
# The command's own --status-json (no "--" before it) is never taken for cordon's, nor is a
# later one: the file cordon was given gets the object, the command's is left alone.
echo precious > "$WORK/tool.json"
run "$CORDON" --status-json "$WORK/status.json" --timeout=5x mytool --status-json "$WORK/tool.json"
[[ $rc -eq 125 && $(cat "$WORK/tool.json") == precious && -s $WORK/status.json ]] &&
  ok "bad input: the command's own --status-json file is untouched, cordon's is written" ||
  not_ok "bad input and the command's --status-json (rc $rc): tool.json=$(cat "$WORK/tool.json")"
run "$CORDON" --timeout=5x sh -c 'echo hi' --status-json "$WORK/tool.json"
[[ $rc -eq 125 && $(cat "$WORK/tool.json") == precious ]] && ok "bad input: a --status-json after the command is the command's" ||
  not_ok "a --status-json after the command was taken: $(cat "$WORK/tool.json")"
# A limit this host cannot apply: refused under --limits required (the default), and recorded
# in the file under best-effort. Where the host has the controllers (the VM), it applies.
if [[ -n $(cat /sys/fs/cgroup/unified/cgroup.controllers /sys/fs/cgroup/cgroup.controllers 2>/dev/null | grep -w pids) ]]; then
  echo "# [$RUN_AS] this host's cgroup v2 has the pids controller: the unapplied-limit cases need one without"
else
  bad_input "a limit the host cannot apply" setup-error "--pids" --pids 100
  run "$CORDON" --pids 100 --limits best-effort --status-json "$WORK/status.json" -- true
  fields=$(strict_json "$WORK/status.json" 2>&1)
  [[ $rc -eq 0 && $fields == *"limits_not_applied=["?"--pids: "* ]] &&
    ok "status json records a limit dropped under --limits best-effort" || not_ok "best-effort json (rc $rc): $fields"
fi
rm -f "$WORK/status.json"
# A --status-json among the values of another option (-qc's SCRIPT) is no target of cordon's:
# the failure that follows writes nothing there.
echo precious >"$OUT/victim"
expect_exit 125 "-qc --status-json FILE: a SCRIPT and a COMMAND" "$CORDON" -qc --status-json "$OUT/victim"
[[ $(cat "$OUT/victim") == precious ]] && ok "the file named in -qc's SCRIPT was left alone" ||
  not_ok "the file after -qc: $(head -c 200 "$OUT/victim")"
finish

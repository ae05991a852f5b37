# Shared helpers for the integration scripts (sourced). Each check prints "ok - ..." or
# "not ok - ..." (or "# skip: ..." with the reason it cannot run here); finish prints
# "N passed, N failed[, N skipped]" and fails on any failure, else exits 77 (CTest's skip) only
# when every check skipped: a skip is reported per check (scripts/test lists them), and the
# script's other checks count.
set -u
passed=0
failed=0
skipped=0
OUT=$(mktemp -d "${TMPDIR:-/tmp}/cordon-out.XXXXXX")

ok() { passed=$((passed + 1)); echo "ok - [$RUN_AS] $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - [$RUN_AS] $*"; }
# skip REASON: a check this host cannot run, and why.
skip() { skipped=$((skipped + 1)); echo "# skip: [$RUN_AS] $*"; }
finish() {
  rm -rf "$OUT"
  if [[ $skipped -eq 0 ]]; then
    echo "$passed passed, $failed failed"
  else
    echo "$passed passed, $failed failed, $skipped skipped"
  fi
  [[ $failed -eq 0 ]] || return 1
  [[ $passed -gt 0 || $skipped -eq 0 ]] || return 77
}

# run CMD...: runs it, leaving stdout in $OUT/out, stderr in $OUT/err and the status in $rc.
run() {
  rc=0
  "$@" >"$OUT/out" 2>"$OUT/err" </dev/null || rc=$?
}

# expect_exit CODE DESCRIPTION CMD...
expect_exit() {
  local want=$1 desc=$2
  shift 2
  run "$@"
  if [[ $rc -eq $want ]]; then ok "$desc (exit $rc)"; else
    not_ok "$desc: exit $rc, expected $want"
    sed 's/^/#   stderr: /' "$OUT/err" | head -5
    sed 's/^/#   stdout: /' "$OUT/out" | head -5
  fi
}

# expect_rc CODE DESCRIPTION: the last run's status.
expect_rc() {
  if [[ $rc -eq $1 ]]; then ok "$2 (exit $rc)"; else
    not_ok "$2: exit $rc, expected $1"
    sed 's/^/#   stderr: /' "$OUT/err" | head -5
  fi
}

# A test's own background server: it sets srv=$! when it starts one; stop_server ends that one
# process by its pid (and is the EXIT trap of tests that start one).
srv=
stop_server() {
  if [[ -n $srv ]]; then
    kill "$srv" 2>/dev/null || true
    wait "$srv" 2>/dev/null || true
    srv=
  fi
}

# serve_http DIR: a static HTTP server of the test's own on 127.0.0.1, serving DIR, in the
# background: srv is its pid (stop_server ends it), port its port. Fails if it did not start.
serve_http() {
  local portfile
  portfile=$(mktemp -u "$OUT/port.XXXXXX")
  /usr/bin/python3 - "$1" "$portfile" </dev/null >/dev/null 2>&1 <<'EOF' &
import http.server, os, socketserver, sys, threading, time
os.chdir(sys.argv[1])
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
s = socketserver.ThreadingTCPServer(('127.0.0.1', 0), Quiet)
threading.Thread(target=s.serve_forever, daemon=True).start()
open(sys.argv[2] + '.tmp', 'w').write(str(s.server_address[1]))
os.rename(sys.argv[2] + '.tmp', sys.argv[2])
time.sleep(600)  # never outlive the test
EOF
  srv=$!
  for _ in $(seq 100); do [[ -s $portfile ]] && break; sleep 0.1; done
  [[ -s $portfile ]] || return 1
  port=$(cat "$portfile")
}

# alive PID...: prints those that still run (zombies count as gone).
alive() {
  local p st
  for p in "$@"; do
    st=$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) || continue
    [[ -n $st && $st != Z && $st != X ]] && echo "$p"
  done
}

# ends_with_parent TAG DESCRIPTION CMD...: CMD, started by a shell that is then SIGKILLed, is
# gone within 10 s (a parent-death signal reached it). CMD's jailed command line is TAG, a name
# no other process has; it is found by TAG, and ended by its pid if it outlived its parent.
ends_with_parent() {
  local tag=$1 desc=$2 parent left _
  shift 2
  bash -c '"$@" </dev/null >/dev/null 2>&1 & wait' _ "$@" &
  parent=$!
  for _ in $(seq 100); do pgrep -fx "$tag" >/dev/null && break; sleep 0.1; done
  if ! pgrep -fx "$tag" >/dev/null; then
    kill -9 "$parent" 2>/dev/null
    not_ok "$desc: the command did not start"
    return
  fi
  kill -9 "$parent"
  wait "$parent" 2>/dev/null
  for _ in $(seq 100); do pgrep -fx "$tag" >/dev/null || break; sleep 0.1; done
  left=$(pgrep -fx "$tag" | tr '\n' ' ')
  if [[ -z $left ]]; then ok "$desc"; else
    not_ok "$desc: still running: $left"
    # shellcheck disable=SC2086 # the pids
    kill -9 $left 2>/dev/null
  fi
}

# expect_out PATTERN DESCRIPTION: the last run's stdout matches the extended regex.
expect_out() {
  if grep -Eq -- "$1" "$OUT/out"; then ok "$2"; else
    not_ok "$2: stdout does not match /$1/"
    sed 's/^/#   stdout: /' "$OUT/out" | head -8
    sed 's/^/#   stderr: /' "$OUT/err" | head -5
  fi
}
expect_err() {
  if grep -Eq -- "$1" "$OUT/err"; then ok "$2"; else
    not_ok "$2: stderr does not match /$1/"
    sed 's/^/#   stderr: /' "$OUT/err" | head -8
  fi
}
expect_no_err() {
  if grep -Eq -- "$1" "$OUT/err"; then
    not_ok "$2: stderr matches /$1/"
    sed 's/^/#   stderr: /' "$OUT/err" | head -8
  else ok "$2"; fi
}
expect_no_out() {
  if grep -Eq -- "$1" "$OUT/out"; then
    not_ok "$2: stdout matches /$1/"
    sed 's/^/#   stdout: /' "$OUT/out" | head -8
  else ok "$2"; fi
}

# landlock_abi: the Landlock ABI the jail uses here (--dry-run says), 0 for none.
landlock_abi() {
  local abi
  abi=$("$CORDON" --dry-run -- true 2>/dev/null | sed -n 's/^landlock: *ABI \([0-9]*\).*/\1/p')
  echo "${abi:-0}"
}

# A script that prints the CPUs its process may run on (sh -c, inside the jail or outside):
# the jail's command gets its caller's (t_process, t_standalone).
CPUS_LINE='awk "/^Cpus_allowed_list/ {print \$2}" /proc/self/status'

# The guard that every escape attempt runs first, inside the jail: pid 1 must be cordon's init,
# the bounding set empty and /etc read-only. Otherwise the script exits 99 before trying anything.
GUARD='grep -q "^CapBnd:[[:space:]]*0000000000000000" /proc/self/status && grep -q "^Name:[[:space:]]*cordon" /proc/1/status && ! [ -w /etc ] || exit 99'

# jailed SCRIPT [cordon options...]: run SCRIPT with sh inside the jail, behind the guard.
# A guard failure aborts the whole test file: a broken jail must never reach an escape attempt.
jailed() { jailed_behind "$GUARD" "$@"; }

# jailed_behind GUARD SCRIPT [cordon options...]: the same behind another guard, for jails that
# keep a capability (--cap-add) or see the host's /proc (--rw /proc), which GUARD refuses.
jailed_behind() {
  local guard=$1 script=$2
  shift 2
  run "$CORDON" "$@" -- /bin/sh -c "$guard; $script"
  if [[ $rc -eq 99 ]]; then
    echo "Bail out! the jail is not working (guard failed); refusing to run escape tests"
    cat "$OUT/err" >&2
    finish
    exit 1
  fi
}

# need_landlock_jail: for a test of the Landlock jail, sets NOUSERNS (the helper that refuses
# user namespaces like Docker's default profile, tests/helpers/nouserns.cpp) and abi (the
# kernel's Landlock ABI); ends the test with a skip where the kernel has no Landlock jail to
# give (ABI below 2), and with a failure where the helper is missing.
need_landlock_jail() {
  NOUSERNS=$(dirname "$CORDON")/cordon-test-nouserns
  abi=$(landlock_abi)
  if ((abi < 2)); then
    skip "no Landlock jail on this kernel (Landlock ABI $abi)"
    finish
    exit
  fi
  [[ -x $NOUSERNS ]] || {
    not_ok "the helper $NOUSERNS is missing (tests/helpers/nouserns.cpp)"
    finish
    exit
  }
}

# The guard of the Landlock jail (cordon(1), ISOLATION): no pid 1 of ours to check, but the
# payload must run under no_new_privs, a syscall filter, no effective capability, and Landlock:
# a write to its own /proc/self/comm, which nothing else refuses, must fail.
LLGUARD='grep -q "^NoNewPrivs:[[:space:]]*1" /proc/self/status && grep -q "^Seccomp:[[:space:]]*2" /proc/self/status && grep -q "^CapEff:[[:space:]]*0000000000000000" /proc/self/status && ! (echo x > /proc/self/comm) 2>/dev/null || exit 99'

# lljailed SCRIPT [cordon options...]: SCRIPT in the Landlock jail that the refusal gives
# (WRAP: the command that refuses user namespaces to cordon, an array), behind LLGUARD.
lljailed() {
  local script=$1
  shift
  run "${WRAP[@]}" "$CORDON" "$@" -- /bin/sh -c "$LLGUARD; $script"
  if [[ $rc -eq 99 ]]; then
    echo "Bail out! the Landlock jail is not working (guard failed); refusing to run escape tests"
    cat "$OUT/err" >&2
    finish
    exit 1
  fi
}

# snapshot DIR: a listing of every entry with type, mode, size and mtime (to prove "unchanged").
snapshot() { (cd "$1" && find . -printf '%y %m %s %T@ %p\n' | sort); }

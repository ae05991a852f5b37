#!/usr/bin/env bash
# --isolation (cordon(1), ISOLATION): where user namespaces are refused, --isolation auto runs
# the Landlock jail with one warning, --isolation namespaces exits 125 with the fix. The refusal
# is simulated two ways: cordon-test-nouserns (a syscall filter like Docker's default profile:
# clone and unshare with CLONE_NEWUSER get EPERM, clone3 ENOSYS), and cordon inside cordon (the
# outer jail refuses nested user namespaces). In each the escapes the Landlock jail claims to
# stop are tried, and the guarantees it names as dropped are shown to be really gone. Last,
# --isolation landlock where namespaces work: a write only Landlock refuses.
source "$TESTLIB"

# The Landlock jail, and the helper that refuses user namespaces (NOUSERNS, ABI in abi).
need_landlock_jail

# Host things the escapes aim at: a process (signals, visibility), a TCP server on loopback.
sleep 300 </dev/null >/dev/null 2>&1 &
host_pid=$!
cat >"$OUT/tcp.py" <<'EOF'
import socket, sys, time
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(8)
open(sys.argv[1], 'w').write(str(s.getsockname()[1]))
s.settimeout(1); deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    try:
        c, _ = s.accept(); c.sendall(b'hello\n'); c.close()
    except OSError:
        pass
EOF
python3 "$OUT/tcp.py" "$OUT/port" </dev/null >/dev/null 2>&1 &
tcp_pid=$!
trap 'kill "$host_pid" "$tcp_pid" 2>/dev/null || true' EXIT
for _ in $(seq 50); do [[ -s $OUT/port ]] && break; sleep 0.1; done
port=$(cat "$OUT/port")
CONNECT="import errno, socket
try:
    s = socket.create_connection(('127.0.0.1', $port), timeout=3); print('connected', s.recv(16).decode().strip())
except OSError as e:
    print('refused', errno.errorcode.get(e.errno, e.errno))"
run python3 -c "$CONNECT"
expect_out '^connected hello$' "control: the loopback server answers on the host"
run cat "$HOME/.ssh/id_ed25519"
expect_out 'FAKE-PRIVATE-KEY' "control: the HOME secret is readable on the host"

# A repository in the workdir, with the paths that run code on the host later.
mkdir -p "$WORK/src" "$WORK/.git/hooks" "$WORK/.git/objects"
echo '[core]' >"$WORK/.git/config"
echo 'ref: refs/heads/main' >"$WORK/.git/HEAD"
echo 'old' >"$WORK/README"

# --- (a) a syscall filter like Docker's default profile ----------------------------------------------
WRAP=("$NOUSERNS")
run "$NOUSERNS" unshare -U true
[[ $rc -ne 0 ]] && ok "control: the helper refuses user namespaces (unshare -U: exit $rc)" ||
  not_ok "the helper let unshare -U through"

expect_exit 125 "--isolation namespaces: 125 where user namespaces are refused" \
  "$NOUSERNS" "$CORDON" --isolation namespaces -- true
expect_err '^cordon: cannot create the jail.s namespaces' "--isolation namespaces: the reason"
expect_err 'user\.max_user_namespaces' "--isolation namespaces: the sysctl in the hint"
expect_err 'apparmor_restrict_unprivileged_userns.*usr\.bin\.cordon' "--isolation namespaces: Ubuntu's restriction and the AppArmor profile"
expect_err 'seccomp=unconfined' "--isolation namespaces: docker's flag"

run "$NOUSERNS" "$CORDON" --status-json "$OUT/status.json" -- /bin/echo ran
expect_rc 0 "auto: the command runs where user namespaces are refused"
expect_out '^ran$' "auto: its output"
[[ $(grep -c '^cordon: warning:' "$OUT/err") -eq 1 ]] && ok "auto: exactly one warning" ||
  not_ok "auto: $(grep -c '^cordon: warning:' "$OUT/err") warnings: $(cat "$OUT/err")"
expect_err '^cordon: warning: user namespaces are refused here \(clone: Operation not permitted\);$' \
  "auto: the warning says why"
expect_err '^  running in a Landlock jail \(ABI [0-9]+\) instead: host processes visible, no private /tmp and [0-9]+ more \(--dry-run lists them\)$' \
  "auto: its second line names the jail, the first of what it cannot give, and where the rest is"
# (A sanitizer build's runtime prints notes of its own: not cordon's lines.)
own_lines=$(grep -c -v -e '^==[0-9]*==' -e '^False positive error reports' -e '^For details see' "$OUT/err" || true)
[[ $own_lines -eq 2 ]] && ok "auto: the warning is two lines, and nothing else is printed" ||
  not_ok "auto: $own_lines lines on stderr: $(cat "$OUT/err")"
run "$NOUSERNS" "$CORDON" --dry-run -- /bin/echo ran
expect_out 'dropped: no private /tmp' "auto: --dry-run lists what the warning counts"
python3 - "$OUT/status.json" <<'EOF' && ok "--status-json: isolation landlock and what was dropped" || not_ok "--status-json: $(cat "$OUT/status.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["isolation"] == "landlock", j
assert any("host processes visible" in d for d in j["dropped"]), j
assert j["exit_code"] == 0, j
EOF
run "$CORDON" --status-json "$OUT/ns.json" -- true
grep -q '"isolation":"namespaces"' "$OUT/ns.json" && ! grep -q '"dropped"' "$OUT/ns.json" &&
  ok "--status-json of the namespace jail: isolation namespaces, nothing dropped" || not_ok "status: $(cat "$OUT/ns.json")"
expect_exit 0 "-q: the warning is quiet too" "$NOUSERNS" "$CORDON" -q -- true
# (A sanitizer build's runtime may print its own warnings about the fallback's stack switch;
# those are the sanitizer's, not cordon's.)
grep -vE '^==[0-9]+==WARNING: ASan is ignoring|^False positive error reports may follow|^For details see https://github.com/google/sanitizers/' \
  "$OUT/err" >"$OUT/err.own" || true
[[ ! -s $OUT/err.own ]] && ok "-q: nothing on stderr" || not_ok "-q printed: $(cat "$OUT/err.own")"

run "$NOUSERNS" "$CORDON" doctor
expect_out '^warn +user namespaces: refused here \(unshare\(CLONE_NEWUSER\): Operation not permitted\)' "doctor: user namespaces are refused here"
expect_out 'fix: .*--security-opt seccomp=unconfined' "doctor: the container's fix"
expect_out '^warn +isolation: auto: the Landlock jail \(ABI [0-9]+\)' "doctor: what auto does here"
expect_out '^ok +default jail: cordon -- /bin/true ran in the Landlock jail' "doctor: the real run, in the Landlock jail"
run "$CORDON" doctor
expect_out '^ok +isolation: auto: the namespace jail' "doctor where namespaces work"

run "$NOUSERNS" "$CORDON" --dry-run -- true
expect_out '^isolation: +landlock \(auto: user namespaces are refused here: Operation not permitted\)' "--dry-run: which isolation and why"
expect_out '^ +dropped: host processes visible' "--dry-run: what is dropped"
run "$CORDON" --dry-run -- true
expect_out '^isolation: +namespaces \(auto: user namespaces are allowed here\)' "--dry-run where namespaces work"

# The escapes the Landlock jail stops.
lljailed "echo pwned > $SCRATCH/pwned; echo pwned > $HOME/pwned; echo pwned > /etc/cordon-pwned; echo done" --net none
expect_out '^done$' "escape: the script ran"
[[ ! -e $SCRATCH/pwned && ! -e $HOME/pwned && ! -e /etc/cordon-pwned ]] && ok "escape: no host write outside the workdir" ||
  not_ok "escape: a host write outside the workdir landed"
rm -f /etc/cordon-pwned "$SCRATCH/pwned" "$HOME/pwned" 2>/dev/null
lljailed "cat $HOME/.ssh/id_ed25519 || echo refused; cat /etc/shadow >/dev/null 2>&1 || echo shadow-refused"
expect_no_out 'FAKE-PRIVATE-KEY' "escape: the HOME secret is unreadable"
expect_out '^refused$' "escape: reading ~/.ssh/id_ed25519 fails"
expect_out '^shadow-refused$' "escape: /etc/shadow is unreadable (for root too: Landlock, not its permissions)"
lljailed "python3 -c \"$CONNECT\""
expect_out '^refused EACCES$' "escape: --net none: no TCP connection to the host's loopback server"
lljailed "python3 -c \"$CONNECT\"" --net host
expect_out '^connected hello$' "control: --net host reaches the loopback server from the Landlock jail"
if ((abi >= 6)); then
  lljailed "kill -0 $host_pid 2>/dev/null && echo signalled || echo refused"
  expect_out '^refused$' "escape: a signal to a host process is refused (Landlock scope, ABI $abi)"
else
  skip "signal scoping needs Landlock ABI 6 (this kernel: $abi)"
fi
lljailed "python3 -c \"
import errno, socket
try:
    socket.socket(socket.AF_UNIX).connect('\\0cordon-abstract-$$'); print('connected')
except OSError as e:
    print('refused', errno.errorcode[e.errno])\"" --net host
expect_out '^refused EACCES$' "escape: unix sockets are refused, the host's abstract ones with them"
# The workdir, and its protected paths: Landlock cannot refuse one name in a directory the
# command may write, so they are writable during the run and judged when it ends.
lljailed "cd $WORK; echo new > src/new.c && echo src-ok; echo changed > README && echo readme-ok;
  echo x > \$TMPDIR/t && echo tmpdir-ok; echo \"tmpdir=\$TMPDIR\";
  echo evil > .git/hooks/pre-commit; printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config;
  mkdir .vscode; touch top-level-new && echo top-made"
expect_out '^src-ok$' "the workdir's subdirectories are writable"
expect_out '^readme-ok$' "the workdir's existing files are writable"
expect_out '^tmpdir-ok$' "TMPDIR is a private writable directory"
expect_out '^top-made$' "the workdir's top level takes new entries"
expect_err '^cordon: warning: \.git/hooks/pre-commit, left by the command, is a hook.*moved to \.git/hooks/pre-commit\.cordon-unsafe' \
  "after the run: a hook the command planted is moved aside"
expect_err '^cordon: warning: \.git/config, left by the command, sets core\.fsmonitor.*put back' \
  "after the run: the config is moved aside and the one from before put back"
expect_err '^cordon: warning: \.vscode, left by the command, is a protected path, made by the command.*moved to \.vscode\.cordon-unsafe' \
  "after the run: a protected directory the command made is moved aside"
[[ ! -e $WORK/.git/hooks/pre-commit && $(cat "$WORK/.git/config") == '[core]' && ! -e $WORK/.vscode ]] &&
  ok "protected paths: as they were on the host" || not_ok "a protected path changed on the host"
rm -rf "$WORK/top-level-new" "$WORK/.vscode.cordon-unsafe" "$WORK"/.git/*.cordon-unsafe "$WORK"/.git/hooks/*.cordon-unsafe
tmpdir=$(sed -n 's/^tmpdir=//p' "$OUT/out")
[[ $tmpdir == /tmp/cordon-tmp.* && ! -e $tmpdir ]] && ok "the run's TMPDIR ($tmpdir) is removed afterwards" ||
  not_ok "the run's TMPDIR '$tmpdir' is left"

# What the command leaves behind ends with the run (init is its subreaper, not pid 1), and
# --timeout still ends the command.
lljailed "sleep 200 </dev/null >/dev/null 2>&1 & echo left=\$!"
left=$(sed -n 's/^left=//p' "$OUT/out")
[[ -n $left && -z $(alive "$left") ]] && ok "a process the command left behind is gone after the run" ||
  not_ok "left behind: '$left' $(alive "$left")"
expect_exit 124 "--timeout ends the command in the Landlock jail" "$NOUSERNS" "$CORDON" -q --timeout 1s -- sleep 30

# Host processes are visible, but not their memory, environment or files (Landlock keeps ptrace
# and the /proc files it guards within the domain).
run sh -c "cat /proc/$host_pid/environ >/dev/null && readlink /proc/$host_pid/cwd >/dev/null && echo readable"
expect_out '^readable$' "control: on the host the test's process's environ and cwd are readable"
lljailed "cat /proc/$host_pid/environ >/dev/null 2>&1 && echo environ-read || echo environ-refused;
  readlink /proc/$host_pid/cwd >/dev/null 2>&1 && echo cwd-read || echo cwd-refused"
expect_out '^environ-refused$' "escape: a host process's /proc/PID/environ is unreadable"
expect_out '^cwd-refused$' "escape: a host process's /proc/PID/cwd does not resolve"
# The exec-time checks hold in the Landlock jail too.
run "$NOUSERNS" "$CORDON" --dry-run -- true
if grep -q '^exec checks: on' "$OUT/out"; then
  lljailed "python3 -c 'import os; print(\"status\", os.system(\"rm -rf /usr\"))'"
  expect_err '^cordon: denied: ' "exec checks: an exec the policy denies is refused in the Landlock jail"
  expect_out '^status [1-9]' "exec checks: the denied command did not run"
else
  skip "exec checks are off here: $(grep '^exec checks' "$OUT/out")"
fi

# The guarantees it names as dropped are really gone.
lljailed "test -r /proc/$host_pid/cmdline && tr '\\0' ' ' < /proc/$host_pid/cmdline"
expect_out '^sleep 300' "dropped as named: a host process is visible in /proc"
lljailed "ls /tmp >/dev/null 2>&1 && echo tmp-listed || echo tmp-refused"
expect_out '^tmp-refused$' "dropped as named: no private /tmp (the host's is not accessible)"

# --- (b) cordon inside cordon: the outer jail refuses nested user namespaces ---------------------------
mkdir -p "$WORK/inner/sub"
# The inner cordon of a sanitizer build cannot run its leak checker inside a jail (it stops the
# world with ptrace), as in t_exec_checks.
OUTER=("$CORDON" -q --ro "$STAGE" -- env ASAN_OPTIONS=detect_leaks=0)
run "${OUTER[@]}" "$CORDON" --isolation namespaces --workdir "$WORK/inner" -- true
expect_rc 125 "nested: --isolation namespaces gives 125 inside cordon"
expect_err 'user\.max_user_namespaces' "nested: with the hint"
run "${OUTER[@]}" "$CORDON" --workdir "$WORK/inner" -- /bin/sh -c \
  "$LLGUARD; echo in > $WORK/inner/sub/f && echo inner-ok; (echo out > $WORK/outer-file) 2>/dev/null && echo outer-written; true"
[[ $rc -ne 99 ]] || { echo "Bail out! the nested Landlock jail is not working"; finish; exit 1; }
expect_rc 0 "nested: auto runs the Landlock jail inside cordon"
expect_err 'cordon: warning: user namespaces are refused here .*;$' "nested: with its warning"
expect_err '^  running in a Landlock jail \(ABI [0-9]+\) instead: ' "nested: and its second line"
expect_out '^inner-ok$' "nested: the inner workdir is writable"
expect_no_out 'outer-written' "nested: the outer workdir, writable in the outer jail, is not in the inner one"
[[ ! -e $WORK/outer-file ]] && ok "nested: nothing landed outside the inner workdir" || not_ok "nested: $WORK/outer-file written"

# --- --isolation landlock where namespaces work ---------------------------------------------------------
# $SCRATCH is the caller's and writable by its permissions; no mount is in the way (no mount
# namespace at all): only Landlock refuses the write.
WRAP=()
lljailed "echo x > $SCRATCH/landlock-only 2>/dev/null && echo written; echo done" --isolation landlock
expect_err '^cordon: warning: --isolation landlock;$' "--isolation landlock: the warning"
expect_err '^  running in a Landlock jail \(ABI [0-9]+\) instead: ' "--isolation landlock: its second line"
expect_out '^done$' "--isolation landlock: the command ran"
[[ ! -e $SCRATCH/landlock-only ]] && ok "--isolation landlock: Landlock alone refuses a write its permissions allow" ||
  not_ok "--isolation landlock: $SCRATCH/landlock-only was written"
run sh -c "echo x > $SCRATCH/landlock-only && echo written"
expect_out '^written$' "control: the same write works outside the jail"
# Under a low RLIMIT_NOFILE: the child holds the rules' descriptors (one per entry of /etc) a
# batch at a time, and the batch gives way when the limit is reached.
run bash -c 'ulimit -n 16 && exec "$0" -q --isolation landlock -- sh -c "cat /etc/passwd >/dev/null && echo read"' "$CORDON"
expect_rc 0 "--isolation landlock under ulimit -n 16: the jail starts"
expect_out '^read$' "--isolation landlock under ulimit -n 16: and reads /etc"

# --- the option ------------------------------------------------------------------------------------------
expect_exit 125 "--isolation bogus: 125" "$CORDON" --isolation bogus -- true
expect_err "^cordon: --isolation: invalid value 'bogus': expected auto, namespaces or landlock" "--isolation bogus: names the value"
printf 'extends = ["default"]\nisolation = "landlock"\n' >"$SCRATCH/ll.toml"
run "$CORDON" -p "$SCRATCH/ll.toml" --status-json "$OUT/p.json" -- true
grep -q '"isolation":"landlock"' "$OUT/p.json" && ok "profile key isolation = \"landlock\"" || not_ok "profile: $(cat "$OUT/p.json") $(cat "$OUT/err")"
expect_exit 125 "--isolation landlock refuses what needs namespaces (--hostname)" "$CORDON" --isolation landlock --hostname box -- true
expect_err '^cordon: --hostname: a hostname of its own: the Landlock jail has no user namespace' "--hostname: the reason"

finish

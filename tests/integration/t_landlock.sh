#!/usr/bin/env bash
# The Landlock layer on its own (cordon(1), LANDLOCK). Writes that the jail's mounts and the
# file's permissions allow but its Landlock plan does not are refused: a file of the jail's own
# /proc (a read-write procfs: the same refusal would stop /proc/sys/kernel/core_pattern should its
# read-only mount not hold), and a host file the caller handed in as a read-only stdin, reopened
# for writing by name. From ABI 6 on, a signal to init (outside the payload's domain) and a
# connection to a host abstract unix socket (--net host, where no network namespace separates
# them) are refused too. Everything the jail is for still works: the workdir, /tmp, HOME,
# /dev/shm, the devices, a new pty, renames across directories, truncation, and the caller's
# stdout and stderr reopened by name.
source "$TESTLIB"

abi=$(landlock_abi)
if ((abi == 0)); then
  run "$CORDON" --dry-run -- true
  skip "the jail runs without Landlock here: $(sed -n 's/^landlock: *//p' "$OUT/out")"
  finish
  exit
fi

# --- the plan ----------------------------------------------------------------------------------------
run "$CORDON" --dry-run -- true
expect_out "^landlock: +ABI $abi, a second wall behind the mounts" "--dry-run shows the Landlock plan (ABI $abi)"
expect_out "^ +write, create, remove.*: (.* )?$WORK( |$)" "--dry-run: the workdir is a writable place"
expect_out "^ +read, execute: /$" "--dry-run: read and execute on the jail's /"

# --- a write the mounts allow, refused by Landlock alone --------------------------------------------------
# A process may rename itself through its own /proc/self/comm: on the host it can.
run sh -c 'echo renamed > /proc/self/comm && echo wrote'
expect_out '^wrote$' "control: on the host a process writes its own /proc/self/comm"
WRITE_COMM='python3 -c "
import errno
try:
    with open(\"/proc/self/comm\", \"w\") as f:
        f.write(\"renamed\")
    print(\"wrote\")
except OSError as e:
    print(\"refused\", errno.errorcode[e.errno])
"'
jailed "grep -q ' / /proc rw,' /proc/self/mountinfo && echo proc-rw; $WRITE_COMM"
expect_out '^proc-rw$' "the jail's /proc is a read-write mount"
expect_out '^refused EACCES$' "Landlock refuses the write to /proc/self/comm (EACCES: no mount or permission refuses it)"

# A host file given as stdin, opened read-only, writable by anyone: reopening it by name for
# writing works on the host; in the jail only what it was opened for is allowed. The caller's
# stdout and stderr (host files too) still reopen by name, with truncation (a plain >).
printf 'original\n' >"$SCRATCH/control.txt"
sh -c 'echo overwritten > /dev/stdin' <"$SCRATCH/control.txt"
[[ $(cat "$SCRATCH/control.txt") == overwritten ]] && ok "control: on the host a read-only stdin reopens for writing" ||
  not_ok "control: the host's stdin did not reopen for writing: $(cat "$SCRATCH/control.txt")"
printf 'original\n' >"$SCRATCH/stdin.txt"
: >"$SCRATCH/stdout.txt"
: >"$SCRATCH/stderr.txt"
chmod 0666 "$SCRATCH/stdin.txt" "$SCRATCH/stdout.txt" "$SCRATCH/stderr.txt"
rc=0
"$CORDON" -- /bin/sh -c "$GUARD; echo pwned > /dev/stdin; echo stdin=\$? >> /dev/stdout; echo to-stderr > /dev/stderr" \
  <"$SCRATCH/stdin.txt" >"$SCRATCH/stdout.txt" 2>"$SCRATCH/stderr.txt" || rc=$?
if [[ $rc -eq 99 ]]; then
  echo "Bail out! the jail is not working (guard failed); refusing to run escape tests"
  finish
  exit 1
fi
[[ $(cat "$SCRATCH/stdin.txt") == original ]] && ok "the read-only stdin cannot be reopened for writing in the jail" ||
  not_ok "the jail wrote to its read-only stdin: $(cat "$SCRATCH/stdin.txt")"
grep -q '^stdin=[1-9]' "$SCRATCH/stdout.txt" && ok "the write to /dev/stdin failed; /dev/stdout reopens for appending" ||
  not_ok "stdout: $(cat "$SCRATCH/stdout.txt")"
[[ $(cat "$SCRATCH/stderr.txt") == to-stderr ]] && ok "/dev/stderr reopens with truncation (echo > /dev/stderr)" ||
  not_ok "stderr: $(cat "$SCRATCH/stderr.txt")"

# --- scopes (ABI 6+): signals and abstract unix sockets ------------------------------------------------
if ((abi >= 6)); then
  # init is the jail's pid 1, of the payload's uid, outside the payload's Landlock domain: only
  # the scope refuses the signal. The jail's own processes stay signalable.
  jailed 'python3 -c "
import errno, os, signal, subprocess
try:
    os.kill(1, 0)
    print(\"init signalled\")
except OSError as e:
    print(\"init refused\", errno.errorcode[e.errno])
p = subprocess.Popen([\"sleep\", \"30\"])
os.kill(p.pid, signal.SIGTERM)
print(\"own\", p.wait())
"'
  expect_out '^init refused EPERM$' "a signal to init, outside the payload's Landlock domain, is refused (EPERM)"
  expect_out '^own -15$' "a signal to the jail's own process is delivered"

  abstract="cordon-landlock-$$-$RANDOM"
  cat >"$OUT/listen.py" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind('\0' + sys.argv[1])
s.listen(8)
open(sys.argv[2], 'w').close()
s.settimeout(1)
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    try:
        c, _ = s.accept()
        c.sendall(b'hello\n')
        c.close()
    except OSError:
        pass
EOF
  python3 "$OUT/listen.py" "$abstract" "$OUT/listening" </dev/null >/dev/null 2>&1 &
  srv=$!
  trap 'kill "$srv" 2>/dev/null || true' EXIT
  for _ in $(seq 50); do [[ -e $OUT/listening ]] && break; sleep 0.1; done
  CONNECT="import errno, socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(3)
try:
    s.connect('\\0' + sys.argv[1]); print('connected', s.recv(16).decode().strip())
except OSError as e:
    print('refused', errno.errorcode[e.errno])"
  run python3 -c "$CONNECT" "$abstract"
  expect_out '^connected hello$' "control: the host's abstract socket answers on the host"
  jailed "python3 -c \"$CONNECT\" $abstract" --net host
  expect_out '^refused EPERM$' "--net host: the host's abstract unix socket is refused by the scope (EPERM)"
  jailed "python3 -c \"
import socket
srv = socket.socket(socket.AF_UNIX); srv.bind('\\\\0$abstract-inside'); srv.listen(1)
cli = socket.socket(socket.AF_UNIX); cli.connect('\\\\0$abstract-inside')
c, _ = srv.accept(); c.sendall(b'inside'); print('got', cli.recv(16).decode())
\"" --net host
  expect_out '^got inside$' "--net host: an abstract socket of the jail's own is usable in it"
  kill "$srv" 2>/dev/null || true
  wait "$srv" 2>/dev/null || true
else
  skip "Landlock ABI $abi scopes neither signals nor abstract unix sockets (ABI 6, Linux 6.12)"
fi

# A sandbox inside the jail (--allow-userns, a syscall policy that lets mount through) mounts in
# namespaces of its own, which a domain with file-system rights refuses: the jail keeps the
# scopes only, and says so.
printf 'base = "default"\nallow = ["mount", "umount2", "pivot_root", "move_mount", "open_tree", "mount_setattr"]\n' \
  >"$SCRATCH/mounts.seccomp.toml"
chmod 0644 "$SCRATCH/mounts.seccomp.toml"
run "$CORDON" --dry-run --allow-userns --seccomp "$SCRATCH/mounts.seccomp.toml" -- true
if [[ $(id -u) -eq 0 ]]; then  # a root caller's nested mounts could copy file capabilities up (t_file_caps)
  expect_rc 125 "--dry-run: root: a policy that lets nested sandboxes mount is refused"
  expect_err "^cordon: --seccomp .*refuses mount" "the refusal names the calls"
else
  expect_out '^ +no file-system rights \(--allow-userns with a syscall policy that allows mount' \
    "--dry-run: a policy that lets nested sandboxes mount leaves the file-system rights out"
fi
if [[ $(id -u) -ne 0 ]]; then  # a root caller's nested uid 0 map needs CAP_SETFCAP (t_seccomp)
  jailed 'unshare -Urm sh -c "mount -t tmpfs none /tmp && echo mounted"; kill -0 1 2>/dev/null || echo init-refused' \
    --allow-userns --seccomp "$SCRATCH/mounts.seccomp.toml"
  expect_out '^mounted$' "a nested namespace mounts under a policy that allows it"
  ((abi >= 6)) && expect_out '^init-refused$' "and the signal scope still holds"
fi

# --- what the jail is for still works -------------------------------------------------------------------
jailed 'set -e
echo a > ./wd.txt; mkdir -p d1 d2; echo b > d1/f; mv d1/f d2/f; ln d2/f d1/hard; truncate -s 0 wd.txt
rm -r d1 d2 wd.txt
echo t > /tmp/t; mkdir /tmp/a /tmp/b; mv /tmp/t /tmp/a/t; mv /tmp/a /tmp/b/; mkfifo /tmp/fifo; ln -s /tmp/b /tmp/l
echo v > /var/tmp/v; echo r > /run/r
mkdir -p "$HOME/.cache/tool"; echo h > "$HOME/.cache/tool/h"; mv "$HOME/.cache/tool/h" "$HOME/h"
echo s > /dev/shm/s; rm /dev/shm/s
echo n > /dev/null; head -c 4 /dev/zero | wc -c; head -c 4 /dev/urandom | wc -c
python3 -c "
import errno, os, pty, tty
m, s = pty.openpty()
tty.setraw(s)
os.write(s, b\"pty-ok\")
print(os.read(m, 16).decode(), os.isatty(s), os.ttyname(s).startswith(\"/dev/pts/\"))
try:
    os.write(os.open(\"/dev/full\", os.O_WRONLY), b\"x\")
except OSError as e:
    print(\"full\", errno.errorcode[e.errno])
"
cat /etc/hostname >/dev/null; ls /usr/bin >/dev/null
echo all-ok'
expect_out '^all-ok$' "the workdir, /tmp, /var/tmp, /run, HOME, /dev/shm and the devices work as before"
expect_out '^pty-ok True True$' "a new pty opens, takes terminal ioctls and carries data"
expect_out '^full ENOSPC$' "/dev/full answers as a device (ENOSPC), not with a refusal"
[[ $(grep -c '^4$' "$OUT/out") -eq 2 ]] && ok "/dev/zero and /dev/urandom read" || not_ok "device reads: $(cat "$OUT/out")"
[[ -z $(ls -A "$WORK") ]] && ok "the workdir is left as it was" || not_ok "left in the workdir: $(ls -A "$WORK")"

# Files the jail did not make writable stay unwritable; a read-only workdir (strict) too.
jailed 'for p in /x /etc/hostname /usr/x /proc/sys/kernel/core_pattern /proc/self/oom_score_adj; do
  (echo x > "$p") 2>/dev/null && echo "WROTE $p"; done; echo done'
expect_out '^done$' "writes outside the writable places fail"
expect_no_out '^WROTE' "none of them was written"
jailed 'echo x > ./f 2>/dev/null && echo WROTE; echo done' -p strict
expect_out '^done$' "-p strict: the script ran"
expect_no_out '^WROTE' "-p strict: the read-only workdir is not written"
finish

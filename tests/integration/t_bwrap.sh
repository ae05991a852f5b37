#!/usr/bin/env bash
# bwrap mode (BWRAP COMPATIBILITY in cordon(1)): a bubblewrap command line, through a `bwrap`
# symlink or `cordon bwrap`, behaves as bubblewrap does: the caller's ops are the whole jail,
# bubblewrap's namespaces, messages and exit statuses; CORDON_BWRAP_EXTRAS adds cordon's limits,
# command policy and audit log. bubblewrap's own suite runs in ctest -R bwrap_suite.
source "$TESTLIB"

bw="$SCRATCH/bin/bwrap"
mkdir -p "$SCRATCH/bin"
ln -s "$CORDON" "$bw"
agent=(--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --unshare-all --share-net --die-with-parent --chdir /tmp)

# The command line agent tools generate, and proof that it is a jail before anything else.
run "$bw" "${agent[@]}" -- sh -c 'id -u; pwd; ls -A /tmp | wc -l; readlink /proc/self/ns/mnt; echo $$'
expect_rc 0 "an agent tool's bwrap command line runs"
mapfile -t got <"$OUT/out"
[[ ${got[0]:-} == "$(id -u)" ]] && ok "the caller's uid inside" || not_ok "uid inside: ${got[0]:-}"
[[ ${got[1]:-} == /tmp && ${got[2]:-} == 0 ]] && ok "--chdir /tmp, a fresh empty --tmpfs" || not_ok "cwd/tmp: ${got[*]}"
if [[ -n ${got[3]:-} && ${got[3]} != "$(readlink /proc/self/ns/mnt)" && ${got[4]:-} == 2 ]]; then
  ok "a mount namespace of its own; --unshare-pid's init is pid 1, the command pid 2"
else
  not_ok "not in a jail: ${got[*]}"
  finish
  exit 1
fi

run "$bw" "${agent[@]}" -- sh -c "touch '$WORK/ro-probe'"
[[ $rc -ne 0 && ! -e $WORK/ro-probe ]] && ok "--ro-bind / /: the host is read-only" || not_ok "wrote through --ro-bind (exit $rc)"
run "$bw" "${agent[@]}" --bind "$WORK" "$WORK" -- sh -c "echo hi >'$WORK/rw-probe'"
[[ $rc -eq 0 && $(cat "$WORK/rw-probe" 2>/dev/null) == hi ]] && ok "--bind DIR DIR is writable" || not_ok "--bind rw (exit $rc)"
run "$CORDON" bwrap "${agent[@]}" -- sh -c 'id -u'
[[ $rc -eq 0 && $(cat "$OUT/out") == "$(id -u)" ]] && ok "cordon bwrap ARGS is the same mode" || not_ok "cordon bwrap (exit $rc)"

# bubblewrap's statuses and messages.
expect_exit 7 "the command's exit status" "$bw" "${agent[@]}" -- sh -c 'exit 7'
expect_exit 137 "killed by SIGKILL: 128+9" "$bw" "${agent[@]}" -- sh -c 'kill -9 $$'
expect_exit 1 "a missing command is bwrap's failure" "$bw" "${agent[@]}" -- no-such-command-here
expect_err "^bwrap: execvp no-such-command-here: No such file or directory" "execvp's message"
expect_exit 1 "an unknown option" "$bw" --no-such-option true
expect_err "^bwrap: Unknown option --no-such-option" "the unknown option is named"
expect_exit 1 "a missing --bind source" "$bw" --bind /nonexistent-src /x true
expect_err "^bwrap: Can't find source path /nonexistent-src" "the missing source is named"
expect_exit 1 "--bind with one argument" "$bw" --bind /x
expect_err "^bwrap: --bind takes two arguments" "the arity is named"
expect_exit 1 "SELinux labels are refused, not ignored" "$bw" --exec-label x --ro-bind / / true
expect_err "^bwrap: labeling not supported" "the label refusal says so"
run "$bw" --ro-bind / / --bind-try /nonexistent-src /x -- true
expect_rc 0 "--bind-try skips a missing source"

# --dev with stdout on a terminal: that terminal as /dev/console, so that tty(1) finds it (as
# bubblewrap does); on a pipe, no console. script(1) gives the run a terminal.
con=$(script -qec "$bw --ro-bind / / --dev /dev -- tty" /dev/null </dev/null | tr -d '\r')
real=$(script -qec "bwrap --ro-bind / / --dev /dev -- tty" /dev/null </dev/null | tr -d '\r')
[[ $con == /dev/console && $con == "$real" ]] && ok "--dev on a terminal: tty says /dev/console, as Debian's bwrap" ||
  not_ok "--dev on a terminal: tty said '$con', Debian's bwrap '$real'"
run "$bw" --ro-bind / / --dev /dev -- sh -c 'ls /dev/console'
[[ $rc -ne 0 ]] && ok "--dev on a pipe: no /dev/console" || not_ok "--dev on a pipe: $(cat "$OUT/out")"

# The modes of what the ops make, and of the parents they make, under two umasks: as Debian's
# bwrap makes them (its umask is cleared; a parent's mode follows the op's --perms or default).
for ops in "--bind /etc /tmp/m/n/o" "--symlink /x /tmp/s/l/k" "--perms 0700 --dir /tmp/x/y" \
  "--perms 0600 --tmpfs /tmp/t/u" "--tmpfs /tmp/t/u" "--perms 0640 --file 3 /tmp/f/g" "--file 3 /tmp/f/g" \
  "--ro-bind-data 3 /tmp/d/e" "--dir /tmp/q/r" "--proc /tmp/p/q" "--dev /tmp/v/w" "--bind /etc/hostname /tmp/h/i"; do
  last=${ops##* } && parent=${last%/*}
  for mask in 022 077; do
    # shellcheck disable=SC2086 # the op's words
    got=$(umask $mask && "$bw" --ro-bind / / --tmpfs /tmp $ops -- stat -c %a "${parent%/*}" "$parent" "$last" 3</dev/null 2>&1 | tr '\n' ' ')
    # shellcheck disable=SC2086
    want=$(umask $mask && bwrap --ro-bind / / --tmpfs /tmp $ops -- stat -c %a "${parent%/*}" "$parent" "$last" 3</dev/null 2>&1 | tr '\n' ' ')
    [[ -n $got && $got == "$want" ]] && ok "modes of $ops (umask $mask): $got, as Debian's bwrap" ||
      not_ok "modes of $ops (umask $mask): $got, Debian's bwrap $want"
  done
done

# The state bubblewrap leaves the command in, beside Debian's bwrap for four command lines: the
# umask, no_new_privs, the capability sets, the blocked and ignored signals, the groups, the
# session, process group and terminal (of the command itself: $$), oom_score_adj, the ids, the working directory, the types
# and flags of /, /dev, /proc and /tmp, what /dev holds, the environment's names and the rlimits.
# A root caller's sandbox that can hold CAP_SETFCAP has cordon's xattr filter besides (SECCOMP in
# cordon(1)): the Seccomp lines are left out as root.
cat >"$OUT/probe.sh" <<'EOF'
grep -E "^(Umask|NoNewPrivs|Seccomp|Seccomp_filters|CapInh|CapPrm|CapEff|CapBnd|CapAmb|SigBlk|SigIgn|Groups):" /proc/self/status
id; pwd; cat /proc/self/oom_score_adj
awk '{print "session leader:", ($6==$1), "group leader:", ($5==$1), "tty:", $7}' /proc/$$/stat
findmnt -n -o TARGET,FSTYPE,OPTIONS / /dev /proc /tmp 2>/dev/null |
  sed -E 's/,?(size|nr_inodes|mode|uid|gid|inode64|nsdelegate|memory_recursiveprot)=[^,]*//g'
ls /dev | tr '\n' ' '; echo
env | cut -d= -f1 | sort | tr '\n' ' '; echo
ulimit -a
EOF
for line in "${agent[*]}" "--ro-bind / / --dev /dev --proc /proc --unshare-user --unshare-pid --new-session" \
  "--ro-bind / / --dev /dev --unshare-user --uid 1234 --gid 1234 --cap-add CAP_NET_RAW" \
  "--dev-bind / / --as-pid-1 --unshare-pid --proc /proc"; do
  # shellcheck disable=SC2086 # the command line's words
  got=$("$bw" $line -- sh "$OUT/probe.sh" </dev/null 2>&1)
  # shellcheck disable=SC2086
  want=$(bwrap $line -- sh "$OUT/probe.sh" </dev/null 2>&1)
  if [[ $RUN_AS == root ]]; then
    got=$(grep -v '^Seccomp' <<<"$got")
    want=$(grep -v '^Seccomp' <<<"$want")
  fi
  [[ -n $got && $got == "$want" ]] && ok "the command's state under '$line' is Debian's bwrap's" ||
    not_ok "the command's state under '$line': $(diff <(echo "$want") <(echo "$got") | tr '\n' ' ')"
done

# --new-session: pid 1 leads the new session, as bubblewrap's does, so the command is no group
# leader and may start a session of its own (setsid(2) fails with EPERM for a group leader).
setsid_py='import os; os.setsid(); print("setsid ok")'
for line in "--ro-bind / / --dev /dev --proc /proc --unshare-all --new-session" "--ro-bind / / --new-session"; do
  # shellcheck disable=SC2086 # the command line's words
  got=$("$bw" $line -- python3 -c "$setsid_py" </dev/null 2>&1)
  # shellcheck disable=SC2086
  want=$(bwrap $line -- python3 -c "$setsid_py" </dev/null 2>&1)
  [[ $got == "$want" ]] && ok "under '$line' the command's setsid() does as under Debian's bwrap (${got##*$'\n'})" ||
    not_ok "setsid under '$line': bwrap: $want; cordon: $got"
done

# --args FD, beside Debian's bwrap (0.8): the file is a level of its own, so its first non-option
# or "--" ends the file and not the command line, an option's values end with it, and it holds
# no --args.
for data in "sh -c 'echo from-file'" "-- --dir /x" "--ro-bind /" "--args 0"; do
  eval "set -- $data"
  got=$("$bw" --args 5 --ro-bind / / -- echo outer 5< <(printf '%s\0' "$@") 2>&1; echo "rc=$?")
  want=$(bwrap --args 5 --ro-bind / / -- echo outer 5< <(printf '%s\0' "$@") 2>&1; echo "rc=$?")
  [[ $got == "$want" ]] && ok "--args with '$data' in the file does as Debian's bwrap ($(tr '\n' ' ' <<<"$got"))" ||
    not_ok "--args '$data': bwrap: $want; cordon: $got"
done

# bubblewrap 0.11.1 resets an ignored SIGCHLD (else the kernel reaps the sandbox before bwrap can
# wait for it); the command starts with it at its default.
for line in "--ro-bind / / --dev /dev" "--ro-bind / / --unshare-pid --proc /proc" "--ro-bind / / --as-pid-1 --unshare-pid"; do
  # shellcheck disable=SC2086 # the command line's words
  run env --ignore-signal=CHLD "$bw" $line -- sh -c 'grep -q "^SigIgn:.*0000000000000000$" /proc/self/status && exit 7; exit 8'
  expect_rc 7 "a caller that ignores SIGCHLD: the status comes back, not ignored in the command ($line)"
done

# --bind-fd (0.10, CVE-2024-42472): the descriptor's file is what is bound, or nothing is: a
# bounded run of binds while another process swaps the directory's parent with a symlink to
# another tree never shows the other tree; the descriptor is closed before the command runs.
mkdir -p "$SCRATCH/race/d/x" "$SCRATCH/race/evil/x" && echo good >"$SCRATCH/race/d/x/good" &&
  echo evil >"$SCRATCH/race/evil/x/evil" && ln -s evil "$SCRATCH/race/e"
run "$bw" --ro-bind / / --tmpfs /mnt --bind-fd 9 /mnt/m -- sh -c 'ls /mnt/m; [ -e /proc/self/fd/9 ] && echo open || echo closed' \
  9<"$SCRATCH/race/d/x"
[[ $rc -eq 0 && $(tr '\n' ' ' <"$OUT/out") == "good closed " ]] && ok "--bind-fd binds the descriptor's directory and closes it" ||
  not_ok "--bind-fd: exit $rc, $(tr '\n' ' ' <"$OUT/out") $(head -2 "$OUT/err")"
/usr/bin/python3 - "$SCRATCH/race" <<'EOF' &
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
d, e = (os.path.join(sys.argv[1], n).encode() for n in ("d", "e"))
end = time.time() + 30  # never outlive the test
while time.time() < end:
    libc.renameat2(-100, d, -100, e, 2)  # RENAME_EXCHANGE
EOF
swapper=$!
wrong=0
exec 9<"$SCRATCH/race/d/x"
for _ in $(seq 150); do
  "$bw" --ro-bind / / --tmpfs /mnt --bind-fd 9 /mnt/m -- ls /mnt/m 2>/dev/null | grep -q evil && wrong=$((wrong + 1))
done
exec 9<&-
kill "$swapper" 2>/dev/null
wait "$swapper" 2>/dev/null
((wrong == 0)) && ok "--bind-fd under a racing rename: 150 runs, the other tree never bound" ||
  not_ok "--bind-fd under a racing rename: the other tree bound $wrong times in 150"

# Namespaces: only what is asked (bubblewrap's semantics), --as-pid-1, the JSON reports.
run "$bw" --ro-bind / / -- readlink /proc/self/ns/net
[[ $(cat "$OUT/out") == "$(readlink /proc/self/ns/net)" ]] && ok "no --unshare-net: the host's network namespace" ||
  not_ok "network namespace without --unshare-net: $(cat "$OUT/out")"
run "$bw" --ro-bind / / --unshare-net -- readlink /proc/self/ns/net
[[ $rc -eq 0 && $(cat "$OUT/out") != "$(readlink /proc/self/ns/net)" ]] && ok "--unshare-net: a new one" || not_ok "--unshare-net"
# bubblewrap brings the new namespace's loopback up: a server on 127.0.0.1 answers (srt's proxy
# listens there). Checked against Debian's bwrap where it runs.
lo_echo='import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname(), timeout=5); a, _ = s.accept(); c.sendall(b"lo-up"); print(a.recv(5).decode())'
for args in "--unshare-net" "--unshare-all" "--unshare-all --share-net"; do
  # shellcheck disable=SC2086 # the options, split
  run "$bw" --ro-bind / / --dev /dev $args -- python3 -c "$lo_echo"
  [[ $rc -eq 0 && $(cat "$OUT/out") == lo-up ]] && ok "$args: a server on 127.0.0.1 answers" ||
    not_ok "$args: loopback: rc=$rc $(cat "$OUT/out" "$OUT/err")"
  # shellcheck disable=SC2086
  if real=$(bwrap --ro-bind / / --dev /dev $args -- python3 -c "$lo_echo" 2>/dev/null); then
    [[ $real == lo-up ]] && ok "$args: the same with Debian's bwrap" || not_ok "$args: Debian's bwrap gave: $real"
  else
    echo "# [$RUN_AS] $args: Debian's bwrap does not run here, no comparison"
  fi
done
run "$bw" --ro-bind / / --proc /proc --unshare-pid --as-pid-1 -- sh -c 'echo $$'
[[ $(cat "$OUT/out") == 1 ]] && ok "--as-pid-1: the command is pid 1" || not_ok "--as-pid-1: $(cat "$OUT/out")"
rc=0
"$bw" --ro-bind / / --proc /proc --unshare-all --info-fd 5 --json-status-fd 6 -- sh -c 'readlink /proc/self/ns/mnt; exit 3' \
  5>"$OUT/info.json" 6>"$OUT/status.json" >"$OUT/out" 2>"$OUT/err" || rc=$?
mnt=$(sed 's/.*\[\(.*\)\]/\1/' "$OUT/out")
if [[ $rc -eq 3 ]] && grep -q '"child-pid": [0-9]' "$OUT/info.json" && grep -q "\"mnt-namespace\": $mnt" "$OUT/info.json" &&
  grep -q '"exit-code": 3' "$OUT/status.json"; then
  ok "--info-fd and --json-status-fd: child-pid, the namespaces, exit-code"
else
  not_ok "JSON reports (exit $rc): $(cat "$OUT/info.json" "$OUT/status.json")"
fi

# The reports are the parent's: a reader of --info-fd gets EOF while the command still runs.
mkfifo "$OUT/info.fifo"
"$bw" --ro-bind / / --die-with-parent --info-fd 5 -- sleep 20 5>"$OUT/info.fifo" &
bwpid=$!
if timeout 5 cat "$OUT/info.fifo" >"$OUT/info2.json" && grep -q '"child-pid"' "$OUT/info2.json"; then
  ok "--info-fd is closed once written (EOF while the command runs)"
else
  not_ok "--info-fd held open by the jail"
fi
kill "$bwpid" 2>/dev/null
wait "$bwpid" 2>/dev/null

# Capabilities: none for a user; a root caller keeps root's unless it drops them, as in bubblewrap.
run "$bw" --ro-bind / / --unshare-pid --cap-drop ALL -- grep CapEff /proc/self/status
expect_out "CapEff:[[:space:]]+0+$" "--cap-drop ALL leaves no effective capability"
if [[ $RUN_AS == root ]]; then
  host_eff=$(grep CapEff /proc/self/status)
  run "$bw" --ro-bind / / --unshare-user -- grep CapEff /proc/self/status
  [[ $(cat "$OUT/out") == "$host_eff" ]] && ok "root keeps its own effective set, as with bubblewrap" ||
    not_ok "root's capabilities: $(cat "$OUT/out"), host: $host_eff"
  run "$bw" --ro-bind / / --unshare-user --uid 1000 -- grep CapEff /proc/self/status
  expect_out "CapEff:[[:space:]]+0+$" "root's command as --uid 1000 without --cap-add has none"
fi
if [[ $RUN_AS == user ]]; then
  run "$bw" --ro-bind / / -- grep CapBnd /proc/self/status
  expect_out "CapBnd:[[:space:]]+0+$" "a user's command has no capability, not even in the bounding set"
fi

# Files from descriptors, --perms, --chmod, overlays.
run "$bw" --ro-bind / / --tmpfs /tmp --perms 0640 --file 3 /tmp/f --ro-bind-data 4 /tmp/g --dir /tmp/d --chmod 0700 /tmp/d \
  -- sh -c 'cat /tmp/f /tmp/g; stat -c %a /tmp/f /tmp/d; echo x >/tmp/g || echo ro' 3< <(echo one) 4< <(echo two)
expect_out "^one$" "--file FD DEST copies the data"
if [[ $(tr '\n' ' ' <"$OUT/out") == "one two 640 700 ro " ]]; then ok "--perms, --chmod, read-only --ro-bind-data"; else
  not_ok "data ops: $(tr '\n' ' ' <"$OUT/out")"
fi
mkdir -p "$SCRATCH/lower" && echo base >"$SCRATCH/lower/a"
run "$bw" --ro-bind / / --tmpfs /tmp --overlay-src "$SCRATCH/lower" --tmp-overlay /tmp/o -- sh -c 'cat /tmp/o/a; echo new >/tmp/o/a; cat /tmp/o/a'
if [[ $rc -eq 0 && $(tr '\n' ' ' <"$OUT/out") == "base new " && $(cat "$SCRATCH/lower/a") == base ]]; then
  ok "--tmp-overlay: writes stay in the jail"
else
  not_ok "--tmp-overlay (exit $rc): $(cat "$OUT/out" "$OUT/err")"
fi

# --seccomp FD: the caller's compiled program is loaded (here: mkdir and mkdirat fail with EPERM).
case $(uname -m) in
  x86_64) audit_arch=0xc000003e nrs="83 258" ;;
  aarch64) audit_arch=0xc00000b7 nrs="34 34" ;;
  *) audit_arch= ;;
esac
if [[ -n $audit_arch ]]; then
  python3 - "$audit_arch" $nrs >"$OUT/filter.bpf" <<'EOF'
import struct, sys
arch, a, b = int(sys.argv[1], 16), int(sys.argv[2]), int(sys.argv[3])
f = lambda code, jt, jf, k: struct.pack("HBBI", code, jt, jf, k)
sys.stdout.buffer.write(b"".join([
    f(0x20, 0, 0, 4), f(0x15, 1, 0, arch), f(0x06, 0, 0, 0x7fff0000),  # other arch: allow
    f(0x20, 0, 0, 0), f(0x15, 1, 0, a), f(0x15, 0, 1, b),
    f(0x06, 0, 0, 0x00050000 | 1), f(0x06, 0, 0, 0x7fff0000)]))       # EPERM, else allow
EOF
  run "$bw" --ro-bind / / --tmpfs /tmp --seccomp 7 -- sh -c 'mkdir /tmp/x && echo made' 7<"$OUT/filter.bpf"
  [[ $rc -ne 0 ]] && grep -q "Operation not permitted" "$OUT/err" && ok "--seccomp FD: the program is loaded" ||
    not_ok "--seccomp (exit $rc): $(cat "$OUT/out" "$OUT/err")"
  expect_exit 0 "the same command without it" "$bw" --ro-bind / / --tmpfs /tmp -- mkdir /tmp/x
else
  skip "no BPF test program for $(uname -m)"
fi

# The extras, opt-in.
run env CORDON_BWRAP_EXTRAS="--memory 64M" "$bw" "${agent[@]}" -- true
if [[ $rc -eq 0 ]] || { [[ $rc -eq 125 ]] && grep -q "^cordon: --memory" "$OUT/err"; }; then
  ok "extras: --memory is cordon's (applied, or refused with 125 where cgroup v2 has no memory controller) (exit $rc)"
else
  not_ok "extras --memory: exit $rc: $(head -3 "$OUT/err")"
fi
run env CORDON_BWRAP_EXTRAS="--memory 64M --limits best-effort" "$bw" "${agent[@]}" -- sh -c 'echo ran'
expect_rc 0 "extras: --limits best-effort runs the command"
expect_out "^ran$" "extras: the command ran"
run env CORDON_BWRAP_EXTRAS="--policy default --audit $OUT/audit.jsonl" "$bw" "${agent[@]}" -- \
  python3 -c 'import os; print(os.system("rm -rf /") != 0); print("after")'
if grep -q '"decision":"deny"' "$OUT/audit.jsonl" 2>/dev/null && grep -q "^cordon: denied: sh -c 'rm -rf /'" "$OUT/err" &&
  grep -qx True "$OUT/out"; then
  ok "extras: --policy denies an exec inside the jail and --audit logs it"
else
  not_ok "extras policy (exit $rc): $(head -3 "$OUT/err")"
fi
run "$bw" "${agent[@]}" -- python3 -c 'import os; print(os.system("rm -rf / 2>/dev/null") == 0 or "no-deny")'
grep -q "denied" "$OUT/err" && not_ok "without extras there is no policy" || ok "without extras: no command policy"
# Under the extras the command line's environment is the command's, never cordon's: a --setenv
# cannot swap the policy (its search path, XDG_CONFIG_HOME) or move the HOME it protects.
mkdir -p "$SCRATCH/evil/cordon/policies"
printf 'description = "allows everything"\n' >"$SCRATCH/evil/default.toml"
cp "$SCRATCH/evil/default.toml" "$SCRATCH/evil/cordon/policies/default.toml"
for swap in "CORDON_POLICY_PATH $SCRATCH/evil" "XDG_CONFIG_HOME $SCRATCH/evil" "HOME /tmp"; do
  expect_exit 126 "extras: --setenv $swap does not change the policy (rm -rf /usr denied)" \
    env CORDON_BWRAP_EXTRAS="--policy default" "$bw" --ro-bind / / --setenv $swap -- rm -rf /usr
done
expect_exit 126 "extras: --policy=default (the = form) is the policy too" \
  env CORDON_BWRAP_EXTRAS="--policy=default --audit=$OUT/eq.jsonl" "$bw" --ro-bind / / -- rm -rf /usr
grep -q '"decision":"deny"' "$OUT/eq.jsonl" 2>/dev/null && ok "extras: and --audit=FILE logs the denial" ||
  not_ok "extras: no denial in --audit=FILE: $(head -c 300 "$OUT/eq.jsonl" 2>/dev/null)"
expect_exit 126 "extras: --setenv HOME does not move the HOME the policy protects" \
  env CORDON_BWRAP_EXTRAS="--policy default" "$bw" --ro-bind / / --tmpfs "$HOME" --setenv HOME /tmp -- rm -rf "$HOME"
for line in "--clearenv --chdir /usr" "--setenv A -x --setenv B --verbose --unsetenv PATH" "--clearenv"; do
  # shellcheck disable=SC2086
  want=$(bwrap --ro-bind / / $line -- /usr/bin/env | grep -v '^_=' | sort)
  # shellcheck disable=SC2086
  got=$(CORDON_BWRAP_EXTRAS="--pids 64 --limits best-effort" "$bw" --ro-bind / / $line -- /usr/bin/env 2>/dev/null |
    grep -v '^_=' | sort)
  [[ $got == "$want" ]] && ok "extras: the environment of '$line' is Debian bwrap's, PWD included" ||
    not_ok "extras '$line': got '$got', Debian's bwrap '$want'"
done
# Under the extras the command's environment reaches cordon privately: no value of it is on a
# command line, which any local user can read (/proc/PID/cmdline), outside or inside the jail.
secret="s3cr3t-value-$$"
got=$(CORDON_BWRAP_EXTRAS="--policy default" MY_TOKEN_X=$secret "$bw" --ro-bind / / --proc /proc --unshare-pid -- \
  sh -c 'tr "\0" " " </proc/1/cmdline; echo; echo "token=$MY_TOKEN_X"' 2>&1)
if [[ $got == *"token=$secret"* && $(grep -c -- "$secret" <<<"$got") -eq 1 ]]; then
  ok "extras: the command gets its environment, and pid 1's command line holds none of it"
else
  not_ok "extras: the environment on a command line: $got"
fi
CORDON_BWRAP_EXTRAS="--policy default" MY_TOKEN_X=$secret "$bw" --ro-bind / / --unshare-all -- sleep 3 &
extras_pid=$!
sleep 1
if tr '\0' ' ' <"/proc/$extras_pid/cmdline" | grep -q -- "$secret"; then
  not_ok "extras: the environment is on cordon's command line: $(tr '\0' ' ' <"/proc/$extras_pid/cmdline")"
else
  ok "extras: cordon's own command line holds none of the command's environment"
fi
wait
# pid 1 (the reaper under --unshare-pid) runs under the command's seccomp filters too, as
# bubblewrap's: the command cannot have its parent make the calls they refuse.
got=$("$bw" --ro-bind / / --proc /proc --unshare-pid -- sh -c \
  'grep "^Seccomp_filters:" /proc/1/status; grep "^Seccomp_filters:" /proc/self/status' 2>&1)
[[ $(sort -u <<<"$got" | wc -l) -eq 1 ]] && ok "pid 1 has the command's seccomp filters ($(head -1 <<<"$got"))" ||
  not_ok "pid 1's filters differ from the command's: $got"
# --as-pid-1 under the extras (Codex passes it always): the command is pid 1, as with Debian's
# bwrap and without the extras; what pid 1 sees of itself is the same.
pid1_script='echo $$ "$(tr "\0" " " </proc/1/cmdline)"; kill -9 $$; echo survived; exit 6'
want=$(bwrap --ro-bind / / --proc /proc --unshare-pid --as-pid-1 -- sh -c "$pid1_script" 2>&1; echo "rc=$?")
for extras in "" "--policy default --audit $OUT/pid1.jsonl"; do
  got=$(env ${extras:+CORDON_BWRAP_EXTRAS="$extras"} "$bw" --ro-bind / / --proc /proc --unshare-pid --as-pid-1 -- \
    sh -c "$pid1_script" 2>&1; echo "rc=$?")
  [[ $got == "$want" ]] && ok "--as-pid-1${extras:+ with the extras}: pid 1 is the command, as with Debian's bwrap" ||
    not_ok "--as-pid-1${extras:+ with the extras}: '$got', Debian's bwrap '$want'"
done
expect_exit 1 "extras: --as-pid-1 without --unshare-pid is refused, as by bubblewrap" \
  env CORDON_BWRAP_EXTRAS="--policy default" "$bw" --ro-bind / / --as-pid-1 -- true
expect_err "^bwrap: Specifying --as-pid-1 requires --unshare-pid" "extras: with bubblewrap's message"
grep -q '"pid":1,' "$OUT/pid1.jsonl" 2>/dev/null && ok "extras: --as-pid-1's command is checked and logged as pid 1" ||
  not_ok "extras: no exec of pid 1 in the audit log: $(head -c 300 "$OUT/pid1.jsonl" 2>/dev/null)"
# --die-with-parent (Codex passes it) with and without the extras: the jail ends with the caller.
# A root caller's cordon changes its ids to start the jail, which clears the parent-death signal.
ends_with_parent "sleep 42.$$" "--die-with-parent: the jail ends with bwrap's parent" \
  "$bw" --ro-bind / / --unshare-pid --die-with-parent -- sleep "42.$$"
ends_with_parent "sleep 43.$$" "extras: --die-with-parent: the jail ends with bwrap's parent" \
  env CORDON_BWRAP_EXTRAS="--audit $OUT/dwp.jsonl" "$bw" --ro-bind / / --unshare-pid --die-with-parent -- sleep "43.$$"
# The extras keep --tmpfs in the ops' order and --perms exact whatever the umask, as bubblewrap.
mkdir -p "$SCRATCH/covered" && echo "host's" >"$SCRATCH/covered/file"
for m in 0777 6777 0700; do
  got=$(umask 077 && CORDON_BWRAP_EXTRAS="--audit $OUT/perms.jsonl" "$bw" --ro-bind / / --perms $m --tmpfs "$SCRATCH/covered" \
    --perms $m --dir "$SCRATCH/covered/d" -- sh -c "stat -c %a '$SCRATCH/covered' '$SCRATCH/covered/d'; ls '$SCRATCH/covered'" 2>&1 | tr '\n' ' ')
  want=$(umask 077 && bwrap --ro-bind / / --perms $m --tmpfs "$SCRATCH/covered" \
    --perms $m --dir "$SCRATCH/covered/d" -- sh -c "stat -c %a '$SCRATCH/covered' '$SCRATCH/covered/d'; ls '$SCRATCH/covered'" 2>&1 | tr '\n' ' ')
  [[ $got == "$want" ]] && ok "extras: --perms $m --tmpfs after --ro-bind / /, and --dir: $got, as Debian's bwrap" ||
    not_ok "extras: --perms $m --tmpfs/--dir: '$got', Debian's bwrap '$want'"
done
# The extras repeat an identity bind that a later one covers (srt's proxy socket): never one
# reached through a symlink, whose bind lands outside what covers it. Read-only as in bubblewrap.
mkdir -p "$SCRATCH/cover/top" "$SCRATCH/cover/elsewhere" && echo orig >"$SCRATCH/cover/elsewhere/target"
ln -s ../elsewhere/target "$SCRATCH/cover/top/link"
cover_line=(--ro-bind / / --ro-bind "$SCRATCH/cover/top/link" "$SCRATCH/cover/top/link" --bind "$SCRATCH/cover/top"
  "$SCRATCH/cover/top" --dev /dev -- sh -c "echo changed >>'$SCRATCH/cover/elsewhere/target' 2>/dev/null; echo \$?")
want=$(bwrap "${cover_line[@]}" 2>&1)
got=$(CORDON_BWRAP_EXTRAS="--audit $OUT/cover.jsonl" "$bw" "${cover_line[@]}" 2>&1)
[[ $got == "$want" && $(cat "$SCRATCH/cover/elsewhere/target") == orig ]] &&
  ok "extras: a symlink's read-only bind stays read-only under a later cover ($got, as Debian's bwrap)" ||
  not_ok "extras: the symlink's target: '$got' (Debian's bwrap '$want'), now '$(cat "$SCRATCH/cover/elsewhere/target")'"

expect_exit 1 "extras: an op cordon's jail lacks is refused, not dropped" \
  env CORDON_BWRAP_EXTRAS="--memory 64M" "$bw" --ro-bind / / --file 0 /x true
expect_err "^bwrap: --file is not supported with CORDON_BWRAP_EXTRAS" "the refusal names the op"

# The network allowlist among the extras: a local server on 127.0.0.1 stands for an allowed host
# (CORDON_TEST_RESOLVE, cordon(1) NETWORK); a denied name is reserved (*.invalid), so nothing here
# can reach another address.
mkdir -p "$OUT/site" && echo "hello-through-bwrap" >"$OUT/site/hello.txt" && chmod -R a+rX "$OUT/site"
trap stop_server EXIT
if serve_http "$OUT/site"; then
  P=$port
  net_extras="--allow-host allowed.test:$P --allow-host 127.0.0.1:$P --status-json $OUT/net.json"
  run env CORDON_TEST_RESOLVE=allowed.test=127.0.0.1 CORDON_BWRAP_EXTRAS="$net_extras" "$bw" "${agent[@]}" -- \
    sh -c "curl -sS --max-time 10 http://allowed.test:$P/hello.txt; curl -sS --max-time 10 -o /dev/null -w '%{http_code}\n' http://denied.invalid/"
  expect_out '^hello-through-bwrap$' "extras: --allow-host lets the allowed host through cordon's proxy"
  expect_out '^403$' "extras: a host off the list gets the proxy's 403"
  expect_err '^cordon: network: refused denied.invalid' "extras: the refusal is on stderr"
  grep -q '"kind":"network"' "$OUT/net.json" 2>/dev/null && ok "extras: the refusal is in the status JSON" ||
    not_ok "extras: no network denial in the status JSON: $(cat "$OUT/net.json" 2>/dev/null)"
  # Only what the entries name: the host's 127.0.0.1:$P directly when an entry names it (as a
  # client without proxy support connects), not when only a name is allowed on the port.
  run env CORDON_BWRAP_EXTRAS="--allow-host allowed.test:$P" "$bw" "${agent[@]}" -- \
    curl -sS --max-time 5 --noproxy '*' "http://127.0.0.1:$P/hello.txt"
  expect_no_out 'hello-through-bwrap' "extras: with an allowlist, --share-net no longer reaches the host's loopback directly"
  run env CORDON_BWRAP_EXTRAS="$net_extras" "$bw" "${agent[@]}" -- \
    curl -sS --max-time 5 --noproxy '*' "http://127.0.0.1:$P/hello.txt"
  expect_out 'hello-through-bwrap' "extras: an address an entry names is reached directly, through the forwarder"
  expect_exit 1 "extras: --allow-host with --unshare-net is refused" \
    env CORDON_BWRAP_EXTRAS="--allow-host allowed.test" "$bw" --ro-bind / / --unshare-net true
  expect_err "needs a shared network" "the refusal says why"
else
  not_ok "extras: the local HTTP server did not start"
fi
stop_server

# Help: bubblewrap's usage line with the name it was called by, and what differs.
run "$bw" --help
expect_out "^usage: $bw \[OPTIONS\.\.\.\] \[--\] COMMAND" "--help: usage names the symlink"
run "$CORDON" bwrap --help
expect_out "^usage: cordon bwrap " "cordon bwrap --help"
expect_out "CORDON_BWRAP_EXTRAS" "--help documents the extras"
finish

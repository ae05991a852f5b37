#!/usr/bin/env bash
# The command line: --help, --version, -c, --, --dry-run, subcommand names after --.
source "$TESTLIB"

expect_exit 0 "--help" "$CORDON" --help
expect_out "--workdir" "--help lists --workdir"
expect_out "--status-json" "--help lists --status-json"
expect_out "Exit status" "--help explains exit statuses"
expect_exit 0 "--version" "$CORDON" --version
expect_out "^cordon [0-9]+\.[0-9]+\.[0-9]+" "--version prints cordon X.Y.Z"

expect_exit 0 "-c runs a script with /bin/sh" "$CORDON" -c 'echo "a b" | wc -w'
expect_out "^2$" "-c output"
expect_exit 0 "arguments after the command belong to it" "$CORDON" -- /bin/echo --ro x -c y
expect_out "^--ro x -c y$" "options after COMMAND are not cordon's"
# An option's values are the words after it, whatever they are: never an option of cordon's.
expect_exit 0 "--setenv takes a value that begins with '-'" "$CORDON" --setenv CFLAGS -pthread --setenv B --verbose -- \
  sh -c 'echo "$CFLAGS|$B"'
expect_out '^-pthread\|--verbose$' "and the command gets both values"
expect_exit 0 "a value that is one of cordon's options stays a value (-qc, --hostname)" \
  "$CORDON" -qc 'echo "$A|$(hostname)"' --setenv A --no-policy --hostname --dry-run
expect_out '^--no-policy\|--dry-run$' "and neither became an option"
expect_exit 125 "an option short of its values at the end is an error" "$CORDON" --ro /tmp --bind /tmp
expect_err "^cordon: --bind: expects SRC DEST" "the error names the option"
expect_exit 0 "no -- needed" "$CORDON" /bin/echo hello
expect_out "^hello$" "plain COMMAND"
expect_exit 127 "'cordon -- check' runs a program named check" "$CORDON" -- check
expect_exit 125 "a script and a command together are refused" "$CORDON" -c 'true' -- true
expect_exit 125 "no command is an error" "$CORDON"

expect_exit 0 "--dry-run runs nothing" "$CORDON" --dry-run -- touch "$WORK/dry-marker"
[[ -e $WORK/dry-marker ]] && not_ok "--dry-run executed the command" || ok "--dry-run did not execute"
expect_out "namespaces: user mount pid" "--dry-run shows namespaces"
# A root caller's jail is remapped to cordon's jail id (cordon(1), ROOT CALLERS).
[[ $(id -u) -eq 0 ]] && outside=2147483646 || outside=$(id -u)
expect_out "uid map: +[0-9]+ $outside 1" "--dry-run shows the uid map"
expect_out "ro-bind /usr -> /usr" "--dry-run shows the mount plan"
expect_out "bind $WORK -> $WORK +\[workdir\]" "--dry-run shows the workdir bind"
expect_out "seccomp: +default" "--dry-run shows the seccomp policy"
GITHUB_TOKEN=secret-value run "$CORDON" --dry-run -- true
expect_out "removed from the environment:.*GITHUB_TOKEN" "--dry-run shows removed variables"
expect_no_out "secret-value" "--dry-run does not print the removed value"

# bwrap-style primitives in order, and --no-profile.
expect_exit 0 "--no-profile with primitives" "$CORDON" --no-profile --ro-bind /usr /usr --symlink usr/bin /bin \
  --symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc --dev /dev --dir /scratch -- /bin/sh -c 'ls /; test -d /scratch'
expect_out "^scratch$" "--dir created /scratch"
expect_no_out "^etc$" "--no-profile exposes nothing but what was asked"
expect_exit 0 "-v says what jail it builds" "$CORDON" -v -- /bin/true
expect_err "^cordon: jail: profiles default; workdir $WORK; network none; [0-9]+ mounts; seccomp default; policy checked" "-v prints the jail's summary"
run "$CORDON" -- /bin/true
[[ ! -s $OUT/err ]] && ok "without -v nothing is printed" || not_ok "stderr without -v: $(head -2 "$OUT/err")"
expect_exit 0 "--chdir" "$CORDON" --chdir /usr -- /bin/pwd
expect_out "^/usr$" "--chdir moves the working directory"
expect_exit 0 "--hostname" "$CORDON" --hostname jailhost -- /bin/cat /proc/sys/kernel/hostname
expect_out "^jailhost$" "--hostname is set inside"
expect_exit 0 "--argv0" "$CORDON" --argv0 renamed -- /usr/bin/python3 -c 'import sys, os; print(open("/proc/self/cmdline").read().split("\0")[0], os.path.basename(os.readlink("/proc/self/exe")))'
expect_out "^renamed python3" "--argv0 is the command's argv[0]; the program run is still COMMAND's"
expect_exit 0 "--argv0 with a PATH search" "$CORDON" --argv0 other-name -- sh -c 'echo "$0"'
expect_out "^other-name$" "the shell found on PATH sees its argv[0] as --argv0"
# --mount-tmpfs and --perms: in the primitives' order (after --ro-bind / / it hides what is there),
# the mode exact whatever the umask; a bad or dangling --perms is an error and nothing runs.
# --as-pid-1: the command is the jail's pid 1 (no init of cordon's), and the rest holds: its
# exit status, the exec checks, --timeout, an orphan it leaves ended with it.
expect_exit 6 "--as-pid-1 keeps the command's exit status" "$CORDON" --as-pid-1 --audit "$SCRATCH/pid1.jsonl" -- sh -c \
  'echo $$ "$(tr "\0" " " </proc/1/cmdline)"; kill -9 $$; echo survived; exit 6'
expect_out '^1 sh -c ' "--as-pid-1: the command is pid 1, and /proc/1 is the command"
expect_out '^survived$' "--as-pid-1: a SIGKILL from inside does not end pid 1, as under bubblewrap"
grep -q '"pid":1,' "$SCRATCH/pid1.jsonl" 2>/dev/null && ok "--as-pid-1: the exec checks saw pid 1's exec" ||
  not_ok "--as-pid-1: no exec of pid 1 in the audit log: $(head -c 300 "$SCRATCH/pid1.jsonl" 2>/dev/null)"
expect_exit 0 "--as-pid-1: an exec inside is still checked" "$CORDON" --as-pid-1 -- python3 -c \
  'import os; print(os.system("rm -rf / 2>/dev/null") != 0)'
expect_out '^True$' "--as-pid-1: the denied exec failed"
expect_err "^cordon: denied: sh -c 'rm -rf / 2>/dev/null'" "--as-pid-1: the denial is on stderr"
expect_exit 127 "--as-pid-1: a command that is not there" "$CORDON" --as-pid-1 -- no-such-command-here
expect_err "^cordon: no-such-command-here: command not found" "--as-pid-1: the exec failure is reported"
expect_exit 124 "--as-pid-1: --timeout ends a pid 1 that ignores SIGTERM" "$CORDON" --as-pid-1 --timeout 1s -- sleep 30
orphan="sleep 31.$$"  # a name no other run has
run "$CORDON" --as-pid-1 -- sh -c "$orphan >/dev/null 2>&1 & echo \$!"
sleep 0.5
[[ $rc -eq 0 && -n $(cat "$OUT/out") ]] && ! pgrep -fx "$orphan" >/dev/null &&
  ok "--as-pid-1: what the command left behind ended with it" || not_ok "--as-pid-1: exit $rc, $(cat "$OUT/out")"
# A signal to cordon that pid 1 has no handler for would never reach it: it ends the run, as it
# ends bubblewrap's, also when it comes between the command's start and its exec. One the
# command handles reaches it.
# Each signal comes once the command runs (it says so; polled, bounded at 60 s): a fixed pause
# can end before a sanitizer build on a loaded machine has even blocked its signals, and a
# background job of a script inherits SIGINT ignored until then. Given cordon's pid, also once
# pid 1 (cordon's child) is sleep: sh -c catches SIGINT, and one relayed to it as it execs sleep
# is lost (cordon(1), --as-pid-1); that window took 14 of 30 tries with the sanitizer build.
started() {
  for _ in $(seq 600); do grep -qx started "$1" 2>/dev/null && break; sleep 0.1; done
  grep -qx started "$1" 2>/dev/null || return 1
  [[ -z ${2:-} ]] && return 0
  for _ in $(seq 600); do [[ -n $(pgrep -P "$2" -x sleep) ]] && return 0; sleep 0.1; done
  return 1
}
for sig in TERM INT HUP; do
  rm -f "$OUT/sig"
  "$CORDON" -q --as-pid-1 -- sh -c 'echo started; exec sleep 30' </dev/null >"$OUT/sig" 2>&1 &
  pid=$!
  started "$OUT/sig" "$pid" || not_ok "--as-pid-1: the command did not start within 60 s"
  kill -"$sig" "$pid"
  for _ in $(seq 100); do [[ -n $(alive "$pid") ]] || break; sleep 0.1; done
  if [[ -n $(alive "$pid") ]]; then
    kill -9 "$pid"
    not_ok "--as-pid-1: SIG$sig to cordon did not end the run"
  else
    rc=0
    wait "$pid" || rc=$?
    want=$((128 + $(kill -l "$sig")))
    [[ $rc -eq $want ]] && ok "--as-pid-1: SIG$sig to cordon ends a command without a handler (exit $rc)" ||
      not_ok "--as-pid-1: SIG$sig: exit $rc, expected $want"
  fi
done
rm -f "$OUT/sig"
"$CORDON" -q --as-pid-1 -- sh -c 'trap "exit 40" TERM; echo started; sleep 5 & wait' </dev/null >"$OUT/sig" 2>&1 &
pid=$!
started "$OUT/sig" || not_ok "--as-pid-1: the trapping command did not start within 60 s"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[[ $rc -eq 40 ]] && ok "--as-pid-1: a command's own handler gets the signal (exit $rc)" ||
  not_ok "--as-pid-1: a trapped SIGTERM: exit $rc, expected 40"
early=""
for i in $(seq 20); do
  "$CORDON" -q --as-pid-1 -- sleep 3 </dev/null >/dev/null 2>&1 &
  pid=$!
  sleep "0.00$((i % 10))"
  kill -TERM "$pid"
  rc=0
  wait "$pid" || rc=$?
  [[ $rc -eq 143 ]] || early+=" $rc"
done
[[ -z $early ]] && ok "--as-pid-1: SIGTERM in the first milliseconds ends each of 20 runs (143)" ||
  not_ok "--as-pid-1: SIGTERM at the start was lost or misread:$early"
expect_exit 125 "--as-pid-1 with the Landlock jail is refused" "$CORDON" --as-pid-1 --isolation landlock -- touch "$WORK/pid1-ran"
expect_err "^cordon: --as-pid-1: .*Landlock jail has none" "the refusal names --as-pid-1"
[[ ! -e $WORK/pid1-ran ]] && ok "nothing ran after the refusal" || not_ok "--as-pid-1 --isolation landlock ran the command"
# A parent-death signal the caller set (setpriv --pdeathsig, Go's Pdeathsig) still ends cordon
# and its jail with the caller, also once a root caller's cordon changed ids to start the jail.
ends_with_parent "sleep 44.$$" "a caller's parent-death signal ends the jail with the caller" \
  setpriv --pdeathsig KILL "$CORDON" -- sleep "44.$$"
# SIGKILL to cordon at any moment of its start leaves nothing behind (a root caller's id-map
# helper once outlived it, holding cordon's stdout open).
for i in $(seq 100); do
  "$CORDON" -q -- true "killtag$$-$i" </dev/null >/dev/null 2>&1 &
  pid=$!
  sleep "0.00$((i % 10))"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
done
sleep 1
left=$(pgrep -f "killtag$$-" | tr '\n' ' ')
[[ -z $left ]] && ok "SIGKILL to cordon during 100 starts leaves no process" || {
  not_ok "SIGKILL during start left: $left ($(ps -o args= -p "${left%% *}"))"
  # shellcheck disable=SC2086 # the pids
  kill -9 $left 2>/dev/null
}
mkdir -p "$SCRATCH/shown" && echo host >"$SCRATCH/shown/file"
run sh -c "umask 077; '$CORDON' --no-profile --no-policy --ro-bind / / --perms 0750 --mount-tmpfs '$SCRATCH/shown' \
  --perms 0711 --dir '$SCRATCH/shown/d' -- sh -c 'ls $SCRATCH/shown; stat -c %a $SCRATCH/shown $SCRATCH/shown/d'"
[[ $rc -eq 0 && $(tr '\n' ' ' <"$OUT/out") == "d 750 711 " ]] && ok "--mount-tmpfs after --ro-bind / / hides the host's files; --perms is exact" ||
  not_ok "--mount-tmpfs/--perms: exit $rc, $(tr '\n' ' ' <"$OUT/out") $(head -2 "$OUT/err")"
for bad in "--perms 9 --dir /tmp/d" "--perms 0700 --ro-bind / /x" "--dir /tmp/d --perms 0700"; do
  # shellcheck disable=SC2086 # the options' words
  expect_exit 125 "bad --perms ($bad) is refused" "$CORDON" $bad -- touch "$WORK/perms-ran"
  expect_err "^cordon: --perms: " "the error names --perms ($bad)"
done
[[ ! -e $WORK/perms-ran ]] && ok "nothing ran after a bad --perms" || not_ok "a bad --perms ran the command"
expect_exit 0 "--uid/--gid" "$CORDON" --uid 4242 --gid 4343 -- /bin/sh -c 'echo $(id -u) $(id -g)'
expect_out "^4242 4343$" "the ids inside are the requested ones"
expect_exit 0 "--rlimit" "$CORDON" --rlimit nofile=64:128 -- /bin/sh -c 'ulimit -n; ulimit -Hn'
expect_out "^64$" "soft nofile"
expect_exit 0 "core dumps are off by default" "$CORDON" -- /bin/sh -c 'ulimit -c'
expect_out "^0$" "core limit 0"
expect_exit 125 "a bad --rlimit names it" "$CORDON" --rlimit bogus=1 -- true
expect_err "--rlimit" "bad rlimit message"
finish

#!/bin/sh
# The Landlock jail where no one may create a user namespace: tests/vm/init sets
# user.max_user_namespaces=0 (which this machine's own kernel refuses to let a test set) and runs
# this as root (MODE isolation) and as uid 1000 (isolation-user), in an empty workdir. Debian
# 12's kernel offers Landlock ABI 2: no scopes, no TCP rules (the socket filter refuses the
# network). Prints "CORDON-VM: [not ]ok MODE ID - ...". usage: isolation.sh MODE OUTSIDE
MODE=$1 OUTSIDE=$2
. "$(dirname "$0")/harness.sh"
mkdir -p sub "$HOME/.ssh" && echo old > sub/f && echo SECRET-KEY > "$HOME/.ssh/id_ed25519"

run $CORDON --no-policy --isolation namespaces -- /bin/true
if [ $rc -eq 125 ] && grep -q 'user.max_user_namespaces' "$T/err"; then
  pass namespaces-125 "--isolation namespaces: 125 with the sysctl in the hint"
else fail namespaces-125 "exit $rc"; fi

run $CORDON --no-policy -- /bin/sh -c 'echo inside'
if [ $rc -eq 0 ] && grep -q '^inside$' "$T/out" && [ "$(grep -c '^cordon: warning:' "$T/err")" = 1 ] &&
   grep -q '^cordon: warning: user namespaces are refused here (clone: No space left on device);$' "$T/err" &&
   grep -q '^  running in a Landlock jail (ABI [0-9]*) instead: host processes visible, ' "$T/err"; then
  pass auto-warns "auto: the Landlock jail runs, with one warning naming what it cannot give"
else fail auto-warns "exit $rc"; fi

# What it claims to hold: writes only in the workdir, HOME unreadable.
run $CORDON --no-policy -- /bin/sh -c "echo new > sub/f && echo wrote; (echo x > $OUTSIDE/pwned) 2>/dev/null;
  cat $HOME/.ssh/id_ed25519 2>/dev/null; true"
if [ $rc -eq 0 ] && grep -q '^wrote$' "$T/out" && [ ! -e "$OUTSIDE/pwned" ] && ! grep -q SECRET "$T/out"; then
  pass escapes "the workdir is written; nothing outside it, and the HOME secret is unreadable"
else fail escapes "exit $rc"; fi

# What it names as dropped is really gone: a host process is visible; but not its environment
# or files (Landlock's ptrace rule, from ABI 1).
sleep 100 &
host=$!
run $CORDON --no-policy -- /bin/sh -c "[ -r /proc/$host/cmdline ] && echo visible; true"
if [ $rc -eq 0 ] && grep -q '^visible$' "$T/out"; then
  pass dropped-visible "dropped as named: a host process is visible in /proc"
else fail dropped-visible "exit $rc"; fi
run $CORDON --no-policy -- /bin/sh -c "cat /proc/$host/environ >/dev/null 2>&1 && echo environ-read
  readlink /proc/$host/cwd >/dev/null 2>&1 && echo cwd-read; echo looked"
if [ $rc -eq 0 ] && grep -q '^looked$' "$T/out" && ! grep -q 'environ-read\|cwd-read' "$T/out"; then
  pass proc-guarded "a host process's /proc/PID/environ and cwd stay out of reach"
else fail proc-guarded "exit $rc: $(cat "$T/out")"; fi
kill $host

# Everyday work: a repository in the workdir; new files at its top, git commit, branch and
# switch; what the command planted in the protected paths is moved aside when the run ends.
mkdir repo && cd repo && git init -q 2>/dev/null && git config user.name tester && git config user.email t@t.invalid &&
  echo a > a && git add a && git commit -qm init
run $CORDON --no-policy -- /bin/sh -c 'set -e; echo x > new; mv new renamed; rm renamed; echo b > b
  git add b; git commit -qm second; git branch feature; git switch -q feature
  mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit; mkdir .claude; echo everyday-ok'
if [ $rc -eq 0 ] && grep -q '^everyday-ok$' "$T/out" && [ "$(git log -1 --format=%s)" = second ] &&
   [ ! -e .git/hooks/pre-commit ] && [ ! -e .claude ] && [ -d .claude.cordon-unsafe ]; then
  pass everyday "new files at the top, git commit, branch, switch; what was planted moved aside"
else fail everyday "exit $rc: $(tail -3 "$T/err" | tr '\n' ' ')"; fi
cd ..
rm -rf "$T"

#!/usr/bin/env bash
# Everyday work in the Landlock jail (cordon(1), ISOLATION), under two of the refusals that
# give it: cordon-test-nouserns (a syscall filter like Docker's default profile) and cordon
# inside cordon. In each, a new user's work succeeds: files made, renamed and removed at the
# workdir's top, git add/commit/branch/switch/stash/worktree add, make, a python venv, npm
# install from a local package, a HOME to write in. And the walls hold: writes outside the
# workdir, HOME's secrets, the protected paths (judged when the run ends: what the command
# planted is moved aside, the config from before put back), signals, sockets, other
# processes' /proc. (The third refusal, user.max_user_namespaces=0, needs a VM: t_vm_landlock.)
source "$TESTLIB"

# The Landlock jail, and the helper that refuses user namespaces (NOUSERNS, ABI in abi).
need_landlock_jail

# A host process (signals, /proc) for the walls.
sleep 300 </dev/null >/dev/null 2>&1 &
host_pid=$!
trap 'kill "$host_pid" 2>/dev/null || true' EXIT

# repo DIR: a real repository with one commit, a Makefile, a local npm package, and a
# protected directory of the user's own.
repo() {
  mkdir -p "$1" && cd "$1" || exit 1
  git init -q -b main . && git config user.name tester && git config user.email tester@example.invalid
  printf 'out.txt:\n\techo built > out.txt\n' >Makefile
  echo a >a
  mkdir -p .vscode pkg && echo '{"editor.tabSize": 2}' >.vscode/settings.json
  echo '{"name": "pkg", "version": "1.0.0"}' >pkg/package.json
  echo '{"name": "app", "version": "1.0.0"}' >package.json
  git add -A && git commit -qm init
  cd - >/dev/null || exit 1
}

EVERYDAY='set -e
echo x > new-file; mv new-file renamed; rm renamed; echo kept > top-new
echo b > b; git add b; git commit -qm second
git branch feature; git switch -q feature; echo c >> a; git stash -q; git stash pop -q; git switch -q main
git worktree add -q -b wt-branch wt
make -s
python3 -m venv --without-pip .venv; .venv/bin/python -c "print(\"venv-ok\")"
npm install --offline --no-audit --no-fund --loglevel=error ./pkg >/dev/null
mkdir -p "$HOME/.cache" && echo x > "$HOME/.cache/c" && git config --global core.autocrlf false
echo EVERYDAY-OK'

# The walls, tried after the everyday work; each prints what it got.
WALLS="echo x > $SCRATCH/outside 2>/dev/null && echo outside-written
cat $HOME/.ssh/id_ed25519 2>/dev/null || echo secret-refused
kill -0 $host_pid 2>/dev/null && echo signalled || echo signal-refused
cat /proc/$host_pid/environ >/dev/null 2>&1 && echo environ-read || echo environ-refused
python3 -c \"import socket
try:
    socket.socket(socket.AF_UNIX).connect('/run/cordon-test-none'); print('unix-connected')
except OSError as e:
    print('unix-refused', e.errno)\"
echo evil > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config
mkdir -p .claude && echo '{\"hooks\": {}}' > .claude/settings.json
echo '{\"task\": 1}' >> .vscode/settings.json
echo WALLS-DONE"

# everyday NAME DIR judged|walled RUNNER...: the work and the walls in repository DIR, through
# RUNNER (the refusal and cordon, started in DIR: its workdir), then what the host sees. The
# protected paths are judged after the run, or walled by an outer jail (cordon in cordon).
everyday() {
  local name=$1 dir=$2 protected=$3
  shift 3
  cd "$dir" || exit 1
  run "$@" "$LLGUARD; cd $dir && ( $EVERYDAY ) && ( $WALLS )"
  cd "$WORK" || exit 1
  if [[ $rc -eq 99 ]]; then
    echo "Bail out! the Landlock jail is not working (guard failed); refusing to run escape tests"
    cat "$OUT/err" >&2
    finish
    exit 1
  fi
  expect_rc 0 "$name: the run succeeds"
  expect_err 'running in a Landlock jail \(ABI [0-9]+\) instead' "$name: in the Landlock jail"
  expect_out '^EVERYDAY-OK$' "$name: new files, git commit/branch/switch/stash/worktree, make, venv, npm, HOME"
  expect_out '^venv-ok$' "$name: the venv's python runs"
  [[ $(git -C "$dir" log --format=%s main | head -1) == second && -n $(git -C "$dir" branch --list feature) ]] &&
    ok "$name: the commit and the branch are on the host" || not_ok "$name: git log: $(git -C "$dir" log --oneline | head -3)"
  [[ -f $dir/top-new && ! -e $dir/renamed && -f $dir/out.txt && -e $dir/node_modules/pkg && -d $dir/wt ]] &&
    ok "$name: top-level files, make's output, node_modules and the worktree are on the host" ||
    not_ok "$name: $(ls -a "$dir")"
  expect_no_out 'outside-written' "$name: no write outside the workdir"
  [[ ! -e $SCRATCH/outside ]] || not_ok "$name: $SCRATCH/outside was written"
  expect_out '^secret-refused$' "$name: HOME's secrets are unreadable"
  expect_out '^environ-refused$' "$name: a host process's /proc/PID/environ is unreadable"
  expect_out '^unix-refused ' "$name: unix sockets are refused"
  if ((abi >= 6)); then
    expect_out '^signal-refused$' "$name: a signal to a host process is refused (Landlock ABI $abi)"
  else
    skip "$name: signals are scoped from Landlock ABI 6 (this kernel: $abi)"
  fi
  expect_out '^WALLS-DONE$' "$name: the walls were tried"
  if [[ $protected == judged ]]; then
    expect_err '\.git/hooks/pre-commit, left by the command, is a hook.*moved to' "$name: the hook planted is moved aside"
    expect_err '\.git/config, left by the command, sets core\.fsmonitor.*put back' "$name: the config from before is put back"
    expect_err '\.claude, left by the command, is a protected path, made by the command' "$name: .claude is moved aside"
    expect_err '\.vscode, left by the command, is a protected path, changed by the command' "$name: .vscode is moved aside"
    grep -q tabSize "$dir/.vscode.cordon-unsafe/settings.json" && ok "$name: the user's settings are kept aside" ||
      not_ok "$name: $(ls -a "$dir")"
  else
    expect_no_err 'left by the command' "$name: nothing to move aside: the outer jail kept the protected paths read-only"
    [[ $(cat "$dir/.vscode/settings.json") == '{"editor.tabSize": 2}' ]] && ok "$name: .vscode unchanged" ||
      not_ok "$name: .vscode/settings.json: $(cat "$dir/.vscode/settings.json")"
  fi
  [[ ! -e $dir/.git/hooks/pre-commit && ! -e $dir/.claude/settings.json ]] && ! grep -q fsmonitor "$dir/.git/config" &&
    ok "$name: on the host, nothing planted is where a tool would run it" ||
    not_ok "$name: $(ls -a "$dir" "$dir/.git/hooks"; cat "$dir/.git/config")"
  run git -C "$dir" status --porcelain
  expect_rc 0 "$name: the host's git reads the repository after the run"
}

# --- (a) a syscall filter like Docker's default profile ----------------------------------------------
repo "$WORK/a"
everyday "seccomp refusal" "$WORK/a" judged "$NOUSERNS" "$CORDON" --status-json "$OUT/a.json" -- /bin/sh -c
python3 - "$OUT/a.json" <<'EOF' && ok "--status-json: the moved paths in \"quarantined\"" || not_ok "status: $(cat "$OUT/a.json")"
import json, sys
s = json.load(open(sys.argv[1]))
paths = {q["path"] for q in s["quarantined"]}
assert s["isolation"] == "landlock", s
assert {".git/hooks/pre-commit", ".git/config", ".claude", ".vscode"} <= paths, paths
EOF

# What init leaves behind cannot outlive the judgement: --timeout kills init alone (no cgroup
# here), and a process that ignores SIGTERM waits for init to be gone, then plants a hook. The
# supervisor, the jail's subreaper, ends it before judging. And no process of the jail may set
# another's limits (prlimit: RLIMIT_CPU would end init, or cordon).
cd "$WORK/a" || exit 1
run "$NOUSERNS" "$CORDON" --timeout 2 -- /bin/sh -c "$LLGUARD; trap '' TERM; init=\$PPID
  ( trap '' TERM; for i in \$(seq 400); do [ -d /proc/\$init ] || break; sleep 0.05; done
    echo late > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout ) &
  sleep 60"
[[ $rc -ne 99 ]] || { echo "Bail out! the Landlock jail is not working"; finish; exit 1; }
expect_rc 124 "orphans: --timeout ends the run"
sleep 2
[[ ! -e $WORK/a/.git/hooks/post-checkout ]] && ok "orphans: nothing the jail left writes after the run" ||
  not_ok "orphans: a hook was planted after the run"
run "$NOUSERNS" "$CORDON" -- python3 -c "import os, resource
try:
    resource.prlimit(os.getppid(), resource.RLIMIT_CPU, (1, 1)); print('set')
except OSError as e:
    print('refused', e.errno)
resource.setrlimit(resource.RLIMIT_CORE, (0, 0)); print('own-ok')"
expect_out '^refused 1$' "prlimit on another process (init) is refused with EPERM"
expect_out '^own-ok$' "a process's own limits stay its to set"
# The exec checks know a copy of a system program by its contents wherever the jail can write
# (the workdir, TMPDIR, the private HOME); what lies elsewhere the jail did not make.
for where in . '$TMPDIR' '$HOME'; do
  run "$NOUSERNS" "$CORDON" -- /bin/sh -c "cp \"\$(command -v rm)\" $where/x && $where/x -rf /usr; echo status \$?"
  expect_err '^cordon: denied: ' "exec checks: a copy of rm in $where under another name is denied"
  expect_out '^status [1-9]' "exec checks: the copy in $where did not run"
done
rm -f "$WORK/a/x"
# A config of mode 0600 (it may hold a token) is put back as 0600.
chmod 600 "$WORK/a/.git/config"
sleep 1.1  # older than the run's start, so that its copy is trusted
run "$NOUSERNS" "$CORDON" -- git config core.fsmonitor evil
[[ $(stat -c %a "$WORK/a/.git/config") == 600 ]] && ! grep -q fsmonitor "$WORK/a/.git/config" &&
  ok "the config from before is put back with its mode (0600)" || not_ok "config: $(stat -c %a "$WORK/a/.git/config")"
# The private HOME and TMPDIR go with the run, also what the command made unreadable or deep.
run "$NOUSERNS" "$CORDON" -- /bin/sh -c 'echo "dirs $HOME $TMPDIR"; mkdir -p "$HOME/locked/in" && echo x > "$HOME/locked/in/f"
  chmod 000 "$HOME/locked"; d=$TMPDIR; for i in $(seq 70); do d=$d/d; done; mkdir -p "$d" && echo deep > "$d/f"'
read -r _ home tmp < <(grep '^dirs ' "$OUT/out")
[[ $home == /tmp/cordon-home.* && ! -e $home && $tmp == /tmp/cordon-tmp.* && ! -e $tmp ]] &&
  ok "the private HOME and TMPDIR are removed, a mode-000 and a 70-level tree with them" ||
  not_ok "left: $(ls -d "$home" "$tmp" 2>&1)"
cd "$WORK" || exit 1

# A linked worktree (cordon(1), GIT WORKTREES): its git directories are outside the workdir, and
# shown read-only, as in the namespace jail: git reads work, nothing there is written.
git -C "$WORK/a" worktree add -q -b ll-linked "$WORK/ll-linked" && cd "$WORK/ll-linked" || exit 1
run "$NOUSERNS" "$CORDON" -- /bin/sh -c "$LLGUARD; git log --format=%s -1 main; git branch from-jail; echo branch=\$?
  echo /tmp > $WORK/a/.git/worktrees/ll-linked/commondir; echo commondir=\$?"
expect_out '^second$' "a linked worktree in the Landlock jail: git log works"
expect_out '^branch=[1-9]' "and nothing is written to its git directories (git branch fails)"
expect_out '^commondir=[1-9]' "its commondir cannot be rewritten"
[[ -z $(git -C "$WORK/a" branch --list from-jail) && $(cat "$WORK/a/.git/worktrees/ll-linked/commondir") == ../.. ]] &&
  ok "the repository is unchanged" || not_ok "changed: $(git -C "$WORK/a" branch) $(cat "$WORK/a/.git/worktrees/ll-linked/commondir")"
cd "$WORK" || exit 1

# --- (b) cordon inside cordon: the outer jail refuses nested user namespaces ---------------------------
# The inner cordon of a sanitizer build cannot run its leak checker inside a jail (as in
# t_isolation). The outer jail's workdir is the repository's (started there), the inner's is
# given: the same. The outer jail's mounts keep the protected paths read-only, so the inner
# one finds nothing to judge.
repo "$WORK/b"
everyday "cordon in cordon" "$WORK/b" walled "$CORDON" -q --ro "$STAGE" -- env ASAN_OPTIONS=detect_leaks=0 \
  "$CORDON" --workdir "$WORK/b" -- /bin/sh -c

finish

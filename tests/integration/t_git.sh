#!/usr/bin/env bash
# git after the run (issue 10): what the jail writes is never read by the host's git as
# configuration, hooks or a repository location, for the forms protected by the default
# profile; and committing, branching, fetching and `git worktree add` keep working inside.
# Each planted payload only writes a marker file; the host's real git is then run on the
# workdir, and the marker must not appear.
source "$TESTLIB"

marker="$SCRATCH/git-ran"
G=(git -c user.name=t -c user.email=t@t -c init.defaultBranch=main)
evil_script="$SCRATCH/evil.sh"
printf '#!/bin/sh\ntouch %s\n' "$marker" > "$evil_script" && chmod +x "$evil_script"
host_git_runs_nothing() {  # DESCRIPTION DIR
  rm -f "$marker"
  (cd "$2" && git status >/dev/null 2>&1; git -c user.name=t -c user.email=t@t commit -q --allow-empty -m host >/dev/null 2>&1; true)
  [[ ! -e $marker ]] && ok "$1: the host's git status and commit run nothing planted" || not_ok "$1: the host's git ran the planted command"
}

# 1. commondir: git reads $GIT_DIR/commondir in any repository, and would take config and hooks
#    from the directory it names.
mkdir -p "$WORK/repo" && cd "$WORK/repo"
"${G[@]}" init -q . && echo a > a && "${G[@]}" add a && "${G[@]}" commit -qm one
jailed "mkdir -p .git/x/hooks; printf '[core]\n\tfsmonitor = $evil_script\n' > .git/x/config
  printf '#!/bin/sh\n$evil_script\n' > .git/x/hooks/pre-commit; chmod +x .git/x/hooks/pre-commit
  echo x > .git/commondir; echo commondir=\$?
  echo '[core]' > .git/config.worktree"
expect_out "^commondir=[1-9]" ".git/commondir cannot be written"
[[ ! -e .git/commondir || ! -s .git/commondir ]] && ok "no commondir is left in .git" || not_ok ".git/commondir: $(cat .git/commondir)"
host_git_runs_nothing "commondir" "$WORK/repo"
rm -rf .git/x .git/config.worktree

# 2. A repository planted in a workdir that is not one: as .git, or bare (HEAD, objects/, refs/
#    and a config with core.worktree and core.fsmonitor right in the workdir).
mkdir -p "$WORK/plain" && cd "$WORK/plain"
jailed "mkdir -p .git/objects .git/refs 2>/dev/null; echo 'ref: refs/heads/main' > .git/HEAD 2>/dev/null; echo dotgit=\$?
  mkdir -p objects refs; echo 'ref: refs/heads/main' > HEAD; echo head=\$?
  printf '[core]\n\tbare = false\n\tworktree = .\n\tfsmonitor = $evil_script\n' > config; ls -A"
expect_out "^dotgit=[1-9]" "no .git can be made in a workdir that is not a repository"
expect_out "^head=[1-9]" "nor a HEAD: no bare repository can be planted there"
[[ ! -e HEAD && ! -e .git ]] && ok "no HEAD or .git is left" || not_ok "left: $(ls -A)"
rm -f "$marker"
(git status >/dev/null 2>&1; true)
[[ ! -e $marker ]] && ok "the host's git status in that workdir runs nothing" || not_ok "the host's git ran the planted fsmonitor"
rm -rf objects refs config

# 3. An existing linked worktree: its commondir and gitdir cannot be redirected.
cd "$WORK/repo"
"${G[@]}" worktree add -q wt1 2>/dev/null
jailed 'echo /tmp/x > .git/worktrees/wt1/commondir; echo cd=$?; echo /tmp/y > .git/worktrees/wt1/gitdir; echo gd=$?'
expect_out "^cd=[1-9]" "a linked worktree's commondir cannot be rewritten"
expect_out "^gd=[1-9]" "nor its gitdir"
host_git_runs_nothing "linked worktree" "$WORK/repo/wt1"

# 4. What agents do keeps working: commit, branch, switch, fetch, worktree add.
"${G[@]}" init -q --bare "$SCRATCH/remote.git" && "${G[@]}" push -q "$SCRATCH/remote.git" HEAD:refs/heads/main 2>/dev/null
"${G[@]}" remote add origin "$SCRATCH/remote.git"
(cd "$WORK/plain" && "${G[@]}" clone -q "$SCRATCH/remote.git" other && cd other && echo b > b && "${G[@]}" add b && "${G[@]}" commit -qm two && "${G[@]}" push -q origin HEAD:main)
jailed "${G[*]} commit -q --allow-empty -m in-jail; echo commit=\$?
  ${G[*]} branch feature; echo branch=\$?
  ${G[*]} checkout -q -b topic; echo switch=\$?
  ${G[*]} fetch -q origin; echo fetch=\$?
  ${G[*]} worktree add -q wt2; echo worktree=\$?
  ${G[*]} -C wt2 log --format=%s -1" --ro "$SCRATCH"
for what in commit branch switch fetch worktree; do expect_out "^$what=0$" "git $what works inside the jail"; done
[[ $(git log --format=%s -1 topic 2>/dev/null) == in-jail && -n $(git rev-parse -q --verify refs/remotes/origin/main 2>/dev/null) ]] &&
  ok "the commit, branches and fetched refs are there on the host afterwards" || not_ok "host repo: $(git log --oneline --all | head -5)"
[[ $(git worktree list | grep -c wt2) -eq 1 ]] && ok "and so is the new worktree" || not_ok "worktree list: $(git worktree list)"
# Removing it inside fails on its directory in .git/worktrees, which holds protected paths: the
# note says so, and what to do.
run "$CORDON" -- "${G[@]}" worktree remove wt2
expect_err "^cordon: note: git worktree failed: .*\.git/worktrees.*outside the jail" \
  "git worktree remove inside: a note names .git/worktrees and says to do it outside"
"${G[@]}" worktree remove --force wt2 2>/dev/null; "${G[@]}" worktree prune
[[ $(git worktree list | grep -c wt2) -eq 0 ]] && ok "outside, the worktree is removed" || not_ok "worktree list: $(git worktree list)"
host_git_runs_nothing "after ordinary work" "$WORK/repo"

# From a subdirectory of a repository (issue 28): the workdir is the repository's top, so git
# works there, the repository's protections apply, and the host's git sees no placeholder.
top="$WORK/sub-repo"
mkdir -p "$top/src/deep" && cd "$top" && "${G[@]}" init -q . && echo a > a && "${G[@]}" add a && "${G[@]}" commit -qm one
cd "$top/src/deep"
jailed "git status --short --branch && echo top > $top/from-sub && echo done"
expect_out "^## main" "from a subdirectory: git status works"
expect_out "^done$" "from a subdirectory: the command ran"
expect_err "note: the workdir is the git repository $top, which holds the current directory" "from a subdirectory: a note names the repository"
[[ -e $top/from-sub ]] && ok "from a subdirectory: a write at the repository's top lands" || not_ok "from-sub not written"
rm -f "$top/from-sub"
jailed "printf '[core]\n\tpager = $evil_script\n' >> $top/.git/config; echo rc=\$?"
expect_out "^rc=[1-9]" "from a subdirectory: the repository's .git/config stays read-only"
host_git_runs_nothing "from a subdirectory" "$top"
"$CORDON" -q -- /bin/sh -c "$GUARD; touch $top/src/deep/.ready; sleep 3" >/dev/null 2>&1 &
bg=$!
for _ in $(seq 100); do [[ -e $top/src/deep/.ready ]] && break; sleep 0.1; done
shown=$(git -C "$top" status --short --untracked-files=all | grep -v '\.ready$' || true)
[[ -e $top/src/deep/.ready && -z $shown ]] && ok "from a subdirectory: the host's git sees nothing of the run meanwhile" ||
  not_ok "from a subdirectory, the host's git status meanwhile: $shown"
wait "$bg" || true
rm -f "$top/src/deep/.ready"
jailed "git -C $top status --short >/dev/null 2>&1; echo x > $top/from-dot; echo rc=\$?" --workdir .
expect_out "^rc=0$|^rc=[1-9]" "--workdir . from a subdirectory: the command ran"
[[ ! -e $top/from-dot ]] && ok "--workdir . from a subdirectory: only the directory itself is writable" || not_ok "from-dot landed at the top"
expect_err_absent() { grep -q "$1" "$OUT/err" && not_ok "$2" || ok "$2"; }
expect_err_absent "the workdir is the git repository" "--workdir .: no note about the repository"
# Only a repository git itself would take: an empty .git (a directory anyone may make in a
# shared parent) or a junk .git file above leaves the current directory the workdir, and so
# does a GIT_CEILING_DIRECTORIES entry given through a symlink (git takes its real path).
mkdir -p "$WORK/shared/.git" "$WORK/shared/proj" && cd "$WORK/shared/proj"
jailed "echo x > $WORK/shared/above; echo done"
[[ ! -e $WORK/shared/above ]] && ok "an empty .git above is no repository: its parent is not made the workdir" ||
  not_ok "an empty .git above made $WORK/shared writable"
mkdir -p "$WORK/junk/proj" && echo "not a gitdir line" > "$WORK/junk/.git" && cd "$WORK/junk/proj"
jailed "echo x > $WORK/junk/above; echo done"
[[ ! -e $WORK/junk/above ]] && ok "a junk .git file above is no repository" || not_ok "a junk .git file made $WORK/junk writable"
ln -sfn "$top/src" "$WORK/ceiling-link" && cd "$top/src/deep"
run env GIT_CEILING_DIRECTORIES="$WORK/ceiling-link" "$CORDON" -- /bin/sh -c "$GUARD; echo x > $top/ceiling-write; echo done"
expect_out "^done$" "GIT_CEILING_DIRECTORIES through a symlink: the command ran"
[[ ! -e $top/ceiling-write ]] && ok "GIT_CEILING_DIRECTORIES through a symlink stops the search, as in git" ||
  not_ok "the ceiling was passed: $top/ceiling-write landed"
rm -f "$top/ceiling-write"
# A linked worktree's subdirectory: the worktree's top (its .git is a file).
(cd "$top" && "${G[@]}" worktree add -q "$WORK/sub-wt" 2>/dev/null) && mkdir -p "$WORK/sub-wt/x" && cd "$WORK/sub-wt/x"
jailed "echo x > $WORK/sub-wt/from-x && echo done"
[[ -e $WORK/sub-wt/from-x ]] && ok "a worktree's subdirectory: the worktree's top is the workdir" || not_ok "worktree: from-x not written"
# A HOME kept in git (dotfiles): its subdirectories stay workdirs of their own.
mkdir -p "$WORK/home/proj" && "${G[@]}" init -q "$WORK/home" && cd "$WORK/home/proj"
run env HOME="$WORK/home" "$CORDON" -- /bin/sh -c "$GUARD; echo x > $WORK/home/dot-write; echo x > inside; echo done"
expect_out "^done$" "a subdirectory of a HOME kept in git: the command ran"
[[ ! -e $WORK/home/dot-write && -e $WORK/home/proj/inside ]] && ok "a HOME kept in git is not made the workdir" ||
  not_ok "HOME in git: $(ls "$WORK/home")"

# 4b. Symlinks where the host's git writes through them: a reflog (git appends to what it leads
#     to: a ~/.bashrc), COMMIT_EDITMSG (rewritten on a commit), and a directory of them moved
#     in from elsewhere (its files keep their times). The host's next commit writes none.
mkdir -p "$WORK/links" && cd "$WORK/links" && "${G[@]}" init -q . && echo a > a && "${G[@]}" add a &&
  "${G[@]}" commit -qm one
jailed "mkdir -p stage/refs && ln -s $SCRATCH/via-moved stage/refs/x"
sleep 1  # the next run starts after the symlink was made: its time is older than the run's
jailed "ln -sf $SCRATCH/via-head .git/logs/HEAD; ln -sf $SCRATCH/via-branch .git/logs/refs/heads/main
  ln -sf $SCRATCH/via-msg .git/COMMIT_EDITMSG; mv stage .git/logs/staged
  echo planted"
expect_out "^planted$" "symlinks planted in .git/logs and at COMMIT_EDITMSG"
expect_err "\.git/logs/HEAD, left by the command, is a symlink" "a symlinked reflog is named and moved aside"
echo b >> a && "${G[@]}" commit -qam two && "${G[@]}" commit -q --amend -m two-amended
[[ ! -e $SCRATCH/via-head && ! -e $SCRATCH/via-branch && ! -e $SCRATCH/via-msg ]] &&
  ok "the host's next commits write through none of them" || not_ok "written: $(ls "$SCRATCH" | grep via-)"
[[ ! -L .git/logs/HEAD && ! -L .git/logs/refs/heads/main && ! -L .git/COMMIT_EDITMSG && ! -L .git/logs/staged/refs/x ]] &&
  ok "none is left in place, the one moved in with its directory neither" || not_ok "left: $(find .git -type l)"

# A flood of entries to hide one among: the directory the run changed goes aside whole.
jailed "mkdir -p .git/logs/refs/flood && cd .git/logs/refs/flood && i=0
  while [ \$i -lt 4200 ]; do : > f\$i; i=\$((i+1)); done; ln -s $SCRATCH/via-flood zz; echo flooded"
expect_out "^flooded$" "4,200 entries and a symlink planted in .git/logs"
[[ ! -e .git/logs/refs/flood/zz && -d .git/logs/refs/flood.cordon-unsafe ]] &&
  ok "the flooded directory is moved aside whole" || not_ok "flood: $(ls -d .git/logs/refs/flood* 2>&1)"
rm -rf .git/logs/refs/flood.cordon-unsafe
# What was moved aside stays as it is in a later run that changes the directory it is in.
jailed "mkdir .git/logs/later && echo changed"
expect_out "^changed$" "a later run changes .git/logs"
[[ -L .git/logs/HEAD.cordon-unsafe && -z $(find .git -name '*.cordon-unsafe.cordon-unsafe') ]] &&
  ok "and what an earlier run had moved aside is not moved again" || not_ok "moved again: $(find .git -name '*.cordon-unsafe*')"

# 5. A linked worktree (cordon(1), GIT WORKTREES): its git directories are outside the workdir,
#    and shown read-only. git reads the repository there (status, log, diff, from a
#    subdirectory too); nothing of it is written, so nothing can be planted there: not the
#    hooks, the config, the commondir, a reflog symlink, a todo list or a config.worktree. The
#    main checkout's files stay out of the jail.
main="$WORK/wt-main" linked="$WORK/wt-linked"
mkdir -p "$main" && "${G[@]}" -C "$main" init -q . && echo a > "$main/a" && "${G[@]}" -C "$main" add a &&
  "${G[@]}" -C "$main" commit -qm one && "${G[@]}" -C "$main" worktree add -q "$linked" &&
  mkdir -p "$linked/sub" && cd "$linked/sub"
wtdir="$main/.git/worktrees/wt-linked"
jailed "echo b >> ../a; ${G[*]} status --short; ${G[*]} log --format=%s; ${G[*]} diff --stat | tail -1
  ls -A $main | tr '\n' ' '; echo main-files
  ${G[*]} commit -qam two; echo commit=\$?
  printf '#!/bin/sh\n$evil_script\n' > $main/.git/hooks/post-checkout; echo hook=\$?
  printf '[core]\n\tfsmonitor = $evil_script\n' >> $main/.git/config; echo config=\$?
  printf '[core]\n\tfsmonitor = $evil_script\n' > $wtdir/config.worktree; echo wtconfig=\$?
  echo /tmp > $wtdir/commondir; echo commondir=\$?
  ln -sf $HOME/.bashrc $wtdir/logs/HEAD; echo reflog=\$?
  mkdir -p $wtdir/rebase-merge; echo rebase=\$?"
expect_out "^ M \.\./a$" "a linked worktree: git status works inside, from a subdirectory"
expect_out "^one$" "and git log"
expect_out "1 file changed" "and git diff"
expect_out "^\.git main-files$" "the main checkout's files are not in the jail (only its .git)"
for what in commit hook config wtconfig commondir reflog rebase; do
  expect_out "^$what=[1-9]" "a linked worktree's git directories are read-only: $what fails"
done
[[ $("${G[@]}" -C "$linked" log --format=%s | tr '\n' ' ') == "one " && ! -L $wtdir/logs/HEAD ]] &&
  ok "the repository is as it was" || not_ok "changed: $("${G[@]}" -C "$linked" log --oneline 2>&1 | head -3)"
run "$CORDON" -- git commit -q --allow-empty -m three
expect_err "^cordon: note: git failed: .*linked worktree.*read-only inside.*GIT WORKTREES" \
  "a git command that fails in a linked worktree gets a note saying why"
expect_no_err "Device or resource busy" "and not the note about a protected .git/config"
# git stash fails there with exit 1 and says nothing: the note is all the user gets.
run "$CORDON" -- git stash
expect_rc 1 "git stash in a linked worktree fails"
expect_err "^cordon: note: git failed: .*linked worktree.*read-only inside" "and gets the note too"
run "$CORDON" -- git diff --quiet
expect_rc 1 "git diff --quiet answers 1 (a change)"
expect_no_err "note: git failed" "and is no failure: no note"
git -C "$linked" checkout -q -- a
host_git_runs_nothing "linked worktree (its checkout)" "$linked"
host_git_runs_nothing "linked worktree (the main checkout)" "$main"
# A common directory that holds the workdir is not shared.
"${G[@]}" -C "$main" worktree add -q "$main/.git/inside" 2>/dev/null && cd "$main/.git/inside"
run "$CORDON" -- /bin/sh -c "$GUARD; echo x > $main/.git/escaped; echo done"
[[ ! -e $main/.git/escaped ]] && ok "a worktree inside its common directory: that directory is not made writable" ||
  not_ok "wrote $main/.git/escaped"
expect_err "is not shared" "and a note says why git cannot read the repository"

finish

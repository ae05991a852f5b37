#!/usr/bin/env bash
# Repositories below the workdir's top (issue 10): a repository the command plants or changes
# anywhere in the workdir (sub/.git, the bare form, a .git file or commondir leading elsewhere,
# new worktrees and submodules) never makes the host's git run anything afterwards: cordon
# judges them once the jail is gone and moves aside what git would run (cordon(1), WHAT THE JAIL
# MAY LEAVE BEHIND). The user's own nested repositories, and what agents do in them, stay.
# Each payload only touches a marker file; the host's real git then runs in the directory.
source "$TESTLIB"

marker="$SCRATCH/git-ran"
G=(git -c user.name=t -c user.email=t@t -c init.defaultBranch=main)
evil="$SCRATCH/evil.sh"
printf '#!/bin/sh\ntouch %s\n' "$marker" > "$evil" && chmod +x "$evil"
# host_git_runs_nothing DESCRIPTION DIR: git status, diff, log and commit there, as a shell
# prompt and a user would.
host_git_runs_nothing() {
  rm -f "$marker"
  (cd "$2" && { git status; git diff; git log -1; git -c user.name=t -c user.email=t@t commit -q --allow-empty -m host; } >/dev/null 2>&1; true)
  [[ ! -e $marker ]] && ok "$1: the host's git runs nothing planted" || not_ok "$1: the host's git ran the planted command"
}
quarantined() {  # DESCRIPTION PATH [restored]: PATH was moved aside (and the old one put back), with a warning
  [[ -e $WORK/p/$2.cordon-unsafe || -L $WORK/p/$2.cordon-unsafe ]] && { [[ -n ${3:-} ]] || ! [[ -e $WORK/p/$2 || -L $WORK/p/$2 ]]; } &&
    ok "$1: $2 is moved to $2.cordon-unsafe" || not_ok "$1: $2: $(ls -la "$WORK/p/$(dirname "$2")" 2>&1 | head -12)"
  expect_err "^cordon: warning: $2, left by the command, .*moved to $2\.cordon-unsafe" "$1: a warning names $2"
}
# mk DIR, inside the jail: a repository with an index (git's fsmonitor runs when it refreshes one).
MK="mk() { mkdir -p \"\$1\" && ${G[*]} -C \"\$1\" init -q . && echo x > \"\$1/f\" && ${G[*]} -C \"\$1\" add f && ${G[*]} -C \"\$1\" commit -qm x; }"
fresh_project() {
  rm -rf "$WORK/p" && mkdir -p "$WORK/p" && cd "$WORK/p"
  "${G[@]}" init -q . && echo a > a && "${G[@]}" add a && "${G[@]}" commit -qm one
  sleep 0.2  # what the project held before the run is older than the run by more than a tick
}

# 1. A bare repository planted in a subdirectory, with a config and a hook.
fresh_project
jailed "$MK; mk sub && cd sub && mv .git/* . && rmdir .git && git --git-dir=. config core.bare false &&
  git --git-dir=. config core.worktree . && printf '\tfsmonitor = $evil\n' >> config &&
  printf '#!/bin/sh\n$evil\n' > hooks/pre-commit && chmod +x hooks/pre-commit && echo planted" --status-json "$OUT/status.json"
expect_out "^planted$" "a bare repository is planted in sub/"
quarantined "bare in sub/" "sub/config"
quarantined "bare in sub/" "sub/hooks/pre-commit"
grep -q '"quarantined":\[{"path":"sub/config","moved_to":"sub/config.cordon-unsafe"' "$OUT/status.json" &&
  ok "--status-json lists what was moved aside" || not_ok "status: $(cat "$OUT/status.json")"
host_git_runs_nothing "bare in sub/" "$WORK/p/sub"

# 2. sub/.git, made by git itself inside the jail, then given an fsmonitor and a hook.
fresh_project
jailed "$MK; mk deep && cd deep && ${G[*]} config core.fsmonitor $evil &&
  printf '#!/bin/sh\n$evil\n' > .git/hooks/post-commit && chmod +x .git/hooks/post-commit && echo planted"
expect_out "^planted$" "sub/.git is planted with git init"
quarantined "sub/.git" "deep/.git/config"
quarantined "sub/.git" "deep/.git/hooks/post-commit"
host_git_runs_nothing "sub/.git" "$WORK/p/deep"

# 3. The bare form made of plain files only (git checks objects/ and refs/ with access(X_OK)).
fresh_project
jailed "mkdir -p c/d && cd c/d && echo 'ref: refs/heads/main' > HEAD && : > objects && : > refs && chmod +x objects refs &&
  printf '[core]\n\tpager = $evil\n\tfsmonitor = $evil\n' > config && echo planted"
quarantined "files only" "c/d/config"
[[ $(git -C c/d rev-parse --is-bare-repository 2>/dev/null) == true ]] &&
  ok "files only: the host's git does take c/d for a repository" || not_ok "files only: git does not see a repository in c/d"

# 4. A .git file naming a repository outside the workdir (one a stranger can fill), and a .git
#    symlink.
mkdir -p "$SCRATCH/o" && "${G[@]}" -C "$SCRATCH/o" init -q . && echo f > "$SCRATCH/o/f" && "${G[@]}" -C "$SCRATCH/o" add f &&
  "${G[@]}" -C "$SCRATCH/o" config core.fsmonitor "$evil"
fresh_project
jailed "mkdir x y z && echo 'gitdir: $SCRATCH/o/.git' > x/.git && ln -s $SCRATCH/o/.git y/.git && echo f > x/f && echo f > y/f &&
  echo 'gitdir: ../../../../../../../../../..$SCRATCH/o/.git' > z/.git && echo planted"
quarantined "a .git file leading out" "x/.git"
quarantined "a .git symlink" "y/.git"
quarantined "a relative .git file climbing out" "z/.git"
host_git_runs_nothing "a .git file leading out" "$WORK/p/x"
host_git_runs_nothing "a .git symlink" "$WORK/p/y"

# 5. A worktree made in the run whose metadata is then turned: its commondir to a planted
#    common directory with a config of its own (which git would read for it); and a
#    submodule-style gitdir with a hook.
fresh_project
jailed "${G[*]} worktree add -q wt && mkdir -p evil/objects evil/refs &&
  printf '[core]\n\tfsmonitor = $evil\n' > evil/config && echo ../../../evil > .git/worktrees/wt/commondir &&
  mkdir -p .git/modules && ${G[*]} init -q --separate-git-dir=.git/modules/m m && printf '#!/bin/sh\n$evil\n' > .git/modules/m/hooks/pre-commit &&
  chmod +x .git/modules/m/hooks/pre-commit && echo planted"
expect_out "^planted$" "a worktree and a submodule-style repository are made and turned"
quarantined "new worktree's common directory" "evil/config"
quarantined "new submodule gitdir" ".git/modules/m/hooks/pre-commit"
host_git_runs_nothing "new worktree" "$WORK/p/wt"
host_git_runs_nothing "new submodule" "$WORK/p/m"

# 6. Two runs: the first plants a config and a hook where there is no repository yet, the
#    second only makes it one.
fresh_project
jailed "$MK; mk late && cd late && mv .git/* . && rmdir .git && git --git-dir=. config core.bare false &&
  git --git-dir=. config core.worktree . && printf '\tfsmonitor = $evil\n' >> config &&
  printf '#!/bin/sh\n$evil\n' > hooks/pre-commit && chmod +x hooks/pre-commit && mv HEAD HEAD.off && mv objects objects.off"
expect_no_err "cordon: warning: late" "run 1: no repository yet, nothing moved"
sleep 0.2
jailed "cd late && mv HEAD.off HEAD && mv objects.off objects"
quarantined "made a repository in a second run" "late/config"
quarantined "made a repository in a second run" "late/hooks/pre-commit"
host_git_runs_nothing "made a repository in a second run" "$WORK/p/late"

# 7. A hooks directory moved into place from elsewhere in the project (its files are old).
fresh_project
mkdir tools && printf '#!/bin/sh\n%s\n' "$evil" > tools/pre-commit && chmod +x tools/pre-commit
"${G[@]}" init -q moved && rm -rf moved/.git/hooks
sleep 0.2
jailed "mv tools moved/.git/hooks"
quarantined "a hooks directory moved in" "moved/.git/hooks/pre-commit"
host_git_runs_nothing "a hooks directory moved in" "$WORK/p/moved"

# 8. The user's own nested repository, with a hook and a pager of the user's, in which the
#    command commits and changes the config: the user's hook stays, the config from before the
#    run comes back (the command's version is moved aside), nothing planted runs.
fresh_project
"${G[@]}" init -q own && "${G[@]}" -C own config core.pager "cat" &&
  printf '#!/bin/sh\nexit 0\n' > own/.git/hooks/pre-commit && chmod +x own/.git/hooks/pre-commit
sleep 0.2
jailed "${G[*]} -C own commit -q --allow-empty -m agent && ${G[*]} -C own config core.editor $evil && echo done"
expect_out "^done$" "the command commits in the user's nested repository"
quarantined "the user's nested repository" "own/.git/config" restored
expect_err "own/.git/config.cordon-unsafe, and the file from before the run put back" "the warning says the old config is back"
[[ $(git -C own config core.pager) == cat && -z $(git -C own config core.editor) ]] &&
  ok "the user's pager is back, the planted editor is not" || not_ok "own config: $(cat own/.git/config)"
[[ -x own/.git/hooks/pre-commit ]] && ok "the user's own hook stays" || not_ok "hooks: $(ls own/.git/hooks | grep -v sample)"
[[ $(git -C own log --format=%s -1) == agent ]] && ok "the command's commit is there" || not_ok "own log: $(git -C own log --oneline | head -3)"

# 9. What agents do moves nothing: clone, init, worktrees, commits and config in a nested
#    repository they made, a bare clone.
fresh_project
"${G[@]}" init -q --bare "$SCRATCH/remote.git" && "${G[@]}" push -q "$SCRATCH/remote.git" HEAD:refs/heads/main 2>/dev/null
jailed "${G[*]} clone -q $SCRATCH/remote.git cloned && ${G[*]} -C cloned config user.email agent@x &&
  echo b > cloned/b && ${G[*]} -C cloned add b && ${G[*]} -C cloned commit -qm two &&
  ${G[*]} clone -q --bare $SCRATCH/remote.git mirror.git && ${G[*]} init -q fresh &&
  ${G[*]} branch side && ${G[*]} worktree add -q .wt/side side && ${G[*]} -C .wt/side commit -q --allow-empty -m side &&
  echo all=0" --ro "$SCRATCH"
expect_out "^all=0$" "clone, init, commit, bare clone and worktree add work inside"
expect_no_err "cordon: warning" "and nothing of theirs is moved aside"
[[ -z $(find "$WORK/p" -name '*.cordon-unsafe*') ]] && ok "no .cordon-unsafe file is left" || not_ok "$(find "$WORK/p" -name '*.cordon-unsafe*')"
[[ $(git -C cloned log --format=%s -1) == two && $(git -C .wt/side log --format=%s -1) == side ]] &&
  ok "the clone and the worktree work on the host" || not_ok "host: $(git -C cloned log --oneline -1) / $(git -C .wt/side log --oneline -1)"
host_git_runs_nothing "after ordinary work" "$WORK/p/cloned"
# 10. A run killed (SIGKILL) before it could judge: the next run in the workdir judges what the
#     killed one changed.
fresh_project
"$CORDON" -- /bin/sh -c "$GUARD; $MK; mk killed && ${G[*]} -C killed config core.fsmonitor $evil && touch planted; sleep 60" \
  >/dev/null 2>&1 </dev/null &
pid=$!
for ((i = 0; i < 100; i++)); do [[ -e planted ]] && break; sleep 0.1; done
kill -KILL "$pid"; wait "$pid" 2>/dev/null
[[ -e planted ]] && ok "the first run planted its repository, and was killed" || not_ok "the first run did not plant"
rm -f planted
sleep 0.2
jailed "true"
quarantined "a killed run's repository, judged by the next run" "killed/.git/config"
host_git_runs_nothing "a killed run's repository" "$WORK/p/killed"
jailed "true"
expect_no_err "cordon: warning" "and the run after that finds nothing more to judge"

# 11. A directory the command made unreadable to hide a repository in it is read all the same.
fresh_project
jailed "$MK; mk hid/r && ${G[*]} -C hid/r config core.fsmonitor $evil && chmod 0100 hid"
chmod 0755 hid 2>/dev/null
quarantined "a repository in a directory made unreadable" "hid/r/.git/config"
host_git_runs_nothing "a repository in a directory made unreadable" "$WORK/p/hid/r"
# 12. Runs in parallel in one project: three clone, one plants; each judges what changed.
fresh_project
"${G[@]}" init -q --bare "$SCRATCH/par.git" && "${G[@]}" push -q "$SCRATCH/par.git" HEAD:refs/heads/main 2>/dev/null
pids=()
for k in 1 2 3; do
  "$CORDON" --ro "$SCRATCH" -- /bin/sh -c "$GUARD; ${G[*]} clone -q $SCRATCH/par.git c$k && echo ok > c$k.done" >"$OUT/par$k" 2>&1 </dev/null &
  pids+=($!)
done
"$CORDON" -- /bin/sh -c "$GUARD; $MK; mk evilpar && ${G[*]} -C evilpar config core.fsmonitor $evil" >"$OUT/par4" 2>&1 </dev/null &
pids+=($!)
for p in "${pids[@]}"; do wait "$p"; done
[[ -e c1.done && -e c2.done && -e c3.done ]] && ok "parallel runs: the three clones work" || not_ok "parallel: $(cat "$OUT"/par[123])"
[[ -e evilpar/.git/config.cordon-unsafe && ! -e evilpar/.git/config ]] && ok "parallel runs: the planted config is moved aside" ||
  not_ok "parallel: evilpar: $(ls evilpar/.git)"
[[ -z $(find c1 c2 c3 -name '*.cordon-unsafe*') ]] && ok "parallel runs: nothing of the clones is moved aside" ||
  not_ok "parallel: $(find c1 c2 c3 -name '*.cordon-unsafe*')"
host_git_runs_nothing "parallel runs" "$WORK/p/evilpar"
# 14. The user's own submodule, its .git file from before the run (git writes it with an
#     absolute path for --separate-git-dir), and the run turns a directory on the way into a
#     symlink to a repository outside: the .git file is moved aside.
fresh_project
mkdir -p "$SCRATCH/mods/sub" && "${G[@]}" init -q --bare "$SCRATCH/mods/sub" && "${G[@]}" -C "$SCRATCH/mods/sub" config core.bare false &&
  "${G[@]}" -C "$SCRATCH/mods/sub" config core.fsmonitor "$evil"
"${G[@]}" init -q own && mkdir -p own/.git/modules && "${G[@]}" init -q --separate-git-dir=own/.git/modules/sub own/sub
sleep 0.2
jailed "mv own/.git/modules own/.git/modules.old && ln -s $SCRATCH/mods own/.git/modules && echo turned"
expect_out "^turned$" "a directory on the way of the user's .git file becomes a symlink"
quarantined "a symlink on the way of a .git file from before" "own/sub/.git"
host_git_runs_nothing "a symlink on the way of a .git file from before" "$WORK/p/own/sub"
# 15. Two runs at once: run A plants sub/ with an fsmonitor and goes on; run B, started
#     meanwhile (sub/ looks older than B to B), writes another unsafe config there once A has
#     moved its own aside. B moves that aside too, and never puts A's back as "from before".
fresh_project
"$CORDON" -- /bin/sh -c "$MK; mk sub && ${G[*]} -C sub config core.fsmonitor $evil && sleep 3" >"$OUT/a.out" 2>"$OUT/a.err" &
apid=$!
sleep 1.2
jailed "i=0; while [ ! -e sub/.git/config.cordon-unsafe ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i+1)); done
  printf '[alias]\n\tx = y\n' > sub/.git/config && echo wrote"
wait $apid
expect_out "^wrote$" "two runs at once: B writes a config where A's was moved aside"
expect_err "sub/.git/config, left by the command, .*not put back: it changed while another run" \
  "two runs at once: B says why nothing is put back"
! grep -qs fsmonitor sub/.git/config && ok "two runs at once: A's planted config is not put back" ||
  not_ok "two runs at once: sub/.git/config: $(cat sub/.git/config)"
host_git_runs_nothing "two runs at once" "$WORK/p/sub"
# 16. The user's own .git/config includes files of the project (include.path, includeIf), a
#     common pattern: what the run writes there is judged as a config.
fresh_project
git config include.path ../.gitconfig && git config 'includeIf.gitdir:/.path' ../ci/gitconfig && mkdir ci
sleep 0.2
jailed "printf '[core]\n\tfsmonitor = $evil\n' > .gitconfig && printf '[core]\n\tfsmonitor = $evil\n' > ci/gitconfig && echo wrote"
expect_out "^wrote$" "the command writes the files .git/config includes"
quarantined "an included file" ".gitconfig"
quarantined "an included file" "ci/gitconfig"
expect_err "^cordon: warning: \.gitconfig, left by the command, is included by \.git/config \(include\.path, line [0-9]+\)" \
  "the warning names the config that includes it"
[[ $(git config include.path) == ../.gitconfig ]] && ok "the user's .git/config stays" || not_ok "config: $(cat .git/config)"
host_git_runs_nothing "an included file" "$WORK/p"
# 17. Copies of configs from before are bounded (cordon(1), BOUNDS): 100 repositories whose
#     configs are hard links to one file of 1 MB of comments keep the next run's supervisor small.
if [[ -x /usr/bin/time ]]; then
  fresh_project
  yes "# a comment of the user's, to make the config large" | head -c 1000000 > big.cfg
  for i in $(seq 100); do
    mkdir -p "r$i/.git/objects" "r$i/.git/refs" && echo 'ref: refs/heads/main' > "r$i/.git/HEAD" && ln big.cfg "r$i/.git/config"
  done
  sleep 0.2
  /usr/bin/time -f %M -o "$OUT/rss" "$CORDON" -- true >"$OUT/out" 2>"$OUT/err"
  rss=$(tail -1 "$OUT/rss")
  max=65536
  [[ -n ${CORDON_SANITIZE:-} ]] && max=$((768 * 1024))  # a sanitizer build's shadow memory (t_supervisor_bounds)
  [[ $rss =~ ^[0-9]+$ && $rss -lt $max ]] && ok "100 repositories of 1 MB configs: the supervisor's peak RSS is ${rss} KiB" ||
    not_ok "peak RSS with 100 large configs: ${rss} KiB (want < $max KiB)"
else
  echo "# skip: /usr/bin/time is not installed"
fi
# 18. A rebase the command paused in the project's own repository, with an exec line added to
#     its todo list: the host's `git rebase --continue` would run it. The todo goes aside.
fresh_project
echo b > a && "${G[@]}" commit -qam two
sleep 0.2
jailed "GIT_SEQUENCE_EDITOR=\"sed -i '1i break'\" ${G[*]} rebase -q -i HEAD~1 >/dev/null 2>&1;
  printf 'exec $evil\n' >> .git/rebase-merge/git-rebase-todo && echo paused"
expect_out "^paused$" "the command pauses a rebase and adds an exec line"
quarantined "a rebase's todo list" ".git/rebase-merge/git-rebase-todo"
# continue_runs_nothing DESCRIPTION: the host's `git rebase --continue` runs no planted exec line.
continue_runs_nothing() {
  rm -f "$marker"
  (GIT_EDITOR=true "${G[@]}" rebase --continue >/dev/null 2>&1; true)
  [[ ! -e $marker ]] && ok "$1: the host's git rebase --continue runs nothing planted" ||
    not_ok "$1: git rebase --continue ran the planted exec"
}
continue_runs_nothing "a rebase's todo list"
expect_err "on --continue \(to go on: read it, then move it back; or git rebase --abort\)" \
  "the warning says how to go on from the paused rebase"
"${G[@]}" rebase --abort >/dev/null 2>&1 && [[ ! -d .git/rebase-merge ]] &&
  ok "and the host's git rebase --abort ends it" || not_ok "git rebase --abort: $(ls .git)"
# 18b. The same in two runs: the first moves the paused rebase's state aside with an exec line
#      (it is no todo list there), the second moves it back. Its files keep their times; the
#      directory moved in is what the run changed.
fresh_project
echo b > a && "${G[@]}" commit -qam two
(GIT_SEQUENCE_EDITOR="sed -i '1i break'" "${G[@]}" rebase -q -i HEAD~1 >/dev/null 2>&1; true)
sleep 0.2
jailed "cp -a .git/rebase-merge .git/aside && printf 'exec $evil\n' >> .git/aside/git-rebase-todo &&
  rm -rf .git/rebase-merge && echo moved-aside"
expect_out "^moved-aside$" "two runs: the first moves the rebase's state aside with an exec line"
sleep 0.2
jailed "mv .git/aside .git/rebase-merge && echo moved-back"
expect_out "^moved-back$" "two runs: the second moves it back"
quarantined "a todo list moved back by a later run" ".git/rebase-merge/git-rebase-todo"
continue_runs_nothing "a todo list moved back"
# 13. The Landlock jail (--isolation landlock) is judged the same way. (Its workdir's top takes
#     no new entries there, so the repository goes into an existing directory.)
fresh_project
mkdir src
sleep 0.2
# The Landlock jail's guard (t_isolation's): no pid 1 of ours, but no_new_privs, a seccomp
# filter, no capabilities, and a /proc/self/comm it cannot write.
LLGUARD='grep -q "^NoNewPrivs:[[:space:]]*1" /proc/self/status && grep -q "^Seccomp:[[:space:]]*2" /proc/self/status && grep -q "^CapEff:[[:space:]]*0000000000000000" /proc/self/status && ! (echo x > /proc/self/comm) 2>/dev/null || exit 99'
run "$CORDON" --isolation landlock -- /bin/sh -c "$LLGUARD; $MK; mk src/ll && ${G[*]} -C src/ll config core.fsmonitor $evil && echo planted"
if [[ $rc -eq 99 ]]; then
  echo "Bail out! the Landlock jail is not working (guard failed)"
  finish
  exit 1
elif [[ $rc -eq 125 ]] && grep -q "Landlock" "$OUT/err"; then
  echo "# skip: --isolation landlock does not run here: $(head -1 "$OUT/err")"
else
  expect_out "^planted$" "landlock: a repository is planted in src/"
  quarantined "landlock jail" "src/ll/.git/config"
  host_git_runs_nothing "landlock jail" "$WORK/p/src/ll"
fi
finish

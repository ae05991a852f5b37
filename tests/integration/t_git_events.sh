#!/usr/bin/env bash
# RepoWatch across runs (issue 24): whichever way cordon learns what a run changed (fanotify
# events for root on the host, the walk for others: cordon(1), WHAT THE JAIL MAY LEAVE BEHIND),
# a warm run in a workdir judges what the first did not see, and what breaks the events' view
# (a symlink made in the run, more events than the queue holds, the host writing all along, a
# file system mounted below the workdir) falls back to the walk rather than to trust. Each
# project holds more directories than are read whole before each run (256).
source "$TESTLIB"

marker="$SCRATCH/git-ran"
G=(git -c user.name=t -c user.email=t@t -c init.defaultBranch=main)
evil="$SCRATCH/evil.sh"
printf '#!/bin/sh\ntouch %s\n' "$marker" > "$evil" && chmod +x "$evil"
host_git_runs_nothing() {  # DESCRIPTION DIR
  rm -f "$marker"
  (cd "$2" && { git status; git diff; git log -1; git -c user.name=t -c user.email=t@t commit -q --allow-empty -m host; } >/dev/null 2>&1; true)
  [[ ! -e $marker ]] && ok "$1: the host's git runs nothing planted" || not_ok "$1: the host's git ran the planted command"
}
moved() {  # DESCRIPTION PATH: PATH was moved aside, with a warning
  [[ -e $WORK/p/$2.cordon-unsafe || -L $WORK/p/$2.cordon-unsafe ]] && ok "$1: $2 is moved aside" ||
    not_ok "$1: $2 not moved: $(ls -la "$WORK/p/$(dirname "$2")" 2>&1 | head -12)"
  expect_err "^cordon: warning: $2, left by the command" "$1: a warning names $2"
}
# How cordon learns what a run changed, past the first run in a large project: fanotify's events
# as root, the watcher's (a process of the user's that keeps inotify watches) otherwise.
if [[ $(id -u) -eq 0 ]]; then expected_mode=events; else expected_mode=watcher; fi
judged_by() {  # the way the last run (jailed) was judged, from its --status-json
  sed -n 's/.*"repo_watch":"\([a-z]*\)".*/\1/p' "$SCRATCH/status.json" 2>/dev/null
}
# until_watched: runs until one is judged as expected (the watcher reads the tree first).
until_watched() {
  local tries=0
  while ((tries++ < 100)); do
    jailed "true" --status-json "$SCRATCH/status.json"
    [[ $(judged_by) == "$expected_mode" ]] && return 0
    sleep 0.1
  done
  return 1
}
fresh_project() {
  rm -rf "$WORK/p" && mkdir -p "$WORK/p" && cd "$WORK/p"
  "${G[@]}" init -q . && echo a > a && "${G[@]}" add a && "${G[@]}" commit -qm one
  # More directories than cordon reads before each run (256: the events are used past that).
  mkdir -p node_modules/x/y node_modules/p{1..1100} && "${G[@]}" init -q own && "${G[@]}" -C own config core.pager cat &&
    printf '#!/bin/sh\nexit 0\n' > own/.git/hooks/pre-commit && chmod +x own/.git/hooks/pre-commit
  sleep 0.2
  jailed "echo first"  # the first run in the workdir: the tree is read once
  expect_out "^first$" "a first run in the project"
  until_watched || not_ok "the next runs are not judged by $expected_mode events (last: $(judged_by))"
  sleep 0.2
}

# 1. A warm run: the user's nested repository, known from the first run, has its config put
#    back when the command plants an editor in it; its own hook stays.
fresh_project
jailed "${G[*]} -C own commit -q --allow-empty -m agent && ${G[*]} -C own config core.editor $evil && echo done"
expect_out "^done$" "warm: the command commits in the user's nested repository"
moved "warm: the user's repository" "own/.git/config"
[[ $(git -C own config core.pager) == cat && -z $(git -C own config core.editor) ]] &&
  ok "warm: the user's pager is back, the planted editor is not" || not_ok "own config: $(cat own/.git/config)"
[[ -x own/.git/hooks/pre-commit ]] && ok "warm: the user's own hook stays" || not_ok "hooks: $(ls own/.git/hooks)"

# 2. A repository the host made after the first run (no run saw it before this one), which the
#    command turns: moved aside; the user's hook in it stays.
fresh_project
"${G[@]}" init -q node_modules/x/y/late && printf '#!/bin/sh\nexit 0\n' > node_modules/x/y/late/.git/hooks/pre-push &&
  chmod +x node_modules/x/y/late/.git/hooks/pre-push
sleep 0.2
jailed "${G[*]} -C node_modules/x/y/late config core.fsmonitor $evil &&
  printf '#!/bin/sh\n$evil\n' > node_modules/x/y/late/.git/hooks/post-commit && chmod +x node_modules/x/y/late/.git/hooks/post-commit && echo done"
expect_out "^done$" "host-made: the command plants a fsmonitor and a hook"
moved "host-made repository" "node_modules/x/y/late/.git/config"
moved "host-made repository" "node_modules/x/y/late/.git/hooks/post-commit"
[[ -x node_modules/x/y/late/.git/hooks/pre-push ]] && ok "host-made: the user's own hook stays" ||
  not_ok "late hooks: $(ls node_modules/x/y/late/.git/hooks | grep -v sample)"
host_git_runs_nothing "host-made repository" "$WORK/p/node_modules/x/y/late"

# 3. A repository planted deep in a tree the first run read, and one in a directory moved in.
fresh_project
jailed "mkdir -p node_modules/x/y/z && cd node_modules/x/y/z && ${G[*]} init -q . && ${G[*]} config core.pager $evil &&
  mkdir -p $WORK/p/.stage/a/b && ${G[*]} init -q $WORK/p/.stage/a/b/r && ${G[*]} -C $WORK/p/.stage/a/b/r config core.fsmonitor $evil &&
  mv $WORK/p/.stage $WORK/p/node_modules/x/moved && echo done"
expect_out "^done$" "deep: repositories planted deep and moved in"
moved "planted deep" "node_modules/x/y/z/.git/config"
moved "moved in" "node_modules/x/moved/a/b/r/.git/config"
host_git_runs_nothing "planted deep" "$WORK/p/node_modules/x/y/z"
host_git_runs_nothing "moved in" "$WORK/p/node_modules/x/moved/a/b/r"

# 4. A .git file the host made after the first run, which the command turns by putting a
#    symlink on its way to a repository of its own.
fresh_project
"${G[@]}" init -q --bare mods/real && echo "gitdir: ../../mods/real" > node_modules/x/.git
sleep 0.2
jailed "mkdir evild && ${G[*]} init -q --bare evild/real && ${G[*]} --git-dir=evild/real config core.fsmonitor $evil &&
  mv mods mods.old && ln -s evild mods && echo done"
expect_out "^done$" "symlink: the command puts a symlink on a .git file's way"
moved "a .git file turned by a symlink" "node_modules/x/.git"
host_git_runs_nothing "a .git file turned by a symlink" "$WORK/p/node_modules/x"

# 5. More than the events may make cordon hold (changes in 33,000 directories, past its bound of
#    32,768: cordon(1), BOUNDS), or than a queue holds, with a repository planted among them.
fresh_project
jailed "mkdir many && cd many && python3 -c 'import os
for i in range(33000):
    os.mkdir(\"d%d\" % i); open(\"d%d/a\" % i, \"w\").close()' && ${G[*]} init -q d32999/r && ${G[*]} -C d32999/r config core.pager $evil && echo done"
expect_out "^done$" "flood: 33,000 directories written and a planted repository"
moved "flood" "many/d32999/r/.git/config"

# 6. The host writes to the file system all along: the run still ends, and what it planted is
#    still found.
fresh_project
( end=$((SECONDS + 30)); while ((SECONDS < end)) && [[ ! -e $SCRATCH/stop ]]; do echo x >> "$SCRATCH/busy"; done ) &
writer=$!
jailed "sleep 0.3 && ${G[*]} init -q w && ${G[*]} -C w config core.pager $evil && echo done"
touch "$SCRATCH/stop"
wait "$writer" 2>/dev/null || true
expect_out "^done$" "busy host: the run ends while the host writes"
moved "busy host" "w/.git/config"

# A config rewritten in place through a shared mapping (no write(2), so no FAN_MODIFY): the
# python run in the jail. The file needs room for the new text (a long comment).
mmap_plant="python3 -c 'import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR); n = os.fstat(fd).st_size; m = mmap.mmap(fd, n)
t = b\"[core]\\n\\tfsmonitor = $evil\\n\"; m[:n] = t + b\"#\" * (n - len(t) - 1) + b\"\\n\"; m.close()'"
padded() { printf '# %0200d\n' 0 >> "$1"; }

# 8. A repository a run made, rewritten through a mapping in the next, its directory written in
#    (so that its events list it) and then moved: what was moved in is read whole.
fresh_project
jailed "${G[*]} init -q node_modules/p40/r && printf '# %0200d\n' 0 >> node_modules/p40/r/.git/config && echo done"
expect_out "^done$" "moved after a write: a first run makes a harmless repository"
sleep 0.2
jailed "$mmap_plant node_modules/p40/r/.git/config && touch node_modules/p40/x && mv node_modules/p40 node_modules/p41/B && echo done"
expect_out "^done$" "moved after a write: the config rewritten through a mapping, its directory moved"
moved "moved after a write" "node_modules/p41/B/r/.git/config"
host_git_runs_nothing "moved after a write" "$WORK/p/node_modules/p41/B/r"

# 9. A repository the host made since the last run, its config rewritten through a mapping and
#    nothing else touched (the file's close names it), and two whose configs the command writes
#    through a hard link it made elsewhere (one link kept, one removed after).
fresh_project
"${G[@]}" init -q node_modules/p7/late && padded node_modules/p7/late/.git/config
"${G[@]}" init -q node_modules/p8/late && "${G[@]}" init -q node_modules/p9/late
sleep 0.2
jailed "$mmap_plant node_modules/p7/late/.git/config && ln node_modules/p8/late/.git/config linked &&
  printf '[core]\n\tpager = $evil\n' >> linked && ln node_modules/p9/late/.git/config gone &&
  printf '[core]\n\tpager = $evil\n' >> gone && rm gone && echo done"
expect_out "^done$" "host-made, mapped or linked: the configs planted"
moved "host-made, mapped" "node_modules/p7/late/.git/config"
moved "host-made, linked" "node_modules/p8/late/.git/config"
moved "host-made, linked and unlinked" "node_modules/p9/late/.git/config"
host_git_runs_nothing "host-made, mapped" "$WORK/p/node_modules/p7/late"
host_git_runs_nothing "host-made, linked" "$WORK/p/node_modules/p8/late"
host_git_runs_nothing "host-made, linked and unlinked" "$WORK/p/node_modules/p9/late"

# 10. The first run in a large workdir (the walk before the run cannot reach the end in time):
#     the user's own repository, in a directory the walk reads last, rewritten through a mapping
#     in that run, is judged in it, and the next run does not take it as the user's.
rm -rf "$WORK/p" && mkdir -p "$WORK/p" && cd "$WORK/p" && "${G[@]}" init -q . && mkdir -p node_modules &&
  (cd node_modules && seq -f p%g 1 20000 | xargs mkdir)
for c in vendor lib src tools docs a b c d e f g h i j k; do  # the first listed: the walk's stack reads it last
  mkdir "$c" && [[ $(ls -f | grep -vx -e . -e .. -e .git | head -1) == "$c" ]] && break
  rmdir "$c"
done
"${G[@]}" init -q "$c/u" && padded "$c/u/.git/config"
sleep 0.2
jailed "$mmap_plant $c/u/.git/config && echo done"
expect_out "^done$" "cold, large: the user's config rewritten through a mapping in the first run"
moved "cold, large" "$c/u/.git/config"
host_git_runs_nothing "cold, large" "$WORK/p/$c/u"

# 11. Repositories the host made after the last run, one with its config a symlink to a file
#     elsewhere in the workdir, one including such a file; the command rewrites only those files
#     (git reads them as the configs): judged as files the configs include, in a small project
#     (the walk) and in a large one (the events, which name nothing in those repositories).
for size in small large; do
  if [[ $size == large ]]; then fresh_project; else
    rm -rf "$WORK/p" && mkdir -p "$WORK/p" && cd "$WORK/p" && "${G[@]}" init -q . && jailed "echo first"; fi
  mkdir -p shared && "${G[@]}" init -q linkrepo && mv linkrepo/.git/config shared/linked.cfg &&
    ln -s ../../shared/linked.cfg linkrepo/.git/config
  : > shared/inc.cfg && "${G[@]}" init -q increpo && "${G[@]}" -C increpo config include.path ../../shared/inc.cfg
  sleep 0.2
  jailed "printf '[core]\n\tfsmonitor = $evil\n' >> shared/linked.cfg && printf '[core]\n\tpager = $evil\n' >> shared/inc.cfg && echo done"
  expect_out "^done$" "$size, host-made: the files its configs lead to rewritten"
  moved "$size, symlinked config" "shared/linked.cfg"
  moved "$size, included config" "shared/inc.cfg"
  host_git_runs_nothing "$size, symlinked config" "$WORK/p/linkrepo"
  host_git_runs_nothing "$size, included config" "$WORK/p/increpo"
done

# 12. A repository the host made after the last run whose common directory (commondir: its
#     config, hooks, objects and refs) lies elsewhere in the workdir, with no HEAD of its own:
#     the command adds a hook there that reads as a harmless config too.
fresh_project
"${G[@]}" init -q h && "${G[@]}" -C h commit -q --allow-empty -m one && mkdir common &&
  mv h/.git/objects h/.git/refs h/.git/config h/.git/hooks common/ && echo ../../common > h/.git/commondir
sleep 0.2
jailed "printf '#!/bin/sh\n[core]\nabbrev=7;$evil\n' > common/hooks/pre-commit && chmod +x common/hooks/pre-commit && echo done"
expect_out "^done$" "common dir: a hook that reads as a config too"
moved "common dir" "common/hooks/pre-commit"
host_git_runs_nothing "common dir" "$WORK/p/h"

# 13. The watcher (not root: root has fanotify). Its view follows the host: a directory the host
#     renamed since the last run, with a repository in it, is where the command plants. A run whose
#     watcher is killed while it goes on walks instead, and finds what it planted; a workdir
#     removed ends its watcher.
if [[ $expected_mode == watcher ]]; then
  watcher_pid() {  # the watcher of $WORK/p, by its command line
    local f
    for f in /proc/[0-9]*/cmdline; do
      [[ $(tr '\0' ' ' < "$f" 2>/dev/null) == "cordon-repowatch $WORK/p "* ]] && { f=${f#/proc/}; echo "${f%/cmdline}"; return; }
    done
  }
  # A hook that reads as a harmless config too: no file the run writes reads as unsafe, so only
  # the watcher's view can find it (no walk). hook_into REPO, plant_hook REPO (made first): the
  # commands that plant it.
  hook='#!/bin/sh\n[core]\nabbrev=7;'"$evil"'\n'
  hook_into() { echo "printf '$hook' > $1/.git/hooks/post-commit && chmod +x $1/.git/hooks/post-commit"; }
  plant_hook() { echo "${G[*]} init -q $1 && $(hook_into "$1")"; }
  # hooks_everywhere DESCRIPTION N FORMAT: a run plants a repository at each printf FORMAT of
  # 1..N, judged by the watcher, and every hook is moved aside.
  hooks_everywhere() {
    local desc=$1 n=$2 format=$3 script="" i missed=0
    for i in $(seq "$n"); do script+="$(plant_hook "$(printf "$format" "$i")") && "; done
    jailed "$script echo done" --status-json "$SCRATCH/status.json"
    expect_out "^done$" "watcher, $desc: a repository planted in each of $n in the next run"
    [[ $(judged_by) == watcher ]] && ok "watcher, $desc: that run was judged by its events" ||
      not_ok "$desc: judged by $(judged_by)"
    for i in $(seq "$n"); do
      [[ -e $(printf "$format" "$i")/.git/hooks/post-commit.cordon-unsafe ]] || missed=$((missed + 1))
    done
    ((missed == 0)) && ok "watcher, $desc: all $n planted hooks are moved aside" ||
      not_ok "$desc: $missed of $n hooks not moved aside"
  }
  fresh_project
  [[ -n $(watcher_pid) ]] && ok "watcher: one runs for the project" || not_ok "watcher: none runs"
  mv node_modules/p3 node_modules/renamed && "${G[@]}" init -q node_modules/renamed/r
  sleep 0.2
  jailed "$(hook_into node_modules/renamed/r) && echo done" --status-json "$SCRATCH/status.json"
  expect_out "^done$" "watcher: the command plants in a directory the host renamed"
  [[ $(judged_by) == watcher ]] && ok "watcher: the run was judged by its events" || not_ok "watcher: judged by $(judged_by)"
  moved "watcher, renamed by the host" "node_modules/renamed/r/.git/hooks/post-commit"
  host_git_runs_nothing "watcher, renamed by the host" "$WORK/p/node_modules/renamed/r"
  pid=$(watcher_pid)
  jailed "${G[*]} init -q node_modules/p9/k && ${G[*]} -C node_modules/p9/k config core.pager $evil && sleep 1 && echo done" \
    --status-json "$SCRATCH/status.json" &
  jail=$!
  sleep 0.5
  [[ -n $pid ]] && kill -KILL "$pid"
  wait "$jail" || true
  [[ $(judged_by) == walk ]] && ok "watcher killed mid-run: the run walks" || not_ok "watcher killed: judged by $(judged_by)"
  [[ -e node_modules/p9/k/.git/config.cordon-unsafe ]] && ok "watcher killed mid-run: the planted config is moved aside" ||
    not_ok "watcher killed: $(ls node_modules/p9/k/.git)"
  host_git_runs_nothing "watcher killed mid-run" "$WORK/p/node_modules/p9/k"
  until_watched && ok "watcher killed: a new one serves the next runs" || not_ok "watcher killed: no new one"
  # Blind spots the attack found (each made the watcher miss a directory, which every later run
  # trusted): a directory its owner cannot read (inotify needs read), one that is so only for a
  # moment, one whose path from the workdir passes PATH_MAX, and directories made just before
  # their parents are renamed, under a flood.
  jailed "python3 -c 'import os; os.mkdir(\"unread\", 0o300)' && $(plant_hook unread/r) && echo done" --status-json "$SCRATCH/status.json"
  expect_out "^done$" "watcher: a repository planted in a directory its owner cannot read"
  moved "watcher, unreadable directory" "unread/r/.git/hooks/post-commit"
  jailed "python3 -c 'import os; os.mkdir(\"brief\", 0o300)' && sleep 0.5 && chmod 755 brief && echo done"
  until_watched || true
  jailed "$(plant_hook brief/r) && echo done" --status-json "$SCRATCH/status.json"
  expect_out "^done$" "watcher: planted in a directory unreadable for a moment in the last run"
  moved "watcher, once unreadable" "brief/r/.git/hooks/post-commit"
  until_watched || true
  jailed "python3 -c '
import os, time
d = os.open(\".\", os.O_RDONLY)
os.mkdir(\"long\", dir_fd=d); d = os.open(\"long\", os.O_RDONLY, dir_fd=d)
for i in range(41):
    os.mkdir(\"n\" * 100, dir_fd=d); d = os.open(\"n\" * 100, os.O_RDONLY, dir_fd=d)
os.mkdir(\"P\", dir_fd=d); time.sleep(0.5)
os.mkdir(\"P/\" + \"D\" * 20, dir_fd=d)
os.mkdir(\"deep\"); os.rename(\"P\", \"../\" * 0 + \"P\", src_dir_fd=d, dst_dir_fd=os.open(\"deep\", os.O_RDONLY))
' && echo done"
  expect_out "^done$" "watcher: a directory made past PATH_MAX, then moved up"
  until_watched || true
  jailed "$(plant_hook deep/P/DDDDDDDDDDDDDDDDDDDD/r) && echo done" --status-json "$SCRATCH/status.json"
  expect_out "^done$" "watcher: planted in it in the next run"
  [[ $(judged_by) == watcher ]] && ok "watcher: that run was judged by its events" || not_ok "past PATH_MAX: judged by $(judged_by)"
  moved "watcher, made past PATH_MAX" "deep/P/DDDDDDDDDDDDDDDDDDDD/r/.git/hooks/post-commit"
  mkdir race && (cd race && seq -f p%g 1 300 | xargs mkdir)
  until_watched || true
  jailed "mkdir flood && for k in 1 2 3 4 5 6; do (cd flood && mkdir \$k && cd \$k && seq -f d%g 1 2000 | xargs mkdir) & done
    cd race && for i in \$(seq 300); do mkdir p\$i/a && mv p\$i q\$i; done; wait; echo done"
  expect_out "^done$" "watcher: directories made just before their parents are renamed, under a flood"
  until_watched || true
  hooks_everywhere "after the rename race" 300 "race/q%s/a/r"
  # Two directories exchanged (renameat2 RENAME_EXCHANGE: inotify reports two moves onto names
  # that are there): the next run still finds what is planted on either side, and in the user's
  # repository that moved with them.
  mkdir -p xa/keep xb/keep && "${G[@]}" init -q xa/keep/userrepo
  until_watched || true
  jailed "python3 -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, b\"xa\", -100, b\"xb\", 2) != 0: raise OSError(ctypes.get_errno(), \"renameat2\")' && echo done"
  expect_out "^done$" "watcher: two directories exchanged"
  until_watched || true
  jailed "$(plant_hook xa/keep/evil) && $(hook_into xb/keep/userrepo) && echo done" --status-json "$SCRATCH/status.json"
  expect_out "^done$" "watcher: planted on both sides of the exchange"
  moved "watcher, after an exchange" "xa/keep/evil/.git/hooks/post-commit"
  moved "watcher, the user's repository after an exchange" "xb/keep/userrepo/.git/hooks/post-commit"
  host_git_runs_nothing "watcher, after an exchange" "$WORK/p/xb/keep/userrepo"
  # What cordon moved aside stays as it was moved: a common directory judged strictly in every
  # run does not rename its quarantined hook again.
  "${G[@]}" init -q cw && mkdir cwc && mv cw/.git/objects cw/.git/refs cw/.git/config cw/.git/hooks cwc/ &&
    echo ../../cwc > cw/.git/commondir
  jailed "printf '#!/bin/sh\n$evil\n' > cwc/hooks/pre-commit && chmod +x cwc/hooks/pre-commit && echo done"
  moved "watcher, a common directory's hook" "cwc/hooks/pre-commit"
  jailed "true" && jailed "true"
  [[ -z $(ls cwc/hooks | grep -F '.cordon-unsafe.cordon-unsafe') ]] && ok "a hook moved aside is not moved again in later runs" ||
    not_ok "moved again: $(ls cwc/hooks | grep -v sample)"
  # A directory made, moved away at once and replaced by another that is removed again (the
  # watcher opens a made directory by its path, after the event: it may find the substitute):
  # the next run's repositories in the moved ones are all found.
  mkdir sw && (cd sw && seq -f P%g 1 60 | xargs mkdir)
  until_watched || true
  jailed "cd sw && for i in \$(seq 60); do mkdir P\$i/N && mv P\$i/N P\$i/M && mkdir P\$i/N && rmdir P\$i/N; done; echo done"
  expect_out "^done$" "watcher: directories made, moved at once, their names made and removed again"
  until_watched || true
  hooks_everywhere "after the swaps" 60 "sw/P%s/M/r"
  # A run that writes ordinary files (a source file, a ref) is judged by the watcher, not walked.
  jailed "echo hello > notes.txt && mkdir -p build && echo 0123456789abcdef0123456789abcdef01234567 > build/ref && echo done" \
    --status-json "$SCRATCH/status.json"
  expect_out "^done$" "watcher: a run that writes ordinary files"
  [[ $(judged_by) == watcher ]] && ok "watcher: ordinary files need no walk" || not_ok "ordinary files: judged by $(judged_by)"
  pid=$(watcher_pid)
  cd "$WORK" && rm -rf "$WORK/p"
  for _ in $(seq 50); do [[ -d /proc/$pid ]] || break; sleep 0.1; done
  [[ ! -d /proc/$pid ]] && ok "watcher: it ends with its workdir" || not_ok "watcher: $pid outlived its workdir"
else
  echo "# [$RUN_AS] the watcher: root watches with fanotify instead (13 is for users)"
fi

# 7. A file system mounted below the workdir (root only: mounts): what is planted in it is found.
if [[ $(id -u) -eq 0 ]]; then
  fresh_project
  mkdir -p mnt && mount -t tmpfs cordon-test mnt
  jailed "${G[*]} init -q mnt/r && ${G[*]} -C mnt/r config core.pager $evil && echo done"
  expect_out "^done$" "mount below: a repository planted in a tmpfs below the workdir"
  moved "mount below" "mnt/r/.git/config"
  umount mnt
else
  echo "# [$RUN_AS] a file system mounted below the workdir: a root-only case (the user cannot mount one)"
fi

finish

#!/usr/bin/env bash
# Where users stumble (issue 28): a project they cannot write, messages that name the file,
# line and value, git's protected config explained, one denial printed once.
source "$TESTLIB"

# A project the caller can read but not write runs read-only, with one note. As root: a
# read-only bind of it (in a mount namespace of the test's own); as the user: mode 0555.
proj="$SCRATCH/readonly-project"
mkdir -p "$proj" && echo hello > "$proj/index.txt" && git -C "$proj" init -q
ro_run() {
  pushd "$proj" >/dev/null
  if [[ $(id -u) -eq 0 ]]; then
    run unshare -m sh -c 'mount --bind -o ro "$1" "$1" && cd "$1" && shift && exec "$@"' sh "$proj" "$CORDON" -- "$@"
  else
    chmod 0555 "$proj"
    run "$CORDON" -- "$@"
    chmod 0755 "$proj"
  fi
  popd >/dev/null
}
ro_run /bin/sh -c "$GUARD; cat index.txt; touch new 2>/dev/null || echo no-write"
[[ $(cat "$OUT/out") == *hello* ]] && ok "an unwritable project runs: its files are readable" ||
  not_ok "an unwritable project runs: $(cat "$OUT/err")"
expect_out "no-write" "and it is shared read-only"
expect_err "note: the workdir .*readonly-project (is not writable by you|is on a read-only file system): it is shared read-only" \
  "one note says why it is read-only"
[[ $(grep -c "cordon: " "$OUT/err") -eq 1 ]] && ok "and that note is the only message" ||
  not_ok "more than the note: $(cat "$OUT/err")"
[[ -e $proj/new || -e $proj/.claude ]] && not_ok "the read-only project was written" ||
  ok "nothing was made in the read-only project"

# A read-only workdir with a --rw path below it: where that makes it writable, the protected
# paths apply as in a writable workdir (git config and hooks stay read-only), and RepoWatch
# watches. As root, .git is a writable mount below the read-only one.
ro_rw_run() {
  pushd "$proj" >/dev/null
  if [[ $(id -u) -eq 0 ]]; then
    run unshare -m sh -c 'mount --bind -o ro "$1" "$1" && mount --bind "$1/.git" "$1/.git" &&
      mount -o remount,bind,rw "$1/.git" && cd "$1" && shift && exec "$@"' sh "$proj" "$CORDON" --rw .git -- "$@"
  else
    chmod 0555 "$proj"
    run "$CORDON" --rw .git -- "$@"
    chmod 0755 "$proj"
  fi
  popd >/dev/null
}
ro_rw_run /bin/sh -c "$GUARD; git config core.fsmonitor 'echo planted' 2>/dev/null && echo CONFIG-WRITTEN
  echo x > .git/hooks/pre-commit 2>/dev/null && echo HOOK-WRITTEN; echo x > .git/scratch && echo git-dir-writable"
expect_out "git-dir-writable" "--rw .git in a read-only workdir makes .git writable"
expect_no_out "CONFIG-WRITTEN" "but .git/config stays protected"
expect_no_out "HOOK-WRITTEN" "and .git/hooks too"
[[ -z $(git -C "$proj" config core.fsmonitor) && ! -e $proj/.git/hooks/pre-commit ]] &&
  ok "nothing was planted for the host's git" || not_ok "planted: $(git -C "$proj" config core.fsmonitor)"
rm -f "$proj/.git/scratch"

# The same through another spelling of .git (a symlink to the workdir): compared by identity.
if [[ $(id -u) -ne 0 ]]; then
  ln -sfn "$proj" "$SCRATCH/proj-alias"
  chmod 0555 "$proj"
  pushd "$proj" >/dev/null
  run "$CORDON" --bind "$SCRATCH/proj-alias/.git" /tmp/g -- /bin/sh -c "$GUARD; git -C /tmp/g config core.fsmonitor 'echo planted' 2>/dev/null && echo CONFIG-WRITTEN"
  popd >/dev/null
  chmod 0755 "$proj"
  expect_no_out "CONFIG-WRITTEN" "a writable bind of .git through a symlink keeps .git/config protected"
  [[ -z $(git -C "$proj" config core.fsmonitor) ]] && ok "and nothing was planted" || not_ok "planted through the alias"
fi

# --status-json PATH is opened before the command runs: replacing the path with a symlink or a
# FIFO changes neither another file nor how cordon ends.
echo ORIGINAL > "$SCRATCH/victim"
run "$CORDON" --status-json "$WORK/st.json" -- /bin/sh -c "rm -f st.json; ln -s $SCRATCH/victim st.json"
[[ $(cat "$SCRATCH/victim") == ORIGINAL ]] && ok "a status path swapped for a symlink does not write through it" ||
  not_ok "the status went through the symlink: $(head -c 80 "$SCRATCH/victim")"
rm -f "$WORK/st.json"
run timeout 60 "$CORDON" --status-json "$WORK/st2.json" -- /bin/sh -c 'rm -f st2.json; mkfifo st2.json'
[[ $rc -eq 0 ]] && ok "a status path swapped for a FIFO does not hang cordon" || not_ok "exit $rc"
rm -f "$WORK/st2.json"

# A profile with several errors: each named with file:line:column, in the file's order.
cat > "$SCRATCH/bad.toml" <<'EOF'
net = "hots"
memory = "lots"
bogus = 1
isolation = "landlok"
allow-host = ["registry.example.invalid", "http://foo.invalid"]
EOF
expect_exit 125 "a profile with five errors is refused" "$CORDON" -p "$SCRATCH/bad.toml" -- true
expect_err "bad.toml:1:7: 'net': invalid value 'hots': expected none or host \(did you mean 'host'\?\)" \
  "net = \"hots\" is named with its file and line"
expect_err "bad.toml:2:10: 'memory': invalid size 'lots'" "the second error too"
expect_err "bad.toml:3:1: unknown key 'bogus'" "the third too"
expect_err "bad.toml:4:13: 'isolation': invalid value 'landlok'.*did you mean 'landlock'" "the fourth"
expect_err "bad.toml:5:43: 'allow-host': invalid value 'http://foo.invalid': a URL, not a host" \
  "and the fifth, an allow-host entry checked with the rest"
[[ $(grep -o "bad.toml:[0-9]*" "$OUT/err" | tr '\n' ' ') == "bad.toml:1 bad.toml:2 bad.toml:3 bad.toml:4 bad.toml:5 " ]] &&
  ok "in the file's order" || not_ok "not in the file's order: $(cat "$OUT/err")"
printf 'cpus = "many"\n' > "$SCRATCH/cpus.toml"
expect_exit 125 "a bad value checked later is still located" "$CORDON" -p "$SCRATCH/cpus.toml" -- true
expect_err "cpus.toml:1:8: 'cpus': invalid value 'many'" "with the profile's file and line"
expect_exit 125 "the command line's bad value" "$CORDON" -p "$SCRATCH/cpus.toml" --cpus lots -- true
expect_err "^cordon: --cpus: invalid value 'lots'" "is named as the option, not the profile's line"

expect_exit 125 "a profile name one letter off" "$CORDON" -p npmm -- true
expect_err "profile 'npmm': not found \(did you mean 'npm'\?\)" "gets a did-you-mean"
expect_exit 125 "a profile name with two letters swapped" "$CORDON" -p gti -- true
expect_err "profile 'gti': not found \(did you mean 'git'\?\)" "gets a did-you-mean too"

expect_exit 125 "--allow-host -- is refused" "$CORDON" --allow-host -- true
expect_err "--allow-host: invalid value '--': an option, not a host" "as an option, not taken for a host"
expect_exit 125 "--allow-host with a URL is refused" "$CORDON" --allow-host https://registry.invalid/pkg -- true
expect_err "a URL, not a host: write 'registry.invalid:443'" "naming the entry it stands for"
expect_exit 125 "--allow-host http URL with a port" "$CORDON" --allow-host http://h.invalid:8080/ -- true
expect_err "write 'h.invalid:8080'" "keeps the URL's port"

# What a message echoes: never a URL's password, never a raw control character, and a bound
# on how many of a profile's errors it lists.
expect_exit 125 "--allow-host with a URL that holds a password" "$CORDON" --allow-host 'https://u:s3cr3tpw@h.invalid/' -- true
expect_no_err "s3cr3tpw" "the password is not echoed"
expect_exit 125 "a value with a newline" "$CORDON" --allow-host $'a\ncordon: fake line' -- true
[[ $(wc -l < "$OUT/err") -eq 1 ]] && expect_err 'a\\x0acordon: fake line' "the newline is shown as \\x0a, on the message's own line" ||
  not_ok "the value's newline started a line: $(cat "$OUT/err")"
for i in $(seq 1 30); do echo "bogus$i = 1"; done > "$SCRATCH/many.toml"
expect_exit 125 "a profile with 30 errors" "$CORDON" -p "$SCRATCH/many.toml" -- true
[[ $(grep -c "unknown key" "$OUT/err") -eq 21 ]] && ok "lists the first 21" || not_ok "listed $(grep -c "unknown key" "$OUT/err")"
expect_err "many.toml: \.\.\. and 9 more errors" "and counts the rest"
expect_exit 125 "-p ' '" "$CORDON" -p ' ' -- true
expect_no_err "did you mean" "a name that is near nothing gets no suggestion"

# git cannot change the protected .git/config: git says "Device or resource busy"; cordon
# says why, once, after the run. A git command that did not fail gets no note.
repo="$SCRATCH/noterepo"
git init -q "$repo"
pushd "$repo" >/dev/null
run "$CORDON" -p git -- git config user.name someone
[[ $rc -ne 0 ]] && ok "git config cannot change the protected config" || not_ok "git config succeeded inside"
expect_err "note: git config failed: .*Device or resource busy.*protected path" "and cordon says why"
run "$CORDON" -p git -- git status --short
popd >/dev/null
expect_no_err "note: git" "a git command that succeeds gets no note"

# A denial is printed once, and recorded once, though the shell tries each PATH entry that
# holds rm; the same command run twice is two denials.
run "$CORDON" --status-json "$SCRATCH/denied.json" -c 'rm -rf $UNSET_VAR/'
[[ $rc -eq 126 ]] && ok "rm -rf \$UNSET/ is denied" || not_ok "rm -rf \$UNSET/ gave $rc"
[[ $(grep -c "cordon: denied: rm -rf /" "$OUT/err") -eq 1 ]] && ok "and the denial is printed once" ||
  not_ok "denial printed $(grep -c "cordon: denied" "$OUT/err") times"
[[ $(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["denials"]))' "$SCRATCH/denied.json") -eq 1 ]] && ok "and recorded once in --status-json" ||
  not_ok "denials in the status: $(cat "$SCRATCH/denied.json")"
run "$CORDON" --status-json "$SCRATCH/denied.json" -c 'rm -rf $UNSET_VAR/; rm -rf $UNSET_VAR/'
[[ $(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["denials"]))' "$SCRATCH/denied.json") -eq 2 ]] && ok "the same command twice: two denials" ||
  not_ok "denials in the status: $(cat "$SCRATCH/denied.json")"

# HOME toolchains: the default jail shows them read-only in the private HOME, so the command
# is the same program inside as outside; a program in HOME it does not show gets a note.
mkdir -p "$HOME/.pyenv/shims" "$HOME/hiddenbin"
printf '#!/bin/sh\necho from-pyenv\n' > "$HOME/.pyenv/shims/cordon-faketool"
printf '#!/bin/sh\necho from-hidden\n' > "$HOME/hiddenbin/cordon-hiddentool"
chmod +x "$HOME/.pyenv/shims/cordon-faketool" "$HOME/hiddenbin/cordon-hiddentool"
PATH="$HOME/.pyenv/shims:$HOME/hiddenbin:$PATH" run "$CORDON" -- cordon-faketool
expect_out "^from-pyenv$" "a pyenv shim in HOME runs inside, as outside"
expect_no_err "note: 'cordon-faketool'" "and gets no note"
jailed "echo x > \$HOME/.pyenv/planted 2>/dev/null && echo WROTE; ls \$HOME/.pyenv/shims"
expect_no_out "WROTE" "the toolchain is read-only inside"
[[ ! -e $HOME/.pyenv/planted ]] && ok "nothing was planted in the host's toolchain" || not_ok "planted in ~/.pyenv"
PATH="$HOME/hiddenbin:$PATH" run "$CORDON" -- cordon-hiddentool
[[ $rc -eq 127 ]] && ok "a program in a HOME directory the jail does not show is not found inside" ||
  not_ok "hidden tool: exit $rc"
expect_err "note: 'cordon-hiddentool' is .*/hiddenbin/cordon-hiddentool on the host, in HOME, which the jail does not show.*--ro .*/hiddenbin" \
  "and a note says it is in HOME, hidden, and how to show it"
rm -rf "$HOME/.pyenv" "$HOME/hiddenbin"

# The git identity, without the rest of ~/.gitconfig.
printf '[user]\n\tname = Test Person\n\temail = test@example.invalid\n[alias]\n\tsecret = !echo leaked\n' > "$HOME/.gitconfig"
idrepo="$WORK/idrepo"
git init -q "$idrepo"
pushd "$idrepo" >/dev/null
run "$CORDON" -- /bin/sh -c 'git config user.name; git config user.email; git config alias.secret || echo no-alias
  test -e ~/.gitconfig || echo no-gitconfig
  echo a > a && git add a && git commit -qm first && git log -1 --format="author=%an <%ae>"'
popd >/dev/null
expect_out "^Test Person$" "git sees the caller's user.name"
expect_out "^test@example.invalid$" "and user.email"
expect_out "^no-alias$" "but not the rest of ~/.gitconfig"
expect_out "^no-gitconfig$" "and not the file itself"
expect_out "^author=Test Person <test@example.invalid>$" "git commit works under the default profile"
git -C "$idrepo" config user.name "Repo Local"
pushd "$idrepo" >/dev/null
run "$CORDON" -- git config user.name
popd >/dev/null
expect_out "^Repo Local$" "a repository's own user.name wins, as in git"
git -C "$idrepo" config --unset user.name
# An identity kept in an included file (include.path, includeIf gitdir:/onbranch:), as git reads
# it: what the host's git says is what the jail's commit says.
mkdir -p "$WORK/inc/team"
printf '[include]\n\tpath = ~/.gitid\n[includeIf "gitdir:%s/inc/"]\n\tpath = .gitteam\n[includeIf "onbranch:nomatch/**"]\n\tpath = .gitnever\n' "$WORK" > "$HOME/.gitconfig"
printf '[user]\n\tname = Included Person\n\temail = inc@example.invalid\n' > "$HOME/.gitid"
printf '[user]\n\temail = team@example.invalid\n' > "$HOME/.gitteam"
printf '[user]\n\tname = Never\n' > "$HOME/.gitnever"
git init -q "$WORK/inc/team/repo"
for repo in "$idrepo" "$WORK/inc/team/repo"; do
  want=$(git -C "$repo" config user.name) && want="$want <$(git -C "$repo" config user.email)>"
  pushd "$repo" >/dev/null
  run "$CORDON" -- /bin/sh -c 'echo b >> b && git add b && git commit -qm inc && git log -1 --format="author=%an <%ae>"'
  popd >/dev/null
  expect_out "^author=$want\$" "an identity through includes, as the host's git reads it ($want)"
done
# -p git shows ~/.gitconfig whole, but not the files it includes.
pushd "$idrepo" >/dev/null
run "$CORDON" -p git -- /bin/sh -c 'echo c >> c && git add c && git commit -qm inc && git log -1 --format="author=%an <%ae>"'
popd >/dev/null
expect_out "^author=Included Person <inc@example.invalid>\$" "-p git: an identity in an included file still reaches git"
rm -f "$HOME/.gitconfig" "$HOME/.gitid" "$HOME/.gitteam" "$HOME/.gitnever"

# What cordon put there to protect the workdir trips no tool: `git clean -xfd` "removes" the
# placeholders (they stay, cordon's, until the run ends), `chmod -R u+w .` succeeds where it
# changes nothing. What would change a protected path still fails, and removing anything else
# is the kernel's as before.
cleanrepo="$WORK/dev/cleanrepo"  # a "dev" in the path, as in ~/dev/project
mkdir -p "$WORK/dev"
git init -q "$cleanrepo"
mkdir "$cleanrepo/build" "$cleanrepo/full" && echo o > "$cleanrepo/build/x.o" && echo f > "$cleanrepo/full/f"
pushd "$cleanrepo" >/dev/null
for checks in auto off; do
  jailed 'git clean -xfd -e full >/dev/null && echo clean-ok; ls -A | tr "\n" " "; echo
    chmod -R u+w . && echo chmod-ok
    chmod 600 .git/config 2>/dev/null; echo cfg=$?; stat -c %a .git/config
    chmod 1777 .claude && echo ph-chmod-ok; rm -rf .vscode && echo rmrf-ok
    rmdir .git/hooks 2>/dev/null; echo hooks=$?; rmdir full 2>/dev/null; echo full=$?
    mkdir own && rmdir own && echo own-ok' --exec-checks "$checks"
  expect_out "^clean-ok$" "exec checks $checks: git clean -xfd succeeds beside the placeholders"
  expect_out "^\.claude \.codex \.git \.idea \.vscode full $" "exec checks $checks: it removed build/, and the placeholders stay"
  expect_out "^chmod-ok$" "exec checks $checks: chmod -R u+w . succeeds over the protected paths"
  expect_out "^cfg=1$" "exec checks $checks: a chmod that would change .git/config still fails"
  expect_out "^644$" "exec checks $checks: .git/config keeps its mode"
  expect_out "^ph-chmod-ok$" "exec checks $checks: a chmod of a placeholder succeeds"
  expect_out "^rmrf-ok$" "exec checks $checks: rm -rf of a placeholder succeeds"
  expect_out "^hooks=1$" "exec checks $checks: removing the protected .git/hooks still fails"
  expect_out "^full=1$" "exec checks $checks: rmdir of a non-empty directory fails as before"
  expect_out "^own-ok$" "exec checks $checks: a directory of the command's own is made and removed"
done
popd >/dev/null
# A placeholder the host filled during the run is the host's: removing it fails as the kernel says.
pushd "$cleanrepo" >/dev/null
"$CORDON" -q -- /bin/sh -c 'echo started; i=0; while [ ! -e .vscode/settings.json ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
  rmdir .vscode 2>/dev/null; echo rm=$?' >"$OUT/filled" 2>&1 &
pid=$!
for ((t = 0; t < 600; t++)); do grep -qx started "$OUT/filled" && break; sleep 0.1; done
echo '{}' > .vscode/settings.json
wait $pid
popd >/dev/null
grep -qx "rm=1" "$OUT/filled" && [[ -f $cleanrepo/.vscode/settings.json ]] &&
  ok "a placeholder the host filled meanwhile is not reported removed" || not_ok "filled placeholder: $(cat "$OUT/filled")"
rm -rf "$cleanrepo/.vscode"
[[ $(ls -A "$cleanrepo" | tr '\n' ' ') == ".git full " && $(stat -c %a "$cleanrepo/.git/config") == 644 ]] &&
  ok "after the runs: the placeholders are gone, the config unchanged, build/ removed" ||
  not_ok "after the runs: $(ls -A "$cleanrepo" | tr '\n' ' ') config $(stat -c %a "$cleanrepo/.git/config")"

# Beside the workdir: the directories the jail makes on the way to it in its private /tmp are
# read-only, so that what a command writes there (git worktree add ../wt) fails instead of
# vanishing with the run. /tmp itself and the workdir stay writable.
beside="$WORK/beside/proj"
mkdir -p "$beside" && git -C "$beside" init -q && echo a > "$beside/a" && git -C "$beside" add a &&
  git -C "$beside" -c user.name=t -c user.email=t@t commit -qm one
pushd "$beside" >/dev/null
run "$CORDON" -q -- /bin/sh -c '(echo x > ../sibling) 2>/dev/null && echo sibling-written || echo sibling-refused
  git worktree add -q ../wt >/dev/null 2>&1 && echo worktree-added || echo worktree-refused
  echo y > /tmp/in-tmp && echo tmp-ok; echo z > made && echo made-ok'
popd >/dev/null
expect_out "^sibling-refused$" "a file beside the workdir is refused, not written into the jail's /tmp"
expect_out "^worktree-refused$" "git worktree add ../wt fails instead of vanishing"
expect_out "^tmp-ok$" "the jail's /tmp is still writable"
expect_out "^made-ok$" "and the workdir"
[[ -f $beside/made && ! -e $WORK/beside/wt && ! -e $beside/.git/worktrees/wt ]] &&
  ok "on the host: the file made in the workdir, no worktree left half-made" ||
  not_ok "host: $(ls -A "$WORK/beside") / $(git -C "$beside" worktree list)"

# A package manager's or git's network command that fails in the default jail (no network)
# gets a note saying so; other failures do not. The host name is reserved (.invalid), and the
# jail has no route out anyway.
mkdir -p "$WORK/nonet" && git -C "$WORK/nonet" init -q
pushd "$WORK/nonet" >/dev/null
run "$CORDON" -- git -c core.askPass=true fetch -q https://cordon-test.invalid/r.git
expect_rc 128 "git fetch with no network fails"
expect_err "^cordon: note: git fetch failed: if it could not resolve or reach a host, that is the jail: it has no network" \
  "and a note says the jail has no network"
run "$CORDON" -- git log -1
expect_no_err "no network" "a git command that needs none gets no such note"
run "$CORDON" -- /bin/sh -c 'exit 3'
expect_no_err "no network" "nor does any other failing command"
popd >/dev/null

finish

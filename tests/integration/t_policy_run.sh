#!/usr/bin/env bash
# The command policy's check on run (SPEC §6): a denial exits 126 before anything of the command
# runs (the check overlaps building the jail, which is then discarded) and before any placeholder
# is made on the host; it names the rule and is reported in --status-json. Should the policy fail, what
# would run is harmless: argv-form denials target the test's own HOME (private in the jail),
# and script-form ones start with the jail guard.
source "$TESTLIB"

marker="$WORK/ran"
expect_exit 126 "rm -rf HOME is denied before it runs" "$CORDON" -- rm -rf "$HOME"
expect_err "^cordon: denied: rm -rf $HOME .*\(rule [a-z0-9-]+: " "the denial names the command and the rule"
expect_exit 126 "a script with a denied command is denied as a whole" "$CORDON" -c "$GUARD; touch $marker; cd / && rm -rf usr"
[[ -e $marker ]] && not_ok "a denied script ran its first command" || ok "nothing of a denied script ran"
expect_exit 126 "rm -rf of HOME through a variable is denied" "$CORDON" -c "$GUARD; touch $marker; rm -rf \"\$HOME\""
expect_exit 126 "a wrapped deletion is denied" "$CORDON" -- env A=1 nice timeout 5 rm -fr -- "$HOME"
expect_exit 126 "a nested shell is seen through" "$CORDON" -- bash -c "$GUARD; touch $marker && rm -rf ~/"
[[ -e $marker ]] && not_ok "a denied command ran" || ok "no denied command ran"
# A denial in a project without .git leaves no placeholder behind, not even for a moment's use.
mkdir -p "$WORK/denied" && pushd "$WORK/denied" >/dev/null
expect_exit 126 "a denial in an empty project" "$CORDON" -c "$GUARD; touch $marker; rm -rf \"\$HOME\""
popd >/dev/null
[[ -z $(ls -A "$WORK/denied") && ! -e $marker ]] && ok "the denied run left the project untouched" \
  || not_ok "after a denial: $(ls -A "$WORK/denied")"

json=$("$CORDON" --status-json fd:3 -- rm -rf "$HOME" 3>&1 >/dev/null 2>&1 || true)
if [[ $json == *'"reason":"denied"'* && $json == *'"exit_code":126'* && $json == *'"rule":'* ]]; then
  ok "status json reports the denial with its rule"
else
  not_ok "denial status json: $json"
fi

# Ordinary commands run; text that merely mentions rm -rf / is data.
expect_exit 0 "echo of dangerous text is allowed" "$CORDON" -- echo "rm -rf /"
expect_out "^rm -rf /$" "and it runs"
expect_exit 0 "grep for dangerous text is allowed" "$CORDON" -c 'echo "rm -rf /" | grep -c "rm -rf /"'
expect_exit 0 "--no-policy skips the check (harmless command)" "$CORDON" --no-policy -- true

# A custom policy layered with --policy: deny wins.
cat > "$SCRATCH/no-curl.toml" <<'TOML'
description = "test policy: no curl"
default = "allow"
on-unanalyzable = "deny"

[[rule]]
id = "no-curl"
decision = "deny"
reason = "no downloads in tests"
program = ["curl"]
must-match = ["curl http://example.test/"]
must-not-match = ["echo curl"]
TOML
run "$CORDON" --policy "$SCRATCH/no-curl.toml" -- curl http://example.test/
if [[ $rc -eq 126 ]] && grep -q "rule no-curl" "$OUT/err"; then ok "a custom --policy denies with its rule"; else
  # The format is the policy engine's; show what it said so a format change is easy to spot.
  not_ok "custom policy: exit $rc: $(head -3 "$OUT/err")"
fi
run "$CORDON" --policy "$SCRATCH/no-curl.toml" -- rm -rf "$HOME"
expect_rc 126 "the default policy still applies next to a custom one (--policy layers)"
printf 'default = "sometimes"\n' > "$SCRATCH/bad.toml"
run "$CORDON" --policy "$SCRATCH/bad.toml" -- true
expect_rc 125 "a malformed policy file is exit 125"
expect_err "^cordon: .*bad.toml:1:" "the error names file:line"

# A rule whose examples fail never loads, also after a passing version was remembered.
write_policy() {  # $1: a must-match example
  cat > "$SCRATCH/examples.toml" <<TOML
default = "allow"
on-unanalyzable = "deny"

[[rule]]
id = "no-wget"
decision = "deny"
reason = "no downloads in tests"
program = ["wget"]
must-match = ["$1"]
must-not-match = ["echo wget"]
TOML
}
write_policy "curl http://example.test/"
expect_exit 125 "a policy whose example fails does not load" "$CORDON" --policy "$SCRATCH/examples.toml" -- true
expect_err "examples.toml:[0-9]+:[0-9]+: .*must-match example does not match" "the failing example is named"
expect_exit 125 "and still does not on a second run" "$CORDON" --policy "$SCRATCH/examples.toml" -- true
write_policy "wget http://example.test/"
expect_exit 0 "the corrected policy loads" "$CORDON" --policy "$SCRATCH/examples.toml" -- true
ls "$HOME/.cache/cordon/policy-ok/" 2>/dev/null | grep -q . && ok "a passing policy's examples are remembered" || not_ok "no examples cache under \$HOME/.cache/cordon"
expect_exit 0 "and loads again from the cache" "$CORDON" --policy "$SCRATCH/examples.toml" -- true
write_policy "curl http://example.test/"
expect_exit 125 "breaking it again is caught despite the cache" "$CORDON" --policy "$SCRATCH/examples.toml" -- true

# cordon check never runs anything.
# --argv0 and argv[0] inside the jail: a name is what it makes the program. busybox named rm is
# rm; git named git-clean is git clean. (HOME is the test's, and private in the jail.)
mkdir -p "$WORK/victim" && touch "$WORK/victim/untracked"
cat > "$SCRATCH/no-clean.toml" <<TOML
description = "no git clean, no rm -r of HOME"
[[rule]]
id = "no-git-clean"
decision = "deny"
reason = "git clean"
program = ["git"]
subcommand = ["clean"]
must-match = ["git clean -fdx"]
must-not-match = ["git status"]
TOML
expect_exit 126 "--argv0 rm -- busybox -rf HOME is judged as rm" "$CORDON" --exec-checks off --argv0 rm -- busybox -rf "$HOME"
expect_err "^cordon: denied: rm -rf $HOME" "the denial names it as rm"
expect_exit 126 "--argv0 git-clean -- git -fdx is judged as git clean" \
  "$CORDON" --policy "$SCRATCH/no-clean.toml" --exec-checks off --chdir "$WORK/victim" --argv0 git-clean -- git -fdx
expect_exit 126 "exec -a git-clean git inside the jail is judged as git clean" \
  "$CORDON" --policy "$SCRATCH/no-clean.toml" --chdir "$WORK/victim" -- bash -c "$GUARD; exec -a git-clean git -fdx"
cp /usr/bin/git "$WORK/victim/mygit"
expect_exit 126 "--argv0 git-clean with a copy of git under another name is judged as git clean" \
  "$CORDON" --policy "$SCRATCH/no-clean.toml" --exec-checks off --chdir "$WORK/victim" --argv0 git-clean -- ./mygit -f
expect_exit 126 "exec -a git-clean ./mygit inside the jail is judged as git clean" \
  "$CORDON" --policy "$SCRATCH/no-clean.toml" --chdir "$WORK/victim" -- bash -c "$GUARD; exec -a git-clean ./mygit -f"
expect_exit 126 "git-clean by its own name (git-core) is judged as git clean" \
  "$CORDON" --policy "$SCRATCH/no-clean.toml" --exec-checks off --chdir "$WORK/victim" -- /usr/lib/git-core/git-clean -f
expect_exit 126 "--argv0 -rm -- busybox (a login name) is judged as rm" "$CORDON" --exec-checks off --argv0 -rm -- busybox -rf "$HOME"
expect_exit 126 "exec -a -rm busybox inside the jail is judged as rm" "$CORDON" -- bash -c "$GUARD; exec -a -rm busybox -rf \"\$HOME\""
loader=$(ls /lib64/ld-linux-*.so.2 /lib/ld-linux-*.so.[0-9] 2>/dev/null | head -1)
expect_exit 126 "the loader's --argv0 git-clean with git is judged as git clean" \
  "$CORDON" --policy "$SCRATCH/no-clean.toml" --chdir "$WORK/victim" -- "$loader" --argv0 git-clean /usr/bin/git -f
expect_exit 126 "the same with exec checks off: the command line's check sees the loader's --argv0" \
  "$CORDON" --policy "$SCRATCH/no-clean.toml" --exec-checks off --chdir "$WORK/victim" -- "$loader" --argv0 git-clean /usr/bin/git -f
ln -s /usr/bin/busybox "$WORK/busyboxZ"
expect_exit 126 "busybox under another name that begins with busybox runs its applet: judged as rm" \
  "$CORDON" -- "$WORK/busyboxZ" rm -rf "$HOME"
expect_exit 126 "exec -a busybox.static busybox rm inside the jail is judged as rm" \
  "$CORDON" -- bash -c "$GUARD; exec -a busybox.static busybox rm -rf \"\$HOME\""
# The same names in a script with exec checks off: the static check alone judges them.
expect_exit 126 "exec -a git-clean git in a script is judged as git clean (exec checks off)" \
  "$CORDON" --policy "$SCRATCH/no-clean.toml" --exec-checks off --chdir "$WORK/victim" -c "exec -a git-clean git -fdx"
expect_exit 126 "exec -a rm busybox in a script is judged as rm (exec checks off)" \
  "$CORDON" --exec-checks off -c "$GUARD; exec -a rm busybox -rf \"\$HOME\""
expect_exit 126 "exec -a -rm busybox in a script is judged as rm (exec checks off)" \
  "$CORDON" --exec-checks off -c "$GUARD; exec -a -rm busybox -rf \"\$HOME\""
expect_exit 126 "git-clean by name in a script is judged as git clean (exec checks off)" \
  "$CORDON" --policy "$SCRATCH/no-clean.toml" --exec-checks off --chdir "$WORK/victim" -c "/usr/lib/git-core/git-clean -f"
expect_exit 126 "exec -a with a name not known statically is refused (exec checks off)" \
  "$CORDON" --exec-checks off -c "$GUARD; n=rm; exec -a \"\$n\" busybox -rf \"\$HOME\""
expect_exit 126 "busybox -/rm in a script is judged as rm (exec checks off)" \
  "$CORDON" --exec-checks off -c "$GUARD; busybox -/rm -rf \"\$HOME\""
expect_exit 126 "the loader's --argv0 git-clean in a script is judged as git clean (exec checks off)" \
  "$CORDON" --policy "$SCRATCH/no-clean.toml" --exec-checks off --chdir "$WORK/victim" -c "$loader --argv0 git-clean /usr/bin/git -f"
expect_exit 126 "git -c alias.x=clean x is judged as git clean (exec checks off)" \
  "$CORDON" --policy "$SCRATCH/no-clean.toml" --exec-checks off --chdir "$WORK/victim" -c "git -c alias.x=clean x -f"
expect_exit 126 "a chain of git aliases is followed (exec checks off)" \
  "$CORDON" --policy "$SCRATCH/no-clean.toml" --exec-checks off --chdir "$WORK/victim" -c "git -c alias.a=b -c alias.b=clean a -f"
expect_exit 126 "an alias from --config-env is refused (exec checks off)" \
  "$CORDON" --policy "$SCRATCH/no-clean.toml" --exec-checks off --chdir "$WORK/victim" -c "V=clean git --config-env alias.x=V x -f"
[[ -e $WORK/victim/untracked ]] && ok "git clean did not run under an alias" || not_ok "git clean ran under an alias"
expect_exit 126 "zsh's ARGV0=rm busybox is judged as rm (exec checks off)" \
  "$CORDON" --exec-checks off -c "$GUARD; ARGV0=rm busybox -rf \"\$HOME\""
expect_exit 126 "capsh --shell=/bin/rm is judged as rm (exec checks off)" \
  "$CORDON" --exec-checks off -c "$GUARD; capsh --shell=/bin/rm -- -rf \"\$HOME\""
run "$CORDON" -- "$loader" --list /bin/rm -rf "$HOME"  # ld.so lists rm's libraries (and fails on -rf)
[[ $rc -ne 126 ]] && ! grep -q 'denied' "$OUT/err" && grep -q 'libc.so' "$OUT/out" &&
  ok "the loader's --list runs nothing, and is not denied (exit $rc)" ||
  not_ok "the loader's --list: exit $rc: $(head -2 "$OUT/err")"
expect_exit 0 "exec -a with a harmless name runs (exec checks off)" "$CORDON" --exec-checks off -- bash -c "exec -a lister ls ."
[[ -e $WORK/victim/untracked ]] && ok "git clean did not run" || not_ok "git clean ran under another name"
# busybox's nuke removes a tree as rm -rf does, in every spelling that works for rm; on a
# directory of the project it runs. (HOME is the test's, and private in the jail.)
expect_exit 126 "busybox nuke HOME is denied" "$CORDON" -- busybox nuke "$HOME"
expect_err "^cordon: denied: busybox nuke $HOME .*\(rule rm-recursive-protected: " "the denial names nuke and rm's rule"
expect_exit 126 "busybox nuke -- HOME is denied" "$CORDON" -- busybox nuke -- "$HOME"
expect_exit 126 "busybox nuke in a script is denied" "$CORDON" -c "$GUARD; touch $marker; busybox nuke ~/"
[[ -e $marker ]] && not_ok "a script with a denied nuke ran" || ok "nothing of the script with nuke ran"
ln -s /usr/bin/busybox "$WORK/nuke"
expect_exit 126 "a symlink named nuke to busybox is judged as nuke" "$CORDON" -- "$WORK/nuke" "$HOME"
expect_exit 126 "--argv0 nuke -- busybox is judged as nuke" "$CORDON" --exec-checks off --argv0 nuke -- busybox "$HOME"
expect_exit 126 "exec -a nuke busybox inside the jail is judged as nuke" "$CORDON" -- bash -c "$GUARD; exec -a nuke busybox \"\$HOME\""
expect_exit 126 "busyboxZ nuke is judged as nuke" "$CORDON" -- "$WORK/busyboxZ" nuke "$HOME"
mkdir -p "$WORK/build/obj" "$WORK/build2" && touch "$WORK/build/obj/a.o"
expect_exit 0 "rm -rf ./build2 is allowed" "$CORDON" -- rm -rf ./build2
expect_exit 0 "busybox nuke ./build is allowed" "$CORDON" -- busybox nuke ./build
[[ ! -e $WORK/build ]] && ok "and removed the build directory" || not_ok "build/ is still there after nuke"
# busybox's shell on a script file: nothing would check the applets it runs, so it is refused
# before anything runs, with or without exec checks; with -c its text is checked.
bb_marker="$WORK/ran-busybox-script"
printf 'touch %s\n' "$bb_marker" >"$WORK/s.sh"
for mode in auto off; do
  expect_exit 126 "busybox sh on a script file is refused (exec checks $mode)" "$CORDON" --exec-checks $mode -- busybox sh "$WORK/s.sh"
  expect_err "^cordon: denied: .*\(rule on-unanalyzable: busybox's and toybox's shells run their applets without an exec" \
    "the refusal says why (exec checks $mode)"
done
expect_exit 126 "--argv0 ash -- busybox on a script file is refused" "$CORDON" --argv0 ash -- busybox "$WORK/s.sh"
[[ -e $bb_marker ]] && not_ok "a refused busybox script ran" || ok "no refused busybox script ran"
expect_exit 0 "busybox sh -c on known text runs" "$CORDON" -- busybox sh -c 'echo from-busybox-sh'
expect_out "^from-busybox-sh$" "and prints"
expect_exit 0 "--argv0 under another name that is allowed runs" "$CORDON" --argv0 lister -- ls "$WORK/victim"
expect_exit 126 "cordon check denies" "$CORDON" check -c "rm -rf / ; touch $marker"  # check never executes
expect_out "^deny" "check prints the decision"
expect_exit 0 "cordon check allows" "$CORDON" check -- ls -la
[[ -e $marker ]] && not_ok "cordon check executed something" || ok "cordon check ran nothing"
finish

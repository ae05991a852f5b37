#!/usr/bin/env bash
# Profiles (SPEC §5): the shipped set, layering, variables, the search path, errors, show/list,
# --profile auto, and cordon's own configuration read-only inside the jail.
source "$TESTLIB"
P="$SCRATCH/profiles"
mkdir -p "$P"
export CORDON_PROFILE_PATH="$P"

run "$CORDON" profile list
for name in default strict ci npm pip cargo go make git python node claude-code codex aider; do
  grep -q "^$name " "$OUT/out" && ok "profile list shows $name" || not_ok "profile list lacks $name"
done
expect_out "from .*/share/cordon/profiles/default.toml" "profile list shows the origin"

run "$CORDON" profile show default --json
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["net"]["value"]=="none"; assert any(x["value"]=="/usr" for x in d["ro"]); assert all(":" in x["from"] for x in d["ro"])' "$OUT/out" \
  && ok "profile show --json is JSON with values and their file:line:col" || not_ok "profile show --json: $(head -c 200 "$OUT/out")"
run "$CORDON" profile show npm
expect_out '^  "[^"]+",  # .*/npm.toml:[0-9]+:[0-9]+$' "profile show npm: allow-host comes from npm.toml"
expect_out '^  "/usr",  # .*/default.toml:' "profile show npm: ro /usr comes from default.toml"

# Layering: extends, repeated -p (later wins), the command line last; lists accumulate.
cat > "$P/base.toml" <<'TOML'
description = "test base"
extends = ["default"]
hostname = "from-base"
setenv = { LAYER = "base", BASE_ONLY = "1" }
TOML
cat > "$P/top.toml" <<'TOML'
description = "test top"
extends = ["base"]
hostname = "from-top"
setenv = { LAYER = "top" }
TOML
run "$CORDON" -p top -- /bin/sh -c 'cat /proc/sys/kernel/hostname; echo "$LAYER $BASE_ONLY"'
expect_out "^from-top$" "a child profile overrides its parent's scalar"
expect_out "^top 1$" "setenv accumulates across layers, later wins"
run "$CORDON" -p top -p base -- /bin/cat /proc/sys/kernel/hostname
expect_out "^from-top$" "a profile already loaded is not loaded twice"
run "$CORDON" -p top --hostname from-cli -- /bin/cat /proc/sys/kernel/hostname
expect_out "^from-cli$" "the command line overrides every profile"

# Variables.
mkdir -p "$HOME/.toolrc.d" && echo tool-config > "$HOME/.toolrc.d/conf"
cat > "$P/vars.toml" <<'TOML'
extends = ["default"]
ro = ["${HOME}/.toolrc.d"]
setenv = { ME = "x" }
TOML
run "$CORDON" -p vars -- /bin/cat "$HOME/.toolrc.d/conf"
expect_out "^tool-config$" "\${HOME} expands in paths"
# Non-ASCII text in a profile comes back as written, in values and in keys (parse_toml moves
# some characters aside for toml++ and back); malformed UTF-8 is refused as toml++ refuses it.
printf 'extends = ["default"]\nsetenv = { "caf\xc3\xa9" = "na\xc3\xafve" }\n' > "$P/unicode.toml"
run "$CORDON" -q -p unicode -- /usr/bin/env
expect_rc 0 "a profile with a non-ASCII setenv key runs"
expect_out $'^caf\xc3\xa9=na\xc3\xafve$' "its key and value reach the jail as written"
printf 'extends = ["default"]\nsetenv = { X = "\xc0\xaf" }\n' > "$P/overlong.toml"
expect_exit 125 "an overlong UTF-8 form in a profile is refused" "$CORDON" -p overlong -- true
expect_err "overlong.toml:2:.*invalid utf-8" "the error names the file and position"
printf 'ro = ["${NOPE}/x"]\n' > "$P/badvar.toml"
expect_exit 125 "an unknown variable is an error" "$CORDON" -p badvar -- true
expect_err "badvar.toml:1:7: .*unknown variable \\\$\{NOPE\}" "the error names the variable and its position"

# Errors: each FILE:LINE:COLUMN, exit 125, nothing run.
printf 'extends = ["default"]\nnetw = "host"\n' > "$P/typo.toml"
expect_exit 125 "an unknown key" "$CORDON" -p typo -- touch "$WORK/ran"
expect_err "typo.toml:2:1: unknown key 'netw' \(did you mean 'net'\?\)" "unknown key with a suggestion, at the key"
printf 'extends = ["default"]\nargv0 = "ls"\n' > "$P/clionly.toml"
expect_exit 125 "a command-line-only option in a profile" "$CORDON" -p clionly -- touch "$WORK/ran"
expect_err "clionly.toml:2:1: 'argv0' is a command-line option \(--argv0\), not a profile key" "it says so"
printf 'extends = ["default"]\nperms = ["0701"]\n' > "$P/perms.toml"
expect_exit 125 "a profile's last perms does not apply to the command line's --dir" \
  "$CORDON" -p perms --dir /tmp/made -- touch "$WORK/ran"
expect_err "^cordon: --perms: is not followed by --dir or --mount-tmpfs \(.*perms.toml:2:10\)" "the perms is named"
printf 'extends = ["default"]\nperms = ["0701"]\ndir = ["/tmp/made"]\n' > "$P/permsdir.toml"
run "$CORDON" -p permsdir -- stat -c %a /tmp/made
expect_out "^701$" "perms then dir in a profile: the dir has that mode"
printf 'net = 5\n' > "$P/type.toml"
expect_exit 125 "a wrong type" "$CORDON" -p type -- true
expect_err "type.toml:1:7: 'net' must be a string" "wrong type names the key"
printf 'net = "maybe"\n' > "$P/value.toml"
expect_exit 125 "a bad value" "$CORDON" -p value -- true
expect_err "value.toml:1:7: 'net': invalid value 'maybe': expected none or host" "bad value names it, with its line"
printf 'tmpfs-size = "12Q"\n' > "$P/size.toml"
expect_exit 125 "a bad size in a profile" "$CORDON" -p size -- true
expect_err "size.toml:1:14: 'tmpfs-size'" "bad size names file:line:col"
printf 'extends = ["nope-missing"]\n' > "$P/orphan.toml"
expect_exit 125 "an unknown parent" "$CORDON" -p orphan -- true
expect_err "orphan.toml:1:12: extends profile 'nope-missing'.*not found" "unknown parent at its position"
printf 'extends = ["cyc2"]\n' > "$P/cyc1.toml"; printf 'extends = ["cyc1"]\n' > "$P/cyc2.toml"
expect_exit 125 "a cycle" "$CORDON" -p cyc1 -- true
expect_err "cycle" "the cycle is named"
expect_exit 125 "a missing profile file" "$CORDON" -p "$P/absent.toml" -- true
expect_err "absent.toml.*No such file" "a missing file is named"
printf 'net = "host"\n' > "$P/unreadable.toml"; chmod 000 "$P/unreadable.toml"
if [[ $RUN_AS == user ]]; then
  expect_exit 125 "an unreadable profile" "$CORDON" -p unreadable -- true
  expect_err "unreadable.toml.*Permission denied" "an unreadable file is named"
fi
printf 'net = "host"\nro = ["/usr"\n' > "$P/syntax.toml"
expect_exit 125 "a TOML syntax error" "$CORDON" -p syntax -- true
expect_err "syntax.toml:[23]:[0-9]+: " "syntax errors carry a position"
[[ -e $WORK/ran ]] && not_ok "a command ran after a profile error" || ok "nothing ran after profile errors"

# The search path: CORDON_PROFILE_PATH before XDG_CONFIG_HOME before the data dir; shadowing.
mkdir -p "$HOME/.config/cordon/profiles"
printf 'description = "user make"\nextends = ["default"]\nhostname = "user-make"\n' > "$HOME/.config/cordon/profiles/make.toml"
run env -u CORDON_PROFILE_PATH "$CORDON" -p make -- /bin/cat /proc/sys/kernel/hostname
expect_out "^user-make$" "\$XDG_CONFIG_HOME/cordon/profiles (~/.config) wins over the shipped profile"
run env -u CORDON_PROFILE_PATH "$CORDON" profile list
expect_out "shadows .*share/cordon/profiles/make.toml" "profile list shows the shadowed shipped make"
printf 'extends = ["default"]\nhostname = "env-make"\n' > "$P/make.toml"
run "$CORDON" -p make -- /bin/cat /proc/sys/kernel/hostname
expect_out "^env-make$" "CORDON_PROFILE_PATH wins over XDG_CONFIG_HOME"
rm -f "$P/make.toml"

# cordon's configuration is read-only inside the jail, existing or not.
jailed 'mkdir -p "$HOME/.config/cordon/profiles/x" 2>/dev/null; echo "hostname = \"evil\"" > "$HOME/.config/cordon/profiles/evil.toml"; echo rc=$?'
expect_out "rc=[1-9]" "the jail cannot write \$XDG_CONFIG_HOME/cordon"
mkdir -p "$WORK/xdg"
run env XDG_CONFIG_HOME="$WORK/xdg" "$CORDON" -- /bin/sh -c "$GUARD; mkdir -p \"\$XDG_CONFIG_HOME/cordon/profiles\"; echo rc=\$?"
expect_out "rc=[1-9]" "an XDG_CONFIG_HOME inside the workdir is protected too"
[[ -z $(ls -A "$WORK/xdg") ]] && ok "and its placeholder is removed afterwards" || not_ok "left in xdg: $(ls -A "$WORK/xdg")"

# A relative XDG_CONFIG_HOME is ignored (XDG spec): profiles are never looked up relative to
# the current directory, which the jail can write.
mkdir -p "$WORK/rel/cordon/profiles"
printf 'extends = ["default"]\nhostname = "from-cwd"\n' > "$WORK/rel/cordon/profiles/make.toml"
pushd "$WORK" >/dev/null
run env -u CORDON_PROFILE_PATH XDG_CONFIG_HOME=rel "$CORDON" -p make -- /bin/cat /proc/sys/kernel/hostname
popd >/dev/null
expect_no_out "^from-cwd$" "a relative XDG_CONFIG_HOME does not make the current directory a profile source"
rm -rf "$WORK/rel"

# --profile auto: a trusted executable gets its profile; one in a writable place does not.
run "$CORDON" -p auto --dry-run -- make
expect_out "^profiles: +make" "--profile auto picks make for /usr/bin/make"
cp /bin/true "$WORK/make"
run "$CORDON" -p auto --dry-run -- "$WORK/make"
expect_out "^profiles: +default" "--profile auto ignores an executable in a writable place"
rm -f "$WORK/make"

# The worked example of cordon-profile(5) loads and does what the page says.
man=$(dirname "$TESTLIB")/../../man/cordon-profile.5
sed -n '/^\.SH EXAMPLE: A PROFILE FOR A NEW TOOL/,/^\.SH NOTES/p' "$man" | sed -n '/^\.nf$/,/^\.fi$/p' | sed '1d;$d' > "$P/zig.toml"
grep -q '^extends = \["default"\]$' "$P/zig.toml" && ok "the man page's example was extracted" || not_ok "no example in $man"
run "$CORDON" profile show zig
expect_out '^net = "host"  # .*zig.toml:' "the example profile grants the network"
expect_out "^  \"$HOME/.cache/zig\",  # .*zig.toml:" "and a writable ~/.cache/zig"
mkdir -p "$HOME/.cache/zig"
run "$CORDON" -p zig -- /bin/sh -c "echo cached > \"$HOME/.cache/zig/x\""
[[ $(cat "$HOME/.cache/zig/x" 2>/dev/null) == cached ]] && ok "the example's cache survives the run" || not_ok "zig cache not written"

# --no-profile: nothing but what the command line asks for.
run "$CORDON" --no-profile --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 -- /bin/sh -c 'ls /'
expect_no_out "^(etc|tmp|proc)$" "--no-profile starts from an empty root"
# Only trusted places hold profiles: a directory or file another user may write (a data
# directory beside a binary in /tmp, say) is passed over or refused, never used.
open_dir="$SCRATCH/open-profiles"
mkdir -p "$open_dir" && printf 'extends = ["default"]\nnet = "host"\n' > "$open_dir/openly.toml" && chmod 0777 "$open_dir"
CORDON_PROFILE_PATH="$open_dir" run "$CORDON" -p openly -- true
[[ $rc -eq 125 ]] && ok "a profile in a world-writable directory is not used" || not_ok "used it: exit $rc"
expect_err "profile 'openly': not found" "the directory is passed over"
chmod 0755 "$open_dir" && chmod 0666 "$open_dir/openly.toml"
CORDON_PROFILE_PATH="$open_dir" run "$CORDON" -p openly -- true
[[ $rc -eq 125 ]] && ok "a world-writable profile file is refused" || not_ok "used it: exit $rc"
expect_err "openly.toml is not trusted: .*openly.toml is writable by everyone" "naming the file and why"
chmod 0644 "$open_dir/openly.toml"
expect_exit 0 "the same profile, private again, is used" env CORDON_PROFILE_PATH="$open_dir" "$CORDON" -p openly -- true
if [[ $(id -u) -eq 0 ]]; then
  chown 65534 "$open_dir/openly.toml"
  CORDON_PROFILE_PATH="$open_dir" run "$CORDON" -p openly -- true
  expect_err "openly.toml is not trusted: .* belongs to uid 65534" "a profile another user owns is refused"
  # A symlink another user owns, to a trusted file: its owner could point it anywhere.
  chown 0 "$open_dir/openly.toml" && cp "$open_dir/openly.toml" "$open_dir/real.toml"
  ln -s real.toml "$open_dir/linked.toml" && chown -h 65534 "$open_dir/linked.toml"
  CORDON_PROFILE_PATH="$open_dir" run "$CORDON" -p linked -- true
  expect_err "linked.toml is not trusted: .*linked.toml belongs to uid 65534" "a symlink another user owns is refused"
fi
rm -rf "$open_dir"

finish

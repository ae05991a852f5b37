#!/bin/sh
# The worked example in man/cordon-policy.5 must load and pass its own examples.
# usage: man-example.sh CORDON MANPAGE
set -eu
cordon=$1 manpage=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sed -n '/^# ~\/.config\/cordon\/policies\/team.toml/,/^\.RE/p' "$manpage" | sed '$d' | sed 's/\\-/-/g' >"$dir/team.toml"
grep -q '^\[\[rule\]\]' "$dir/team.toml"
"$cordon" policy test "$dir/team.toml"
status=0
HOME=/home/user CORDON_POLICY_PATH=$dir "$cordon" check --policy team -c 'cd repo && git push --force' || status=$?
[ "$status" -eq 126 ]

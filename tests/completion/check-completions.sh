#!/usr/bin/env bash
# usage: check-completions.sh bash|zsh|fish CORDON SHARE_DIR
# The completion the build generated for SHELL (`cordon completion SHELL`, written below
# SHARE_DIR where the shell looks under <prefix>/share), loaded by that shell from there and
# driven as on a terminal. Completing must offer:
#   cordon --                  every long option `cordon --help` lists (and cordon - the short ones)
#   cordon -p / --profile      every profile `cordon profile list` lists, a user's own one too
#   cordon                     every subcommand of --help's usage lines
#   cordon check --, policy test --, profile show, completion: what their --help names
#   cordon --net               the values --help names (none|host)
#   cordon -- cordon --ne      COMMAND's own completion (here: cordon's again)
# Exit 77 (a skip) only when SHELL, or bash-completion for bash, is not installed.
set -uo pipefail
shell=$1
cordon=$(readlink -f "$2")
share=$(readlink -f "$3")
here=$(dirname "$(readlink -f "$0")")
if ! command -v "$shell" >/dev/null; then
  echo "skip: $shell is not installed (scripts/install-deps installs it)"
  exit 77
fi
if [[ $shell == bash && ! -r /usr/share/bash-completion/bash_completion ]]; then
  echo "skip: bash-completion is not installed (scripts/install-deps installs it)"
  exit 77
fi

work=$(mktemp -d /tmp/cordon-completion.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/home/.config/cordon/profiles"
ln -s "$cordon" "$work/bin/cordon"
printf 'description = "the user'"'"'s own"\nextends = ["default"]\n' >"$work/home/.config/cordon/profiles/zz-mine.toml"
export HOME=$work/home PATH=$work/bin:/usr/sbin:/usr/bin:/sbin:/bin XDG_DATA_DIRS=$share
unset XDG_CONFIG_HOME XDG_DATA_HOME CORDON_PROFILE_PATH BASH_COMPLETION_USER_DIR
cd "$work" || exit 1

# offers LINE: what SHELL offers for LINE's last word, one a line ("--net=" counts as "--net").
offers() {
  case $shell in
    bash) bash --norc --noprofile "$here/bash-complete.sh" "$1" ;;
    zsh) zsh -f "$here/zsh-complete.zsh" "$share/zsh/vendor-completions" "$1" ;;
    fish) fish -c 'complete -C $argv[1]' "$1" ;;
  esac | cut -f1 | sed 's/=$//' | sort -u
}

passed=0 failed=0
# expect DESCRIPTION LINE WORD...: completing LINE offers every WORD.
expect() {
  local desc=$1 line=$2 got w
  shift 2
  local -a missing=()
  got=$(offers "$line")
  for w in "$@"; do grep -qxF -- "$w" <<<"$got" || missing+=("$w"); done
  if (($# == 0)); then
    failed=$((failed + 1))
    echo "not ok - $shell: $desc: nothing to expect (is cordon's output what this test reads?)"
  elif ((${#missing[@]})); then
    failed=$((failed + 1))
    echo "not ok - $shell: $desc: '$line' does not offer ${missing[*]}"
    echo "#   it offers: $(tr '\n' ' ' <<<"$got" | head -c 600)"
  else
    passed=$((passed + 1))
    echo "ok - $shell: $desc: '$line' offers all $# expected"
  fi
}

help=$(cordon --help)
mapfile -t longs < <(sed -nE 's/^  (-[a-zA-Z],)?(--[a-z][a-z0-9-]*).*/\2/p' <<<"$help")
mapfile -t shorts < <(sed -nE 's/^  (-[a-zA-Z])[ ,].*/\1/p' <<<"$help")
mapfile -t subcommands < <(sed -nE 's/^  cordon ([a-z]+) .*/\1/p' <<<"$help" | sort -u)
mapfile -t profiles < <(cordon profile list | awk '/^[^ ]/ { print $1 }')
mapfile -t nets < <(sed -nE 's/^  --net ([a-z|]+) .*/\1/p' <<<"$help" | tr '|' '\n')
mapfile -t shells < <(sed -nE 's/^  cordon completion ([a-z|]+).*/\1/p' <<<"$help" | tr '|' '\n')
mapfile -t check_opts < <(cordon check --help | grep -oE -- '--[a-z][a-z-]+' | sort -u)
mapfile -t test_opts < <(cordon policy --help | sed -n 1p | grep -oE -- '--[a-z][a-z-]+' | sort -u)
[[ ${#longs[@]} -gt 50 && " ${profiles[*]} " == *" zz-mine "* ]] ||
  { echo "not ok - $shell: the test's own inputs: ${#longs[@]} options, profiles: ${profiles[*]}"; exit 1; }

expect "every long option of --help" "cordon --" "${longs[@]}"
expect "every short option of --help" "cordon -" "${shorts[@]}"
expect "profile names after -p" "cordon -p " "${profiles[@]}"
expect "profile names after --profile" "cordon --profile " "${profiles[@]}"
expect "profile names after -p, later on the line" "cordon --net host -p " "${profiles[@]}"
expect "the subcommands" "cordon " "${subcommands[@]}"
expect "--net's values" "cordon --net " "${nets[@]}"
expect "check's options" "cordon check --" "${check_opts[@]}"
expect "policy test's options" "cordon policy test --" "${test_opts[@]}"
expect "profile's actions" "cordon profile " list show
expect "profile show's profiles" "cordon profile show " "${profiles[@]}"
expect "completion's shells" "cordon completion " "${shells[@]}"
expect "COMMAND's own completion" "cordon -v -- cordon --ne" --net --new-session
echo "$passed passed, $failed failed"
((failed == 0))

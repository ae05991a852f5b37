#!/usr/bin/env bash
# usage: run-suite.sh root|user CORDON_BINARY CACHE_DIR
# Runs bubblewrap's own test suite (Debian's source package, fetched with `apt-get source
# bubblewrap` into CACHE_DIR once and kept there) against cordon's bwrap mode, through a `bwrap`
# symlink, as root or as the unprivileged test user; and, where bubblewrap is installed, against
# /usr/bin/bwrap the same way, as the reference. Fails on any failing or missing test, and when
# cordon skips more than bubblewrap does.
set -euo pipefail
as=$1 bin=$(readlink -f "$2") cache=$3
if [[ $(id -u) -ne 0 ]]; then
  echo "the bwrap suite runs as root: it creates an unprivileged user and tests both paths" >&2
  exit 1
fi
user=cordon-test
id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$user"

# The source package, once per build tree (the root and the user run share it, under a lock).
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
tests=$(ls -d "$cache"/bubblewrap-*/tests 2>/dev/null | head -1 || true)
if [[ -z $tests || ! -f $tests/test-run.sh ]]; then
  rm -rf "${cache:?}"/bubblewrap*
  if ! (cd "$cache" && apt-get source bubblewrap) >"$cache/apt-get.log" 2>&1; then
    echo "# skip: apt-get source bubblewrap failed (is there a deb-src line? scripts/install-deps adds one):"
    tail -3 "$cache/apt-get.log" | sed 's/^/#   /'
    exit 77
  fi
  tests=$(ls -d "$cache"/bubblewrap-*/tests | head -1)
fi
flock -u 9
version=$(basename "$(dirname "$tests")")

stage=$(mktemp -d /tmp/cordon-bwrap-suite.XXXXXX)
chmod 0755 "$stage"
trap 'rm -rf --one-file-system "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/home"
cp -r "$tests" "$stage/tests"
cp "$bin" "$stage/bin/cordon"
ln -s cordon "$stage/bin/bwrap"
# test-seccomp.py runs this helper from the tests' build directory.
cc -o "$stage/tests/try-syscall" "$stage/tests/try-syscall.c"
chmod -R a+rX "$stage"
[[ $as == user ]] && chown "$user:$user" "$stage/home"

# run_script BWRAP SCRIPT: the script's TAP output in $stage/out, its status in $status.
run_script() {
  local bwrap=$1 script=$2 interp=bash
  [[ $script == *.py ]] && interp=/usr/bin/python3
  local envs=(BWRAP="$bwrap" HOME="$stage/home" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
              LANG=C.UTF-8 USER="$([[ $as == root ]] && echo root || echo $user)")
  status=0
  if [[ $as == root ]]; then
    (cd "$stage" && env -i "${envs[@]}" timeout 300 "$interp" "$stage/tests/$script") >"$stage/out" 2>"$stage/err" || status=$?
  else
    (cd "$stage" && env -i "${envs[@]}" setpriv --reuid="$user" --regid="$user" --init-groups \
      timeout 300 "$interp" "$stage/tests/$script") >"$stage/out" 2>"$stage/err" || status=$?
  fi
}

# tally BWRAP LABEL: runs every script; prints one line per script and sets $total_ok,
# $total_skip, $total_bad (failed, missing, or a script that did not finish).
tally() {
  local bwrap=$1 label=$2 script
  total_ok=0 total_skip=0 total_bad=0 whole_skips=0
  for script in test-run.sh test-specifying-userns.sh test-specifying-pidns.sh test-seccomp.py; do
    [[ -f $stage/tests/$script ]] || continue
    run_script "$bwrap" "$script"
    local planned seen skips fails
    planned=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$stage/out" | tail -1)
    seen=$(grep -Ec '^(not )?ok' "$stage/out" || true)
    skips=$(grep -Eic '^ok.*# *skip' "$stage/out" || true)
    fails=$(grep -Ec '^not ok' "$stage/out" || true)
    [[ -n $planned ]] || planned=$seen
    local bad=$((fails + planned - seen))
    if ((status != 0 && bad == 0)); then bad=1; fi  # a script that stopped early
    if grep -q '^1\.\.0 # SKIP' "$stage/out"; then
      echo "$label: $script: skipped: $(sed -n 's/^1\.\.0 # SKIP *//p' "$stage/out")"
      total_skip=$((total_skip + 1)) whole_skips=$((whole_skips + 1))
      continue
    fi
    echo "$label: $script: $((seen - fails - skips)) passed, $skips skipped, $bad failed of $planned (exit $status)"
    if ((bad > 0)); then
      grep -E '^not ok' "$stage/out" | sed 's/^/#   /'
      tail -5 "$stage/err" | sed 's/^/#   stderr: /'
    fi
    total_ok=$((total_ok + seen - fails - skips)) total_skip=$((total_skip + skips)) total_bad=$((total_bad + bad))
  done
}

tally "$stage/bin/bwrap" "cordon bwrap mode [$as]"
ours_ok=$total_ok ours_skip=$total_skip ours_bad=$total_bad
whole_skips_ours=$whole_skips
echo "cordon bwrap mode [$as], $version suite: $ours_ok passed, $ours_skip skipped, $ours_bad failed"
result=0
((ours_bad == 0)) || result=1
if [[ -x /usr/bin/bwrap ]]; then
  tally /usr/bin/bwrap "bubblewrap $(/usr/bin/bwrap --version | awk '{print $2}') [$as]"
  echo "bubblewrap itself [$as], $version suite: $total_ok passed, $total_skip skipped, $total_bad failed"
  if ((ours_skip > total_skip || ours_ok < total_ok)); then
    echo "not ok - cordon passes $ours_ok and skips $ours_skip; bubblewrap passes $total_ok and skips $total_skip"
    result=1
  fi
else
  echo "# note: /usr/bin/bwrap is not installed: no reference count"
  # Without a reference, a whole script that skips means bwrap mode did not work at all.
  ((whole_skips_ours == 0)) || result=1
fi
exit $result

#!/usr/bin/env bash
# usage: run-as.sh root|user SCRIPT CORDON_BINARY
# Runs one integration script against a private copy of the binary, either as root or as the
# unprivileged test user (created here if missing). Each run gets its own stage directory:
#   $CORDON    the binary (stage is 0755 so the test user can reach it)
#   $WORK      an empty project directory owned by the runner (also the current directory)
#   $SCRATCH   a directory outside the workdir, owned by the runner
#   HOME       a fresh home owned by the runner, with fake secrets in ~/.ssh and ~/.aws
set -euo pipefail
as=$1 script=$(readlink -f "$2") bin=$(readlink -f "$3")
if [[ $(id -u) -ne 0 ]]; then
  echo "integration tests run as root: they create an unprivileged user and test both paths" >&2
  exit 1
fi
user=cordon-test
id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$user"
# A user made again (another uid) finds the old home, which useradd leaves to the old uid: the
# user's home is its own, as tests that write there (t_clients: Codex's home) need.
home=$(getent passwd "$user" | cut -d: -f6)
if [[ -d $home && $(stat -c %u "$home") != "$(id -u "$user")" ]]; then chown -R "$user:" "$home"; fi

stage=$(mktemp -d /tmp/cordon-it.XXXXXX)
chmod 0755 "$stage"
cleanup() { rm -rf --one-file-system "$stage"; }
trap cleanup EXIT
mkdir -p "$stage/bin" "$stage/share" "$stage/work" "$stage/scratch" "$stage/home/.ssh" "$stage/home/.aws"
cp "$bin" "$stage/bin/cordon"
for helper in "$(dirname "$bin")"/cordon-test-*; do [[ -x $helper ]] && cp "$helper" "$stage/bin/"; done
cp -r "$(dirname "$bin")/../share/cordon" "$stage/share/"
echo "FAKE-PRIVATE-KEY" > "$stage/home/.ssh/id_ed25519"
echo "[default]" > "$stage/home/.aws/credentials"
chmod 0700 "$stage/home/.ssh"

lib=$(dirname "$(readlink -f "$0")")/lib.sh
envs=(CORDON="$stage/bin/cordon" CORDON_BUILD="$(dirname "$(dirname "$bin")")" WORK="$stage/work" SCRATCH="$stage/scratch" HOME="$stage/home" STAGE="$stage" TESTLIB="$lib"
      CORDON_SANITIZE="${CORDON_SANITIZE:-}"
      RUN_AS="$as" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8)
if [[ $as == root ]]; then
  cd "$stage/work"
  env -i "${envs[@]}" USER=root bash "$script"
else
  chown -R "$user:$user" "$stage/work" "$stage/scratch" "$stage/home"
  cd "$stage/work"
  env -i "${envs[@]}" USER="$user" setpriv --reuid="$user" --regid="$user" --init-groups bash "$script"
fi

#!/usr/bin/env bash
# usage: clients-install.sh [--print-dir]
# The agents' own sandboxes that t_clients runs on bubblewrap and on cordon: Anthropic's sandbox
# runtime (srt) and OpenAI's Codex CLI, pinned, from npm's registry, into one directory shared by
# the builds (printed on stdout; --print-dir prints it and installs nothing). Its file `status` says "ok", or "skip: WHY"
# when the registry does not answer: the tests then skip with that reason. Safe to run at once
# from two builds (flock), and again (an install that finished is kept).
set -euo pipefail
srt_version=0.0.83
codex_version=0.171.0
root=/var/cache/cordon-test-clients
dir=$root/srt-$srt_version+codex-$codex_version
if [[ ${1:-} == --print-dir ]]; then
  echo "$dir"
  exit 0
fi
mkdir -p "$root"
chmod 0755 "$root"
exec 9>"$root/.lock"
flock 9
if [[ -f $dir/status ]] && grep -q '^ok$' "$dir/status"; then
  echo "$dir"
  exit 0
fi
rm -rf --one-file-system "$dir"
mkdir -p "$dir"
registry=$(npm config get registry 2>/dev/null || true)
if [[ -z $registry ]] || ! timeout 60 npm view "@anthropic-ai/sandbox-runtime@$srt_version" version >/dev/null 2>&1; then
  echo "skip: npm's registry (${registry:-none configured}) does not answer" >"$dir/status"
  echo "$dir"
  exit 0
fi
timeout 600 npm install --prefix "$dir" --no-audit --no-fund --no-save --loglevel=error \
  "@anthropic-ai/sandbox-runtime@$srt_version" "@openai/codex@$codex_version" >&2
# Codex falls back to a bubblewrap of its own when it rejects the one on PATH: without it, a
# rejected cordon is a failure, not a silent pass on Codex's copy.
rm -f "$dir"/node_modules/@openai/codex-linux-*/vendor/*/codex-resources/bwrap
chmod -R a+rX "$dir"
echo ok >"$dir/status"
echo "$dir"

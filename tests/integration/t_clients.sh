#!/usr/bin/env bash
# The agents' own sandboxes on cordon (BWRAP COMPATIBILITY in cordon(1)): Anthropic's sandbox
# runtime (srt) and OpenAI's Codex CLI (`codex sandbox`), as npm installs them
# (clients-install.sh), each run through the same checks with Debian's bwrap, with cordon as
# `bwrap`, and with cordon plus its extras (a command policy and an audit log). What the command
# sees must be the same in all three; the extras add a denied `rm -rf` and its audit line.
# Network: a loopback server of this test's own, and a reserved name (*.invalid) for the host
# that must be refused.
source "$TESTLIB"

clients=$("$(dirname "$(readlink -f "$0")")/clients-install.sh" --print-dir)
if [[ ! -f $clients/status ]]; then
  not_ok "no client install in $clients: ctest's clients.install makes it (tests/integration/clients-install.sh)"
  finish
  exit 1
fi
if ! grep -q '^ok$' "$clients/status"; then
  skip "srt and Codex: $(sed 's/^skip: //' "$clients/status")"
  finish
  exit $?
fi
srt=$clients/node_modules/.bin/srt
codex=$clients/node_modules/.bin/codex

# cordon as `bwrap`: a copy, not a symlink (Codex resolves the link and asks `cordon --help`
# whether it is bubblewrap; cordon(1) says so).
mkdir -p "$SCRATCH/cordon-bin"
cp "$CORDON" "$SCRATCH/cordon-bin/bwrap"
mkdir -p "$HOME/secret" && echo "TOP-SECRET" >"$HOME/secret/key"
echo "seen" >"$WORK/mine.txt"
mkdir -p "$WORK/.git"  # both clients keep a repository's .git read-only

# The host's loopback server: the host srt's proxy lets through.
mkdir -p "$OUT/site" && echo "hello-through-the-proxy" >"$OUT/site/hello.txt" && chmod -R a+rX "$OUT/site"
trap stop_server EXIT
serve_http "$OUT/site" || {
  not_ok "the loopback server did not start"
  finish
  exit 1
}
cat >"$SCRATCH/srt.json" <<EOF
{"filesystem": {"denyRead": ["$HOME/secret"], "allowWrite": ["."], "denyWrite": []},
 "network": {"allowedDomains": ["127.0.0.1"], "deniedDomains": []}}
EOF
# Codex keeps helper links under CODEX_HOME, and refuses to below /tmp (where the stage is); then
# it needs bwrap's --argv0, which Debian's bwrap 0.8 lacks. So its home is the runner's real one.
codex_home=$(mktemp -d "$(getent passwd "$(id -u)" | cut -d: -f6)/.cordon-test-codex.XXXXXX")
watched=
cleanup() {
  stop_server
  [[ -n $watched ]] && kill "$watched" 2>/dev/null
  rm -rf --one-file-system "$codex_home"
}
trap cleanup EXIT
# A host process that the sandboxes must not see.
sleep 600 </dev/null >/dev/null 2>&1 &
watched=$!

# in_client CLIENT BINDIR EXTRAS SCRIPT: runs SCRIPT in CLIENT's sandbox with BINDIR's bwrap
# first on PATH, and CORDON_BWRAP_EXTRAS=EXTRAS if not empty; the last run's output and status
# as run() leaves them.
in_client() {
  local client=$1 bindir=$2 extras=$3 script=$4
  local env=(env PATH="$bindir:$PATH")
  [[ -n $extras ]] && env+=(CORDON_BWRAP_EXTRAS="$extras")
  if [[ $client == srt ]]; then
    run "${env[@]}" timeout 120 "$srt" -s "$SCRATCH/srt.json" -c "$script"
  else
    # workspace-write, /tmp not writable (the stage is there; Codex will not run a bwrap from a
    # directory the sandbox may write).
    run "${env[@]}" CODEX_HOME="$codex_home" timeout 120 "$codex" sandbox -c 'sandbox_mode="workspace-write"' \
      -c sandbox_workspace_write.exclude_slash_tmp=true -c sandbox_workspace_write.exclude_tmpdir_env_var=true \
      -- sh -c "$script"
  fi
}

# checks CLIENT BINDIR EXTRAS TAG: one line per check, "name: what was seen".
checks() {
  local c=$1 b=$2 x=$3 tag=$1-$4
  in_client "$c" "$b" "$x" 'echo hello from $0'
  echo "echo: rc=$rc $(cat "$OUT/out")"
  in_client "$c" "$b" "$x" "echo in >in-$tag && cat in-$tag && cat mine.txt"
  echo "write in the workdir: rc=$rc $(tr '\n' ' ' <"$OUT/out") host=$(cat "$WORK/in-$tag" 2>/dev/null)"
  in_client "$c" "$b" "$x" "echo out >'$SCRATCH/out-$tag' 2>/dev/null; echo \$?"
  echo "write outside: $( [[ $(cat "$OUT/out") != 0 ]] && echo refused || echo written) host=$( [[ -e $SCRATCH/out-$tag ]] && echo exists || echo absent)"
  in_client "$c" "$b" "$x" "cat '$HOME/secret/key' 2>/dev/null || echo unreadable"
  echo "denied path: $(cat "$OUT/out")"
  in_client "$c" "$b" "$x" "echo x >.git/planted-$tag 2>/dev/null && echo written || echo refused"
  echo "the workdir's .git: $(cat "$OUT/out") host=$( [[ -e $WORK/.git/planted-$tag ]] && echo exists || echo absent)"
  in_client "$c" "$b" "$x" 'exit 7'
  echo "exit status: $rc"
  in_client "$c" "$b" "$x" "curl -sS --max-time 20 --noproxy '' -x \"\$HTTP_PROXY\" http://127.0.0.1:$port/hello.txt 2>/dev/null || echo no-connection"
  echo "allowed host through the proxy: $(cat "$OUT/out")"
  in_client "$c" "$b" "$x" "curl -sS --max-time 20 -o /dev/null -w '%{http_code}' http://refused.invalid/ 2>/dev/null || echo ' no-connection'"
  echo "refused host: $(cat "$OUT/out")"
  in_client "$c" "$b" "$x" "curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:$port/hello.txt 2>/dev/null || echo unreachable"
  echo "the host's loopback, directly: $(cat "$OUT/out")"
  in_client "$c" "$b" "$x" "python3 -c '
import socket, threading
try:
    s = socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen(1)
    t = threading.Thread(target=lambda: s.accept()[0].sendall(b\"pong\")); t.start()
    c = socket.create_connection(s.getsockname()); print(c.recv(4).decode())
except OSError as e:
    print(\"no-server\", e.errno)'"
  echo "a server on the sandbox's loopback: $(cat "$OUT/out")"
  in_client "$c" "$b" "$x" "[ -e /proc/$watched ] && echo visible || echo hidden; [ -e /proc/$$ ] && echo visible || echo hidden"
  echo "host processes: $(tr '\n' ' ' <"$OUT/out")"
}

for client in srt codex; do
  audit=$SCRATCH/audit-$client.jsonl
  checks "$client" /usr/bin "" deb >"$OUT/$client.deb"
  checks "$client" "$SCRATCH/cordon-bin" "" cordon >"$OUT/$client.cordon"
  checks "$client" "$SCRATCH/cordon-bin" "--policy default --audit $audit" extras >"$OUT/$client.extras"
  # Proof that Debian's bwrap gave a sandbox at all before comparing with it.
  if ! grep -q '^echo: rc=0 hello' "$OUT/$client.deb" || ! grep -q '^write outside: refused host=absent' "$OUT/$client.deb"; then
    not_ok "$client with Debian's bwrap: no sandbox ($(tr '\n' ';' <"$OUT/$client.deb"))"
    continue
  fi
  while IFS= read -r want; do
    name=${want%%:*}
    for variant in cordon extras; do
      got=$(grep -F -m1 "$name:" "$OUT/$client.$variant")
      what="cordon as bwrap"
      [[ $variant == extras ]] && what="cordon's extras"
      [[ $got == "$want" ]] && ok "$client, $what: $want" || not_ok "$client, $what: '$got', Debian's bwrap '$want'"
    done
  done <"$OUT/$client.deb"
  grep -q '"decision":"allow"' "$audit" 2>/dev/null && ok "$client, cordon's extras: the audit log has the sandbox's execs" ||
    not_ok "$client, cordon's extras: no exec in the audit log ($audit)"
  # The extras' command policy: a recursive delete of HOME is denied before it runs (HOME is the
  # stage's, and read-only in both sandboxes besides: the checks above proved a working jail).
  if grep -q '^echo: rc=0 hello' "$OUT/$client.extras" && grep -q '^write outside: refused host=absent' "$OUT/$client.extras"; then
    in_client "$client" "$SCRATCH/cordon-bin" "--policy default --audit $audit" "rm -rf '$HOME'"
    [[ $rc -ne 0 && -e $HOME/secret/key ]] && ok "$client, cordon's extras: rm -rf HOME fails (exit $rc), HOME is there" ||
      not_ok "$client, cordon's extras: rm -rf HOME: exit $rc"
    expect_err '^cordon: denied: .*rm-recursive-protected' "$client, cordon's extras: the denial is on stderr"
    grep '"decision":"deny"' "$audit" | grep -q '"rule":"rm-recursive-protected"' &&
      ok "$client, cordon's extras: the denial is in the audit log" || not_ok "$client, cordon's extras: no denial in $audit"
  else
    not_ok "$client, cordon's extras: no working sandbox, so no rm check"
  fi
done
finish

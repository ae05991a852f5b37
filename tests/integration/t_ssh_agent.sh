#!/usr/bin/env bash
# §6c Credentials by relay (issue 29): `cordon --ssh-agent HOST[:PORT]` gives the jail an agent
# socket that the supervisor serves: it lists the caller's identities and signs only for
# sessions an OpenSSH client bound to the known key of an allowed host; it refuses every other
# request with a line on stderr. Everything here is the test's own, on 127.0.0.1 and under $OUT:
# two sshd (one the "git server" git1.test, one with another host key that no option names),
# a bare repository served over SSH, an ssh-agent holding the test key, and the caller's HOME
# (the key and a known_hosts that lists both servers). The servers and the agent are ended by
# their pids (and live at most 300 s even if the trap is lost).
source "$TESTLIB"

PY=/usr/bin/python3
SSHD=/usr/sbin/sshd
ME=$(id -un)
pids=()
stop_all() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
trap stop_all EXIT
# bail WHY [LOG]: a control failed; nothing after it would mean anything.
bail() {
  echo "Bail out! $1"
  [[ -n ${2:-} && -f $2 ]] && sed 's/^/#   /' "$2" | tail -20
  stop_all
  finish
  exit 1
}
# wait_for SECONDS CMD...: polls CMD every 0.1 s until it succeeds or SECONDS pass.
wait_for() {
  local i n=$(($1 * 10))
  shift
  for ((i = 0; i < n; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  return 1
}
for tool in git ssh ssh-agent ssh-add ssh-keygen "$SSHD" "$PY" timeout; do
  command -v "$tool" >/dev/null ||
    bail "$tool is missing (scripts/install-deps installs openssh-server, openssh-client and git)"
done
# sshd started by root needs its privilege-separation directory, which the package's service
# makes; it is left in place (another root sshd may be using it).
if [[ $(id -u) -eq 0 && ! -d /run/sshd ]]; then mkdir -m 0755 /run/sshd; fi

# --- keys, the caller's HOME, the tools the jail gets read-only -----------------------------------
CHOME=$OUT/home
TOOLS=$OUT/tools
mkdir -p "$CHOME/.ssh" "$TOOLS"
chmod 0700 "$CHOME/.ssh"
chmod go+x "$OUT"  # the jail of a root caller runs as another uid: it reaches $TOOLS by path
KEY=$CHOME/.ssh/id_ed25519
ssh-keygen -q -t ed25519 -N '' -C cordon-test-key -f "$KEY"
ssh-keygen -q -t ed25519 -N '' -C cordon-other-key -f "$OUT/other"
ssh-keygen -q -t ed25519 -N '' -C git1-host -f "$OUT/host1"
ssh-keygen -q -t ed25519 -N '' -C git2-host -f "$OUT/host2"
cp "$KEY.pub" "$TOOLS/id.pub"
cp "$KEY.pub" "$OUT/authorized_keys"
FP=$(ssh-keygen -lf "$KEY.pub" | awk '{print $2}')
FP_RE=${FP//+/\\+}
[[ $FP == SHA256:* ]] || bail "no fingerprint of the test key ($FP)"

# --- two sshd on free loopback ports ----------------------------------------------------------------
free_port() {
  "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
listening_or_gone() { grep -q "Server listening on 127.0.0.1 port $2" "$3" || [[ -z $(alive "$1") ]]; }
# start_sshd NAME HOSTKEY: sets port; the pid joins pids. A port taken meanwhile: another one.
# SetEnv SHLVL=1: bash, root's login shell, reads ~/.bashrc for a command sshd runs unless it is
# a nested shell; the host's rc files have no business in the git protocol (nor its time).
start_sshd() {
  local name=$1 hostkey=$2 log=$OUT/$1.log pid
  for _ in 1 2 3 4 5; do
    port=$(free_port)
    cat >"$OUT/$name.conf" <<EOF
ListenAddress 127.0.0.1:$port
HostKey $hostkey
AuthorizedKeysFile $OUT/authorized_keys
AllowUsers $ME
PidFile none
UsePAM no
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
AllowAgentForwarding yes
LogLevel VERBOSE
SetEnv SHLVL=1
EOF
    timeout 300 "$SSHD" -D -e -f "$OUT/$name.conf" </dev/null >"$log" 2>&1 &
    pid=$!
    pids+=("$pid")
    wait_for 60 listening_or_gone "$pid" "$port" "$log"
    grep -q "Server listening on 127.0.0.1 port $port" "$log" && return 0
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    grep -q 'Address already in use' "$log" || bail "sshd $name did not start" "$log"
  done
  bail "sshd $name found no free port in 5 tries" "$log"
}
start_sshd git1 "$OUT/host1"
P1=$port
start_sshd git2 "$OUT/host2"
P2=$port

# The caller's known_hosts: git1 as ssh writes a non-22 port, git2 hashed (Debian's ssh_config
# has HashKnownHosts yes). Neither has an entry for port 22.
KH=$CHOME/.ssh/known_hosts
echo "[git2.test]:$P2 $(cut -d' ' -f1,2 "$OUT/host2.pub")" >"$KH"
ssh-keygen -q -H -f "$KH" >/dev/null 2>&1
rm -f "$KH.old"
echo "[git1.test]:$P1 $(cut -d' ' -f1,2 "$OUT/host1.pub")" >>"$KH"
grep -q '^|1|' "$KH" || bail "ssh-keygen -H did not hash the known_hosts entry" "$KH"

# --- the caller's agent, with the test key --------------------------------------------------------
AGENT=$OUT/agent.sock
timeout 300 ssh-agent -D -a "$AGENT" </dev/null >"$OUT/agent.log" 2>&1 &
pids+=($!)
wait_for 60 test -S "$AGENT" || bail "ssh-agent did not start" "$OUT/agent.log"
run env SSH_AUTH_SOCK="$AGENT" ssh-add "$KEY"
[[ $rc -eq 0 ]] || bail "ssh-add of the test key failed" "$OUT/err"
export HOME=$CHOME SSH_AUTH_SOCK=$AGENT
export CORDON_TEST_RESOLVE="git1.test=127.0.0.1,git2.test=127.0.0.1"

# --- the repositories: a bare one on the "server", a work repository in the workdir -----------------
G=(git -c user.name=t -c user.email=t@t -c init.defaultBranch=main)
BARE=$OUT/bare.git
"${G[@]}" init -q --bare "$BARE"
URL=ssh://$ME@git1.test:$P1$BARE
mkdir -p "$WORK/repo"
cd "$WORK/repo" || bail "no workdir"
"${G[@]}" init -q .
echo one >file
"${G[@]}" add file
"${G[@]}" commit -qm "host commit"
chmod -R a+rX "$TOOLS"

# The host's ssh, as the controls run it: the caller's known_hosts and agent, nothing of the
# real user's ~/.ssh (ssh reads the passwd entry's home, not $HOME).
HOSTSSH="ssh -F /dev/null -o BatchMode=yes -o ConnectTimeout=30 -o UserKnownHostsFile=$KH -o GlobalKnownHostsFile=/dev/null -o IdentityFile=/nonexistent"
# Inside the jail: no known_hosts (the binding is what is judged, not ssh's host check).
NOKH="-o BatchMode=yes -o ConnectTimeout=30 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"

# --- controls on the host: the servers, the agent, push, forwarding, unbound signing -----------------
run $HOSTSSH -o HostKeyAlias="[git1.test]:$P1" -p "$P1" "$ME@127.0.0.1" echo git1-answers
[[ $rc -eq 0 ]] && grep -q '^git1-answers$' "$OUT/out" && ok "control: git1's sshd lets the agent's key in" ||
  bail "the agent's key does not log in to git1 (exit $rc)" "$OUT/err"
run $HOSTSSH -o HostKeyAlias="[git2.test]:$P2" -p "$P2" "$ME@127.0.0.1" echo git2-answers
[[ $rc -eq 0 ]] && grep -q '^git2-answers$' "$OUT/out" && ok "control: git2's sshd (another host key) lets the key in" ||
  bail "the agent's key does not log in to git2 (exit $rc)" "$OUT/err"
run env GIT_SSH_COMMAND="$HOSTSSH -o HostKeyAlias=[git1.test]:$P1 -o HostName=127.0.0.1" \
  "${G[@]}" push -q "$URL" HEAD:refs/heads/main
[[ $rc -eq 0 && $(git -C "$BARE" log --format=%s -1 main 2>/dev/null) == "host commit" ]] &&
  ok "control: git push over SSH with the agent works on the host" ||
  bail "git push over SSH on the host failed (exit $rc)" "$OUT/err"
run ssh-add -l
expect_out "$FP_RE" "control: the caller's agent lists the test key"
echo message >"$OUT/msg"
run ssh-keygen -Y sign -f "$KEY.pub" -n file "$OUT/msg"
[[ $rc -eq 0 && -s $OUT/msg.sig ]] && ok "control: the caller's agent signs for an unbound client (ssh-keygen -Y sign)" ||
  bail "ssh-keygen -Y sign with the agent failed on the host (exit $rc)" "$OUT/err"
HOP="ssh -F /dev/null $NOKH -o IdentityFile=/nonexistent -p $P2 $ME@127.0.0.1 echo hop-ok; echo hop=\$?"
run $HOSTSSH -A -o HostKeyAlias="[git1.test]:$P1" -p "$P1" "$ME@127.0.0.1" "$HOP"
expect_out '^hop-ok$' "control: through a forwarded agent, git1 logs in to git2 on the host"

# The session-binding attack (the reason binding exists): an agent proxy lets one ssh bind a
# connection to git1 honestly and keeps it; a second ssh, to git2, then gets its bind answered
# by the proxy and its sign request sent on the connection bound to git1. An agent that signs
# whatever a bound connection asks is fooled: the caller's own agent is (the key has no
# destination constraint), and the proxy's log says so.
# The agent protocol's framing, for the raw clients below (each imports it from $TOOLS).
cat >"$TOOLS/agentwire.py" <<'EOF'
import struct
def s(b): return struct.pack('>I', len(b)) + b
def recvn(c, n):
    d = b''
    while len(d) < n:
        x = c.recv(n - len(d))
        if not x:
            raise EOFError
        d += x
    return d
def frame(c):
    n, = struct.unpack('>I', recvn(c, 4))
    return recvn(c, n)
EOF
cat >"$TOOLS/mitm.py" <<'EOF'
import os, socket, struct, sys, threading
from agentwire import recvn, frame
listen, flag, upstream_path = sys.argv[1], sys.argv[2], sys.argv[3]
bound = []
def ask(up, msg):
    up.sendall(struct.pack('>I', len(msg)) + msg)
    return frame(up)
def is_bind(msg):
    return msg[:1] == b'\x1b' and msg[5:5 + 24] == b'session-bind@openssh.com'
def serve(down):
    up = socket.socket(socket.AF_UNIX)
    up.connect(upstream_path)
    attack = os.path.exists(flag)
    try:
        while True:
            msg = frame(down)
            if attack and is_bind(msg):
                reply = b'\x06'
                print('faked bind', flush=True)
            elif attack and msg[:1] == b'\x0d' and bound:
                reply = ask(bound[0], msg)
                print('sign on the git1-bound connection: reply %02x' % reply[0], flush=True)
            else:
                reply = ask(up, msg)
                if is_bind(msg):
                    print('bind forwarded: reply %02x' % reply[0], flush=True)
                    if reply == b'\x06' and not bound:
                        bound.append(up)
            down.sendall(struct.pack('>I', len(reply)) + reply)
    except (EOFError, OSError):
        pass
    down.close()
s = socket.socket(socket.AF_UNIX)
s.bind(listen)
s.listen(8)
s.settimeout(60)
while True:
    try:
        c, _ = s.accept()
    except socket.timeout:
        break
    threading.Thread(target=serve, args=(c,), daemon=True).start()
EOF
# mitm_script SSH_TO_GIT1 SSH_TO_GIT2 MITM_DIR: sh that runs the two ssh through the proxy.
mitm_script() {
  cat <<EOF
d=$3; rm -rf \$d; mkdir -p \$d
$PY $TOOLS/mitm.py \$d/p.sock \$d/attack "\$SSH_AUTH_SOCK" >\$d/log 2>&1 &
m=\$!
i=0; while [ ! -S \$d/p.sock ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i + 1)); done
SSH_AUTH_SOCK=\$d/p.sock $1 true; echo first=\$?
touch \$d/attack
SSH_AUTH_SOCK=\$d/p.sock $2 echo pwned; echo second=\$?
kill \$m; cat \$d/log
EOF
}
run sh -c "$(mitm_script "$HOSTSSH -o HostKeyAlias=[git1.test]:$P1 -p $P1 $ME@127.0.0.1" \
  "$HOSTSSH -o HostKeyAlias=[git2.test]:$P2 -p $P2 $ME@127.0.0.1" "$OUT/mitm")"
if grep -q '^first=0$' "$OUT/out" && grep -q '^bind forwarded: reply 06$' "$OUT/out" &&
  grep -q '^faked bind$' "$OUT/out" && grep -q '^pwned$' "$OUT/out"; then
  ok "control: through the proxy, the caller's own agent signs git2's login on the git1-bound connection"
else
  sed 's/^/#   /' "$OUT/out" "$OUT/err" | head -20
  bail "the session-binding attack's proxy does not work on the host"
fi

# --- the interface's errors: exit 125 and a message -------------------------------------------------
expect_exit 125 "no SSH_AUTH_SOCK: refused" env -u SSH_AUTH_SOCK "$CORDON" --ssh-agent "git1.test:$P1" -- true
expect_err '^cordon: .*SSH_AUTH_SOCK' "no SSH_AUTH_SOCK: the message names it"
expect_exit 125 "SSH_AUTH_SOCK that is not a socket: refused" \
  env SSH_AUTH_SOCK="$KH" "$CORDON" --ssh-agent "git1.test:$P1" -- true
expect_err '^cordon: ' "SSH_AUTH_SOCK that is not a socket: a message"
expect_exit 125 "SSH_AUTH_SOCK that names nothing: refused" \
  env SSH_AUTH_SOCK="$OUT/nothing.sock" "$CORDON" --ssh-agent "git1.test:$P1" -- true
expect_exit 125 "a host with no key in known_hosts: refused" "$CORDON" --ssh-agent "unknown.test:$P1" -- true
expect_err '^cordon: .*unknown\.test' "a host with no key in known_hosts: the message names it"
expect_exit 125 "git1.test without a port is port 22, which known_hosts does not list: refused" \
  "$CORDON" --ssh-agent git1.test -- true
expect_exit 125 "--ssh-agent 'a b': refused" "$CORDON" --ssh-agent 'a b' -- true
expect_err "^cordon: .*a b" "--ssh-agent 'a b': the message names the value"
expect_exit 125 "--ssh-agent HOST:0: refused" "$CORDON" --ssh-agent git1.test:0 -- true
expect_exit 125 "--ssh-agent-key naming no file: refused" \
  "$CORDON" --ssh-agent "git1.test:$P1" --ssh-agent-key "$OUT/nothing.pub" -- true
expect_err '^cordon: ' "--ssh-agent-key naming no file: a message"
echo "not a key" >"$OUT/bad.pub"
expect_exit 125 "--ssh-agent-key of a file that is no public key: refused" \
  "$CORDON" --ssh-agent "git1.test:$P1" --ssh-agent-key "$OUT/bad.pub" -- true
expect_err '^cordon: ' "--ssh-agent-key of a file that is no public key: a message"
# The Landlock jail has no private /run for the socket, and refuses unix sockets: the option is
# an error there, asked for or fallen back to (nothing runs: the marker file stays absent).
expect_exit 125 "--isolation landlock with --ssh-agent: refused" \
  "$CORDON" --isolation landlock --ssh-agent "git1.test:$P1" -- touch "$OUT/ran-landlock"
expect_err '^cordon: --ssh-agent: .*Landlock jail' "--isolation landlock with --ssh-agent: the message names the jail"
NOUSERNS=$(dirname "$CORDON")/cordon-test-nouserns
if [[ $(landlock_abi) -ge 2 && -x $NOUSERNS ]]; then
  expect_exit 125 "user namespaces refused (auto falls back to Landlock) with --ssh-agent: refused" \
    "$NOUSERNS" "$CORDON" --ssh-agent "git1.test:$P1" -- touch "$OUT/ran-landlock"
  expect_err '^cordon: .*user namespaces are refused.*--ssh-agent: .*Landlock jail' "the fallen-back run names why"
else
  skip "no Landlock jail here (ABI $(landlock_abi)) or no helper: the fallback's refusal is not tried"
fi
[[ ! -e $OUT/ran-landlock ]] && ok "the refused runs ran nothing" || not_ok "a refused run ran its command"

# --- the documented use: git push over SSH from the jail -------------------------------------------
# The tools the jail runs are read-only in it ($OUT is in /tmp, which the jail has its own of).
AGENTOPT=(--ssh-agent "git1.test:$P1" --allow-host "127.0.0.1:$P1" --ro "$TOOLS")
echo two >>file
"${G[@]}" commit -qam "jail commit"
jailed "git push -q $URL HEAD:refs/heads/main" -p git "${AGENTOPT[@]}" --audit "$OUT/push-audit.log"
expect_rc 0 "jailed: git push over SSH through --ssh-agent"
if grep -q '"kind":"ssh-agent","request":"sign".*"decision":"allow"' "$OUT/push-audit.log" 2>/dev/null; then
  ok "jailed: the audit log has the signature the relay allowed"
else not_ok "jailed: the audit log has the signature the relay allowed"; sed 's/^/#   /' "$OUT/push-audit.log" 2>/dev/null | head -5; fi
run git -C "$BARE" log --format=%s -1 main
expect_out '^jail commit$' "jailed: the server's repository has the commit"
jailed "git ls-remote $URL refs/heads/main" -p git "${AGENTOPT[@]}"
expect_out "^$(git rev-parse HEAD)[[:space:]]+refs/heads/main$" "jailed: git ls-remote over SSH sees it"

# --- what the jail sees: its own socket, the key's public half only --------------------------------
jailed "[ -S \"\$SSH_AUTH_SOCK\" ] && echo socket=yes; [ \"\$SSH_AUTH_SOCK\" = $AGENT ] && echo same=yes
  [ -e $AGENT ] && echo caller-socket=visible
  ssh-add -l; echo list=\$?
  cat \"\$HOME/.ssh/id_ed25519\" && echo home-key=read
  cat $KEY && echo original-key=read
  cat \"\$HOME/.ssh/known_hosts\"" "${AGENTOPT[@]}"
expect_out '^socket=yes$' "inside: SSH_AUTH_SOCK is a socket"
expect_no_out '^same=yes$' "inside: SSH_AUTH_SOCK is not the caller's path"
expect_no_out '^caller-socket=visible$' "inside: the caller's agent socket is not reachable by path"
expect_out "$FP_RE" "inside: ssh-add -l lists the test key"
expect_out '^list=0$' "inside: ssh-add -l succeeds"
expect_no_out 'PRIVATE KEY|=read$' "inside: the private key file is unreadable, in HOME and at its path"
H1=$(cut -d' ' -f2 "$OUT/host1.pub")
H2=$(cut -d' ' -f2 "$OUT/host2.pub")
expect_out "${H1//+/\\+}" "inside: ~/.ssh/known_hosts has git1's host key"
expect_no_out "${H2//+/\\+}" "inside: and not git2's, which no option names"
jailed "echo sock=\${SSH_AUTH_SOCK:-none}"
expect_out '^sock=none$' "without --ssh-agent the jail has no SSH_AUTH_SOCK"

# --- what the relay refuses -------------------------------------------------------------------------
jailed "ssh-keygen -q -t ed25519 -N '' -f /tmp/newkey && ssh-add /tmp/newkey; echo add=\$?" "${AGENTOPT[@]}"
expect_out '^add=[1-9]' "refused: ssh-add of a key made inside"
expect_err '^cordon: ssh-agent: refused' "refused: ssh-add of a key: the refusal on stderr"
jailed "ssh-add -d $TOOLS/id.pub; echo del=\$?" "${AGENTOPT[@]}"
expect_out '^del=[1-9]' "refused: ssh-add -d of the test key"
expect_err '^cordon: ssh-agent: refused' "refused: ssh-add -d: the refusal on stderr"
jailed "ssh-add -D; echo delall=\$?" "${AGENTOPT[@]}" --status-json "$OUT/delall.json" --audit "$OUT/delall-audit.log"
expect_out '^delall=[1-9]' "refused: ssh-add -D"
expect_err '^cordon: ssh-agent: refused' "refused: ssh-add -D: the refusal on stderr"
if grep -q '"kind":"ssh-agent","reason":"[^"]*refused' "$OUT/delall.json" 2>/dev/null; then
  ok "refused: ssh-add -D: the refusal is in the status JSON"
else not_ok "refused: ssh-add -D: the refusal is in the status JSON"; sed 's/^/#   /' "$OUT/delall.json" 2>/dev/null | head -3; fi
if grep -q '"kind":"ssh-agent".*"decision":"deny"' "$OUT/delall-audit.log" 2>/dev/null; then
  ok "refused: ssh-add -D: the refusal is in the audit log"
else not_ok "refused: ssh-add -D: the refusal is in the audit log"; sed 's/^/#   /' "$OUT/delall-audit.log" 2>/dev/null | head -3; fi
printf '#!/bin/sh\necho lock-passphrase\n' >"$TOOLS/askpass"
chmod 0755 "$TOOLS/askpass"
jailed "SSH_ASKPASS=$TOOLS/askpass SSH_ASKPASS_REQUIRE=force ssh-add -x; echo lock=\$?" "${AGENTOPT[@]}"
expect_out '^lock=[1-9]' "refused: ssh-add -x (lock)"
expect_err '^cordon: ssh-agent: refused' "refused: ssh-add -x: the refusal on stderr"
run ssh-add -l
expect_out "$FP_RE" "after the refusals, the caller's agent still lists the key (not removed, not locked)"

# The same requests from a raw client: one byte, SSH_AGENT_FAILURE, each.
cat >"$TOOLS/raw.py" <<'EOF'
import os, socket, struct
from agentwire import s, recvn
def ask(name, msg):
    c = socket.socket(socket.AF_UNIX)
    c.settimeout(30)
    c.connect(os.environ['SSH_AUTH_SOCK'])
    try:
        c.sendall(s(msg))
        n, = struct.unpack('>I', recvn(c, 4))
        reply = recvn(c, n)
        print(name, reply.hex() if n <= 1 else '%02x(%d bytes)' % (reply[0], n), flush=True)
        return reply
    except (EOFError, OSError) as e:
        print(name, 'closed', flush=True)
        return b''
    finally:
        c.close()
ids = ask('list', b'\x0b')
blob = b''
if ids[:1] == b'\x0c' and struct.unpack('>I', ids[1:5])[0] > 0:
    n, = struct.unpack('>I', ids[5:9])
    blob = ids[9:9 + n]
ed = s(b'ssh-ed25519') + s(os.urandom(32)) + s(os.urandom(64)) + s(b'from-the-jail')
ask('add', b'\x11' + ed)
ask('add-constrained', b'\x19' + ed + b'\x01' + struct.pack('>I', 60))
ask('remove', b'\x12' + s(blob))
ask('remove-all', b'\x13')
ask('lock', b'\x16' + s(b'pw'))
ask('unlock', b'\x17' + s(b'pw'))
ask('add-smartcard', b'\x14' + s(b'/usr/lib/x.so') + s(b''))
ask('unknown', b'\xc8')
ask('sign', b'\x0d' + s(blob) + s(b'data to sign') + struct.pack('>I', 0))
ask('extension', b'\x1b' + s(b'query'))
# A session-bind to git1's host key with a forged signature: the caller's agent checks it.
hostkey = bytes.fromhex(os.environ['HOSTKEY'])
c = socket.socket(socket.AF_UNIX)
c.settimeout(30)
c.connect(os.environ['SSH_AUTH_SOCK'])
bind = b'\x1b' + s(b'session-bind@openssh.com') + s(hostkey) + s(os.urandom(32)) + \
    s(s(b'ssh-ed25519') + s(os.urandom(64))) + b'\x00'
for name, msg in (('forged-bind', bind),
                  ('sign-after-forged-bind', b'\x0d' + s(blob) + s(b'data') + struct.pack('>I', 0))):
    try:
        c.sendall(s(msg))
        n, = struct.unpack('>I', recvn(c, 4))
        print(name, recvn(c, n).hex(), flush=True)
    except (EOFError, OSError):
        print(name, 'closed', flush=True)
EOF
HOSTKEY_HEX=$(cut -d' ' -f2 "$OUT/host1.pub" | base64 -d | od -An -v -tx1 | tr -d ' \n')
jailed "HOSTKEY=$HOSTKEY_HEX $PY $TOOLS/raw.py" "${AGENTOPT[@]}"
expect_out '^list 0c\(' "raw client: the identities answer comes back"
for req in add add-constrained remove remove-all lock unlock add-smartcard unknown sign; do
  expect_out "^$req 05$" "raw client: $req gets SSH_AGENT_FAILURE"
done
expect_out '^extension (05|1c)$' "raw client: an extension other than session-bind fails"
expect_out '^forged-bind (05|1c)$' "raw client: a session-bind with a forged signature fails"
expect_out '^sign-after-forged-bind (05|closed)$' "raw client: no signature on that connection"
expect_err '^cordon: ssh-agent: refused' "raw client: the refusals on stderr"
run ssh-add -l
expect_out "$FP_RE" "after the raw client, the caller's agent still lists the key"

# An unbound signature (ssh-keygen -Y sign): the client binds no session.
jailed "echo message >/tmp/msg; ssh-keygen -Y sign -f $TOOLS/id.pub -n file /tmp/msg; echo sign=\$?
  [ -s /tmp/msg.sig ] && echo sig=made" "${AGENTOPT[@]}"
expect_out '^sign=[1-9]' "refused: ssh-keygen -Y sign through the agent"
expect_no_out '^sig=made$' "refused: no signature file"
expect_err '^cordon: ssh-agent: refused: .*ssh-keygen -Y sign' "refused: ssh-keygen -Y sign: stderr says why"
# A client older than OpenSSH 8.9 binds no session: its login request is refused, and says so.
cat >"$TOOLS/unbound.py" <<'EOF'
import os, socket, struct
from agentwire import s, recvn
c = socket.socket(socket.AF_UNIX)
c.settimeout(30)
c.connect(os.environ['SSH_AUTH_SOCK'])
def ask(msg):
    c.sendall(s(msg))
    n, = struct.unpack('>I', recvn(c, 4))
    return recvn(c, n)
ids = ask(b'\x0b')
n, = struct.unpack('>I', ids[5:9])
blob = ids[9:9 + n]
login = s(os.urandom(32)) + b'\x32' + s(b'git') + s(b'ssh-connection') + s(b'publickey') + b'\x01' + \
    s(b'ssh-ed25519') + s(blob)
print('login-unbound', ask(b'\x0d' + s(blob) + s(login) + struct.pack('>I', 0)).hex())
EOF
jailed "$PY $TOOLS/unbound.py" "${AGENTOPT[@]}"
expect_out '^login-unbound 05$' "refused: a login signature on a connection that bound no session"
expect_err '^cordon: ssh-agent: refused: .*not bound' "refused: the unbound login: stderr says the session is not bound"

# A host not named by --ssh-agent, though the network allows it: git2's host key is in the
# caller's known_hosts, but no signature is made for a session bound to it.
jailed "ssh $NOKH -p $P2 $ME@127.0.0.1 echo logged-in; echo ssh=\$?" "${AGENTOPT[@]}" \
  --allow-host "127.0.0.1:$P2"
expect_out '^ssh=255$' "refused: ssh to a server with another host key fails"
expect_no_out '^logged-in$' "refused: nothing ran there"
expect_err 'Permission denied' "refused: ssh says Permission denied"
expect_err '^cordon: ssh-agent: refused' "refused: cordon prints the refusal"
# The same server named, by its hashed known_hosts entry: it is the option that decides.
jailed "ssh $NOKH -p $P2 $ME@git2.test echo logged-in; echo ssh=\$?" \
  --ssh-agent "git2.test:$P2" --allow-host "127.0.0.1:$P2" --ro "$TOOLS"
expect_out '^logged-in$' "allowed: git2 named by --ssh-agent (a hashed known_hosts entry) logs in"

# The session-binding attack from inside: the relay signs only data of the session it bound.
jailed "$(mitm_script "ssh $NOKH -p $P1 $ME@git1.test" "ssh $NOKH -p $P2 $ME@127.0.0.1" /tmp/mitm)" \
  "${AGENTOPT[@]}" --allow-host "127.0.0.1:$P2"
expect_out '^first=0$' "attack: the honest ssh to git1 through the proxy logs in"
expect_out '^bind forwarded: reply 06$' "attack: its bind to git1 went through"
expect_out '^faked bind$' "attack: the proxy answered the ssh to git2's bind itself"
expect_out '^sign on the git1-bound connection: reply 05$' "attack: the relay refuses to sign git2's login on the git1-bound connection"
expect_no_out '^pwned$' "attack: nothing ran on git2"
expect_err '^cordon: ssh-agent: refused' "attack: cordon prints the refusal"

# Agent forwarding: the forwarded agent signs nothing, not even for an allowed host.
jailed "ssh -A $NOKH -p $P1 $ME@git1.test '$HOP'; echo ssh=\$?" "${AGENTOPT[@]}"
expect_out '^ssh=0$' "forwarding: the ssh to git1 itself logs in"
expect_no_out '^hop-ok$' "forwarding: through the forwarded agent, git1 cannot log in to git2"
expect_err '^cordon: ssh-agent: refused' "forwarding: cordon prints the refusal"
HOP1="ssh -F /dev/null $NOKH -o IdentityFile=/nonexistent -p $P1 $ME@127.0.0.1 echo hop-ok; echo hop=\$?"
jailed "ssh -A $NOKH -p $P1 $ME@git1.test '$HOP1'; echo ssh=\$?" "${AGENTOPT[@]}"
expect_out '^ssh=0$' "forwarding: the ssh to git1 logs in (again)"
expect_no_out '^hop-ok$' "forwarding: the forwarded agent signs no login, not even to git1 itself"

# A host the network does not allow.
jailed "ssh $NOKH -p $P1 $ME@denied.invalid echo logged-in; echo ssh=\$?" "${AGENTOPT[@]}"
expect_out '^ssh=255$' "denied: ssh to a host the network does not allow fails"
expect_no_out '^logged-in$' "denied: nothing ran"
expect_err '^cordon: network: refused denied.invalid' "denied: cordon's network refusal on stderr"

# --- --ssh-agent-key: only the keys named ---------------------------------------------------------
jailed "ssh-add -l; echo list=\$?; ssh $NOKH -p $P1 $ME@git1.test echo logged-in; echo ssh=\$?" \
  "${AGENTOPT[@]}" --ssh-agent-key "$OUT/other.pub"
expect_no_out "$FP_RE" "--ssh-agent-key of another key: the test key is not listed"
expect_out '^list=1$' "--ssh-agent-key of another key: the agent lists nothing"
expect_out '^ssh=255$' "--ssh-agent-key of another key: the test key cannot log in"
jailed "ssh-add -l" "${AGENTOPT[@]}" --ssh-agent-key "$KEY.pub"
expect_out "$FP_RE" "--ssh-agent-key of the test key: it is listed"

# --- the profile key --------------------------------------------------------------------------------
printf 'extends = ["git"]\nssh-agent = ["git1.test:%s"]\nallow-host = ["127.0.0.1:%s"]\n' "$P1" "$P1" \
  >"$OUT/ssh.toml"
jailed "ssh-add -l; ssh $NOKH -p $P1 $ME@git1.test echo via-profile" -p "$OUT/ssh.toml"
expect_out "$FP_RE" "profile ssh-agent = [...]: the key is listed"
expect_out '^via-profile$' "profile ssh-agent = [...]: ssh to git1 logs in"

run ssh-add -l
expect_out "$FP_RE" "at the end, the caller's agent still lists the key"
run ssh-add -L
[[ $(grep -c . "$OUT/out") -eq 1 ]] && ok "at the end, the caller's agent holds exactly the one key" ||
  not_ok "the caller's agent holds: $(cut -c1-60 "$OUT/out" | tr '\n' ' ')"

# --- a revocation in any of the caller's files counts ----------------------------------------------
echo "@revoked * $(cut -d' ' -f1,2 "$OUT/host1.pub")" >"$CHOME/.ssh/known_hosts2"
expect_exit 125 "git1's key @revoked in known_hosts2 while known_hosts lists it: refused" \
  "$CORDON" --ssh-agent "git1.test:$P1" -- true
expect_err 'no key of git1.test:[0-9]+ .*@revoked' "the revoked host: the message says so"
rm -f "$CHOME/.ssh/known_hosts2"

# --- a jail that takes every task its uid may have: the relay and the forwarder get no thread -------
# (an unprivileged caller's jail runs as its uid; root is not bound by RLIMIT_NPROC). The
# supervisor closes the connection it cannot serve and the run ends as ever, with what the run
# left judged: before, std::thread threw and cordon aborted (134) before the judgement.
if [[ $(id -u) -ne 0 ]]; then
  cat >"$TOOLS/exhaust.py" <<'EOF'
import os, socket, struct, sys, time
kids = []
while len(kids) < 400:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    kids.append(pid)
print("forked", len(kids), "exhausted" if len(kids) < 400 else "not-exhausted")
for what in ("agent", "forward"):
    try:
        if what == "agent":
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(10)
            s.connect(os.environ["SSH_AUTH_SOCK"])
            s.sendall(struct.pack(">IB", 1, 11))
        else:
            s = socket.create_connection(("git1.test", int(sys.argv[1])), timeout=10)
        print(what, "answered", len(s.recv(100)))
    except OSError as e:
        print(what, "failed", e.errno)
for k in kids:
    os.kill(k, 9)
for k in kids:
    os.waitpid(k, 0)
print("done")
EOF
  mkdir -p "$OUT/nproc"
  git -C "$OUT/nproc" init -q
  for attempt in 1 2 3; do
    tasks=$(ps -L -u "$(id -u)" --no-headers | wc -l)
    cd "$OUT/nproc"
    run bash -c 'ulimit -u "$1" && shift && exec "$@"' - "$((tasks + 200))" "$CORDON" "${AGENTOPT[@]}" -- \
      /bin/sh -c "$GUARD; git init -q sub && git -C sub config core.fsmonitor 'echo PWNED' &&
        python3 $TOOLS/exhaust.py $P1"
    cd - >/dev/null
    # Another test of this uid's that grew meanwhile can take the margin before cordon started.
    [[ $rc -eq 125 ]] && grep -q 'Resource temporarily unavailable' "$OUT/err" || break
    echo "# attempt $attempt: cordon itself met the limit; again"
  done
  [[ $rc -ne 99 ]] || bail "the jail is not working (guard failed)" "$OUT/err"
  expect_rc 0 "tasks exhausted: the run ends with the command's status"
  expect_out '^forked [0-9]+ exhausted$' "tasks exhausted: the jail reached its uid's limit"
  expect_out '^done$' "tasks exhausted: the command ran to its end"
  expect_no_err 'terminate called' "tasks exhausted: cordon did not abort"
  if [[ -e $OUT/nproc/sub/.git/config.cordon-unsafe ]]; then
    ok "tasks exhausted: the planted fsmonitor was still moved aside"
  else
    not_ok "tasks exhausted: the planted fsmonitor was not moved aside"
  fi
fi

unset CORDON_TEST_RESOLVE
stop_all
finish

#!/usr/bin/env bash
# §4 Network: by default the jail gets a new network namespace with only loopback up — the host's
# 127.0.0.1 services and its abstract unix sockets are unreachable, only `lo` exists, and loopback
# inside the jail works. `--net host` shares the host's network, but for its abstract unix sockets
# where Landlock scopes them (ABI 6+).
# The host side is a small python server (TCP on 127.0.0.1, plus an abstract unix socket) that this
# script starts in the background and always kills by its PID.
source "$TESTLIB"

PY=/usr/bin/python3
abstract="cordon-test-$$-$RANDOM"

# --- the host-side server --------------------------------------------------------------------------
cat >"$OUT/server.py" <<'EOF'
import os, select, socket, sys, time
portfile, name = sys.argv[1], sys.argv[2]
tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
tcp.bind(('127.0.0.1', 0))
tcp.listen(16)
uds = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
uds.bind('\0' + name)
uds.listen(16)
with open(portfile + '.tmp', 'w') as f:
    f.write(str(tcp.getsockname()[1]))
os.rename(portfile + '.tmp', portfile)
deadline = time.monotonic() + 110  # never outlive the CTest timeout, even if the trap is lost
while time.monotonic() < deadline:
    ready, _, _ = select.select([tcp, uds], [], [], 1)
    for s in ready:
        c, _ = s.accept()
        try:
            c.sendall(b'hello-tcp\n' if s is tcp else b'hello-unix\n')
        except OSError:
            pass
        c.close()
EOF

trap stop_server EXIT

"$PY" "$OUT/server.py" "$OUT/port" "$abstract" </dev/null >"$OUT/server.log" 2>&1 &
srv=$!
for _ in $(seq 50); do
  [[ -s $OUT/port ]] && break
  kill -0 "$srv" 2>/dev/null || break
  sleep 0.1
done
if ! [[ -s $OUT/port ]]; then
  echo "Bail out! the host test server did not start"
  cat "$OUT/server.log" >&2
  stop_server
  finish
  exit 1
fi
port=$(cat "$OUT/port")

# --- the client (runs inside the jail; on the host only as the positive control) --------------------
cat >"$WORK/client.py" <<'EOF'
import socket, sys
kind, where = sys.argv[1], sys.argv[2]
if kind == 'tcp':
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    addr = ('127.0.0.1', int(where))
else:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    addr = '\0' + where
s.settimeout(3)
try:
    s.connect(addr)
    print('connected', s.recv(64).decode().strip())
except OSError as e:
    print('failed', e.errno, type(e).__name__)
EOF
CLIENT="$PY $WORK/client.py"

# Positive control: the server answers on the host, so a failure inside the jail means isolation.
run $CLIENT tcp "$port"
expect_out '^connected hello-tcp$' "control: the host's 127.0.0.1:$port answers on the host"
run $CLIENT unix "$abstract"
expect_out '^connected hello-unix$' "control: the host's abstract socket answers on the host"

# --- default (--net none) -----------------------------------------------------------------------------
jailed "$CLIENT tcp $port"
expect_out '^failed ' "the host's 127.0.0.1:$port is unreachable from the jail"
expect_no_out 'hello' "nothing from the host's TCP server reaches the jail"
jailed "$CLIENT unix $abstract"
expect_out '^failed ' "the host's abstract unix socket is unreachable from the jail"
expect_no_out 'hello' "nothing from the host's abstract socket reaches the jail"
jailed "$CLIENT tcp $port" --net none
expect_out '^failed ' "--net none: the host's 127.0.0.1:$port is unreachable"

jailed 'ip -o link show | sed -E "s/^[0-9]+: ([^:@]+).*/\1/"'
if [[ $rc -eq 0 ]] && [[ $(cat "$OUT/out") == lo ]]; then ok "ip link shows only lo"
else not_ok "ip link shows only lo (exit $rc)"; sed 's/^/#   /' "$OUT/out" "$OUT/err" | head -8; fi
jailed 'ip -o link show lo'
expect_out 'state UNKNOWN|[<,]UP[,>]' "lo is up inside the jail"

jailed 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'
if [[ $rc -eq 0 ]] && [[ $(cat "$OUT/out") == lo ]]; then ok "/proc/net/dev lists only lo"
else not_ok "/proc/net/dev lists only lo (exit $rc)"; sed 's/^/#   /' "$OUT/out" "$OUT/err" | head -8; fi

jailed 'ls /sys/class/net 2>/dev/null; true'
if ! grep -qv '^lo$' "$OUT/out"; then ok "/sys/class/net is absent or shows only lo"
else not_ok "/sys/class/net shows host interfaces"; sed 's/^/#   /' "$OUT/out" | head -8; fi

# Loopback inside the jail: a server and a client, both inside, talk over 127.0.0.1.
jailed "$PY -c '
import socket
srv = socket.socket(); srv.bind((\"127.0.0.1\", 0)); srv.listen(1)
cli = socket.create_connection(srv.getsockname(), timeout=3)
conn, _ = srv.accept(); conn.sendall(b\"ping-inside\"); conn.close()
print(\"got\", cli.recv(64).decode())
'"
expect_out '^got ping-inside$' "loopback works inside the jail (server and client both inside)"

# An abstract socket created inside the jail is usable inside it (and is the jail's own).
jailed "$PY -c '
import socket
name = \"\\0cordon-inside\"
srv = socket.socket(socket.AF_UNIX); srv.bind(name); srv.listen(1)
cli = socket.socket(socket.AF_UNIX); cli.settimeout(3); cli.connect(name)
conn, _ = srv.accept(); conn.sendall(b\"abstract-inside\"); conn.close()
print(\"got\", cli.recv(64).decode())
'"
expect_out '^got abstract-inside$' "abstract unix sockets work inside the jail"

# --- --net host ---------------------------------------------------------------------------------------
jailed "$CLIENT tcp $port" --net host
expect_out '^connected hello-tcp$' "--net host: the host's 127.0.0.1:$port is reachable"
# The host's abstract unix sockets: from Landlock ABI 6 on they are scoped to the jail
# (cordon(1), LANDLOCK), under --net host too; an older kernel leaves them reachable there.
abi=$(landlock_abi)
jailed "$CLIENT unix $abstract" --net host
if ((abi >= 6)); then
  expect_out '^failed 1 PermissionError$' "--net host: the host's abstract unix socket is refused (Landlock ABI $abi scope)"
else
  expect_out '^connected hello-unix$' "--net host: the host's abstract unix socket is reachable (Landlock ABI $abi)"
fi

stop_server
finish

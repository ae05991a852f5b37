#!/usr/bin/env bash
# §6b Network allowlist: --allow-host keeps the jail's own network namespace and lets connections
# out only through the supervisor's proxy (the *_PROXY variables) and its fake resolver with
# forwarders (tools that ignore the variables). Local HTTP and HTTPS servers that this script
# starts on 127.0.0.1 stand for the outside world; CORDON_TEST_RESOLVE maps the test names to
# them (cordon(1), NETWORK). Names that must be refused are reserved (*.invalid) or mapped to
# loopback and metadata addresses that the filter refuses before it connects: nothing here can
# reach any other address.
source "$TESTLIB"

PY=/usr/bin/python3
for tool in curl git openssl; do
  if ! command -v "$tool" >/dev/null; then
    echo "Bail out! $tool is missing (the test needs curl, git and openssl)"
    finish
    exit 1
  fi
done

# --- the "outside world": HTTP and HTTPS on 127.0.0.1, a dumb-HTTP git repository -------------------
site=$OUT/site
mkdir -p "$site"
echo "hello-from-outside" >"$site/hello.txt"
git init -q "$OUT/src"
git -C "$OUT/src" -c user.name=t -c user.email=t@t commit -q --allow-empty -m "outside commit"
git clone -q --bare "$OUT/src" "$site/repo.git"
git -C "$site/repo.git" update-server-info
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$OUT/key.pem" -out "$site/cert.pem" -days 1 \
  -subj "/CN=allowed.test" -addext "subjectAltName=DNS:allowed.test" >/dev/null 2>&1
chmod -R a+rX "$OUT"

cat >"$OUT/server.py" <<'EOF'
import http.server, os, socketserver, ssl, sys, threading, time
site, key, portfile = sys.argv[1], sys.argv[2], sys.argv[3]
os.chdir(site)
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
plain = Server(('127.0.0.1', 0), Quiet)
tls = Server(('127.0.0.1', 0), Quiet)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(os.path.join(site, 'cert.pem'), key)
tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
for s in (plain, tls):
    threading.Thread(target=s.serve_forever, daemon=True).start()
with open(portfile + '.tmp', 'w') as f:
    f.write('%d %d' % (plain.server_address[1], tls.server_address[1]))
os.rename(portfile + '.tmp', portfile)
time.sleep(110)  # never outlive the CTest timeout, even if the trap is lost
EOF

trap stop_server EXIT
"$PY" "$OUT/server.py" "$site" "$OUT/key.pem" "$OUT/ports" </dev/null >"$OUT/server.log" 2>&1 &
srv=$!
for _ in $(seq 50); do
  [[ -s $OUT/ports ]] && break
  sleep 0.1
done
if ! [[ -s $OUT/ports ]]; then
  echo "Bail out! the test servers did not start"
  cat "$OUT/server.log" >&2
  finish
  exit 1
fi
read -r HP SP <"$OUT/ports"
CA=$site/cert.pem

# Positive control: the servers answer on the host.
run curl -sS --max-time 5 "http://127.0.0.1:$HP/hello.txt"
expect_out '^hello-from-outside$' "control: the HTTP server answers on the host"
run curl -sS --max-time 5 --cacert "$CA" --resolve "allowed.test:$SP:127.0.0.1" "https://allowed.test:$SP/hello.txt"
expect_out '^hello-from-outside$' "control: the HTTPS server answers on the host"

# --- the interface: bad values are refused, --dry-run shows the list ---------------------------------
expect_exit 125 "--allow-host with a space in the name is refused" "$CORDON" --allow-host 'a b.test' -- true
expect_err "invalid value 'a b.test'" "the refusal names the value"
expect_exit 125 "--allow-host with port 0 is refused" "$CORDON" --allow-host x.test:0 -- true
expect_exit 125 "--allow-host with a bad range is refused" "$CORDON" --allow-host 10.0.0.0/40 -- true
expect_exit 125 "--allow-host with --net host is a conflict" "$CORDON" --allow-host x.test --net host -- true
expect_err 'conflicts with --net host' "the conflict is named"
expect_exit 125 "--allow-host with --net none on the command line is a conflict" \
  "$CORDON" --allow-host x.test --net none -- true
printf 'extends = ["default"]\nnet = "host"\nallow-host = ["a.test"]\n' >"$OUT/both.toml"
expect_exit 125 "a profile with net = host and allow-host is refused" "$CORDON" -p "$OUT/both.toml" -- true
expect_err 'net = "host" and allow-host' "the profile conflict is named"
printf 'extends = ["default"]\nallow-host = ["a.test"]\n' >"$OUT/allow.toml"
run "$CORDON" -p "$OUT/allow.toml" --net none --dry-run -- true
expect_no_out '^network:' "--net none on the command line overrides a profile's allow-host"
run "$CORDON" -p "$OUT/allow.toml" --dry-run -- true
expect_out '^ +a.test \(port 80, 443\)$' "a profile's allow-host list applies"
expect_exit 125 "a bad CORDON_TEST_RESOLVE entry is refused" env CORDON_TEST_RESOLVE=nonsense "$CORDON" --allow-host a.test -- true
expect_err 'CORDON_TEST_RESOLVE' "the bad entry is named"
run "$CORDON" --allow-host allowed.test:8080 --allow-host '*.example.test' --dry-run -- true
expect_out '^network: +filtered' "--dry-run: the network is filtered"
expect_out '^ +allowed.test:8080 \(port 8080\)$' "--dry-run lists an entry with its port"
expect_out '^ +\*.example.test \(port 80, 443\)$' "--dry-run lists a wildcard with the default ports"
expect_out '^ +HTTPS_PROXY=http://127.0.0.1:3128$' "--dry-run shows the proxy variables"
expect_out '^ +no_proxy=localhost,127.0.0.1,::1$' "--dry-run shows no_proxy"
run "$CORDON" --dry-run -- true
expect_no_out '^ +(HTTPS?_PROXY|https?_proxy)=' "without --allow-host the jail gets no proxy variables"
expect_no_out '^network:' "without --allow-host the network is not filtered"

# --- allowed: the name and, explicitly, the loopback address the test name maps to ------------------
export CORDON_TEST_RESOLVE="allowed.test=127.0.0.1,rebind.test=127.0.0.1,metadata.test=169.254.169.254"
ALLOW=(--allow-host "allowed.test:$HP" --allow-host "allowed.test:$SP" --allow-host "127.0.0.1:$HP"
  --allow-host "127.0.0.1:$SP")
jailed "curl -sS --max-time 10 http://allowed.test:$HP/hello.txt" "${ALLOW[@]}"
expect_out '^hello-from-outside$' "allowed: curl over HTTP through the proxy variables"
jailed "curl -sS --max-time 10 --cacert $CA https://allowed.test:$SP/hello.txt" "${ALLOW[@]}" --ro "$CA"
expect_out '^hello-from-outside$' "allowed: curl over HTTPS (CONNECT, TLS end to end)"
jailed "curl -sS --max-time 10 --noproxy '*' http://allowed.test:$HP/hello.txt" "${ALLOW[@]}"
expect_out '^hello-from-outside$' "allowed: curl --noproxy '*' over HTTP (fake resolver and forwarder)"
jailed "curl -sS --max-time 10 --noproxy '*' --cacert $CA https://allowed.test:$SP/hello.txt" "${ALLOW[@]}" --ro "$CA"
expect_out '^hello-from-outside$' "allowed: curl --noproxy '*' over HTTPS"
jailed "$PY -c 'import urllib.request; print(urllib.request.urlopen(\"http://allowed.test:$HP/hello.txt\", timeout=10).read().decode().strip())'" "${ALLOW[@]}"
expect_out '^hello-from-outside$' "allowed: python3 urllib"
jailed "git clone -q http://allowed.test:$HP/repo.git clone && git -C clone log --format=%s" "${ALLOW[@]}"
expect_out '^outside commit$' "allowed: git clone over HTTP"
jailed "getent hosts allowed.test" "${ALLOW[@]}"
expect_out '^127\.77\.0\.[0-9]+ +allowed.test' "allowed: the jail's resolver answers with an address of its own"

# --- denied: a name no entry names -------------------------------------------------------------------
jailed "curl -sS --max-time 10 -w '%{http_code}\n' http://denied.invalid:$HP/hello.txt" "${ALLOW[@]}" \
  --status-json "$OUT/status.json" --audit "$OUT/audit.log"
expect_out '^403$' "denied: the proxy answers 403"
expect_out 'refused denied.invalid:'"$HP"'.*--allow-host denied.invalid:'"$HP" "denied: the 403 names the host and the option"
expect_no_out 'hello-from-outside' "denied: nothing from the server"
expect_err "^cordon: network: refused denied.invalid:$HP " "denied: a line on stderr"
if grep -q '"kind":"network","host":"denied.invalid","port":'"$HP" "$OUT/status.json" 2>/dev/null; then
  ok "denied: the refusal is in the status JSON"
else not_ok "denied: the refusal is in the status JSON"; sed 's/^/#   /' "$OUT/status.json" 2>/dev/null | head -3; fi
if grep -q '"kind":"network","host":"denied.invalid".*"decision":"deny"' "$OUT/audit.log" 2>/dev/null; then
  ok "denied: the refusal is in the audit log"
else not_ok "denied: the refusal is in the audit log"; sed 's/^/#   /' "$OUT/audit.log" 2>/dev/null | head -3; fi
jailed "curl -sS --max-time 10 --cacert $CA https://denied.invalid:$SP/hello.txt; echo rc=\$?" "${ALLOW[@]}" --ro "$CA"
expect_out '^rc=56$' "denied over HTTPS: CONNECT is refused (curl: the proxy said 403)"
jailed "curl -sS --max-time 10 --noproxy '*' http://denied.invalid:$HP/hello.txt; echo rc=\$?" "${ALLOW[@]}"
expect_out '^rc=6$' "denied without the proxy: the name does not resolve"
expect_err '^cordon: network: refused denied.invalid \(name lookup' "denied without the proxy: a line on stderr"
jailed "$PY -c '
import urllib.request, urllib.error
try:
    urllib.request.urlopen(\"http://denied.invalid:$HP/hello.txt\", timeout=10)
except urllib.error.HTTPError as e:
    print(\"status\", e.code, e.read().decode().strip())
'" "${ALLOW[@]}"
expect_out '^status 403 cordon: network: refused denied.invalid' "denied: python3 urllib gets the 403 and its reason"
jailed "git clone -q http://denied.invalid:$HP/repo.git clone2; echo rc=\$?" "${ALLOW[@]}"
expect_out '^rc=128$' "denied: git clone fails"
expect_err '403' "denied: git reports the 403"
# A raw connection to the server's address: the jail's 127.0.0.1 is its own, and the forwarder on
# the allowed port passes on only connections to the addresses the resolver gave out, or to an
# address an entry names: allowed here (127.0.0.1:$HP), so a client without proxy support reaches
# the host's server as it would outside; with only a name allowed on the port, nothing.
RAW="$PY -c '
import socket
s = socket.create_connection((\"127.0.0.1\", $HP), timeout=5)
try:
    s.sendall(b\"GET /hello.txt HTTP/1.0\\r\\n\\r\\n\")
    got = b\"\"
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        got += chunk
    print(\"got\", repr(got))
except ConnectionResetError:
    print(\"got reset\")
'"
jailed "$RAW" "${ALLOW[@]}"
expect_out "hello-from-outside" "allowed: a raw connection to an address an entry names reaches the host's server"
jailed "curl -sS --max-time 10 --noproxy '*' http://127.0.0.1:$HP/hello.txt" "${ALLOW[@]}"
expect_out '^hello-from-outside$' "allowed: curl without the proxy to 127.0.0.1:PORT, as --allow-host 127.0.0.1:PORT says"
jailed "curl -sS --max-time 10 --noproxy '*' http://localhost:$HP/hello.txt" --allow-host "localhost:$HP"
expect_no_out 'hello-from-outside' "denied: --allow-host localhost:PORT does not open the host's loopback"
expect_err "refused 127\.0\.0\.1:$HP \(a loopback address no entry names: allow it with --allow-host 127\.0\.0\.1:$HP\)" \
  "and the refusal says which entry would"
jailed "$RAW" --allow-host "allowed.test:$HP"
expect_out "^got (b''|reset)$" "denied: a raw connection to an address no entry names gets nothing"
expect_no_out 'hello-from-outside' "denied: nothing of the server over a raw connection"
jailed "$PY -c '
import socket
try:
    socket.create_connection((\"192.0.2.1\", $HP), timeout=3)
    print(\"connected\")
except OSError as e:
    print(\"failed\", e.errno)
'" "${ALLOW[@]}"
expect_out '^failed ' "denied: no route out of the jail but the proxy"

# --- names that resolve into refused ranges (DNS rebinding, metadata) --------------------------------
REBIND=(--allow-host "rebind.test:$HP" --allow-host "metadata.test:$HP")
jailed "curl -sS --max-time 10 http://rebind.test:$HP/hello.txt" "${REBIND[@]}" --status-json "$OUT/status2.json"
expect_out 'refused rebind.test:'"$HP"' \(resolves to 127.0.0.1, a loopback address' "a name that resolves to 127.0.0.1 is refused"
expect_no_out 'hello-from-outside' "nothing reaches the loopback server through a rebound name"
if grep -q '"host":"rebind.test"' "$OUT/status2.json" 2>/dev/null; then ok "the rebinding refusal is in the status JSON"
else not_ok "the rebinding refusal is in the status JSON"; fi
jailed "curl -sS --max-time 10 http://metadata.test:$HP/latest/meta-data/" "${REBIND[@]}"
expect_out 'refused metadata.test:'"$HP"' \(resolves to 169.254.169.254, a cloud metadata address' \
  "a name that resolves to 169.254.169.254 is refused"
jailed "curl -sS --max-time 10 --noproxy '*' http://rebind.test:$HP/hello.txt; echo rc=\$?" "${REBIND[@]}"
expect_out '^rc=(52|56)$' "a rebound name through the forwarder gets nothing"
expect_no_out 'hello-from-outside' "nothing reaches the loopback server through the forwarder"
expect_err 'refused rebind.test:'"$HP"' \(resolves to 127.0.0.1' "the forwarder's refusal is on stderr"
jailed "NO_PROXY= no_proxy= curl -sS --max-time 10 http://127.0.0.1:$HP/hello.txt" "${REBIND[@]}"
expect_out 'refused 127.0.0.1:'"$HP"' \(the address is not allowed' "an address literal needs an address entry"

# --- the Landlock jail (cordon(1), ISOLATION): the proxy on the host's loopback, nothing else ------
# The refusal of user namespaces that Docker's default profile gives (cordon-test-nouserns);
# the jail may connect only to the address its HTTP_PROXY names, which the supervisor turns into
# a connection to its own proxy. Everything else, the servers' own ports too, is refused.
NOUSERNS=$(dirname "$CORDON")/cordon-test-nouserns
if (($(landlock_abi) < 2)); then
  skip "no Landlock jail on this kernel"
else
  WRAP=("$NOUSERNS")
  lljailed "curl -sS --max-time 10 http://allowed.test:$HP/hello.txt" "${ALLOW[@]}"
  expect_err 'running in a Landlock jail' "landlock: the run is in the Landlock jail"
  expect_out '^hello-from-outside$' "landlock: curl over HTTP through the proxy"
  lljailed "curl -sS --max-time 10 --cacert $CA https://allowed.test:$SP/hello.txt" "${ALLOW[@]}" --ro "$CA"
  expect_out '^hello-from-outside$' "landlock: curl over HTTPS through the proxy (CONNECT)"
  lljailed "curl -sS --max-time 10 -w '%{http_code}\n' http://denied.invalid:$HP/hello.txt" "${ALLOW[@]}"
  expect_out '^403$' "landlock: a host not allowed gets the proxy's 403"
  expect_err "^cordon: network: refused denied.invalid:$HP " "landlock: and a line on stderr"
  lljailed "$PY - <<'PYEOF'
import errno, socket
def attempt(name, fn):
    try:
        fn(); print(name, 'done')
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
attempt('direct', lambda: socket.create_connection(('127.0.0.1', $HP), timeout=5))
attempt('v6', lambda: socket.create_connection(('::1', $HP), timeout=5))
attempt('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
attempt('bind', lambda: socket.socket().bind(('127.0.0.1', 0)))
attempt('listen', lambda: socket.socket().listen(1))
attempt('fastopen', lambda: socket.socket().sendto(b'x', 0x20000000, ('127.0.0.1', $HP)))
attempt('proxy', lambda: socket.create_connection(('127.0.0.1', 3128), timeout=5))
# From a thread other than the main one (the supervisor takes the thread's socket).
import threading
t = threading.Thread(target=attempt, args=('thread', lambda: socket.create_connection(('127.0.0.1', 3128))))
t.start(); t.join()
# A blocking socket whose handshake never ends (a TCP MD5 key the proxy has not: its SYNs are
# dropped) does not hold cordon up: its connect is answered at once, the wait is the jail's.
import struct
def md5():
    s = socket.socket()
    addr = struct.pack('<HH4s120x', socket.AF_INET, 0, socket.inet_aton('127.0.0.1'))
    s.setsockopt(socket.IPPROTO_TCP, 14, addr + struct.pack('<BBHi80s', 0, 0, 4, 0, b'key!'))
    s.connect(('127.0.0.1', 3128))
attempt('md5', md5)
PYEOF" "${ALLOW[@]}"
  expect_out '^direct EACCES$' "landlock: a direct connection to an allowed host's server is refused"
  expect_out '^v6 (EACCES|EADDRNOTAVAIL|ENETUNREACH)$' "landlock: so is one over IPv6"
  expect_out '^udp EACCES$' "landlock: no UDP socket (no resolver to ask)"
  expect_out '^bind EACCES$' "landlock: no bind"
  expect_out '^listen EACCES$' "landlock: no listen"
  expect_out '^fastopen EACCES$' "landlock: no TCP Fast Open (a connect by sendto)"
  expect_out '^proxy done$' "landlock: the address HTTP_PROXY names connects"
  expect_out '^thread done$' "landlock: so does a connect from another thread"
  expect_out '^md5 done$' "landlock: a handshake the jail makes endless does not make cordon wait"
  lljailed "curl -sS --max-time 10 --noproxy '*' http://allowed.test:$HP/hello.txt; echo rc=\$?" "${ALLOW[@]}"
  expect_out '^rc=(6|7)$' "landlock: a client that ignores the proxy variables gets nothing"
  # The proxy's own port on the host's loopback serves the jail's connections only: another
  # program that finds it (ss) gets its connection closed.
  "$NOUSERNS" "$CORDON" -q "${ALLOW[@]}" -- sleep 30 </dev/null >/dev/null 2>&1 &
  jail_pid=$!
  real=""
  for _ in $(seq 100); do
    real=$(ss -ltnpH 2>/dev/null | grep "pid=$jail_pid," | grep -o '127\.0\.0\.1:[0-9]*' | head -1)
    [[ -n $real ]] && break
    sleep 0.1
  done
  if [[ -n $real ]]; then
    run curl -sS --max-time 10 --noproxy '' -x "http://$real" "http://allowed.test:$HP/hello.txt"
    expect_no_out 'hello-from-outside' "landlock: the proxy's port serves no program outside the jail ($real)"
  else
    not_ok "landlock: the proxy's listener of cordon $jail_pid was not found"
  fi
  kill "$jail_pid" 2>/dev/null
  wait "$jail_pid" 2>/dev/null
  expect_no_out 'hello-from-outside' "landlock: nothing reaches the server past the proxy"
  WRAP=()
fi

unset CORDON_TEST_RESOLVE
stop_server
finish

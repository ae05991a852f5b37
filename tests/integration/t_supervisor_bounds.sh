#!/usr/bin/env bash
# What the jail can make the supervisor hold, print or write is bounded (cordon(1), BOUNDS): the
# supervisor runs outside the jail's cgroup, so --memory does not limit it. Each flood below
# comes from inside the jail (denied execs with 1 MiB of argv, refused DNS names, an --audit log
# of large argv); the supervisor's peak RSS (GNU time's, which is the largest of cordon and the
# jail's processes it reaped: an upper bound), its stderr and the status JSON must stay small,
# and the JSON must be valid and count what it left out. The denied execs target a read-only
# /usr from a throwaway project with a marker, behind the jail guard; the refused names are
# *.invalid and never leave the jail's resolver.
source "$TESTLIB"

TIME=/usr/bin/time
PY=/usr/bin/python3
for tool in "$TIME" "$PY"; do
  if [[ ! -x $tool ]]; then
    echo "Bail out! $tool is missing (scripts/install-deps installs it)"
    finish
    exit 1
  fi
done
run "$CORDON" --dry-run -- true
if ! grep -q "^exec checks: on" "$OUT/out"; then
  echo "# skip: exec-time checks are not available here: $(grep -i 'exec checks' "$OUT/out")"
  exit 77
fi

MAX_RSS_KIB=$((64 * 1024))
# A sanitizer build (CORDON_SANITIZE, set by the build) keeps shadow memory and a quarantine of
# freed blocks: 413 MiB for the first flood, where the unbounded supervisor took gigabytes. Its
# bound is 768 MiB, and it floods less (the same bounds are crossed: more than 100 denials).
if [[ -n ${CORDON_SANITIZE:-} ]]; then
  MAX_RSS_KIB=$((768 * 1024))
fi
MAX_ERR=$((256 * 1024))
MAX_STATUS=$((2 * 1024 * 1024))

# The jail works: the guard passes and a plain command runs.
jailed "echo jailed"
[[ $rc -eq 0 && $(cat "$OUT/out") == jailed ]] && ok "the jail runs a command behind the guard" \
  || not_ok "the jail: exit $rc: $(head -3 "$OUT/err")"

# measured DESCRIPTION SCRIPT [cordon options...]: SCRIPT in the jail under GNU time, with the
# status JSON in $OUT/status.json; then checks peak RSS, stderr and status sizes, valid JSON.
measured() {
  local desc=$1 script=$2
  shift 2
  rc=0
  "$TIME" -f %M -o "$OUT/rss" "$CORDON" --status-json "$OUT/status.json" "$@" -- /bin/sh -c "$GUARD; $script" \
    >"$OUT/out" 2>"$OUT/err" </dev/null || rc=$?
  if [[ $rc -eq 99 ]]; then
    echo "Bail out! the jail is not working (guard failed)"
    finish
    exit 1
  fi
  local rss err status
  rss=$(tail -1 "$OUT/rss")
  err=$(stat -c %s "$OUT/err")
  status=$(stat -c %s "$OUT/status.json" 2>/dev/null || echo 0)
  echo "# $desc: exit $rc, peak RSS ${rss} KiB, stderr $err bytes, status JSON $status bytes"
  [[ $rss =~ ^[0-9]+$ && $rss -lt $MAX_RSS_KIB ]] && ok "$desc: peak RSS ${rss} KiB < $MAX_RSS_KIB KiB" \
    || not_ok "$desc: peak RSS ${rss} KiB"
  [[ $err -lt $MAX_ERR ]] && ok "$desc: stderr $err bytes < $MAX_ERR" || not_ok "$desc: stderr $err bytes"
  [[ $status -gt 0 && $status -lt $MAX_STATUS ]] && ok "$desc: status JSON $status bytes < $MAX_STATUS" \
    || not_ok "$desc: status JSON $status bytes"
  if "$PY" -m json.tool "$OUT/status.json" >/dev/null 2>&1; then ok "$desc: the status JSON is valid"; else
    not_ok "$desc: the status JSON is not valid JSON: $(head -c 300 "$OUT/status.json")"
  fi
}

# json_field EXPR: a Python expression over the status JSON (s).
json_field() { "$PY" -c "import json,sys; s=json.load(open(sys.argv[1])); print($1)" "$OUT/status.json" 2>/dev/null; }

proj=$(mktemp -d "$WORK/proj.XXXXXX")
echo keep >"$proj/marker"
cd "$proj" || exit 99

# --- denied execs, each with 1 MiB of argv -----------------------------------------------------
# Ten words of 100 kB after the path: the policy sees them all (the denial stays a denial), the
# records keep a bounded start of them.
EXECS=200
[[ -n ${CORDON_SANITIZE:-} ]] && EXECS=120
FLOOD="big=\$(head -c 100000 /dev/zero | tr '\\0' a); p=\$(echo /proc/self/root); i=0
while [ \$i -lt $EXECS ]; do
  rm -rf \"\$p/usr\" \$big \$big \$big \$big \$big \$big \$big \$big \$big \$big 2>/dev/null
  i=\$((i + 1))
done; echo flooded"
measured "$EXECS denied execs of 1 MiB" "$FLOOD"
[[ -e $proj/marker ]] && ok "denied execs: the project is intact" || not_ok "denied execs: the marker is gone"
[[ $rc -eq 0 && $(cat "$OUT/out") == flooded ]] && ok "denied execs: the run went on after each denial" \
  || not_ok "denied execs: exit $rc, stdout $(head -c 200 "$OUT/out")"
kept=$(json_field 'len([d for d in s["denials"] if d.get("decision") == "deny"])')
dropped=$(json_field 's.get("denials_dropped")')
truncated=$(json_field 'all(d.get("truncated") is True and d.get("argv_bytes", 0) > 1000000 for d in s["denials"])')
# A PATH search goes on past a denied exec (sh tries /usr/bin/rm, then /bin/rm): each loop's
# exec may be denied more than once.
if [[ $kept == 100 && $dropped =~ ^[0-9]+$ && $((kept + dropped)) -ge $EXECS ]]; then
  ok "denied execs: the status JSON keeps $kept denials and counts $dropped dropped"
else
  not_ok "denied execs: kept '$kept', dropped '$dropped' of at least $EXECS"
fi
[[ $truncated == True ]] && ok "denied execs: each kept denial is marked truncated with its argv's size" \
  || not_ok "denied execs: truncation markers: $truncated"
lines=$(grep -c "^cordon: denied: " "$OUT/err")
if [[ $lines -le 21 ]] && grep -Eq "^cordon: denied: \.\.\. and [0-9]+ more" "$OUT/err"; then
  ok "denied execs: $lines lines on stderr and a summary of the rest"
else
  not_ok "denied execs: $lines denial lines on stderr: $(tail -2 "$OUT/err" | head -c 300)"
fi

# --- --audit: every exec is a record, each bounded ----------------------------------------------
AUDITED=50
AUDIT="big=\$(head -c 100000 /dev/zero | tr '\\0' a); p=\$(echo /proc/self/root); i=0
while [ \$i -lt $AUDITED ]; do
  /bin/true \$big \$big \$big \$big \$big \$big \$big \$big \$big \$big
  rm -rf \"\$p/usr\" \$big \$big \$big \$big \$big \$big \$big \$big \$big \$big 2>/dev/null
  i=\$((i + 1))
done"
measured "--audit of $AUDITED allowed and $AUDITED denied execs of 1 MiB" "$AUDIT" --audit "$OUT/audit.jsonl"
longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$OUT/audit.jsonl")
records=$(grep -c '"argv_bytes":' "$OUT/audit.jsonl")
if [[ $longest -le 40000 && $records -ge $((2 * AUDITED)) ]]; then
  ok "--audit: $records truncated records, the longest $longest bytes"
else
  not_ok "--audit: $records truncated records, the longest $longest bytes"
fi
if "$PY" -c 'import json,sys
for l in open(sys.argv[1]): json.loads(l)' "$OUT/audit.jsonl" 2>/dev/null; then
  ok "--audit: every record is valid JSON"
else
  not_ok "--audit: a record is not valid JSON"
fi

# --- refused DNS names -----------------------------------------------------------------------------
NAMES=10000
[[ -n ${CORDON_SANITIZE:-} ]] && NAMES=2000
DNS="$PY -c '
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
answered = 0
for i in range($NAMES):
    name = b\"\".join(bytes([len(l)]) + l for l in (b\"n%d\" % i, b\"flood\", b\"invalid\")) + b\"\\0\"
    s.sendto(struct.pack(\">HHHHHH\", i & 0xffff, 0x100, 1, 0, 0, 0) + name + struct.pack(\">HH\", 1, 1), (\"127.0.0.1\", 53))
    try:
        s.recv(512)
        answered += 1
    except socket.timeout:
        pass
print(answered)
'"
measured "$NAMES refused DNS names" "$DNS" --allow-host allowed.test --audit "$OUT/net-audit.jsonl"
answered=$(tail -1 "$OUT/out")
[[ $answered =~ ^[0-9]+$ && $answered -ge $((NAMES * 9 / 10)) ]] && ok "refused names: $answered of $NAMES answered" \
  || not_ok "refused names: $answered of $NAMES answered"
net_kept=$(json_field 'len([d for d in s["denials"] if d.get("kind") == "network"])')
net_dropped=$(json_field 's.get("denials_dropped")')
if [[ $net_kept =~ ^[0-9]+$ && $net_dropped =~ ^[0-9]+$ && $net_kept -le 100 && $net_dropped -gt 0 &&
  $((net_kept + net_dropped)) -ge $answered ]]; then
  ok "refused names: the status JSON keeps $net_kept and counts $net_dropped dropped"
else
  not_ok "refused names: kept '$net_kept', dropped '$net_dropped'"
fi
net_lines=$(grep -c "^cordon: network: refused" "$OUT/err")
if [[ $net_lines -le 20 ]] && grep -Eq "^cordon: network: \.\.\. and [0-9]+ more" "$OUT/err"; then
  ok "refused names: $net_lines lines on stderr and a summary of the rest"
else
  not_ok "refused names: $net_lines lines on stderr: $(tail -2 "$OUT/err" | head -c 300)"
fi
audited=$(grep -c '"via":"dns"' "$OUT/net-audit.jsonl")
[[ $audited -ge $answered ]] && ok "refused names: --audit records each of them ($audited)" \
  || not_ok "refused names: --audit has $audited records"

# The same name refused again and again is one record with a count.
measured "one refused name 500 times" "$PY -c '
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
for i in range(500):
    s.sendto(struct.pack(\">HHHHHH\", i, 0x100, 1, 0, 0, 0) + b\"\\x04same\\x07invalid\\0\" + struct.pack(\">HH\", 1, 1), (\"127.0.0.1\", 53))
    s.recv(512)
'" --allow-host allowed.test
count=$(json_field '[d.get("count") for d in s["denials"] if d.get("kind") == "network"]')
[[ $count == "[500]" ]] && ok "a repeated refusal is one record with its count" || not_ok "repeated refusal: $count"

cd "$WORK" || exit 99
finish

#!/usr/bin/env bash
# SPEC §7 on a host whose cgroup v2 lacks the memory/pids/cpu controllers (they are bound to
# cgroup v1, as on the CI machine): a requested limit is exit 125 with why and what to do,
# --limits best-effort warns and runs, and without limits cordon runs normally. cordon only
# reads /sys/fs/cgroup here: the listing of the cgroup2 mount is the same before and after.
# Enforcement itself is tested in the VM (tests/vm).
source "$TESTLIB"

v1_memory=$(awk '$1 == "memory" && $2 != 0 && $4 == 1 {print "yes"}' /proc/cgroups)
if [[ $v1_memory != yes ]]; then
  echo "SKIP: the memory controller is not bound to a cgroup v1 hierarchy on this kernel, so cgroup v2 may"
  echo "      offer it; this file tests the host without controllers (tests/vm covers enforcement)"
  exit 77
fi
cg2=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
listing() { [[ -n $cg2 ]] && find "$cg2" -maxdepth 3 -type d 2>/dev/null | sort; }
before=$(listing)

expect_exit 125 "--memory without a memory controller is refused" "$CORDON" --memory 64M -- touch "$WORK/ran"
expect_err "^cordon: --memory: cannot apply the limit: " "the message names --memory and says it cannot be applied"
# The real cause, the same for root and the user: not delegation, not "run as root".
expect_err "memory controller is bound to a cgroup v1 hierarchy on this host" "the message names the real cause"
expect_err "hint: .*the same for root and every user.*systemd.unified_cgroup_hierarchy=1" \
  "the hint says how to get cgroup v2 controllers, for everyone"
expect_no_err "run as root|not delegated" "and does not send the user to root, who would fail too"
expect_err "hint: .*--limits best-effort" "the hint offers --limits best-effort"
if [[ -e $WORK/ran ]]; then not_ok "the command ran despite the error"; else ok "nothing ran after the error"; fi

expect_exit 125 "--pids is refused the same way" "$CORDON" --pids 10 -- true
expect_err "^cordon: --pids: cannot apply the limit" "the message names --pids"
expect_exit 125 "--cpus is refused the same way" "$CORDON" --cpus 0.5 -- true
expect_err "^cordon: --cpus: cannot apply the limit" "the message names --cpus"

expect_exit 0 "--limits best-effort runs the command" "$CORDON" --limits best-effort --memory 64M --pids 10 -- echo ran
expect_out "^ran$" "best-effort: the command's output"
expect_err "^cordon: warning: --memory not applied \(--limits best-effort\)" "best-effort warns about --memory"
expect_err "^cordon: warning: --pids not applied \(--limits best-effort\)" "best-effort warns about --pids"
expect_exit 0 "-q silences the best-effort warning" "$CORDON" -q --limits best-effort --memory 64M -- true
if [[ -s $OUT/err ]]; then not_ok "-q: stderr is not empty: $(head -2 "$OUT/err")"; else ok "-q: nothing on stderr"; fi

# Profile keys behave like the options.
printf 'memory = "64M"\n' > "$WORK/mem.toml"
expect_exit 125 "a profile's memory key is refused the same way" "$CORDON" -p default -p "$WORK/mem.toml" -- true
expect_err "^cordon: --memory: cannot apply the limit" "the profile's limit is reported as --memory"
printf 'memory = "64M"\nlimits = "best-effort"\n' > "$WORK/mem.toml"
expect_exit 0 "a profile's limits = best-effort runs" "$CORDON" -p default -p "$WORK/mem.toml" -- true
expect_err "warning: --memory not applied" "the profile's best-effort warns"
rm -f "$WORK/mem.toml"

# No limit asked: cordon does not look for a cgroup at all, and the status has its numbers.
expect_exit 0 "without limits the jail runs normally" "$CORDON" --status-json "$WORK/s.json" -- /bin/sh -c 'echo fine'
expect_out "^fine$" "the command's output"
if [[ ! -s $OUT/err ]]; then ok "no warning without limits"; else not_ok "stderr: $(head -2 "$OUT/err")"; fi
if grep -q '"reason":"exited"' "$WORK/s.json" && grep -q '"cpu_ms":' "$WORK/s.json"; then ok "status without a cgroup"
else not_ok "status: $(cat "$WORK/s.json")"; fi
rm -f "$WORK/s.json"

expect_exit 0 "--dry-run shows the limits and the warning" "$CORDON" --dry-run --limits best-effort --memory 64M --cpus 1.5 -- true
expect_out "memory 67108864 bytes \(swap 0\)" "dry-run: memory limit with swap off"
expect_out "cpu.max 150000 100000" "dry-run: cpu.max for 1.5 CPUs"
expect_out "^warning: +--memory" "dry-run: the best-effort warning"

if [[ $(listing) == "$before" ]]; then ok "nothing was created under $cg2"; else not_ok "the cgroup2 tree changed"; fi
finish

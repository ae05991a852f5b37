#!/usr/bin/env bash
# cordon doctor: reports what this host supports; here the default jail must work.
source "$TESTLIB"
expect_exit 0 "cordon doctor succeeds where the jail works" "$CORDON" doctor
expect_out "^ok +default jail: " "doctor ran the default jail"
expect_out "^ok +user namespaces: " "doctor checked user namespaces"
expect_out "^(ok|warn) +cgroup v2: |^warn +cgroup v2" "doctor reported cgroup v2"
expect_out "^(ok +landlock: ABI [0-9]+: |warn +landlock: .*runs without)" "doctor reported Landlock, never as a failure"
run "$CORDON" doctor --json
/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert {x["check"] for x in d} >= {"kernel","user namespaces","seccomp","default jail"}; assert all(x["status"] in ("ok","warn","fail") for x in d)' "$OUT/out" \
  && ok "doctor --json is a JSON array of checks" || not_ok "doctor --json: $(head -c 300 "$OUT/out")"
cp "$OUT/out" "$OUT/doctor.json"

# cordon --version: a line per feature, the same text as doctor's finding of that name.
expect_exit 0 "--version" "$CORDON" --version
expect_out "^seccomp user notification: (not )?compiled in; this host: " "--version reports seccomp user notification"
expect_out "^limits via cgroupfs: compiled in; this host: " "--version reports the cgroupfs backend"
expect_out "^limits via systemd: compiled in; this host: " "--version reports the systemd backend"
expect_out "^Landlock: (not )?compiled in; this host: (ABI [0-9]+|no )" "--version reports the Landlock ABI"
/usr/bin/python3 - "$OUT/out" "$OUT/doctor.json" <<'PY' && ok "--version agrees with doctor --json" || not_ok "--version and doctor --json disagree"
import json, sys
doctor = {x["check"]: x["detail"] for x in json.load(open(sys.argv[2]))}
for line in open(sys.argv[1]).read().splitlines()[1:]:
    name, summary = line.split(": ", 1)
    if name == "Landlock":
        # doctor's landlock line says more (what the jail does with the ABI); the ABI must agree.
        import re
        abi = lambda s: (re.search(r"ABI ([0-9]+)", s) or [None, None])[1]
        assert abi(summary) == abi(doctor["landlock"]), (line, doctor["landlock"])
    elif name.startswith("limits via "):
        # doctor says which controllers a backend offers; --version adds that it is compiled in.
        if name in doctor:  # (without a cgroup2 mount doctor stops before the backends)
            assert summary == "compiled in; this host: " + doctor[name], (line, doctor[name])
    else:
        assert summary == doctor[name], (line, doctor[name])
PY

# The AppArmor profile: found where the data directory ships it (share/cordon/apparmor).
run "$CORDON" doctor
expect_out "^(ok|warn) +AppArmor profile: " "doctor reports cordon's AppArmor profile"
if [[ $(cat /sys/module/apparmor/parameters/enabled 2>/dev/null) != Y ]]; then
  expect_out "^ok +AppArmor profile: AppArmor is not active here; (installed at /etc/apparmor.d/usr.bin.cordon|shipped at $STAGE/share/cordon/apparmor/usr.bin.cordon, not installed)$" \
    "without AppArmor: nothing to do, and where the profile is"
fi
# A host whose memory controller is bound to cgroup v1 (this development VM): the cause holds for
# root and every user alike, so doctor's fix names it, and never asks for root or a delegation.
if awk '$1 == "memory" && $2 != 0 { found = 1 } END { exit !found }' /proc/cgroups; then
  expect_out "^ +fix: the memory.* bound to cgroup v1 on this host" "doctor names cgroup v1 as the limits' cause"
  expect_no_out "fix: run as root" "and does not send the caller to root"
else
  skip "doctor's cgroup v1 cause: the memory controller is not on cgroup v1 on this host"
fi
expect_exit 125 "doctor rejects unknown arguments" "$CORDON" doctor --bogus
expect_err "^cordon: doctor: unknown argument" "and says so"
finish

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
expect_exit 125 "doctor rejects unknown arguments" "$CORDON" doctor --bogus
expect_err "^cordon: doctor: unknown argument" "and says so"
finish

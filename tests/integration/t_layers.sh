#!/usr/bin/env bash
# The jail proves its layers from inside (cordon(1), LAYERS): after its last step and before
# exec, the payload asks the kernel whether seccomp, no_new_privs, the capability sets, the
# read-only root and the absence of a route out are what the jail claims; --status-json carries
# the result, and --require-layers makes a layer that is not engaged exit 125 before the command.
source "$TESTLIB"

layers() { python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])).get("layers")))' "$1"; }
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

expect_exit 0 "a default run" "$CORDON" --status-json "$SCRATCH/s.json" -- true
[[ $(field "$SCRATCH/s.json" 'd["layers"]["verified"]') == True ]] && ok "its layers verify from inside" ||
  not_ok "layers: $(layers "$SCRATCH/s.json")"
[[ $(field "$SCRATCH/s.json" 'sorted(d["layers"]["checked"])') == \
  "$(python3 -c 'print(sorted(["seccomp","no_new_privs","capabilities","readonly_root","no_network","landlock"]))')" ]] &&
  ok "seccomp, no_new_privs, capabilities, read-only root, no network and Landlock were checked" ||
  not_ok "checked: $(layers "$SCRATCH/s.json")"
[[ $(field "$SCRATCH/s.json" 'd["layers"].get("seccomp_filters", 0) >= 1') == True ]] &&
  ok "the seccomp filters are counted" || not_ok "no filter count: $(layers "$SCRATCH/s.json")"

expect_exit 0 "--net host" "$CORDON" --net host --status-json "$SCRATCH/s.json" -- true
[[ $(field "$SCRATCH/s.json" '"no_network" in d["layers"]["checked"]') == False ]] &&
  ok "--net host claims no isolated network, and none is checked" || not_ok "$(layers "$SCRATCH/s.json")"

expect_exit 0 "--require-layers with every layer engaged runs" "$CORDON" --require-layers -- echo ran
expect_out "^ran$" "and the command ran"

# A layer that is not engaged (the tests' hook marks it failed; the jail is built as ever).
rm -f "$WORK/ran-anyway"
CORDON_TEST_LAYER_FAIL=no_network run "$CORDON" --require-layers --status-json "$SCRATCH/s.json" -- \
  touch "$WORK/ran-anyway"
[[ $rc -eq 125 ]] && ok "--require-layers: a layer not engaged is exit 125" || not_ok "exit $rc"
[[ ! -e $WORK/ran-anyway ]] && ok "and the command never ran" || not_ok "the command ran"
expect_err "require-layers: checked from inside, before the command, these layers are not engaged: no_network" \
  "the message names the layer"
[[ $(field "$SCRATCH/s.json" 'd["reason"], d["layers"]["verified"], d["layers"]["failed"]') == \
  "('setup-error', False, ['no_network'])" ]] && ok "the status JSON records it" ||
  not_ok "status: $(cat "$SCRATCH/s.json")"
CORDON_TEST_LAYER_FAIL=capabilities run "$CORDON" --status-json "$SCRATCH/s.json" -- echo ran
expect_out "^ran$" "without --require-layers a failed check is reported, and the command runs"
[[ $(field "$SCRATCH/s.json" 'd["layers"]["failed"]') == "['capabilities']" ]] && ok "reported in the status JSON" ||
  not_ok "status: $(cat "$SCRATCH/s.json")"
printf 'require-layers = true\n' > "$SCRATCH/req.toml"
CORDON_TEST_LAYER_FAIL=seccomp run "$CORDON" -p default -p "$SCRATCH/req.toml" -- echo RAN
[[ $rc -eq 125 ]] && ok "the profile key require-layers does the same" || not_ok "profile key: exit $rc"
expect_no_out "RAN" "and nothing ran"

# The Landlock jail: no namespaces, so no read-only root or network of its own to check.
"$CORDON" --isolation landlock --dry-run -- true >/dev/null 2>&1 && have_landlock=1 || have_landlock=0
if ((have_landlock)); then
  expect_exit 0 "a Landlock jail" "$CORDON" --isolation landlock --status-json "$SCRATCH/s.json" -- true
  [[ $(field "$SCRATCH/s.json" 'sorted(d["layers"]["checked"]), d["layers"]["verified"]') == \
    "(['capabilities', 'landlock', 'no_new_privs', 'seccomp'], True)" ]] &&
    ok "the Landlock jail checks seccomp, no_new_privs, capabilities and its domain" ||
    not_ok "landlock layers: $(layers "$SCRATCH/s.json")"
else
  skip "this kernel gives no Landlock jail (--isolation landlock refused)"
fi

finish

#!/usr/bin/env bash
# usage: check.sh LOG MODE ID — one VM check as a CTest result: passes on "ok MODE ID", fails
# on "not ok MODE ID" (printing its diagnostics) or when the check never ran.
set -u
log=$1 mode=$2 id=$3
if grep -q "^CORDON-VM: ok $mode $id - " "$log" 2>/dev/null; then
  grep "^CORDON-VM: ok $mode $id - " "$log"
  exit 0
fi
if grep -q "^CORDON-VM: not ok $mode $id - " "$log" 2>/dev/null; then
  awk -v key="CORDON-VM: not ok $mode $id - " 'index($0, key) == 1 {p = 1; print; next}
       p && /^CORDON-VM: #/ {print; next} {p = 0}' "$log"
  exit 1
fi
echo "check '$mode $id' did not run in the VM (see vm.boot's output)"
exit 1

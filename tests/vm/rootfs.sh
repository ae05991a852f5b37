#!/bin/sh
# The jail on a root that cannot be pivoted away from: run by tests/vm/init in its first stage,
# on the initramfs itself (rootfs), before it switches to a tmpfs. usage: rootfs.sh MODE
# (rootfs: as root; rootfs-user: as uid 1000). Prints "CORDON-VM: [not ]ok MODE ID - ...".
MODE=$1
. "$(dirname "$0")/harness.sh"

run $CORDON --no-policy -- /bin/sh -c 'grep "^Name:" /proc/1/status; echo inside'
if [ $rc -eq 0 ] && grep -q '^inside$' "$T/out" && grep -q 'cordon' "$T/out"; then
  pass runs "the default jail runs on an initramfs root, with cordon's init as pid 1"
else fail runs "exit $rc"; fi

# Nothing of the initramfs beyond what the profile exposes: its /init and /tests are not there,
# no mount of it is listed, / is read-only and the workdir writable.
run $CORDON --no-policy -- /bin/sh -c '
  [ -e /init ] && echo SEES-INIT; [ -e /tests ] && echo SEES-TESTS
  awk '\''$5 == "/"'\'' /proc/self/mountinfo | grep -q rootfs && echo SEES-ROOTFS
  touch /evil 2>/dev/null && echo ROOT-WRITABLE
  touch ./made && echo workdir-ok; true'
if [ $rc -eq 0 ] && grep -q '^workdir-ok$' "$T/out" && ! grep -q '^SEES-\|^ROOT-WRITABLE' "$T/out"; then
  pass unreachable "the old root is out of reach: no /init, no /tests, / is not the initramfs and is read-only"
else fail unreachable "exit $rc"; fi
rm -f ./made

run $CORDON --no-policy --no-profile --ro-bind /bin /bin --proc /proc -- /bin/sh -c 'ls /; echo done'
if [ $rc -eq 0 ] && grep -q '^done$' "$T/out" && ! grep -q '^init$\|^tests$' "$T/out"; then
  pass bwrap-style "a bwrap-style jail too"
else fail bwrap-style "exit $rc"; fi

# A protected path that is a symlink is covered, not followed (a mount on the link itself: the
# new mount API allows it; checked on this kernel too).
mkdir -p sym && ln -sf /etc/passwd sym/.envrc
run sh -c "cd sym && exec $CORDON --no-policy -- /bin/sh -c 'cat .envrc | wc -c; echo x >> .envrc; echo w=\$?'"
if [ $rc -eq 0 ] && grep -q '^0$' "$T/out" && grep -q '^w=[1-9]' "$T/out" && [ -L sym/.envrc ]; then
  pass symlink-covered "a symlinked .envrc is covered by an empty read-only file, the link kept"
else fail symlink-covered "exit $rc"; fi
rm -rf sym

#!/usr/bin/env bash
# usage: run-vm.sh CORDON_BINARY VMHELPER_BINARY OUTDIR
# The systemd flavour of the VM suite: boots Debian's kernel and initrd on the cached Debian 12
# systemd image (build-image.sh; a qcow2 overlay keeps the cache pristine) with a second disk
# holding cordon and the test scripts, and leaves the serial console in OUTDIR/vm.log.
set -euo pipefail
cordon=$(readlink -f "$1") helper=$(readlink -f "$2") out=$3
here=$(dirname "$(readlink -f "$0")")
budget=${CORDON_VM_TIMEOUT:-240}
cache=${CORDON_VM_CACHE:-/var/cache/cordon-vm}
kernel=${CORDON_VM_KERNEL:-$(ls /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -1)}
initrd=${kernel/vmlinuz/initrd.img}
if [[ -z $kernel || ! -r $kernel || ! -r $initrd ]]; then
  echo "tests/vm/systemd: no Debian kernel and initrd in /boot (scripts/install-deps installs linux-image-amd64)" >&2
  exit 1
fi
for tool in qemu-system-x86_64 qemu-img mke2fs; do
  command -v $tool >/dev/null || { echo "tests/vm/systemd: $tool is missing (scripts/install-deps)" >&2; exit 1; }
done
mkdir -p "$out"
start=$(date +%s)
img=$("$here/build-image.sh" "$cache")
echo "tests/vm/systemd: image $img ready after $(($(date +%s) - start))s"

stage=$out/stage
rm -rf "$stage" && mkdir -p "$stage/bin" "$stage/share"
cp "$cordon" "$stage/bin/cordon"
cp "$helper" "$stage/bin/vmhelper"
cp -r "$(dirname "$cordon")/../share/cordon" "$stage/share/"
cp "$here/run.sh" "$here/user-test.sh" "$stage/"
chmod -R a+rX "$stage"
chmod 0755 "$stage/run.sh" "$stage/user-test.sh"
rm -f "$out/test.img" "$out/root.qcow2"
# Sized from what it holds (the RelWithDebInfo cordon alone is tens of MiB), with room to spare.
mke2fs -q -t ext4 -L cordontest -d "$stage" "$out/test.img" "$(($(du -sm "$stage" | cut -f1) * 2 + 32))M"
qemu-img create -q -f qcow2 -F raw -b "$img" "$out/root.qcow2"

log=$out/vm.log
boot=$(date +%s)
rc=0
timeout --foreground -k 5 "$budget" qemu-system-x86_64 -accel tcg -m 1024 -smp 2 -nographic -no-reboot \
  -kernel "$kernel" -initrd "$initrd" \
  -drive file="$out/root.qcow2",if=virtio,format=qcow2 -drive file="$out/test.img",if=virtio,format=raw \
  -append "root=/dev/vda rw console=ttyS0 quiet loglevel=1 systemd.show_status=0 panic=-1" \
  </dev/null >"$log" 2>&1 || rc=$?
tr -d '\r' < "$log" > "$log.tmp" && mv "$log.tmp" "$log"
grep '^CORDON-VM:' "$log" || true
echo "tests/vm/systemd: VM ran for $(($(date +%s) - boot))s (budget ${budget}s), qemu exit $rc"
if ! grep -q '^CORDON-VM: done' "$log"; then
  echo "tests/vm/systemd: the VM did not finish; last console lines:"
  tail -40 "$log"
  exit 1
fi
! grep -q '^CORDON-VM: not ok' "$log"

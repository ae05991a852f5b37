#!/usr/bin/env bash
# usage: run-vm.sh CORDON_BINARY VMHELPER_BINARY OUTDIR
# Builds an initramfs (busybox-static, cordon with the shared libraries ldd lists, its profiles
# and policies, the test helper and scripts), boots Debian's kernel on it under
# qemu-system-x86_64 with TCG and leaves the serial console in OUTDIR/vm.log. Succeeds when the
# VM finished and no check failed; tests/vm/check.sh reads the individual results.
set -euo pipefail
cordon=$(readlink -f "$1") helper=$(readlink -f "$2") out=$3
here=$(dirname "$(readlink -f "$0")")
budget=${CORDON_VM_TIMEOUT:-170}  # seconds; the whole VM suite must stay under 3 minutes

kernel=${CORDON_VM_KERNEL:-$(ls /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -1)}
if [[ -z $kernel || ! -r $kernel ]]; then
  echo "tests/vm: no Debian kernel in /boot (scripts/install-deps installs linux-image-amd64)" >&2
  exit 1
fi
for tool in qemu-system-x86_64 cpio; do
  command -v $tool >/dev/null || { echo "tests/vm: $tool is missing (scripts/install-deps)" >&2; exit 1; }
done
[[ -x /bin/busybox ]] && ! ldd /bin/busybox >/dev/null 2>&1 ||
  { echo "tests/vm: /bin/busybox is missing or not static (install busybox-static)" >&2; exit 1; }

root=$out/initramfs
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,etc,opt/cordon/bin,tests,root,home,work,tmp}
cp /bin/busybox "$root/bin/busybox"
cp "$here/init" "$root/init"
cp "$here/limits.sh" "$root/tests/limits.sh"
cp "$here/rootfs.sh" "$root/tests/rootfs.sh"
cp "$here/isolation.sh" "$root/tests/isolation.sh"
cp "$here/harness.sh" "$root/tests/harness.sh"
cp "$cordon" "$root/opt/cordon/bin/cordon"
cp "$helper" "$root/opt/cordon/bin/vmhelper"
mkdir -p "$root/opt/cordon/share"
cp -r "$(dirname "$cordon")/../share/cordon" "$root/opt/cordon/share/"
# cordon's shared libraries and the dynamic loader, at the paths ldd reports; git with its own,
# for the everyday work in the Landlock jail (tests/vm/isolation.sh).
mkdir -p "$root/usr/bin"
cp /usr/bin/git "$root/usr/bin/git"
for lib in $(ldd "$cordon" /usr/bin/git | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $1 !~ /:$/ {print $1}' | sort -u); do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
printf 'root:x:0:0:root:/root:/bin/sh\ntester:x:1000:1000:tester:/home/tester:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\ntester:x:1000:\n' > "$root/etc/group"
chmod 0755 "$root/init" "$root/tests/limits.sh" "$root/tests/rootfs.sh" "$root/tests/isolation.sh"
mkdir -p "$root/home/tester" && chmod 1777 "$root/tmp"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$out/initramfs.cpio.gz"

log=$out/vm.log
start=$(date +%s)
rc=0
timeout --foreground -k 5 "$budget" qemu-system-x86_64 -accel tcg -m 512 -smp 2 -nographic -no-reboot \
  -kernel "$kernel" -initrd "$out/initramfs.cpio.gz" \
  -append "console=ttyS0 rdinit=/init panic=-1 loglevel=1" </dev/null >"$log" 2>&1 || rc=$?
tr -d '\r' < "$log" > "$log.tmp" && mv "$log.tmp" "$log"
elapsed=$(($(date +%s) - start))
grep '^CORDON-VM:' "$log" || true
echo "tests/vm: VM ran for ${elapsed}s (budget ${budget}s), qemu exit $rc"
if ! grep -q '^CORDON-VM: done' "$log"; then
  echo "tests/vm: the VM did not finish; last console lines:"
  tail -30 "$log"
  exit 1
fi
! grep -q '^CORDON-VM: not ok' "$log"

#!/usr/bin/env bash
# usage: build-image.sh CACHE_DIR
# Builds (once per machine; cached in CACHE_DIR, keyed by this script's hash) a minimal Debian 12
# root with systemd as init, made with debootstrap from Debian's mirror, as a raw ext4 image. It
# has a lingering user "tester" (uid 1000) whose user manager runs from boot, D-Bus for the user
# bus, cordon's runtime libraries, and cordon-vmtest.service, which mounts the disk labelled
# "cordontest" and runs its run.sh with output on the serial console. Prints the image's path.
set -euo pipefail
cache=$1
mirror=${CORDON_VM_MIRROR:-http://deb.debian.org/debian}
key=$(sha256sum "$0" | cut -c1-16)
img=$cache/debian12-systemd-$key.img
mkdir -p "$cache"
if [[ -s $img ]]; then echo "$img"; exit 0; fi
command -v debootstrap >/dev/null || { echo "build-image.sh: debootstrap is missing (scripts/install-deps)" >&2; exit 1; }

root=$(mktemp -d "$cache/root.XXXXXX")
trap 'rm -rf --one-file-system "$root"' EXIT
packages=systemd,systemd-sysv,dbus,dbus-user-session,libpam-systemd,procps,util-linux
packages+=,libseccomp2,libcap2,libfmt9,libtomlplusplus3,libstdc++6
echo "build-image.sh: debootstrap bookworm from $mirror (once; cached in $cache)" >&2
debootstrap --variant=minbase --include="$packages" bookworm "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
  { tail -20 "$cache/debootstrap.log" >&2; exit 1; }

echo cordon-vm > "$root/etc/hostname"
printf '/dev/vda / ext4 rw,relatime 0 1\n' > "$root/etc/fstab"
chroot "$root" useradd --create-home --uid 1000 --shell /bin/sh tester
# Lingering: logind starts user@1000.service at boot, without a login.
mkdir -p "$root/var/lib/systemd/linger"
touch "$root/var/lib/systemd/linger/tester"
# The serial console belongs to the test's output, not to a getty.
ln -sf /dev/null "$root/etc/systemd/system/serial-getty@ttyS0.service"
mkdir -p "$root/mnt/cordon" "$root/etc/systemd/system/multi-user.target.wants"
cat > "$root/etc/systemd/system/cordon-vmtest.service" <<'UNIT'
[Unit]
Description=cordon VM tests (systemd backend)
After=multi-user.target systemd-user-sessions.service user@1000.service
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'mount -o ro LABEL=cordontest /mnt/cordon && exec /mnt/cordon/run.sh'
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
[Install]
WantedBy=multi-user.target
UNIT
ln -sf ../cordon-vmtest.service "$root/etc/systemd/system/multi-user.target.wants/cordon-vmtest.service"
rm -rf "$root/var/cache/apt/archives"/*.deb "$root/var/lib/apt/lists"/*

mke2fs -q -t ext4 -L cordonroot -d "$root" "$img.tmp" 1G >&2
mv "$img.tmp" "$img"
echo "$img"

#!/bin/sh
# Runs as root from cordon-vmtest.service inside the systemd VM (tests/vm/systemd/build-image.sh):
# waits for tester's lingering user manager, then runs user-test.sh on a login session of
# tester (runuser -l goes through pam_systemd: a session scope that is not delegated).
say() { echo "CORDON-VM: $*"; }
cp -a /mnt/cordon /opt/cordon
say "booted $(uname -r), systemd $(systemctl --version | sed -n '1s/systemd \([0-9]*\).*/\1/p'), cgroup2: $(cat /sys/fs/cgroup/cgroup.controllers)"
i=0
until systemctl is-active -q user@1000.service || [ $i -ge 300 ]; do sleep 0.2; i=$((i + 1)); done
say "user@1000.service: $(systemctl is-active user@1000.service)"
# A root caller's jail on Debian 12's own kernel and ext4 root: remapped to cordon's jail id,
# writing root's files through the idmapped workdir, unable to read root-only files.
check_root() {  # ID DESCRIPTION EXPECTED-EXIT CORDON-ARGS...
  id=$1 desc=$2 want=$3
  shift 3
  out=$(/opt/cordon/bin/cordon "$@" 2>&1)
  rc=$?
  if [ $rc -eq "$want" ] && echo "$out" | grep -q '^ *0 *2147483646 *1$' && ! echo "$out" | grep -q root-only-secret; then
    say "ok systemd $id - $desc"
  else
    say "not ok systemd $id - exit $rc"
    echo "$out" | sed 's/^/CORDON-VM: #   /' | head -6
  fi
}
mkdir -p /root/proj && cd /root/proj
echo root-only-secret > /etc/default/cordon-vm-secret && chmod 0600 /etc/default/cordon-vm-secret
check_root root-remap "root's jail runs as 2147483646 on $(uname -r) and ext4; /etc secrets unreadable" 0 \
  -- /bin/sh -c 'cat /proc/self/uid_map; cat /etc/default/cordon-vm-secret; echo new > made'
[ "$(stat -c %u made)" = 0 ] || say "not ok systemd root-remap - made is owned by $(stat -c %u made)"
# Nothing the jail mounted reaches the host's mount namespace.
left=$(grep -c ' /root/proj/' /proc/self/mountinfo)
if [ "$left" = 0 ] && [ -z "$(ls -A /root/proj | grep -v '^made$')" ]; then
  say "ok systemd root-remap-no-leak - no mount of the jail's in the host's namespace, no placeholder left"
else
  say "not ok systemd root-remap-no-leak - $left mounts under /root/proj on the host: $(ls -A /root/proj | tr '\n' ' ')"
fi
# With limits, the remapped child is started outside its cgroup and moved there by root; and a
# second run in the same workdir is remapped as the first.
check_root root-remap-limits "a remapped root jail with --memory 32M: oom, exit 137" 137 \
  --memory 32M -- /bin/sh -c 'cat /proc/self/uid_map; exec /opt/cordon/bin/vmhelper hog 256'
rm -f /etc/default/cordon-vm-secret made
cd /
runuser -l tester -c 'sh /opt/cordon/user-test.sh'
say "done"
sync
systemctl poweroff --no-block

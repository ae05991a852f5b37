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
runuser -l tester -c 'sh /opt/cordon/user-test.sh'
say "done"
sync
systemctl poweroff --no-block

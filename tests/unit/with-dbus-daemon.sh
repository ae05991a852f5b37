#!/usr/bin/env bash
# usage: with-dbus-daemon.sh UNIT_BINARY
# Runs the unit tests tagged [dbus-daemon] against a private dbus-daemon listening on a socket
# in a temporary directory. Exit 77 (a skip) when dbus-daemon is not installed.
set -euo pipefail
unit=$1
if ! command -v dbus-daemon >/dev/null; then
  echo "dbus.daemon: skipped: dbus-daemon is not installed (Debian: apt-get install dbus-daemon)"
  exit 77
fi
dir=$(mktemp -d)
pid=
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
cat > "$dir/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$dir/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
dbus-daemon --config-file="$dir/bus.conf" --nofork --nopidfile &
pid=$!
for _ in $(seq 100); do
  [[ -S $dir/bus ]] && break
  sleep 0.05
done
[[ -S $dir/bus ]] || { echo "dbus.daemon: dbus-daemon did not create $dir/bus"; exit 1; }
# --warn NoTests: a filter that matches nothing must fail, not pass.
DBUS_SESSION_BUS_ADDRESS="unix:path=$dir/bus" "$unit" --warn NoTests "[dbus-daemon]"

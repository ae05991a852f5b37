#!/bin/sh
# The systemd backend for real (SPEC §7): tester, on a login session whose cgroup is not
# delegated, gets a transient scope with Delegate=yes from the user manager, and the limits hold.
MODE=systemd
CORDON=/opt/cordon/bin/cordon
HELPER=/opt/cordon/bin/vmhelper
T=$(mktemp -d)
cd "$T" && mkdir work && cd work
pass() { echo "CORDON-VM: ok $MODE $1 - $2"; }
fail() {
  echo "CORDON-VM: not ok $MODE $1 - $2"
  sed 's/^/CORDON-VM: #   stderr: /' "$T/err" 2>/dev/null | head -6
  sed 's/^/CORDON-VM: #   status: /' "$T/json" 2>/dev/null | head -2
}
run() { rc=0; "$@" >"$T/out" 2>"$T/err" 3>"$T/json" </dev/null || rc=$?; }
scopes() { systemctl --user list-units --all --no-legend --plain 'cordon-*' 2>/dev/null; }

own=$(sed -n 's/^0:://p' /proc/self/cgroup)
case $own in
  */session-*.scope)
    if [ -w "/sys/fs/cgroup$own/cgroup.procs" ]; then fail session "the session scope $own is writable"
    else pass session "a login session ($own), not delegated; XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR"; fi ;;
  *) fail session "not on a login session: $own" ;;
esac

run "$CORDON" --memory 32M --status-json fd:3 -- "$HELPER" hog 256
if [ $rc -eq 137 ] && grep -q 'oom' "$T/err" && grep -q '"reason":"oom"' "$T/json"; then
  pass oom "--memory 32M through a transient scope: hog killed, exit 137, oom"
else fail oom "--memory 32M: exit $rc"; fi

# Where the supervisor lives during a run: its own leaf in a scope of the user manager.
"$CORDON" --memory 32M --pids 16 -- sleep 3 >"$T/out" 2>"$T/err" </dev/null &
pid=$!
where=
i=0
while [ $i -lt 100 ]; do
  where=$(sed -n 's/^0:://p' /proc/$pid/cgroup 2>/dev/null)
  case $where in *".scope/cordon-$pid.supervisor") break ;; esac
  sleep 0.1
  i=$((i + 1))
done
wait $pid
rc=$?
case $where in
  /user.slice/user-1000.slice/user@1000.service/*/cordon-$pid-*.scope/cordon-$pid.supervisor)
    if [ $rc -eq 0 ]; then pass scope "the run got a transient scope of the user manager: $where"
    else fail scope "exit $rc in $where"; fi ;;
  *) fail scope "cordon ran in '$where' (exit $rc)" ;;
esac

run "$CORDON" --pids 8 -- "$HELPER" forks 50
if [ $rc -eq 0 ] && grep -q '^forked 7 ' "$T/out"; then pass pids "--pids 8 through a scope: 7 children, then EAGAIN"
else fail pids "exit $rc: $(cat "$T/out")"; fi

i=0
while [ -n "$(scopes)" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if [ -z "$(scopes)" ]; then pass scope-gone "systemd removed every cordon scope after the runs"
else fail scope-gone "left: $(scopes | tr '\n' ' ')"; fi
# No bus to reach: the limit is refused with what the D-Bus client met.
run env -u DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR=/nonexistent "$CORDON" --memory 32M -- true
if [ $rc -eq 125 ] && grep -q 'transient scope instead (connect to the user bus: connect to /nonexistent/bus: No such file' "$T/err"
then pass no-bus "without a user bus: exit 125 and the reason"
else fail no-bus "exit $rc"; fi
rm -rf "$T"

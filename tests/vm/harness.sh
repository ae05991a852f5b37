# The checks' harness shared by rootfs.sh and isolation.sh (sourced, busybox sh), inside the test
# VM: MODE names the run; each check prints "CORDON-VM: ok MODE ID - ..." or
# "CORDON-VM: not ok MODE ID - ..." with the last command's output.
echo  # the console may still hold the kernel's last bytes: start on a line of our own
T=$(mktemp -d)
pass() { echo "CORDON-VM: ok $MODE $1 - $2"; }
fail() {
  echo "CORDON-VM: not ok $MODE $1 - $2"
  sed 's/^/CORDON-VM: #   stderr: /' "$T/err" | head -6
  sed 's/^/CORDON-VM: #   stdout: /' "$T/out" | head -6
}
# run CMD...: stdout and stderr go to $T/{out,err}; the status in $rc.
run() {
  rc=0
  "$@" >"$T/out" 2>"$T/err" </dev/null || rc=$?
}

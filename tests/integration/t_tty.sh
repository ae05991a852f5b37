#!/usr/bin/env bash
# §8 TIOCSTI/TIOCLINUX and §9 interactive use, with a real terminal: a python pty driver on the host
# gives cordon a pseudo-terminal (it is cordon's controlling tty, so the payload inherits it).
#  (a) terminal input injection (TIOCSTI, also with high bits set in the request) and TIOCLINUX fail
#      with EPERM, on a pty the payload opens itself and on the terminal it was given;
#  (b) the payload sees the window size the host set, and the new size after a resize (SIGWINCH);
#  (c) Ctrl-C reaches the payload and cordon exits 130 promptly;
#  (d) the payload's exit status comes back through cordon under a tty.
source "$TESTLIB"

PY=/usr/bin/python3

# --- the pty driver (host side) ------------------------------------------------------------------------
# usage: ptydrive.py STEPS_JSON ROWS COLS CMD...
# Runs CMD as session leader on a new pty of ROWS x COLS, performs STEPS ([op, arg] pairs: wait for
# text in the output, sleep, wait for CMD's exec, write bytes to the master, resize, mark the clock),
# then collects the
# output until EOF. Prints the output (\r removed), then "=STATUS n" (128+N for a signal),
# "=ELAPSED s" (since the last mark, or since the start), and "=TIMEOUT" if it had to kill CMD.
cat >"$OUT/ptydrive.py" <<'EOF'
import fcntl, json, os, select, signal, struct, sys, termios, time
steps = json.loads(sys.argv[1])
rows, cols = int(sys.argv[2]), int(sys.argv[3])
cmd = sys.argv[4:]
LIMIT = 20.0
master, slave = os.openpty()
fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))
start = mark = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        os.close(master)
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        if slave > 2:
            os.close(slave)
        os.execv(cmd[0], cmd)
    finally:
        os._exit(121)
os.close(slave)
out = b''
eof = False
def pump(seconds, until=None):
    global out, eof
    end = min(time.monotonic() + seconds, start + LIMIT)
    while not eof and time.monotonic() < end:
        if until is not None and until in out:
            return True
        r, _, _ = select.select([master], [], [], max(0.0, min(0.1, end - time.monotonic())))
        if r:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: every slave end is closed
                data = b''
            if not data:
                eof = True
            out += data
    return until is not None and until in out
timed_out = False
for op, arg in steps:
    if op == 'wait':
        if not pump(10, arg.encode()):
            timed_out = True
            break
    elif op == 'sleep':
        pump(arg)
    elif op == 'write':
        os.write(master, arg.encode())
    elif op == 'resize':
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack('HHHH', arg[0], arg[1], 0, 0))
    elif op == 'exec':  # wait until CMD has been exec'd (setsid and TIOCSCTTY are done by then)
        want = os.path.realpath(cmd[0])
        end = time.monotonic() + 10
        while time.monotonic() < end:
            try:
                if os.readlink('/proc/%d/exe' % pid) == want:
                    break
            except OSError:
                pass
            time.sleep(0.0005)
    elif op == 'mark':
        mark = time.monotonic()
pump(LIMIT)
status = None
while time.monotonic() < start + LIMIT + 2:
    p, st = os.waitpid(pid, os.WNOHANG)
    if p == pid:
        status = st
        break
    time.sleep(0.02)
elapsed = time.monotonic() - mark
if status is None:
    timed_out = True
    os.kill(pid, signal.SIGKILL)  # our own child (cordon), by pid
    _, status = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(status)
sys.stdout.write(out.decode(errors='replace').replace('\r', ''))
print('\n=STATUS %d' % (code if code >= 0 else 128 - code))
print('=ELAPSED %.2f' % elapsed)
if timed_out:
    print('=TIMEOUT')
EOF

# ptyrun STEPS ROWS COLS CMD...: run CMD under the pty driver (results in $OUT/out, $rc).
ptyrun() {
  local steps=$1 rows=$2 cols=$3
  shift 3
  run timeout 40 "$PY" "$OUT/ptydrive.py" "$steps" "$rows" "$cols" "$@"
}
# ptyjailed STEPS 'SCRIPT' [cordon options]: like `jailed`, but under the pty driver.
ptyjailed() {
  local steps=$1 script=$2
  shift 2
  ptyrun "$steps" 24 80 "$CORDON" "$@" -- /bin/sh -c "$GUARD; $script"
  if grep -q '^=STATUS 99$' "$OUT/out"; then
    echo "Bail out! the jail is not working (guard failed); refusing to run escape tests"
    cat "$OUT/out" >&2
    finish
    exit 1
  fi
}
status_is() {  # status_is N DESCRIPTION: the driver saw cordon exit with N
  if grep -q "^=STATUS $1\$" "$OUT/out" && ! grep -q '^=TIMEOUT$' "$OUT/out"; then ok "$2"; else
    not_ok "$2: expected status $1"
    sed 's/^/#   /' "$OUT/out" | tail -n 8
    sed 's/^/#   stderr: /' "$OUT/err" | head -5
  fi
}

# Sanity: the driver itself works (a pty, outside any jail).
ptyrun '[]' 37 111 /bin/sh -c 'test -t 0 && stty size'
expect_out '^37 111$' "control: the pty driver gives a terminal of 37x111"

# --- (a) TIOCSTI / TIOCLINUX ---------------------------------------------------------------------------
# tty_probe.py own|stdin: make the terminal non-canonical (so FIONREAD counts every queued byte), try to
# inject input, and report "LABEL OP RET ERRNO" plus how many bytes ended up queued.
cat >"$WORK/tty_probe.py" <<'EOF'
import ctypes, fcntl, os, platform, struct, sys, termios
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR_IOCTL = {'x86_64': 16, 'aarch64': 29}[platform.machine()]
def ioctl(fd, req, arg):
    buf = ctypes.create_string_buffer(arg, max(len(arg), 8))
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(NR_IOCTL), ctypes.c_long(fd), ctypes.c_ulong(req), buf)
    return r, (ctypes.get_errno() if r == -1 else 0)
def probe(fd, label):
    attrs = termios.tcgetattr(fd)
    attrs[3] &= ~(termios.ICANON | termios.ECHO)
    termios.tcsetattr(fd, termios.TCSANOW, attrs)
    termios.tcflush(fd, termios.TCIFLUSH)
    for op, req in (('sti', termios.TIOCSTI), ('sti_hi', termios.TIOCSTI | (1 << 32)),
                    ('sti_hi2', termios.TIOCSTI | (0xdead << 32)), ('linux', 0x541C)):
        print(label, op, *ioctl(fd, req, b'\x03' if op == 'linux' else b'x'), flush=True)
    # the kernel ignores the high 32 bits of an ioctl request: a harmless one still works that way
    print(label, 'gwinsz_hi', *ioctl(fd, termios.TIOCGWINSZ | (1 << 32), b''), flush=True)
    queued = struct.unpack('i', fcntl.ioctl(fd, termios.FIONREAD, b'\0\0\0\0'))[0]
    print(label, 'queued', queued, flush=True)
if sys.argv[1] == 'own':
    master, slave = os.openpty()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)  # the payload's own controlling terminal
            probe(slave, 'own')
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
else:
    probe(0, 'stdin')
EOF
TP="$PY $WORK/tty_probe.py"

jailed "$TP own"
expect_out '^own sti -1 1$' "TIOCSTI on the payload's own pty fails with EPERM"
expect_out '^own sti_hi -1 1$' "TIOCSTI|(1<<32) on the payload's own pty fails with EPERM"
expect_out '^own sti_hi2 -1 1$' "TIOCSTI|(0xdead<<32) on the payload's own pty fails with EPERM"
expect_out '^own linux -1 1$' "TIOCLINUX fails with EPERM"
expect_out '^own gwinsz_hi 0 0$' "control: TIOCGWINSZ with high bits set still works (the kernel ignores them)"
expect_out '^own queued 0$' "nothing was injected into the payload's own pty"

ptyjailed '[]' "$TP stdin"
expect_out '^stdin sti -1 1$' "TIOCSTI on the terminal cordon was given fails with EPERM"
expect_out '^stdin sti_hi -1 1$' "TIOCSTI|(1<<32) on the terminal cordon was given fails with EPERM"
expect_out '^stdin linux -1 1$' "TIOCLINUX on the terminal cordon was given fails with EPERM"
expect_out '^stdin queued 0$' "nothing was injected into the terminal cordon was given"
status_is 0 "the TIOCSTI probe under a tty exits 0"

# --- the terminal's name: the host's pty is not in the jail's devpts; it is /dev/console there, as
# bubblewrap's --dev gives it, so tty(1) and ttyname(3) work.
ptyjailed '[]' 'tty; python3 -c "import os; print(\"ttyname\", os.ttyname(0))"; test -e /dev/pts/ptmx && echo own-devpts'
expect_out '^/dev/console$' "tty names the terminal /dev/console inside the jail"
expect_out '^ttyname /dev/console$' "and ttyname(3) finds it"
expect_out '^own-devpts$' "the jail keeps a devpts of its own"
run "$CORDON" -- /bin/sh -c 'test -e /dev/console && echo console; tty || true' </dev/null
expect_no_out '^console$' "without a terminal there is no /dev/console"

# --- (b) window size ---------------------------------------------------------------------------------------
ptyrun '[]' 37 111 "$CORDON" -- /bin/sh -c 'test -t 0 && stty size'
expect_out '^37 111$' "the payload sees a terminal of the size the host set (37x111)"
status_is 0 "stty size under cordon exits 0"

ptyrun '[["wait", "READY"], ["resize", [50, 132]]]' 37 111 "$CORDON" -- /bin/sh -c \
  'trap "echo WINCH; stty size; exit 0" WINCH; stty size; echo READY
   i=0; while [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; echo NO-WINCH; exit 3'
expect_out '^37 111$' "before the resize the payload sees 37x111"
expect_out '^WINCH$' "the payload receives SIGWINCH when the host resizes the terminal"
expect_out '^50 132$' "after the resize the payload sees 50x132"
status_is 0 "the resize payload exits 0"

# --- (c) Ctrl-C -------------------------------------------------------------------------------------------
ptyrun '[["sleep", 0.5], ["mark", null], ["write", "\u0003"]]' 24 80 "$CORDON" -- sleep 30
status_is 130 "Ctrl-C on the terminal makes cordon exit 130"
el=$(sed -n 's/^=ELAPSED //p' "$OUT/out")
if [[ -n $el ]] && awk -v e="$el" 'BEGIN { exit !(e < 5) }'; then ok "cordon exits within 5 s of Ctrl-C (${el}s)"
else not_ok "cordon did not exit within 5 s of Ctrl-C (${el:-?}s)"; fi

# Ctrl-C while the jail is still being built (a few ms after cordon starts) must not be lost either:
# it has to end the run (130), not be dropped while the payload runs on. Stops at the first miss.
startup_missed=
for i in $(seq 0 19); do
  d=$(awk -v i="$i" 'BEGIN { printf "%.4f", 0.0002 * i }')
  ptyrun "[[\"exec\", null], [\"sleep\", $d], [\"mark\", null], [\"write\", \"\\u0003\"]]" 24 80 "$CORDON" -- sleep 3
  el=$(sed -n 's/^=ELAPSED //p' "$OUT/out")
  if ! grep -q '^=STATUS 130$' "$OUT/out" || ! awk -v e="${el:-99}" 'BEGIN { exit !(e < 2) }'; then
    startup_missed="Ctrl-C ${d}s after cordon's exec: $(grep '^=' "$OUT/out" | tr '\n' ' ')"
    break
  fi
done
if [[ -z $startup_missed ]]; then ok "Ctrl-C during jail startup ends the run with 130 (20 tries, 0-4 ms after exec)"
else not_ok "Ctrl-C during jail startup was lost: $startup_missed"; fi

ptyrun '[["wait", "READY"], ["mark", null], ["write", "\u0003"]]' 24 80 "$CORDON" -- /bin/sh -c \
  'trap "echo GOT-INT; exit 5" INT; echo READY; i=0; while [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; exit 9'
expect_out '(^|\^C)GOT-INT$' "Ctrl-C reaches a payload that traps SIGINT"
status_is 5 "the payload's own exit status after handling Ctrl-C is returned"

# --- (d) exit status under a tty ----------------------------------------------------------------------
ptyrun '[]' 24 80 "$CORDON" -- /bin/sh -c 'exit 42'
status_is 42 "exit status 42 passes through under a tty"
ptyrun '[]' 24 80 "$CORDON" -- /bin/true
status_is 0 "exit status 0 passes through under a tty"
ptyrun '[]' 24 80 "$CORDON" -- /bin/sh -c 'kill -TERM $$'
status_is 143 "a payload killed by SIGTERM gives 143 under a tty"
ptyrun '[]' 24 80 "$CORDON" -- /nonexistent/command
status_is 127 "a missing command gives 127 under a tty"

finish

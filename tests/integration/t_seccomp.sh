#!/usr/bin/env bash
# §4 Privilege and §8 seccomp: inside the default jail every syscall that widens the kernel attack
# surface or leaves the jail fails (with the errno the filter promises, not whatever the kernel
# would say anyway), the process holds no capability, no_new_privs and the filter are on, foreign
# ABIs are killed, and ordinary programs (fork, threads, background jobs) keep working.
# --allow-userns / --allow-ptrace relax exactly their own rules.
# Every probe that would touch the host if the jail were broken runs through `jailed`.
source "$TESTLIB"

EPERM=1 EBADF=9 ENOSYS=38

# The probes: raw syscalls through ctypes. Each prints "NAME RET ERRNO". The arguments are chosen
# so that without the filter most calls would succeed or fail with a *different* errno (EFAULT,
# EINVAL, EBADF), which proves it is the filter that answers.
cat >"$WORK/probe.py" <<'EOF'
import ctypes, mmap, os, platform, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {
    'x86_64': dict(mount=165, unshare=272, clone=56, setns=308, add_key=248, keyctl=250, bpf=321,
                   perf_event_open=298, userfaultfd=323, io_uring_setup=425, ptrace=101,
                   process_vm_readv=310, personality=135, clone3=435, getpid=39, prctl=157, open_tree_attr=467),
    'aarch64': dict(mount=40, unshare=97, clone=220, setns=268, add_key=217, keyctl=219, bpf=280,
                    perf_event_open=241, userfaultfd=282, io_uring_setup=425, ptrace=117,
                    process_vm_readv=270, personality=92, clone3=435, getpid=172, prctl=167, open_tree_attr=467),
}[platform.machine()]

def sc(nr, *args):
    conv = [a if isinstance(a, (bytes, ctypes.c_void_p)) else ctypes.c_long(a) for a in args]
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *conv)
    return r, (ctypes.get_errno() if r == -1 else 0)

def call(name, *args):
    return sc(NR[name], *args)

class iovec(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]

def nodump():
    # A process killed by SIGSYS must not leave a core dump anywhere (not even via a pipe handler).
    call('prctl', 4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0

def attach(pid):
    r = call('ptrace', 16, pid, 0, 0)  # PTRACE_ATTACH
    if r[0] == 0:
        os.waitpid(pid, 0x40000000)  # __WALL
        call('ptrace', 17, pid, 0, 0)  # PTRACE_DETACH
    return r

name, a = sys.argv[1], sys.argv[2:]
if name == 'mount':
    os.makedirs('/tmp/x', exist_ok=True)
    r = call('mount', b'none', b'/tmp/x', b'tmpfs', 0, 0)
elif name == 'nested_mount':
    # a new user+mount namespace (only possible with --allow-userns), then a tmpfs mount in it
    r = call('unshare', 0x10000000 | 0x00020000)
    if r[0] == 0:
        os.makedirs('/tmp/x', exist_ok=True)
        r = call('mount', b'none', b'/tmp/x', b'tmpfs', 0, 0)
elif name == 'nested_propagation':
    # the same namespaces, then mount(2) with FLAGS on / (a propagation change, or not)
    r = call('unshare', 0x10000000 | 0x00020000)
    if r[0] == 0 and a[1:] == ['tmpfs']:
        os.makedirs('/tmp/x', exist_ok=True)
        r = call('mount', b'none', b'/tmp/x', b'tmpfs', int(a[0], 0), 0)
    elif r[0] == 0:
        r = call('mount', 0, b'/', 0, int(a[0], 0), 0)
elif name == 'open_tree_attr':
    # OPEN_TREE_CLONE of the workdir, no attributes: with CAP_SYS_ADMIN the kernel would clone it
    r = call('open_tree_attr', -100, os.getcwd().encode(), 1, 0, 0)
elif name == 'unshare':
    r = call('unshare', int(a[0], 0))
elif name == 'clone':
    r = call('clone', int(a[0], 0) | signal.SIGCHLD, 0, 0, 0, 0)
    if r[0] == 0:
        os._exit(0)
    if r[0] > 0:
        os.waitpid(r[0], 0)
elif name == 'setns':
    r = call('setns', -1 if a[0] == 'badfd' else os.open('/proc/self/ns/' + a[0], os.O_RDONLY), 0)
elif name == 'keyctl':
    r = call('keyctl', 0, -3, 0)  # KEYCTL_GET_KEYRING_ID of KEY_SPEC_SESSION_KEYRING
elif name == 'add_key':
    r = call('add_key', b'user', b'cordon-test', b'x', 1, -2)  # into KEY_SPEC_PROCESS_KEYRING
elif name == 'bpf':
    r = call('bpf', 0, 0, 0)  # BPF_MAP_CREATE, NULL attr
elif name == 'perf_event_open':
    r = call('perf_event_open', 0, 0, -1, -1, 0)  # NULL attr
elif name == 'userfaultfd':
    r = call('userfaultfd', 0o2000000 | 1)  # O_CLOEXEC | UFFD_USER_MODE_ONLY
elif name == 'io_uring_setup':
    r = call('io_uring_setup', 1, 0)  # NULL params
elif name == 'traceme':
    r = call('ptrace', 0, 0, 0, 0)  # PTRACE_TRACEME
elif name == 'attach':
    r = attach(int(a[0]))
elif name == 'attach_child':
    pid = os.fork()
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    time.sleep(0.1)
    r = attach(pid)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
elif name == 'vm_readv':
    pid = int(a[0]) if a else os.getpid()
    src = ctypes.create_string_buffer(b'cordon', 16)
    dst = ctypes.create_string_buffer(16)
    liov = iovec(ctypes.cast(dst, ctypes.c_void_p), 16)
    riov = iovec(ctypes.cast(src, ctypes.c_void_p), 16)
    r = call('process_vm_readv', pid, ctypes.c_void_p(ctypes.addressof(liov)), 1,
             ctypes.c_void_p(ctypes.addressof(riov)), 1, 0)
elif name == 'personality':
    r = call('personality', int(a[0], 0))
elif name == 'clone3':
    r = call('clone3', 0, 0)  # NULL args: EINVAL without the filter
elif name == 'x32':
    nodump()
    r = sc(NR['getpid'] | 0x40000000)  # __X32_SYSCALL_BIT | getpid
elif name == 'i386':
    # mov eax, 20 (getpid in the i386 table); int 0x80; ret
    buf = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    buf.write(b'\xb8\x14\x00\x00\x00\xcd\x80\xc3')
    fn = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(buf)))
    nodump()
    r = (fn(), 0)
else:
    sys.exit('unknown probe ' + name)
print(name, r[0], r[1], flush=True)
EOF
P="/usr/bin/python3 $WORK/probe.py"
arch=$(uname -m)

# --- capabilities, no_new_privs, filter mode -------------------------------------------------------
run "$CORDON" -- cat /proc/self/status
for cap in CapInh CapPrm CapEff CapBnd CapAmb; do
  expect_out "^$cap:[[:space:]]+0000000000000000$" "$cap is empty inside the jail"
done
expect_out '^NoNewPrivs:[[:space:]]+1$' "no_new_privs is set inside the jail"
expect_out '^Seccomp:[[:space:]]+2$' "a seccomp filter is active (mode 2) inside the jail"

# --- mounting ----------------------------------------------------------------------------------------
jailed "$P mount"
expect_out "^mount -1 $EPERM\$" "mount(2) of a tmpfs fails with EPERM"
jailed 'mkdir -p /tmp/x; mount -t tmpfs none /tmp/x; echo "rc=$?"; grep -c " /tmp/x " /proc/self/mountinfo'
expect_out '^rc=[1-9]' "the mount command fails"
expect_out '^0$' "nothing is mounted on /tmp/x after the mount command"

# --- namespaces ----------------------------------------------------------------------------------------
jailed 'unshare -U true; echo "rc=$?"'
expect_out '^rc=[1-9]' "unshare -U true fails"
expect_err 'Operation not permitted' "unshare -U reports EPERM"
declare -A NSFLAG=([user]=0x10000000 [user+mnt]=0x10020000 [user+pid]=0x30000000 [user+net]=0x50000000
                   [user+uts]=0x14000000 [user+ipc]=0x18000000 [user+cgroup]=0x12000000 [user+time]=0x10000080)
for ns in user user+mnt user+pid user+net user+uts user+ipc user+cgroup user+time; do
  jailed "$P unshare ${NSFLAG[$ns]}"
  expect_out "^unshare -1 $EPERM\$" "unshare($ns namespaces) fails with EPERM"
done
jailed "$P clone 0x10020000"
expect_out "^clone -1 $EPERM\$" "clone(CLONE_NEWUSER|CLONE_NEWNS) fails with EPERM"
jailed "$P clone 0x40000000"
expect_out "^clone -1 $EPERM\$" "clone(CLONE_NEWNET) fails with EPERM"
jailed "$P setns net"
expect_out "^setns -1 $EPERM\$" "setns(own net namespace) fails with EPERM"
jailed "$P setns badfd"
expect_out "^setns -1 $EPERM\$" "setns(-1) fails with EPERM, not EBADF: the filter answers"

# --- keyring, bpf, perf, userfaultfd, io_uring ---------------------------------------------------------
for p in keyctl add_key bpf perf_event_open userfaultfd io_uring_setup; do
  jailed "$P $p"
  expect_out "^$p -1 $EPERM\$" "$p fails with EPERM"
done

# --- ptrace and process_vm_* ---------------------------------------------------------------------------
jailed "$P traceme"
expect_out "^traceme -1 $EPERM\$" "ptrace(PTRACE_TRACEME) fails with EPERM"
jailed "$P attach 1"
expect_out "^attach -1 $EPERM\$" "ptrace(PTRACE_ATTACH, 1) fails with EPERM"
jailed "sleep 20 & s=\$!; $P attach \$s; grep '^TracerPid:' /proc/\$s/status; kill \$s"
expect_out "^attach -1 $EPERM\$" "ptrace(PTRACE_ATTACH) of a sibling fails with EPERM"
expect_out '^TracerPid:[[:space:]]+0$' "the sibling is not traced"
jailed "$P attach_child"
expect_out "^attach_child -1 $EPERM\$" "ptrace(PTRACE_ATTACH) of an own child fails with EPERM"
jailed "$P vm_readv"
expect_out "^vm_readv -1 $EPERM\$" "process_vm_readv (even of itself) fails with EPERM"
jailed "$P vm_readv 1"
expect_out "^vm_readv -1 $EPERM\$" "process_vm_readv of pid 1 fails with EPERM"

# --- personality -------------------------------------------------------------------------------------
jailed "$P personality 0x0040000"
expect_out "^personality -1 $EPERM\$" "personality(ADDR_NO_RANDOMIZE) fails with EPERM"
jailed "$P personality 0x0400000"
expect_out "^personality -1 $EPERM\$" "personality(READ_IMPLIES_EXEC) fails with EPERM"
jailed "$P personality 0xffffffff"
expect_out '^personality 0 0$' "personality(0xffffffff) still queries the persona"
jailed "$P personality 0"
expect_out '^personality 0 0$' "personality(PER_LINUX) is still allowed"
jailed "setarch $arch -R /bin/true; echo \"rc=\$?\""
expect_out '^rc=[1-9]' "setarch -R (no ASLR) fails"

# --- clone3 and foreign ABIs -----------------------------------------------------------------------------
jailed "$P clone3"
expect_out "^clone3 -1 $ENOSYS\$" "clone3 fails with ENOSYS (libc falls back to clone)"

if [[ $arch == x86_64 ]]; then
  jailed "$P x32; echo \"rc=\$?\""
  if grep -q '^rc=159$' "$OUT/out"; then ok "an x32 syscall kills the process with SIGSYS"
  elif grep -q "^x32 -1 $ENOSYS\$" "$OUT/out"; then ok "an x32 syscall fails with ENOSYS"
  else not_ok "an x32 syscall neither killed the process nor failed"; sed 's/^/#   /' "$OUT/out"; fi
  expect_no_out '^x32 [0-9]' "an x32 syscall never succeeds"

  # Is int 0x80 usable at all on this kernel? (getpid in the i386 table; harmless on the host.)
  run /usr/bin/python3 "$WORK/probe.py" i386
  if [[ $rc -eq 0 ]] && grep -q '^i386 [0-9]' "$OUT/out"; then
    jailed "$P i386; echo \"rc=\$?\""
    expect_out '^rc=159$' "an i386 int 0x80 syscall kills the process with SIGSYS"
    expect_no_out '^i386 ' "an i386 syscall never returns"
  else
    skip "the i386 ABI check: int 0x80 does not work on this host even outside the jail (no IA32 emulation, rc $rc)"
  fi
else
  skip "the x32 and i386 ABI checks only apply on x86_64 (this is $arch)"
fi

# --- ordinary programs still work (clone3 -> clone fallback) ---------------------------------------------
expect_exit 0 "python os.fork() works in the jail" "$CORDON" -- /usr/bin/python3 -c \
  'import os, sys
pid = os.fork()
if pid == 0: os._exit(7)
sys.exit(0 if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 7 else 1)'
expect_exit 0 "a shell background job and wait work in the jail" "$CORDON" -- /bin/sh -c 'sleep 0 & wait $!'
expect_exit 0 "python threads work in the jail" "$CORDON" -- /usr/bin/python3 -c \
  'import threading
out = []
ts = [threading.Thread(target=out.append, args=(i,)) for i in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
assert sorted(out) == list(range(8))'
expect_exit 0 "subprocess (posix_spawn/vfork) works in the jail" "$CORDON" -- /usr/bin/python3 -c \
  'import subprocess; subprocess.run(["/bin/true"], check=True)'

# --- --allow-userns --------------------------------------------------------------------------------------
jailed 'unshare -U true; echo "rc=$?"' --allow-userns
expect_out '^rc=0$' "--allow-userns: unshare -U true succeeds"
jailed "$P unshare 0x10000000" --allow-userns
expect_out '^unshare 0 0$' "--allow-userns: unshare(CLONE_NEWUSER) succeeds"
jailed "$P clone 0x10020000" --allow-userns
expect_out '^clone [1-9][0-9]* 0$' "--allow-userns: clone(CLONE_NEWUSER|CLONE_NEWNS) succeeds"
jailed "$P setns badfd" --allow-userns
expect_out "^setns -1 $EBADF\$" "--allow-userns: setns reaches the kernel (EBADF for fd -1)"
jailed "$P nested_mount" --allow-userns
expect_out "^nested_mount -1 $EPERM\$" "--allow-userns: mount(2) still fails with EPERM in a nested user+mount namespace"
# A propagation change is the one mount(2) a nested sandbox may make (srt's apply-seccomp and
# unshare -m begin with it); with MS_BIND or MS_REMOUNT beside it, it is refused.
# open_tree_attr (Linux 6.15) clones a mount and clears its read-only flag in one call: refused
# like open_tree, even where the jail holds CAP_SYS_ADMIN.
# (The guard: the filter and cordon's init, since CAP_SYS_ADMIN is in the bounding set here.)
jailed_behind 'grep -q "^Seccomp:[[:space:]]*2" /proc/self/status && grep -q "^Name:[[:space:]]*cordon" /proc/1/status || exit 99' \
  "$P open_tree_attr" --cap-add CAP_SYS_ADMIN
expect_out "^open_tree_attr -1 $EPERM\$" "open_tree_attr is refused (EPERM), with CAP_SYS_ADMIN kept"
jailed "$P nested_propagation 0x44000" --allow-userns
expect_out '^nested_propagation 0 0$' "--allow-userns: mount(MS_REC|MS_PRIVATE) of / in a nested namespace succeeds"
jailed "$P nested_propagation 0x4c000" --allow-userns
expect_out '^nested_propagation 0 0$' "--allow-userns: MS_REC|MS_SILENT beside MS_PRIVATE is still a propagation change"
# Anything beside: MS_BIND, MS_REMOUNT, MS_MOVE, MS_NOSUID, MS_POSIXACL, no propagation flag, and
# MS_MGC_VAL (0xc0ed0000: its high bits, which hold MS_PRIVATE and MS_SLAVE, are dropped by the
# kernel, which then makes a new mount).
for flags in 0x45000 0x44020 0x1000 0x42000 0x40002 0x50000 0x4000; do
  jailed "$P nested_propagation $flags" --allow-userns
  expect_out "^nested_propagation -1 $EPERM\$" "--allow-userns: mount(2) with flags $flags is refused"
done
for flags in 0xc0ed0000 0xc0ed4000 0x200000 0x8000000000040000; do
  jailed "$P nested_propagation $flags tmpfs" --allow-userns
  expect_out "^nested_propagation -1 $EPERM\$" "--allow-userns: a tmpfs mount with flags $flags is refused"
done
jailed "$P nested_propagation 0x44000"
expect_out "^nested_propagation -1 $EPERM\$" "without --allow-userns: no nested namespace to change"
if [[ $RUN_AS == user ]]; then
  # Mapping the caller's own (non-root) id as root in a nested namespace is allowed by the kernel.
  jailed 'unshare -Ur id -u' --allow-userns
  expect_out '^0$' "--allow-userns: unshare -Ur maps the caller to root in a nested namespace"
else
  # The jail's root is the host's root; since Linux 5.12 mapping the parent's uid 0 needs
  # CAP_SETFCAP when the namespace was created, which the payload never has.
  jailed 'unshare -Ur id -u 2>/dev/null; echo "rc=$?"' --allow-userns
  expect_out '^rc=[1-9]' "--allow-userns as root: the kernel refuses the nested uid 0 map (no CAP_SETFCAP)"
fi
jailed 'unshare -U true; echo "rc=$?"' --allow-ptrace
expect_out '^rc=[1-9]' "--allow-ptrace does not allow user namespaces"

# --- --allow-ptrace --------------------------------------------------------------------------------------
yama=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
if [[ $yama -le 1 ]]; then
  jailed "$P attach_child" --allow-ptrace
  expect_out '^attach_child 0 0$' "--allow-ptrace: ptrace(PTRACE_ATTACH) of an own child succeeds"
else
  skip "--allow-ptrace attach: Yama ptrace_scope=$yama forbids attaching even to a child"
fi
if [[ $yama -le 2 ]]; then
  jailed "$P traceme" --allow-ptrace
  expect_out '^traceme 0 0$' "--allow-ptrace: ptrace(PTRACE_TRACEME) succeeds"
else
  skip "--allow-ptrace traceme: Yama ptrace_scope=$yama forbids every ptrace"
fi
jailed "$P vm_readv" --allow-ptrace
expect_out '^vm_readv 16 0$' "--allow-ptrace: process_vm_readv of itself succeeds"
jailed "$P attach 1" --allow-ptrace
expect_out "^attach -1 $EPERM\$" "--allow-ptrace: cordon's init (pid 1) still cannot be attached"
jailed "$P vm_readv 1" --allow-ptrace
expect_out "^vm_readv -1 $EPERM\$" "--allow-ptrace: cordon's init (pid 1) still cannot be read"
jailed "$P unshare 0x10000000" --allow-ptrace
expect_out "^unshare -1 $EPERM\$" "--allow-ptrace does not allow unshare(CLONE_NEWUSER)"

finish

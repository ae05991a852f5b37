#!/usr/bin/env bash
# No run leaves a file whose capabilities the host honours (ROOT CALLERS and SECCOMP in cordon(1)):
# file capabilities are set-uid by another name. For a root caller, every way for the jail to
# hold CAP_SETFCAP (--cap-add CAP_SETFCAP; --allow-userns, or a --seccomp policy that allows user
# namespaces, whose roots have it; the CORDON_BWRAP_EXTRAS translation of a bwrap command line)
# makes the jail write no extended attribute at all, and its policy must refuse mounting (an
# overlay copies a lower file's capabilities up); bwrap mode refuses xattr writes too. An
# unprivileged caller's capabilities are bound to its uid by the kernel: its jail keeps xattrs. After each attempt, every file
# the jail could write is read on the host with getcap: a capability set without a root id, or
# with root id 0, would be honoured for any user who runs the file.
source "$TESTLIB"

uid=$(id -u)
bw="$SCRATCH/bin/bwrap"
mkdir -p "$SCRATCH/bin"
ln -s "$CORDON" "$bw"
cd "$WORK"

# Host-effective capabilities under DIR...: getcap's lines without "[rootid=N]" or with N = 0.
effective_caps() { getcap -n -r "$@" 2>/dev/null | grep -Ev '\[rootid=[1-9][0-9]*\]' || true; }

# The payload: a copy of python3 (a program that can setuid(0) with cap_setuid), given file
# capabilities with setcap, then a plain user.* attribute with python; it prints what each said.
attempt() {  # NAME [WRAPPER...]: run setcap on ./NAME, directly or under WRAPPER (unshare -r)
  local name=$1
  shift
  echo "cp /usr/bin/python3 ./$name && $* setcap cap_setuid+ep ./$name && echo SETCAP-OK || echo SETCAP-FAILED;
        $* python3 -c 'import os; open(\"./$name.x\", \"w\").close(); os.setxattr(\"./$name.x\", \"user.t\", b\"1\"); print(\"XATTR-OK\")' ||
        echo XATTR-FAILED"
}

# A soft guard for jails that keep a capability (the lib's GUARD wants an empty bounding set):
# cordon's init is pid 1 and /etc is read-only, or the test stops here.
SOFT='grep -q "^Name:[[:space:]]*cordon" /proc/1/status && ! [ -w /etc ] || exit 99'
# With --rw /proc the jail sees the host's /proc: another mount namespace and a read-only /etc.
SOFT_PROC="[ \"\$(readlink /proc/self/ns/mnt)\" != '$(readlink /proc/self/ns/mnt)' ] && ! [ -w /etc ] || exit 99"
guarded() {  # SCRIPT CORDON-OPTIONS...
  local soft=$SOFT
  [[ " $* " == *" --rw /proc "* || " $* " == *" -p "* ]] && soft=$SOFT_PROC
  jailed_behind "$soft" "$@"
}

check_none() {  # DESCRIPTION: nothing under WORK or SCRATCH has host-effective capabilities
  local found
  found=$(effective_caps "$WORK" "$SCRATCH")
  if [[ -z $found ]]; then ok "$1: no file with capabilities the host honours"; else
    not_ok "$1: host-effective capabilities left: $found"
    sed 's/^/#   stdout: /' "$OUT/out" | head -5
  fi
}

expect_refused() {  # DESCRIPTION: the last run's setcap and setxattr both failed, with ENOTSUP
  if [[ $uid -ne 0 ]]; then
    # An unprivileged caller's jail keeps extended attributes: whatever capability it writes is
    # bound to the caller's uid (check_none proves it).
    grep -q XATTR-OK "$OUT/out" && ok "$1, unprivileged: extended attributes work" ||
      not_ok "$1, unprivileged: setxattr failed: $(cat "$OUT/out" "$OUT/err" | head -3)"
    return
  fi
  if grep -q SETCAP-FAILED "$OUT/out" && grep -q XATTR-FAILED "$OUT/out" &&
    grep -Eiq 'not supported' "$OUT/err" "$OUT/out"; then
    ok "$1: setcap and setxattr refused (Operation not supported)"
  else
    not_ok "$1: exit $rc"
    sed 's/^/#   stdout: /' "$OUT/out" | head -5
    sed 's/^/#   stderr: /' "$OUT/err" | head -5
  fi
}

# The jail works, and this file system keeps file capabilities (else every check below is void).
jailed 'echo inside'
[[ $rc -eq 0 && $(cat "$OUT/out") == inside ]] && ok "the default jail runs" || not_ok "default jail (exit $rc)"
if [[ $uid -eq 0 ]]; then
  cp /usr/bin/true "$SCRATCH/control" && setcap cap_net_raw+ep "$SCRATCH/control"
  [[ -n $(effective_caps "$SCRATCH") ]] && ok "control: the host's setcap works on this file system" ||
    not_ok "control: setcap on the host left nothing"
  rm -f "$SCRATCH/control"
fi

# The default jail has no CAP_SETFCAP: setcap fails (EPERM), user.* attributes stay writable.
jailed "$(attempt d0)"
grep -q SETCAP-FAILED "$OUT/out" && ok "default jail: setcap fails" || not_ok "default jail: setcap ran: $(cat "$OUT/out")"
check_none "default jail"

guarded "$(attempt c1)" --cap-add CAP_SETFCAP
expect_refused "--cap-add CAP_SETFCAP"
check_none "--cap-add CAP_SETFCAP"

guarded "$(attempt c2)" --cap-add CAP_SETFCAP --uid 0 --net host
expect_refused "--cap-add CAP_SETFCAP --uid 0 --net host"
check_none "--cap-add CAP_SETFCAP --uid 0 --net host"

jailed "$(attempt u1 unshare -r)" --allow-userns
if [[ $uid -eq 0 ]] && grep -q 'uid_map' "$OUT/err"; then
  # A root caller's jail is uid 2147483646 outside, and its uid 0 cannot map itself again.
  grep -q SETCAP-FAILED "$OUT/out" && ok "--allow-userns, root: the nested namespace cannot map uid 0; setcap fails" ||
    not_ok "--allow-userns, root: $(cat "$OUT/out")"
else
  expect_refused "--allow-userns, in a nested user namespace"
fi
check_none "--allow-userns, nested user namespace"

jailed "$(attempt u2 unshare -r)" --allow-userns --uid 1000
expect_refused "--allow-userns --uid 1000, nested user namespace"
check_none "--allow-userns --uid 1000"

guarded "$(attempt u3 unshare -r)" --allow-userns --cap-add CAP_SETFCAP --workdir-readonly --rw "$SCRATCH"
check_none "--allow-userns --cap-add CAP_SETFCAP, writes in an --rw directory"

# The Landlock jail (no user namespace of cordon's: a root caller is host root there).
# Its /proc is the host's, whose uid_map it cannot write: no nested namespace gets a root there.
mkdir -p "$WORK/ll"
run "$CORDON" --isolation landlock --allow-userns -- sh -c "cd ll && $(attempt l1 unshare -r); $(attempt l2)"
grep -q SETCAP-FAILED "$OUT/out" && ! grep -q SETCAP-OK "$OUT/out" &&
  ok "--isolation landlock --allow-userns: setcap fails, directly and in a nested namespace" ||
  not_ok "--isolation landlock --allow-userns: $(cat "$OUT/out" | head -4)"
check_none "--isolation landlock --allow-userns"

# A policy that allows user namespaces again, with the options that let the nested namespace map
# itself (--rw /proc, --uid 1000): the policy gets the xattr refusals too.
cat >"$WORK/unshare.py" <<'EOF'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.unshare(0x10000000) != 0:
    print("UNSHARE-FAILED", os.strerror(ctypes.get_errno()))
    sys.exit(0)
for f, v in (("setgroups", "deny"), ("uid_map", "0 %d 1" % int(sys.argv[1])), ("gid_map", "0 %d 1" % int(sys.argv[2]))):
    try:
        fd = os.open("/proc/self/" + f, os.O_WRONLY)
        os.write(fd, v.encode())
        os.close(fd)
    except OSError as e:
        print("MAP-FAILED", f, e)
        sys.exit(0)
os.execvp(sys.argv[3], sys.argv[3:])
EOF
printf 'allow = ["unshare"]\n' >"$SCRATCH/unshare.seccomp.toml"
guarded "cp /usr/bin/python3 ./s1 && python3 ./unshare.py \$(id -u) \$(id -g) setcap cap_setuid+ep ./s1 && echo SETCAP-DONE" \
  --seccomp "$SCRATCH/unshare.seccomp.toml" --rw /proc --uid 1000 --gid 1000
if [[ $uid -eq 0 ]]; then
  grep -q SETCAP-DONE "$OUT/out" && not_ok "a policy allowing unshare: setcap ran: $(cat "$OUT/out")" ||
    ok "a policy allowing unshare, --rw /proc --uid 1000: setcap fails ($(cat "$OUT/out" "$OUT/err" | tr '\n' ' ' | head -c 100))"
fi
check_none "a policy allowing unshare, --rw /proc --uid 1000"
# The same through a profile.
cat >"$SCRATCH/nsprof.toml" <<EOF
extends = ["default"]
seccomp = "$SCRATCH/unshare.seccomp.toml"
rw = ["/proc"]
uid = 1000
EOF
guarded "cp /usr/bin/python3 ./s2 && python3 ./unshare.py \$(id -u) \$(id -g) setcap cap_setuid+ep ./s2; true" \
  -p "$SCRATCH/nsprof.toml"
[[ $rc -eq 0 ]] && ok "the profile runs" || not_ok "the profile: exit $rc: $(head -3 "$OUT/err")"
check_none "the same options from a profile"
# A policy that allows mounting with them: an overlay would copy a host file's capabilities up.
printf 'allow = ["mount"]\n' >"$SCRATCH/mount.seccomp.toml"
if [[ $uid -eq 0 ]]; then
  expect_exit 125 "root: --allow-userns with a policy allowing mount" \
    "$CORDON" --allow-userns --seccomp "$SCRATCH/mount.seccomp.toml" -- touch "$WORK/ran-mount"
  expect_err "^cordon: --seccomp .*refuses mount" "the error names what the policy must refuse"
  [[ ! -e $WORK/ran-mount ]] && ok "nothing ran" || not_ok "the command ran"
  printf 'allow = ["unshare", "mount"]\n' >"$SCRATCH/unshare-mount.seccomp.toml"
  expect_exit 125 "root: a policy allowing unshare and mount, no options" \
    "$CORDON" --seccomp "$SCRATCH/unshare-mount.seccomp.toml" -- touch "$WORK/ran-mount"
else
  expect_exit 0 "unprivileged: --allow-userns with a policy allowing mount runs" \
    "$CORDON" --allow-userns --seccomp "$SCRATCH/mount.seccomp.toml" -- true
fi

# A syscall policy file may not open the way again: an error before anything runs.

printf 'allow = ["fsetxattr"]\n' >"$SCRATCH/open.seccomp.toml"
printf 'base = "none"\n' >"$SCRATCH/none.seccomp.toml"
if [[ $uid -eq 0 ]]; then
  expect_exit 125 "--seccomp allowing fsetxattr with --allow-userns" \
    "$CORDON" --allow-userns --seccomp "$SCRATCH/open.seccomp.toml" -- touch "$WORK/ran-open"
  expect_err "^cordon: --seccomp .*refuses fsetxattr" "the error names the policy and the call"
  [[ ! -e $WORK/ran-open ]] && ok "nothing ran" || not_ok "the command ran"
  expect_exit 125 "--seccomp base none (user namespaces open) as root" \
    "$CORDON" --seccomp "$SCRATCH/none.seccomp.toml" -- touch "$WORK/ran-none"
  [[ ! -e $WORK/ran-none ]] && ok "nothing ran" || not_ok "the command ran"
  printf 'base = "none"\ndeny = ["mount", "open_tree", "open_tree_attr", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr"]\n' \
    >"$SCRATCH/none-nomount.seccomp.toml"
  run "$CORDON" --seccomp "$SCRATCH/none-nomount.seccomp.toml" -- sh -c "$(attempt n1 unshare -r)"
  grep -q XATTR-FAILED "$OUT/out" && ok "base none refusing mounts runs, with xattr writes refused" ||
    not_ok "base none refusing mounts: exit $rc: $(cat "$OUT/out" "$OUT/err" | head -3)"
  check_none "base none refusing mounts"
else
  expect_exit 0 "unprivileged: --seccomp allowing fsetxattr with --allow-userns runs" \
    "$CORDON" --allow-userns --seccomp "$SCRATCH/open.seccomp.toml" -- true
  expect_exit 0 "unprivileged: --seccomp base none runs" "$CORDON" --seccomp "$SCRATCH/none.seccomp.toml" -- true
fi
printf 'allow = ["fsetxattr"]\n' >"$SCRATCH/plain.seccomp.toml"
expect_exit 0 "the same policy without those options runs" \
  "$CORDON" --seccomp "$SCRATCH/plain.seccomp.toml" -- true

# bwrap mode: a bubblewrap command line, as agents' own sandboxes write them.
ro=(--ro-bind / / --dev /dev --proc /proc --bind "$WORK" "$WORK" --chdir "$WORK" --die-with-parent)
run "$bw" "${ro[@]}" --unshare-pid -- sh -c 'readlink /proc/self/ns/mnt; echo $$'
if [[ $rc -ne 0 || $(sed -n 1p "$OUT/out") == "$(readlink /proc/self/ns/mnt)" ]]; then
  echo "Bail out! bwrap mode does not make a mount namespace (exit $rc)"
  finish
  exit 1
fi
run "$bw" "${ro[@]}" --unshare-user --uid 0 --cap-add CAP_SETFCAP -- sh -c "$(attempt b1)"
if [[ $uid -eq 0 ]]; then
  expect_refused "bwrap --unshare-user --uid 0 --cap-add CAP_SETFCAP, host root"
else
  grep -q SETCAP-OK "$OUT/out" && ok "bwrap, unprivileged: setcap works as in bubblewrap (exit $rc)" ||
    not_ok "bwrap, unprivileged: setcap: $(cat "$OUT/out" "$OUT/err" | head -3)"
  getcap -n "$WORK/b1" | grep -q "rootid=$uid" && ok "bwrap, unprivileged: its capability is bound to the caller's uid" ||
    not_ok "bwrap, unprivileged: getcap: $(getcap -n "$WORK/b1")"
fi
check_none "bwrap --unshare-user --uid 0 --cap-add CAP_SETFCAP"
run "$bw" "${ro[@]}" --unshare-user -- sh -c "$(attempt b2 unshare -r)"
check_none "bwrap --unshare-user, a nested user namespace"
if [[ $uid -eq 0 ]]; then
  expect_refused "bwrap --unshare-user, nested user namespace, host root"
  # A root caller without --unshare-user keeps its capabilities, as with bubblewrap.
  run "$bw" "${ro[@]}" --unshare-pid -- sh -c "$(attempt b3)"
  expect_refused "bwrap as host root, capabilities kept"
  check_none "bwrap as host root, capabilities kept"
  run "$bw" "${ro[@]}" --unshare-user --disable-userns --uid 0 --cap-drop CAP_SETFCAP -- sh -c "$(attempt b4)"
  grep -q XATTR-OK "$OUT/out" && ok "bwrap --disable-userns --cap-drop CAP_SETFCAP keeps setxattr" ||
    not_ok "bwrap --disable-userns: $(cat "$OUT/out" "$OUT/err" | head -4)"
  check_none "bwrap --disable-userns"
fi

if [[ $uid -ne 0 ]]; then
  mkdir -p "$WORK/mnt"
  run "$bw" "${ro[@]}" --unshare-user -- unshare -rm sh -c "mount -t tmpfs none '$WORK/mnt' && echo MOUNTED"
  grep -q MOUNTED "$OUT/out" && ok "bwrap, unprivileged: a nested namespace mounts, as with bubblewrap" ||
    not_ok "bwrap, unprivileged: nested mount: exit $rc: $(cat "$OUT/err" | head -2)"
fi

# CORDON_BWRAP_EXTRAS: the command line runs in cordon's jail, with --allow-userns unless
# --disable-userns, so the same rule holds; with a bwrap --uid too.
run env CORDON_BWRAP_EXTRAS="--audit $SCRATCH/audit.jsonl" "$bw" "${ro[@]}" --unshare-all --uid 1000 -- \
  sh -c "$(attempt e1 unshare -r)"
expect_refused "CORDON_BWRAP_EXTRAS with --uid 1000, nested user namespace"
check_none "CORDON_BWRAP_EXTRAS with --uid 1000"
run env CORDON_BWRAP_EXTRAS="--audit $SCRATCH/audit.jsonl" "$bw" "${ro[@]}" --unshare-all --cap-add CAP_SETFCAP -- \
  sh -c "$(attempt e2)"
check_none "CORDON_BWRAP_EXTRAS with --cap-add CAP_SETFCAP"
run env CORDON_BWRAP_EXTRAS="--audit $SCRATCH/audit.jsonl --seccomp $SCRATCH/unshare.seccomp.toml" "$bw" "${ro[@]}" \
  --unshare-user --disable-userns --uid 1000 --bind /proc /proc -- \
  sh -c "cp /usr/bin/python3 ./e3 && python3 ./unshare.py 1000 1000 setcap cap_setuid+ep ./e3; true"
check_none "CORDON_BWRAP_EXTRAS --disable-userns with a policy allowing unshare"

finish

#!/usr/bin/env bash
# What the jail leaves behind never raises anyone's privileges (issue 10): no file it creates or
# changes ends up set-uid or set-gid, however it tries (chmod, creation modes, copies that keep
# modes, archives); and --net none covers vsock, whose port space is the machine's.
source "$TESTLIB"

mkdir -p "$WORK/s" && cd "$WORK/s"
# A tarball whose member is set-uid and set-gid, made on the host.
python3 - "$SCRATCH/suid.tar" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    data = open("/usr/bin/id", "rb").read()
    info = tarfile.TarInfo("from-tar")
    info.size, info.mode = len(data), 0o6755
    t.addfile(info, io.BytesIO(data))
PY
suid_src=$(find /usr/bin -maxdepth 1 -perm -4000 -type f | head -1)
jailed "cp /usr/bin/id ./x; chmod 4755 ./x; echo chmod=\$?
  chmod u+s,g+s ./x; echo symbolic=\$?
  install -m 4755 /usr/bin/id ./y; echo install=\$?
  python3 -c 'import os; os.close(os.open(\"z\", os.O_CREAT | os.O_WRONLY, 0o6755))'; echo open=\$?
  python3 -c 'import os; os.mknod(\"n\", 0o104755)'; echo mknod=\$?
  mkdir -m 2755 d; echo mkdir=\$?
  mkdir e && chmod g+s e; echo dir-chmod=\$?
  ${suid_src:+cp -p $suid_src ./copied; cp -a $suid_src ./copied-a;}
  tar -xpf $SCRATCH/suid.tar; echo tar=\$?
  ls -l" --rw "$SCRATCH"
for what in chmod symbolic install open mknod mkdir dir-chmod; do
  expect_out "^$what=[1-9]" "$what with a set-uid or set-gid mode is refused"
done
left=$(find "$WORK/s" -perm /6000 -printf '%m %p\n')
[[ -z $left ]] && ok "no set-uid or set-gid file is left in the workdir ($(find "$WORK/s" -type f | wc -l) files made)" ||
  not_ok "set-uid/set-gid left behind: $left"
[[ -f $WORK/s/from-tar && -f $WORK/s/x ]] && ok "the files themselves were made (only the bits were refused)" ||
  not_ok "files missing: $(ls "$WORK/s")"
if [[ $(id -u) -eq 0 ]]; then
  # What another local user gets from running them: their own ids, not the caller's.
  for f in x from-tar; do  # copies of /usr/bin/id
    [[ -f $WORK/s/$f ]] || continue
    chmod o+rx "$WORK/s" 2>/dev/null
    out=$(setpriv --reuid=cordon-test --regid=cordon-test --clear-groups "$WORK/s/$f" -u 2>&1) || true
    [[ $out == "$(id -u cordon-test)" ]] && ok "another user running ./$f gets euid $out, not 0" ||
      not_ok "another user running ./$f: euid $out"
  done
fi
cd "$WORK"

# vsock: one port space for the whole machine (the hypervisor's and other VMs' ports). The
# ports differ per run: the root and the user run of this test may run at the same time.
port=$((20000 + $$ % 20000 * 3))
VSOCK='
import socket, sys
try:
    s = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
    s.bind((socket.VMADDR_CID_ANY, int(sys.argv[1])))
    s.listen()
    print("vsock-listening")
except OSError as e:
    print("vsock-refused", e.errno)
'
if python3 -c "$VSOCK" $port | grep -q vsock-listening; then
  jailed "python3 -c '$VSOCK' $((port + 1))"
  expect_out "^vsock-refused 97$" "--net none: a vsock socket is refused (EAFNOSUPPORT)"
  jailed "python3 -c '$VSOCK' $((port + 2))" --net host
  expect_out "^vsock-listening$" "--net host: vsock works, as the rest of the host's network"
else
  skip "--net host keeps vsock: vsock is not available on this host (the refusal inside the jail is still checked)"
  jailed "python3 -c '$VSOCK' $((port + 1))"
  expect_out "^vsock-refused" "--net none: a vsock socket is refused"
fi
finish

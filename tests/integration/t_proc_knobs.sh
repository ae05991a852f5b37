#!/usr/bin/env bash
# No host-global kernel knob is writable inside the jail, for root callers above all (whose uid 0
# is the host's uid 0 wherever the kernel checks the uid rather than a capability): every file
# under the jail's /proc but the per-process ones is opened for writing (open only, never a
# write), in the default jail, with --net host, under the bwrap-style --proc and in every shipped
# profile. And the core_pattern reproduction runs nothing on the host.
source "$TESTLIB"

# Prints every file under /proc that opens for writing, except the jail's own processes' files.
WALK='
import os
bad = []
def check(p):
    if os.path.islink(p):
        return
    try:
        fd = os.open(p, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return
    os.close(fd)
    bad.append(p)
for top in sorted(os.listdir("/proc")):
    if top.isdigit() or top in ("self", "thread-self"):
        continue
    p = "/proc/" + top
    if os.path.isdir(p) and not os.path.islink(p):
        for root, dirs, files in os.walk(p):
            for f in files:
                check(root + "/" + f)
    else:
        check(p)
print("walked")
for p in bad:
    print("WRITABLE " + p)
'

check_walk() {  # DESCRIPTION CORDON-OPTIONS...
  local desc=$1
  shift
  jailed "python3 -c '$WALK'" "$@"
  if [[ $rc -eq 0 ]] && grep -q '^walked$' "$OUT/out" && ! grep -q '^WRITABLE' "$OUT/out"; then
    ok "$desc: no file under /proc outside the jail's processes opens for writing"
  else
    not_ok "$desc: exit $rc; $(grep -c '^WRITABLE' "$OUT/out") writable"
    grep '^WRITABLE' "$OUT/out" | head -10 | sed 's/^/#   /'
    sed 's/^/#   stderr: /' "$OUT/err" | head -5
  fi
}

cd "$WORK"
check_walk "default jail"
check_walk "--net host" --net host
check_walk "bwrap-style --proc" --no-profile --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --chdir /
# A root caller's classic jail (its uid is the host's uid 0), where the workdir's file system
# cannot be idmapped (ramfs): the same walk, with every protection a host-root jail gets.
if [[ $(id -u) -eq 0 ]]; then
  mkdir -p "$SCRATCH/ramfs" && mount -t ramfs ramfs "$SCRATCH/ramfs"
  pushd "$SCRATCH/ramfs" >/dev/null
  jailed 'cat /proc/self/uid_map'
  if grep -Eq '^ +0 +0 +1$' "$OUT/out"; then
    check_walk "a root caller's classic jail (host uid 0)"
    check_walk "a root caller's classic jail with --net host" --net host
  else
    not_ok "the jail on ramfs was not the classic one: $(cat "$OUT/out")"
  fi
  popd >/dev/null
  umount "$SCRATCH/ramfs"
fi
for p in $(ls "$(dirname "$CORDON")/../share/cordon/profiles" | sed -n 's/\.toml$//p'); do
  [[ $p == default ]] && continue
  check_walk "profile $p" -p "$p"
done

# The reproduction of the escape: core_pattern pointing at a script in the workdir, then a
# crash. First prove, without writing, that the file cannot be opened for writing at all: only
# then is the write tried (a regression must never reach the host's core_pattern).
marker="$SCRATCH/owned"
host_pattern=$(cat /proc/sys/kernel/core_pattern)
jailed 'python3 -c "
import os
try:
    os.close(os.open(\"/proc/sys/kernel/core_pattern\", os.O_WRONLY))
    print(\"OPENS\")
except OSError as e:
    print(\"refused\", e.errno)
"' --net host
if grep -q '^refused' "$OUT/out"; then
  ok "core_pattern cannot be opened for writing ($(cat "$OUT/out"))"
  jailed "printf '#!/bin/sh\nid > $marker\n' > ./x.sh; chmod +x ./x.sh
    echo \"|\$PWD/x.sh\" > /proc/sys/kernel/core_pattern; echo write=\$?
    sh -c 'kill -SEGV \$\$'; true" --rw "$SCRATCH"
  expect_out "^write=[1-9]" "the reproduction's write to core_pattern fails"
  expect_err "Read-only file system|Permission denied" "with EROFS or EACCES"
  sleep 0.5
  [[ ! -e $marker ]] && ok "nothing ran on the host" || not_ok "the crash handler ran on the host: $(cat "$marker")"
  [[ $(cat /proc/sys/kernel/core_pattern) == "$host_pattern" ]] && ok "the host's core_pattern is unchanged" ||
    not_ok "core_pattern changed to $(cat /proc/sys/kernel/core_pattern)"
else
  not_ok "core_pattern opens for writing inside the jail: the escape is not tried ($(cat "$OUT/out" "$OUT/err"))"
fi
rm -f "$WORK/x.sh"

# Host-wide information is masked: /proc/timer_list and kcore read as empty, and so does
# /proc/keys in a root caller's jail. An unprivileged caller's jail is not masked there: the
# kernel lists only the keyrings that user may view, its own (which a login's PAM session makes).
masked="timer_list kcore"
[[ $(id -u) -eq 0 ]] && masked="keys $masked"
jailed "for f in $masked; do [ -e /proc/\$f ] || continue; n=\$(cat /proc/\$f 2>/dev/null | wc -c); echo \"\$f=\$n\"; done"
expect_no_out "=[1-9]" "/proc/${masked// /, /proc/} show nothing"
if [[ $(id -u) -ne 0 ]]; then
  jailed 'cat /proc/keys 2>/dev/null | awk "{print \$6}" | sort -u'
  ! grep -qvx "$(id -u)" "$OUT/out" && ok "/proc/keys lists only the caller's own keys ($(wc -l <"$OUT/out") owners)" ||
    not_ok "/proc/keys lists keys of other users: $(tr '\n' ' ' <"$OUT/out")"
fi
finish

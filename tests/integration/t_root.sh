#!/usr/bin/env bash
# No jailed process is host uid 0, even for a root caller (issue 10): the jail runs as cordon's
# jail id (2147483646) and sees the caller's own trees through idmapped mounts, so what it writes
# stays the caller's; root-only files elsewhere are unreadable. An unprivileged caller's jail is
# the caller. Where the workdir's file system cannot be idmapped, a root caller's jail falls back
# to the classic jail (host uid 0, /proc knobs read-only) and -v says so.
source "$TESTLIB"

me=$(id -u)
[[ $me -eq 0 ]] && want_outside=2147483646 || want_outside=$me
mkdir -p "$WORK/proj" && cd "$WORK/proj"
echo mine > owned-before

# The jail's ids, inside and on the host.
marker=$((RANDOM % 900 + 100))
"$CORDON" -- /bin/sh -c "id -u; cat /proc/self/uid_map; sleep 1.$marker" >"$OUT/ids" 2>&1 &
pid=$!
# Polled, bounded: the sanitizer build on a loaded machine can take longer than any fixed pause.
for ((t = 0; t < 300; t++)); do
  host_uids=$(ps -e -o uid=,args= | awk -v m="1.$marker" '$2 == "sleep" && $3 == m {print $1}')
  [[ -n $host_uids ]] && break
  sleep 0.1
done
leaked=$(grep -c " $WORK/proj/" /proc/self/mountinfo)
wait $pid
[[ $leaked -eq 0 && $(grep -c " $WORK/proj/" /proc/self/mountinfo) -eq 0 ]] &&
  ok "no mount of the jail's reaches the host's namespace, during the run or after" || not_ok "$leaked jail mounts seen on the host"
cp "$OUT/ids" "$OUT/out"
expect_out "^$me$" "inside, the command has the caller's uid ($me)"
expect_out "^ +$me +$want_outside +1$" "the jail's uid maps to host uid $want_outside"
[[ -n $host_uids && $host_uids == "$want_outside" ]] && ok "on the host, the command runs as uid $want_outside" ||
  not_ok "host uid of the jailed sleep: '$host_uids'"

# What it writes is the caller's; what the caller owns there is the jail's to change.
jailed 'echo new > made; mkdir d && echo x > d/f; echo more >> owned-before; echo w=$?; stat -c %u owned-before'
expect_out "^w=0$" "the caller's files in the workdir are writable"
expect_out "^$me$" "and owned by the jail's uid inside"
[[ $(stat -c %u made) == "$me" && $(stat -c %u d/f) == "$me" && $(stat -c %g made) == "$(id -g)" ]] &&
  ok "files the jail made are the caller's on the host ($(stat -c %u:%g made))" || not_ok "made is owned by $(stat -c %u:%g made)"

# A root-only file of the system's (a key under /etc, say): unreadable inside.
if [[ $me -eq 0 ]]; then
  secret=/etc/default/cordon-test-secret-$$
  echo "root-only-secret" > "$secret" && chmod 0600 "$secret"
  jailed "cat $secret; echo rc=\$?; stat -c %u /usr/bin/id"
  rm -f "$secret"
  expect_no_out "root-only-secret" "a root caller's jail cannot read a 0600 root file under /etc"
  expect_out "^65534$" "root's system files belong to nobody inside (as for an unprivileged caller)"
  # A repository of root's shown with --ro is root's inside: git works there.
  mkdir -p "$SCRATCH/repo" && git -C "$SCRATCH/repo" init -q && git -C "$SCRATCH/repo" -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
  jailed "cd $SCRATCH/repo && git log --format=%s" --ro "$SCRATCH/repo"
  expect_out "^one$" "git works in a root-owned repository shown with --ro (no dubious ownership)"
  # --rw paths: written as root.
  jailed "echo x > $SCRATCH/rw-made" --rw "$SCRATCH"
  [[ $(stat -c %u "$SCRATCH/rw-made" 2>/dev/null) == 0 ]] && ok "--rw: what the jail writes is root's on disk" || not_ok "--rw file: $(stat -c %u "$SCRATCH/rw-made" 2>&1)"
  # A writable tree deeper than the workdir's placeholders: its mount comes after theirs.
  mkdir -p "$SCRATCH/a/b/c/d/e" "$WORK/fresh"
  pushd "$WORK/fresh" >/dev/null
  jailed "echo deep > $SCRATCH/a/b/c/d/e/f; mkdir .claude/x 2>/dev/null; echo claude=\$?" --rw "$SCRATCH/a/b/c/d/e"
  popd >/dev/null
  [[ $(cat "$SCRATCH/a/b/c/d/e/f" 2>/dev/null) == deep ]] && ok "a writable tree deeper than the placeholders works" || not_ok "deep --rw: exit $rc"
  expect_out "^claude=[1-9]" "and the placeholders still protect"
  # A file system that cannot be idmapped (ramfs): the classic jail, and -v says why.
  mkdir -p "$SCRATCH/ramfs" && mount -t ramfs ramfs "$SCRATCH/ramfs"
  pushd "$SCRATCH/ramfs" >/dev/null
  run "$CORDON" -v -- /bin/sh -c "$GUARD; cat /proc/self/uid_map; echo ok > made"
  popd >/dev/null
  expect_out "^ +0 +0 +1$" "on ramfs the jail is the classic one (uid 0 is the host's)"
  expect_err "cordon: note: root remap: .*; the jail runs as host root" "-v says so, and why"
  [[ -f $SCRATCH/ramfs/made ]] && ok "and it works there" || not_ok "nothing made on ramfs"
  umount "$SCRATCH/ramfs"
  # A workdir that another user owns (a project bind-mounted into a root container, a CI
  # runner's checkout): the jail owns that user's files there, and what it writes there is
  # theirs on disk; root's files there are nobody's, and root's other trees stay root's.
  theirs="$WORK/theirs"
  mkdir -p "$theirs" && git -C "$theirs" init -q && echo mine > "$theirs/owned" && echo r > "$theirs/rootfile"
  git -C "$theirs" add owned && git -C "$theirs" -c user.name=t -c user.email=t@t commit -qm one
  chown -R 4242:4242 "$theirs" && chown 0:0 "$theirs/rootfile"
  mkdir -p "$SCRATCH/rootrw"
  pushd "$theirs" >/dev/null
  run "$CORDON" --dry-run -- true
  expect_out "^workdir: +$theirs \(read-write; owned by uid 4242, " "--dry-run says whose the workdir's files are"
  jailed "echo new > made && echo made-ok; echo more >> owned && echo append-ok; mkdir d && echo mkdir-ok
    (echo z >> rootfile) 2>/dev/null || echo rootfile-ro; stat -c '%n %u:%g' owned rootfile
    echo x > $SCRATCH/rootrw/f && echo rootrw-ok
    git add made && git -c user.name=t -c user.email=t@t commit -qm two && echo commit-ok" --rw "$SCRATCH/rootrw"
  popd >/dev/null
  expect_out "^made-ok$" "another user's workdir: the jail makes files there"
  expect_out "^append-ok$" "and writes the owner's files"
  expect_out "^mkdir-ok$" "and makes directories"
  expect_out "^owned 0:0$" "the owner's files are the jail's inside"
  expect_out "^rootfile-ro$" "root's file there is not writable"
  expect_out "^rootfile 65534:65534$" "and is nobody's inside"
  expect_out "^commit-ok$" "git commits there (no dubious ownership)"
  expect_out "^rootrw-ok$" "a --rw tree of root's is still written in the same run"
  [[ $(stat -c %u:%g "$theirs/made" "$theirs/d" | sort -u) == 4242:4242 ]] &&
    ok "what the jail made there is the owner's on disk" || not_ok "made: $(stat -c %u:%g "$theirs/made" "$theirs/d")"
  [[ $(stat -c %u "$SCRATCH/rootrw/f") == 0 ]] && ok "and what it wrote in root's tree is root's" ||
    not_ok "rootrw/f: $(stat -c %u "$SCRATCH/rootrw/f")"
  [[ $(git -C "$theirs" -c safe.directory='*' log -1 --format=%s) == two && $(find "$theirs/.git/objects" -uid 0 | wc -l) -eq 0 ]] &&
    ok "the commit is in the repository, its objects the owner's" || not_ok "commit: $(git -C "$theirs" -c safe.directory='*' log --oneline | head -3)"
  [[ $(cat "$theirs/rootfile") == r ]] && ok "root's file there is unchanged" || not_ok "rootfile: $(cat "$theirs/rootfile")"
  # From a subdirectory of a checkout another user owns (a CI step's working-directory): the
  # workdir is the repository's top, idmapped from its owner, and git works there as from the
  # top. Only for an owner with a passwd line (whose HOME cordon can tell), and only from a
  # directory of theirs: uid 4242 has none, and root's own directory there stays root's.
  runner="$WORK/runner-repo"
  mkdir -p "$runner/sub/dir" && git -C "$runner" init -q && echo r > "$runner/r" && git -C "$runner" add r &&
    git -C "$runner" -c user.name=t -c user.email=t@t commit -qm one && chown -R cordon-test: "$runner"
  pushd "$runner/sub/dir" >/dev/null
  jailed "echo s > made-sub && git add made-sub && git -c user.name=t -c user.email=t@t commit -qm two &&
    echo subcommit-ok; git rev-parse --show-toplevel"
  popd >/dev/null
  expect_err "the workdir is the git repository $runner, which holds the current directory" \
    "another user's checkout, from a subdirectory: the workdir is the repository's top"
  expect_out "^subcommit-ok$" "and git commits from the subdirectory"
  expect_out "^$runner$" "git finds the repository's top"
  [[ $(git -C "$runner" -c safe.directory='*' log -1 --format=%s) == two &&
    $(stat -c %U "$runner/sub/dir/made-sub") == cordon-test ]] &&
    ok "the commit is in the repository, the file the owner's" ||
    not_ok "sub commit: $(git -C "$runner" -c safe.directory='*' log --oneline | head -3)"
  mkdir -p "$runner/rootbuild" && pushd "$runner/rootbuild" >/dev/null
  jailed "touch out.o && echo rootdir-ok"
  popd >/dev/null
  expect_out "^rootdir-ok$" "root's own directory in that checkout stays root's workdir, writable"
  expect_no_err "the workdir is the git repository" "and is not widened to the repository"
  mkdir -p "$theirs/sub2" && chown 4242:4242 "$theirs/sub2" && pushd "$theirs/sub2" >/dev/null
  jailed "echo x > f && echo nopasswd-ok"
  popd >/dev/null
  expect_out "^nopasswd-ok$" "an owner without a passwd line: the subdirectory alone is the workdir"
  expect_no_err "the workdir is the git repository" "and the repository is not taken"
  # A nested repository's config the jail makes unsafe is put back as it was: the owner's.
  git init -q "$theirs/nested" && chown -R 4242:4242 "$theirs/nested"
  sleep 0.1
  pushd "$theirs" >/dev/null
  jailed "git -C nested config core.pager 'echo harmless' && echo set"
  popd >/dev/null
  expect_out "^set$" "the jail sets core.pager in a nested repository of the owner's"
  [[ -e $theirs/nested/.git/config.cordon-unsafe && $(stat -c %u:%g "$theirs/nested/.git/config") == 4242:4242 ]] &&
    ok "the config put back is the owner's" || not_ok "config: $(ls -ln "$theirs/nested/.git" | grep config)"
  # includeIf patterns that backtrack without end (git's own wildmatch hangs on them) cost a
  # bounded time.
  long="$WORK/w$(printf 'a%.0s' $(seq 60))"
  mkdir -p "$long" && git -C "$long" init -q && git -C "$long" config 'includeIf.gitdir:**a**a**a**a**a**a**a**a**a**a**a**a**a**a**b.path' x
  pushd "$long" >/dev/null
  run timeout 30 "$CORDON" -q -- true
  popd >/dev/null
  [[ $rc -eq 0 ]] && ok "an includeIf pattern that backtracks does not stall the run" || not_ok "includeIf backtracking: exit $rc"
  # A directory another user made in their workdir with the placeholders' mode, joined as a
  # placeholder, is not taken into root's pool of placeholders (which root's next run, in any
  # workdir, takes from): that user could keep a descriptor of it and write into root's project.
  planted="$WORK/theirs2"
  mkdir -p "$planted/.claude" && chmod 01755 "$planted/.claude" && chown -R 4242:4242 "$planted"
  pushd "$planted" >/dev/null
  jailed "true"
  popd >/dev/null
  [[ -z $(find "$HOME/.cache/cordon" -uid 4242 2>/dev/null) ]] &&
    ok "another user's placeholder-like directory is not pooled" ||
    not_ok "pooled: $(find "$HOME/.cache/cordon" -uid 4242 -ls 2>&1 | head -3)"
  # Nor one that cordon made there itself but that inherited the user's default ACL
  # (user:4242:rwx): it is removed, not pooled (an empty pool, so that placeholders are made).
  acldir="$WORK/theirs-acl"
  mkdir -p "$acldir" && chown 4242:4242 "$acldir"
  /usr/bin/python3 -c '
import os, struct, sys
entries = [(0x01, 7, 0xffffffff), (0x02, 7, 4242), (0x04, 5, 0xffffffff), (0x10, 7, 0xffffffff), (0x20, 5, 0xffffffff)]
acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)
os.setxattr(sys.argv[1], "system.posix_acl_default", acl)' "$acldir"
  pushd "$acldir" >/dev/null
  XDG_CACHE_HOME="$SCRATCH/acl-cache" run "$CORDON" -- /bin/sh -c "$GUARD; true"
  popd >/dev/null
  acl_pooled=$(/usr/bin/python3 -c '
import os, sys
root = sys.argv[1]
print(sum(1 for d, _, _ in os.walk(root) if any(x.startswith("system.posix_acl") for x in os.listxattr(d))))' "$SCRATCH/acl-cache")
  [[ $rc -eq 0 && $acl_pooled -eq 0 ]] && ok "a placeholder that inherited another user's ACL is not pooled" ||
    not_ok "ACL placeholders pooled: $acl_pooled (exit $rc)"
  # Not where the jail would take a group that need not be the owner's, a HOME's dotfiles, or
  # another file system mounted below the workdir: there the owner's files stay nobody's.
  refused_owner() {  # DIR DESCRIPTION NOTE
    echo mine > "$1/probe" && chown 4242:4242 "$1/probe"
    pushd "$1" >/dev/null
    jailed "echo planted >> probe; echo rc=\$?"
    popd >/dev/null
    expect_out "^rc=[1-9]" "$2: the owner's files are not the jail's"
    expect_err "note: the workdir $1 $3" "$2: a note says why"
    [[ $(cat "$1/probe") == mine ]] && ok "$2: the probe is unchanged" || not_ok "$2: probe: $(cat "$1/probe")"
  }
  mkdir -p "$WORK/othergroup" && chown 4242:6 "$WORK/othergroup"
  refused_owner "$WORK/othergroup" "another group, no passwd line" "belongs to uid 4242, who has no passwd line, and to group 6"
  mkdir -p "$WORK/homelike" && touch "$WORK/homelike/.bashrc" && chown -R 4242:4242 "$WORK/homelike"
  refused_owner "$WORK/homelike" "a directory with a .bashrc" "belongs to uid 4242 and looks like a home directory \(it holds \.bashrc\)"
  mkdir -p "$WORK/withmount/sub" && chown -R 4242:4242 "$WORK/withmount"
  mount -t tmpfs tmpfs "$WORK/withmount/sub"
  refused_owner "$WORK/withmount" "a file system mounted below" "belongs to uid 4242 and has another file system mounted below it"
  umount "$WORK/withmount/sub"
  # Not where the workdir is that user's HOME: the jail would write the dotfiles their shell runs.
  uhome=$(getent passwd cordon-test | cut -d: -f6)
  probe="$uhome/.cordon-t-root-probe-$$"
  echo mine > "$probe" && chown cordon-test: "$probe"
  pushd "$uhome" >/dev/null
  jailed "echo planted >> $probe; echo rc=\$?"
  popd >/dev/null
  expect_out "^rc=[1-9]" "the workdir is another user's HOME: the jail cannot write their files"
  expect_err "note: the workdir $uhome is the home directory of cordon-test" "and a note says why"
  [[ $(cat "$probe") == mine ]] && ok "their file is unchanged" || not_ok "probe: $(cat "$probe")"
  # Nor in a dot directory of that HOME (~/.local/bin, ~/.config), where their tools run from.
  dotdir="$uhome/.cordon-t-root-$$/proj"
  mkdir -p "$dotdir" && chown -R cordon-test: "$uhome/.cordon-t-root-$$"
  pushd "$dotdir" >/dev/null
  run "$CORDON" --dry-run -- true
  popd >/dev/null
  expect_out "note: the workdir $dotdir is in \.cordon-t-root-$$ of cordon-test's home directory" \
    "a dot directory of that HOME: no owner idmap, and a note says why"
  rm -rf "$uhome/.cordon-t-root-$$"
  # Nor through another path to it: a bind mount of that HOME (a container's -v $HOME:/work).
  mkdir -p "$SCRATCH/alias"
  echo mine > "$probe" && chown cordon-test: "$probe"
  run unshare -m sh -c 'mount --bind "$1" "$2" && cd "$2" && shift 2 && exec "$@"' sh "$uhome" "$SCRATCH/alias" \
    "$CORDON" -- /bin/sh -c "$GUARD; echo planted >> $(basename "$probe"); echo rc=\$?"
  expect_out "^rc=[1-9]" "a bind mount of that HOME: the jail cannot write their files"
  [[ $(cat "$probe") == mine ]] && ok "and their file is unchanged" || not_ok "probe: $(cat "$probe")"
  rm -f "$probe"
else
  echo "root-only-secret" > "$SCRATCH/mine-only" && chmod 0600 "$SCRATCH/mine-only"
  jailed "cat $SCRATCH/mine-only; stat -c %u /usr/bin/id" --ro "$SCRATCH"
  expect_out "^root-only-secret$" "an unprivileged caller's jail reads the caller's own 0600 file"
  expect_out "^65534$" "root's system files belong to nobody inside"
fi
finish

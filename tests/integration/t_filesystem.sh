#!/usr/bin/env bash
# The default jail's filesystem (SPEC §4): read-only system, writable workdir, private HOME,
# /tmp and /run, fresh /proc, minimal /dev, no /sys, hidden secrets, nothing left on the host.
source "$TESTLIB"

git -C "$WORK" init -q 2>/dev/null || mkdir -p "$WORK/.git/hooks"
echo "tracked" > "$WORK/file.txt"
# cordon itself keeps a cache in ~/.cache/cordon: verified policies (cordon-policy(5)) and the
# pool of placeholder directories that runs rename in and out (cordon(1), PROTECTED PATHS),
# whose directory's time changes with every run. One run first creates it, then the jail's
# writes are what must not reach the host HOME.
"$CORDON" -- true
home_snapshot() { snapshot "$HOME" | grep -v ' \./\.cache/cordon/placeholders$'; }
host_home_before=$(home_snapshot)

jailed 'mkdir -p sub && echo new > sub/y && cat sub/y'
expect_rc 0 "the workdir is writable"
expect_out "^new$" "a write to the workdir is visible inside"
[[ $(cat "$WORK/sub/y") == new ]] && ok "workdir writes reach the host" || not_ok "workdir writes did not reach the host"
rm -rf "$WORK/sub"
before=$(snapshot "$WORK")

for target in /etc/cordon-escape /usr/cordon-escape /opt/cordon-escape /cordon-escape /bin/cordon-escape; do
  jailed "echo pwned > $target; echo status=\$?"
  expect_out "status=[1-9]" "writing $target fails"
done
for target in /etc/cordon-escape /usr/cordon-escape /opt/cordon-escape /cordon-escape; do
  [[ -e $target ]] && not_ok "$target exists on the host" || ok "$target not created on the host"
done

jailed 'ls -A "$HOME"; cat "$HOME/.ssh/id_ed25519" 2>&1; cat "$HOME/.aws/credentials" 2>&1; echo mine > "$HOME/scratch"; cat "$HOME/scratch"'
expect_no_out "FAKE-PRIVATE-KEY" "~/.ssh of the caller is invisible"
expect_no_out "^\[default\]" "~/.aws of the caller is invisible"
expect_out "^mine$" "the private HOME is writable"
[[ $(home_snapshot) == "$host_home_before" ]] && ok "the host HOME is unchanged" || { not_ok "the host HOME changed"; diff <(echo "$host_home_before") <(home_snapshot) | head; }

jailed 'cat /etc/shadow; echo rc=$?; cat /etc/gshadow; echo rc=$?; ls /etc/ssl/private 2>&1 | wc -l'
expect_no_out "^root:" "/etc/shadow content is not readable"
expect_out "rc=[1-9]" "reading /etc/shadow fails"
for key in /etc/ssh/ssh_host_*_key; do
  [[ -e $key ]] || continue
  jailed "cat $key >/dev/null 2>&1 && echo READ || echo DENIED"
  expect_out "^DENIED$" "$key is unreadable"
done

marker="cordon-host-tmp-$$"
touch "/tmp/$marker"
jailed "ls /tmp; echo scratch > /tmp/jail-$$; ls /var/tmp /run >/dev/null && echo dirs-ok"
expect_no_out "$marker" "host /tmp is invisible"
expect_out "dirs-ok" "/var/tmp and /run exist"
[[ -e /tmp/jail-$$ ]] && not_ok "a jail /tmp file leaked to the host" || ok "jail /tmp writes stay private"
rm -f "/tmp/$marker"
jailed 'df -k /tmp | tail -1'
expect_out " 1048576 " "/tmp is a tmpfs bounded at 1G by default"

jailed 'cat /proc/1/comm; ls /proc | grep -c "^[0-9]"'
expect_out "^cordon$" "/proc is the jail's own (pid 1 is cordon's init)"
jailed 'ls /dev | tr "\n" " "'
expect_out "^fd full null ptmx pts random shm stderr stdin stdout (tty )?urandom zero $" "/dev is minimal"
jailed 'echo hi > /dev/null && head -c 4 /dev/urandom | wc -c && echo x > /dev/shm/x && cat /dev/shm/x'
expect_out "^4$" "/dev/urandom works"
expect_out "^x$" "/dev/shm is writable"
jailed 'touch /dev/planted 2>/dev/null || echo dev-ro; stat -c %a /dev/shm; grep " /dev/shm " /proc/self/mountinfo | grep -c "nosuid,nodev"'
expect_out "^dev-ro$" "nothing can be created in /dev itself"
expect_out "^1777$" "/dev/shm is sticky and world-writable"
expect_out "^1$" "/dev/shm is nosuid and nodev"
jailed 'ls /sys 2>&1 | head -1; test -e /sys/kernel && echo HAS-SYS-KERNEL'
expect_no_out "HAS-SYS-KERNEL" "no host /sys internals"

# The current directory is HOME: it is not shared, and cordon says that writes there are lost.
pushd "$HOME" >/dev/null
run "$CORDON" -- /bin/sh -c "$GUARD; touch \"\$HOME/x\" && echo wrote-home; touch /cordon-x 2>/dev/null || echo root-ro"
popd >/dev/null
expect_err "is HOME .*not shared: the jail's HOME is private, and what is written there is discarded" "running from HOME says writes there are discarded"
expect_out "wrote-home" "and the private HOME takes them, as the note says"
expect_out "root-ro" "and / stays read-only"
[[ -e $HOME/x ]] && not_ok "HOME became writable by accident" || ok "HOME was not made writable"
pushd / >/dev/null; run "$CORDON" -- /bin/true; popd >/dev/null
expect_err "current directory / is .*not shared: nothing written there reaches the host" "running from / prints a note"

# --workdir none, --ro, --rw, --hide, --tmpfs.
mkdir -p "$SCRATCH/extra" && echo data > "$SCRATCH/extra/f"
jailed "echo x > $WORK/f2; echo rc=\$?" --workdir none
expect_out "rc=[1-9]" "--workdir none makes the workdir read-only"
jailed "cat $SCRATCH/extra/f; echo y > $SCRATCH/extra/g; echo rc=\$?" --ro "$SCRATCH/extra"
expect_out "^data$" "--ro exposes a path"
expect_out "rc=[1-9]" "--ro is read-only"
jailed "echo y > $SCRATCH/extra/g && echo rc=\$?" --rw "$SCRATCH/extra"
[[ -f $SCRATCH/extra/g ]] && ok "--rw is writable" || not_ok "--rw write missing"
jailed "cat $WORK/file.txt; echo rc=\$?" --hide "$WORK/file.txt"
expect_no_out "^tracked$" "--hide hides a file"
jailed "ls $WORK | wc -l" --tmpfs "$WORK"
expect_out "^0$" "--tmpfs shadows a directory with an empty tmpfs"

# Mounts stacked on the directories setup makes (src/jail/fs/mounts.cpp keeps what it made and
# forgets what a mount covers): each lands where the path leads, as the jail sees it.
mkdir -p "$SCRATCH/extra/d" && echo inner > "$SCRATCH/extra/d/i"
jailed "cat /made/deep/er/f /made/deep/er/d/i" --ro "$SCRATCH/extra" --bind "$SCRATCH/extra" /made/deep/er
expect_out "^data$" "a bind on a new deep path"
expect_out "^inner$" "what it holds is below it"
jailed "ls /made/t | wc -l; cat /made/t/b/f" --tmpfs /made/t --bind "$SCRATCH/extra" /made/t/b
expect_out "^1$" "a tmpfs on a new path holds only the mount point made for a bind in it"
expect_out "^data$" "the bind below a new tmpfs is on the tmpfs, not under it"
jailed "cat /made/d/b/f; ls /made/d" --dir /made/d --bind "$SCRATCH/extra" /made/d/b
expect_out "^data$" "a bind into a --dir"
jailed "cat /made/file; ls -l /made/file" --bind "$SCRATCH/extra/f" /made/file
expect_out "^data$" "a file bound on a new path"
jailed "cat $SCRATCH/extra/d/i 2>&1; ls $SCRATCH/extra/d | wc -l" --ro "$SCRATCH/extra" --tmpfs "$SCRATCH/extra/d"
expect_out "^0$" "a tmpfs over part of a bound directory shadows it"
jailed "readlink /lnk; cat /lnk/f" --symlink "$SCRATCH/extra" /lnk --ro "$SCRATCH/extra"
expect_out "^data$" "a symlink made at the root leads into a bind"
# A directory setup made, covered under another name (a symlink led the mount there): what is
# mounted below it later lands on the covering mount, not underneath it.
mkdir -p "$SCRATCH/alias/c" && echo one > "$SCRATCH/alias/c/f"
jailed "echo changed > /made/x/b/c/f; echo rc=\$?" --dir /made/x/b --symlink /made/x /made/l \
  --bind "$SCRATCH/alias" /made/l/b --ro-bind "$SCRATCH/alias/c" /made/x/b/c
expect_out "rc=[1-9]" "a read-only bind below a directory covered through a --symlink is read-only"
[[ $(cat "$SCRATCH/alias/c/f") == one ]] && ok "and the host file is unchanged" || not_ok "the host file was written"
mkdir -p "$SCRATCH/w2" "$SCRATCH/a2/x" "$SCRATCH/b2" && ln -sfn /made/t2 "$SCRATCH/w2/ln" && echo old > "$SCRATCH/b2/f"
jailed "echo new > /made/t2/x/f; echo rc=\$?; cat /made/t2/x/f" --tmpfs /made/t2 --bind "$SCRATCH/w2" /made/w \
  --bind "$SCRATCH/a2" /made/w/ln --ro-bind "$SCRATCH/b2" /made/t2/x
expect_out "rc=[1-9]" "a read-only bind below a tmpfs covered through a host tree's symlink is read-only"
expect_out "^old$" "and shows its own files"
[[ ! -e $SCRATCH/a2/x/f ]] && ok "nothing reached the covering bind's host directory" || not_ok "a2/x/f was written"
rm -rf "$SCRATCH/alias" "$SCRATCH/w2" "$SCRATCH/a2" "$SCRATCH/b2"
rm -rf "$SCRATCH/extra"

after=$(snapshot "$WORK")
[[ $before == "$after" ]] && ok "the workdir is exactly as it was" || { not_ok "the workdir changed"; diff <(echo "$before") <(echo "$after") | head; }
finish

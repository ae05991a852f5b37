#!/usr/bin/env bash
# Exec-time checks (SPEC §6, last point): every execve inside the jail is judged with its real
# argv, so rm -rf / is stopped however it is reached (an interpreter, a script, make, a symlink
# to rm, a path through /proc/self/root), while commands the static check cannot resolve are
# deferred to their execs instead of refused. Each dangerous case runs in a throwaway project
# with a marker file, behind the jail guard: should the check fail, what runs deletes only that
# project and the jail's own tmpfs (the system is read-only in the jail).
source "$TESTLIB"

run "$CORDON" --dry-run -- true
if ! grep -q "^exec checks: on" "$OUT/out"; then
  echo "# skip: exec-time checks are not available here: $(grep -i 'exec checks' "$OUT/out")"
  exit 77
fi

project() {
  proj=$(mktemp -d "$WORK/proj.XXXXXX")
  echo keep >"$proj/marker"
  cd "$proj" || exit 99
}
kept() {
  if [[ -e $proj/marker ]]; then ok "$1: marker kept"; else not_ok "$1: the marker is gone"; fi
}

# denied_run DESCRIPTION SCRIPT: runs SCRIPT (after the guard) with an audit log and the status
# JSON, and checks that an exec was denied, reported and logged, and that the project survived.
denied_run() {
  local desc=$1 script=$2
  shift 2
  project
  rc=0
  "$CORDON" --status-json "$OUT/status.json" --audit "$OUT/audit.jsonl" "$@" -c "$GUARD; $script" \
    >"$OUT/out" 2>"$OUT/err" </dev/null || rc=$?
  [[ $rc -eq 99 ]] && { echo "# the jail guard failed: aborting"; exit 1; }
  kept "$desc"
  expect_err "^cordon: denied: .*\(rule [a-z0-9-]+: " "$desc: the denial is on stderr"
  if grep -q '"rule":"' "$OUT/status.json" 2>/dev/null && grep -q '"denials":\[{' "$OUT/status.json"; then
    ok "$desc: the status JSON lists the denial"
  else
    not_ok "$desc: status JSON: $(cat "$OUT/status.json" 2>/dev/null)"
  fi
  if grep -q '"decision":"deny"' "$OUT/audit.jsonl" 2>/dev/null; then
    ok "$desc: the audit log records the denial"
  else
    not_ok "$desc: audit log: $(head -c 600 "$OUT/audit.jsonl" 2>/dev/null)"
  fi
  cd "$WORK" || exit 99
}

denied_run "python's os.system" "python3 -c 'import os; os.system(\"rm -rf --no-preserve-root /\")'"
denied_run "a shell script" "printf 'rm -rf /*\n' > cleanup.sh; sh ./cleanup.sh"
denied_run "a make recipe" "printf 'all:\n\trm -rf /*\n' > cleanup.mk; make -f cleanup.mk"
denied_run "node's execSync" "node -e 'try { require(\"child_process\").execSync(\"rm -rf /*\") } catch (e) {}'"
denied_run "perl's system" "perl -e 'system(\"rm\", \"-rf\", \"/\")'"
denied_run "find -exec sh -c" "find . -maxdepth 0 -exec sh -c 'rm -rf /usr' \\;"
denied_run "xargs" "echo / | xargs rm -rf"
denied_run "a symlink to rm under another name" "ln -s \"\$(command -v rm)\" ./del; ./del -rf /usr"
denied_run "a path through /proc/self/root" "p=/proc/self/root; rm -rf \"\$p/usr\""
denied_run "a symlink to / as operand" "ln -s / ./up; rm -rf up/"
denied_run "a git alias" "git -c alias.wipe='!rm -rf /usr' wipe"
# What the kernel really runs: a script's "#!" line (rm -rf ./wipe /usr), its interpreter being
# a script too, the dynamic loader running rm, and a copy of rm under another name, directly and
# through the loader.
denied_run "a #!/bin/rm -rf script" "printf '#!/bin/rm -rf\n' > wipe; chmod +x wipe; ./wipe /usr"
denied_run "a script whose interpreter is a #! script" \
  "printf '#!/bin/rm -rf\n' > inner; printf '#!./inner\n' > outer; chmod +x inner outer; ./outer /usr"
denied_run "the dynamic loader running rm" \
  "for l in /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1; do [ -e \$l ] && ld=\$l; done; \"\$ld\" --library-path /usr/lib \"\$(command -v rm)\" -rf /usr"
denied_run "a copy of rm under another name" "cp \"\$(command -v rm)\" ./x; ./x -rf /usr"
denied_run "a copy of rm through the loader" \
  "cp \"\$(command -v rm)\" ./y; for l in /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1; do [ -e \$l ] && ld=\$l; done; \"\$ld\" ./y -rf /usr"
# What an attack on the checks above found: five levels of interpreters (the kernel's limit), a
# copy of the loader under another name (run, and as an interpreter), and an interpreter named
# through /proc/self/fd or /dev/fd.
denied_run "five levels of #! interpreters" \
  "printf '#!/bin/rm -rf\n' > s1; for i in 2 3 4 5; do printf '#!./s%d\n' \$((i-1)) > s\$i; done; chmod +x s*; ./s5 /usr"
denied_run "a copy of the loader" \
  "for l in /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1; do [ -e \$l ] && cp \$l ./myld; done; ./myld /bin/rm -rf /usr"
denied_run "a copy of the loader as a #! interpreter" \
  "for l in /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1; do [ -e \$l ] && cp \$l ./myld; done; printf '#!./myld /bin/rm\n' > l2; chmod +x l2; ./l2 -rf /usr"
denied_run "a #! interpreter through /proc/self/fd" \
  "printf '#!/proc/self/fd/5 -rf\n' > p1; chmod +x p1; T=/usr; exec 5</bin/rm; ./p1 \$T"
denied_run "a #! interpreter through /proc, by a relative path" \
  "printf '#!../../../../../../../../../../proc/self/fd/5 -rf\n' > p3; chmod +x p3; T=/usr; exec 5</bin/rm; ./p3 \$T"
denied_run "a #! interpreter through /dev/fd" \
  "printf '#!/dev/fd/5 -rf\n' > p2; chmod +x p2; T=/usr; exec 5</bin/rm; ./p2 \$T"
# A denied argv that is not UTF-8: the status JSON and the audit log still parse.
project
run "$CORDON" --status-json "$OUT/utf.json" --audit "$OUT/utf.jsonl" -c "$GUARD; T=/usr; rm -rf \$T \"\$(printf 'a\\377b\\001c')\" 2>/dev/null; true"
python3 -c 'import json, sys
j = json.load(open(sys.argv[1], encoding="utf-8"))
assert j["denials"], j
[json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]' "$OUT/utf.json" "$OUT/utf.jsonl" &&
  ok "a denied argv with a byte that is not UTF-8: the status JSON and audit log parse" ||
  not_ok "invalid UTF-8: $(head -c 300 "$OUT/utf.json")"
cd "$WORK" || exit 99
# ... while the same programs doing harmless work still run.
project
run "$CORDON" -c "$GUARD; cp \"\$(command -v rm)\" ./x && touch junk && ./x -f junk && printf '#!/bin/sh\necho from-script\n' > s.sh &&
  chmod +x s.sh && ./s.sh && for l in /lib64/ld-linux-x86-64.so.2 /lib/ld-linux-aarch64.so.1; do [ -e \$l ] && ld=\$l; done; \"\$ld\" /bin/echo via-loader &&
  ! [ -e junk ] && echo all-ran"
[[ $rc -eq 0 ]] && grep -q '^all-ran$' "$OUT/out" && grep -q '^from-script$' "$OUT/out" && grep -q '^via-loader$' "$OUT/out" &&
  ok "a copy of rm on a plain file, a #!/bin/sh script and the loader running echo are allowed" ||
  not_ok "harmless copies, scripts and the loader: exit $rc: $(cat "$OUT/out" "$OUT/err" | head -4)"
cd "$WORK" || exit 99
denied_run "a bash alias" "bash -O expand_aliases -c \"\$(printf 'alias tidy=\"rm -rf\"\ntidy /usr')\""
denied_run "busybox rm" "busybox rm -rf /usr"
denied_run "awk's system" "awk 'BEGIN { system(\"rm -rf /usr\") }'"
denied_run "a command read from a file by xargs" "printf '/usr\n' > list; xargs -a list rm -rf"
denied_run "a git hook" "git init -q repo && cd repo && mkdir hooks && printf '#!/bin/sh\nrm -rf /usr\n' > hooks/pre-commit && chmod +x hooks/pre-commit && git -c core.hooksPath=hooks -c user.name=t -c user.email=t@t.invalid commit -q --allow-empty -m x"

# busybox runs the commands of its shell, xargs and find in its own process (Debian's has the
# standalone shell): they never exec, so they are judged where busybox is exec'd, and a script
# busybox's shell reads from a file or standard input is refused. The target is a directory of
# the throwaway project that a policy protects, and busybox is named through $(echo ...), so the
# command line's check cannot see it and the exec-time check decides.
if command -v busybox >/dev/null; then
  bb_denied() {
    local desc=$1 script=$2
    project
    mkdir -p victim/sub
    printf 'rm -rf %s/victim\n' "$proj" >s.sh
    cat >"$SCRATCH/victim.toml" <<TOML
description = "the test project's victim directory is protected"
[[rule]]
id = "no-victim"
decision = "deny"
reason = "the victim directory"
program = ["rm"]
flags = ["-r"]
operands = ["$proj/victim"]
must-match = ["rm -rf $proj/victim"]
must-not-match = ["rm -rf $proj/other"]
[programs.rm]
options = ["-r -R --recursive", "-f --force"]
TOML
    run "$CORDON" --policy "$SCRATCH/victim.toml" -c "$GUARD; B=\$(echo busybox); V=$proj/victim; $script"
    [[ $rc -eq 99 ]] && { echo "# the jail guard failed: aborting"; exit 1; }
    if [[ -e $proj/victim/sub ]]; then ok "$desc: the victim survived"; else not_ok "$desc: the victim is gone"; fi
    expect_err "^cordon: denied: .*\(rule (no-victim|rm-recursive-protected|on-unanalyzable): " "$desc: the exec is denied"
    cd "$WORK" || exit 99
  }
  bb_denied "busybox sh on a script file" "\$B sh ./s.sh"
  bb_denied "busybox through a symlink named ash, on a script file" "ln -s \"\$(command -v busybox)\" ./ash; A=\$(echo ./ash); \$A ./s.sh"
  bb_denied "exec -a sh busybox, on a script file" "bash -c 'exec -a sh \"\$0\" ./s.sh' \"\$(command -v \$B)\""
  bb_denied "a script piped into busybox sh" "cat s.sh | \$B sh"
  bb_denied "a here-document read by busybox sh" "\$B sh <<EOF
rm -rf \"\$V\"
EOF"
  bb_denied "source inside busybox sh -c" "\$B sh -c '. ./s.sh'"
  bb_denied "busybox sh -c with an operand from a substitution" "\$B ash -c 'rm -rf \"\$(echo \$0)\"' \"\$V\""
  bb_denied "busybox xargs" "echo \"\$V\" | \$B xargs rm -rf"
  bb_denied "busybox nuke" "\$B nuke \"\$V\""
  bb_denied "a symlink named nuke to busybox" "ln -s \"\$(command -v busybox)\" ./nuke; N=\$(echo ./nuke); \$N \"\$V\""
  # ... while busybox's shell on known text, and nuke on a directory of the project, still run.
  project
  mkdir -p junk1 junk2
  run "$CORDON" -c "$GUARD; B=\$(echo busybox); \$B sh -c 'rm -rf ./junk1 && echo sh-c-ran' && \$B nuke ./junk2 && echo nuke-ran"
  [[ $rc -eq 0 && ! -e junk1 && ! -e junk2 ]] && grep -q '^sh-c-ran$' "$OUT/out" && grep -q '^nuke-ran$' "$OUT/out" &&
    ok "busybox sh -c on known text and busybox nuke ./dir run" ||
    not_ok "busybox on harmless work: exit $rc: $(cat "$OUT/out" "$OUT/err" | head -4)"
  cd "$WORK" || exit 99
else
  echo "# skip: no busybox here: its in-process applets are not tested"
fi

# --on-deny kill ends the whole jail with 126 at the first denied exec.
project
expect_exit 126 "--on-deny kill ends the run with 126" \
  "$CORDON" --on-deny kill -c "$GUARD; python3 -c 'import os; os.system(\"rm -rf /\")'; touch after"
kept "--on-deny kill"
[[ ! -e $proj/after ]] && ok "nothing ran after the denial under --on-deny kill" || not_ok "the run went on after kill"
cd "$WORK" || exit 99

# The run goes on after a denial: the shell reports the failed exec as usual.
project
expect_exit 0 "the run goes on after a denied exec" \
  "$CORDON" -c "$GUARD; python3 -c 'import os; os.system(\"rm -rf /\")'; echo still-here"
expect_out "still-here" "the next command ran"
kept "the run goes on"
cd "$WORK" || exit 99

# What the static check cannot resolve is deferred to its execs, and those run.
project
mkdir -p build/obj && touch build/obj/a.o
expect_exit 0 "rm -rf \"\$BUILD_DIR\" runs" "$CORDON" -c "$GUARD; BUILD_DIR=build; rm -rf \"\$BUILD_DIR\""
[[ ! -e build ]] && ok "and removed the build directory" || not_ok "build/ is still there"
expect_exit 0 "a mktemp directory removed through its variable" \
  "$CORDON" -c "$GUARD; tmp=\$(mktemp -d) && touch \"\$tmp/x\" && rm -rf \"\$tmp\" && echo removed"
expect_out "^removed$" "the temporary directory was removed"
expect_exit 0 "eval of generated text runs" "$CORDON" -c "$GUARD; eval \"\$(echo echo evaluated)\""
expect_out "^evaluated$" "eval printed its text"
expect_exit 0 "a pipe into sh runs" "$CORDON" -c "$GUARD; echo 'echo piped' | sh"
expect_out "^piped$" "the piped script ran"
kept "deferred commands"
cd "$WORK" || exit 99

# The audit log has one line per exec, allowed ones too, with the fields SPEC §9 names.
project
run "$CORDON" --audit fd:3 -c "$GUARD; /bin/true; echo hi" 3>"$OUT/audit2.jsonl"
expect_rc 0 "--audit fd:3 run"
line=$(grep '"argv":\["/bin/true"\]' "$OUT/audit2.jsonl" | head -1)
if [[ $line == *'"time":'* && $line == *'"pid":'* && $line == *'"cwd":"'* && $line == *'"executable":"/usr/bin/true"'* &&
  $line == *'"decision":"allow"'* && $line == *'"rule":'* ]]; then
  ok "the audit log records an allowed exec with time, pid, argv, cwd, executable, decision, rule"
else
  not_ok "audit line for /bin/true: ${line:-none}; log: $(head -c 800 "$OUT/audit2.jsonl")"
fi
cd "$WORK" || exit 99

# A PATH search tries one missing name per directory before it finds the program: those fail
# with ENOENT as they would unjailed, unjudged and unlogged; the program found is judged. A
# missing program is still "not found" (127). A program reached through /dev/fd is judged.
project
run "$CORDON" --audit "$OUT/audit3.jsonl" -c "$GUARD; PATH=/no/such/dir:/usr/bin; ls / >/dev/null && echo found; nosuchprogram; echo rc=\$?"
expect_out "^found$" "a PATH search through a missing directory finds the program"
expect_out "^rc=127$" "a missing program is not found"
if grep -q '"executable":"/usr/bin/ls"' "$OUT/audit3.jsonl" && ! grep -q '"executable":"/no/such' "$OUT/audit3.jsonl"; then
  ok "the program found is judged; the names tried in missing directories are not logged"
else
  not_ok "audit log after a PATH search: $(head -c 800 "$OUT/audit3.jsonl")"
fi
denied_run "rm through a /dev/fd path" 'exec 7</bin/rm; /dev/fd/7 -rf /'
cd "$WORK" || exit 99

# --dry-run names the mode; --exec-checks off leaves only the static check.
expect_exit 0 "--dry-run" "$CORDON" --dry-run -- true
expect_out "^exec checks: +on" "--dry-run reports exec checks on"
expect_exit 0 "--dry-run --exec-checks off" "$CORDON" --dry-run --exec-checks off -- true
expect_out "^exec checks: +off" "--dry-run reports exec checks off"
expect_exit 125 "a bad --exec-checks value" "$CORDON" --exec-checks sometimes -- true
expect_err "^cordon: .*--exec-checks.*sometimes" "the error names the option and value"
expect_exit 125 "a bad --on-deny value" "$CORDON" --on-deny explode -- true
expect_err "^cordon: .*--on-deny.*explode" "the error names the option and value"

# Cordon inside cordon: the kernel allows one listener, so the inner run says what it loses, or
# refuses under --exec-checks required. The inner binary and its data are a copy inside the
# outer workdir. (An inner jail cannot be built in full: the outer jail's /proc is partly masked,
# and the kernel then refuses the inner one a fresh /proc, as with bubblewrap; what matters here
# is what the inner cordon decides before that.) With the outer default filter the inner probe
# meets its refusal of new listeners (EPERM); with a filter of no rules, the kernel's own (EBUSY).
# (A sanitizer build's leak checker cannot stop the world inside a jail: it is off for the inner
# run; the variable means nothing to a normal build.)
project
mkdir bin && cp "$CORDON" ./bin/cordon-inner && cp -r "$STAGE/share" ./share
# (A root caller's policy that leaves user namespaces open must refuse mounting: see t_file_caps.)
printf 'description = "no listener refused: for cordon inside cordon"\nbase = "none"\ndeny = ["mount", "open_tree", "open_tree_attr", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr"]\n' \
  >"$SCRATCH/open.seccomp.toml"
for outer in "" "--seccomp $SCRATCH/open.seccomp.toml"; do
  what="inner cordon${outer:+ (outer filter without rules)}"
  # shellcheck disable=SC2086
  expect_exit 0 "$what: --dry-run" "$CORDON" --allow-userns $outer -c "$GUARD; env ASAN_OPTIONS=detect_leaks=0 ./bin/cordon-inner --dry-run -- true"
  expect_out "^exec checks: off \\(cordon already runs under a seccomp listener" "$what: --dry-run says exec checks are off, and why"
  # shellcheck disable=SC2086
  run "$CORDON" --allow-userns $outer -c "$GUARD; env ASAN_OPTIONS=detect_leaks=0 ./bin/cordon-inner -- true"
  expect_err "^cordon: warning: exec checks are off: cordon already runs under a seccomp listener" \
    "$what: a run warns that only the command line is checked"
  # shellcheck disable=SC2086
  expect_exit 125 "$what: --exec-checks required refuses" \
    "$CORDON" --allow-userns $outer -c "$GUARD; env ASAN_OPTIONS=detect_leaks=0 ./bin/cordon-inner --exec-checks required -- echo must-not-run"
  expect_no_out "must-not-run" "$what: nothing ran under --exec-checks required"
  expect_err "^cordon: --exec-checks required: exec checks are not available" "$what: the refusal says why"
done
# The outer jail refuses openat2 (ENOSYS): the inner cordon walks without it, so its RepoWatch
# reads the outer run's .git placeholders as they are, and says nothing of them.
git init -q .
expect_exit 0 "inner cordon in a repository (a Landlock jail)" \
  "$CORDON" -c "$GUARD; env ASAN_OPTIONS=detect_leaks=0 ./bin/cordon-inner -- true"
expect_no_err "left by the command" "inner cordon: no warning about the outer run's placeholders"
cd "$WORK" || exit 99

# A command line denied before the jail starts is in the audit log too, as "kind":"command".
rm -f "$OUT/cmd-audit.jsonl"
expect_exit 126 "a denied command line with --audit" "$CORDON" --audit "$OUT/cmd-audit.jsonl" -c 'echo hi; rm -rf /usr'
python3 - "$OUT/cmd-audit.jsonl" <<'PY' && ok "its audit line: kind command, the script, the denied command, the rule" ||
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
assert len(lines) == 1, lines
l = lines[0]
assert l["kind"] == "command" and l["decision"] == "deny" and "pid" not in l, l
assert l["argv"] == ["/bin/sh", "-c", "echo hi; rm -rf /usr"] and l["command"] == "rm -rf /usr", l
assert l["rule"] == "rm-recursive-protected", l
PY
  not_ok "the command line's audit line: $(cat "$OUT/cmd-audit.jsonl" 2>/dev/null)"
finish

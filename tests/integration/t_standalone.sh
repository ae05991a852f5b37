#!/usr/bin/env bash
# The executable on its own (SPEC §5, issue 15): copied alone into an empty directory, with no
# data directory next to it, it runs the default jail, lists the 14 shipped profiles as built in,
# passes `policy test` on its built-in policies, runs a profile, and a file on the search path
# still overrides a built-in profile or policy.
source "$TESTLIB"
ALONE_DIR="$SCRATCH/alone"
mkdir -m 0755 "$ALONE_DIR"
cp "$CORDON" "$ALONE_DIR/cordon"
ALONE="$ALONE_DIR/cordon"
# The data directory it would look for: <prefix>/share/cordon with <prefix> = the directory
# above the executable's.
[[ ! -e $SCRATCH/share ]] && ok "no data directory next to the copied executable" ||
  not_ok "$SCRATCH/share exists: the test would not be standalone"
[[ $(ls -A "$ALONE_DIR") == cordon ]] && ok "the directory holds the executable alone" ||
  not_ok "the directory holds: $(ls -A "$ALONE_DIR")"

# The default jail, proved to be one (the guard) before anything else runs in it.
CORDON=$ALONE jailed 'echo inside'
[[ $rc -eq 0 ]] && ok "the copied executable runs the default jail" ||
  not_ok "default jail: exit $rc: $(head -3 "$OUT/err")"
expect_out "^inside$" "the command ran inside"

run "$ALONE" profile list
expect_rc 0 "profile list"
[[ $(grep -c '^[^ ]' "$OUT/out") -eq 14 ]] && ok "profile list shows 14 profiles" ||
  not_ok "profile list shows $(grep -c '^[^ ]' "$OUT/out") profiles"
for name in default strict ci npm pip cargo go make git python node claude-code codex aider; do
  grep -q "^$name " "$OUT/out" && ok "profile list shows $name" || not_ok "profile list lacks $name"
done
if [[ -e /etc/cordon/profiles ]]; then
  ok "# skip: /etc/cordon/profiles exists on this host, not every profile can be the built-in one"
else
  [[ $(grep -c '^ *from built-in:profiles/[a-z-]*\.toml$' "$OUT/out") -eq 14 ]] &&
    ok "every profile is the built-in one" || not_ok "not all built in: $(grep ' from ' "$OUT/out" | head -3)"
fi
expect_no_out "shadows" "nothing shadows anything"

expect_exit 0 "policy test --built-in" "$ALONE" policy test --built-in
expect_out "^built-in:policies/default.toml: [0-9]+ rules, [1-9][0-9]* examples, 0 failed$" "the built-in default policy's examples pass"
expect_exit 0 "policy test NAME falls back to the built-in policy" "$ALONE" policy test default
expect_out "^built-in:policies/default.toml: " "and names it"
expect_exit 126 "check denies with the built-in policy" "$ALONE" check -c 'rm -rf /'
expect_out "^policy: built-in:policies/default.toml$" "the denial names the built-in policy"
# A denied script never runs; were the policy missing, it would only empty the jail's private HOME.
expect_exit 126 "a run is checked against the built-in policy" "$ALONE" -- /bin/sh -c 'rm -rf "$HOME"'
expect_err "denied: .*rule rm-recursive" "the run's denial names the rule"
run "$ALONE" --dry-run -- true
expect_out "^policy: +built-in:policies/default.toml$" "--dry-run names the built-in policy"

expect_exit 0 "profile show npm" "$ALONE" profile show npm
expect_out '^  "[^"]+",  # built-in:profiles/npm.toml:[0-9]+:[0-9]+$' "profile show: values come from the built-in npm"
expect_out '^  "/usr",  # built-in:profiles/default.toml:' "and from the built-in default it extends"
expect_exit 0 "a profile run: -p ci" "$ALONE" -p ci -- /bin/sh -c 'echo "CI=$CI"'
expect_out "^CI=true$" "the built-in ci profile applied"
expect_exit 0 "a built-in profile named by its origin" "$ALONE" -p built-in:profiles/ci.toml -- /bin/sh -c 'echo "CI=$CI"'
expect_out "^CI=true$" "-p built-in:profiles/ci.toml"

# Files on the search path override the built-in ones.
mkdir -p "$HOME/.config/cordon/profiles"
printf 'description = "user ci"\nextends = ["default"]\nhostname = "user-ci"\n' > "$HOME/.config/cordon/profiles/ci.toml"
run "$ALONE" -p ci -- /bin/sh -c 'cat /proc/sys/kernel/hostname; echo "CI=${CI:-unset}"'
expect_out "^user-ci$" "~/.config/cordon/profiles/ci.toml overrides the built-in ci"
expect_out "^CI=unset$" "and nothing of the built-in ci is loaded"
run "$ALONE" profile list
expect_out "^ci +user ci$" "profile list describes the user's ci"
expect_out "^ +from $HOME/.config/cordon/profiles/ci.toml$" "profile list: ci from the user's file"
expect_out "^ +shadows built-in:profiles/ci.toml$" "profile list: the built-in ci is shadowed"
rm -f "$HOME/.config/cordon/profiles/ci.toml"

POL="$SCRATCH/policies"
mkdir -p "$POL"
printf 'description = "allows everything"\n' > "$POL/default.toml"
expect_exit 0 "CORDON_POLICY_PATH's default.toml overrides the built-in policy" \
  env CORDON_POLICY_PATH="$POL" "$ALONE" check -c 'rm -rf /'
run env CORDON_POLICY_PATH="$POL" "$ALONE" --dry-run -- true
expect_out "^policy: +$POL/default.toml$" "--dry-run names the overriding file"
expect_exit 0 "policy test --built-in still tests the built-in one" env CORDON_POLICY_PATH="$POL" "$ALONE" policy test --built-in
expect_out "^built-in:policies/default.toml: " "policy test --built-in names it"

# killed_for SYSCALL OUT_RE CMD...: CMD under a seccomp filter (python3-seccomp) that kills the
# process on SYSCALL, as systemd's SystemCallFilter= does, must exit 0 with OUT_RE on stdout.
killed_for() {
  local syscall=$1 want_out=$2
  shift 2
  if ! /usr/bin/python3 -c 'import seccomp' 2>/dev/null; then
    skip "python3-seccomp is not installed (scripts/install-deps installs it)"
    return
  fi
  run /usr/bin/python3 -c 'import os, seccomp, sys
f = seccomp.SyscallFilter(seccomp.ALLOW)
f.add_rule(seccomp.KILL_PROCESS, sys.argv[1])
f.load()
os.execv(sys.argv[2], sys.argv[2:])' "$syscall" "$@"
  [[ $rc -eq 0 ]] && ok "under a filter that kills $syscall the default jail runs" ||
    not_ok "under a filter that kills $syscall: exit $rc: $(head -3 "$OUT/err")"
  expect_out "$want_out" "and the command ran as outside"
}

# The x86-64 static build's entry point asks for the code a run executes on one huge page
# (MADV_HUGEPAGE) and maps it and the writable segment with madvise(MADV_POPULATE_*)
# (src/prefault.cpp). Where the kernel refuses (before 5.14), the pages fault in as before: the
# run is the same. strace makes all three calls fail. Under a seccomp
# filter the entry makes neither call: a filter that kills a process for one (systemd's
# SystemCallFilter=~madvise) must find cordon running as it did before. Only that build's
# entry is checked: another build's C library or sanitizer runtime makes calls of its own.
if ! command -v strace >/dev/null; then
  skip "strace is not installed (scripts/install-deps installs it)"
else
  run strace -qq -o "$SCRATCH/madvise.trace" -e trace=madvise -e inject=madvise:error=EINVAL \
    "$ALONE" -q -- /bin/sh -c 'echo inside'
  if ! grep -q 'MADV_POPULATE_READ.*(INJECTED)' "$SCRATCH/madvise.trace"; then
    skip "this build's entry point makes no madvise call (not the x86-64 static build)"
  else
    grep -q 'MADV_POPULATE_WRITE.*(INJECTED)' "$SCRATCH/madvise.trace" &&
      grep -q 'MADV_HUGEPAGE.*(INJECTED)' "$SCRATCH/madvise.trace" &&
      ok "the entry point's three madvise calls were made to fail" ||
      not_ok "the entry point's calls: $(cat "$SCRATCH/madvise.trace")"
    [[ $rc -eq 0 ]] && ok "with madvise refused the default jail still runs" ||
      not_ok "with madvise refused: exit $rc: $(head -3 "$OUT/err")"
    expect_out "^inside$" "and the command ran inside"
    killed_for madvise '^inside$' "$ALONE" -q -- /bin/sh -c 'echo inside'
    # Read from disk, the start-up code's 2 MiB is one folio of the page cache, mapped as one
    # huge page (FilePmdMapped). The copy's page cache, which cp's writes made, is dropped first
    # (the same as after boot); a file system without large folios (ext4 before Linux 6.16) reads
    # it in small ones, and only then is this skipped.
    # FilePmdMapped (kB) of BINARY running a command, read once the background shell has
    # become cordon.
    pmd_of() {
      local binary=$1 pid pmd=
      "$binary" -q -- /bin/sh -c 'sleep 3' &
      pid=$!
      for _ in $(seq 50); do
        if [[ $(readlink "/proc/$pid/exe") == "$binary" ]]; then
          pmd=$(awk '/^FilePmdMapped:/ { print $2 }' "/proc/$pid/smaps_rollup" 2>/dev/null)
          break
        fi
        sleep 0.1
      done
      wait "$pid"
      echo "$pmd"
    }
    # WHAT's start-up code on a huge page (FilePmdMapped), given its FilePmdMapped.
    check_pmd() {
      local what=$1 pmd=$2
      if [[ -z $pmd ]]; then
        not_ok "$what: no FilePmdMapped line for the running cordon"
      elif [[ $pmd -ge 2048 ]]; then
        ok "$what: the start-up code is mapped as a huge page (FilePmdMapped ${pmd} kB)"
      elif [[ $(awk '/^FileHugePages:/ { print $2 }' /proc/meminfo) -eq 0 ]]; then
        skip "$what: the page cache holds no 2 MiB folio of any file (no large folios on this file system)"
      else
        not_ok "$what: the start-up code is not on a huge page (FilePmdMapped ${pmd} kB)"
      fi
    }
    hp_dir="$SCRATCH/hugepage"
    mkdir -m 0755 "$hp_dir" && cp "$CORDON" "$hp_dir/cordon" && sync "$hp_dir/cordon" &&
      dd if="$hp_dir/cordon" iflag=nocache count=0 status=none
    check_pmd "read from disk" "$(pmd_of "$hp_dir/cordon")"
    # `cmake --install` drops the page cache of the executable it wrote, as the packages do
    # (CMakeLists.txt): the installed cordon's first run maps its start-up code as a huge page.
    # Checked in the root run only: cmake --install also writes its manifest into the build
    # directory, which is root's.
    if [[ $RUN_AS == root ]]; then
      if [[ ! -f $CORDON_BUILD/cmake_install.cmake ]]; then
        not_ok "no cmake_install.cmake in the build directory '$CORDON_BUILD'"
      else
        mkdir -m 0755 "$SCRATCH/prefix"
        if cmake --install "$CORDON_BUILD" --prefix "$SCRATCH/prefix" >"$SCRATCH/install.log" 2>&1; then
          check_pmd "installed by cmake --install" "$(pmd_of "$SCRATCH/prefix/bin/cordon")"
        else
          not_ok "cmake --install $CORDON_BUILD failed: $(tail -3 "$SCRATCH/install.log")"
        fi
      fi
    fi
  fi
fi

# The supervisor starts init on another CPU than its own and gives it the caller's CPUs back
# before the word to proceed (two sched_setaffinity calls, src/jail/supervisor.cpp). The first
# refused: init starts where the scheduler puts it, and the command has every CPU. The second
# refused: the run ends as a setup error, rather than with the command on fewer CPUs. Under a
# seccomp filter neither call is made, so one that kills for it finds cordon running.
want=$(sh -c "$CPUS_LINE")
if ! command -v strace >/dev/null; then
  skip "strace is not installed (scripts/install-deps installs it)"
elif [[ $(nproc) -lt 2 ]]; then
  skip "one CPU here: init is not moved"
else
  # A sanitizer build's leak checker cannot run under strace (it traces the process itself).
  run env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -qq -o "$SCRATCH/affinity.trace" \
    -e trace=sched_setaffinity -e inject=sched_setaffinity:error=EPERM:when=1 "$ALONE" -q -- /bin/sh -c "$CPUS_LINE"
  [[ $rc -eq 0 ]] && ok "with init's move refused the run goes on" || not_ok "init's move refused: exit $rc: $(head -3 "$OUT/err")"
  expect_out "^${want}\$" "and the command has the caller's CPUs ($want)"
  run env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -qq -o "$SCRATCH/affinity.trace" \
    -e trace=sched_setaffinity -e inject=sched_setaffinity:error=EPERM:when=2 "$ALONE" -q -- /bin/sh -c 'echo RAN'
  [[ $rc -eq 125 ]] && ok "with the CPUs' return refused the run ends (125)" || not_ok "the CPUs' return refused: exit $rc"
  expect_no_out "^RAN$" "and the command did not run"
  expect_err "sched_setaffinity" "the error names the call"
  killed_for sched_setaffinity "^${want}\$" "$ALONE" -q -- /bin/sh -c "$CPUS_LINE"
fi
finish

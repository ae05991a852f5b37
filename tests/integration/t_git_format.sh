#!/usr/bin/env bash
# git's formats, differentially (issue 23): whatever the real git takes for a repository with a
# core.fsmonitor, cordon must judge. git_format_variants.sh plants some 120 spellings (HEAD's
# contents, size and type; .git files and commondir with blanks, CR, NUL, "..", symlinks,
# absolute paths, targets below objects/; the config's syntax, includes, config.worktree), once
# outside the workdir, where git is asked about each (`git rev-parse --git-dir` kept from looking
# above the directory by GIT_CEILING_DIRECTORIES, then `git config --list`), and once inside a
# jail. Every spelling git takes must, after the run, be one it no longer takes with an
# fsmonitor, and `git status` there must run nothing.
source "$TESTLIB"

marks="$SCRATCH/marks"
outside="$SCRATCH/o/repo.git"
gen="$SCRATCH/git_format_variants.sh"
cp "$(dirname "$TESTLIB")/git_format_variants.sh" "$gen"
mkdir -p "$marks" "$SCRATCH/o/deep" "$outside/objects" "$outside/refs/heads" "$SCRATCH/objdir"
printf 'ref: refs/heads/main\n' > "$outside/HEAD"
printf '[core]\n\tfsmonitor = "touch %s/outside; false"\n' "$marks" > "$outside/config"

# git_takes DIR NAME: git, started in DIR and kept from looking above it, takes a repository
# there and reads a core.fsmonitor in its config. Names starting env- are asked with
# GIT_OBJECT_DIRECTORY set, as a user's shell may have it. (HEAD as a FIFO blocks git: timeout.)
git_takes() {
  local envs=(GIT_CEILING_DIRECTORIES="$(dirname "$1")")
  [[ $2 == env-* ]] && envs+=(GIT_OBJECT_DIRECTORY="$SCRATCH/objdir")
  [[ -d $1 ]] || return 1
  (cd "$1" && env "${envs[@]}" timeout 10 git rev-parse --git-dir >/dev/null 2>&1 &&
    env "${envs[@]}" timeout 10 git config --list 2>/dev/null | grep -q '^core\.fsmonitor=')
}

# git's reference, out of any workdir.
bash "$gen" "$SCRATCH/ref" "$marks" "$outside"
probes=()
for d in "$SCRATCH"/ref/*/; do probes+=("$(basename "$d")"); done
probes+=(in-objects/.git/objects/cd/in-objects in-objects/.git/objects/ef/w)
taken=()
for p in "${probes[@]}"; do git_takes "$SCRATCH/ref/$p" "${p%%/*}" && taken+=("$p"); done
echo "# git takes ${#taken[@]} of ${#probes[@]} spellings for a repository with an fsmonitor: ${taken[*]}"
# The spellings of the issue, and a few more, that git 2.39 does take: the test holds cordon to
# them only if git does, so a git that stops taking them must not make it pass quietly.
for want in head-newline head-crlf head-big5000 head-sha1long head-sha1junk file-trailspace common-trailspace \
  file-linkdots file-objects in-objects/.git/objects/cd/in-objects in-objects/.git/objects/ef/w env-noobjects; do
  [[ " ${taken[*]} " == *" $want "* ]] && ok "git takes $want" || not_ok "git does not take $want: this test has lost its reference"
done
[[ ${#taken[@]} -ge 60 ]] && ok "git takes ${#taken[@]} spellings (at least 60)" || not_ok "git takes only ${#taken[@]} spellings"
[[ -z $(ls "$marks") ]] || not_ok "asking git ran a planted command: $(ls "$marks")"

# The same spellings planted by a command in a repository workdir.
mkdir -p "$WORK/p" && cd "$WORK/p" && git init -q . && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
sleep 0.2  # the project is older than the run by more than a tick
jailed "bash $gen $WORK/p/v $marks $outside && echo planted" --ro "$SCRATCH"
expect_out "^planted$" "the command plants every spelling"
missed=()
for p in "${taken[@]}"; do
  git_takes "$WORK/p/v/$p" "${p%%/*}" && missed+=("$p")
done
[[ ${#missed[@]} -eq 0 ]] && ok "every spelling git takes is judged: none keeps its fsmonitor (${#taken[@]} checked)" ||
  not_ok "git still takes a repository with an fsmonitor in: ${missed[*]}"
for p in "${probes[@]}"; do
  (cd "$WORK/p/v/$p" 2>/dev/null && GIT_CEILING_DIRECTORIES="$(dirname "$PWD")" timeout 10 git status >/dev/null 2>&1)
done
[[ -z $(ls "$marks") ]] && ok "git status in every spelling runs nothing planted" || not_ok "git status ran: $(ls "$marks")"
# What cordon said for them: one warning per file moved aside (the first 20, then a count:
# cordon(1), BOUNDS), and nothing left unmoved.
n=$(grep -c '^cordon: warning: v/.*moved to ' "$OUT/err")
more=$(sed -n 's/^cordon: warning: \.\.\. and \([0-9]*\) more left by the command.*/\1/p' "$OUT/err")
[[ $n -le 20 && $((n + ${more:-0})) -ge ${#taken[@]} ]] && ok "cordon names what it moved aside ($n warnings and ${more:-0} more)" ||
  not_ok "$n warnings and ${more:-0} more: $(head -5 "$OUT/err")"
expect_no_err "could not be moved aside" "everything judged could be moved aside"
finish

#!/usr/bin/env bash
# git_format_variants.sh BASE MARKS OUTSIDE: plants, one per directory BASE/NAME, the spellings
# of a repository with a core.fsmonitor that t_git_format.sh puts to git and to cordon: HEAD's
# contents, size and type, the .git file's and commondir's whitespace, NULs, relative and
# absolute paths and where they lead, the config's syntax. Each fsmonitor touches MARKS/NAME.
# OUTSIDE is a repository outside the workdir with an fsmonitor of its own (touching
# MARKS/outside). Some spellings git refuses: t_git_format asks git which, and holds cordon only
# to those git takes. Run once outside the workdir (git's reference) and once inside the jail.
set -u
base=$1 marks=$2 outside=$3
mkdir -p "$base" && cd "$base" || exit 1

cfg() { printf '[core]\n\tfsmonitor = "touch %s/%s; false"\n' "$marks" "$1"; }
# gitdir DIR NAME [HEAD-TEXT] [CONFIG-TEXT]: a git directory, HEAD and config as given.
gitdir() {
  mkdir -p "$1/objects" "$1/refs/heads"
  printf '%b' "${3-ref: refs/heads/main\n}" > "$1/HEAD"
  if [[ $# -ge 4 ]]; then printf '%b' "$4" > "$1/config"; else cfg "$2" > "$1/config"; fi
}

# --- HEAD: each as NAME/.git and as the bare form NAME-bare/ ----------------------------------
heads=(
  "plain|ref: refs/heads/main\n"
  "nospace|ref:refs/heads/main"
  "newline|ref:\nrefs/heads/main\n"
  "crlf|ref:\r\nrefs/heads/main\r\n"
  "mixedspace|ref: \t\r\n refs/heads/x"
  "vtab|ref:\vrefs/heads/x"
  "formfeed|ref:\frefs/heads/x"
  "norefs|ref: heads/main\n"
  "reftrail|ref: refs/heads/main junk\0more"
  "sha1|0123456789abcdef0123456789abcdef01234567\n"
  "sha1upper|0123456789ABCDEF0123456789ABCDEF01234567"
  "sha1long|0123456789abcdef0123456789abcdef0123456789"
  "sha1junk|0123456789abcdef0123456789abcdef01234567 junk junk"
  "sha1short|0123456789abcdef0123456789abcdef0123456\n"
  "sha256|0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
  "sha1nul|0123456789abcdef0123456789abcdef01234567\0"
  "empty|"
  "spacefirst| ref: refs/heads/main\n"
  "lower|REF: refs/heads/main\n"
)
for h in "${heads[@]}"; do
  name=head-${h%%|*} text=${h#*|}
  gitdir "$name/.git" "$name" "$text"
  gitdir "$name-bare" "$name-bare" "$text"
done
# HEAD past 4 KiB (git reads its first 255 bytes) and past 1 MiB.
for size in 5000 2000000; do
  gitdir "head-big$size/.git" "head-big$size"
  { printf 'ref: refs/heads/main\n'; head -c "$size" /dev/zero | tr '\0' x; } > "head-big$size/.git/HEAD"
done
# HEAD as a symlink: into refs/ (git takes it), elsewhere (git does not), dangling into refs/.
for l in "symref|refs/heads/main" "symrefs|refs" "symother|../HEAD2" "symabs|/etc/hostname"; do
  name=head-${l%%|*}
  gitdir "$name/.git" "$name"
  rm "$name/.git/HEAD" && ln -s "${l#*|}" "$name/.git/HEAD"
done
# HEAD a directory, a FIFO; no HEAD at all (git takes none of these; judged all the same).
gitdir head-dir/.git head-dir && rm head-dir/.git/HEAD && mkdir head-dir/.git/HEAD
gitdir head-fifo/.git head-fifo && rm head-fifo/.git/HEAD && mkfifo head-fifo/.git/HEAD
# objects/ and refs/ as files with x bits (git only checks access(X_OK)), or missing (git takes
# it with GIT_OBJECT_DIRECTORY: t_git_format asks git with it set for names starting env-).
mkdir -p layout-files && (cd layout-files && printf 'ref: refs/heads/main\n' > HEAD && : > objects && : > refs &&
  chmod +x objects refs && cfg layout-files > config)
gitdir env-noobjects/.git env-noobjects && rmdir env-noobjects/.git/objects

# --- .git files: NAME/.git naming NAME/t (a git directory), spelled as given -------------------
gitfile() {  # NAME TEXT: NAME/.git holds TEXT, NAME/t is the git directory
  gitdir "$1/t" "$1"
  printf '%b' "$2" > "$1/.git"
}
gitfile file-plain 'gitdir: t\n'
gitfile file-nonl 'gitdir: t'
gitfile file-crlf 'gitdir: t\r\n'
gitfile file-crcrlf 'gitdir: t\r\r\n\n'
gitfile file-dot 'gitdir: ./t\n'
gitfile file-slash 'gitdir: t/\n'
gitfile file-slashes 'gitdir: .//t//\n'
gitfile file-nul 'gitdir: t\0/../nothing\n'
gitfile file-abs "gitdir: $base/file-abs/t\n"
gitfile file-absdots "gitdir: $base/file-absdots/x/../t\n" && mkdir -p file-absdots/x
gitfile file-dotdot 'gitdir: x/../t\n' && mkdir -p file-dotdot/x
gitfile file-nospace 'gitdir:t\n'
gitfile file-upper 'GITDIR: t\n'
# Trailing blanks are part of the path: "t " and "t\t" are the git directories, "t" a decoy
# without an fsmonitor.
for w in "space| " "tab|\t" "spaces|  \n"; do
  name=file-trail${w%%|*} sp=${w#*|}
  gitdir "$name/t" "$name" 'ref: refs/heads/main\n' '[core]\n\tbare = false\n'
  gitdir "$name/t$(printf '%b' "${sp%\\n}")" "$name"
  printf '%b' "gitdir: t$sp" > "$name/.git"
done
# The git directory below a repository's objects/, or inside another's .git.
mkdir -p file-objects && (cd file-objects && gitdir r/.git r-own 'ref: refs/heads/main\n' '[core]\n\tbare = false\n' &&
  gitdir r/.git/objects/ab/t file-objects && printf 'gitdir: r/.git/objects/ab/t\n' > .git)
# A .git symlink; a .git file through a symlink; one whose ".." climbs through a symlink to
# OUTSIDE (OUTSIDE's directory has deep/; lexically the path names file-linkdots/repo.git,
# which does not exist).
gitdir dotgit-link/real dotgit-link && ln -s real dotgit-link/.git
mkdir -p file-via-link && gitdir file-via-link/real/t file-via-link && ln -s real file-via-link/l &&
  printf 'gitdir: l/t\n' > file-via-link/.git
mkdir -p file-linkdots && ln -s "$(dirname "$outside")/deep" file-linkdots/l &&
  printf 'gitdir: l/../%s\n' "$(basename "$outside")" > file-linkdots/.git
# Out of the workdir, absolutely and relatively.
mkdir -p file-out && printf 'gitdir: %s\n' "$outside" > file-out/.git
mkdir -p file-outrel && printf 'gitdir: ../../../../../../../../../../..%s\n' "$outside" > file-outrel/.git

# --- discovery below objects/: a repository and a .git file inside a repository's objects/ -----
mkdir -p in-objects && (cd in-objects && gitdir .git in-own 'ref: refs/heads/main\n' '[core]\n\tbare = false\n' &&
  gitdir .git/objects/cd/in-objects in-objects && mkdir -p .git/objects/ef/w && gitdir .git/objects/ef/g in-objects-file &&
  printf 'gitdir: ../g\n' > .git/objects/ef/w/.git)

# --- commondir: a linked worktree's git directory whose commondir names the common directory
#     that holds the config (git reads config and hooks there), itself with no HEAD ------------
common() {  # NAME TEXT: NAME/.git -> NAME/wt (HEAD, commondir TEXT), NAME/c the common directory
  mkdir -p "$1/wt" && printf 'ref: refs/heads/main\n' > "$1/wt/HEAD" && printf '%b' "$2" > "$1/wt/commondir"
  printf 'gitdir: wt\n' > "$1/.git"
  gitdir "$1/c" "$1" && rm "$1/c/HEAD"
}
common common-plain '../c\n'
common common-nonl '../c'
common common-crlf '../c\r\n'
common common-abs "$base/common-abs/c\n"
common common-nul '../c\0junk'
for w in "space| " "tab|\t"; do
  name=common-trail${w%%|*} sp=$(printf '%b' "${w#*|}")
  common "$name" "../c$sp\n"
  mv "$name/c" "$name/c$sp" && gitdir "$name/c" "$name" '' '[core]\n\tbare = false\n' && rm "$name/c/HEAD"
done
mkdir -p common-link && gitdir common-link/real/c common-link && rm common-link/real/c/HEAD && ln -s real common-link/l &&
  mkdir -p common-link/wt &&
  printf 'ref: refs/heads/main\n' > common-link/wt/HEAD && printf '../l/c\n' > common-link/wt/commondir &&
  printf 'gitdir: wt\n' > common-link/.git
mkdir -p common-out/wt && printf 'ref: refs/heads/main\n' > common-out/wt/HEAD && printf '%s\n' "$outside" > common-out/wt/commondir &&
  printf 'gitdir: wt\n' > common-out/.git

# --- config spellings, each in NAME/.git/config ----------------------------------------------
c() { gitdir "$1/.git" "$1" 'ref: refs/heads/main\n' "$2"; }
m=$marks
c cfg-case "[CoRe]\n\tFSMonitor = \"touch $m/cfg-case; false\"\n"
c cfg-inline "[core]fsmonitor=\"touch $m/cfg-inline; false\""
c cfg-crlf "; comment\r\n[core]\r\n\tfsmonitor = \"touch $m/cfg-crlf; false\"\r\n"
c cfg-bom "\xEF\xBB\xBF[core]\n\tfsmonitor = \"touch $m/cfg-bom; false\"\n"
c cfg-cont "[core]\n\tfsmonitor = \"touch \\\\\n$m/cfg-cont; false\"\n"
c cfg-dotted "[core.x]\n\ty = 1\n[core]\n\tfsmonitor = \"touch $m/cfg-dotted; false\"\n"
c cfg-sub "[remote \"o\"]\n\turl = x\n[core]\n\tbare = false\n\tfsmonitor = \"touch $m/cfg-sub; false\"\n"
c cfg-nul "[core \"x\"]\n[core]\n\tfsmonitor = \"touch $m/cfg-nul; false\"\n\0junk\n"
c cfg-later "[core]\n\tbare = false\n[user]\n\tname = x\n[core]\n\tfsmonitor = \"touch $m/cfg-later; false\"\n"
c cfg-include "[include]\n\tpath = other\n" && cfg cfg-include > cfg-include/.git/other
c cfg-includeif "[includeIf \"gitdir:/\"]\n\tpath = other\n" && cfg cfg-includeif > cfg-includeif/.git/other
c cfg-worktree "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n" &&
  cfg cfg-worktree > cfg-worktree/.git/config.worktree
c cfg-bare "[core]\n\tbare = true\n\tfsmonitor = \"touch $m/cfg-bare; false\"\n"
exit 0

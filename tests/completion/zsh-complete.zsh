#!/usr/bin/env zsh
# usage: zsh-complete.zsh FPATH_DIR LINE
# Completes LINE in a real interactive zsh (compinit, the completion functions in FPATH_DIR)
# driven through a pseudo-terminal, and prints every candidate the completion system was
# given, one a line. compadd is wrapped to record what it adds; once the completion system is
# done, before it would list anything, the shell kills itself (nothing reads the terminal).
emulate -L zsh
zmodload zsh/zpty || exit 2
fpath_dir=$1 line=$2
capture=$(mktemp "${TMPDIR:-/tmp}/cordon-zsh-capture.XXXXXX")
setup=$(mktemp "${TMPDIR:-/tmp}/cordon-zsh-setup.XXXXXX")
cat >$setup <<SETUP
PROMPT= RPROMPT=
unsetopt beep
fpath=(${(q)fpath_dir} \$fpath)
autoload -Uz compinit && compinit -u -D
bindkey '^I' complete-word
zstyle ':completion:*' insert-tab false
compadd() {
  # Internal uses (matching into an array) pass through unrecorded.
  if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
    builtin compadd "\$@"
    return
  fi
  local -a __hits
  local -A __pre
  zparseopts -E -A __pre P: p:
  builtin compadd -A __hits "\$@"
  (( \$#__hits )) && print -rl -- \${__pre[-P]-}\${__pre[-p]-}\${^__hits} >>${(q)capture}
  builtin compadd "\$@"
}
__done() { print -r -- __cordon_done__ >>${(q)capture}; kill -KILL \$\$ }
comppostfuncs=(__done)
SETUP
zpty z zsh -f -i
zpty -w z "source ${(q)setup}"
zpty -w -n z "$line"$'\t'
integer deadline=$(( SECONDS + 30 ))
until grep -qx __cordon_done__ $capture || (( SECONDS >= deadline )); do
  sleep 0.05
done
zpty -d z 2>/dev/null
if ! grep -qx __cordon_done__ $capture; then
  print -u2 "zsh-complete.zsh: the completion did not finish: ${(q)line}"
  rm -f $capture $setup
  exit 2
fi
grep -vx __cordon_done__ $capture
# Removed here, not by an EXIT trap: zpty's forked child would run that trap too.
rm -f $capture $setup

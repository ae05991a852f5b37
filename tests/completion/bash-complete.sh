#!/usr/bin/env bash
# usage: bash-complete.sh LINE
# Completes LINE as interactive bash with bash-completion does and prints COMPREPLY, one a line:
# COMP_WORDS are LINE's words as readline splits them (blanks; '=' and ':', which are in
# COMP_WORDBREAKS, are words of their own), COMP_CWORD is the last, and the function is the
# one that `complete -p cordon` names once bash-completion's loader has found cordon's script
# (bash-completion/completions/cordon under a directory of $XDG_DATA_DIRS).
source /usr/share/bash-completion/bash_completion
line=$1
read -ra raw <<<"$line"
[[ -z $line || $line == *' ' ]] && raw+=('')
words=()
for w in "${raw[@]}"; do
  while [[ $w == *[=:]* ]]; do
    pre=${w%%[=:]*}
    [[ -n $pre ]] && words+=("$pre")
    words+=("${w:${#pre}:1}")
    w=${w:${#pre}+1}
  done
  words+=("$w")
done
COMP_WORDS=("${words[@]}")
COMP_CWORD=$((${#words[@]} - 1))
COMP_LINE=$line
COMP_POINT=${#line}
_completion_loader cordon 2>/dev/null
spec=$(complete -p cordon 2>/dev/null) || {
  echo "bash-complete.sh: bash-completion found no completion for cordon on XDG_DATA_DIRS=${XDG_DATA_DIRS-}" >&2
  exit 2
}
fn=${spec##*-F }
fn=${fn%% *}
COMPREPLY=()
# compopt complains outside a real completion; what it would set does not change COMPREPLY.
"$fn" cordon "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
printf '%s\n' "${COMPREPLY[@]}"

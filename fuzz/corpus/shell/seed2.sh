for d in $(ls); do case "$d" in a|b) bash -c 'rm -rf "$1"' _ "$d";; *) echo ${d:-x} `pwd`;; esac; done
cat <<EOT | sh
$(rm -rf /) $'\x2f' "${HOME}"/*
EOT
if [[ -n $x && -d /tmp ]]; then (( i++ )); find . -name '*.o' -exec rm {} \; ; fi > /dev/null 2>&1
f() { eval "echo $1"; } ; diff <(ls a) >(tee b) ; x=(1 2 3) ; xargs -I{} mv {} /tmp/{}

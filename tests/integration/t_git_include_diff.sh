#!/usr/bin/env bash
# A differential test of cordon's reader of git's includeIf conditions (src/cli/spec_env.cpp)
# against the real git: the jail's private HOME hides ~/.gitconfig, and cordon passes the
# caller's user.name as git would read it, following includeIf "gitdir:", "gitdir/i:" and
# "onbranch:" with git's wildmatch. For each of many patterns made from the repository's real
# git directory and branch (wildcards, "**", classes, escapes, case, relative and "./"
# patterns, trailing slashes, broken brackets), ~/.gitconfig names "No" and includes a file
# naming "Yes" under the condition: `git config user.name` inside the jail must say what the
# host's git says. CORDON_FUZZ_SEED repeats a run; CORDON_FUZZ_CASES sets its size.
source "$TESTLIB"

seed=${CORDON_FUZZ_SEED:-$RANDOM}
cases=${CORDON_FUZZ_CASES:-120}
echo "# seed $seed, $cases cases (CORDON_FUZZ_SEED=$seed repeats this run)"

base="$WORK/incdiff"
repo="$base/Proj-Dir.v2/Repo_x"
mkdir -p "$repo" "$base/conf"
git init -q "$repo"
git -C "$repo" symbolic-ref HEAD refs/heads/feature/Fix-42.b
gitdir=$(cd "$repo/.git" && pwd -P)
branch=feature/Fix-42.b
# The file that includes: in $base/conf, so that "./" patterns are relative to it.
printf '[user]\n\tname = Yes\n' > "$base/conf/yes"

# The jail's command sees the identity cordon passed (GIT_CONFIG_KEY_n/VALUE_n), the host's
# git reads the files: both print user.name ("none" when there is no value).
jail_name() { (cd "$repo" && "$CORDON" -q -- sh -c 'git config user.name || echo none' 2>&1); }
host_name() { git -C "$repo" config user.name || echo none; }

# Sanity: the condition that always holds and the one that never does, or nothing below means
# anything.
write_config() {  # CONDITION (already quoted for a subsection name)
  printf '[user]\n\tname = No\n\temail = no@example.invalid\n[include]\n\tpath = %s\n' "$base/conf/main" \
    > "$HOME/.gitconfig"
  printf '[includeIf "%s"]\n\tpath = yes\n' "$1" > "$base/conf/main"
}
write_config "gitdir:$gitdir"
[[ $(host_name) == Yes && $(jail_name) == Yes ]] && ok "the exact git directory includes, inside as outside" ||
  not_ok "exact gitdir: host $(host_name), jail $(jail_name)"
write_config "gitdir:/nowhere/"
[[ $(host_name) == No && $(jail_name) == No ]] && ok "another directory does not include, inside as outside" ||
  not_ok "other gitdir: host $(host_name), jail $(jail_name)"

# The cases: one condition per line, made by python from the real names (seeded).
/usr/bin/python3 - "$seed" "$cases" "$gitdir" "$branch" "$base/conf" > "$SCRATCH/conditions" <<'EOF'
import random, sys
seed, n, gitdir, branch, confdir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
r = random.Random(seed)

def mutate(s):
    s = list(s)
    for _ in range(r.randint(1, 3)):
        if not s:
            break
        i = r.randrange(len(s))
        k = r.randrange(13)
        if k == 0 and s[i] != '/':
            s[i] = '?'
        elif k == 1:  # a run within a segment, or across one
            j = min(len(s), i + r.randint(0, 6))
            s[i:j] = ['*']
        elif k == 2:
            j = min(len(s), i + r.randint(1, 12))
            s[i:j] = ['**']
        elif k == 3 and s[i] != '/':
            s[i] = '[' + s[i] + r.choice(['', 'x', 'a-z', 'A-Z', '0-9']) + ']'
        elif k == 4 and s[i] != '/':
            s[i] = '[' + r.choice(['!', '^']) + r.choice(['x', s[i], 'a-m', '/']) + ']'
        elif k == 10 and s[i] != '/':  # named classes, a malformed one, a range after one
            s[i] = '[' + r.choice(['[:alpha:]', '[:upper:]', '[:lower:]', '[:digit:]', '[:punct:]', '[:alnum:]',
                                   '[:nope:]', '[:alpha:]-z', '[:', ']' + s[i]]) + ']'
        elif k == 5:
            s[i] = s[i].swapcase()
        elif k == 6 and s[i] not in '/':
            s[i] = '\\' + s[i]
        elif k == 7:
            s.insert(i, r.choice(['*', '?', '**/', '/', '[', ']', '\\', '***']))
        elif k == 8:
            del s[i]
        elif k == 9:
            s[i] = r.choice(['/', '.', '-', '_'])
        elif k == 11:
            s[i:i] = ['*/']
        else:
            s[i] = '\\' + s[i].swapcase()  # an escaped letter in the other case (gitdir/i)
    return ''.join(s)

def gitdir_pattern():
    k = r.randrange(6)
    parts = gitdir.strip('/').split('/')
    if k == 0:  # relative: git puts "**/" before it
        p = '/'.join(parts[r.randrange(len(parts)):])
    elif k == 1:  # the repository's directory with a trailing slash: "/**" after it
        p = '/' + '/'.join(parts[:r.randrange(1, len(parts))]) + '/'
    elif k == 2:  # relative to the including file's directory
        rel = gitdir[len(confdir.rsplit('/', 1)[0]) + 1:] if gitdir.startswith(confdir.rsplit('/', 1)[0] + '/') else 'x'
        p = './../' + rel
    else:
        p = gitdir
    p = mutate(p) if r.random() < 0.85 else p
    if r.random() < 0.2:
        p += '/'
    return r.choice(['gitdir:', 'gitdir:', 'gitdir/i:']) + p

def branch_pattern():
    p = mutate(branch) if r.random() < 0.85 else branch
    if r.random() < 0.2:
        p = p.rsplit('/', 1)[0] + '/'
    return 'onbranch:' + p

for _ in range(n):
    c = gitdir_pattern() if r.random() < 0.7 else branch_pattern()
    # git's quoting for a subsection name: backslash and double quote escaped.
    print(c.replace('\\', '\\\\').replace('"', '\\"'))
EOF

mismatches=0
agreed=0
yes=0
while IFS= read -r condition; do
  write_config "$condition"
  want=$(host_name)
  got=$(jail_name)
  if [[ $want == "$got" ]]; then
    agreed=$((agreed + 1))
    [[ $want == Yes ]] && yes=$((yes + 1))
  else
    mismatches=$((mismatches + 1))
    ((mismatches <= 10)) && not_ok "includeIf \"$condition\" for $gitdir ($branch): git says $want, the jail $got"
  fi
done < "$SCRATCH/conditions"
total=$(wc -l < "$SCRATCH/conditions")
((mismatches == 0)) && ok "all $total conditions agree with git ($yes of them include)" ||
  not_ok "$mismatches of $total conditions disagree with git (seed $seed)"
# A run whose patterns never matched (or always did) would prove little.
((yes >= total / 10 && yes <= total - total / 10)) && ok "the cases both include ($yes) and do not ($((agreed - yes)))" ||
  not_ok "the generated cases are one-sided: $yes of $total include"
# HEAD as git reads it for onbranch: "ref:" without a blank, trailing blanks, and a branch that
# is itself a symbolic ref (git follows it to the branch it names).
printf 'ref: refs/heads/real\n' > "$repo/.git/refs/heads/alias"
for head in 'ref:refs/heads/main' 'ref: refs/heads/main \t ' 'ref: refs/heads/alias' 'ref:  refs/heads/main'; do
  printf "$head\n" > "$repo/.git/HEAD"
  for cond in onbranch:main onbranch:real onbranch:alias; do
    write_config "$cond"
    want=$(host_name) got=$(jail_name)
    [[ $want == "$got" ]] && ok "HEAD '$head', $cond: $want, as git says" ||
      not_ok "HEAD '$head', $cond: git says $want, the jail $got"
  done
done
# Other users' HOMEs (~user/) and %(prefix)/ are not looked up: taken as no match, which git
# agrees with here (the repository is in neither).
printf 'ref: refs/heads/main\n' > "$repo/.git/HEAD"
for cond in "gitdir:~root/x/" "gitdir:%(prefix)/x/"; do
  write_config "$cond"
  [[ $(host_name) == No && $(jail_name) == No ]] && ok "$cond: no match, as git says" ||
    not_ok "$cond: host $(host_name), jail $(jail_name)"
done
rm -f "$HOME/.gitconfig"
finish

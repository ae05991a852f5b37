#!/usr/bin/env bash
# Each shipped profile runs the tool it is for, on a small local project, with no network
# (tools whose profile grants the network get --net none here: everything is local).
source "$TESTLIB"

# make: a C build.
mkdir -p "$WORK/cproj" && cd "$WORK/cproj"
printf '#include <stdio.h>\nint main(void) { puts("hello from make"); return 0; }\n' > hello.c
printf 'hello: hello.c\n\tcc -o hello hello.c\n' > Makefile
expect_exit 0 "make builds through -p make" "$CORDON" -p make -- make
[[ -x hello ]] && [[ $(./hello) == "hello from make" ]] && ok "the binary built in the jail runs on the host" || not_ok "make output missing"

# git: a commit in an existing repository, identity from ~/.gitconfig (read-only).
mkdir -p "$WORK/gproj" && cd "$WORK/gproj"
printf '[user]\n\tname = Cordon Test\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n' > "$HOME/.gitconfig"
git init -q . && echo one > a.txt
expect_exit 0 "git add + commit through -p git" "$CORDON" -p git -c 'git add -A && git commit -qm "first commit"'
[[ $(git log --format=%s 2>/dev/null) == "first commit" && $(git log --format=%an) == "Cordon Test" ]] \
  && ok "the commit is on the host with the caller's identity" || not_ok "git log: $(git log --format='%s %an' 2>&1)"
run "$CORDON" -p git -c 'git config user.name Evil; echo rc=$?'
expect_out "rc=[1-9]" "-p git cannot change the repository's config"
run "$CORDON" -p git -c 'git config --global user.name Evil; echo rc=$?'
expect_out "rc=[1-9]" "-p git cannot change ~/.gitconfig"

# python + pip: a venv in the project, a local wheel installed offline.
mkdir -p "$WORK/pyproj" && cd "$WORK/pyproj"
/usr/bin/python3 - <<'PY'
import zipfile, hashlib, base64
files = {"cordonpkg/__init__.py": "GREETING = 'hello from a wheel'\n",
         "cordonpkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: cordonpkg\nVersion: 1.0\n",
         "cordonpkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
record = []
with zipfile.ZipFile("cordonpkg-1.0-py3-none-any.whl", "w") as z:
    for name, text in files.items():
        data = text.encode()
        z.writestr(name, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("cordonpkg-1.0.dist-info/RECORD,,")
    z.writestr("cordonpkg-1.0.dist-info/RECORD", "\n".join(record) + "\n")
PY
expect_exit 0 "python3 -m venv through -p python" "$CORDON" -p python -- /usr/bin/python3 -m venv venv
expect_exit 0 "pip install of a local wheel through -p pip" "$CORDON" -p pip --net none -- venv/bin/pip install --no-index --disable-pip-version-check -q ./cordonpkg-1.0-py3-none-any.whl
run "$CORDON" -p python -- venv/bin/python -c 'import cordonpkg; print(cordonpkg.GREETING)'
expect_out "^hello from a wheel$" "the installed package imports"

# cargo: a crate without dependencies, offline.
mkdir -p "$WORK/rsproj/src" && cd "$WORK/rsproj"
printf '[package]\nname = "hello"\nversion = "0.1.0"\nedition = "2018"\n\n[dependencies]\n' > Cargo.toml
printf 'fn main() { println!("hello from cargo"); }\n' > src/main.rs
expect_exit 0 "cargo build --offline through -p cargo" "$CORDON" -p cargo --net none -- cargo build --offline -q
[[ $(./target/debug/hello 2>&1) == "hello from cargo" ]] && ok "the crate runs" || not_ok "cargo output: $(./target/debug/hello 2>&1 | head -2)"

# go: a module without dependencies.
mkdir -p "$WORK/goproj" && cd "$WORK/goproj"
printf 'module example.invalid/hello\n\ngo 1.19\n' > go.mod
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello from go") }\n' > main.go
expect_exit 0 "go build through -p go" "$CORDON" -p go --net none -- go build -o hello .
[[ $(./hello 2>&1) == "hello from go" ]] && ok "the go binary runs" || not_ok "go output: $(./hello 2>&1 | head -2)"

# npm and node: a package without dependencies.
mkdir -p "$WORK/jsproj" && cd "$WORK/jsproj"
printf '{ "name": "cordon-js-test", "version": "1.0.0", "scripts": { "test": "node test.js" } }\n' > package.json
printf 'const assert = require("assert"); assert.strictEqual(1 + 1, 2); console.log("js tests passed");\n' > test.js
run "$CORDON" -p npm --net none --setenv NPM_CONFIG_UPDATE_NOTIFIER false -- npm test
expect_rc 0 "npm test through -p npm"
expect_out "js tests passed" "npm ran the test script"
run "$CORDON" -p node -- node test.js
expect_out "^js tests passed$" "node through -p node"

# strict: nothing writable; ci: no controlling terminal, CI=true.
cd "$WORK/cproj"
run "$CORDON" -p strict -- /bin/sh -c 'touch new-file; echo rc=$?; cat hello.c | head -1'
expect_out "rc=[1-9]" "-p strict: the project directory is read-only"
expect_out "^#include" "-p strict: but readable"
run "$CORDON" -p ci -- /bin/sh -c 'echo "CI=$CI"; tty; exit 0'
expect_out "^CI=true$" "-p ci sets CI=true"
expect_out "not a tty" "-p ci runs without a terminal"
finish

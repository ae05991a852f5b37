// Each wrapper is seen through: what it runs, as the analyser reports it.
#include <catch2/catch.hpp>

#include "cordon/paths.hpp"

#include "cordon/policy/analyze.hpp"

using namespace cordon::policy;

namespace {

std::string show(const std::vector<Field>& argv) {
    std::string out;
    for (const auto& f : argv) {
        if (!out.empty()) out += ' ';
        out += f.is_static() ? f.static_text() : "<" + f.static_text() + ">";
    }
    return out;
}

// Every invocation's argv, in order, for a script run in /home/user/project.
std::vector<std::string> invocations(const std::string& script) {
    std::vector<std::string> out;
    for (const auto& inv : analyze_script(script, "/home/user/project", "/home/user")) {
        if (inv.unanalyzable)
            out.push_back("UNANALYZABLE");
        else if (inv.construct == Invocation::Construct::ForkBomb)
            out.push_back("FORK-BOMB");
        else
            out.push_back(show(inv.argv));
    }
    return out;
}

std::string innermost(const std::string& script) {
    auto all = invocations(script);
    return all.empty() ? "" : all.back();
}

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("sudo and doas", "[policy][wrappers]") {
    CHECK(invocations("sudo -u root -E rm -rf /") == V{"sudo -u root -E rm -rf /", "rm -rf /"});
    CHECK(innermost("sudo --user=root --preserve-env=A FOO=1 rm x") == "rm x");
    CHECK(innermost("sudo -iu root rm x") == "rm x");
    CHECK(invocations("sudo -l") == V{"sudo -l"});
    CHECK(innermost("doas -u root rm x") == "rm x");
}

TEST_CASE("sudo -D and env -C change the working directory", "[policy][wrappers]") {
    auto invs = analyze_script("env -C / rm -rf usr", "/home/user/project", "/home/user");
    REQUIRE(invs.size() == 2);
    CHECK(to_string(invs[1].cwd) == "/");
    invs = analyze_script("sudo -D /etc rm x", "/home/user/project", "/home/user");
    CHECK(to_string(invs.back().cwd) == "/etc");
}

TEST_CASE("env", "[policy][wrappers]") {
    CHECK(innermost("env -i -u PATH A=1 B=2 rm x") == "rm x");
    CHECK(innermost("env - rm x") == "rm x");
    CHECK(innermost("env --unset=X --ignore-environment rm x") == "rm x");
    CHECK(innermost("env -S 'rm -rf' /") == "rm -rf /");
    // Options end at -S: what follows its string is the command's.
    CHECK(innermost("env -S rm -rf /usr") == "rm -rf /usr");
    CHECK(innermost("/usr/bin/env -i -S rm -rf /usr") == "rm -rf /usr");
    CHECK(invocations("env") == V{"env"});
}

TEST_CASE("shell builtins and small wrappers", "[policy][wrappers]") {
    CHECK(innermost("command rm x") == "rm x");
    CHECK(invocations("command -v rm") == V{"command -v rm"});
    // exec -a NAME: the command, and what NAME makes it (busybox named rm is rm).
    CHECK(invocations("exec -a name rm x") == V{"exec -a name rm x", "rm x", "name x"});
    CHECK(invocations("exec -a rm busybox -rf d") ==
          V{"exec -a rm busybox -rf d", "busybox -rf d", "rm -rf d", "busybox rm -rf d", "rm -rf d"});
    CHECK(invocations("exec -a git-clean git -f") ==
          V{"exec -a git-clean git -f", "git -f", "git-clean -f", "git clean -f", "git clean -f"});
    // A name of the form PROGRAM-SUB, or with a login dash, is also that program's.
    CHECK(invocations("git-clean -f") == V{"git-clean -f", "git clean -f"});
    CHECK(invocations("-rm -rf d") == V{"-rm -rf d", "rm -rf d"});
    CHECK(invocations("tee-wrapper /dev/sda") == V{"tee-wrapper /dev/sda"});
    // The loader's --argv0 NAME, as exec -a NAME.
    CHECK(invocations("ld.so --argv0 git-clean /usr/bin/git -f") == V{"ld.so --argv0 git-clean /usr/bin/git -f",
                                                                      "/usr/bin/git -f", "git-clean -f", "git clean -f",
                                                                      "git clean -f"});
    // busybox's first argument is its applet by the last path component; its own options run none.
    CHECK(innermost("busybox -/rm -rf d") == "-/rm -rf d");
    CHECK(innermost("busybox --/rm -rf d") == "--/rm -rf d");
    CHECK(invocations("busybox --list") == V{"busybox --list"});
    CHECK(innermost("builtin cd /") == "cd /");
    CHECK(innermost("nice -n 10 rm x") == "rm x");
    // The dynamic loader run as a program maps the program it is given, past its options.
    CHECK(innermost("/lib64/ld-linux-x86-64.so.2 /bin/rm x") == "/bin/rm x");
    CHECK(invocations("ld.so --library-path /opt/lib --argv0 foo ./tool x") ==
          V{"ld.so --library-path /opt/lib --argv0 foo ./tool x", "./tool x", "foo x"});
    CHECK(innermost("/lib/ld-musl-x86_64.so.1 --preload a.so rm x") == "rm x");
    CHECK(cordon::is_loader_name("ld-linux-aarch64.so.1"));
    CHECK_FALSE(cordon::is_loader_name("ld"));
    CHECK_FALSE(cordon::is_loader_name("ldconfig"));
    CHECK(loader_operand({"ld.so", "--inhibit-cache", "--audit", "a.so", "--", "prog", "x"}) == 5);
    CHECK(innermost("nice -10 rm x") == "rm x");
    CHECK(innermost("nohup rm x") == "rm x");
    CHECK(innermost("timeout -s KILL -k 5 10s rm x") == "rm x");
    CHECK(innermost("timeout --signal=TERM 10 rm x") == "rm x");
    CHECK(innermost("time -p rm x") == "rm x");
    CHECK(innermost("stdbuf -oL -e 0 rm x") == "rm x");
    CHECK(innermost("ionice -c 3 rm x") == "rm x");
    CHECK(invocations("ionice -p 1234") == V{"ionice -p 1234"});
    CHECK(innermost("chrt -r 10 rm x") == "rm x");
    CHECK(invocations("chrt -p 1234") == V{"chrt -p 1234"});
    CHECK(innermost("taskset 0x3 rm x") == "rm x");
    CHECK(innermost("taskset -c 0-3 rm x") == "rm x");
    CHECK(invocations("taskset -p 3 1234") == V{"taskset -p 3 1234"});
    CHECK(innermost("setsid -f rm x") == "rm x");
    CHECK(innermost("busybox rm x") == "rm x");
    CHECK(invocations("busybox --list") == V{"busybox --list"});
    CHECK(innermost("busyboxZ rm x") == "rm x");
    CHECK(innermost("toybox-0.8 rm x") == "rm x");
    // busybox's nuke removes each argument as rm -r -f would; it reads no options.
    CHECK(innermost("busybox nuke /usr") == "rm -r -f -- /usr");
    CHECK(innermost("nuke -rf a b") == "rm -r -f -- -rf a b");
    CHECK(innermost("sudo env nice nohup timeout 5 rm x") == "rm x");
}

TEST_CASE("programs that run a command from their arguments", "[policy][wrappers]") {
    CHECK(innermost("flock /tmp/l rm x") == "rm x");
    CHECK(innermost("flock -w 5 -E 9 /tmp/l rm x") == "rm x");
    CHECK(innermost("flock /tmp/l -c 'cd / && rm x'") == "rm x");
    CHECK(innermost("flock -c 'rm x' /tmp/l") == "rm x");
    CHECK(invocations("flock -n 9") == V{"flock -n 9"});
    CHECK(innermost("script -qc 'rm x' /dev/null") == "rm x");
    CHECK(innermost("script -q /dev/null -c 'rm x'") == "rm x");
    CHECK(invocations("script -q /dev/null") == V{"script -q /dev/null"});
    CHECK(innermost("strace -f -e trace=file -o log rm x") == "rm x");
    CHECK(invocations("strace -p 12") == V{"strace -p 12"});
    CHECK(innermost("ltrace -o log -e malloc rm x") == "rm x");
    CHECK(innermost("unshare -m -U -r rm x") == "rm x");
    CHECK(innermost("nsenter -t 1 -m -u -i -n -p rm x") == "rm x");
    CHECK(innermost("chroot /srv/root rm x") == "rm x");
    CHECK(innermost("chroot --userspec=a:b / rm x") == "rm x");
    CHECK(innermost("prlimit --nofile=10 -n20 rm x") == "rm x");
    CHECK(innermost("setpriv --reuid 1 --clear-groups rm x") == "rm x");
    CHECK(invocations("setpriv -d") == V{"setpriv -d"});
    CHECK(innermost("systemd-run --user --scope -p MemoryMax=1G rm x") == "rm x");
    CHECK(innermost("systemd-inhibit --why=x rm x") == "rm x");
    CHECK(innermost("faketime '2020-01-01' rm x") == "rm x");
    CHECK(innermost("torsocks -i rm x") == "rm x");
    CHECK(innermost("valgrind --leak-check=full -q rm x") == "rm x");
    CHECK(innermost("gdb -batch -ex run --args rm x") == "rm x");
    CHECK(invocations("gdb ./a.out") == V{"gdb ./a.out"});
    CHECK(innermost("runuser -u nobody -- rm x") == "rm x");
    CHECK(innermost("runuser -l root -c 'rm x'") == "rm x");
    CHECK(innermost("sg users -c 'rm x'") == "rm x");
    CHECK(innermost("sg users 'rm x'") == "rm x");
    CHECK(innermost("capsh --drop=cap_sys_admin -- -c 'rm x'") == "rm x");
    CHECK(innermost("entr -s 'rm x'") == "rm x");
    CHECK(innermost("entr -c rm x") == "rm x");
    CHECK(innermost("echo 'rm x' | at now") == "rm x");
    CHECK(innermost("at now <<< 'rm x'") == "rm x");
    CHECK(invocations("at -l") == V{"at -l"});
    CHECK(innermost("setarch x86_64 -R rm x") == "rm x");
    CHECK(innermost("linux32 rm x") == "rm x");
    CHECK(innermost("bwrap --ro-bind / / --dev /dev --setenv A b rm x") == "rm x");
    CHECK(innermost("ssh-agent -a sock rm x") == "rm x");
    CHECK(innermost("fakeroot -- rm x") == "rm x");
    CHECK(innermost("npx -c 'rm x'") == "rm x");
    CHECK(innermost("npx rimraf x") == "rimraf x");
    CHECK(innermost("uv run --python 3.12 rm x") == "rm x");
    CHECK(innermost("poetry run rm x") == "rm x");
    CHECK(innermost("bundle exec rm x") == "rm x");
    CHECK(innermost("conda run -n base rm x") == "rm x");
    CHECK(invocations("uv pip install x") == V{"uv pip install x"});
    CHECK(innermost("timeout 5 flock /tmp/l strace -f nice rm x") == "rm x");
}

TEST_CASE("wrappers that change the working directory", "[policy][wrappers]") {
    for (const char* s :
         {"unshare -w / rm x", "unshare --wd=/ rm x", "nsenter -w/ -t 1 rm x", "systemd-run --working-directory=/ rm x",
          "run0 -D / rm x", "bwrap --chdir / rm x", "poetry run -C / rm x", "conda run --cwd / rm x"}) {
        INFO(s);
        auto invs = analyze_script(s, "/home/user/project", "/home/user");
        CHECK(to_string(invs.back().cwd) == "/");
    }
}

TEST_CASE("git -C: the command again, in that directory", "[policy][wrappers]") {
    auto invs = analyze_script("git -C / -c a=b clean -fdx", "/home/user/project", "/home/user");
    REQUIRE(invs.size() == 2);
    CHECK(show(invs[1].argv) == "git -c a=b clean -fdx");
    CHECK(to_string(invs[1].cwd) == "/");
    invs = analyze_script("git -C /srv -C repo status", "/", "/root");
    CHECK(to_string(invs.back().cwd) == "/srv/repo");
    CHECK(invocations("git status") == V{"git status"});
}

TEST_CASE("commands hidden in settings: trap, git settings, EDITOR and the like", "[policy][wrappers]") {
    CHECK(innermost("trap 'rm x' EXIT") == "rm x");
    CHECK(innermost("trap -- 'cd / && rm x' INT TERM") == "rm x");
    CHECK(invocations("trap - EXIT") == V{"trap - EXIT"});
    CHECK(invocations("trap -p") == V{"trap -p"});
    CHECK(invocations("trap \"$x\" EXIT").back() == "UNANALYZABLE");
    CHECK(innermost("git -c core.pager='rm x' log") == "rm x");
    CHECK(innermost("git -c core.sshCommand='rm x' fetch") == "rm x");
    CHECK(innermost("git -c alias.y='!rm x' y") == "rm x");
    // An alias of git's own commands given with -c runs them: git VALUE ARGS.
    CHECK(invocations("git -c alias.st=status st") == V{"git -c alias.st=status st", "git status"});
    CHECK(innermost("git -c alias.x='clean -fdx' x") == "git clean -fdx");
    CHECK(innermost("git -c alias.X=clean x -f") == "git clean -f");
    CHECK(invocations("git -c alias.x=clean status") == V{"git -c alias.x=clean status"});
    // A chain of aliases, git's escapes, and a value from the environment (not known: any command).
    CHECK(innermost("git -c alias.a=b -c alias.b=clean a -f") == "git clean -f");
    CHECK(innermost("git -c 'alias.x=cl\\ean -fdx' x") == "git clean -fdx");
    CHECK(innermost("git --config-env alias.x=V x") == "UNANALYZABLE");
    CHECK(innermost("git --config-env=alias.x=V x") == "UNANALYZABLE");
    CHECK(invocations("git -c alias.x=x x").back() == "git x");
    // A shell alias gets the arguments after it: sh -c 'TEXT "$@"' TEXT ARGS.
    CHECK(innermost("git -c 'alias.x=!rm' x -rf d") == "rm -rf d");
    CHECK(innermost("git -c 'alias.x=!git' x clean -f") == "git clean -f");
    // capsh --shell=PROGRAM runs PROGRAM; the loader's --list and --verify run nothing.
    CHECK(innermost("capsh --shell=/bin/rm -- -rf d") == "/bin/rm -rf d");
    CHECK(invocations("ld.so --list /bin/rm -rf d") == V{"ld.so --list /bin/rm -rf d"});
    // zsh's ARGV0 is the command's argv[0], as exec -a makes it.
    CHECK(innermost("ARGV0=rm busybox -rf d") == "rm -rf d");
    CHECK(innermost("ARGV0=git-clean; git -f") == "git clean -f");
    CHECK(invocations("git -c core.fsmonitor=true status") == V{"git -c core.fsmonitor=true status"});
    CHECK(innermost("git config --global alias.y '!rm x'") == "rm x");
    CHECK(innermost("git config set --local core.editor 'rm x'") == "rm x");
    CHECK(innermost("git config filter.lfs.smudge 'rm x'") == "rm x");
    CHECK(invocations("git config user.name me") == V{"git config user.name me"});
    CHECK(invocations("EDITOR='rm x' git commit") == V{"rm x", "git commit"});
    CHECK(innermost("export GIT_SSH_COMMAND='rm x'") == "rm x");
    CHECK(innermost("env PAGER='rm x' man ls") == "rm x");
    CHECK(invocations("EDITOR=vim") == V{"vim"});
    CHECK(invocations("FOO='rm x'").empty());
}

TEST_CASE("GNU parallel: one command line per input", "[policy][wrappers]") {
    CHECK(innermost("parallel rm -rf ::: a /") == "rm -rf /");
    CHECK(innermost("parallel 'rm -rf {}' ::: a /") == "rm -rf /");
    CHECK(innermost("parallel -j 4 ::: 'rm -rf ~'") == "rm -rf /home/user");
    CHECK(innermost("ls | parallel rm -rf") == "rm -rf <<input>>");
    CHECK(innermost("parallel rm {//} ::: a/b") == "rm <{//}>");
    CHECK(innermost("parallel gzip ::: *.log") == "gzip <*.log>");
}

TEST_CASE("xargs: operands from stdin are unknown", "[policy][wrappers]") {
    CHECK(innermost("xargs rm -rf") == "rm -rf <<stdin>>");
    CHECK(innermost("xargs -0 -n 1 -P4 rm") == "rm <<stdin>>");
    CHECK(innermost("xargs -I{} mv {} /tmp/{}.bak") == "mv <<stdin>> </tmp/<stdin>.bak>");
    CHECK(innermost("xargs -I X rm X") == "rm <<stdin>>");
    CHECK(innermost("xargs") == "echo <<stdin>>");
    CHECK(innermost("xargs --replace rm -rf {}") == "rm -rf <<stdin>>");
    CHECK(innermost("xargs --replace=X --max-args=1 rm X") == "rm <<stdin>>");
    CHECK(innermost("xargs -i rm {}") == "rm <<stdin>>");
}

TEST_CASE("find: -delete and -exec", "[policy][wrappers]") {
    CHECK(innermost("find / -delete") == "rm -r -f /");
    CHECK(innermost("find build -name '*.o' -delete") == "rm -f <build/{}>");
    CHECK(innermost("find / -exec rm -rf {} \\;") == "rm -rf </{}>");
    CHECK(innermost("find . -name x -execdir rm {} +") == "rm <./{}>");
    CHECK(innermost("find . -name x -ok rm {} ';'") == "rm <./{}>");
    CHECK(invocations("find . -name '*.c'") == V{"find . -name *.c"});
    // Without a test that selects files, -exec runs on every file: on the start itself, or with
    // -mindepth on every child of it.
    auto all = invocations("find ~ -exec rm -rf {} +");
    CHECK(std::find(all.begin(), all.end(), "rm -rf /home/user") != all.end());
    all = invocations("find / -mindepth 1 -exec rm -rf {} +");
    CHECK(std::find(all.begin(), all.end(), "rm -rf </*>") != all.end());
    all = invocations("find / -name x -exec rm -rf {} +");
    CHECK(std::find(all.begin(), all.end(), "rm -rf /") == all.end());
    // A pattern that looks like an action is an argument, not an action.
    CHECK(invocations("find . -name -delete") == V{"find . -name -delete"});
}

TEST_CASE("shells with -c and eval", "[policy][wrappers]") {
    CHECK(innermost("bash -c 'rm -rf /'") == "rm -rf /");
    CHECK(innermost("sh -lc 'rm x'") == "rm x");
    CHECK(innermost("bash -e -o pipefail -c 'rm x'") == "rm x");
    CHECK(innermost("/bin/dash -xec 'rm x'") == "rm x");
    CHECK(innermost("zsh --login -c 'rm x'") == "rm x");
    CHECK(innermost("sh -c 'rm -rf \"$1\"' sh /") == "rm -rf /");
    CHECK(innermost("sh -c 'rm -rf \"$0\"' /") == "rm -rf /");
    CHECK(innermost("bash -c \"bash -c 'rm x'\"") == "rm x");
    CHECK(innermost("eval rm -rf /") == "rm -rf /");
    CHECK(innermost("eval 'cd /; rm -rf usr'") == "rm -rf usr");
    CHECK(innermost("su -c 'rm x' root") == "rm x");
    CHECK(invocations("bash script.sh") == V{"bash script.sh"});
    CHECK(invocations("eval \"$x\"").back() == "UNANALYZABLE");
    CHECK(invocations("bash -c \"$x\"").back() == "UNANALYZABLE");
    CHECK(invocations("sh -c 'echo \"unterminated'").back() == "UNANALYZABLE");
}

TEST_CASE("variables, cd and positional parameters are tracked", "[policy][wrappers]") {
    CHECK(innermost("X=/; rm -rf $X") == "rm -rf /");
    CHECK(innermost("X='-rf /'; rm $X") == "rm -rf /");
    CHECK(innermost("export D=/usr; rm -rf \"$D\"") == "rm -rf /usr");
    CHECK(innermost("set -- / x; rm -rf $1") == "rm -rf /");
    CHECK(innermost("rm -rf $UNSET") == "rm -rf <$UNSET>");
    CHECK(innermost("rm -rf ~") == "rm -rf /home/user");
    CHECK(innermost("HOME=/; rm -rf ~") == "rm -rf /");
    CHECK(innermost("for d in /; do rm -rf $d; done") == "rm -rf /");
    CHECK(innermost("for d in / /usr; do rm -rf $d; done") == "rm -rf <$d>");
    CHECK(innermost("x=rm; $x y") == "rm y");
    CHECK(invocations("$cmd -rf /") == V{"UNANALYZABLE"});
    CHECK(invocations("$(echo rm) -rf /").back() == "UNANALYZABLE");
    CHECK(invocations("/?\?\?/rm -rf /") == V{"UNANALYZABLE"});
    auto invs =
        analyze_script("cd /tmp && cd .. && (cd usr; rm a); rm b; cd \"$X\"; rm c", "/home/user/project", "/home/user");
    REQUIRE(invs.size() == 7);
    CHECK(to_string(invs[3].cwd) == "/usr");
    CHECK(to_string(invs[4].cwd) == "/");
    CHECK(to_string(invs[6].cwd) == "**");
}

TEST_CASE("subshells and substitutions keep their changes to themselves", "[policy][wrappers]") {
    CHECK(innermost("X=/tmp; (X=/; cd /); rm -rf $X") == "rm -rf /tmp");
    CHECK(innermost("X=/tmp; echo $(X=/) `X=/`; rm -rf $X") == "rm -rf /tmp");
    CHECK(innermost("X=/tmp; X=/ | true; rm -rf $X") == "rm -rf /tmp");
    CHECK(innermost("X=/tmp; { X=/; } & rm -rf $X") == "rm -rf /tmp");
    CHECK(innermost("X=/tmp; { X=/; }; rm -rf $X") == "rm -rf /");  // a group is not a subshell
    auto invs = analyze_script("(cd /); echo $(cd /); rm x", "/home/user/project", "/home/user");
    CHECK(to_string(invs.back().cwd) == "/home/user/project");
}

TEST_CASE("fork bombs are recognised", "[policy][wrappers]") {
    CHECK(invocations(":(){ :|:& };:").front() == "FORK-BOMB");
    CHECK(invocations("b() { b | b & }; b").front() == "FORK-BOMB");
    auto plain = invocations("f() { echo; f; }; f");
    CHECK(std::find(plain.begin(), plain.end(), "FORK-BOMB") == plain.end());
}

TEST_CASE("real argv entry point", "[policy][wrappers]") {
    auto invs = analyze_argv({"sudo", "rm", "-rf", "/ x"}, "/", "/root");
    REQUIRE(invs.size() == 2);
    CHECK(invs[0].text == "sudo rm -rf '/ x'");
    CHECK(show(invs[1].argv) == "rm -rf / x");
    // An argv is not shell text: quotes and $ inside arguments are data.
    invs = analyze_argv({"echo", "$(rm -rf /)", "'"}, "/", "/root");
    CHECK(invs.size() == 1);
}

TEST_CASE("brace expansion", "[policy][wrappers]") {
    CHECK(innermost("rm -rf /{usr,etc}") == "rm -rf /usr /etc");
    CHECK(innermost("{rm,-rf,/}") == "rm -rf /");
    CHECK(innermost("rm -rf /{a,{b,c}}x") == "rm -rf /ax /bx /cx");
    CHECK(innermost("rm -rf ~/{,}") == "rm -rf /home/user/ /home/user/");
    CHECK(innermost("echo x{1..3}") == "echo <x*>");
    CHECK(innermost("echo '{a,b}' {} {x}") == "echo {a,b} {} {x}");
    CHECK(innermost("echo {a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}") == "echo <${...}>");
}

TEST_CASE("IFS, aliases, ~+ and watch", "[policy][wrappers]") {
    CHECK(invocations("IFS=,; x=rm,-rf,/; $x") == V{"UNANALYZABLE"});
    CHECK(innermost("IFS=,; x=/; rm -rf \"$x\"") == "rm -rf /");  // quoted: no splitting
    // Checked where defined and again where used (issue 12: an alias forwards its arguments).
    CHECK(invocations("alias x='rm -rf /'; x") == V{"alias x=rm -rf /", "rm -rf /", "x", "rm -rf /"});
    CHECK(innermost("cd / && rm -rf ~+") == "rm -rf /");
    CHECK(innermost("cd /tmp && cd /usr && rm -rf ~-") == "rm -rf /tmp");
    CHECK(innermost("watch -n 1 'rm -rf /'") == "rm -rf /");
    CHECK(innermost("watch -x rm -rf /") == "rm -rf /");
}

TEST_CASE("functions and aliases are checked where they are used, with their arguments", "[policy][wrappers]") {
    CHECK(innermost("f() { rm -rf \"$@\"; }; f /") == "rm -rf /");
    CHECK(innermost("f() { rm -rf $*; }; f / /usr") == "rm -rf / /usr");
    CHECK(innermost("f() { rm -rf \"$1\"; }; f /tmp/x") == "rm -rf /tmp/x");
    CHECK(innermost("function f { shift; rm -rf \"$1\"; }; f a ~") == "rm -rf /home/user");
    CHECK(innermost("f() { rm -rf \"$1\"; }; f \"$X\"") == "rm -rf <$1>");
    CHECK(innermost("a() { b /; }; b() { rm -r \"$1\"; }; a") == "rm -r /");
    CHECK(innermost("f() { cd \"$1\"; }; f /; rm -rf usr") == "rm -rf usr");
    auto in_root = analyze_script("f() { cd \"$1\"; }; f /; rm -rf usr", "/home/user/project", "/home/user");
    CHECK(to_string(in_root.back().cwd) == "/");
    CHECK(innermost("alias x='rm -rf'; x /") == "rm -rf /");
    CHECK(innermost("alias s='sudo '; alias r='rm -rf'; s r ~") == "rm -rf /home/user");
    CHECK(innermost("alias x='rm -rf'; unalias x; x /") == "x /");
    CHECK(innermost("f() { rm -rf \"$1\"; }; unset -f f; f /") == "f /");
    // The positional parameters of the caller come back after the call.
    CHECK(innermost("set -- a; f() { :; }; f /; rm -rf \"$1\"") == "rm -rf a");
    // The use names where its commands come from.
    auto invs = analyze_script("f() { rm -rf \"$@\"; }; f /", "/", "/root");
    CHECK(invs.back().text == "rm -rf \"$@\" (in f /)");
    // Recursion stops, and so does a use of a function by itself.
    CHECK(analyze_script("f() { f \"$@\" x; }; f", "/", "/root").size() < 10);
    std::string many = "f() { g; g; }; g() { h; h; }; h() { i; i; }; i() { j; j; }; j() { k; k; }; k() { ls; ls; }";
    for (int n = 0; n < 8; ++n) many += "; f";
    auto all = invocations(many);
    CHECK(all.back() == "UNANALYZABLE");
    CHECK(all.size() < 5000);
}

// What busybox and toybox run in their own process: their shell's commands, xargs', find's.
std::vector<std::string> in_process(const std::string& script) {
    std::vector<std::string> out;
    for (const auto& inv : analyze_script(script, "/home/user/project", "/home/user")) {
        if (inv.in_process) out.push_back(inv.unanalyzable ? "UNANALYZABLE" : show(inv.argv));
    }
    return out;
}

TEST_CASE("busybox runs its applets' commands in its own process", "[policy][wrappers]") {
    // The applet itself is exec'd (and checked then); what it runs is not.
    CHECK(in_process("busybox rm -rf x").empty());
    CHECK(in_process("busybox sh -c 'rm -rf x; make'") == V{"rm -rf x", "make"});
    CHECK(in_process("busybox ash -c 'f() { rm -r \"$1\"; }; f d'") == V{"rm -r ", "f d", "rm -r d"});
    CHECK(in_process("busybox xargs rm -f") == V{"rm -f <<stdin>>"});
    CHECK(in_process("busybox find . -exec rm {} +") == V{"rm .", "rm <.{}>"});
    CHECK(in_process("busybox env A=1 sh -c 'rm x'") == V{"sh -c rm x", "rm x"});
    CHECK(in_process("sh -c 'rm x'").empty());
    CHECK(in_process("xargs rm -f").empty());
    // A script it reads from a file or standard input is seen by no check.
    CHECK(in_process("busybox sh ./s.sh") == V{"UNANALYZABLE"});
    CHECK(in_process("busybox hush ./s.sh") == V{"UNANALYZABLE"});
    CHECK(in_process("busybox sh") == V{"UNANALYZABLE"});
    CHECK(in_process("busybox sh < s.sh") == V{"UNANALYZABLE"});
    CHECK(in_process("busybox sh -c '. ./env.sh'") == V{". ./env.sh", "UNANALYZABLE"});
    CHECK(in_process("busybox sh -c 'sh ./s.sh'") == V{"sh ./s.sh", "UNANALYZABLE"});
    // Nor a here-document: the check of busybox's exec inside the jail cannot read it.
    CHECK(in_process("echo 'rm x' | busybox sh") == V{"UNANALYZABLE"});
    CHECK(in_process("busybox sh <<'E'\nrm y\nE") == V{"UNANALYZABLE"});
    CHECK(in_process("sh ./s.sh").empty());
    CHECK(in_process(". ./env.sh").empty());
}

TEST_CASE("shells started without a command read standard input", "[policy][wrappers]") {
    CHECK(innermost("echo 'rm x' | sudo -s") == "rm x");
    CHECK(innermost("sudo -i <<< 'rm x'") == "rm x");
    CHECK(innermost("echo 'rm x' | su") == "rm x");
    CHECK(innermost("echo 'rm x' | su - root") == "rm x");
    CHECK(innermost("echo 'rm x' | doas -s") == "rm x");
    CHECK(innermost("echo 'rm x' | runuser -l root") == "rm x");
    CHECK(innermost("echo 'rm x' | script -q /dev/null") == "rm x");
    CHECK(invocations("sudo -s") == V{"sudo -s"});  // from the terminal: interactive
    CHECK(invocations("curl x | sudo -s").back() == "UNANALYZABLE");
    CHECK(invocations("doas -C /etc/doas.conf rm x") == V{"doas -C /etc/doas.conf rm x"});
}

TEST_CASE("shells reading their script from standard input", "[policy][wrappers]") {
    CHECK(innermost("bash <<< 'rm -rf /'") == "rm -rf /");
    CHECK(innermost("sh <<EOF\nrm -rf ~\nEOF") == "rm -rf /home/user");
    CHECK(innermost("echo 'rm -rf /' | sh") == "rm -rf /");
    CHECK(innermost("printf 'cd /\\nrm -rf usr\\n' | bash -s") == "rm -rf usr");
    CHECK(invocations("curl -fsSL https://example.com/install.sh | sh").back() == "UNANALYZABLE");
    CHECK(invocations("sh <<EOF\n$(cat x)\nEOF").back() == "UNANALYZABLE");
    CHECK(invocations("sh < install.sh") == V{"sh"});  // a script file, like `sh install.sh`
    CHECK(invocations("bash") == V{"bash"});           // interactive: stdin is the terminal
    CHECK(innermost("bash /dev/stdin <<< 'rm -rf /'") == "rm -rf /");
    CHECK(innermost("source /dev/stdin <<< 'rm -rf /'") == "rm -rf /");
    CHECK(innermost(". /dev/fd/0 <<EOF\nrm -rf ~\nEOF") == "rm -rf /home/user");
    CHECK(invocations("source ./env.sh") == V{"source ./env.sh"});
    CHECK(invocations("source <(kubectl completion bash)").back() == "source /dev/fd/63");
    CHECK(analyze_argv({"bash"}, "/", "/root").size() == 1);
}

TEST_CASE("substitutions inside brace expansions run once", "[policy][wrappers]") {
    auto all = invocations("echo {a,b,c}$(rm -rf /)");
    CHECK(std::count(all.begin(), all.end(), "rm -rf /") == 1);
    CHECK(all.back() == "echo <a$(...)> <b$(...)> <c$(...)>");
    // Nested braces and substitutions do not multiply: this stays small and fast.
    std::string s = "x";
    for (int i = 0; i < 15; ++i) s = "echo {a,b}{c,d}{e,f}{g,h}$(" + s + ")";
    CHECK(analyze_script(s, "/", "/root").size() == 16);
}

// The seccomp policy (SPEC §8): the default rules, policy files, and the compiled BPF, which is
// run through a small classic-BPF interpreter to check what the kernel would decide.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cstring>

#include "cordon/seccomp.hpp"

using namespace cordon;
using A = SyscallRule::Action;

namespace {

long count_rules(const SeccompPolicy& p, const std::string& name) {
    return std::count_if(p.rules.begin(), p.rules.end(), [&](const SyscallRule& r) { return r.syscall == name; });
}

const SyscallRule* find_rule(const SeccompPolicy& p, const std::string& name) {
    for (const auto& r : p.rules) {
        if (r.syscall == name) return &r;
    }
    return nullptr;
}

bool has_ns_rule(const SeccompPolicy& p, const std::string& name, uint64_t flag) {
    return std::any_of(p.rules.begin(), p.rules.end(), [&](const SyscallRule& r) {
        return r.syscall == name && r.action == A::Errno && r.conds.size() == 1 && r.conds[0].arg == 0 &&
               r.conds[0].mask == flag && r.conds[0].datum == flag;
    });
}

#if defined(__x86_64__)
constexpr uint32_t kNativeArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kNativeArch = AUDIT_ARCH_AARCH64;
#endif

// A classic BPF interpreter, enough for what libseccomp emits.
uint32_t run_bpf(const std::vector<sock_filter>& prog, int nr, uint32_t arch, std::initializer_list<uint64_t> args) {
    seccomp_data data{};
    data.nr = nr;
    data.arch = arch;
    size_t i = 0;
    for (uint64_t a : args) data.args[i++] = a;
    unsigned char bytes[sizeof data];
    std::memcpy(bytes, &data, sizeof data);
    uint32_t acc = 0, x = 0, mem[BPF_MEMWORDS] = {};
    for (size_t pc = 0; pc < prog.size(); ++pc) {
        const sock_filter& in = prog[pc];
        switch (in.code) {
            case BPF_LD | BPF_W | BPF_ABS:
                REQUIRE(in.k + 4 <= sizeof data);
                std::memcpy(&acc, bytes + in.k, 4);
                break;
            case BPF_LD | BPF_MEM:
                acc = mem[in.k];
                break;
            case BPF_LDX | BPF_MEM:
                x = mem[in.k];
                break;
            case BPF_ST:
                mem[in.k] = acc;
                break;
            case BPF_STX:
                mem[in.k] = x;
                break;
            case BPF_ALU | BPF_AND | BPF_K:
                acc &= in.k;
                break;
            case BPF_ALU | BPF_OR | BPF_K:
                acc |= in.k;
                break;
            case BPF_MISC | BPF_TAX:
                x = acc;
                break;
            case BPF_MISC | BPF_TXA:
                acc = x;
                break;
            case BPF_JMP | BPF_JA:
                pc += in.k;
                break;
            case BPF_JMP | BPF_JEQ | BPF_K:
                pc += (acc == in.k) ? in.jt : in.jf;
                break;
            case BPF_JMP | BPF_JGT | BPF_K:
                pc += (acc > in.k) ? in.jt : in.jf;
                break;
            case BPF_JMP | BPF_JGE | BPF_K:
                pc += (acc >= in.k) ? in.jt : in.jf;
                break;
            case BPF_JMP | BPF_JSET | BPF_K:
                pc += (acc & in.k) ? in.jt : in.jf;
                break;
            case BPF_RET | BPF_K:
                return in.k;
            case BPF_RET | BPF_A:
                return acc;
            default:
                FAIL("unsupported BPF opcode " << in.code << " at " << pc);
        }
    }
    FAIL("BPF program fell off the end");
    return 0;
}

constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr uint32_t kEperm = SECCOMP_RET_ERRNO | EPERM;
constexpr uint32_t kEnosys = SECCOMP_RET_ERRNO | ENOSYS;

}  // namespace

TEST_CASE("seccomp: the default policy's contents", "[seccomp]") {
    auto p = default_seccomp({});
    CHECK(p.name == "default");
    for (const char* n : {"ptrace",
                          "process_vm_readv",
                          "process_vm_writev",
                          "bpf",
                          "perf_event_open",
                          "userfaultfd",
                          "io_uring_setup",
                          "keyctl",
                          "add_key",
                          "mount",
                          "umount2",
                          "pivot_root",
                          "chroot",
                          "kexec_load",
                          "init_module",
                          "finit_module",
                          "swapon",
                          "reboot",
                          "acct",
                          "setns",
                          "settimeofday",
                          "clock_settime"}) {
        INFO(n);
        const SyscallRule* r = find_rule(p, n);
        REQUIRE(r != nullptr);
        CHECK(r->action == A::Errno);
        CHECK(r->err == EPERM);
        CHECK(r->conds.empty());
        CHECK_FALSE(r->why.empty());
    }
    const SyscallRule* c3 = find_rule(p, "clone3");
    REQUIRE(c3 != nullptr);
    CHECK(c3->action == A::Enosys);
    CHECK(c3->err == ENOSYS);
    CHECK(c3->conds.empty());

    for (uint64_t f : {uint64_t{CLONE_NEWUSER}, uint64_t{CLONE_NEWNS}, uint64_t{CLONE_NEWPID}, uint64_t{CLONE_NEWNET},
                       uint64_t{CLONE_NEWUTS}, uint64_t{CLONE_NEWIPC}, uint64_t{CLONE_NEWCGROUP}}) {
        INFO("flag " << f);
        CHECK(has_ns_rule(p, "clone", f));
        CHECK(has_ns_rule(p, "unshare", f));
    }
    // TIOCSTI: only the low 32 bits of the request are compared.
    bool tiocsti = std::any_of(p.rules.begin(), p.rules.end(), [](const SyscallRule& r) {
        return r.syscall == "ioctl" && r.conds.size() == 1 && r.conds[0].arg == 1 && r.conds[0].mask == 0xffffffffULL &&
               r.conds[0].datum == TIOCSTI;
    });
    CHECK(tiocsti);
    // Plain clone and ioctl are never denied outright.
    for (const auto& r : p.rules) {
        if (r.syscall == "clone" || r.syscall == "ioctl" || r.syscall == "unshare" || r.syscall == "personality") {
            CHECK_FALSE(r.conds.empty());
        }
    }
}

TEST_CASE("seccomp: --allow-ptrace and --allow-userns relax the default", "[seccomp]") {
    auto ptrace_ok = default_seccomp({.allow_ptrace = true});
    CHECK(count_rules(ptrace_ok, "ptrace") == 0);
    CHECK(count_rules(ptrace_ok, "process_vm_readv") == 0);
    CHECK(count_rules(ptrace_ok, "setns") == 1);

    auto userns_ok = default_seccomp({.allow_userns = true});
    CHECK(count_rules(userns_ok, "clone") == 0);
    CHECK(count_rules(userns_ok, "unshare") == 0);
    CHECK(count_rules(userns_ok, "setns") == 0);
    CHECK(count_rules(userns_ok, "ptrace") == 1);
    CHECK(count_rules(userns_ok, "clone3") == 1);  // still ENOSYS: harmless, libc falls back
    // mount(2) only for a propagation change: refused without a propagation flag, with a bit from
    // 1 << 21 up (MS_MGC_VAL), and with each of the 15 low bits other than MS_REC and MS_SILENT.
    CHECK(count_rules(userns_ok, "mount") == 17);
    CHECK(count_rules(default_seccomp({}), "mount") == 1);
}

TEST_CASE("seccomp: policy files add and relax rules", "[seccomp]") {
    auto p = parse_seccomp(
        "description = \"x\"\nallow = [\"ptrace\", \"perf_event_open\"]\ndeny = [\"chmod\"]\n"
        "enosys = [\"io_uring_enter\"]\nkill = [\"kexec_load\"]\n",
        "dbg.seccomp.toml", {});
    REQUIRE(p.ok());
    CHECK(p->name == "dbg.seccomp.toml");
    CHECK(count_rules(*p, "ptrace") == 0);
    CHECK(count_rules(*p, "perf_event_open") == 0);
    CHECK(count_rules(*p, "bpf") == 1);  // the rest of the default stays
    REQUIRE(count_rules(*p, "chmod") == 1);
    CHECK(find_rule(*p, "chmod")->action == A::Errno);
    CHECK(find_rule(*p, "chmod")->err == EPERM);
    REQUIRE(count_rules(*p, "io_uring_enter") == 1);
    CHECK(find_rule(*p, "io_uring_enter")->action == A::Enosys);
    REQUIRE(count_rules(*p, "kexec_load") == 1);  // replaced, not duplicated
    CHECK(find_rule(*p, "kexec_load")->action == A::Kill);

    auto none = parse_seccomp("base = \"none\"\ndeny = [\"chmod\"]\n", "n.toml", {});
    REQUIRE(none.ok());
    REQUIRE(none->rules.size() == 1);
    CHECK(none->rules[0].syscall == "chmod");
}

TEST_CASE("seccomp: policy file errors carry file:line:col", "[seccomp]") {
    auto unknown = parse_seccomp("deny = [\"chmod\",\n  \"no_such_call\"]\n", "f.toml", {});
    REQUIRE_FALSE(unknown);
    CHECK(unknown.error().what == "f.toml:2:3");
    CHECK_THAT(unknown.error().why, Catch::Contains("unknown syscall 'no_such_call'"));

    auto key = parse_seccomp("\nalow = [\"ptrace\"]\n", "f.toml", {});
    REQUIRE_FALSE(key);
    CHECK(key.error().what == "f.toml:2:8");
    CHECK_THAT(key.error().why, Catch::Contains("unknown key 'alow'"));

    auto base = parse_seccomp("base = \"strict\"\n", "f.toml", {});
    REQUIRE_FALSE(base);
    CHECK(base.error().what == "f.toml:1:8");

    CHECK(parse_seccomp("deny = \"chmod\"\n", "f.toml", {}).error().what == "f.toml:1:8");
    CHECK(parse_seccomp("deny = [1]\n", "f.toml", {}).error().what == "f.toml:1:9");
    auto syntax = parse_seccomp("deny = [\n", "f.toml", {});
    REQUIRE_FALSE(syntax);
    CHECK_THAT(syntax.error().what, Catch::Matches(R"(f\.toml:\d+:\d+)"));
}

#if defined(__x86_64__) || defined(__aarch64__)

TEST_CASE("seccomp: the compiled program checks the architecture first", "[seccomp]") {
    auto prog = compile_seccomp(default_seccomp({}));
    REQUIRE(prog.ok());
    REQUIRE(prog->size() > 10);
    const auto& first = (*prog)[0];
    CHECK(first.code == (BPF_LD | BPF_W | BPF_ABS));
    CHECK(first.k == offsetof(seccomp_data, arch));
    CHECK(first.k == 4);
    const auto& second = (*prog)[1];
    CHECK(second.code == (BPF_JMP | BPF_JEQ | BPF_K));
    CHECK(second.k == kNativeArch);
}

TEST_CASE("seccomp: the compiled program decides like the policy says", "[seccomp]") {
    auto prog = compile_seccomp(default_seccomp({}));
    REQUIRE(prog.ok());
    const auto& bpf = *prog;
    CHECK(run_bpf(bpf, SYS_getpid, kNativeArch, {}) == kAllow);
    CHECK(run_bpf(bpf, SYS_ptrace, kNativeArch, {}) == kEperm);
    CHECK(run_bpf(bpf, SYS_bpf, kNativeArch, {}) == kEperm);
    CHECK(run_bpf(bpf, SYS_mount, kNativeArch, {}) == kEperm);
    CHECK(run_bpf(bpf, SYS_clone3, kNativeArch, {}) == kEnosys);
    CHECK(run_bpf(bpf, SYS_setns, kNativeArch, {}) == kEperm);
    // clone: threads and forks pass, namespaces do not.
    CHECK(run_bpf(bpf, SYS_clone, kNativeArch, {CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD}) ==
          kAllow);
    CHECK(run_bpf(bpf, SYS_clone, kNativeArch, {uint64_t{SIGCHLD}}) == kAllow);
    CHECK(run_bpf(bpf, SYS_clone, kNativeArch, {uint64_t{CLONE_NEWUSER | SIGCHLD}}) == kEperm);
    CHECK(run_bpf(bpf, SYS_unshare, kNativeArch, {CLONE_NEWNS}) == kEperm);
    CHECK(run_bpf(bpf, SYS_unshare, kNativeArch, {CLONE_FILES}) == kAllow);
    // ioctl: TIOCSTI with junk in the high bits is still TIOCSTI to the kernel.
    CHECK(run_bpf(bpf, SYS_ioctl, kNativeArch, {0, TIOCSTI}) == kEperm);
    CHECK(run_bpf(bpf, SYS_ioctl, kNativeArch, {0, 0xdead000000000000ULL | TIOCSTI}) == kEperm);
    CHECK(run_bpf(bpf, SYS_ioctl, kNativeArch, {0, TCGETS}) == kAllow);
    // personality: the query and plain PER_LINUX pass, ASLR-weakening flags do not.
    CHECK(run_bpf(bpf, SYS_personality, kNativeArch, {0xffffffffULL}) == kAllow);
    CHECK(run_bpf(bpf, SYS_personality, kNativeArch, {PER_LINUX}) == kAllow);
    CHECK(run_bpf(bpf, SYS_personality, kNativeArch, {ADDR_NO_RANDOMIZE}) == kEperm);
    CHECK(run_bpf(bpf, SYS_personality, kNativeArch, {READ_IMPLIES_EXEC}) == kEperm);
#if defined(__x86_64__)
    // Foreign ABIs kill the process: i386, and x32 (same audit arch, syscall bit 30 set).
    CHECK(run_bpf(bpf, 1, AUDIT_ARCH_I386, {}) == SECCOMP_RET_KILL_PROCESS);
    CHECK(run_bpf(bpf, SYS_getpid | 0x40000000, kNativeArch, {}) == SECCOMP_RET_KILL_PROCESS);
#endif

    // Set-uid and set-gid bits: refused wherever a mode is given; other modes pass.
    const uint64_t suid = S_ISUID | 0755, sgid = S_ISGID | 0755;
    CHECK(run_bpf(bpf, SYS_chmod, kNativeArch, {0, suid}) == kEperm);
    CHECK(run_bpf(bpf, SYS_chmod, kNativeArch, {0, 0755}) == kAllow);
    CHECK(run_bpf(bpf, SYS_fchmod, kNativeArch, {3, sgid}) == kEperm);
    CHECK(run_bpf(bpf, SYS_fchmod, kNativeArch, {3, 01777}) == kAllow);
    CHECK(run_bpf(bpf, SYS_fchmodat, kNativeArch, {3, 0, S_ISUID | S_ISGID | 0755}) == kEperm);
    CHECK(run_bpf(bpf, 452 /* fchmodat2 */, kNativeArch, {3, 0, suid, 0}) == kEperm);
    CHECK(run_bpf(bpf, SYS_mkdir, kNativeArch, {0, sgid}) == kEperm);
    CHECK(run_bpf(bpf, SYS_mkdirat, kNativeArch, {3, 0, 0755}) == kAllow);
    CHECK(run_bpf(bpf, SYS_mknodat, kNativeArch, {3, 0, S_IFREG | suid, 0}) == kEperm);
    CHECK(run_bpf(bpf, SYS_creat, kNativeArch, {0, suid}) == kEperm);
    CHECK(run_bpf(bpf, SYS_openat, kNativeArch, {3, 0, O_CREAT | O_WRONLY, suid}) == kEperm);
    CHECK(run_bpf(bpf, SYS_openat, kNativeArch, {3, 0, __O_TMPFILE | O_WRONLY, sgid}) == kEperm);
    CHECK(run_bpf(bpf, SYS_openat, kNativeArch, {3, 0, O_CREAT | O_WRONLY, 0644}) == kAllow);
    CHECK(run_bpf(bpf, SYS_openat, kNativeArch, {3, 0, O_RDONLY, suid}) == kAllow);  // no mode without O_CREAT
    CHECK(run_bpf(bpf, SYS_open, kNativeArch, {0, O_CREAT | O_WRONLY, suid}) == kEperm);
    CHECK(run_bpf(bpf, SYS_openat2, kNativeArch, {3, 0, 0, 24}) == kEnosys);
    // vsock: one port space per machine, refused unless --net host.
    const uint32_t kNoAf = SECCOMP_RET_ERRNO | EAFNOSUPPORT;
    CHECK(run_bpf(bpf, SYS_socket, kNativeArch, {AF_VSOCK, SOCK_STREAM, 0}) == kNoAf);
    CHECK(run_bpf(bpf, SYS_socket, kNativeArch, {AF_INET, SOCK_STREAM, 0}) == kAllow);
    CHECK(run_bpf(bpf, SYS_socket, kNativeArch, {AF_UNIX, SOCK_STREAM, 0}) == kAllow);
    auto host_net = compile_seccomp(default_seccomp({.share_net = true}));
    REQUIRE(host_net.ok());
    CHECK(run_bpf(*host_net, SYS_socket, kNativeArch, {AF_VSOCK, SOCK_STREAM, 0}) == kAllow);
    CHECK(run_bpf(*host_net, SYS_chmod, kNativeArch, {0, suid}) == kEperm);

    auto relaxed = compile_seccomp(default_seccomp({.allow_userns = true, .allow_ptrace = true}));
    REQUIRE(relaxed.ok());
    CHECK(run_bpf(*relaxed, SYS_ptrace, kNativeArch, {}) == kAllow);
    CHECK(run_bpf(*relaxed, SYS_clone, kNativeArch, {uint64_t{CLONE_NEWUSER | SIGCHLD}}) == kAllow);
    CHECK(run_bpf(*relaxed, SYS_mount, kNativeArch, {}) == kEperm);
}

TEST_CASE("seccomp: no extended attribute is written where the jail can hold CAP_SETFCAP", "[seccomp]") {
    const uint32_t kNotsup = SECCOMP_RET_ERRNO | ENOTSUP;
    auto plain = compile_seccomp(default_seccomp({}));
    auto guarded = compile_seccomp(default_seccomp({.allow_userns = true, .deny_xattr_writes = true}));
    REQUIRE(plain.ok());
    REQUIRE(guarded.ok());
    for (int nr : {int{SYS_setxattr}, int{SYS_lsetxattr}, int{SYS_fsetxattr}, 463}) {
        INFO("syscall " << nr);
        CHECK(run_bpf(*plain, nr, kNativeArch, {}) == kAllow);
        CHECK(run_bpf(*guarded, nr, kNativeArch, {}) == kNotsup);
    }
    // Reading and removing attributes stay allowed: neither grants anything.
    CHECK(run_bpf(*guarded, SYS_getxattr, kNativeArch, {}) == kAllow);
    CHECK(run_bpf(*guarded, SYS_removexattr, kNativeArch, {}) == kAllow);
    CHECK(syscall_number("setxattrat") == 463);
    CHECK(syscall_number("open_tree_attr") == 467);
    CHECK(count_rules(default_seccomp({}), "open_tree_attr") == 1);
    CHECK(count_rules(default_seccomp({.allow_userns = true}), "open_tree_attr") == 1);
    CHECK(syscall_number("no_such_call") == -1);

    // The default refuses user namespaces unless --allow-userns; a file that allows them again
    // leaves them open.
    CHECK_FALSE(userns_left_open(default_seccomp({}).rules));
    CHECK(userns_left_open(default_seccomp({.allow_userns = true}).rules));
    auto unshare = parse_seccomp("allow = [\"unshare\"]\n", "x.toml", {});
    REQUIRE(unshare.ok());
    CHECK(userns_left_open(unshare->rules));
    auto clone3 = parse_seccomp("allow = [\"clone3\"]\n", "x.toml", {});
    REQUIRE(clone3.ok());
    CHECK(userns_left_open(clone3->rules));

    // With the option, the built-in policy leaves nothing to close.
    SeccompPolicy guarded_policy = default_seccomp({.allow_userns = true, .deny_xattr_writes = true});
    const size_t before = guarded_policy.rules.size();
    CHECK(close_file_caps(guarded_policy).empty());
    CHECK(guarded_policy.rules.size() == before);
    // A file that allows one again by name keeps it allowed, and is told so.
    auto reopened = parse_seccomp("allow = [\"fsetxattr\"]\n", "x.toml", {.deny_xattr_writes = true});
    REQUIRE(reopened.ok());
    CHECK(close_file_caps(*reopened) == "fsetxattr");
    auto uring = parse_seccomp("allow = [\"io_uring_setup\"]\n", "x.toml", {.deny_xattr_writes = true});
    REQUIRE(uring.ok());
    CHECK(close_file_caps(*uring) == "io_uring_setup");
    auto mounting = parse_seccomp("allow = [\"mount\"]\n", "x.toml", {.deny_xattr_writes = true});
    REQUIRE(mounting.ok());
    CHECK(close_file_caps(*mounting) == "mount");
    // base = "none" gets the xattr and io_uring refusals, and must refuse mounting itself.
    auto none = parse_seccomp("base = \"none\"\n", "x.toml", {.deny_xattr_writes = true});
    REQUIRE(none.ok());
    CHECK(close_file_caps(*none) ==
          "mount, open_tree, open_tree_attr, move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr");
    auto none_closed = parse_seccomp(
        "base = \"none\"\ndeny = [\"mount\", \"open_tree\", \"open_tree_attr\", \"move_mount\", \"fsopen\", "
        "\"fsconfig\", "
        "\"fsmount\", \"fspick\", \"mount_setattr\"]\n",
        "x.toml", {.deny_xattr_writes = true});
    REQUIRE(none_closed.ok());
    CHECK(close_file_caps(*none_closed).empty());
    auto compiled = compile_seccomp(none_closed->rules.empty() ? SeccompPolicy{} : *none_closed);
    REQUIRE(compiled.ok());
    CHECK(run_bpf(*compiled, SYS_fsetxattr, kNativeArch, {}) == kNotsup);
    CHECK(run_bpf(*compiled, 467, kNativeArch, {}) == (SECCOMP_RET_ERRNO | EPERM));  // open_tree_attr
    CHECK(run_bpf(*compiled, SYS_io_uring_setup, kNativeArch, {}) == (SECCOMP_RET_ERRNO | ENOSYS));
    auto named = parse_seccomp("deny = [\"setxattrat\"]\n", "x.toml", {});
    CHECK(named.ok());
}

TEST_CASE("seccomp: bwrap mode's guard refuses xattr writes and io_uring on every ABI", "[seccomp]") {
    auto guard = xattr_guard_program();
    REQUIRE(guard.ok());
    const uint32_t kNotsup = SECCOMP_RET_ERRNO | ENOTSUP;
    const uint32_t kNosys = SECCOMP_RET_ERRNO | ENOSYS;
    CHECK(run_bpf(*guard, SYS_setxattr, kNativeArch, {}) == kNotsup);
    CHECK(run_bpf(*guard, SYS_fsetxattr, kNativeArch, {}) == kNotsup);
    CHECK(run_bpf(*guard, 463, kNativeArch, {}) == kNotsup);               // setxattrat
    CHECK(run_bpf(*guard, 0x40000000 | 188, kNativeArch, {}) == kNotsup);  // x32 setxattr
    CHECK(run_bpf(*guard, SYS_io_uring_setup, kNativeArch, {}) == kNosys);
    CHECK(run_bpf(*guard, SYS_mount, kNativeArch, {}) == kAllow);  // bwrap nested in it mounts
    CHECK(run_bpf(*guard, 226, AUDIT_ARCH_I386, {}) == kNotsup);   // i386 setxattr
    CHECK(run_bpf(*guard, SYS_getpid, kNativeArch, {}) == kAllow);
    CHECK(run_bpf(*guard, SYS_getxattr, kNativeArch, {}) == kAllow);
    CHECK(run_bpf(*guard, 20, AUDIT_ARCH_I386, {}) == kAllow);  // i386 getpid
}

TEST_CASE("seccomp: kill rules and an empty policy compile", "[seccomp]") {
    SeccompPolicy p;
    p.rules.push_back(SyscallRule{"chmod", A::Kill, 0, {}, "test"});
    p.rules.push_back(SyscallRule{"not_a_real_syscall", A::Errno, EPERM, {}, "skipped"});
    auto prog = compile_seccomp(p);
    REQUIRE(prog.ok());
#if defined(__x86_64__)
    CHECK(run_bpf(*prog, SYS_chmod, kNativeArch, {}) == SECCOMP_RET_KILL_PROCESS);
#endif
    CHECK(run_bpf(*prog, SYS_getpid, kNativeArch, {}) == kAllow);
    auto empty = compile_seccomp(SeccompPolicy{});
    REQUIRE(empty.ok());
    CHECK_FALSE(empty->empty());
    CHECK(run_bpf(*empty, SYS_ptrace, kNativeArch, {}) == kAllow);
}

#endif

TEST_CASE("the built-in policy's precompiled programs are what libseccomp compiles now", "[seccomp]") {
    REQUIRE(precompiled_seccomp().size() == 16);
    for (int combo = 0; combo < 16; ++combo) {
        {
            const SeccompOptions o{(combo & 1) != 0, (combo & 2) != 0, (combo & 4) != 0, (combo & 8) != 0};
            INFO("allow_userns " << o.allow_userns << ", allow_ptrace " << o.allow_ptrace << ", share_net "
                                 << o.share_net << ", deny_xattr_writes " << o.deny_xattr_writes);
            const SeccompPolicy policy = default_seccomp(o);
            auto fresh = compile_seccomp_fresh(policy);
            auto used = compile_seccomp(policy);
            REQUIRE(fresh);
            REQUIRE(used);
            REQUIRE(fresh->size() == used->size());
            CHECK(std::memcmp(fresh->data(), used->data(), fresh->size() * sizeof(sock_filter)) == 0);
            size_t hits = 0;
            for (const auto& pre : precompiled_seccomp()) hits += pre.key == seccomp_key(policy);
            CHECK(hits == 1);
            // Taken by its options, without building the policy: the same program.
            auto direct = precompiled_default_seccomp(o);
            REQUIRE(direct.size() == fresh->size());
            CHECK(std::memcmp(fresh->data(), direct.data(), fresh->size() * sizeof(sock_filter)) == 0);
        }
    }
    // A policy that differs in one rule is compiled, not matched to a precompiled one.
    SeccompPolicy other = default_seccomp({});
    other.rules.push_back(SyscallRule{"uname", A::Errno, 1, {}, "test"});
    for (const auto& pre : precompiled_seccomp()) CHECK(pre.key != seccomp_key(other));
    auto compiled = compile_seccomp(other);
    REQUIRE(compiled);
    CHECK(compiled->size() > compile_seccomp(default_seccomp({}))->size());
}

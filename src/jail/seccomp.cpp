#include "cordon/seccomp.hpp"

#include <charconv>
#include <cstddef>
#include <span>

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <toml++/toml.h>
#include <algorithm>

#include "cordon/fd.hpp"
#include "cordon/paths.hpp"
#include "cordon/toml.hpp"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

namespace cordon {

namespace {

using A = SyscallRule::Action;
using Rules = std::vector<SyscallRule>;

SyscallRule deny(const char* name, const char* why) {
    return SyscallRule{name, A::Errno, EPERM, {}, why};
}

void deny_kernel_surface(Rules& r) {
    for (const char* n : {"add_key", "request_key", "keyctl"}) r.push_back(deny(n, "kernel keyring"));
    for (const char* n :
         {"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register"}) {
        r.push_back(deny(n, "kernel attack surface"));
    }
}

void deny_tracing(Rules& r) {
    for (const char* n : {"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd"}) {
        r.push_back(deny(n, "tracing other processes (--allow-ptrace)"));
    }
}

// mount(2) whose flags (argument 3) are a propagation change and nothing else: a propagation
// flag, at most MS_REC and MS_SILENT beside it, and no other bit. The kernel takes such a call to
// do_change_type, which touches no file system, so it can neither make a mount nor copy a file
// up. Each refusal below is one way to be anything else: no propagation flag; a bit from 1 << 21
// up (MS_MGC_VAL, whose 16 high bits the kernel drops before it reads the flags, or MS_NOUSER);
// or one of the other low bits (MS_BIND, MS_MOVE, MS_REMOUNT, ...).
constexpr uint64_t kPropagationFlags = MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE;
constexpr uint64_t kPropagationChange = kPropagationFlags | MS_REC | MS_SILENT;
static_assert(kPropagationChange < (uint64_t{1} << 21));

std::vector<ArgCond> mount_refusals() {
    std::vector<ArgCond> conds{{3, kPropagationFlags, 0}, {3, 0, uint64_t{1} << 21, true}};
    for (unsigned bit = 0; bit < 21; ++bit) {
        const uint64_t flag = uint64_t{1} << bit;
        if ((kPropagationChange & flag) == 0) conds.push_back({3, flag, flag});
    }
    return conds;
}

// Mounting is refused. With --allow-userns, mount(2) may still change propagation (what a nested
// sandbox does first in its own mount namespace, `mount --make-rprivate /`); it cannot mount.
void deny_mounting(Rules& r, bool allow_propagation) {
    for (const char* n : kMountSyscalls) {
        if (allow_propagation && std::string_view(n) == "mount") {
            for (const ArgCond& c : mount_refusals()) {
                r.push_back(SyscallRule{n, A::Errno, EPERM, {c}, "mounting (a propagation change is allowed)"});
            }
            continue;
        }
        r.push_back(deny(n, "mounting"));
    }
    for (const char* n : {"umount2", "pivot_root", "chroot"}) r.push_back(deny(n, "mounting"));
}

void deny_administration(Rules& r) {
    for (const char* n : {"swapon",
                          "swapoff",
                          "reboot",
                          "kexec_load",
                          "kexec_file_load",
                          "init_module",
                          "finit_module",
                          "delete_module",
                          "acct",
                          "quotactl",
                          "quotactl_fd",
                          "syslog",
                          "iopl",
                          "ioperm",
                          "vhangup",
                          "lookup_dcookie",
                          "nfsservctl",
                          "uselib",
                          "open_by_handle_at",
                          "name_to_handle_at"}) {
        r.push_back(deny(n, "system administration"));
    }
}

void deny_clock_setting(Rules& r) {
    for (const char* n : {"settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "stime"}) {
        r.push_back(deny(n, "setting the clock"));
    }
}

// personality: no persona flags that weaken ASLR or W^X (the 0xffffffff query stays allowed).
void deny_weakening_personas(Rules& r) {
    for (uint64_t flag : {uint64_t{ADDR_NO_RANDOMIZE}, uint64_t{READ_IMPLIES_EXEC}, uint64_t{MMAP_PAGE_ZERO},
                          uint64_t{ADDR_COMPAT_LAYOUT}}) {
        // Bit 31 is clear in every real persona and set in the query, so it tells them apart.
        r.push_back(SyscallRule{"personality",
                                A::Errno,
                                EPERM,
                                {{0, flag | 0x80000000ULL, flag}},
                                "persona flags that weaken ASLR or W^X"});
    }
}

// Terminal input injection: compare the low 32 bits of the request, whatever the high ones.
void deny_terminal_injection(Rules& r) {
    r.push_back(SyscallRule{"ioctl", A::Errno, EPERM, {{1, 0xffffffffULL, TIOCSTI}}, "TIOCSTI injects terminal input"});
    r.push_back(SyscallRule{"ioctl", A::Errno, EPERM, {{1, 0xffffffffULL, TIOCLINUX}}, "TIOCLINUX"});
}

// No file the jail creates or changes becomes set-uid or set-gid: what it leaves in the workdir
// would run with the caller's privileges (a root caller's, host root's) for any local user.
// The mode is a register argument of every call that sets one, so BPF sees the real value;
// openat2 passes it in memory, and gets ENOSYS (libc's open uses openat; callers of openat2
// fall back to it).
void deny_setid_files(Rules& r) {
    for (uint64_t bit : {uint64_t{S_ISUID}, uint64_t{S_ISGID}}) {
        const char* why = "set-uid and set-gid bits";
        for (auto [name, arg] : {std::pair{"chmod", 1U},
                                 {"fchmod", 1U},
                                 {"fchmodat", 2U},
                                 {"fchmodat2", 2U},
                                 {"creat", 1U},
                                 {"mkdir", 1U},
                                 {"mkdirat", 2U},
                                 {"mknod", 1U},
                                 {"mknodat", 2U}}) {
            r.push_back(SyscallRule{name, A::Errno, EPERM, {{arg, bit, bit}}, why});
        }
        // open and openat take a mode only with O_CREAT or O_TMPFILE.
        for (uint64_t create : {uint64_t{O_CREAT}, uint64_t{__O_TMPFILE}}) {
            r.push_back(SyscallRule{"open", A::Errno, EPERM, {{1, create, create}, {2, bit, bit}}, why});
            r.push_back(SyscallRule{"openat", A::Errno, EPERM, {{2, create, create}, {3, bit, bit}}, why});
        }
    }
    r.push_back(
        SyscallRule{"openat2", A::Enosys, ENOSYS, {}, "its mode is not inspectable; callers fall back to openat"});
}

// vsock has one port space per machine, not per network namespace: --net none covers it too.
void deny_vsock(Rules& r) {
    r.push_back(SyscallRule{"socket",
                            A::Errno,
                            EAFNOSUPPORT,
                            {{0, 0xffffffffULL, AF_VSOCK}},
                            "vsock reaches the hypervisor and other VMs (--net host)"});
}

// clone3 passes its flags in memory that BPF cannot read: ENOSYS makes libc fall back to clone,
// whose flags the namespace rules below can check.
void require_inspectable_clone(Rules& r) {
    r.push_back(SyscallRule{"clone3", A::Enosys, ENOSYS, {}, "flags not inspectable; libc falls back to clone"});
}

// A seccomp listener of the command's own would take the exec notifications from cordon's
// (the newest listener answers first), and outer runtimes need theirs: none is installed
// inside. SECCOMP_SET_MODE_FILTER with NEW_LISTENER, or with the flag proposed to let
// listeners nest (1 << 6), so a later kernel does not open the way.
void deny_listeners(Rules& r) {
    for (uint64_t flag : {uint64_t{SECCOMP_FILTER_FLAG_NEW_LISTENER}, uint64_t{1} << 6}) {
        r.push_back(SyscallRule{"seccomp",
                                A::Errno,
                                EPERM,
                                {{0, 0xffffffffULL, SECCOMP_SET_MODE_FILTER}, {1, flag, flag}},
                                "a seccomp listener would bypass cordon's exec checks"});
    }
}

// File capabilities are set-uid by another name: a v2 security.capability written by a jail
// in the initial user namespace, or a v3 one whose root id is host root (a user namespace whose
// root maps to uid 0, or an idmapped mount that stores it as 0), makes the file grant its
// capabilities to any local user who runs it on the host. Seccomp cannot read the attribute's
// name, so every write is refused, with the error of a file system without extended attributes
// (cp -a, tar and rsync then go on without them).
void deny_xattr_writes(Rules& r) {
    for (const char* n : kXattrWriteSyscalls) {
        r.push_back(SyscallRule{n, A::Errno, ENOTSUP, {}, "extended attributes (file capabilities)"});
    }
}

void deny_namespaces(Rules& r) {
    const uint64_t ns_flags[] = {CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,    CLONE_NEWNET,
                                 CLONE_NEWUTS,  CLONE_NEWIPC, CLONE_NEWCGROUP, CLONE_NEWTIME};
    for (uint64_t f : ns_flags) {
        r.push_back(SyscallRule{"clone", A::Errno, EPERM, {{0, f, f}}, "new namespaces (--allow-userns)"});
        r.push_back(SyscallRule{"unshare", A::Errno, EPERM, {{0, f, f}}, "new namespaces (--allow-userns)"});
    }
    r.push_back(deny("setns", "joining namespaces (--allow-userns)"));
}

}  // namespace

SeccompPolicy default_seccomp(const SeccompOptions& options) {
    SeccompPolicy p;
    p.name = "default";
    deny_kernel_surface(p.rules);
    if (!options.allow_ptrace) deny_tracing(p.rules);
    deny_mounting(p.rules, options.allow_userns);
    deny_administration(p.rules);
    deny_clock_setting(p.rules);
    deny_weakening_personas(p.rules);
    deny_terminal_injection(p.rules);
    deny_setid_files(p.rules);
    if (!options.share_net) deny_vsock(p.rules);
    require_inspectable_clone(p.rules);
    deny_listeners(p.rules);
    if (!options.allow_userns) deny_namespaces(p.rules);
    if (options.deny_xattr_writes) deny_xattr_writes(p.rules);
    return p;
}

namespace {

bool refuses(const std::vector<SyscallRule>& rules, std::string_view name, uint64_t flag = 0) {
    auto refusing = [&](const SyscallRule& r) { return r.syscall == name && r.action != A::Allow; };
    if (std::ranges::any_of(rules, [&](const SyscallRule& r) {
            return refusing(r) &&
                   (r.conds.empty() || (flag != 0 && r.conds.size() == 1 && r.conds[0].arg == 0 &&
                                        (r.conds[0].mask & flag) == flag && r.conds[0].datum == r.conds[0].mask));
        })) {
        return true;
    }
    // mount(2) left open to propagation changes only (deny_mounting) makes no mount.
    return name == "mount" && flag == 0 && std::ranges::all_of(mount_refusals(), [&](const ArgCond& c) {
               return std::ranges::any_of(
                   rules, [&](const SyscallRule& r) { return refusing(r) && r.conds.size() == 1 && r.conds[0] == c; });
           });
}

}  // namespace

bool userns_left_open(const std::vector<SyscallRule>& rules) {
    return !refuses(rules, "clone", CLONE_NEWUSER) || !refuses(rules, "unshare", CLONE_NEWUSER) ||
           !refuses(rules, "clone3");
}

std::string close_file_caps(SeccompPolicy& policy) {
    auto named = [&](std::string_view n) { return std::ranges::find(policy.allowed, n) != policy.allowed.end(); };
    auto add = [&](std::span<const char* const> calls, A action, int err) {
        for (const char* n : calls) {
            if (refuses(policy.rules, n) || named(n)) continue;
            policy.rules.push_back(SyscallRule{n, action, err, {}, "file capabilities (a root caller's jail)"});
        }
    };
    add(kXattrWriteSyscalls, A::Errno, ENOTSUP);
    add(kUringSyscalls, A::Enosys, ENOSYS);
    std::string open;
    for (std::span<const char* const> calls :
         {std::span<const char* const>(kXattrWriteSyscalls), std::span<const char* const>(kUringSyscalls),
          std::span<const char* const>(kMountSyscalls)}) {
        for (const char* n : calls) {
            if (!refuses(policy.rules, n)) open += std::string(open.empty() ? "" : ", ") + n;
        }
    }
    return open;
}

int syscall_number(const std::string& name) {
    int nr = ::seccomp_syscall_resolve_name(name.c_str());
    if (nr != __NR_SCMP_ERROR) return nr;
#if defined(__x86_64__) || defined(__aarch64__) || defined(__riscv)
    // Newer than libseccomp 2.5's table; the same number on every architecture since 5.x.
    // open_tree_attr (6.15) clones a mount and changes its flags at once: read-only off.
    static constexpr std::pair<std::string_view, int> kNewer[] = {{"setxattrat", 463}, {"open_tree_attr", 467}};
    for (auto [n, number] : kNewer) {
        if (n == name) return number;
    }
#endif
    return -1;
}

namespace {

Result<SyscallRule::Action> parse_action(const std::string& s) {
    if (s == "errno" || s == "deny") return A::Errno;
    if (s == "enosys") return A::Enosys;
    if (s == "kill") return A::Kill;
    if (s == "allow") return A::Allow;
    return make_error("action", "unknown action '" + s + "' (allow, deny, enosys, kill)");
}

std::string at(const std::string& path, const toml::node& n) {
    return path + ":" + std::to_string(n.source().begin.line) + ":" + std::to_string(n.source().begin.column);
}

}  // namespace

Result<SeccompPolicy> parse_seccomp(const std::string& text, const std::string& path, const SeccompOptions& options) {
    CORDON_ASSIGN_OR_RETURN(toml::table tbl, parse_toml(text, path));
    SeccompPolicy p;
    std::string base = "default";
    for (auto&& [k, node] : tbl) {
        std::string key(k.str());
        if (key == "description") continue;
        if (key == "base") {
            if (!node.is_string()) return make_error(at(path, node), "'base' must be \"default\" or \"none\"");
            base = *node.value<std::string>();
            if (base != "default" && base != "none")
                return make_error(at(path, node), "'base' must be \"default\" or \"none\"");
            continue;
        }
        if (key != "allow" && key != "deny" && key != "enosys" && key != "kill") {
            return make_error(at(path, node),
                              "unknown key '" + key + "' (description, base, allow, deny, enosys, kill)");
        }
    }
    if (base == "default") p = default_seccomp(options);
    p.name = path;
    for (const char* key : {"allow", "deny", "enosys", "kill"}) {
        const toml::node* node = tbl.get(key);
        if (!node) continue;
        const toml::array* arr = node->as_array();
        if (!arr) return make_error(at(path, *node), std::string("'") + key + "' must be an array of syscall names");
        for (const auto& e : *arr) {
            auto name = e.value<std::string>();
            if (!name || !e.is_string()) return make_error(at(path, e), std::string("'") + key + "' must hold strings");
            if (syscall_number(*name) < 0) {
                return make_error(at(path, e), "unknown syscall '" + *name + "'");
            }
            std::erase_if(p.rules, [&](const SyscallRule& r) { return r.syscall == *name; });
            auto action = parse_action(key);
            if (*action == A::Allow) p.allowed.push_back(*name);
            if (*action != A::Allow) {
                p.rules.push_back(SyscallRule{*name, *action, *action == A::Enosys ? ENOSYS : EPERM, {}, path});
            }
        }
    }
    return p;
}

Result<SeccompPolicy> load_seccomp(const std::string& name, const SeccompOptions& options) {
    if (name == "default") return default_seccomp(options);
    std::string path = name;
    if (name.find('/') == std::string::npos) {
        path.clear();
        for (const auto& dir : search_path("policies", "CORDON_POLICY_PATH")) {
            std::string candidate = dir + "/" + name + ".seccomp.toml";
            if (::access(candidate.c_str(), F_OK) != 0) continue;
            if (std::string why = untrusted_because(candidate); !why.empty())
                return make_error("--seccomp " + name, candidate + " is not trusted: " + why);
            path = candidate;
            break;
        }
        if (path.empty())
            return make_error("--seccomp",
                              "syscall policy '" + name + "' not found (looked for " + name + ".seccomp.toml)");
    }
    auto text = read_file(path);
    if (!text) return make_error("--seccomp", "cannot read '" + path + "'", text.error().err);
    return parse_seccomp(*text, path, options);
}

std::string seccomp_key(const SeccompPolicy& policy) {
    std::string key;
    key.reserve(policy.rules.size() * 24);
    char buf[24];
    auto num = [&](uint64_t v, char sep) {
        key.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
        key += sep;
    };
    for (const auto& r : policy.rules) {
        key += r.syscall;
        key += ' ';
        num(static_cast<uint64_t>(r.action), ' ');
        num(static_cast<uint64_t>(static_cast<unsigned>(r.err)), ' ');
        for (const auto& c : r.conds) {
            num(c.arg, ':');
            num(c.mask, ':');
            num(c.datum, c.at_least ? '+' : ' ');
        }
        key += '\n';
    }
    return key;
}

std::span<const sock_filter> precompiled_default_seccomp(const SeccompOptions& o) {
    for (const auto& pre : precompiled_seccomp()) {
        if (pre.options.allow_userns == o.allow_userns && pre.options.allow_ptrace == o.allow_ptrace &&
            pre.options.share_net == o.share_net && pre.options.deny_xattr_writes == o.deny_xattr_writes) {
            return pre.bpf;
        }
    }
    return {};
}

Result<std::vector<sock_filter>> xattr_guard_program() {
#if defined(__x86_64__)
    // By hand, for the three ABIs of x86-64 (libseccomp 2.5 does not know setxattrat, and would
    // need one filter per ABI for it): x32 calls arrive as x86-64 ones with bit 30 set.
    struct Refusal {
        std::vector<uint32_t> calls;
        uint32_t ret;
    };
    struct Abi {
        uint32_t arch;
        uint32_t clear;  // bits masked off the number first
        std::vector<Refusal> refusals;
    };
    const uint32_t nosup = SECCOMP_RET_ERRNO | ENOTSUP;
    const uint32_t nosys = SECCOMP_RET_ERRNO | ENOSYS;
    // xattr writes; io_uring.
    const Abi abis[] = {
        {AUDIT_ARCH_X86_64, 0x40000000U, {{{188, 189, 190, 463}, nosup}, {{425, 426, 427}, nosys}}},  // also x32
        {AUDIT_ARCH_I386, 0, {{{226, 227, 228, 463}, nosup}, {{425, 426, 427}, nosys}}},
    };
    std::vector<sock_filter> prog;
    auto at_end = [&](sock_filter f) { prog.push_back(f); };
    at_end(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
    for (const Abi& abi : abis) {
        // jeq arch: fall into the block; else jump over it (its length is known up front).
        size_t block = 1 + (abi.clear ? 1 : 0) + 1;
        for (const Refusal& r : abi.refusals) block += 2 * r.calls.size();
        at_end(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, abi.arch, 0, static_cast<uint8_t>(block)));
        at_end(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
        if (abi.clear) at_end(BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~abi.clear));
        for (const Refusal& r : abi.refusals) {
            for (uint32_t nr : r.calls) {
                at_end(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1));
                at_end(BPF_STMT(BPF_RET | BPF_K, r.ret));
            }
        }
        at_end(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    }
    at_end(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    return prog;
#else
    SeccompPolicy guard;
    guard.name = "file capabilities guard";
    for (const char* n : kXattrWriteSyscalls) guard.rules.push_back(SyscallRule{n, A::Errno, ENOTSUP, {}, "xattr"});
    for (const char* n : kUringSyscalls) guard.rules.push_back(SyscallRule{n, A::Enosys, ENOSYS, {}, "io_uring"});
    return compile_seccomp_fresh(guard);
#endif
}

Result<std::vector<sock_filter>> compile_seccomp(const SeccompPolicy& policy) {
    const std::string key = seccomp_key(policy);
    for (const auto& pre : precompiled_seccomp()) {
        if (pre.key == key) return std::vector<sock_filter>(pre.bpf.begin(), pre.bpf.end());
    }
    return compile_seccomp_fresh(policy);
}

Result<std::vector<sock_filter>> compile_seccomp_fresh(const SeccompPolicy& policy) {
    struct CtxDeleter {
        void operator()(void* c) const { seccomp_release(c); }
    };
    std::unique_ptr<void, CtxDeleter> ctx(seccomp_init(SCMP_ACT_ALLOW));
    if (!ctx) return make_error("seccomp", "seccomp_init failed");
    // Only the native ABI: i386 and x32 calls on x86-64 kill the whole process.
    if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS); rc < 0) {
        return make_error("seccomp", "cannot set the bad-architecture action", -rc);
    }
    // We set no_new_privs ourselves, at the right moment.
    if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 0); rc < 0) {
        return make_error("seccomp", "cannot clear the NNP attribute", -rc);
    }
    // A binary tree over syscall numbers instead of a linear list: each call, and the kernel's
    // per-syscall cache built when the filter is loaded, walks a few comparisons, not dozens.
    if (int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2); rc < 0) {
        return make_error("seccomp", "cannot ask for a binary-tree filter", -rc);
    }
    for (const auto& rule : policy.rules) {
        int nr = syscall_number(rule.syscall);
        if (nr < 0) continue;  // not a syscall on this architecture
        uint32_t action = SCMP_ACT_KILL_PROCESS;
        switch (rule.action) {
            case A::Errno:
                action = SCMP_ACT_ERRNO(static_cast<uint16_t>(rule.err));
                break;
            case A::Enosys:
                action = SCMP_ACT_ERRNO(ENOSYS);
                break;
            case A::Kill:
                action = SCMP_ACT_KILL_PROCESS;
                break;
            case A::Allow:
                continue;
        }
        std::vector<scmp_arg_cmp> cmps;
        for (const auto& c : rule.conds) {
            cmps.push_back(c.at_least ? SCMP_CMP64(c.arg, SCMP_CMP_GE, c.datum)
                                      : SCMP_CMP64(c.arg, SCMP_CMP_MASKED_EQ, c.mask, c.datum));
        }
        int rc = seccomp_rule_add_array(ctx.get(), action, nr, static_cast<unsigned>(cmps.size()),
                                        cmps.empty() ? nullptr : cmps.data());
        if (rc < 0) return make_error("seccomp rule for " + rule.syscall, "libseccomp refused it", -rc);
    }
    UniqueFd mem(::memfd_create("cordon-bpf", MFD_CLOEXEC));
    if (!mem) return sys_error("memfd_create");
    if (int rc = seccomp_export_bpf(ctx.get(), mem.get()); rc < 0) return make_error("seccomp", "export failed", -rc);
    off_t size = ::lseek(mem.get(), 0, SEEK_END);
    if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0) return make_error("seccomp", "bad BPF size");
    std::vector<sock_filter> prog(static_cast<size_t>(size) / sizeof(sock_filter));
    if (::pread(mem.get(), prog.data(), static_cast<size_t>(size), 0) != size) return sys_error("read BPF");
    return prog;
}

}  // namespace cordon

#include "cordon/fallback.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string_view>

#include "cordon/fd.hpp"
#include "cordon/paths.hpp"
#include "cordon/seccomp.hpp"

namespace cordon {

bool userns_refused(int err) {
    // EPERM, EACCES: a policy (AppArmor, a container's seccomp profile, SELinux); ENOSPC, EUSERS:
    // user.max_user_namespaces is 0 or exhausted; EINVAL: a kernel without user namespaces.
    return err == EPERM || err == EACCES || err == ENOSPC || err == EUSERS || err == EINVAL;
}

int probe_userns() {
    const pid_t pid = ::fork();
    if (pid < 0) return errno;
    if (pid == 0) ::_exit(::unshare(CLONE_NEWUSER) == 0 ? 0 : (errno & 0xff));
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return ECHILD;
    return WEXITSTATUS(status);
}

namespace {

using K = MountOp::Kind;

// Rules from grants: RIGHTS beneath a path, except beneath the excluded paths under it, which
// Landlock cannot subtract. A directory with an excluded path below it gets no rule of its own
// (READ_DIR when reading: its names may be listed); each of its entries is granted in turn.
class Granter final {
public:
    Granter(const HostFs& fs, std::vector<LandlockRule>& rules) : fs_(fs), rules_(rules) {}
    // ANCHOR: the grant's own root, when the entries below it are the jail's to plant (a
    // writable place): no symlink there is followed, in planning or when the rule is made.
    // TYPE: what the directory's listing said PATH is (Missing: unknown).
    void grant(const std::string& path, uint64_t rights, const std::vector<std::string>& excluded,
               const std::string& anchor, HostFs::Type type = HostFs::Type::Missing) {
        for (const auto& e : excluded) {
            if (path_at_or_under(path, e)) return;
        }
        const bool split =
            std::any_of(excluded.begin(), excluded.end(), [&](const std::string& e) { return path_under(e, path); });
        if (!split) {
            add(path, rights, anchor, type == HostFs::Type::File);
            return;
        }
        if ((rights & LANDLOCK_ACCESS_FS_READ_DIR) != 0) add(path, LANDLOCK_ACCESS_FS_READ_DIR, anchor, false);
        if ((rights & LANDLOCK_ACCESS_FS_MAKE_REG) != 0) split_.push_back(path);
        // The listing's types where it has them: no lookup per entry here, and a file's rule
        // made in one call in the child (build_landlock_ruleset).
        std::vector<std::pair<std::string, HostFs::Type>> entries;
        if (fs_.entries) {
            entries = fs_.entries(path);
        } else if (fs_.list) {
            for (auto& name : fs_.list(path)) entries.emplace_back(std::move(name), HostFs::Type::Missing);
        }
        for (const auto& [name, listed] : entries) {
            if (name == "." || name == "..") continue;
            const std::string child = path + "/" + name;
            HostFs::Type t = listed;
            if (!anchor.empty() && t == HostFs::Type::Missing) t = fs_.type(child);
            if (!anchor.empty() && t == HostFs::Type::Symlink) continue;
            grant(child, rights, excluded, anchor, t);
        }
    }
    // The directories that take no new entries (a write grant was split there).
    [[nodiscard]] const std::vector<std::string>& split_for_write() const { return split_; }

private:
    void add(const std::string& path, uint64_t rights, const std::string& anchor, bool file) {
        for (auto& r : rules_) {
            if (r.path == path && r.anchor == anchor) {
                r.access |= rights;
                r.file = r.file && file;
                return;
            }
        }
        rules_.push_back(LandlockRule{path, rights, anchor, file});
    }
    const HostFs& fs_;
    std::vector<LandlockRule>& rules_;
    std::vector<std::string> split_;
};

// What the mount plan says, in the Landlock jail's terms.
struct Places {
    std::vector<std::string> read, write;             // host paths shown read-only / writable
    std::vector<std::string> hidden, write_excluded;  // never readable / never writable
    // Protected paths (the profile's protect, placeholders): writable with the directory that
    // holds them, as Landlock cannot refuse one name there, and judged when the run ends.
    std::vector<std::string> protected_paths;
    bool proc = false, dev = false;
    std::vector<std::string> tmpfs;       // fresh directories it cannot give (the host's path is not granted)
    std::string home;                     // the private HOME's path, where it has one
    std::vector<std::string> home_links;  // the host's entries it shows
};

// The place a bwrap-style op of the mount plan puts something, which only a mount can do.
Error needs_mounts(const MountOp& op) {
    Error e = make_error("--isolation landlock", op.why + " " + (op.source.empty() ? "" : op.source + " ") + op.dest +
                                                     " needs the namespace jail (a mount)");
    e.hint = "the Landlock jail shows the host's own files where they are; drop the option or use a namespace jail";
    return e;
}

Result<Places> read_places(const MountPlan& mounts) {
    Places p;
    for (const MountOp& op : mounts.ops) {
        const bool bwrap_op = op.why.rfind("--", 0) == 0 && op.why != "--ro" && op.why != "--rw" && op.why != "--hide";
        switch (op.kind) {
            case K::Bind:
                // The jail's resolv.conf under --allow-host names the resolver of its network
                // namespace: the Landlock jail has neither (its clients go through the proxy).
                if (op.why == "allow-host") break;
                if (op.in_jail) {
                    if (op.readonly) p.protected_paths.push_back(op.dest);
                } else if (op.source != op.dest) {
                    return needs_mounts(op);
                } else {
                    (op.readonly ? p.read : p.write).push_back(op.source);
                }
                break;
            case K::Tmpfs:
                if (op.why == "private HOME") p.home = op.dest;
                if (!op.readonly && op.why != "private HOME") p.tmpfs.push_back(op.dest);
                break;
            case K::Proc:
                if (op.dest != "/proc") return needs_mounts(op);
                p.proc = true;
                break;
            case K::Dev:
                if (op.dest != "/dev") return needs_mounts(op);
                p.dev = true;
                break;
            case K::HideFile:
            case K::HideDir:
                if (!path_at_or_under(op.dest, "/proc")) p.hidden.push_back(op.dest);
                break;
            case K::RemountRo:
                p.write_excluded.push_back(op.dest);
                break;
            case K::Dir:
            case K::Symlink:
                if (bwrap_op) return needs_mounts(op);
                break;  // the system's own symlinks (merged /usr): the host has them
            case K::RebindRo:
                break;  // under /proc, which is only read
        }
    }
    for (const auto& ph : mounts.placeholders) p.protected_paths.push_back(ph.path);
    if (!p.home.empty()) {
        for (const MountOp& op : mounts.ops) {
            if (op.kind == K::Bind && !op.in_jail && op.source == op.dest && path_under(op.dest, p.home))
                p.home_links.push_back(op.dest);
        }
    }
    return p;
}

// A read-only place inside a writable one is not written either.
std::vector<std::string> write_exclusions(const Places& p) {
    std::vector<std::string> out = p.write_excluded;
    out.insert(out.end(), p.hidden.begin(), p.hidden.end());
    for (const auto& r : p.read) {
        if (std::any_of(p.write.begin(), p.write.end(), [&](const std::string& w) { return path_under(r, w); })) {
            out.push_back(r);
        }
    }
    return out;
}

}  // namespace

// socket(2) refused with EACCES: unix sockets always (the host's are reachable by path: a
// D-Bus, docker.sock, an ssh agent), and every network family under --net none. Through the
// proxy (--allow-host with a listener), TCP client sockets only: no other type or protocol, no
// bind or listen, no TCP Fast Open (a connect by sendto/sendmsg), while connect(2) itself goes
// to the supervisor (proxy_connect.hpp).
Result<std::vector<sock_filter>> fallback_socket_filter(bool share_net, bool proxy) {
    SeccompPolicy policy{"landlock jail sockets", {}, {}};
    auto refuse = [&](const char* call, std::vector<ArgCond> conds) {
        policy.rules.push_back(
            SyscallRule{call, SyscallRule::Action::Errno, EACCES, std::move(conds), "landlock jail"});
    };
    std::vector<int> families = {AF_UNIX};
    if (!share_net) families.insert(families.end(), {AF_PACKET, AF_VSOCK, AF_TIPC, AF_RDS});
    if (!share_net && !proxy) families.insert(families.end(), {AF_INET, AF_INET6});
    for (int family : families) refuse("socket", {ArgCond{0, 0xffffffffULL, static_cast<uint64_t>(family)}});
    if (proxy) {
        for (int family : {AF_INET, AF_INET6}) {
            const ArgCond fam{0, 0xffffffffULL, static_cast<uint64_t>(family)};
            for (int type : {SOCK_DGRAM, SOCK_RAW, SOCK_RDM, SOCK_SEQPACKET, SOCK_DCCP, SOCK_PACKET})
                refuse("socket", {fam, ArgCond{1, 0xf, static_cast<uint64_t>(type)}});
            for (int protocol : {IPPROTO_SCTP, IPPROTO_MPTCP})
                refuse("socket", {fam, ArgCond{2, 0xffffffffULL, static_cast<uint64_t>(protocol)}});
        }
        refuse("bind", {});
        refuse("listen", {});
        refuse("sendto", {ArgCond{3, MSG_FASTOPEN, MSG_FASTOPEN}});
        refuse("sendmsg", {ArgCond{2, MSG_FASTOPEN, MSG_FASTOPEN}});
        refuse("sendmmsg", {ArgCond{3, MSG_FASTOPEN, MSG_FASTOPEN}});
    }
    // Another process's limits: Landlock's scopes do not cover prlimit(2), and without a pid
    // namespace the jail could set init's or cordon's own (RLIMIT_CPU ends them). A process's
    // own (pid 0, as setrlimit and ulimit ask) stay its to set.
    policy.rules.push_back(
        SyscallRule{"prlimit64", SyscallRule::Action::Errno, EPERM, {ArgCond{0, 0, 1, true}}, "landlock jail"});
    return compile_seccomp_fresh(policy);
}

namespace {

// What cannot be given without namespaces, for SPEC's run.
Status refuse_what_needs_namespaces(const Spec& spec) {
    auto refuse = [](const std::string& option, const std::string& why) {
        Error e = make_error(option, why + ": the Landlock jail has no user namespace (--isolation landlock)");
        e.hint = "drop the option, or run where user namespaces are allowed (cordon doctor)";
        return e;
    };
    if (spec.uid != spec.host_uid || spec.gid != spec.host_gid) return refuse("--uid/--gid", "other ids inside");
    if (spec.hostname) return refuse("--hostname", "a hostname of its own");
    if (!spec.cap_keep.empty()) return refuse("--cap-add", "capabilities inside");
    // Its socket would be a path on the host's filesystem, which Landlock does not cover: the
    // jail refuses unix sockets altogether, and SSH is no proxy client.
    if (!spec.ssh_agent_hosts.empty()) return refuse("--ssh-agent", "an agent socket and SSH connections");
    return {};
}

void name_dropped(const Spec& spec, const Places& p, const Granter& g, int abi, std::vector<std::string>& dropped) {
    dropped.emplace_back("host processes visible (the host's /proc: no pid namespace)");
    dropped.emplace_back(
        "no private /tmp: the host's /tmp, /var/tmp and /run are not accessible, TMPDIR is a "
        "private directory for the run");
    for (const auto& t : p.tmpfs) {
        if (t != "/tmp" && t != "/var/tmp" && t != "/run") dropped.push_back("--tmpfs " + t + " not accessible");
    }
    if (!spec.share_net) dropped.emplace_back("no loopback inside the jail (network sockets are refused)");
    // The --allow-host filter lives in the jail's own network namespace (cordon(1), NETWORK):
    // without one, only the proxy's clients, through the jail's seccomp listener (proxy_connect.hpp).
    if (!spec.allow_hosts.empty()) {
        dropped.emplace_back(
            "--allow-host: only through the proxy (HTTP_PROXY, HTTPS_PROXY), where cordon can be the jail's "
            "seccomp listener, else no network at all: other connections, and programs that ignore those "
            "variables, are refused (no network namespace)");
    }
    dropped.emplace_back("unix sockets refused (socket(AF_UNIX); socketpair works)");
    if (abi < 6) {
        dropped.push_back("signals to host processes of the same user not refused (Landlock ABI " +
                          std::to_string(abi) + " < 6)");
    }
    dropped.emplace_back("the host's SysV IPC and POSIX message queues shared (no IPC namespace)");
    dropped.emplace_back("hidden files unreadable but listed by name; /proc's host-wide files readable");
    dropped.emplace_back("processes left behind outlive a cordon killed with SIGKILL (no pid namespace)");
    if (spec.host_uid == 0) dropped.emplace_back("uid 0 is the host's root, without capabilities");
    if (!p.protected_paths.empty()) {
        dropped.emplace_back(
            "protected paths writable during the run (Landlock cannot refuse one name in a writable "
            "directory): judged when it ends, and what the run made or changed there moved aside");
    }
    if (!g.split_for_write().empty()) {
        std::string names;
        for (const auto& d : g.split_for_write()) names += (names.empty() ? "" : ", ") + d;
        dropped.push_back("no new entries in " + names +
                          " (a read-only or hidden path below it stays so only so; existing entries stay writable)");
    }
}

}  // namespace

Result<FallbackPlan> plan_fallback(const Spec& spec, const MountPlan& mounts, int abi, const HostFs& fs) {
    if (const std::string off = landlock_unavailable(abi); !off.empty()) {
        Error e = make_error("--isolation landlock", "no jail without user namespaces: " + off);
        e.hint = "run where user namespaces are allowed (cordon doctor says what refuses them here)";
        return e;
    }
    CORDON_TRY(refuse_what_needs_namespaces(spec));
    CORDON_ASSIGN_OR_RETURN(const Places places, read_places(mounts));
    FallbackPlan plan;
    plan.abi = abi;
    LandlockPlan& ll = plan.landlock;
    ll.abi = std::min(abi, kLandlockAbiKnown);
    ll.handled_fs = landlock_handled_fs(ll.abi);
    if (ll.abi >= 4 && !spec.share_net) ll.handled_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
    if (ll.abi >= 6) ll.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
    ll.stdio = true;
    Granter g(fs, ll.rules);
    const uint64_t read = landlock_read_rights();
    for (const auto& r : places.read) g.grant(r, read, places.hidden, "");
    for (const auto& w : places.write) g.grant(w, read, places.hidden, w);
    const std::vector<std::string> no_write = write_exclusions(places);
    for (const auto& w : places.write) g.grant(w, landlock_write_rights(ll.abi), no_write, w);
    if (places.proc) g.grant("/proc", read, {}, "");
    if (places.dev) {
        for (const char* node : kDevNodes) g.grant(std::string("/dev/") + node, landlock_device_rights(ll.abi), {}, "");
    }
    CORDON_ASSIGN_OR_RETURN(plan.socket_bpf, fallback_socket_filter(spec.share_net, false));
    plan.net_refused = !spec.share_net;
    name_dropped(spec, places, g, ll.abi, plan.dropped);
    plan.judged = places.protected_paths;
    plan.allow_hosts = !spec.allow_hosts.empty();
    plan.home = places.home;
    plan.home_links = places.home_links;
    return plan;
}

std::string fallback_warning(const FallbackPlan& plan, const std::string& why) {
    // Two lines: why, then the jail and the first of what it drops by their short names (up to
    // a parenthesis or a colon); --dry-run and --status-json's "dropped" have them all.
    std::string out = why + ";\n  running in a Landlock jail (ABI " + std::to_string(plan.landlock.abi) + ") instead";
    constexpr size_t kNamed = 2;
    for (size_t i = 0; i < plan.dropped.size() && i < kNamed; ++i) {
        const std::string& d = plan.dropped[i];
        out += (i ? ", " : ": ") + d.substr(0, std::min(d.find(" ("), d.find(':')));
    }
    if (plan.dropped.size() > kNamed) out += " and " + std::to_string(plan.dropped.size() - kNamed) + " more";
    return out + " (--dry-run lists them)";
}

namespace {

// Everything in the directory DIR (consumed), depth first; nothing is followed. What lies
// deeper than DEPTH levels is moved up into ROOT (the run's directory) under a new name, for
// the next pass; true when that was done.
bool remove_entries(int root, UniqueFd dir, int depth, unsigned& moved) {
    std::vector<char> buf(8192);
    std::vector<std::pair<std::string, bool>> entries;
    for (long n = 0; (n = ::syscall(SYS_getdents64, dir.get(), buf.data(), buf.size())) > 0;) {
        for (long off = 0; off < n;) {
            const auto* d = reinterpret_cast<const struct dirent64*>(buf.data() + off);
            off += d->d_reclen;
            const std::string_view name = d->d_name;
            if (name != "." && name != "..") entries.emplace_back(name, d->d_type == DT_DIR);
        }
    }
    bool again = false;
    for (const auto& [name, is_dir] : entries) {
        if (::unlinkat(dir.get(), name.c_str(), 0) == 0 || !(is_dir || errno == EISDIR)) continue;
        if (depth == 0) {
            const std::string up = ".cordon-deep." + std::to_string(moved++);
            again = ::renameat(dir.get(), name.c_str(), root, up.c_str()) == 0 || again;
            continue;
        }
        // A directory the jail made unreadable or unwritable: its mode is ours to change (the
        // jail is gone, and no one else can reach inside the run's 0700 directory).
        struct stat st {};
        if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) continue;
        if ((st.st_mode & 0700) != 0700) (void)::fchmodat(dir.get(), name.c_str(), 0700, 0);
        UniqueFd sub(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!sub) continue;
        again = remove_entries(root, std::move(sub), depth - 1, moved) || again;
        (void)::unlinkat(dir.get(), name.c_str(), AT_REMOVEDIR);
    }
    return again;
}

}  // namespace

Result<RunTmpdir> RunTmpdir::create(const std::string& parent, const char* prefix) {
    std::string templ = parent + "/" + prefix + ".XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) return sys_error("create the Landlock jail's TMPDIR in " + parent);
    RunTmpdir t;
    t.path_ = std::move(templ);
    return t;
}

RunTmpdir& RunTmpdir::operator=(RunTmpdir&& other) noexcept {
    if (this != &other) {
        RunTmpdir old(std::move(*this));
        path_ = std::move(other.path_);
        other.path_.clear();
    }
    return *this;
}

RunTmpdir::~RunTmpdir() {
    if (path_.empty()) return;
    UniqueFd root(::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    unsigned moved = 0;
    for (int pass = 0; root && pass < 4096; ++pass) {
        UniqueFd dir(::openat(root.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!dir || !remove_entries(root.get(), std::move(dir), 64, moved)) break;
    }
    (void)::rmdir(path_.c_str());
}

namespace {

// The pids in a children file of /proc (PATH), at most MAX; SIZE_MAX where it cannot be read.
size_t read_pids(const char* path, pid_t* out, size_t max) {
    size_t n = 0;
    char buf[4096];
    UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
    if (!fd) return SIZE_MAX;
    const ssize_t len = ::read(fd.get(), buf, sizeof buf - 1);
    buf[len > 0 ? len : 0] = 0;
    for (char* p = buf; *p && n < max;) {
        char* end = nullptr;
        const long pid = std::strtol(p, &end, 10);
        if (end == p) break;
        if (pid > 0) out[n++] = static_cast<pid_t>(pid);
        p = end;
    }
    return n;
}

// The pids of init's children, from /proc/thread-self/children (init has one thread), or by
// scanning /proc where the kernel lacks that file. At most MAX of them.
size_t list_children(pid_t* out, size_t max) {
    char buf[4096];
    if (const size_t n = read_pids("/proc/thread-self/children", out, max); n != SIZE_MAX) return n;
    size_t n = 0;
    const pid_t self = ::getpid();
    UniqueFd proc(::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    alignas(8) char dents[8192];
    for (long got = 0; proc && n < max && (got = ::syscall(SYS_getdents64, proc.get(), dents, sizeof dents)) > 0;) {
        for (long off = 0; off < got && n < max;) {
            const auto* d = reinterpret_cast<const struct dirent64*>(dents + off);
            off += d->d_reclen;
            if (d->d_name[0] < '1' || d->d_name[0] > '9') continue;
            char path[300];
            std::snprintf(path, sizeof path, "/proc/%s/stat", d->d_name);
            UniqueFd st(::open(path, O_RDONLY | O_CLOEXEC));
            const ssize_t len = st ? ::read(st.get(), buf, sizeof buf - 1) : -1;
            if (len <= 0) continue;
            buf[len] = 0;
            const char* close = std::strrchr(buf, ')');  // "pid (comm) state ppid ..."
            int ppid = 0;
            if (close && std::sscanf(close + 1, " %*c %d", &ppid) == 1 && ppid == self) {
                out[n++] = static_cast<pid_t>(std::atoi(d->d_name));
            }
        }
    }
    return n;
}

// The pids of the children of each of our threads (an orphan comes to any thread of its
// subreaper), at most MAX of them.
size_t list_our_children(pid_t* out, size_t max) {
    size_t n = 0;
    UniqueFd tasks(::open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    alignas(8) char dents[4096];
    for (long got = 0; tasks && n < max && (got = ::syscall(SYS_getdents64, tasks.get(), dents, sizeof dents)) > 0;) {
        for (long off = 0; off < got && n < max;) {
            const auto* d = reinterpret_cast<const struct dirent64*>(dents + off);
            off += d->d_reclen;
            if (d->d_name[0] < '1' || d->d_name[0] > '9') continue;
            char path[300];
            std::snprintf(path, sizeof path, "/proc/self/task/%s/children", d->d_name);
            const size_t got_pids = read_pids(path, out + n, max - n);
            if (got_pids != SIZE_MAX) n += got_pids;
        }
    }
    return n;
}

// Each process LIST names killed and reaped, until it names none: what they leave comes to us
// in turn. No allocation (init calls it).
void end_each(size_t (*list)(pid_t*, size_t)) {
    pid_t pids[512];
    for (int round = 0; round < 10000; ++round) {
        const size_t n = list(pids, std::size(pids));
        if (n == 0) return;
        for (size_t i = 0; i < n; ++i) ::kill(pids[i], SIGKILL);
        for (size_t i = 0; i < n; ++i) (void)retry_eintr([&] { return ::waitpid(pids[i], nullptr, 0); });
    }
}

}  // namespace

void end_orphans() {
    end_each(list_our_children);
}

void end_children() {
    end_each(list_children);
}

std::vector<std::string> fallback_writable(const FallbackPlan& plan) {
    std::vector<std::string> out;
    for (const auto& r : plan.landlock.rules) {
        if ((r.access & (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_MAKE_REG)) == 0) continue;
        char real[PATH_MAX];
        if (!real_path(r.path, real)) continue;  // nothing there to be written
        out.emplace_back(real);
    }
    return out;
}

std::vector<std::string> describe(const FallbackPlan& plan) {
    std::vector<std::string> lines = describe(plan.landlock);
    std::string sockets = "socket(2) refused: unix sockets";
    if (plan.net_refused) sockets += ", every network family";
    if (plan.allow_hosts)
        sockets += " (--allow-host: but TCP client sockets, whose connects cordon makes to its proxy)";
    if (plan.landlock.handled_net != 0) sockets += "; TCP bind and connect refused by Landlock too";
    lines.push_back(sockets);
    if (!plan.home.empty()) lines.push_back("HOME: a private directory for the run instead of " + plan.home);
    for (const auto& j : plan.judged) lines.push_back("judged after the run (writable during it): " + j);
    for (const auto& d : plan.dropped) lines.push_back("dropped: " + d);
    return lines;
}

}  // namespace cordon

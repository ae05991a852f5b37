// The Spec: everything the jail will be, validated once, immutable afterwards (STYLE.md).
// Plain data: the command line and profiles that it is built from are the CLI's
// (cordon/spec_builder.hpp); the jail sees only this.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cordon {

struct Rlimit {
    int resource;
    std::string name;
    uint64_t soft;
    uint64_t hard;
};

// cgroup v2 limits (SPEC §7). Values are what the kernel files get; unset means "no limit".
struct CgroupLimits {
    static constexpr uint64_t kCpuPeriodUs = 100000;  // cpu.max period: 100 ms
    std::optional<uint64_t> memory;                   // memory.max, bytes
    std::optional<uint64_t> memory_swap;              // memory.swap.max, bytes; UINT64_MAX is "max"; 0 if unset
    std::optional<uint64_t> pids;                     // --pids N: the command's tree (the jail's init is added)
    std::optional<uint64_t> cpu_quota_us;             // cpu.max quota per kCpuPeriodUs
    bool best_effort = false;                         // --limits best-effort: warn instead of failing
    [[nodiscard]] bool any() const { return memory || pids || cpu_quota_us; }
};

// One bwrap-style primitive (--bind SRC DEST, --dir DEST, ...), typed where the command line or
// profile is parsed, as bubblewrap's setup ops are: the planner replays them in order, after
// everything else.
struct MountRequest {
    // Perms is bubblewrap's --perms OCTAL (in DEST): the command line's and profile's parsers
    // keep it in order, and the spec builder folds it into the Dir or Tmpfs that follows.
    enum class Kind { Bind, RoBind, DevBind, Proc, Dev, Dir, Symlink, RemountRo, Tmpfs, Perms };
    Kind kind = Kind::Dir;
    std::string source;            // the binds: the host path; Symlink: the link's target; else empty
    std::string dest;              // inside the jail
    bool optional = false;         // the binds' -try forms: nothing happens when SOURCE does not exist
    std::optional<mode_t> mode{};  // Dir, Tmpfs: --perms before it (default 0755, as bubblewrap)
    bool operator==(const MountRequest&) const = default;
};

// The option that asks for KIND, without "--" or "-try": "ro-bind", "dir", ...
constexpr std::string_view mount_request_name(MountRequest::Kind kind) {
    using K = MountRequest::Kind;
    switch (kind) {
        case K::Bind:
            return "bind";
        case K::RoBind:
            return "ro-bind";
        case K::DevBind:
            return "dev-bind";
        case K::Proc:
            return "proc";
        case K::Dev:
            return "dev";
        case K::Dir:
            return "dir";
        case K::Symlink:
            return "symlink";
        case K::RemountRo:
            return "remount-ro";
        case K::Tmpfs:
            return "mount-tmpfs";
        case K::Perms:
            return "perms";
    }
    return "?";
}
// Whether KIND takes SRC DEST (else DEST alone).
constexpr bool mount_request_has_source(MountRequest::Kind kind) {
    using K = MountRequest::Kind;
    return kind == K::Bind || kind == K::RoBind || kind == K::DevBind || kind == K::Symlink;
}
// The option that asks for REQUEST, with its -try: "ro-bind-try".
inline std::string mount_request_option(const MountRequest& request) {
    std::string name(mount_request_name(request.kind));
    return request.optional ? name + "-try" : name;
}

// --isolation: the namespace jail, or the Landlock jail where user namespaces are refused
// (cordon(1), ISOLATION).
enum class Isolation { Auto, Namespaces, Landlock };

// One --allow-host entry (cordon/net.hpp parses and matches them): a name, a wildcard below a
// domain, or an address range, with the ports it allows.
struct AllowHost {
    std::string text;             // as given, for messages
    std::string name;             // lowercase; a wildcard's suffix with its dot (".example.org")
    bool wildcard = false;        // "*.example.org"
    int family = 0;               // an address entry: AF_INET or AF_INET6 (name empty)
    uint8_t addr[16] = {};        // its address, network order
    int prefix = 0;               // its prefix length
    std::vector<uint16_t> ports;  // never empty
};

// One --ssh-agent host: its name (lowercase) and port, and the keys the caller's known_hosts
// lists for it there (blobs, the SSH wire encoding).
struct SshAgentHost {
    std::string name;
    uint16_t port = 22;
    std::vector<std::string> keys;
    std::string text() const { return port == 22 ? name : name + ":" + std::to_string(port); }
};
// Where the jail finds the relay's socket (SSH_AUTH_SOCK), on the jail's private /run.
inline constexpr const char* kJailAgentDir = "/run/cordon";
inline constexpr const char* kJailAgentSocket = "/run/cordon/ssh-agent.sock";

// Why --as-pid-1 and the Landlock jail do not go together (the option's error, at either place).
inline constexpr const char* kAsPid1Landlock =
    "the command can be pid 1 only of the namespace jail's pid namespace, and the Landlock jail has none";

struct Spec {
    // The command: argv[0] is looked up on the jail's PATH.
    std::vector<std::string> argv;
    bool via_shell = false;  // -c SCRIPT

    // Identity.
    uid_t host_uid = 0, uid = 0;
    gid_t host_gid = 0, gid = 0;
    std::string home;  // the caller's HOME (same path inside)
    std::optional<std::string> hostname;
    bool share_net = false;
    // --allow-host: the jail keeps its own network namespace, and connections leave it only
    // through the supervisor's proxy to these hosts (net_proxy.hpp). Empty: no filter.
    std::vector<AllowHost> allow_hosts;
    // Test-only name-to-address mappings of CORDON_TEST_RESOLVE, and the resolv.conf(5) of
    // CORDON_TEST_RESOLV_CONF (cordon(1), NETWORK).
    std::vector<std::pair<std::string, std::string>> test_resolve;
    std::string test_resolv_conf;
    // --ssh-agent (SPEC §6c, ssh_agent_relay.hpp): the hosts whose sessions the jail's agent
    // signs for, each with its known keys (the caller's known_hosts); empty: no agent.
    std::vector<SshAgentHost> ssh_agent_hosts;
    std::vector<std::string> ssh_agent_keys;  // --ssh-agent-key: the keys (blobs) it may use; empty: all
    std::string ssh_agent_upstream;           // the caller's SSH_AUTH_SOCK

    // Filesystem (absolute, normalised paths; `protect` is relative to the workdir).
    bool no_profile = false;
    std::optional<std::string> workdir;  // nullopt: nothing writable
    bool workdir_readonly = false;       // the workdir is shown read-only
    // The git directories outside the workdir that its .git file leads to (cordon(1), GIT
    // WORKTREES): a linked worktree's own git directory and the common one it shares, or a
    // submodule's git directory (no common one). Empty: none, or inside the workdir.
    std::string workdir_gitdir, workdir_commondir;
    // A root caller's writable workdir: its top's owner and group (0: root's, or not root's run).
    // One another user owns is idmapped from that owner (root_remap.hpp; cordon(1), ROOT CALLERS).
    uint32_t workdir_owner_uid = 0, workdir_owner_gid = 0;
    uint64_t workdir_dev = 0, workdir_ino = 0;  // the directory those checks looked at
    std::vector<std::string> ro, rw, hide, tmpfs, protect, protect_existing;
    std::vector<std::pair<std::string, std::string>> placeholder_content;  // relative path -> text
    bool private_home = false;
    std::string config_dir;   // $XDG_CONFIG_HOME/cordon: read-only inside the jail
    std::string cache_dir;    // $XDG_CACHE_HOME/cordon: read-only inside the jail where it is writable
    std::string private_tmp;  // /tmp/cordon-UID (placeholder pool, lock files): the same
    uint64_t tmpfs_size = 1ULL << 30;
    std::vector<MountRequest> mount_requests;  // bwrap-style primitives, in order
    std::string chdir;                         // working directory inside the jail
    bool chdir_explicit = false;               // --chdir given: failing to enter it is an error

    // Environment after filtering, and what was removed (for --dry-run).
    std::vector<std::string> env;
    std::vector<std::string> env_removed;

    // Limits.
    std::optional<uint64_t> timeout_ms;
    std::vector<Rlimit> rlimits;
    CgroupLimits limits;

    // Security.
    Isolation isolation = Isolation::Auto;
    bool allow_userns = false;
    bool allow_ptrace = false;
    bool new_session = false;
    bool as_pid_1 = false;  // --as-pid-1: the command is the jail's pid 1, no init of cordon's (bubblewrap's)
    std::optional<std::string> argv0;  // --argv0: what the command sees as argv[0] (bubblewrap's)
    std::vector<int> cap_keep;
    std::vector<std::string> cap_keep_names;
    std::string seccomp = "default";
    // The payload checks from inside that each layer is engaged (LayerCheck); with this, a layer
    // that is not is exit 125 and the command is never run.
    bool require_layers = false;
    uint32_t test_layer_fail = 0;  // CORDON_TEST_LAYER_FAIL: layers reported failed (tests only)

    // Command policy (checked while the jail is built, before the command can run).
    bool no_policy = false;
    std::vector<std::string> policies;  // names or paths; empty: "default"
    // Exec-time checks (--exec-checks): every exec inside the jail waits for the supervisor's
    // answer (exec_notify.hpp). What the caller asked; whether the run gets them is
    // Prepared::exec_checks, decided once prepare() has probed the host.
    enum class ExecChecks : unsigned char { Auto, Required, Off } exec_checks = ExecChecks::Auto;
};

// Whether the jail may write the host's PATH (or something at or below it, or a tree that
// holds it) through --rw or a writable bind, apart from the workdir's own bind, however either
// is spelled (symlinks, another mount of the same directory: compared by device and inode). A
// read-only workdir still needs its protected paths where this holds (cordon(1), PROTECTED
// PATHS). Reads the host's file system (src/jail/fs/mount_plan_protect.cpp).
bool written_through_binds(const Spec& s, const std::string& path);

}  // namespace cordon

// --ssh-agent's run time (cordon/ssh_agent_relay.hpp): init's socket, the jail's known_hosts, and
// the supervisor's relay. Like the network filter, the relay has its own threads: the supervisor's
// poll loop never waits on the jail's agent clients or on the caller's agent.
#include "cordon/ssh_agent_relay.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "cordon/bounds.hpp"
#include "cordon/diag.hpp"
#include "cordon/exec_notify.hpp"
#include "cordon/jail.hpp"
#include "cordon/json.hpp"
#include "cordon/ssh_agent.hpp"
#include "served_threads.hpp"

namespace cordon {

namespace {

// A unix socket address for PATH; false if it does not fit.
bool unix_address(const char* path, sockaddr_un& sun) {
    sun = sockaddr_un{};
    sun.sun_family = AF_UNIX;
    if (std::strlen(path) >= sizeof sun.sun_path) return false;
    std::memcpy(sun.sun_path, path, std::strlen(path) + 1);
    return true;
}

}  // namespace

int make_agent_listener(int sync_fd, char* step, size_t step_len) {
    std::snprintf(step, step_len,
                  "make %s for --ssh-agent (the jail's /run must be writable: the default profile's tmpfs)",
                  kJailAgentDir);
    if (::mkdir(kJailAgentDir, 0700) != 0 && errno != EEXIST) return -1;
    struct stat st {};
    if (::lstat(kJailAgentDir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) return -1;
    std::snprintf(step, step_len, "listen on %s for --ssh-agent", kJailAgentSocket);
    sockaddr_un sun{};
    if (!unix_address(kJailAgentSocket, sun)) return -1;
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    (void)::unlink(kJailAgentSocket);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun) != 0 || ::listen(fd, 16) != 0) {
        ::close(fd);
        return -1;
    }
    ChildMsg m{};
    m.type = ChildMsg::AgentListener;
    const bool sent = send_with_fd(sync_fd, &m, sizeof m, fd);
    ::close(fd);
    return sent ? 0 : -1;
}

Result<std::string> jail_known_hosts(const Spec& spec) {
    std::string text =
        "# cordon --ssh-agent: the allowed hosts' keys, from the caller's known_hosts (cordon(1), SSH AGENT)\n";
    for (const SshAgentHost& h : spec.ssh_agent_hosts) {
        const std::string name = h.port == 22 ? h.name : "[" + h.name + "]:" + std::to_string(h.port);
        for (const std::string& blob : h.keys) text += name + " " + ssh_agent::key_text(blob) + "\n";
    }
    // FNV-1a names the file by what it holds: runs with the same hosts share it.
    uint64_t hash = 14695981039346656037ULL;
    for (const unsigned char c : text) hash = (hash ^ c) * 1099511628211ULL;
    char name[48];
    std::snprintf(name, sizeof name, "known_hosts.%016llx", static_cast<unsigned long long>(hash));
    return private_tmp_file(name, text);
}

// --- the supervisor's side ----------------------------------------------------------------------

struct SshAgentRelay::Shared {
    ssh_agent::Policy policy;
    std::string upstream;
    int audit_fd = -1;
    ServedThreads threads;  // the accept thread's and the connections'
    std::mutex mu;          // what follows
    struct Refusal {
        std::string reason;
        uint64_t count = 0;
    };
    std::vector<Refusal> refusals;
    std::map<std::string, size_t> refused;  // reason -> index
    uint64_t refusals_dropped = 0;
    LineBudget lines;
};

namespace {

using Shared = SshAgentRelay::Shared;
constexpr int kAgentReplyTimeoutMs = 120000;  // the caller's agent may ask its user to confirm

double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

const char* request_name(uint8_t type) {
    switch (type) {
        case ssh_agent::kRequestIdentities:
            return "list keys";
        case ssh_agent::kSignRequest:
            return "sign";
        case ssh_agent::kExtension:
            return "extension";
        default:
            return "other";
    }
}

// One request's outcome, for the audit log; a refusal also for stderr and the status JSON.
void record(Shared& sh, uint8_t type, const std::string& host, const std::string& refusal) {
    std::lock_guard lock(sh.mu);
    if (sh.audit_fd >= 0) {
        char t[32];
        std::snprintf(t, sizeof t, "%.6f", unix_now());
        JsonObject o;
        o.add_raw("time", t).add("kind", "ssh-agent").add("request", request_name(type));
        if (!host.empty()) o.add("host", host);
        o.add("decision", refusal.empty() ? "allow" : "deny");
        if (!refusal.empty()) o.add("reason", clip_text(refusal));
        const std::string line = o.str() + "\n";
        (void)write_all(sh.audit_fd, line.data(), line.size());
    }
    if (refusal.empty()) return;
    if (auto it = sh.refused.find(refusal); it != sh.refused.end()) {
        ++sh.refusals[it->second].count;
        return;
    }
    if (sh.refusals.size() >= kMaxDenials) {
        ++sh.refusals_dropped;
        (void)sh.lines.take();
        return;
    }
    sh.refused.emplace(refusal, sh.refusals.size());
    sh.refusals.push_back(Shared::Refusal{clip_text(refusal), 1});
    if (sh.lines.take()) diag::line(diag::Show::Normal, "ssh-agent: refused: {}", sh.refusals.back().reason);
}

// A socket a connection thread waits on, shut down by stop().
using Tracked = ServedThreads::Socket;

bool send_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t w = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        bytes.remove_prefix(static_cast<size_t>(w));
    }
    return true;
}

// The next whole message on FD into MSG (BUF keeps what came after it), of at most MAX bytes
// without its prefix; false at the end, an error, a bad length, or TIMEOUT_MS (-1: none) of
// silence.
bool read_message(int fd, std::string& buf, size_t max, int timeout_ms, std::string& msg) {
    char chunk[16384];
    for (;;) {
        const std::optional<size_t> whole = ssh_agent::frame_length(buf, max);
        if (!whole) return false;
        if (*whole != 0) {
            msg = buf.substr(0, *whole);
            buf.erase(0, *whole);
            return true;
        }
        pollfd p{fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, timeout_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return false;
        const ssize_t r = ::recv(fd, chunk, sizeof chunk, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        buf.append(chunk, static_cast<size_t>(r));
    }
}

// The caller's agent, connected; empty if it cannot be (the jail gets failure answers).
UniqueFd connect_upstream(const std::string& path) {
    sockaddr_un sun{};
    if (!unix_address(path.c_str(), sun)) return {};
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&sun), sizeof sun) != 0) return {};
    return fd;
}

std::string bound_host(const ssh_agent::Connection& conn) {
    return conn.bindings.empty() ? std::string() : conn.bindings.back().host;
}

// One connection of the jail's, request by request, until either side ends it.
void serve(Shared& sh, const Tracked& client) {
    ssh_agent::Connection conn;
    std::optional<Tracked> agent;
    std::string from_jail;
    std::string from_agent;
    std::string msg;
    while (read_message(client.get(), from_jail, ssh_agent::kMaxRequest, -1, msg)) {
        ssh_agent::Verdict v = ssh_agent::judge_request(sh.policy, conn, msg);
        if (!v.forward) {
            record(sh, v.type, bound_host(conn), v.why);
            if (!send_all(client.get(), ssh_agent::failure_message())) return;
            continue;
        }
        if (!agent) {
            UniqueFd up = connect_upstream(sh.upstream);
            if (!up) {
                record(sh, v.type, "", "the caller's agent (SSH_AUTH_SOCK) does not answer");
                if (!send_all(client.get(), ssh_agent::failure_message())) return;
                conn.pending.reset();
                continue;
            }
            agent.emplace(sh.threads, std::move(up));
        }
        std::string reply;
        if (!send_all(agent->get(), msg) ||
            !read_message(agent->get(), from_agent, ssh_agent::kMaxReply, kAgentReplyTimeoutMs, reply)) {
            record(sh, v.type, "", "the caller's agent did not answer");
            (void)send_all(client.get(), ssh_agent::failure_message());
            return;
        }
        std::string why;
        const std::string host =
            v.type == ssh_agent::kExtension && conn.pending ? conn.pending->host : bound_host(conn);
        const std::string answer = ssh_agent::judge_reply(sh.policy, conn, v.type, reply, why);
        record(sh, v.type, host, why);
        if (!send_all(client.get(), answer)) return;
    }
}

void accept_loop(const std::shared_ptr<Shared>& sh, int listener, int wake) {
    pollfd fds[2] = {{listener, POLLIN, 0}, {wake, POLLIN, 0}};
    for (;;) {
        if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
        if (fds[1].revents) return;
        if (!(fds[0].revents & POLLIN)) continue;
        UniqueFd conn(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC));
        if (!conn) {
            // Out of descriptors: the connection stays queued; wait for the end or a while.
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) (void)::poll(&fds[1], 1, 50);
            continue;
        }
        // A jail that opens more connections at once than any client needs (or takes every
        // task its uid may have) gets the extra ones closed, not the supervisor's memory. The
        // accept thread is counted too.
        (void)sh->threads.start(
            [sh, conn = std::move(conn)]() mutable { serve(*sh, Tracked(sh->threads, std::move(conn))); },
            kMaxAgentConnections + 1);
    }
}

}  // namespace

SshAgentRelay::SshAgentRelay(const Spec& spec, int audit_fd) : shared_(std::make_shared<Shared>()) {
    for (const SshAgentHost& h : spec.ssh_agent_hosts) {
        for (const std::string& blob : h.keys) shared_->policy.host_keys.push_back(ssh_agent::HostKey{h.text(), blob});
    }
    shared_->policy.identities = spec.ssh_agent_keys;
    shared_->upstream = spec.ssh_agent_upstream;
    shared_->audit_fd = audit_fd;
}

SshAgentRelay::~SshAgentRelay() {
    (void)stop();
}

void SshAgentRelay::adopt(UniqueFd listener) {
    if (started_ || !listener) return;
    wake_.reset(::eventfd(0, EFD_CLOEXEC));
    if (!wake_) return;
    started_ = true;
    ::fcntl(listener.get(), F_SETFL, ::fcntl(listener.get(), F_GETFL) | O_NONBLOCK);
    auto owned = std::make_shared<std::pair<UniqueFd, UniqueFd>>(std::move(listener),
                                                                 UniqueFd(::fcntl(wake_.get(), F_DUPFD_CLOEXEC, 0)));
    // Without a thread, the listener closes with OWNED, and the jail's clients find no agent.
    (void)shared_->threads.start([sh = shared_, owned] { accept_loop(sh, owned->first.get(), owned->second.get()); });
}

NetRefusals SshAgentRelay::stop() {
    if (!shared_) return {};
    const bool first = shared_->threads.shut_down(wake_ ? wake_.get() : -1);
    shared_->threads.wait(std::chrono::milliseconds(200));
    std::lock_guard lock(shared_->mu);
    if (first && shared_->lines.held() > 0) {
        diag::line(diag::Show::Normal, "ssh-agent: ... and {} more refusals not shown (cordon(1), BOUNDS)",
                   shared_->lines.held());
    }
    NetRefusals out;
    for (const auto& r : shared_->refusals) {
        JsonObject d;
        d.add("kind", "ssh-agent").add("reason", r.reason).add("count", static_cast<int64_t>(r.count));
        out.records.push_back(d.str());
    }
    out.dropped = shared_->refusals_dropped;
    return out;
}

}  // namespace cordon

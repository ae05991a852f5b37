// The network allowlist's run time (cordon/net_proxy.hpp): init's listeners, and the
// supervisor's proxy, forwarders and fake resolver. The supervisor's own poll loop never waits
// on any of this: the filter has a thread that accepts and answers DNS, and a thread per
// connection, which may block (resolving a name, in connect, the byte pipe) without harm.
#include "cordon/net_proxy.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <system_error>
#include <thread>

#include "cordon/bounds.hpp"
#include "cordon/diag.hpp"
#include "cordon/exec_notify.hpp"
#include "cordon/jail.hpp"
#include "cordon/json.hpp"
#include "cordon/net.hpp"
#include "net_filter.hpp"

namespace cordon {

namespace {

int listen_on(int type, uint32_t addr, uint16_t port) {
    const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    const int one = 1;
    (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sin {};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    sin.sin_addr.s_addr = htonl(addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0 ||
        (type == SOCK_STREAM && ::listen(fd, 128) != 0)) {
        const int err = errno;
        ::close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

bool send_listener(int sync_fd, int fd, NetListenerKind kind, uint16_t port, bool last) {
    ChildMsg m{};
    m.type = ChildMsg::NetListener;
    m.status = static_cast<int32_t>((static_cast<uint32_t>(kind) << 16) | port | (last ? kNetLast : 0));
    const bool ok = send_with_fd(sync_fd, &m, sizeof m, fd);
    ::close(fd);
    return ok;
}

}  // namespace

Result<std::string> private_tmp_file(const std::string& name, std::string_view text) {
    const uid_t uid = ::geteuid();
    const std::string dir = "/tmp/cordon-" + std::to_string(uid);
    (void)::mkdir(dir.c_str(), 0700);
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 022) != 0) {
        return make_error(dir, "not a directory of this user's that only it can write");
    }
    const std::string path = dir + "/" + name;
    std::string now(text.size() + 1, '\0');
    UniqueFd cur(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (cur && ::fstat(cur.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == uid &&
        ::read(cur.get(), now.data(), now.size()) == static_cast<ssize_t>(text.size()) &&
        std::string_view(now).substr(0, text.size()) == text) {
        return path;
    }
    const std::string tmp = path + "." + std::to_string(::getpid());
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!fd || !write_all(fd.get(), text.data(), text.size()) || ::fchmod(fd.get(), 0644) != 0 ||
        ::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        (void)::unlink(tmp.c_str());
        return sys_error("write " + path, err);
    }
    return path;
}

Result<std::string> jail_resolv_conf() {
    static constexpr std::string_view kText =
        "# cordon --allow-host: the jail's resolver, which knows only the allowed names (cordon(1), NETWORK)\n"
        "nameserver 127.0.0.1\n"
        "options attempts:2 timeout:2\n";
    return private_tmp_file("resolv.conf", kText);
}

Result<uint16_t> NetFilter::listen_on_host(std::shared_ptr<ProxyAdmissions> admitted) {
    shared_->admitted = std::move(admitted);
    UniqueFd fd(listen_on(SOCK_STREAM, INADDR_LOOPBACK, 0));
    if (!fd) return sys_error("listen on 127.0.0.1 for the network proxy");
    struct sockaddr_in sin {};
    socklen_t len = sizeof sin;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sin), &len) != 0) return sys_error("getsockname");
    const uint16_t port = ntohs(sin.sin_port);
    adopt((static_cast<uint32_t>(NetListenerKind::Proxy) << 16) | port | kNetLast, std::move(fd));
    return port;
}

int make_net_listeners(const Spec& spec, int sync_fd, char* step, size_t step_len) {
    const std::vector<uint16_t> ports = allowed_ports(spec.allow_hosts);
    const uint16_t proxy = proxy_port(spec.allow_hosts);
    int fd = listen_on(SOCK_STREAM, INADDR_LOOPBACK, proxy);
    if (fd < 0 || !send_listener(sync_fd, fd, NetListenerKind::Proxy, proxy, false)) {
        std::snprintf(step, step_len, "listen on 127.0.0.1:%u for the network proxy", proxy);
        return -1;
    }
    fd = listen_on(SOCK_DGRAM, INADDR_LOOPBACK, kDnsPort);
    if (fd < 0 || !send_listener(sync_fd, fd, NetListenerKind::Dns, kDnsPort, ports.empty())) {
        std::snprintf(step, step_len, "bind 127.0.0.1:53 for the jail's resolver");
        return -1;
    }
    for (size_t i = 0; i < ports.size(); ++i) {
        fd = listen_on(SOCK_STREAM, INADDR_ANY, ports[i]);
        if (fd < 0 || !send_listener(sync_fd, fd, NetListenerKind::Forward, ports[i], i + 1 == ports.size())) {
            std::snprintf(step, step_len, "listen on port %u for the network forwarder", ports[i]);
            return -1;
        }
    }
    return 0;
}

// --- the supervisor's side ----------------------------------------------------------------------

namespace {

using Shared = NetFilter::Shared;
using net_filter::open_upstream;
using net_filter::Upstream;
constexpr int kHeadTimeoutMs = 30000;
constexpr int kMaxConnections = 512;
constexpr int kAcceptPauseMs = 50;  // after accept found no descriptor left
// Distinct allowed names the resolver gives addresses to, and remembers for the forwarders
// (each up to 253 bytes, kept twice): the others are answered SERVFAIL.
constexpr size_t kMaxFakeNames = 4096;

double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// One connection's outcome, for the audit log; a refusal also for stderr and the status JSON.
void record(Shared& sh, const std::string& asked, uint16_t port, const char* via, const std::string& refusal) {
    // A DNS name has at most 253 bytes; what the jail asked for may be longer (cordon(1), BOUNDS).
    const std::string host = clip_text(asked, 253);
    std::lock_guard lock(sh.mu);
    if (sh.audit_fd >= 0) {
        char t[32];
        std::snprintf(t, sizeof t, "%.6f", unix_now());
        JsonObject o;
        o.add_raw("time", t).add("kind", "network").add("host", host);
        if (port != 0) o.add("port", static_cast<int64_t>(port));
        o.add("via", via).add("decision", refusal.empty() ? "allow" : "deny");
        if (!refusal.empty()) o.add("reason", clip_text(refusal));
        const std::string line = o.str() + "\n";
        (void)write_all(sh.audit_fd, line.data(), line.size());
    }
    if (refusal.empty()) return;
    const std::string key = port != 0 ? host + ":" + std::to_string(port) : host;
    if (auto it = sh.refused.find(key); it != sh.refused.end()) {
        ++sh.refusals[it->second].count;
        return;
    }
    if (sh.refusals.size() >= kMaxDenials) {
        ++sh.refusals_dropped;
        (void)sh.lines.take();
        return;
    }
    sh.refused.emplace(key, sh.refusals.size());
    sh.refusals.push_back(Shared::Refusal{host, port, via, clip_text(refusal), 1});
    if (sh.lines.take()) diag::line(diag::Show::Normal, "network: refused {} ({})", key, sh.refusals.back().reason);
}

// A connection's socket, shut down by stop().
using Tracked = ServedThreads::Socket;

bool send_all(int fd, const char* p, size_t n) {
    while (n > 0) {
        const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= static_cast<size_t>(w);
    }
    return true;
}

void http_answer(int fd, const char* status, const std::string& body) {
    std::string r = std::string("HTTP/1.1 ") + status +
                    "\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(body.size()) +
                    "\r\nConnection: close\r\n\r\n" + body;
    (void)send_all(fd, r.data(), r.size());
}

// FROM's bytes to TO until FROM's end, which is passed on as a half-close; an error ends both
// directions. Through a pipe with splice (no copy through user space) where the kernel can, else
// read and write.
// The kernel memory one direction can hold is bounded too (the supervisor is outside the jail's
// cgroup): a 256 KiB pipe, and socket buffers of 256 KiB instead of TCP's autotuned 4 MiB and
// more, whatever a peer that stops reading makes pile up (cordon(1), BOUNDS).
constexpr int kTunnelBuffer = 256 * 1024;

void one_way(int from, int to) {
    // The kernel doubles what is asked for, its bookkeeping included.
    const int half = kTunnelBuffer / 2;
    (void)::setsockopt(from, SOL_SOCKET, SO_RCVBUF, &half, sizeof half);
    (void)::setsockopt(to, SOL_SOCKET, SO_SNDBUF, &half, sizeof half);
    int p[2] = {-1, -1};
    bool spliced = ::pipe2(p, O_CLOEXEC) == 0;
    if (spliced) (void)::fcntl(p[1], F_SETPIPE_SZ, kTunnelBuffer);
    std::vector<char> buf;
    for (;;) {
        ssize_t r = -1;
        if (spliced) {
            r = ::splice(from, nullptr, p[1], nullptr, static_cast<size_t>(kTunnelBuffer), SPLICE_F_MOVE);
            if (r < 0 && errno == EINVAL) {
                spliced = false;  // this kernel or socket cannot: copy instead
                continue;
            }
            for (ssize_t left = r; left > 0;) {
                const ssize_t w = ::splice(p[0], nullptr, to, nullptr, static_cast<size_t>(left), SPLICE_F_MOVE);
                if (w <= 0 && errno != EINTR) {
                    r = -1;
                    break;
                }
                if (w > 0) left -= w;
            }
        } else {
            if (buf.empty()) buf.resize(size_t{256} * 1024);
            r = ::recv(from, buf.data(), buf.size(), 0);
            if (r > 0 && !send_all(to, buf.data(), static_cast<size_t>(r))) r = -1;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) {
            ::shutdown(to, SHUT_WR);
            break;
        }
        if (r < 0) {
            ::shutdown(from, SHUT_RDWR);
            ::shutdown(to, SHUT_RDWR);
            break;
        }
    }
    if (p[0] >= 0) {
        ::close(p[0]);
        ::close(p[1]);
    }
}

// Both directions, each in its own thread, until both ends are done. Without Nagle's delay on
// either side: the pipe passes each segment on as it comes, and a small one held back for the
// ACK of the one before (which the far end delays up to 40 ms) would cost every exchange of
// small messages (SSH, a database protocol) that wait where the endpoints' own would not.
void pump(int a, int b) {
    const int one = 1;
    (void)::setsockopt(a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    (void)::setsockopt(b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::thread back;
    try {
        back = std::thread(one_way, b, a);
    } catch (const std::system_error&) {
        return;  // no thread for the way back: the connection ends (accept_loop)
    }
    one_way(a, b);
    back.join();
}

// Read the request head from FD; false if it did not come complete in time.
ParseState read_head(int fd, std::string& buf, ProxyRequest& req, std::string& why) {
    char chunk[4096];
    for (;;) {
        ParseState st = parse_proxy_request(buf, req, why);
        if (st != ParseState::Incomplete) return st;
        struct pollfd p = {fd, POLLIN, 0};
        if (::poll(&p, 1, kHeadTimeoutMs) != 1) return ParseState::Bad;
        const ssize_t r = ::recv(fd, chunk, sizeof chunk, 0);
        if (r <= 0) return ParseState::Bad;
        buf.append(chunk, static_cast<size_t>(r));
    }
}

// A client of the proxy (HTTP_PROXY and friends): CONNECT, or a plain http:// request.
void serve_proxy(Shared& sh, const Tracked& client) {
    std::string buf;
    ProxyRequest req;
    std::string why;
    if (read_head(client.get(), buf, req, why) != ParseState::Done) {
        if (!why.empty()) http_answer(client.get(), "400 Bad Request", "cordon: network: " + why + "\n");
        return;
    }
    Upstream up = open_upstream(sh, req.host, req.port);
    record(sh, req.host, req.port, "proxy", up.refusal);
    if (!up.refusal.empty()) {
        http_answer(
            client.get(), "403 Forbidden",
            "cordon: network: refused " + req.host + ":" + std::to_string(req.port) + " (" + up.refusal + ")\n");
        return;
    }
    if (!up.fd) {
        http_answer(client.get(), "502 Bad Gateway", "cordon: network: " + up.failure + "\n");
        return;
    }
    Tracked server(sh.threads, std::move(up.fd));
    const std::string_view rest = std::string_view(buf).substr(req.head_len);
    if (req.connect) {
        static constexpr char kEstablished[] = "HTTP/1.1 200 Connection established\r\n\r\n";
        if (!send_all(client.get(), kEstablished, sizeof kEstablished - 1)) return;
    } else if (!send_all(server.get(), req.upstream_head.data(), req.upstream_head.size())) {
        return;
    }
    if (!rest.empty() && !send_all(server.get(), rest.data(), rest.size())) return;
    pump(client.get(), server.get());
}

// The name the fake resolver gave the address ADDR, if it gave it.
std::optional<std::string> fake_name(Shared& sh, const sockaddr_in& addr) {
    const auto* b = reinterpret_cast<const uint8_t*>(&addr.sin_addr);
    if (b[0] != kFakeNet[0] || b[1] != kFakeNet[1]) return std::nullopt;
    const uint32_t index = (static_cast<uint32_t>(b[2]) << 8 | b[3]) - 1;
    std::lock_guard lock(sh.mu);
    if (index >= sh.fake_names.size()) return std::nullopt;
    return sh.fake_names[index];
}

// A connection to an allowed port inside the jail (a tool that ignores the proxy variables and
// connects to what the fake resolver told it): forwarded to the name behind the address; or
// one to an address an --allow-host entry names (127.0.0.1:5432, a database on the host's
// loopback): forwarded to that address on the host, as a client without proxy support reaches it.
void serve_forward(Shared& sh, const Tracked& client, uint16_t port) {
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    if (::getsockname(client.get(), reinterpret_cast<sockaddr*>(&local), &len) != 0) return;
    const auto* addr = reinterpret_cast<const sockaddr*>(&local);
    auto name = local.ss_family == AF_INET ? fake_name(sh, reinterpret_cast<const sockaddr_in&>(local)) : std::nullopt;
    if (!name && address_allowed(sh.rules, addr, port)) name = address_text(addr);
    if (!name) {
        // The host's loopback or another refused range, as "localhost" in an entry leads there:
        // only an entry for the address itself opens it.
        const char* range = special_range(addr);
        record(sh, address_text(addr), port, "forward",
               range ? std::string("a ") + range + " address no entry names: allow it with --allow-host " +
                           address_text(addr) + ":" + std::to_string(port)
                     : std::string("not an address the jail's resolver gave out or an entry names"));
        return;
    }
    Upstream up = open_upstream(sh, *name, port);
    record(sh, *name, port, "forward", up.refusal);
    if (!up.fd) return;
    Tracked server(sh.threads, std::move(up.fd));
    pump(client.get(), server.get());
}

// The fake resolver: an allowed name gets an address of kFakeNet/16 of its own (A), no record
// for other types; a name that no entry allows does not exist.
void answer_dns(Shared& sh, int fd) {
    char msg[512];
    sockaddr_storage from{};
    socklen_t flen = sizeof from;
    const ssize_t n = ::recvfrom(fd, msg, sizeof msg, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &flen);
    if (n <= 0) return;
    const std::string_view query(msg, static_cast<size_t>(n));
    auto q = parse_dns_query(query);
    if (!q) return;
    bool allowed = false;
    for (uint16_t p : allowed_ports(sh.rules)) allowed = allowed || name_allowed(sh.rules, q->name, p);
    std::string answer;
    if (!allowed) {
        record(sh, q->name, 0, "dns", "name lookup; not allowed: add --allow-host " + q->name);
        answer = dns_answer(query, *q, 3);
    } else if (q->qtype != kDnsTypeA) {
        answer = dns_answer(query, *q, 0);
    } else {
        std::unique_lock lock(sh.mu);
        uint32_t host = 0xffff;  // none: SERVFAIL
        if (auto it = sh.fake_index.find(q->name); it != sh.fake_index.end()) {
            host = it->second + 1;
        } else if (sh.fake_names.size() < kMaxFakeNames) {
            host = static_cast<uint32_t>(sh.fake_names.size()) + 1;
            sh.fake_index.emplace(q->name, host - 1);
            sh.fake_names.push_back(q->name);
        }
        lock.unlock();
        in_addr a{};
        a.s_addr = htonl((uint32_t{kFakeNet[0]} << 24) | (uint32_t{kFakeNet[1]} << 16) | (host & 0xffff));
        answer = host <= 0xfffe ? dns_answer(query, *q, 0, a) : dns_answer(query, *q, 2);
    }
    (void)::sendto(fd, answer.data(), answer.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), flen);
}

// The connections served at once: kMaxConnections, or fewer where RLIMIT_NOFILE would run out
// first. A connection holds up to six descriptors (two sockets, a pipe each way); 64 stay for
// the rest of the supervisor.
int max_connections() {
    struct rlimit rl {};
    if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return kMaxConnections;
    const long fit = (static_cast<long>(rl.rlim_cur) - 64) / 6;
    return static_cast<int>(std::clamp<long>(fit, 4, kMaxConnections));
}

void serve_connection(Shared& sh, UniqueFd fd, NetListenerKind kind, uint16_t port) {
    const Tracked client(sh.threads, std::move(fd));
    if (kind == NetListenerKind::Proxy)
        serve_proxy(sh, client);
    else
        serve_forward(sh, client, port);
}

// The peer of the accepted CONN is a socket the supervisor connected for the Landlock jail.
bool admitted_peer(ProxyAdmissions& admitted, int conn) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    if (::getpeername(conn, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return false;
    return admitted.take(port_of(peer));
}

void accept_loop(const std::shared_ptr<Shared>& sh, const std::vector<std::pair<uint32_t, int>>& listeners, int wake) {
    std::vector<pollfd> fds;
    fds.reserve(listeners.size() + 1);
    for (const auto& l : listeners) fds.push_back({l.second, POLLIN, 0});
    fds.push_back({wake, POLLIN, 0});
    for (;;) {
        if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return;
        if (fds.back().revents) return;
        for (size_t i = 0; i < listeners.size(); ++i) {
            if (!(fds[i].revents & POLLIN)) continue;
            const auto kind = static_cast<NetListenerKind>((listeners[i].first >> 16) & 0xff);
            const auto port = static_cast<uint16_t>(listeners[i].first & 0xffff);
            if (kind == NetListenerKind::Dns) {
                answer_dns(*sh, fds[i].fd);
                continue;
            }
            UniqueFd conn(::accept4(fds[i].fd, nullptr, nullptr, SOCK_CLOEXEC));
            if (!conn && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
                // The connection stays queued and the listener readable: wait for descriptors
                // to come free (or the end) instead of spinning on it.
                (void)::poll(&fds.back(), 1, kAcceptPauseMs);
                break;
            }
            if (!conn) continue;
            if (sh->admitted && !admitted_peer(*sh->admitted, conn.get())) continue;  // not the jail's
            // Two threads a connection: a jail that opens more at once than any tool needs (or
            // takes every task its uid may have) gets the extra ones closed, not the
            // supervisor's memory.
            (void)sh->threads.start([sh, conn = std::move(conn), kind,
                                     port]() mutable { serve_connection(*sh, std::move(conn), kind, port); },
                                    sh->max_connections);
        }
    }
}

}  // namespace

NetFilter::NetFilter(const Spec& spec, int audit_fd) : shared_(std::make_shared<Shared>()) {
    shared_->rules = spec.allow_hosts;
    for (const auto& [name, addr] : spec.test_resolve) shared_->test_resolve[name] = addr;
    if (!spec.test_resolv_conf.empty()) shared_->resolv_conf = spec.test_resolv_conf;
    shared_->audit_fd = audit_fd;
    shared_->max_connections = max_connections();
}

NetFilter::~NetFilter() {
    (void)stop();
}

void NetFilter::adopt(uint32_t tag, UniqueFd fd) {
    if (started_ || !fd) return;
    listeners_.emplace_back(tag & ~kNetLast, std::move(fd));
    if (tag & kNetLast) start();
}

void NetFilter::start() {
    wake_.reset(::eventfd(0, EFD_CLOEXEC));
    if (!wake_) return;
    started_ = true;
    std::vector<std::pair<uint32_t, int>> fds;
    for (auto& [tag, fd] : listeners_) {
        ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) | O_NONBLOCK);
        fds.emplace_back(tag, fd.get());
    }
    // The accept thread holds the listeners (moved into it) and the filter's state.
    auto owned = std::make_shared<std::vector<UniqueFd>>();
    for (auto& l : listeners_) owned->push_back(std::move(l.second));
    listeners_.clear();
    owned->emplace_back(::fcntl(wake_.get(), F_DUPFD_CLOEXEC, 0));
    // Without a thread, the listeners close with OWNED, and the jail's connections are refused.
    (void)shared_->threads.start([sh = shared_, fds, owned] { accept_loop(sh, fds, owned->back().get()); });
}

NetRefusals NetFilter::stop() {
    if (!shared_) return {};
    const bool first = shared_->threads.shut_down(wake_ ? wake_.get() : -1);
    shared_->threads.wait(std::chrono::milliseconds(200));
    std::lock_guard lock(shared_->mu);
    if (first && shared_->lines.held() > 0) {
        diag::line(diag::Show::Normal, "network: ... and {} more refusals not shown (cordon(1), BOUNDS)",
                   shared_->lines.held());
    }
    NetRefusals out;
    for (const auto& r : shared_->refusals) {
        JsonObject d;
        d.add("kind", "network").add("host", r.host);
        if (r.port != 0) d.add("port", static_cast<int64_t>(r.port));
        d.add("via", r.via).add("reason", r.reason).add("count", static_cast<int64_t>(r.count));
        out.records.push_back(d.str());
    }
    out.dropped = shared_->refusals_dropped;
    return out;
}

}  // namespace cordon

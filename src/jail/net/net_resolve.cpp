// The supervisor's resolver (cordon/net.hpp): /etc/hosts, then each name server of
// /etc/resolv.conf in turn, A and AAAA asked at once over UDP, over TCP when an answer is
// truncated. A static executable cannot load the C library's NSS modules (getaddrinfo would
// load another glibc's, or none), so the proxy resolves this way; a name only a directory
// service or mDNS knows is not found (cordon(1), NETWORK).
#include <fcntl.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "cordon/fd.hpp"
#include "cordon/net.hpp"
#include "cordon/paths.hpp"

namespace cordon {

namespace {

constexpr size_t kMaxFile = size_t{1} << 20;
constexpr size_t kMaxMessage = 65535;

std::string read_config(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    std::string out;
    if (!fd) return out;
    char buf[8192];
    for (ssize_t n = 0; out.size() < kMaxFile && (n = ::read(fd.get(), buf, sizeof buf)) > 0;)
        out.append(buf, static_cast<size_t>(n));
    return out;
}

socklen_t length_of(const sockaddr_storage& ss) {
    return ss.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
}

uint16_t random_id() {
    uint16_t id = 0;
    if (::getrandom(&id, sizeof id, 0) != sizeof id) id = static_cast<uint16_t>(::getpid());
    return id;
}

struct Asked {
    uint16_t qtype;
    uint16_t id;
    std::string query;
    std::optional<DnsReply> reply;
};

// One exchange over TCP with SERVER: the two-byte length, then the message, both ways.
std::optional<DnsReply> ask_tcp(const sockaddr_storage& server, const Asked& a, std::string_view name, uint16_t port,
                                int timeout_ms) {
    UniqueFd fd(::socket(server.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) return std::nullopt;
    struct timeval tv {
        timeout_ms / 1000, static_cast<suseconds_t>(timeout_ms % 1000) * 1000
    };
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&server), length_of(server)) != 0) return std::nullopt;
    std::string framed{static_cast<char>(a.query.size() >> 8), static_cast<char>(a.query.size() & 0xff)};
    framed += a.query;
    if (!write_all(fd.get(), framed.data(), framed.size())) return std::nullopt;
    std::string in;
    char buf[4096];
    auto framed_size = [&in] {
        return size_t{2} + ((size_t{static_cast<uint8_t>(in[0])} << 8) | static_cast<uint8_t>(in[1]));
    };
    while (in.size() < 2 || in.size() < framed_size()) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n <= 0 || in.size() > kMaxMessage + 2) return std::nullopt;
        in.append(buf, static_cast<size_t>(n));
    }
    DnsReply r = parse_dns_reply(std::string_view(in).substr(2), a.id, name, a.qtype, port);
    if (!r.ok) return std::nullopt;
    return r;
}

// A and AAAA from SERVER over UDP within TIMEOUT_MS; each that came back truncated again over TCP.
void ask(const sockaddr_storage& server, std::vector<Asked>& asked, std::string_view name, uint16_t port,
         int timeout_ms) {
    UniqueFd fd(::socket(server.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd || ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&server), length_of(server)) != 0) return;
    for (const auto& a : asked) (void)::send(fd.get(), a.query.data(), a.query.size(), MSG_NOSIGNAL);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    std::string buf(kMaxMessage, '\0');
    for (;;) {
        const bool all = std::all_of(asked.begin(), asked.end(), [](const Asked& a) { return a.reply.has_value(); });
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (all || left.count() <= 0) break;
        struct pollfd p = {fd.get(), POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
        const ssize_t n = ::recv(fd.get(), buf.data(), buf.size(), 0);
        if (n <= 0) continue;  // ECONNREFUSED from an ICMP error: the deadline ends it
        const std::string_view msg(buf.data(), static_cast<size_t>(n));
        for (auto& a : asked) {
            if (a.reply) continue;
            DnsReply r = parse_dns_reply(msg, a.id, name, a.qtype, port);
            if (!r.ok) continue;
            if (r.truncated) {
                auto whole = ask_tcp(server, a, name, port, timeout_ms);
                if (whole) r = std::move(*whole);
            }
            a.reply = std::move(r);
        }
    }
}

}  // namespace

std::vector<sockaddr_storage> ask_name_servers(const ResolvConf& rc, std::string_view name, uint16_t port) {
    std::vector<Asked> asked;
    for (uint16_t qtype : {kDnsTypeA, kDnsTypeAAAA}) {
        const uint16_t id = random_id();
        asked.push_back(Asked{qtype, id, dns_query(id, name, qtype), std::nullopt});
    }
    for (int attempt = 0; attempt < rc.attempts; ++attempt) {
        for (const auto& server : rc.servers) {
            for (auto& a : asked) a.reply.reset();
            ask(server, asked, name, port, rc.timeout_s * 1000);
            std::vector<sockaddr_storage> out;
            bool answered = false;
            for (const auto& a : asked) {
                if (!a.reply || (a.reply->rcode != 0 && a.reply->rcode != 3)) continue;
                answered = true;  // NOERROR or NXDOMAIN: this server has spoken for the name
                out.insert(out.end(), a.reply->addresses.begin(), a.reply->addresses.end());
            }
            if (answered) return out;
        }
    }
    return {};
}

std::vector<sockaddr_storage> resolve_name(const std::string& host, uint16_t port, const std::string& resolv_conf) {
    const auto name = normalize_host_name(host);
    if (!name) return {};
    auto from_hosts = hosts_addresses(read_config("/etc/hosts"), *name, port);
    if (!from_hosts.empty()) return from_hosts;
    return ask_name_servers(parse_resolv_conf(read_config(resolv_conf)), *name, port);
}

}  // namespace cordon

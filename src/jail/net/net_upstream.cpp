// The network filter's way out (net_filter.hpp): one request's host checked against the
// allowlist, resolved, each address checked against the refused ranges, then connected.
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "cordon/net.hpp"
#include "net_filter.hpp"

namespace cordon::net_filter {

namespace {

using Shared = NetFilter::Shared;
constexpr int kConnectTimeoutMs = 10000;

// Connect to ADDR within the timeout; -1 on failure (errno set).
int connect_to(const struct sockaddr* addr, socklen_t len) {
    UniqueFd fd(::socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) return -1;
    if (::connect(fd.get(), addr, len) != 0) {
        if (errno != EINPROGRESS) return -1;
        struct pollfd p = {fd.get(), POLLOUT, 0};
        if (::poll(&p, 1, kConnectTimeoutMs) != 1) {
            errno = ETIMEDOUT;
            return -1;
        }
        int err = 0;
        socklen_t elen = sizeof err;
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &elen);
        if (err != 0) {
            errno = err;
            return -1;
        }
    }
    const int flags = ::fcntl(fd.get(), F_GETFL);
    ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
    return fd.release();
}

socklen_t addr_len(const sockaddr_storage& ss) {
    return ss.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
}

// HOST's addresses: a test mapping's (CORDON_TEST_RESOLVE), else the resolver's.
std::vector<sockaddr_storage> resolve(const Shared& sh, const std::string& host, uint16_t port) {
    if (auto it = sh.test_resolve.find(host); it != sh.test_resolve.end()) {
        auto mapped = address_literal(it->second, port);
        return mapped ? std::vector<sockaddr_storage>{*mapped} : std::vector<sockaddr_storage>{};
    }
    return resolve_name(host, port, sh.resolv_conf);
}

}  // namespace

// The checks, in order: the name against the entries (before anything is resolved), then each
// address it resolves to against the refused ranges, then the connection.
Upstream open_upstream(const Shared& sh, const std::string& host, uint16_t port) {
    Upstream u;
    std::vector<sockaddr_storage> addrs;
    if (auto lit = address_literal(host, port)) {  // a name entry cannot match it
        if (!address_allowed(sh.rules, reinterpret_cast<sockaddr*>(&*lit), port)) {
            u.refusal = "the address is not allowed: add --allow-host " + host + ":" + std::to_string(port);
            return u;
        }
        addrs.push_back(*lit);
    } else {
        if (!name_allowed(sh.rules, host, port)) {
            u.refusal =
                "not allowed: add --allow-host " + host + (port == 80 || port == 443 ? "" : ":" + std::to_string(port));
            return u;
        }
        addrs = resolve(sh, host, port);
        if (addrs.empty()) {
            u.failure = host + " does not resolve";
            return u;
        }
    }
    int err = 0;
    for (auto& a : addrs) {
        const auto* sa = reinterpret_cast<const sockaddr*>(&a);
        if (const char* range = special_range(sa); range && !address_allowed(sh.rules, sa, port)) {
            u.refusal = "resolves to " + address_text(sa) + ", a " + range + " address: allow it with --allow-host " +
                        address_text(sa) + ":" + std::to_string(port);
            continue;
        }
        u.fd.reset(connect_to(sa, addr_len(a)));
        if (u.fd) {
            u.refusal.clear();
            return u;
        }
        err = errno;
    }
    if (u.refusal.empty())
        u.failure = "cannot connect to " + host + ":" + std::to_string(port) + ": " + std::strerror(err);
    return u;
}

}  // namespace cordon::net_filter

#include "cordon/proxy_connect.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cordon/exec_notify.hpp"
#include "cordon/fd.hpp"

namespace cordon {

namespace {

// How long the supervisor waits for its own listener to take a connection (a full backlog):
// the poll loop that answers the jail's calls waits meanwhile, so it is short.
constexpr int kConnectWaitMs = 5000;

// ADDR (LEN bytes, the jail's copy read into ours) names the proxy: 127.0.0.1, ::1 or
// ::ffff:127.0.0.1, at the port HTTP(S)_PROXY gives.
bool names_proxy(const sockaddr_storage& addr, socklen_t len, uint16_t port) {
    if (addr.ss_family == AF_INET && len >= sizeof(sockaddr_in)) {
        const auto& in = reinterpret_cast<const sockaddr_in&>(addr);
        return ntohs(in.sin_port) == port && ntohl(in.sin_addr.s_addr) == INADDR_LOOPBACK;
    }
    if (addr.ss_family == AF_INET6 && len >= sizeof(sockaddr_in6)) {
        const auto& in6 = reinterpret_cast<const sockaddr_in6&>(addr);
        if (ntohs(in6.sin6_port) != port) return false;
        if (IN6_IS_ADDR_LOOPBACK(&in6.sin6_addr)) return true;
        return IN6_IS_ADDR_V4MAPPED(&in6.sin6_addr) &&
               std::memcmp(&in6.sin6_addr.s6_addr[12], "\x7f\x00\x00\x01", 4) == 0;
    }
    return false;
}

// Connect SOCK (the jail's, of DOMAIN) to the supervisor's listener at PORT, as the jail would
// see it connect: 0, or the errno (EINPROGRESS where the jail's socket is non-blocking).
int connect_to_listener(int sock, int domain, uint16_t port) {
    sockaddr_storage to{};
    socklen_t len = 0;
    if (domain == AF_INET) {
        auto& in = reinterpret_cast<sockaddr_in&>(to);
        in.sin_family = AF_INET;
        in.sin_port = htons(port);
        in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof in;
    } else {
        auto& in6 = reinterpret_cast<sockaddr_in6&>(to);
        in6.sin6_family = AF_INET6;
        in6.sin6_port = htons(port);
        in6.sin6_addr.s6_addr[10] = 0xff;
        in6.sin6_addr.s6_addr[11] = 0xff;
        std::memcpy(&in6.sin6_addr.s6_addr[12], "\x7f\x00\x00\x01", 4);
        len = sizeof in6;
    }
    const int flags = ::fcntl(sock, F_GETFL);
    if (flags < 0) return errno;
    const bool blocking = (flags & O_NONBLOCK) == 0;
    // The jail's blocking socket is connected without blocking the supervisor: its flags are
    // the jail's too (one open file), so they are set back at once.
    if (blocking) (void)::fcntl(sock, F_SETFL, flags | O_NONBLOCK);
    int err = ::connect(sock, reinterpret_cast<const sockaddr*>(&to), len) == 0 ? 0 : errno;
    if (blocking) (void)::fcntl(sock, F_SETFL, flags);
    if (err != EINPROGRESS || !blocking) return err;
    pollfd p{sock, POLLOUT, 0};
    if (retry_eintr([&] { return ::poll(&p, 1, kConnectWaitMs); }) != 1) return ETIMEDOUT;
    socklen_t elen = sizeof err;
    if (::getsockopt(sock, SOL_SOCKET, SO_ERROR, &err, &elen) != 0) return errno;
    return err;
}

}  // namespace

int answer_connect(pid_t pid, const seccomp_data& data, const ProxyRoute& route,
                   const std::function<bool()>& still_waiting) {
    if (!route.active()) return EACCES;
    sockaddr_storage addr{};
    const uint64_t len = data.args[2];
    if (len < sizeof(sa_family_t) || len > sizeof addr) return EACCES;
    const ssize_t got = read_mem(pid, data.args[1], reinterpret_cast<char*>(&addr), static_cast<size_t>(len));
    if (got != static_cast<ssize_t>(len)) return got < 0 && errno == EFAULT ? EFAULT : EACCES;
    if (!names_proxy(addr, static_cast<socklen_t>(len), route.advertised)) return EACCES;
    const UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!pidfd) return EACCES;
    const UniqueFd sock(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), static_cast<int>(data.args[0]), 0)));
    if (!sock) return errno == EBADF ? EBADF : EACCES;
    // The socket taken is the caller's only if the call still waits: its pid was not reused.
    if (!still_waiting()) return EACCES;
    int domain = 0, type = 0;
    socklen_t olen = sizeof domain;
    if (::getsockopt(sock.get(), SOL_SOCKET, SO_DOMAIN, &domain, &olen) != 0) return ENOTSOCK;
    olen = sizeof type;
    if (::getsockopt(sock.get(), SOL_SOCKET, SO_TYPE, &type, &olen) != 0) return ENOTSOCK;
    if ((domain != AF_INET && domain != AF_INET6) || type != SOCK_STREAM) return EACCES;
    if (domain == AF_INET && addr.ss_family != AF_INET) return EAFNOSUPPORT;
    return connect_to_listener(sock.get(), domain, route.real);
}

}  // namespace cordon

#include "cordon/proxy_connect.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cordon/exec_notify.hpp"
#include "cordon/fd.hpp"

namespace cordon {

namespace {

// How long the supervisor waits for the handshake with its own listener, for a blocking
// socket: the poll loop that answers the jail's calls waits meanwhile, and the jail can make a
// handshake never end (a TCP_MD5SIG key on its socket, which the listener drops), so it is
// short. A loopback handshake takes microseconds; one still going on after it is answered as
// done, and the kernel completes it (or fails the socket's first send).
constexpr int kConnectWaitMs = 2;

// PIDFD_THREAD (Linux 6.9): a pidfd for a thread, whose descriptor table may be its own.
constexpr unsigned kPidfdThread = O_EXCL;

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

// 127.0.0.1 at PORT for a socket of DOMAIN (v4-mapped for AF_INET6), into TO; its length.
socklen_t loopback(int domain, uint16_t port, sockaddr_storage& to) {
    to = {};
    if (domain == AF_INET) {
        auto& in = reinterpret_cast<sockaddr_in&>(to);
        in.sin_family = AF_INET;
        in.sin_port = htons(port);
        in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return sizeof in;
    }
    auto& in6 = reinterpret_cast<sockaddr_in6&>(to);
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(port);
    in6.sin6_addr.s6_addr[10] = 0xff;
    in6.sin6_addr.s6_addr[11] = 0xff;
    std::memcpy(&in6.sin6_addr.s6_addr[12], "\x7f\x00\x00\x01", 4);
    return sizeof in6;
}

// Connect SOCK (the jail's, of DOMAIN) to the supervisor's listener at PORT, as the jail would
// see it connect: 0, or the errno (EINPROGRESS where the jail's socket is non-blocking). Its
// local port is bound first and admitted, so that the proxy knows the connection for the jail's
// when it accepts it (the handshake may end before connect returns).
int connect_to_listener(int sock, int domain, uint16_t port, ProxyAdmissions& admitted) {
    sockaddr_storage to{};
    socklen_t len = loopback(domain, 0, to);
    if (::bind(sock, reinterpret_cast<const sockaddr*>(&to), len) != 0) return errno == EINVAL ? EISCONN : errno;
    sockaddr_storage local{};
    socklen_t local_len = sizeof local;
    if (::getsockname(sock, reinterpret_cast<sockaddr*>(&local), &local_len) != 0) return errno;
    const uint16_t local_port = port_of(local);
    if (!admitted.add(local_port)) return EAGAIN;
    len = loopback(domain, port, to);
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
    if (retry_eintr([&] { return ::poll(&p, 1, kConnectWaitMs); }) != 1) return 0;  // under way
    socklen_t elen = sizeof err;
    if (::getsockopt(sock, SOL_SOCKET, SO_ERROR, &err, &elen) != 0) return errno;
    return err;
}

// The socket FD of thread TID: through a pidfd for the thread itself where the kernel has them,
// else through its thread group's, checked to be the same socket (a thread may have a
// descriptor table of its own: unshare(CLONE_FILES)).
UniqueFd take_socket(pid_t tid, int fd) {
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, tid, kPidfdThread)));
    if (pidfd) return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(tid));
    UniqueFd status(::open(path, O_RDONLY | O_CLOEXEC));
    char buf[1024];
    const ssize_t n = status ? ::read(status.get(), buf, sizeof buf - 1) : -1;
    if (n <= 0) return {};
    buf[n] = '\0';
    const char* tgid_at = std::strstr(buf, "\nTgid:");
    if (tgid_at == nullptr) return {};
    const pid_t tgid = static_cast<pid_t>(std::strtol(tgid_at + 6, nullptr, 10));
    pidfd = UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, tgid, 0)));
    if (!pidfd) return {};
    UniqueFd sock(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
    struct stat st {};
    std::snprintf(path, sizeof path, "/proc/%d/task/%d/fd/%d", static_cast<int>(tgid), static_cast<int>(tid), fd);
    char link[64] = {};
    if (!sock || ::fstat(sock.get(), &st) != 0 || ::readlink(path, link, sizeof link - 1) <= 0) return {};
    const std::string expect = "socket:[" + std::to_string(st.st_ino) + "]";
    return expect == link ? std::move(sock) : UniqueFd();
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
    const UniqueFd sock = take_socket(pid, static_cast<int>(data.args[0]));
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
    return connect_to_listener(sock.get(), domain, route.real, *route.admitted);
}

}  // namespace cordon

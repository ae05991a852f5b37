// The Landlock jail's network allowlist (cordon(1), ISOLATION). That jail has no network
// namespace of its own, so the proxy that serves --allow-host (net_proxy.hpp) listens on the
// host's loopback, and the jail may not connect anywhere itself: Landlock grants no TCP port
// (ABI 4 and later), and every connect(2) goes to the supervisor through the jail's seccomp
// listener, which never lets one through. A connect to the address the jail's HTTP(S)_PROXY
// names (127.0.0.1 at the proxy's port) is done by the supervisor: it takes the process's
// socket (pidfd_getfd(2)) and connects it to its own listener, so what is connected is decided
// on the supervisor's copy of the address, not on the jail's memory, which could change after
// a check. Every other connect fails with EACCES: proxy-unaware clients are refused.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <arpa/inet.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>

namespace cordon {

// The local ports of the jail's sockets that the supervisor connected to its proxy, not yet
// accepted: the proxy serves those only, not another local program that finds its port.
class ProxyAdmissions {
public:
    static constexpr size_t kMax = 4096;  // connections under way at once
    bool add(uint16_t port) {
        std::lock_guard lock(mu_);
        if (ports_.size() >= kMax) return false;
        ports_.insert(port);
        return true;
    }
    bool take(uint16_t port) {
        std::lock_guard lock(mu_);
        const auto it = ports_.find(port);
        if (it == ports_.end()) return false;
        ports_.erase(it);
        return true;
    }

private:
    std::mutex mu_;
    std::multiset<uint16_t> ports_;
};

// The port of an AF_INET or AF_INET6 address, in host order.
inline uint16_t port_of(const sockaddr_storage& addr) {
    return ntohs(addr.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in&>(addr).sin_port
                                           : reinterpret_cast<const sockaddr_in6&>(addr).sin6_port);
}

struct ProxyRoute {
    uint16_t advertised = 0;  // the port HTTP(S)_PROXY names in the jail
    uint16_t real = 0;        // the supervisor's listener on the host's 127.0.0.1
    std::shared_ptr<ProxyAdmissions> admitted;
    [[nodiscard]] bool active() const { return real != 0 && admitted != nullptr; }
};

// The answer to a notified connect(2) of process PID with DATA: 0 when the supervisor
// connected the process's socket to the proxy itself, else the errno the call returns
// (EINPROGRESS for a non-blocking socket, as the kernel's own). STILL_WAITING: whether the
// notification is still the call read (its pid not reused), asked once the socket is taken.
int answer_connect(pid_t pid, const seccomp_data& data, const ProxyRoute& route,
                   const std::function<bool()>& still_waiting);

}  // namespace cordon

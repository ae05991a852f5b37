// The network namespace's loopback interface brought up (net.hpp): the one part of the network
// code that talks to the kernel's interfaces, shared by the jail and bwrap mode.
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstring>

#include "cordon/fd.hpp"
#include "cordon/net.hpp"

namespace cordon {

int bring_loopback_up() {
    UniqueFd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!s) return -1;
    struct ifreq ifr {};
    std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    if (::ioctl(s.get(), SIOCGIFFLAGS, &ifr) != 0) return -1;
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    return ::ioctl(s.get(), SIOCSIFFLAGS, &ifr);
}

}  // namespace cordon

// The payload's probes of its own layers (layer_probe.hpp).
#include "layer_probe.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace cordon::init {

namespace {

// "NAME:\t<hex>" in BUF; false when the line is missing.
bool hex_field(const char* buf, const char* name, uint64_t& out) {
    const char* at = std::strstr(buf, name);
    if (!at) return false;
    at += std::strlen(name);
    while (*at == ' ' || *at == '\t') ++at;
    uint64_t v = 0;
    int digits = 0;
    for (;; ++at, ++digits) {
        const char ch = *at;
        const int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
        if (d < 0) break;
        v = v << 4 | static_cast<uint64_t>(d);
    }
    out = v;
    return digits > 0;
}

uint64_t mask_of(const uint32_t (&halves)[2]) {
    return static_cast<uint64_t>(halves[1]) << 32 | halves[0];
}

// The same, a system call per capability: where /proc/self/status does not say.
bool only_kept_by_prctl(const struct __user_cap_data_struct (&kept)[2], bool bounding_dropped) {
    for (unsigned cap = 0; cap < 64; ++cap) {
        const bool is_kept = ((kept[cap / 32].permitted >> (cap % 32)) & 1U) != 0;
        const int bounding = ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
        if (bounding < 0) break;  // past the last capability this kernel knows
        if (is_kept) continue;
        if ((bounding != 0 && bounding_dropped) || ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) != 0)
            return false;
    }
    return true;
}

}  // namespace

SelfStatus read_self_status() {
    SelfStatus st;
    const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return st;
    size_t len = 0;
    for (ssize_t n = 1; n > 0 && len < sizeof st.text - 1; len += static_cast<size_t>(n)) {
        n = ::read(fd, st.text + len, sizeof st.text - 1 - len);
        if (n < 0) len = 0;
        if (n <= 0) break;
    }
    ::close(fd);
    st.text[len] = '\0';
    st.read = len > 0;
    return st;
}

bool only_kept_capabilities(const struct __user_cap_data_struct (&kept)[2], bool bounding_dropped,
                            const SelfStatus& status) {
    struct __user_cap_header_struct header {
        _LINUX_CAPABILITY_VERSION_3, 0
    };
    struct __user_cap_data_struct have[2]{};
    if (::syscall(SYS_capget, &header, have) != 0) return false;
    for (int i = 0; i < 2; ++i) {
        if (have[i].effective != kept[i].effective || have[i].permitted != kept[i].permitted ||
            have[i].inheritable != kept[i].inheritable)
            return false;
    }
    // The bounding and ambient sets: one read of the status the layer check reads anyway, not
    // two prctl calls per capability in the payload's path to the command.
    uint64_t bounding = 0, ambient = 0;
    if (!status.read || !hex_field(status.text, "\nCapBnd:", bounding) || !hex_field(status.text, "\nCapAmb:", ambient))
        return only_kept_by_prctl(kept, bounding_dropped);
    const uint32_t kept_halves[2] = {kept[0].permitted, kept[1].permitted};
    const uint64_t not_kept = ~mask_of(kept_halves);
    return !((bounding & not_kept) != 0 && bounding_dropped) && (ambient & not_kept) == 0;
}

bool route_out(int family) {
    const int fd = ::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    struct sockaddr_in v4 {};
    struct sockaddr_in6 v6 {};
    v4.sin_family = AF_INET;
    v4.sin_port = htons(9);
    v4.sin_addr.s_addr = htonl(0xC0000201);
    v6.sin6_family = AF_INET6;
    v6.sin6_port = htons(9);
    v6.sin6_addr.s6_addr[0] = 0x20;
    v6.sin6_addr.s6_addr[1] = 0x01;
    v6.sin6_addr.s6_addr[2] = 0x0d;
    v6.sin6_addr.s6_addr[3] = 0xb8;
    v6.sin6_addr.s6_addr[15] = 1;
    const int r = family == AF_INET ? ::connect(fd, reinterpret_cast<const sockaddr*>(&v4), sizeof v4)
                                    : ::connect(fd, reinterpret_cast<const sockaddr*>(&v6), sizeof v6);
    ::close(fd);
    return r == 0;
}

uint32_t seccomp_filters(const SelfStatus& status) {
    if (!status.read) return 0;
    const char* at = std::strstr(status.text, "\nSeccomp_filters:");
    if (!at) return 0;
    at += std::strlen("\nSeccomp_filters:");
    while (*at == ' ' || *at == '\t') ++at;
    uint32_t count = 0;
    for (; *at >= '0' && *at <= '9'; ++at) count = count * 10 + static_cast<uint32_t>(*at - '0');
    return count;
}

}  // namespace cordon::init

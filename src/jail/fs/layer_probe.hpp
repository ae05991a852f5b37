// The payload's probes of its own layers (cordon(1), LAYERS), for check_layers (child.cpp): each
// asks the kernel what the process it runs in has. System calls only, no allocation: they run in
// the payload, which shares init's memory until it execs.
#pragma once

#include <sys/capability.h>

#include <cstdint>

namespace cordon::init {

// /proc/self/status as read once for the checks below (read: false where /proc does not say).
struct SelfStatus {
    bool read = false;
    char text[8192];
};
SelfStatus read_self_status();

// Only the KEPT capabilities, in every set: effective, permitted and inheritable as capset made
// them, and none other in the ambient set, nor in the bounding set if BOUNDING_DROPPED. The
// bounding and ambient sets from STATUS, or a prctl per capability where it does not say.
bool only_kept_capabilities(const struct __user_cap_data_struct (&kept)[2], bool bounding_dropped,
                            const SelfStatus& status);

// Whether FAMILY has a route to a documentation address (192.0.2.1, 2001:db8::1): a UDP
// connect only looks the route up, and sends nothing.
bool route_out(int family);

// The "Seccomp_filters:" count of STATUS (0 when /proc does not say).
uint32_t seccomp_filters(const SelfStatus& status);

}  // namespace cordon::init

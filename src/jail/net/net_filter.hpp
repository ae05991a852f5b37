// The network filter's inner parts (cordon/net_proxy.hpp), shared by its sources: the state its
// threads share (net_proxy.cpp), and the checks and the connection out of one request
// (net_upstream.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "cordon/bounds.hpp"
#include "cordon/fd.hpp"
#include "cordon/net_proxy.hpp"
#include "served_threads.hpp"

namespace cordon {

struct NetFilter::Shared {
    std::vector<AllowHost> rules;
    std::map<std::string, std::string> test_resolve;
    std::string resolv_conf = "/etc/resolv.conf";  // CORDON_TEST_RESOLV_CONF in tests
    int audit_fd = -1;
    int max_connections = 0;  // max_connections(), when the filter was made
    // The Landlock jail's: the proxy serves the connections the supervisor made for the jail only.
    std::shared_ptr<ProxyAdmissions> admitted;

    ServedThreads threads;  // the accept thread's and the connections'
    std::mutex mu;          // what follows
    // The refusals: one per host and port, the first kMaxDenials of them, the rest counted.
    struct Refusal {
        std::string host;
        uint16_t port = 0;
        std::string via, reason;
        uint64_t count = 0;
    };
    std::vector<Refusal> refusals;
    std::map<std::string, size_t> refused;  // "host[:port]" -> its index in refusals
    uint64_t refusals_dropped = 0;
    LineBudget lines;                     // stderr's, one line per refusal kept
    std::vector<std::string> fake_names;  // kFakeNet + index + 1 -> name, at most kMaxFakeNames
    std::map<std::string, uint32_t> fake_index;
};

namespace net_filter {

struct Upstream {
    UniqueFd fd;
    std::string refusal;  // why the filter refused it (403)
    std::string failure;  // why it could not be reached (502)
};

// The connection out for HOST:PORT once the filter's checks allow it (net_upstream.cpp).
Upstream open_upstream(const NetFilter::Shared& sh, const std::string& host, uint16_t port);

}  // namespace net_filter

}  // namespace cordon

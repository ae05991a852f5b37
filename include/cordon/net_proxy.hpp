// The network allowlist at run time (SPEC §6b, cordon(1) NETWORK). The jail keeps its own
// network namespace; its init, before it drops its capabilities, binds the listening sockets
// there (make_net_listeners) and hands them to the supervisor over the sync socket. A socket
// keeps the namespace it was made in: the supervisor, in the host's, accepts the jail's
// connections on them and makes the outbound ones itself, after the checks of cordon/net.hpp.
// Nothing of the filter runs inside the jail.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.hpp"
#include "cordon/fd.hpp"
#include "cordon/proxy_connect.hpp"
#include "cordon/spec.hpp"

namespace cordon {

// What a handed-over listener is, in ChildMsg::status: kind << 16 | port, kNetLast on the last.
enum class NetListenerKind : uint32_t { Proxy = 1, Dns = 2, Forward = 3 };
inline constexpr uint32_t kNetLast = 1U << 31;

// A file of cordon's in /tmp/cordon-UID (the directory made if missing, refused unless it is this
// user's alone): NAME holding TEXT, written (atomically, by rename) unless it already holds it;
// its path. Files the jail is shown read-only (the resolver's, the SSH agent's known_hosts).
Result<std::string> private_tmp_file(const std::string& name, std::string_view text);

// The jail's /etc/resolv.conf under --allow-host, which names the fake resolver: a file in
// /tmp/cordon-UID, written when it is missing or different; its path.
Result<std::string> jail_resolv_conf();

// init, in the jail's network namespace: the proxy's listener on 127.0.0.1, the fake
// resolver's UDP socket on 127.0.0.1:53 and a forwarder on every allowed port, each sent to
// the supervisor over SYNC_FD as ChildMsg::NetListener. 0, or -1 with errno set and STEP
// naming what failed (fixed buffer, no allocation after the start).
int make_net_listeners(const Spec& spec, int sync_fd, char* step, size_t step_len);

// The refusals of a run, for the status JSON: one record per host and port (with its count)
// for the first kMaxDenials of them; the refusals of others only counted (cordon(1), BOUNDS).
struct NetRefusals {
    std::vector<std::string> records;  // JSON objects, "kind": "network"
    uint64_t dropped = 0;
};

// The supervisor's side: one thread that accepts on the listeners and answers DNS queries, and
// a thread per connection (at most kMaxConnections). Refusals go to stderr (once per host and
// port, the first kMaxStderrLines of them, then a count at stop()), to AUDIT_FD (every
// connection, as a JSON line) and to the status JSON (stop()).
class NetFilter final {
public:
    NetFilter(const Spec& spec, int audit_fd);
    ~NetFilter();
    NetFilter(const NetFilter&) = delete;
    NetFilter& operator=(const NetFilter&) = delete;
    // A listener from the child (TAG: ChildMsg::status). The last one starts the filter.
    void adopt(uint32_t tag, UniqueFd fd);
    // The Landlock jail's: the proxy alone, listening on the host's 127.0.0.1 at a port the
    // kernel picks (proxy_connect.hpp connects the jail's sockets to it); that port.
    // Only the connections whose peer port ADMITTED holds are served (proxy_connect.hpp).
    Result<uint16_t> listen_on_host(std::shared_ptr<ProxyAdmissions> admitted);
    // Ends every connection and returns the refusals recorded in the run.
    NetRefusals stop();

    struct Shared;

private:
    std::shared_ptr<Shared> shared_;
    std::vector<std::pair<uint32_t, UniqueFd>> listeners_;
    UniqueFd wake_;
    bool started_ = false;
    void start();
};

}  // namespace cordon

// --ssh-agent at run time (SPEC §6c, cordon(1) SSH AGENT). The jail's init binds a unix socket
// at kJailAgentSocket on the jail's private /run and hands it to the supervisor over the sync
// socket, as it does the network filter's listeners; the supervisor, outside the jail, accepts
// on it and relays each connection to the caller's own agent (Spec::ssh_agent_upstream), message
// by message, through the judgement of cordon/ssh_agent.hpp. The jail never holds a descriptor of
// the caller's agent, and no key material crosses into it.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <cstddef>
#include <memory>
#include <string>

#include "cordon/error.hpp"
#include "cordon/fd.hpp"
#include "cordon/net_proxy.hpp"
#include "cordon/spec.hpp"

namespace cordon {

// init, after pivot_root: the socket, in a new directory only the jail's user can enter, sent
// to the supervisor as ChildMsg::AgentListener. 0, or -1 with STEP naming what failed.
int make_agent_listener(int sync_fd, char* step, size_t step_len);

// The jail's known_hosts (the allowed hosts' keys, so that ssh inside knows them without
// asking): a file in /tmp/cordon-UID named by its content, written when missing; its path.
Result<std::string> jail_known_hosts(const Spec& spec);

// The supervisor's side: an accept thread and a thread per connection (at most
// kMaxAgentConnections at once; more are closed). Each refusal goes to stderr (once per reason,
// the first lines of them), to AUDIT_FD, and to the status JSON (stop()).
inline constexpr int kMaxAgentConnections = 16;
class SshAgentRelay final {
public:
    SshAgentRelay(const Spec& spec, int audit_fd);
    ~SshAgentRelay();
    SshAgentRelay(const SshAgentRelay&) = delete;
    SshAgentRelay& operator=(const SshAgentRelay&) = delete;
    // The listener from init; the relay starts.
    void adopt(UniqueFd listener);
    // Ends every connection; the refusals (records "kind": "ssh-agent").
    NetRefusals stop();

    struct Shared;

private:
    std::shared_ptr<Shared> shared_;
    UniqueFd wake_;
    bool started_ = false;
};

}  // namespace cordon

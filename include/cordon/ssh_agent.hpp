// --ssh-agent's pure parts (SPEC §6c, cordon(1) SSH AGENT): the agent protocol's messages as the
// relay judges them (draft-miller-ssh-agent, and OpenSSH's PROTOCOL.agent for the
// session-bind@openssh.com extension), and known_hosts(5) as ssh(1) reads it for one host. No
// sockets here: src/jail/net/ssh_agent_relay.cpp runs the relay between the jail's socket and the
// caller's agent. Every byte judged here comes from the jail (requests) or the caller's agent
// (replies); both are bounded by the kMax constants and parsed without trust.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon::ssh_agent {

// Message numbers (draft-miller-ssh-agent §6.1).
inline constexpr uint8_t kFailure = 5;
inline constexpr uint8_t kSuccess = 6;
inline constexpr uint8_t kRequestIdentities = 11;
inline constexpr uint8_t kIdentitiesAnswer = 12;
inline constexpr uint8_t kSignRequest = 13;
inline constexpr uint8_t kSignResponse = 14;
inline constexpr uint8_t kExtension = 27;
inline constexpr uint8_t kExtensionFailure = 28;
inline constexpr std::string_view kSessionBind = "session-bind@openssh.com";

// Bounds: a request from the jail (a userauth sign request or a session-bind is under 4 KiB
// with the largest keys), a reply from the caller's agent (OpenSSH's own limit), the bindings
// one connection may hold, the identities one answer may list.
inline constexpr size_t kMaxRequest = size_t{64} * 1024;
inline constexpr size_t kMaxReply = size_t{256} * 1024;
inline constexpr size_t kMaxBindings = 8;
inline constexpr size_t kMaxIdentities = 1024;

// The first whole message in BUF (its 4-byte length prefix included): its size; 0 while BUF
// holds less than a whole one; nullopt when the length is 0 or over MAX (the connection ends).
std::optional<size_t> frame_length(std::string_view buf, size_t max);

// The one-byte answer "failure" (length prefix included), which the relay gives every refusal.
std::string failure_message();

// What the relay allows, from --ssh-agent and the caller's known_hosts.
struct HostKey {
    std::string host;  // "NAME" or "NAME:PORT", as the option named it (for messages)
    std::string blob;  // the key as the SSH wire encodes it
};
struct Policy {
    std::vector<HostKey> host_keys;       // the allowed hosts' known keys; a session bound to
                                          // any other key gets no signature
    std::vector<std::string> identities;  // --ssh-agent-key: key blobs; empty = every key
};

// One connection of the jail's: the sessions bound on it (at most kMaxBindings), the
// session-bind forwarded to the caller's agent whose answer is awaited, and whether a
// session-bind said the connection is an agent forwarded to another host (ssh -A sends that
// first on the connection it forwards): then the requests that follow are the other host's,
// and no bind or signature is given on it.
struct Binding {
    std::string host;        // Policy's name of the host key
    std::string hostkey;     // blob
    std::string session_id;  // the key exchange's hash
};
struct Connection {
    std::vector<Binding> bindings;
    std::optional<Binding> pending;
    bool forwarded = false;
};

// The relay's verdict on one request: pass MSG to the caller's agent, or answer failure and say
// WHY (one line, for stderr and the status JSON; no bytes of the jail's in it but printable
// names, cut short).
struct Verdict {
    bool forward = false;
    uint8_t type = 0;  // the request's message number (0 if MSG has none)
    std::string why;   // set when refused
};

// MSG: one whole request (length prefix included), as frame_length found it.
//  - request identities: forwarded (the answer is filtered by judge_reply);
//  - sign: forwarded only if its key is one Policy allows and its data is an SSH userauth
//    request (RFC 4252 §7: session id, 50, user, service, "publickey" or
//    "publickey-hostbound-v00@openssh.com", TRUE, algorithm, the same key[, host key]) whose
//    session id is one bound on CONN (and, hostbound, whose host key is that binding's);
//  - extension session-bind@openssh.com (host key, session id, signature, is_forwarding):
//    forwarded (the caller's agent checks the signature) only if the host key is one of
//    Policy's, is_forwarding is false and CONN holds fewer than kMaxBindings; CONN.pending
//    records it; one with is_forwarding set marks CONN forwarded, and every sign and
//    session-bind after it is refused;
//  - everything else (adding, removing, locking, smartcards, other extensions, unknown
//    numbers, trailing bytes): refused.
Verdict judge_request(const Policy& policy, Connection& conn, std::string_view msg);

// REPLY: one whole answer of the caller's agent (length prefix included) to the request of
// number TYPE that judge_request forwarded. What the jail gets:
//  - identities answer: only the keys Policy allows, re-encoded (comments kept);
//  - session-bind: success records CONN.pending as a binding; anything else is failure;
//  - sign response: as it is;
//  - anything malformed, or of the wrong number: failure.
// A refusal sets WHY.
std::string judge_reply(const Policy& policy, Connection& conn, uint8_t type, std::string_view reply, std::string& why);

// known_hosts(5): the keys TEXT (known_hosts files, one after the other) gives HOST (lowercase)
// on PORT, as ssh(1) looks them up: the name is "HOST" on port 22, else "[HOST]:PORT"; a line's
// comma-separated patterns with * and ? and negation (!pattern, which excludes the line), and
// hashed names (|1|salt|hmac, HMAC-SHA1); lines of any length, each up to a NUL; @revoked lines
// remove their key from the result, wherever in TEXT they are; @cert-authority lines are not
// used (the relay matches plain host keys only). Blobs, each once, in file order.
std::vector<std::string> known_host_keys(std::string_view text, std::string_view host, uint16_t port);

// "TYPE BASE64" for a key BLOB (the type is the blob's first string), as known_hosts and .pub
// files write it; empty for what is no key blob.
std::string key_text(std::string_view blob);
// The blob of a public key line, "TYPE BASE64 [COMMENT]" (a .pub file, an authorized key
// without options); nullopt when it is not one or its type does not match the blob's.
std::optional<std::string> parse_public_key(std::string_view line);

// The hashes known_hosts' hashed names use, and base64 (RFC 4648, padded), exposed for tests.
std::string sha1(std::string_view data);
std::string hmac_sha1(std::string_view key, std::string_view data);
std::string base64_encode(std::string_view data);
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace cordon::ssh_agent

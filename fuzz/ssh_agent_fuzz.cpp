// The SSH agent relay's judges (cordon/ssh_agent.hpp), each from the same bytes: the framing, the
// bytes as the body of a request of the jail's and of each answer of the caller's agent, and as a
// known_hosts file, a public key line and base64. Any input must give a verdict or a failure: no
// crash, no leak, no hang; a refusal says why in one printable line, and what passes holds together.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cordon/ssh_agent.hpp"

namespace {

using namespace cordon::ssh_agent;

std::string str(std::string_view s) {
    std::string out;
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((s.size() >> shift) & 0xff);
    return out + std::string(s);
}

// The seeds (fuzz/corpus/ssh_agent) use these: a host key, a session bound to it, a user key.
const std::string kHostKey = str("ssh-ed25519") + str(std::string(32, 'H'));
const std::string kSid(32, 'S');
const std::string kUserKey = str("ssh-ed25519") + str(std::string(32, 'U'));

bool printable_line(const std::string& why) {
    return why.size() <= 300 && std::all_of(why.begin(), why.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

Connection bound() {
    Connection conn;
    conn.bindings.push_back({"host.example", kHostKey, kSid});
    return conn;
}

void check_request(const Policy& policy, std::string_view msg) {
    Connection conn = bound();
    const Verdict v = judge_request(policy, conn, msg);
    if (v.forward == !v.why.empty() || !printable_line(v.why)) std::abort();
    if (v.forward && v.type != kRequestIdentities && v.type != kSignRequest && v.type != kExtension) std::abort();
    if (conn.pending.has_value() != (v.forward && v.type == kExtension)) std::abort();
    if (conn.pending && conn.pending->hostkey != kHostKey) std::abort();
    if (conn.bindings.size() != 1) std::abort();
}

void check_reply(const Policy& policy, uint8_t type, const std::string& reply) {
    Connection conn = bound();
    // Only a session-bind's answer settles (clears) the one pending.
    conn.pending = Binding{"host.example", kHostKey, std::string(32, 'T')};
    std::string why;
    const std::string out = judge_reply(policy, conn, type, reply, why);
    if (conn.pending.has_value() == (type == kExtension) || conn.bindings.size() > 2 || !printable_line(why))
        std::abort();
    if (frame_length(out, kMaxReply) != out.size() || out.size() > std::max(reply.size(), size_t{5})) std::abort();
    if (out == failure_message()) return;
    if (!why.empty()) std::abort();
    if (type == kExtension && conn.bindings.size() != 2) std::abort();
    if (type == kSignRequest && out != reply) std::abort();
    // The identities filter keeps what it gave.
    if (type == kRequestIdentities && judge_reply(policy, conn, type, out, why) != out) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string in(reinterpret_cast<const char*>(data), size);
    if (const auto n = frame_length(in, kMaxRequest); n && *n != 0 && (*n < 5 || *n > size || *n > kMaxRequest + 4))
        std::abort();

    const Policy every{{{"host.example", kHostKey}}, {}};
    const Policy narrow{{{"host.example", kHostKey}}, {kUserKey}};
    const std::string msg = str(in);
    for (const Policy* p : {&every, &narrow}) {
        check_request(*p, msg);
        check_request(*p, in);
        for (uint8_t type : {kRequestIdentities, kSignRequest, kExtension, uint8_t{17}}) check_reply(*p, type, msg);
    }

    for (uint16_t port : {uint16_t{22}, uint16_t{2222}}) {
        for (const auto& blob : known_host_keys(in, "a.example", port)) {
            const std::string text = key_text(blob);
            if (!text.empty() && parse_public_key(text) != blob) std::abort();
        }
    }
    if (const auto blob = parse_public_key(in)) {
        const std::string text = key_text(*blob);
        if (!text.empty() && parse_public_key(text) != blob) std::abort();
    }
    if (const auto decoded = base64_decode(in); decoded && base64_encode(*decoded) != in) std::abort();
    if (base64_decode(base64_encode(in)) != in) std::abort();
    if (sha1(in).size() != 20 || hmac_sha1(in.substr(0, size / 2), in.substr(size / 2)).size() != 20) std::abort();
    return 0;
}

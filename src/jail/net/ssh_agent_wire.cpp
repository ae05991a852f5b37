// --ssh-agent's pure parts (cordon/ssh_agent.hpp): the agent protocol's messages as the relay
// judges them, known_hosts(5) as ssh(1) reads it, and the SHA-1, HMAC and base64 the hashed names
// need. Every byte comes from the jail or the caller's agent: each read is checked against what
// is left, counts are bounded before anything is allocated for them, and nothing throws.
#include <algorithm>
#include <array>
#include <set>

#include "cordon/ssh_agent.hpp"

namespace cordon::ssh_agent {

namespace {

// Requests the relay refuses by name (draft-miller-ssh-agent §6.1).
constexpr uint8_t kAddIdentity = 17;
constexpr uint8_t kRemoveIdentity = 18;
constexpr uint8_t kRemoveAllIdentities = 19;
constexpr uint8_t kAddSmartcardKey = 20;
constexpr uint8_t kRemoveSmartcardKey = 21;
constexpr uint8_t kLock = 22;
constexpr uint8_t kUnlock = 23;
constexpr uint8_t kAddIdConstrained = 25;
constexpr uint8_t kAddSmartcardKeyConstrained = 26;

constexpr uint8_t kUserauthRequest = 50;  // RFC 4252 §5
constexpr std::string_view kConnectionService = "ssh-connection";
constexpr std::string_view kPublickey = "publickey";
constexpr std::string_view kPublickeyHostbound = "publickey-hostbound-v00@openssh.com";
constexpr size_t kMaxSessionId = 128;  // OpenSSH's AGENT_MAX_SID_LEN; a hash is at most 64 bytes

constexpr std::string_view kMalformedRequest = "the request is malformed";
constexpr std::string_view kMalformedReply = "the agent's answer is malformed";
constexpr std::string_view kNotBound =
    "signing is refused: the session is not bound to a host (OpenSSH 8.9 or later binds it; ssh-keygen -Y sign "
    "and other non-login signatures are refused)";
constexpr std::string_view kForwarding = "forwarding the agent further is refused (ssh -A)";

// known_hosts: a pattern this long makes ssh's whole list not match (match_pattern_list's
// buffer); a hashed name's salt is an HMAC-SHA1 key of its digest's size.
constexpr size_t kMaxPattern = 1023;
constexpr size_t kSha1Size = 20;

// The SSH wire's reads (RFC 4251 §5), each checked against what is left. The first short read
// makes the reader bad for good; reads after it give empty values.
class Reader {
public:
    explicit Reader(std::string_view in) : in_(in) {}
    [[nodiscard]] bool ok() const { return ok_; }
    [[nodiscard]] bool at_end() const { return ok_ && in_.empty(); }
    [[nodiscard]] size_t left() const { return in_.size(); }
    uint8_t byte() {
        const auto b = take(1);
        return b.empty() ? 0 : static_cast<uint8_t>(b[0]);
    }
    uint32_t u32() {
        const auto b = take(4);
        if (b.size() < 4) return 0;
        return (uint32_t{static_cast<uint8_t>(b[0])} << 24) | (uint32_t{static_cast<uint8_t>(b[1])} << 16) |
               (uint32_t{static_cast<uint8_t>(b[2])} << 8) | uint32_t{static_cast<uint8_t>(b[3])};
    }
    std::string_view string() {
        const uint32_t n = u32();
        return take(n);
    }

private:
    std::string_view take(size_t n) {
        if (!ok_ || n > in_.size()) {
            ok_ = false;
            in_ = {};
            return {};
        }
        const auto out = in_.substr(0, n);
        in_.remove_prefix(n);
        return out;
    }
    std::string_view in_;
    bool ok_ = true;
};

void put_u32(std::string& out, uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
}

void put_string(std::string& out, std::string_view s) {
    put_u32(out, static_cast<uint32_t>(s.size()));
    out.append(s);
}

// BODY with its length prefix (bodies here are shorter than what they were made from).
std::string frame(std::string_view body) {
    std::string out;
    out.reserve(4 + body.size());
    put_string(out, body);
    return out;
}

// The body of MSG, one whole message (its prefix must give its size); nullopt if it is not one.
std::optional<std::string_view> body_of(std::string_view msg) {
    Reader r(msg);
    const auto body = r.string();
    if (!r.at_end() || body.empty()) return std::nullopt;
    return body;
}

Verdict refuse(uint8_t type, std::string_view why) {
    return Verdict{false, type, std::string(why)};
}

bool allowed_identity(const Policy& policy, std::string_view blob) {
    return policy.identities.empty() ||
           std::find(policy.identities.begin(), policy.identities.end(), blob) != policy.identities.end();
}

std::string refused_by_number(uint8_t type) {
    switch (type) {
        case kAddIdentity:
        case kAddIdConstrained:
            return "adding keys is refused";
        case kRemoveIdentity:
        case kRemoveAllIdentities:
            return "removing keys is refused";
        case kAddSmartcardKey:
        case kAddSmartcardKeyConstrained:
            return "adding smartcard keys is refused";
        case kRemoveSmartcardKey:
            return "removing smartcard keys is refused";
        case kLock:
            return "locking the agent is refused";
        case kUnlock:
            return "unlocking the agent is refused";
        default:
            return "message " + std::to_string(type) + " is refused";
    }
}

// An extension's name as a message may show it: only when it is made of the characters names
// are made of, and cut short.
std::string extension_refused(std::string_view name) {
    const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               std::string_view("@._+-").find(c) != std::string_view::npos;
    });
    if (!plain) return "the extension is refused";
    return "the extension " + std::string(name.substr(0, 64)) + " is refused";
}

// The data of a sign request as an SSH userauth request (RFC 4252 §7), with the checks
// OpenSSH's agent makes of it (parse_userauth_request): TRUE is 1, the service is
// ssh-connection, and nothing trails.
struct Userauth {
    std::string_view session_id;
    std::string_view key;
    std::optional<std::string_view> hostkey;  // publickey-hostbound-v00@openssh.com's
};

std::optional<Userauth> parse_userauth(std::string_view data) {
    Reader r(data);
    Userauth u;
    u.session_id = r.string();
    const uint8_t msg = r.byte();
    (void)r.string();  // user
    const auto service = r.string();
    const auto method = r.string();
    const uint8_t sig_follows = r.byte();
    (void)r.string();  // algorithm
    u.key = r.string();
    if (!r.ok() || u.session_id.empty() || msg != kUserauthRequest || service != kConnectionService || sig_follows != 1)
        return std::nullopt;
    if (method == kPublickeyHostbound) {
        u.hostkey = r.string();
    } else if (method != kPublickey) {
        return std::nullopt;
    }
    if (!r.at_end()) return std::nullopt;
    return u;
}

Verdict judge_sign(const Policy& policy, const Connection& conn, Reader& r) {
    const auto key = r.string();
    const auto data = r.string();
    (void)r.u32();  // flags
    if (!r.at_end() || key.empty()) return refuse(kSignRequest, kMalformedRequest);
    if (!allowed_identity(policy, key)) return refuse(kSignRequest, "the key is not one --ssh-agent-key allows");
    const auto auth = parse_userauth(data);
    if (!auth) {
        return refuse(kSignRequest,
                      "signing is refused: the data is not an SSH login request (ssh-keygen -Y sign and other "
                      "non-login signatures are refused)");
    }
    if (auth->key != key) return refuse(kSignRequest, "signing is refused: the login request names another key");
    const auto b = std::find_if(conn.bindings.begin(), conn.bindings.end(),
                                [&](const Binding& x) { return x.session_id == auth->session_id; });
    if (b == conn.bindings.end()) return refuse(kSignRequest, kNotBound);
    if (auth->hostkey && *auth->hostkey != b->hostkey) {
        return refuse(kSignRequest, "signing is refused: the session is bound to " + b->host +
                                        ", whose key is not the host key the login request names");
    }
    return Verdict{true, kSignRequest, {}};
}

// session-bind@openssh.com (PROTOCOL.agent §1): host key, session id, the host key's signature
// of it, is_forwarding.
Verdict judge_session_bind(const Policy& policy, Connection& conn, Reader& r) {
    const auto hostkey = r.string();
    const auto session_id = r.string();
    (void)r.string();  // the signature: the caller's agent checks it
    const uint8_t forwarding = r.byte();
    if (!r.at_end() || hostkey.empty() || session_id.empty() || session_id.size() > kMaxSessionId)
        return refuse(kExtension, "the session-bind is malformed");
    if (forwarding != 0) {
        conn.forwarded = true;
        return refuse(kExtension, kForwarding);
    }
    const auto h = std::find_if(policy.host_keys.begin(), policy.host_keys.end(),
                                [&](const HostKey& k) { return k.blob == hostkey; });
    if (h == policy.host_keys.end()) return refuse(kExtension, "the host key is not an allowed host's (--ssh-agent)");
    if (conn.pending) return refuse(kExtension, "a session-bind already awaits the agent's answer");
    for (const auto& b : conn.bindings) {
        if (b.session_id == session_id && b.hostkey != hostkey)
            return refuse(kExtension, "the session is already bound to " + b.host);
    }
    if (conn.bindings.size() >= kMaxBindings)
        return refuse(kExtension, "too many sessions are bound on one agent connection");
    conn.pending = Binding{h->host, std::string(hostkey), std::string(session_id)};
    return Verdict{true, kExtension, {}};
}

Verdict judge_extension(const Policy& policy, Connection& conn, Reader& r) {
    const auto name = r.string();
    if (!r.ok()) return refuse(kExtension, kMalformedRequest);
    if (name != kSessionBind) return refuse(kExtension, extension_refused(name));
    return judge_session_bind(policy, conn, r);
}

// An identities answer's keys, only those POLICY allows, re-encoded.
std::string filter_identities(const Policy& policy, Reader& r, std::string& why) {
    const uint32_t n = r.u32();
    // Each key takes at least its two lengths: a count the bytes cannot hold is a lie.
    if (!r.ok() || n > kMaxIdentities || n > r.left() / 8) {
        why = kMalformedReply;
        return failure_message();
    }
    std::string keys;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const auto blob = r.string();
        const auto comment = r.string();
        if (!r.ok()) break;
        if (!allowed_identity(policy, blob)) continue;
        put_string(keys, blob);
        put_string(keys, comment);
        ++kept;
    }
    if (!r.at_end()) {
        why = kMalformedReply;
        return failure_message();
    }
    std::string body(1, static_cast<char>(kIdentitiesAnswer));
    put_u32(body, kept);
    body += keys;
    return frame(body);
}

std::string session_bind_reply(Connection& conn, std::optional<Binding> pending, uint8_t rtype, const Reader& r,
                               std::string& why) {
    if (!pending) {
        why = "no session-bind awaits an answer";
        return failure_message();
    }
    if (rtype != kSuccess || !r.at_end()) {
        why = "the caller's agent did not accept the host key's signature";
        return failure_message();
    }
    const bool known = std::any_of(conn.bindings.begin(), conn.bindings.end(), [&](const Binding& b) {
        return b.session_id == pending->session_id && b.hostkey == pending->hostkey;
    });
    if (!known) {
        if (conn.bindings.size() >= kMaxBindings) {
            why = "too many sessions are bound on one agent connection";
            return failure_message();
        }
        conn.bindings.push_back(std::move(*pending));
    }
    std::string out;
    put_u32(out, 1);
    out.push_back(static_cast<char>(kSuccess));
    return out;
}

// known_hosts(5).

char ascii_lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool is_space(char c) {
    return c == ' ' || c == '\t';
}

// The field at the start of TEXT (after blanks), and TEXT after it.
std::string_view next_field(std::string_view& text) {
    size_t i = 0;
    while (i < text.size() && is_space(text[i])) ++i;
    size_t end = i;
    while (end < text.size() && !is_space(text[end])) ++end;
    const auto field = text.substr(i, end - i);
    text.remove_prefix(end);
    return field;
}

// match_pattern(3) of OpenSSH: * and ? over the whole of S, the pattern lowered. Backtracks
// only to the last star: at most |S| * |P| steps.
bool glob_match(std::string_view s, std::string_view p) {
    size_t si = 0;
    size_t pi = 0;
    size_t star = std::string_view::npos;
    size_t mark = 0;
    while (si < s.size()) {
        if (pi < p.size() && p[pi] == '*') {
            star = pi++;
            mark = si;
        } else if (pi < p.size() && (p[pi] == '?' || ascii_lower(p[pi]) == s[si])) {
            ++si;
            ++pi;
        } else if (star != std::string_view::npos) {
            pi = star + 1;
            si = ++mark;
        } else {
            return false;
        }
    }
    while (pi < p.size() && p[pi] == '*') ++pi;
    return pi == p.size();
}

// match_pattern_list(3) of OpenSSH: some pattern matches NAME and no negated one does.
bool pattern_list_match(std::string_view name, std::string_view list) {
    bool positive = false;
    size_t i = 0;
    while (i < list.size()) {
        const bool negated = list[i] == '!';
        if (negated) ++i;
        const size_t comma = std::min(list.find(',', i), list.size());
        const auto pattern = list.substr(i, comma - i);
        if (pattern.size() >= kMaxPattern) return false;
        i = comma < list.size() ? comma + 1 : comma;
        if (glob_match(name, pattern)) {
            if (negated) return false;
            positive = true;
        }
    }
    return positive;
}

// A hashed name, "|1|" base64(salt) "|" base64(HMAC-SHA1(salt, NAME)), compared as ssh
// compares it: the whole field against the one NAME gives with the same salt.
bool hashed_match(std::string_view name, std::string_view field) {
    constexpr std::string_view kMagic = "|1|";
    if (field.substr(0, kMagic.size()) != kMagic) return false;
    const auto rest = field.substr(kMagic.size());
    const auto salt = base64_decode(rest.substr(0, rest.find('|')));
    if (!salt || salt->size() != kSha1Size) return false;
    return field == std::string(kMagic) + base64_encode(*salt) + "|" + base64_encode(hmac_sha1(*salt, name));
}

bool host_field_match(std::string_view name, std::string_view field) {
    return field.front() == '|' ? hashed_match(name, field) : pattern_list_match(name, field);
}

// The first string of BLOB, the key's type.
std::string_view blob_type(std::string_view blob) {
    Reader r(blob);
    const auto type = r.string();
    return r.ok() ? type : std::string_view();
}

// "TYPE BASE64" at the start of TEXT (after blanks; a comment may follow): the blob, if it
// decodes and its own type is TYPE. TYPE must be followed by blanks, as sshkey_read wants it.
std::optional<std::string> read_key(std::string_view text) {
    const auto type = next_field(text);
    if (type.empty() || type.front() == '#' || text.empty()) return std::nullopt;
    const auto field = next_field(text);
    // The field ends at a blank, as sshkey_read cuts it; OpenSSH's base64 decoder (b64_pton)
    // then skips the other white space in it (\r, \v, \f), and so must a @revoked line's.
    std::string encoded;
    for (const char c : field) {
        if (c != '\r' && c != '\v' && c != '\f' && c != '\n') encoded.push_back(c);
    }
    if (encoded.empty()) return std::nullopt;
    auto blob = base64_decode(encoded);
    if (!blob || blob_type(*blob) != type) return std::nullopt;
    return blob;
}

enum class Marker { None, CertAuthority, Revoked, Bad };

// A line's optional marker (check_markers of OpenSSH: at most one, and only these two).
Marker read_marker(std::string_view& line) {
    auto rest = line;
    const auto first = next_field(rest);
    if (first.empty() || first.front() != '@') return Marker::None;
    line = rest;
    auto after = rest;
    const auto next = next_field(after);
    if (!next.empty() && next.front() == '@') return Marker::Bad;
    if (first == "@cert-authority") return Marker::CertAuthority;
    if (first == "@revoked") return Marker::Revoked;
    return Marker::Bad;
}

// SHA-1 (RFC 3174).
uint32_t rotl(uint32_t x, int n) {
    return (x << n) | (x >> (32 - n));
}

void sha1_block(std::array<uint32_t, 5>& h, const unsigned char* p) {
    std::array<uint32_t, 80> w{};
    for (size_t i = 0; i < 16; ++i) {
        w[i] = (uint32_t{p[4 * i]} << 24) | (uint32_t{p[4 * i + 1]} << 16) | (uint32_t{p[4 * i + 2]} << 8) |
               uint32_t{p[4 * i + 3]};
    }
    for (size_t i = 16; i < 80; ++i) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    static constexpr std::array<uint32_t, 4> kRound{0x5a827999, 0x6ed9eba1, 0x8f1bbcdc, 0xca62c1d6};
    std::array<uint32_t, 5> v = h;  // a, b, c, d, e
    for (size_t i = 0; i < 80; ++i) {
        const uint32_t b = v[1];
        const uint32_t c = v[2];
        const uint32_t d = v[3];
        const uint32_t f = i < 20 ? (b & c) | (~b & d) : i >= 40 && i < 60 ? (b & c) | (b & d) | (c & d) : b ^ c ^ d;
        v = {rotl(v[0], 5) + f + v[4] + kRound[i / 20] + w[i], v[0], rotl(b, 30), c, d};
    }
    for (size_t i = 0; i < h.size(); ++i) h[i] += v[i];
}

constexpr std::string_view kBase64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int base64_value(char c) {
    const size_t i = kBase64Alphabet.find(c);
    return i == std::string_view::npos ? -1 : static_cast<int>(i);
}

}  // namespace

std::optional<size_t> frame_length(std::string_view buf, size_t max) {
    if (buf.size() < 4) return 0;
    Reader r(buf);
    const size_t len = r.u32();
    if (len == 0 || len > max) return std::nullopt;
    return buf.size() - 4 < len ? 0 : 4 + len;
}

std::string failure_message() {
    return std::string("\0\0\0\1", 4) + static_cast<char>(kFailure);
}

Verdict judge_request(const Policy& policy, Connection& conn, std::string_view msg) {
    const uint8_t type = msg.size() > 4 ? static_cast<uint8_t>(msg[4]) : 0;
    const auto body = body_of(msg);
    if (!body) return refuse(type, kMalformedRequest);
    Reader r(body->substr(1));
    if (conn.forwarded && (type == kSignRequest || type == kExtension)) return refuse(type, kForwarding);
    switch (type) {
        case kRequestIdentities:
            if (!r.at_end()) return refuse(type, kMalformedRequest);
            return Verdict{true, type, {}};
        case kSignRequest:
            return judge_sign(policy, conn, r);
        case kExtension:
            return judge_extension(policy, conn, r);
        default:
            return refuse(type, refused_by_number(type));
    }
}

std::string judge_reply(const Policy& policy, Connection& conn, uint8_t type, std::string_view reply,
                        std::string& why) {
    why.clear();
    // A session-bind's answer settles it, whatever the answer is.
    std::optional<Binding> pending;
    if (type == kExtension) pending.swap(conn.pending);
    const auto body = body_of(reply);
    if (!body) {
        why = kMalformedReply;
        return failure_message();
    }
    const auto rtype = static_cast<uint8_t>(body->front());
    Reader r(body->substr(1));
    if (type == kExtension) return session_bind_reply(conn, std::move(pending), rtype, r, why);
    if (type != kRequestIdentities && type != kSignRequest) {
        why = "no request of message " + std::to_string(type) + " was forwarded";
        return failure_message();
    }
    if (rtype == kFailure && r.at_end()) return failure_message();  // the agent's own: nothing for cordon to say
    if (type == kRequestIdentities && rtype == kIdentitiesAnswer) return filter_identities(policy, r, why);
    if (type == kSignRequest && rtype == kSignResponse) {
        (void)r.string();  // the signature
        if (r.at_end()) return std::string(reply);
    }
    why = kMalformedReply;
    return failure_message();
}

std::vector<std::string> known_host_keys(std::string_view text, std::string_view host, uint16_t port) {
    std::string name;
    for (char c : host) name += ascii_lower(c);
    if (port != 22) name = "[" + name + "]:" + std::to_string(port);
    std::vector<std::string> keys;
    std::set<std::string> seen;
    std::set<std::string> revoked;
    while (!text.empty()) {
        const size_t nl = std::min(text.find('\n'), text.size());
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(std::min(nl + 1, text.size()));
        // As ssh reads a line (a C string): up to a NUL, and of any length, so that no
        // @revoked line ssh honours is passed over (the file is the caller's, not the jail's).
        line = line.substr(0, line.find('\0'));
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        const Marker marker = read_marker(line);
        if (marker == Marker::Bad || marker == Marker::CertAuthority) continue;
        const auto hosts = next_field(line);
        if (hosts.empty() || hosts.front() == '#' || !host_field_match(name, hosts)) continue;
        auto blob = read_key(line);
        if (!blob) continue;
        if (marker == Marker::Revoked) {
            revoked.insert(std::move(*blob));
        } else if (seen.insert(*blob).second) {
            keys.push_back(std::move(*blob));
        }
    }
    keys.erase(std::remove_if(keys.begin(), keys.end(), [&](const std::string& k) { return revoked.count(k) != 0; }),
               keys.end());
    return keys;
}

std::string key_text(std::string_view blob) {
    const auto type = blob_type(blob);
    if (type.empty() || !std::all_of(type.begin(), type.end(), [](char c) { return c > ' ' && c < 0x7f && c != '#'; }))
        return {};
    return std::string(type) + " " + base64_encode(blob);
}

std::optional<std::string> parse_public_key(std::string_view line) {
    while (!line.empty() && (is_space(line.back()) || line.back() == '\n' || line.back() == '\r'))
        line.remove_suffix(1);
    if (line.find_first_of("\r\n") != std::string_view::npos) return std::nullopt;
    return read_key(line);
}

std::string sha1(std::string_view data) {
    std::array<uint32_t, 5> h{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
    std::string msg(data);
    msg.push_back(static_cast<char>(0x80));
    while (msg.size() % 64 != 56) msg.push_back('\0');
    const uint64_t bits = uint64_t{data.size()} * 8;
    for (int shift = 56; shift >= 0; shift -= 8) msg.push_back(static_cast<char>((bits >> shift) & 0xff));
    for (size_t i = 0; i < msg.size(); i += 64) sha1_block(h, reinterpret_cast<const unsigned char*>(msg.data() + i));
    std::string out;
    for (uint32_t v : h) put_u32(out, v);
    return out;
}

std::string hmac_sha1(std::string_view key, std::string_view data) {
    constexpr size_t kBlock = 64;
    std::string k = key.size() > kBlock ? sha1(key) : std::string(key);
    k.resize(kBlock, '\0');
    std::string inner = k;
    std::string outer = k;
    for (size_t i = 0; i < kBlock; ++i) {
        inner[i] = static_cast<char>(inner[i] ^ 0x36);
        outer[i] = static_cast<char>(outer[i] ^ 0x5c);
    }
    return sha1(outer + sha1(inner.append(data)));
}

std::string base64_encode(std::string_view data) {
    std::string out;
    out.reserve((data.size() + 2) / 3 * 4);
    for (size_t i = 0; i < data.size(); i += 3) {
        const size_t n = std::min<size_t>(3, data.size() - i);
        uint32_t v = 0;
        for (size_t j = 0; j < 3; ++j) v = (v << 8) | (j < n ? static_cast<uint8_t>(data[i + j]) : 0U);
        for (size_t j = 0; j < 4; ++j) out += j <= n ? kBase64Alphabet[(v >> (18 - 6 * j)) & 0x3f] : '=';
    }
    return out;
}

// Padded and canonical only, as OpenSSH writes it: a length of a multiple of 4, '=' only to pad
// the last group, and no bits set past the last byte. No blanks.
std::optional<std::string> base64_decode(std::string_view text) {
    if (text.size() % 4 != 0) return std::nullopt;
    std::string out;
    out.reserve(text.size() / 4 * 3);
    for (size_t i = 0; i < text.size(); i += 4) {
        const bool last = i + 4 == text.size();
        size_t pad = 0;
        if (last && text[i + 3] == '=') pad = text[i + 2] == '=' ? 2 : 1;
        uint32_t v = 0;
        for (size_t j = 0; j < 4; ++j) {
            const int d = j < 4 - pad ? base64_value(text[i + j]) : 0;
            if (d < 0) return std::nullopt;
            v = (v << 6) | static_cast<uint32_t>(d);
        }
        if ((pad == 1 && (v & 0xff) != 0) || (pad == 2 && (v & 0xffff) != 0)) return std::nullopt;
        for (size_t j = 0; j < 3 - pad; ++j) out += static_cast<char>((v >> (16 - 8 * j)) & 0xff);
    }
    return out;
}

}  // namespace cordon::ssh_agent

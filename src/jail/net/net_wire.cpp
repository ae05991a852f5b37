// The proxy's HTTP request heads and the fake resolver's DNS messages (cordon/net.hpp).
#include <algorithm>
#include <cctype>

#include "cordon/net.hpp"

namespace cordon {

namespace {

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

// "host[:port]" or "[v6][:port]" into OUT; false if malformed.
bool parse_authority(std::string_view auth, uint16_t default_port, ProxyRequest& out) {
    std::string_view host = auth;
    std::string_view port;
    if (!host.empty() && host.front() == '[') {
        const size_t close = host.find(']');
        if (close == std::string_view::npos) return false;
        std::string_view rest = host.substr(close + 1);
        host = host.substr(1, close - 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return false;
            port = rest.substr(1);
        }
        if (host.empty() || host.find_first_not_of("0123456789abcdefABCDEF:.") != std::string_view::npos) return false;
        out.host = std::string(host);
        for (char& c : out.host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
        if (const size_t colon = host.rfind(':'); colon != std::string_view::npos) {
            port = host.substr(colon + 1);
            host = host.substr(0, colon);
        }
        auto name = normalize_host_name(host);
        if (!name) return false;
        out.host = *name;
    }
    if (port.empty()) {
        if (default_port == 0) return false;
        out.port = default_port;
        return true;
    }
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) return false;
    const int p = std::stoi(std::string(port));
    if (p < 1 || p > 65535) return false;
    out.port = static_cast<uint16_t>(p);
    return true;
}

// The headers a proxy does not pass on (hop-by-hop, and the proxy's own).
bool dropped_header(std::string_view name) {
    static constexpr std::string_view kDropped[] = {
        "connection", "proxy-connection", "keep-alive", "proxy-authorization", "proxy-authenticate",
        "te",         "trailer",          "upgrade"};
    return std::any_of(std::begin(kDropped), std::end(kDropped), [&](std::string_view d) { return iequals(d, name); });
}

// The headers after the request line, rewritten for the server; false if one is malformed. The
// request's Host is the URL's AUTHORITY, whatever Host the client sent (RFC 9112, 3.2.2: a proxy
// replaces it), so a server behind the allowed address sees only the allowed name.
bool rewrite_headers(std::string_view headers, std::string_view authority, std::string& out) {
    out.append("Host: ").append(authority).append("\r\n");
    while (!headers.empty()) {
        const size_t eol = headers.find("\r\n");
        std::string_view line = headers.substr(0, eol);
        headers.remove_prefix(eol == std::string_view::npos ? headers.size() : eol + 2);
        if (line.empty()) break;
        const size_t colon = line.find(':');
        if (colon == 0 || colon == std::string_view::npos) return false;
        std::string_view name = line.substr(0, colon);
        if (name.find_first_of(" \t") != std::string_view::npos) return false;
        if (dropped_header(name) || iequals(name, "host")) continue;
        out.append(line);
        out += "\r\n";
    }
    out += "Connection: close\r\n\r\n";
    return true;
}

}  // namespace

ParseState parse_proxy_request(std::string_view buf, ProxyRequest& out, std::string& why) {
    const size_t end = buf.find("\r\n\r\n");
    if (end == std::string_view::npos) {
        if (buf.size() >= kMaxRequestHead) {
            why = "request head too long";
            return ParseState::Bad;
        }
        return ParseState::Incomplete;
    }
    if (end + 4 > kMaxRequestHead) {
        why = "request head too long";
        return ParseState::Bad;
    }
    out = ProxyRequest{};
    out.head_len = end + 4;
    const std::string_view head = buf.substr(0, end + 2);
    const size_t eol = head.find("\r\n");
    const std::string_view line = head.substr(0, eol);
    const size_t sp1 = line.find(' ');
    const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
        why = "malformed request line";
        return ParseState::Bad;
    }
    const std::string_view method = line.substr(0, sp1);
    const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    const std::string_view version = line.substr(sp2 + 1);
    if (method.empty() || method.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ-") != std::string_view::npos ||
        version.substr(0, 5) != "HTTP/") {
        why = "malformed request line";
        return ParseState::Bad;
    }
    if (method == "CONNECT") {
        out.connect = true;
        if (!parse_authority(target, 0, out)) {
            why = "CONNECT needs HOST:PORT";
            return ParseState::Bad;
        }
        return ParseState::Done;
    }
    constexpr std::string_view kHttp = "http://";
    if (target.size() <= kHttp.size() || !iequals(target.substr(0, kHttp.size()), kHttp)) {
        why = "only CONNECT and http:// requests go through this proxy";
        return ParseState::Bad;
    }
    std::string_view rest = target.substr(kHttp.size());
    const size_t path_at = rest.find_first_of("/?");
    std::string_view auth = rest.substr(0, path_at);
    if (auth.find('@') != std::string_view::npos || !parse_authority(auth, 80, out)) {
        why = "malformed URL";
        return ParseState::Bad;
    }
    std::string path = path_at == std::string_view::npos ? "/" : std::string(rest.substr(path_at));
    if (path.front() == '?') path.insert(0, "/");
    out.upstream_head.append(method).append(" ").append(path).append(" ").append(version).append("\r\n");
    if (!rewrite_headers(head.substr(eol + 2), auth, out.upstream_head)) {
        why = "malformed header";
        return ParseState::Bad;
    }
    return ParseState::Done;
}

std::optional<DnsQuestion> parse_dns_query(std::string_view msg) {
    if (msg.size() < 12) return std::nullopt;
    auto u16 = [&](size_t at) {
        return static_cast<uint16_t>((static_cast<uint8_t>(msg[at]) << 8) | static_cast<uint8_t>(msg[at + 1]));
    };
    DnsQuestion q;
    q.id = u16(0);
    const uint16_t flags = u16(2);
    if ((flags & 0x8000) != 0 || ((flags >> 11) & 0xf) != 0) return std::nullopt;  // a response, or not QUERY
    if (u16(4) != 1) return std::nullopt;
    size_t at = 12;
    std::string name;
    for (;;) {
        if (at >= msg.size()) return std::nullopt;
        const auto len = static_cast<uint8_t>(msg[at++]);
        if (len == 0) break;
        if (len > 63 || at + len > msg.size()) return std::nullopt;  // compression has no place in a question
        if (!name.empty()) name += '.';
        name.append(msg.substr(at, len));
        at += len;
        if (name.size() > 253) return std::nullopt;
    }
    if (at + 4 > msg.size()) return std::nullopt;
    q.qtype = u16(at);
    if (u16(at + 2) != 1) return std::nullopt;  // class IN
    q.end = at + 4;
    auto normalized = normalize_host_name(name);
    if (!normalized) return std::nullopt;
    q.name = *normalized;
    return q;
}

std::string dns_answer(std::string_view query, const DnsQuestion& q, uint8_t rcode, std::optional<in_addr> addr4) {
    std::string out(query.substr(0, q.end));
    const bool rd = (static_cast<uint8_t>(out[2]) & 0x01) != 0;
    out[2] = static_cast<char>(0x84 | (rd ? 0x01 : 0));  // QR, AA, RD as asked
    out[3] = static_cast<char>(0x80 | (rcode & 0x0f));   // RA, RCODE
    out[6] = 0;
    out[7] = addr4 ? 1 : 0;  // ANCOUNT
    for (int i = 8; i < 12; ++i) out[static_cast<size_t>(i)] = 0;
    if (addr4) {
        static constexpr char kRecord[] = {'\xc0', '\x0c', 0, 1, 0, 1, 0, 0, 0, 60, 0, 4};
        out.append(kRecord, sizeof kRecord);
        out.append(reinterpret_cast<const char*>(&addr4->s_addr), 4);
    }
    return out;
}

}  // namespace cordon

// The supervisor's resolver, its pure parts (cordon/net.hpp): resolv.conf(5), hosts(5), and DNS
// queries and responses (RFC 1035). What a name server sends is read within its own bounds:
// every offset checked, compression pointers followed a bounded number of times.
#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <set>

#include "cordon/net.hpp"

namespace cordon {

namespace {

std::vector<std::string_view> fields(std::string_view line) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        const size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
        if (i > start) out.push_back(line.substr(start, i - start));
    }
    return out;
}

// Each line of TEXT without its comment (# or ;), split into fields.
template <class F>
void for_each_line(std::string_view text, F f) {
    while (!text.empty()) {
        const size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        if (const size_t c = line.find_first_of("#;"); c != std::string_view::npos) line = line.substr(0, c);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        auto words = fields(line);
        if (!words.empty()) f(words);
    }
}

int option_value(std::string_view word, std::string_view name, int lo, int hi, int fallback) {
    if (word.rfind(name, 0) != 0) return fallback;
    int v = 0;
    const auto digits = word.substr(name.size());
    if (std::from_chars(digits.data(), digits.data() + digits.size(), v).ec != std::errc{}) return fallback;
    return std::clamp(v, lo, hi);
}

uint16_t u16(std::string_view m, size_t at) {
    return static_cast<uint16_t>((static_cast<uint8_t>(m[at]) << 8) | static_cast<uint8_t>(m[at + 1]));
}

void put16(std::string& out, uint16_t v) {
    out.push_back(static_cast<char>(v >> 8));
    out.push_back(static_cast<char>(v & 0xff));
}

// The name at AT in M (lower case, dots between labels), and the offset just past its own
// bytes in NEXT; nullopt if it runs past M, loops, or is longer than a name may be.
std::optional<std::string> read_name(std::string_view m, size_t at, size_t& next) {
    std::string name;
    bool jumped = false;
    for (int steps = 0; steps < 128; ++steps) {
        if (at >= m.size()) return std::nullopt;
        const auto len = static_cast<uint8_t>(m[at]);
        if ((len & 0xc0) == 0xc0) {
            if (at + 1 >= m.size()) return std::nullopt;
            if (!jumped) next = at + 2;
            jumped = true;
            at = ((len & 0x3fU) << 8) | static_cast<uint8_t>(m[at + 1]);
            continue;
        }
        if ((len & 0xc0) != 0) return std::nullopt;
        if (len == 0) {
            if (!jumped) next = at + 1;
            return name;
        }
        if (at + 1 + len > m.size()) return std::nullopt;
        if (!name.empty()) name += '.';
        for (size_t i = 0; i < len; ++i) name += static_cast<char>(std::tolower(static_cast<uint8_t>(m[at + 1 + i])));
        if (name.size() > 253) return std::nullopt;
        at += 1 + len;
    }
    return std::nullopt;
}

}  // namespace

std::optional<sockaddr_storage> address_literal(std::string_view text, uint16_t port) {
    const std::string a(text);
    sockaddr_storage ss{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (::inet_pton(AF_INET, a.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        return ss;
    }
    if (::inet_pton(AF_INET6, a.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        return ss;
    }
    return std::nullopt;
}

ResolvConf parse_resolv_conf(std::string_view text) {
    ResolvConf rc;
    for_each_line(text, [&](const std::vector<std::string_view>& w) {
        if (w[0] == "nameserver" && w.size() >= 2 && rc.servers.size() < 3) {
            if (auto a = address_literal(w[1].substr(0, w[1].find('%')), kDnsPort)) rc.servers.push_back(*a);
        } else if (w[0] == "options") {
            for (size_t i = 1; i < w.size(); ++i) {
                rc.timeout_s = option_value(w[i], "timeout:", 1, 30, rc.timeout_s);
                rc.attempts = option_value(w[i], "attempts:", 1, 5, rc.attempts);
            }
        }
    });
    if (rc.servers.empty()) rc.servers.push_back(*address_literal("127.0.0.1", kDnsPort));
    return rc;
}

std::vector<sockaddr_storage> hosts_addresses(std::string_view text, std::string_view name, uint16_t port) {
    std::vector<sockaddr_storage> out;
    for_each_line(text, [&](const std::vector<std::string_view>& w) {
        for (size_t i = 1; i < w.size(); ++i) {
            if (normalize_host_name(w[i]) != name) continue;
            if (auto a = address_literal(w[0], port)) out.push_back(*a);
            break;
        }
    });
    return out;
}

std::string dns_query(uint16_t id, std::string_view name, uint16_t qtype) {
    std::string out;
    put16(out, id);
    put16(out, 0x0100);  // a standard query, recursion desired
    put16(out, 1);
    for (int i = 0; i < 3; ++i) put16(out, 0);
    size_t start = 0;
    while (start <= name.size()) {
        size_t dot = name.find('.', start);
        if (dot == std::string_view::npos) dot = name.size();
        out.push_back(static_cast<char>(dot - start));
        out.append(name.substr(start, dot - start));
        start = dot + 1;
    }
    out.push_back('\0');
    put16(out, qtype);
    put16(out, 1);  // IN
    return out;
}

DnsReply parse_dns_reply(std::string_view m, uint16_t id, std::string_view name, uint16_t qtype, uint16_t port) {
    DnsReply r;
    if (m.size() < 12 || u16(m, 0) != id) return r;
    const uint16_t flags = u16(m, 2);
    if ((flags & 0x8000) == 0 || ((flags >> 11) & 0xf) != 0 || u16(m, 4) != 1) return r;
    r.truncated = (flags & 0x0200) != 0;
    r.rcode = flags & 0xf;
    size_t at = 12;
    auto qname = read_name(m, at, at);
    if (!qname || *qname != name || at + 4 > m.size() || u16(m, at) != qtype || u16(m, at + 2) != 1) return r;
    at += 4;
    struct Record {
        std::string owner;
        uint16_t type;
        std::string_view data;
        size_t data_at;
    };
    std::vector<Record> records;
    const uint16_t count = u16(m, 6);
    for (uint16_t i = 0; i < count; ++i) {
        auto owner = read_name(m, at, at);
        if (!owner || at + 10 > m.size()) return r;
        const uint16_t type = u16(m, at), cls = u16(m, at + 2), len = u16(m, at + 8);
        at += 10;
        if (at + len > m.size()) return r;
        if (cls == 1) records.push_back({std::move(*owner), type, m.substr(at, len), at});
        at += len;
    }
    // NAME and the names its CNAMEs lead to, within this answer.
    std::set<std::string> names{std::string(name)};
    for (bool grew = true; grew && names.size() < 16;) {
        grew = false;
        for (const auto& rec : records) {
            if (rec.type != 5 || !names.count(rec.owner)) continue;
            size_t ignored = 0;
            if (auto target = read_name(m, rec.data_at, ignored); target && names.insert(*target).second) grew = true;
        }
    }
    for (const auto& rec : records) {
        if (rec.type != qtype || !names.count(rec.owner)) continue;
        sockaddr_storage ss{};
        if (qtype == kDnsTypeA && rec.data.size() == 4) {
            auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
            v4->sin_family = AF_INET;
            v4->sin_port = htons(port);
            std::memcpy(&v4->sin_addr, rec.data.data(), 4);
        } else if (qtype == kDnsTypeAAAA && rec.data.size() == 16) {
            auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
            v6->sin6_family = AF_INET6;
            v6->sin6_port = htons(port);
            std::memcpy(&v6->sin6_addr, rec.data.data(), 16);
        } else {
            continue;
        }
        r.addresses.push_back(ss);
    }
    r.ok = true;
    return r;
}

}  // namespace cordon

#include "cordon/net.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace cordon {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::optional<uint16_t> parse_port(std::string_view s) {
    if (s.empty() || s.size() > 5) return std::nullopt;
    unsigned v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<unsigned>(c - '0');
    }
    if (v == 0 || v > 65535) return std::nullopt;
    return static_cast<uint16_t>(v);
}

// ADDR[/PREFIX] into RULE; false if it is no address.
bool parse_address(std::string_view text, AllowHost& rule) {
    std::string_view addr = text;
    std::optional<int> prefix;
    if (size_t slash = text.find('/'); slash != std::string_view::npos) {
        addr = text.substr(0, slash);
        std::string_view p = text.substr(slash + 1);
        if (p.empty() || p.size() > 3 || !std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }))
            return false;
        prefix = std::stoi(std::string(p));
    }
    const std::string a(addr);
    if (::inet_pton(AF_INET, a.c_str(), rule.addr) == 1) {
        rule.family = AF_INET;
        rule.prefix = prefix.value_or(32);
        return rule.prefix <= 32;
    }
    if (::inet_pton(AF_INET6, a.c_str(), rule.addr) == 1) {
        rule.family = AF_INET6;
        rule.prefix = prefix.value_or(128);
        return rule.prefix <= 128;
    }
    return false;
}

bool prefix_matches(const uint8_t* a, const uint8_t* b, int bits) {
    int i = 0;
    for (; bits >= 8; bits -= 8, ++i) {
        if (a[i] != b[i]) return false;
    }
    if (bits == 0) return true;
    const auto mask = static_cast<uint8_t>(0xff << (8 - bits));
    return (a[i] & mask) == (b[i] & mask);
}

bool has_port(const AllowHost& r, uint16_t port) {
    return std::find(r.ports.begin(), r.ports.end(), port) != r.ports.end();
}

// An IPv4 address (network order bytes), or an IPv4-mapped IPv6 one, as 4 bytes.
const uint8_t* ipv4_bytes(const struct sockaddr* sa) {
    if (sa->sa_family == AF_INET)
        return reinterpret_cast<const uint8_t*>(&reinterpret_cast<const sockaddr_in*>(sa)->sin_addr);
    const auto* a6 = reinterpret_cast<const uint8_t*>(&reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr);
    static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::memcmp(a6, kMapped, 12) == 0 ? a6 + 12 : nullptr;
}

struct Range {
    uint8_t addr[16];
    int bits;
    const char* what;
};

const char* special_v4(const uint8_t* a) {
    static constexpr Range kRanges[] = {
        {{0}, 8, "unspecified (0.0.0.0/8)"},
        {{127}, 8, "loopback"},
        {{10}, 8, "private (RFC 1918)"},
        {{172, 16}, 12, "private (RFC 1918)"},
        {{192, 168}, 16, "private (RFC 1918)"},
        {{100, 64}, 10, "shared address space (CGNAT)"},
        {{169, 254, 169, 254}, 32, "cloud metadata"},
        {{169, 254}, 16, "link-local"},
        {{192, 0, 0}, 24, "IETF protocol assignments"},
        {{198, 18}, 15, "benchmarking"},
        {{224}, 4, "multicast"},
        {{240}, 4, "reserved"},
    };
    for (const auto& r : kRanges) {
        if (prefix_matches(a, r.addr, r.bits)) return r.what;
    }
    return nullptr;
}

const char* special_v6(const uint8_t* a) {
    static constexpr Range kRanges[] = {
        {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 128, "unspecified"},
        {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128, "loopback"},
        {{0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54}, 128, "cloud metadata"},
        {{0xfc}, 7, "unique local"},
        {{0xfe, 0x80}, 10, "link-local"},
        {{0xfe, 0xc0}, 10, "site-local"},
        {{0xff}, 8, "multicast"},
        {{0x00, 0x64, 0xff, 0x9b}, 96, "NAT64"},
        {{0x20, 0x02}, 16, "6to4"},
        {{0x20, 0x01, 0x00, 0x00}, 32, "Teredo"},
    };
    for (const auto& r : kRanges) {
        if (prefix_matches(a, r.addr, r.bits)) return r.what;
    }
    return nullptr;
}

}  // namespace

std::optional<std::string> normalize_host_name(std::string_view name) {
    if (!name.empty() && name.back() == '.') name.remove_suffix(1);
    if (name.empty() || name.size() > 253) return std::nullopt;
    std::string out = lower(name);
    size_t label = 0;
    for (char c : out) {
        if (c == '.') {
            if (label == 0) return std::nullopt;
            label = 0;
        } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') {
            if (++label > 63) return std::nullopt;
        } else {
            return std::nullopt;
        }
    }
    if (label == 0) return std::nullopt;
    return out;
}

Result<AllowHost> parse_allow_host(std::string_view text) {
    // The value as it is echoed: a URL's user:password@ never.
    std::string shown(text);
    if (const size_t scheme = shown.find("://"), at = shown.find('@');
        scheme != std::string::npos && at != std::string::npos && at > scheme) {
        const size_t end = shown.find_first_of("/?#", scheme + 3);
        if (end == std::string::npos || at < end) shown.replace(scheme + 3, at - scheme - 3, "...");
    }
    auto bad = [&](const std::string& why) {
        return make_error("--allow-host", "invalid value '" + shown + "': " + why);
    };
    if (!text.empty() && text.front() == '-') return bad("an option, not a host: write --allow-host HOST[:PORT]");
    if (const size_t scheme = text.find("://"); scheme != std::string_view::npos) {
        // A URL: name the entry it stands for.
        const std::string_view proto = text.substr(0, scheme);
        std::string_view rest = text.substr(scheme + 3);
        rest = rest.substr(0, rest.find_first_of("/?#"));
        if (const size_t at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
        const bool has_port = !rest.empty() && rest.back() != ']' && rest.find(':') != std::string_view::npos;
        std::string entry(rest);
        if (!has_port && (proto == "http" || proto == "https")) entry += proto == "http" ? ":80" : ":443";
        return bad("a URL, not a host: write '" + entry + "'");
    }
    AllowHost r;
    r.text = std::string(text);
    std::string_view host = text;
    std::optional<std::string_view> port;
    if (!host.empty() && host.front() == '[') {
        const size_t close = host.find(']');
        if (close == std::string_view::npos) return bad("unclosed [");
        std::string_view rest = host.substr(close + 1);
        host = host.substr(1, close - 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return bad("expected :PORT after ]");
            port = rest.substr(1);
        }
    } else if (std::count(host.begin(), host.end(), ':') == 1) {
        const size_t colon = host.find(':');
        port = host.substr(colon + 1);
        host = host.substr(0, colon);
    }
    if (port) {
        auto p = parse_port(*port);
        if (!p) return bad("the port must be a number from 1 to 65535");
        r.ports = {*p};
    } else {
        r.ports.assign(std::begin(kDefaultAllowedPorts), std::end(kDefaultAllowedPorts));
    }
    if (host.empty()) return bad("no host");
    if (parse_address(host, r)) return r;
    if (host.find('/') != std::string_view::npos || host.find(':') != std::string_view::npos)
        return bad("not an address, a range ADDR/PREFIX or a host name");
    if (host.substr(0, 2) == "*.") {
        r.wildcard = true;
        host.remove_prefix(2);
    }
    auto name = normalize_host_name(host);
    if (!name || name->find('*') != std::string::npos) return bad("not a host name (NAME, *.DOMAIN or an address)");
    if (r.wildcard && name->find('.') == std::string::npos) return bad("a wildcard needs a domain: *.example.org");
    r.name = r.wildcard ? "." + *name : *name;
    return r;
}

std::vector<uint16_t> allowed_ports(const std::vector<AllowHost>& rules) {
    std::vector<uint16_t> out;
    for (const auto& r : rules) out.insert(out.end(), r.ports.begin(), r.ports.end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

uint16_t proxy_port(const std::vector<AllowHost>& rules) {
    const auto taken = allowed_ports(rules);
    for (uint16_t p : kProxyPorts) {
        if (!std::binary_search(taken.begin(), taken.end(), p)) return p;
    }
    return 0;
}

bool name_allowed(const std::vector<AllowHost>& rules, std::string_view name, uint16_t port) {
    for (const auto& r : rules) {
        if (r.family != 0 || !has_port(r, port)) continue;
        if (r.wildcard ? name.size() > r.name.size() && name.substr(name.size() - r.name.size()) == r.name
                       : name == r.name)
            return true;
    }
    return false;
}

bool address_allowed(const std::vector<AllowHost>& rules, const struct sockaddr* addr, uint16_t port) {
    const uint8_t* v4 = ipv4_bytes(addr);
    const uint8_t* v6 = addr->sa_family == AF_INET6
                            ? reinterpret_cast<const uint8_t*>(&reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr)
                            : nullptr;
    for (const auto& r : rules) {
        if (!has_port(r, port)) continue;
        if (r.family == AF_INET && v4 && prefix_matches(v4, r.addr, r.prefix)) return true;
        if (r.family == AF_INET6 && v6 && prefix_matches(v6, r.addr, r.prefix)) return true;
    }
    return false;
}

const char* special_range(const struct sockaddr* addr) {
    if (const uint8_t* v4 = ipv4_bytes(addr)) return special_v4(v4);
    if (addr->sa_family != AF_INET6) return "not an internet address";
    return special_v6(reinterpret_cast<const uint8_t*>(&reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr));
}

std::string address_text(const struct sockaddr* addr) {
    char buf[INET6_ADDRSTRLEN] = "?";
    if (addr->sa_family == AF_INET)
        ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, buf, sizeof buf);
    else if (addr->sa_family == AF_INET6)
        ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, buf, sizeof buf);
    return buf;
}

}  // namespace cordon

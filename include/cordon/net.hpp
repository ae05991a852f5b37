// The network allowlist's pure parts (SPEC §6b): --allow-host patterns, the address ranges
// refused unless allowed explicitly, the proxy's HTTP request head parser and the jail's fake
// resolver's DNS messages, and the supervisor's own resolver. No sockets here but the
// resolver's (net_resolve.cpp): src/jail/net/net_proxy.cpp runs the rest.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.hpp"
#include "cordon/spec.hpp"

namespace cordon {

// The ports an --allow-host entry without :PORT allows.
inline constexpr uint16_t kDefaultAllowedPorts[] = {80, 443};
// Sets "lo" up in the caller's network namespace (a new one has it down); the kernel gives it
// 127.0.0.1/8 and ::1. 0, or -1 with errno. The one call here that talks to the kernel
// (src/jail/net/netif.cpp): the jail's and bwrap mode's --unshare-net, as bubblewrap does.
int bring_loopback_up();

// Inside the jail: the proxy for proxy-aware tools (HTTP_PROXY ...) listens on 127.0.0.1 at the
// first of these ports that no --allow-host entry names (the forwarders hold those), the fake
// resolver on 127.0.0.1:53, and an allowed name resolves to an address of kFakeNet/16.
inline constexpr uint16_t kProxyPorts[] = {3128, 8118, 8888, 9128};
inline constexpr uint16_t kDnsPort = 53;
inline constexpr uint8_t kFakeNet[2] = {127, 77};

// One --allow-host value: "NAME[:PORT]", "*.SUFFIX[:PORT]", an IPv4 or [IPv6] address with an
// optional :PORT, or an address range "ADDR/PREFIX" (IPv6 in brackets when a port follows).
// Names are lowercased; a value that is none of these is an error naming it.
Result<AllowHost> parse_allow_host(std::string_view text);
// The ports of the jail's forwarders: every port the entries name, each once, sorted.
std::vector<uint16_t> allowed_ports(const std::vector<AllowHost>& rules);
// The proxy's port in the jail (see kProxyPorts); 0 if all of them are taken.
uint16_t proxy_port(const std::vector<AllowHost>& rules);

// NAME (lowercase, no trailing dot) matched against the name entries: an exact name, or a
// wildcard "*.example.org" that matches any name below example.org (not example.org itself).
bool name_allowed(const std::vector<AllowHost>& rules, std::string_view name, uint16_t port);
// An address entry covers ADDR (sockaddr_in or sockaddr_in6) on PORT.
bool address_allowed(const std::vector<AllowHost>& rules, const struct sockaddr* addr, uint16_t port);
// Lowercase, without a trailing dot; nullopt for what is no host name (empty, bad characters,
// an empty label, over 253 characters).
std::optional<std::string> normalize_host_name(std::string_view name);

// The ranges a name may not resolve into unless an address entry allows it: nullptr for an
// ordinary address, else what the range is ("loopback", "private (RFC 1918)", "cloud metadata",
// ...). IPv4-mapped IPv6 addresses are judged as the IPv4 address. Documentation ranges
// (TEST-NET) are ordinary.
const char* special_range(const struct sockaddr* addr);
// ADDR as text: "192.0.2.1", "2001:db8::1".
std::string address_text(const struct sockaddr* addr);

// The head of a request to the proxy: "CONNECT host:port HTTP/1.1" or an absolute-URI request
// "GET http://host[:port]/path HTTP/1.1" with its headers.
struct ProxyRequest {
    bool connect = false;
    std::string host;  // normalised name or address literal (IPv6 without brackets)
    uint16_t port = 0;
    size_t head_len = 0;  // bytes of the head, its blank line included
    // Plain HTTP: the head to send to the server (origin-form target, the hop-by-hop and Proxy-
    // headers dropped, "Connection: close" added).
    std::string upstream_head;
};
enum class ParseState { Incomplete, Done, Bad };
inline constexpr size_t kMaxRequestHead = size_t{16} * 1024;
// BUF is what the client sent so far. Done fills OUT; Bad sets WHY (for the 400 answer).
ParseState parse_proxy_request(std::string_view buf, ProxyRequest& out, std::string& why);

// A DNS query of one question (what the fake resolver answers).
struct DnsQuestion {
    uint16_t id = 0;
    std::string name;  // normalised
    uint16_t qtype = 0;
    size_t end = 0;  // offset just past the question
};
inline constexpr uint16_t kDnsTypeA = 1;
inline constexpr uint16_t kDnsTypeAAAA = 28;
std::optional<DnsQuestion> parse_dns_query(std::string_view msg);
// The answer to QUERY (its bytes, as parsed into Q): ADDR4 (network order) for an A record,
// or no record with RCODE (0 NOERROR, 3 NXDOMAIN).
std::string dns_answer(std::string_view query, const DnsQuestion& q, uint8_t rcode,
                       std::optional<in_addr> addr4 = std::nullopt);

// The supervisor's own resolver (net_resolve.cpp), without the C library's NSS, which a static
// executable cannot load: /etc/hosts, then the name servers of /etc/resolv.conf. Its pure parts:
// TEXT as an IPv4 or IPv6 address with PORT, if it is one (the proxy's literal hosts too).
std::optional<sockaddr_storage> address_literal(std::string_view text, uint16_t port);
struct ResolvConf {
    std::vector<sockaddr_storage> servers;  // "nameserver" lines, at most 3, port 53 (127.0.0.1 if none)
    int timeout_s = 5;                      // options timeout:N (1..30)
    int attempts = 2;                       // options attempts:N (1..5)
};
ResolvConf parse_resolv_conf(std::string_view text);
// The addresses hosts(5) TEXT gives NAME (normalised), in file order, with PORT.
std::vector<sockaddr_storage> hosts_addresses(std::string_view text, std::string_view name, uint16_t port);
// A query with ID for NAME (normalised) of QTYPE (A or AAAA), recursion desired.
std::string dns_query(uint16_t id, std::string_view name, uint16_t qtype);
struct DnsReply {
    bool ok = false;                          // a well-formed response to that query
    bool truncated = false;                   // TC: the whole answer is over TCP
    uint8_t rcode = 0;                        // 0 NOERROR, 3 NXDOMAIN, ...
    std::vector<sockaddr_storage> addresses;  // NAME's, through the answer's CNAMEs, with PORT
};
// MSG as the response to the query ID for NAME (normalised) of QTYPE: anything else is not ok.
DnsReply parse_dns_reply(std::string_view msg, uint16_t id, std::string_view name, uint16_t qtype, uint16_t port);
// And its sockets (net_resolve.cpp): HOST's addresses with PORT from /etc/hosts, else from the
// name servers of RESOLV_CONF; none if it does not resolve.
std::vector<sockaddr_storage> resolve_name(const std::string& host, uint16_t port,
                                           const std::string& resolv_conf = "/etc/resolv.conf");
// The name servers' part: A and AAAA for NAME (normalised) from each of RC's servers in turn,
// RC.attempts rounds, until one answers (NOERROR or NXDOMAIN).
std::vector<sockaddr_storage> ask_name_servers(const ResolvConf& rc, std::string_view name, uint16_t port);

}  // namespace cordon

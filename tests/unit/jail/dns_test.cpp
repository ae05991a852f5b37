// The supervisor's resolver (cordon/net.hpp): resolv.conf(5), hosts(5), DNS messages, and the
// name servers asked over UDP and TCP, against a small server of the test's own on loopback.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <thread>

#include "cordon/fd.hpp"
#include "cordon/net.hpp"

using namespace cordon;

namespace {

std::string text_of(const sockaddr_storage& ss) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (ss.ss_family == AF_INET) {
        const auto* v4 = reinterpret_cast<const sockaddr_in*>(&ss);
        ::inet_ntop(AF_INET, &v4->sin_addr, buf, sizeof buf);
        return std::string(buf) + ":" + std::to_string(ntohs(v4->sin_port));
    }
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, buf, sizeof buf);
    return "[" + std::string(buf) + "]:" + std::to_string(ntohs(v6->sin6_port));
}

std::vector<std::string> texts(const std::vector<sockaddr_storage>& v) {
    std::vector<std::string> out;
    for (const auto& a : v) out.push_back(text_of(a));
    return out;
}

void put16(std::string& s, uint16_t v) {
    s.push_back(static_cast<char>(v >> 8));
    s.push_back(static_cast<char>(v & 0xff));
}

// A response to QUERY (its question kept): the flags, then RECORDS, already encoded.
std::string response(std::string_view query, uint16_t flags, uint16_t count, const std::string& records) {
    std::string out(query);
    out[2] = static_cast<char>(flags >> 8);
    out[3] = static_cast<char>(flags & 0xff);
    out[6] = static_cast<char>(count >> 8);
    out[7] = static_cast<char>(count & 0xff);
    return out + records;
}

// A record whose owner is the name at offset 12 (a pointer), of TYPE with DATA.
std::string record(uint16_t type, const std::string& data, uint16_t owner = 12) {
    std::string r;
    put16(r, static_cast<uint16_t>(0xc000 | owner));
    put16(r, type);
    put16(r, 1);
    put16(r, 0);
    put16(r, 60);
    put16(r, static_cast<uint16_t>(data.size()));
    return r + data;
}

std::string v4(const char* a) {
    in_addr x{};
    ::inet_pton(AF_INET, a, &x);
    return std::string(reinterpret_cast<const char*>(&x), 4);
}

}  // namespace

TEST_CASE("resolver: resolv.conf and hosts", "[net][dns]") {
    auto rc = parse_resolv_conf(
        "# c\nnameserver 10.0.0.53\nnameserver fe80::1%eth0 ; c\nnameserver bogus\nnameserver 1.1.1.1\n"
        "nameserver 8.8.8.8\noptions ndots:2 timeout:3 attempts:9\n");
    CHECK(texts(rc.servers) == std::vector<std::string>{"10.0.0.53:53", "[fe80::1]:53", "1.1.1.1:53"});
    CHECK((rc.timeout_s == 3 && rc.attempts == 5));
    CHECK(texts(parse_resolv_conf("").servers) == std::vector<std::string>{"127.0.0.1:53"});
    const std::string hosts = "127.0.0.1 localhost\n::1 localhost ip6-localhost\n10.1.2.3 Box.Example box # c\n";
    CHECK(texts(hosts_addresses(hosts, "localhost", 443)) == std::vector<std::string>{"127.0.0.1:443", "[::1]:443"});
    CHECK(texts(hosts_addresses(hosts, "box.example", 80)) == std::vector<std::string>{"10.1.2.3:80"});
    CHECK(hosts_addresses(hosts, "c", 80).empty());
}

TEST_CASE("resolver: a query, and what may answer it", "[net][dns]") {
    const std::string q = dns_query(0x1234, "reg.example.org", kDnsTypeA);
    auto parsed = parse_dns_query(q);
    REQUIRE(parsed);
    CHECK((parsed->id == 0x1234 && parsed->name == "reg.example.org" && parsed->qtype == kDnsTypeA));
    // An address, through a CNAME whose target is spelled out and then pointed to.
    std::string cname;
    cname.push_back(3);
    cname += "cdn";
    cname.push_back(3);
    cname += "net";
    cname.push_back(0);
    const uint16_t target = static_cast<uint16_t>(q.size() + 12);  // the CNAME's data, past its header
    const std::string answer = response(
        q, 0x8180, 3,
        record(5, cname) + record(kDnsTypeA, v4("192.0.2.7"), target) + record(kDnsTypeA, v4("192.0.2.9"), 40));
    auto r = parse_dns_reply(answer, 0x1234, "reg.example.org", kDnsTypeA, 443);
    CHECK(r.ok);
    CHECK(texts(r.addresses) == std::vector<std::string>{"192.0.2.7:443"});  // not 40's owner
    // Not the answer to this query: another id, another name, a query, a loop of pointers.
    CHECK_FALSE(parse_dns_reply(answer, 0x1235, "reg.example.org", kDnsTypeA, 443).ok);
    CHECK_FALSE(parse_dns_reply(answer, 0x1234, "other.org", kDnsTypeA, 443).ok);
    CHECK_FALSE(parse_dns_reply(q, 0x1234, "reg.example.org", kDnsTypeA, 443).ok);
    std::string loop = response(q, 0x8180, 1, record(kDnsTypeA, v4("192.0.2.1"), static_cast<uint16_t>(q.size())));
    CHECK_FALSE(parse_dns_reply(loop, 0x1234, "reg.example.org", kDnsTypeA, 443).ok);
    CHECK_FALSE(parse_dns_reply(answer.substr(0, answer.size() - 2), 0x1234, "reg.example.org", kDnsTypeA, 443).ok);
    auto nx = parse_dns_reply(response(q, 0x8183, 0, ""), 0x1234, "reg.example.org", kDnsTypeA, 443);
    CHECK((nx.ok && nx.rcode == 3 && nx.addresses.empty()));
    CHECK(parse_dns_reply(response(q, 0x8380, 0, ""), 0x1234, "reg.example.org", kDnsTypeA, 443).truncated);
}

TEST_CASE("resolver: the name servers, over UDP and, truncated, over TCP", "[net][dns]") {
    // A server on loopback: A queries get a truncated UDP answer and the whole one over TCP;
    // AAAA gets NOERROR with no record.
    UniqueFd udp(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    UniqueFd tcp(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(udp.get(), reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    socklen_t len = sizeof at;
    ::getsockname(udp.get(), reinterpret_cast<sockaddr*>(&at), &len);
    REQUIRE(::bind(tcp.get(), reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    REQUIRE(::listen(tcp.get(), 4) == 0);
    std::thread server([&] {
        char buf[512];
        for (int served = 0; served < 2;) {
            struct pollfd p = {udp.get(), POLLIN, 0};
            if (::poll(&p, 1, 5000) != 1) return;
            sockaddr_storage from{};
            socklen_t flen = sizeof from;
            const ssize_t n = ::recvfrom(udp.get(), buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &flen);
            const std::string q(buf, static_cast<size_t>(n));
            const auto asked = parse_dns_query(q);
            if (!asked) continue;
            const std::string a = response(q, asked->qtype == kDnsTypeA ? 0x8380 : 0x8180, 0, "");
            ::sendto(udp.get(), a.data(), a.size(), 0, reinterpret_cast<sockaddr*>(&from), flen);
            ++served;
        }
        UniqueFd c(::accept4(tcp.get(), nullptr, nullptr, SOCK_CLOEXEC));
        const ssize_t n = ::read(c.get(), buf, sizeof buf);
        if (n < 14) return;
        const std::string q(buf + 2, static_cast<size_t>(n - 2));
        const std::string a = response(q, 0x8180, 1, record(kDnsTypeA, v4("198.51.100.4")));
        std::string framed{static_cast<char>(a.size() >> 8), static_cast<char>(a.size() & 0xff)};
        framed += a;
        (void)write_all(c.get(), framed.data(), framed.size());
    });
    ResolvConf rc;
    sockaddr_storage server_at{};
    std::memcpy(&server_at, &at, sizeof at);
    rc.servers = {server_at};
    rc.timeout_s = 5;
    rc.attempts = 1;
    const auto got = ask_name_servers(rc, "big.example", 443);
    server.join();
    CHECK(texts(got) == std::vector<std::string>{"198.51.100.4:443"});
    // A server that never answers: nothing, within the timeout.
    UniqueFd mute(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    at.sin_port = 0;
    REQUIRE(::bind(mute.get(), reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    len = sizeof at;
    ::getsockname(mute.get(), reinterpret_cast<sockaddr*>(&at), &len);
    std::memcpy(&server_at, &at, sizeof at);
    rc.servers = {server_at};
    rc.timeout_s = 1;
    CHECK(ask_name_servers(rc, "slow.example", 443).empty());
}

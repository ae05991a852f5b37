// The network allowlist's pure parts (cordon/net.hpp): --allow-host entries, matching, the
// refused ranges, the proxy's request parser and the fake resolver's messages.
#include <arpa/inet.h>

#include <catch2/catch.hpp>

#include "cordon/net.hpp"

using namespace cordon;

namespace {

AllowHost rule(const std::string& text) {
    auto r = parse_allow_host(text);
    REQUIRE(r);
    return *r;
}

std::string parse_error(const std::string& text) {
    auto r = parse_allow_host(text);
    REQUIRE_FALSE(r);
    return r.error().message();
}

sockaddr_storage addr(const char* text) {
    sockaddr_storage ss{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (::inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
    } else {
        REQUIRE(::inet_pton(AF_INET6, text, &v6->sin6_addr) == 1);
        v6->sin6_family = AF_INET6;
    }
    return ss;
}

const char* range_of(const char* text) {
    sockaddr_storage ss = addr(text);
    return special_range(reinterpret_cast<sockaddr*>(&ss));
}

}  // namespace

TEST_CASE("allow-host entries: names, wildcards, ports, addresses") {
    AllowHost a = rule("Registry.Example.ORG");
    CHECK(a.name == "registry.example.org");
    CHECK_FALSE(a.wildcard);
    CHECK(a.ports == std::vector<uint16_t>{80, 443});
    AllowHost w = rule("*.example.org:8443");
    CHECK(w.wildcard);
    CHECK(w.name == ".example.org");
    CHECK(w.ports == std::vector<uint16_t>{8443});
    AllowHost ip = rule("127.0.0.1:8080");
    CHECK(ip.family == AF_INET);
    CHECK(ip.prefix == 32);
    AllowHost net = rule("10.0.0.0/8");
    CHECK(net.prefix == 8);
    AllowHost v6 = rule("[fd00::/8]:443");
    CHECK(v6.family == AF_INET6);
    CHECK(v6.prefix == 8);
    CHECK(rule("::1").family == AF_INET6);
}

TEST_CASE("allow-host entries that are bad name the value") {
    CHECK_THAT(parse_error("example.org:0"), Catch::Contains("'example.org:0'"));
    CHECK_THAT(parse_error("example.org:70000"), Catch::Contains("port"));
    CHECK_THAT(parse_error("example.org:http"), Catch::Contains("port"));
    CHECK_THAT(parse_error("*"), Catch::Contains("--allow-host"));
    CHECK_THAT(parse_error("*.org.*"), Catch::Contains("'*.org.*'"));
    CHECK_THAT(parse_error("*.org"), Catch::Contains("wildcard"));
    CHECK_THAT(parse_error("exa mple.org"), Catch::Contains("not a host name"));
    CHECK_THAT(parse_error("a..b"), Catch::Contains("not a host name"));
    CHECK_THAT(parse_error("10.0.0.0/33"), Catch::Contains("'10.0.0.0/33'"));
    CHECK_THAT(parse_error("[::1"), Catch::Contains("unclosed"));
    CHECK_THAT(parse_error(""), Catch::Contains("no host"));
    CHECK_THAT(parse_error("http://example.org"), Catch::Contains("--allow-host"));
}

TEST_CASE("names match exactly or below a wildcard's domain, on their ports") {
    const std::vector<AllowHost> rules = {rule("registry.example.org"), rule("*.cdn.example.net:8443")};
    CHECK(name_allowed(rules, "registry.example.org", 443));
    CHECK(name_allowed(rules, "registry.example.org", 80));
    CHECK_FALSE(name_allowed(rules, "registry.example.org", 8080));
    CHECK_FALSE(name_allowed(rules, "evil-registry.example.org", 443));
    CHECK_FALSE(name_allowed(rules, "registry.example.org.evil.test", 443));
    CHECK(name_allowed(rules, "a.cdn.example.net", 8443));
    CHECK(name_allowed(rules, "a.b.cdn.example.net", 8443));
    CHECK_FALSE(name_allowed(rules, "cdn.example.net", 8443));
    CHECK_FALSE(name_allowed(rules, "xcdn.example.net", 8443));
    CHECK_FALSE(name_allowed(rules, "a.cdn.example.net", 443));
}

TEST_CASE("the ports: forwarders for each allowed port, the proxy on a free one") {
    const std::vector<AllowHost> rules = {rule("a.test"), rule("b.test:3128"), rule("c.test:443")};
    CHECK(allowed_ports(rules) == std::vector<uint16_t>{80, 443, 3128});
    CHECK(proxy_port(rules) == 8118);
    CHECK(proxy_port({rule("a.test")}) == 3128);
}

TEST_CASE("the refused ranges") {
    CHECK(std::string(range_of("127.0.0.1")) == "loopback");
    CHECK(std::string(range_of("10.1.2.3")) == "private (RFC 1918)");
    CHECK(std::string(range_of("172.31.0.1")) == "private (RFC 1918)");
    CHECK(range_of("172.32.0.1") == nullptr);
    CHECK(std::string(range_of("192.168.1.1")) == "private (RFC 1918)");
    CHECK(std::string(range_of("100.64.0.1")) == "shared address space (CGNAT)");
    CHECK(std::string(range_of("169.254.169.254")) == "cloud metadata");
    CHECK(std::string(range_of("169.254.1.1")) == "link-local");
    CHECK(std::string(range_of("0.0.0.0")) == "unspecified (0.0.0.0/8)");
    CHECK(std::string(range_of("224.0.0.1")) == "multicast");
    CHECK(std::string(range_of("::1")) == "loopback");
    CHECK(std::string(range_of("::")) == "unspecified");
    CHECK(std::string(range_of("fd00:ec2::254")) == "cloud metadata");
    CHECK(std::string(range_of("fd12::1")) == "unique local");
    CHECK(std::string(range_of("fe80::1")) == "link-local");
    CHECK(std::string(range_of("ff02::1")) == "multicast");
    CHECK(std::string(range_of("::ffff:127.0.0.1")) == "loopback");
    CHECK(std::string(range_of("::ffff:169.254.169.254")) == "cloud metadata");
    // Ordinary addresses, the documentation ranges among them.
    CHECK(range_of("203.0.113.80") == nullptr);
    CHECK(range_of("192.0.2.1") == nullptr);
    CHECK(range_of("8.8.8.8") == nullptr);
    CHECK(range_of("2001:db8::1") == nullptr);
    CHECK(range_of("2606:4700::1") == nullptr);
}

TEST_CASE("an address entry allows its range on its ports") {
    const std::vector<AllowHost> rules = {rule("127.0.0.1:8080"), rule("10.0.0.0/8"), rule("a.test")};
    sockaddr_storage lo = addr("127.0.0.1");
    sockaddr_storage lo2 = addr("127.0.0.2");
    sockaddr_storage ten = addr("10.9.8.7");
    sockaddr_storage mapped = addr("::ffff:10.9.8.7");
    CHECK(address_allowed(rules, reinterpret_cast<sockaddr*>(&lo), 8080));
    CHECK_FALSE(address_allowed(rules, reinterpret_cast<sockaddr*>(&lo), 80));
    CHECK_FALSE(address_allowed(rules, reinterpret_cast<sockaddr*>(&lo2), 8080));
    CHECK(address_allowed(rules, reinterpret_cast<sockaddr*>(&ten), 443));
    CHECK(address_allowed(rules, reinterpret_cast<sockaddr*>(&mapped), 443));
}

TEST_CASE("proxy requests: CONNECT") {
    ProxyRequest r;
    std::string why;
    CHECK(parse_proxy_request("CONNECT a.test:443 HTTP/1.1\r\nHost: a", r, why) == ParseState::Incomplete);
    const std::string head = "CONNECT Reg.Example.org:443 HTTP/1.1\r\nHost: reg.example.org:443\r\n\r\nTLS";
    REQUIRE(parse_proxy_request(head, r, why) == ParseState::Done);
    CHECK(r.connect);
    CHECK(r.host == "reg.example.org");
    CHECK(r.port == 443);
    CHECK(head.substr(r.head_len) == "TLS");
    REQUIRE(parse_proxy_request("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n", r, why) == ParseState::Done);
    CHECK(r.host == "::1");
    CHECK(r.port == 8443);
    CHECK(parse_proxy_request("CONNECT a.test HTTP/1.1\r\n\r\n", r, why) == ParseState::Bad);
    CHECK(parse_proxy_request("CONNECT a.test:0 HTTP/1.1\r\n\r\n", r, why) == ParseState::Bad);
    CHECK(parse_proxy_request("CONNECT a.test:99999 HTTP/1.1\r\n\r\n", r, why) == ParseState::Bad);
}

TEST_CASE("proxy requests: plain HTTP is rewritten to origin form") {
    ProxyRequest r;
    std::string why;
    const std::string head =
        "GET http://a.test:8080/x/y?z=1 HTTP/1.1\r\nHost: a.test:8080\r\nProxy-Connection: keep-alive\r\n"
        "Connection: keep-alive\r\nAccept: */*\r\n\r\n";
    REQUIRE(parse_proxy_request(head, r, why) == ParseState::Done);
    CHECK_FALSE(r.connect);
    CHECK(r.host == "a.test");
    CHECK(r.port == 8080);
    CHECK(r.upstream_head == "GET /x/y?z=1 HTTP/1.1\r\nHost: a.test:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n");
    REQUIRE(parse_proxy_request("HEAD http://b.test HTTP/1.0\r\n\r\n", r, why) == ParseState::Done);
    CHECK(r.port == 80);
    CHECK(r.upstream_head == "HEAD / HTTP/1.0\r\nHost: b.test\r\nConnection: close\r\n\r\n");
    // The Host the server sees is the URL's, never another the client names.
    REQUIRE(parse_proxy_request("GET http://b.test:81/ HTTP/1.1\r\nHost: evil.invalid:82\r\nhOsT: x\r\n\r\n", r, why) ==
            ParseState::Done);
    CHECK(r.upstream_head == "GET / HTTP/1.1\r\nHost: b.test:81\r\nConnection: close\r\n\r\n");
    REQUIRE(parse_proxy_request("GET http://b.test?q HTTP/1.1\r\n\r\n", r, why) == ParseState::Done);
    CHECK(r.upstream_head.rfind("GET /?q HTTP/1.1\r\n", 0) == 0);
}

TEST_CASE("proxy requests that are refused as malformed") {
    ProxyRequest r;
    std::string why;
    CHECK(parse_proxy_request("GET / HTTP/1.1\r\n\r\n", r, why) == ParseState::Bad);
    CHECK_THAT(why, Catch::Contains("CONNECT"));
    CHECK(parse_proxy_request("GET https://a.test/ HTTP/1.1\r\n\r\n", r, why) == ParseState::Bad);
    CHECK(parse_proxy_request("GET http://user@a.test/ HTTP/1.1\r\n\r\n", r, why) == ParseState::Bad);
    CHECK(parse_proxy_request("GET http://a b/ HTTP/1.1\r\n\r\n", r, why) == ParseState::Bad);
    CHECK(parse_proxy_request("get http://a.test/ HTTP/1.1\r\n\r\n", r, why) == ParseState::Bad);
    CHECK(parse_proxy_request("GET http://a.test/ HTTP/1.1\r\nNoColon\r\n\r\n", r, why) == ParseState::Bad);
    CHECK(parse_proxy_request("GET http://a.test/ FTP/1\r\n\r\n", r, why) == ParseState::Bad);
    CHECK(parse_proxy_request(std::string(kMaxRequestHead, 'a'), r, why) == ParseState::Bad);
}

TEST_CASE("the fake resolver's messages") {
    // A query for A "a.test" with id 0x1234, recursion desired.
    const std::string q(
        "\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x01"
        "a\x04test\x00\x00\x01\x00\x01",
        12 + 8 + 4);
    auto parsed = parse_dns_query(q);
    REQUIRE(parsed);
    CHECK(parsed->id == 0x1234);
    CHECK(parsed->name == "a.test");
    CHECK(parsed->qtype == kDnsTypeA);
    in_addr a{};
    ::inet_pton(AF_INET, "127.77.0.1", &a);
    const std::string ans = dns_answer(q, *parsed, 0, a);
    CHECK(ans.size() == q.size() + 16);
    CHECK(static_cast<uint8_t>(ans[2]) == 0x85);
    CHECK(static_cast<uint8_t>(ans[3]) == 0x80);
    CHECK(ans[7] == 1);
    CHECK(ans.substr(ans.size() - 4) == std::string("\x7f\x4d\x00\x01", 4));
    const std::string nx = dns_answer(q, *parsed, 3);
    CHECK((static_cast<uint8_t>(nx[3]) & 0x0f) == 3);
    CHECK(nx[7] == 0);
    CHECK_FALSE(parse_dns_query(q.substr(0, 15)));
    std::string response = q;
    response[2] = static_cast<char>(0x81);
    CHECK_FALSE(parse_dns_query(response));
    std::string compressed = q;
    compressed[12] = static_cast<char>(0xc0);
    CHECK_FALSE(parse_dns_query(compressed));
}

// The network filter's parsers: a proxy request head, a DNS query, an --allow-host value, and
// the resolver's name server responses, resolv.conf and hosts files, each from the same bytes. Any input must give a
// value or a clear refusal: no crash, no leak, no hang; what the parsers accept must hold together.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cordon/net.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    cordon::ProxyRequest req;
    std::string why;
    const cordon::ParseState st = cordon::parse_proxy_request(text, req, why);
    if (st == cordon::ParseState::Done) {
        // A head that parses names a host and a port, and lies within the input.
        if (req.host.empty() || req.port == 0 || req.head_len > size) std::abort();
        if (!req.connect && (req.upstream_head.size() < 4 ||
                             req.upstream_head.compare(req.upstream_head.size() - 4, 4, "\r\n\r\n") != 0))
            std::abort();
    } else if (st == cordon::ParseState::Bad && why.empty() && size < cordon::kMaxRequestHead) {
        std::abort();
    }
    if (auto q = cordon::parse_dns_query(text)) {
        if (q->end > size) std::abort();
        const std::string a = cordon::dns_answer(text, *q, 0, in_addr{0x0100007f});
        if (a.size() != q->end + 16) std::abort();
    }
    (void)cordon::parse_allow_host(text);
    // The resolver's: a name server's response (as the answer to a query of its own id and
    // name), resolv.conf and hosts files. Each address it gives is one of the query's type.
    if (size >= 2) {
        const auto id = static_cast<uint16_t>((data[0] << 8) | data[1]);
        for (uint16_t qtype : {cordon::kDnsTypeA, cordon::kDnsTypeAAAA}) {
            const auto r = cordon::parse_dns_reply(text, id, "a.example", qtype, 443);
            if (!r.ok && !r.addresses.empty()) std::abort();
            for (const auto& a : r.addresses) {
                if (a.ss_family != (qtype == cordon::kDnsTypeA ? AF_INET : AF_INET6)) std::abort();
            }
        }
    }
    if (cordon::parse_resolv_conf(text).servers.empty()) std::abort();
    (void)cordon::hosts_addresses(text, "a.example", 80);
    return 0;
}

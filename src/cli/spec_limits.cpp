// The limits of build_spec (spec_steps.hpp): --timeout, the cgroup limits and --rlimit.
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "spec_steps.hpp"

namespace cordon {

Result<uint64_t> parse_cpus(const std::string& text) {
    auto bad = [&](const std::string& why) { return make_error("--cpus", "invalid value '" + text + "': " + why); };
    size_t dot = text.find('.');
    std::string whole = text.substr(0, dot);
    std::string frac = dot == std::string::npos ? "" : text.substr(dot + 1);
    auto digits = [](const std::string& d) {
        return std::all_of(d.begin(), d.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    };
    if ((whole.empty() && frac.empty()) || !digits(whole) || !digits(frac) ||
        (dot != std::string::npos && frac.empty())) {
        return bad("expected a number of CPUs such as 0.5, 1 or 2.5");
    }
    if (whole.size() > 5) return bad("too large");
    if (frac.size() > 5) frac.resize(5);  // finer than 1 microsecond per 100 ms period
    while (frac.size() < 5) frac += '0';
    uint64_t quota = (whole.empty() ? 0 : std::stoull(whole)) * CgroupLimits::kCpuPeriodUs + std::stoull(frac);
    if (quota < CgroupLimits::kCpuPeriodUs / 100) return bad("at least 0.01");
    return quota;
}

namespace {

struct RlimitName {
    const char* name;
    int resource;
};
constexpr RlimitName kRlimits[] = {
    {"as", RLIMIT_AS},           {"core", RLIMIT_CORE},         {"cpu", RLIMIT_CPU},
    {"data", RLIMIT_DATA},       {"fsize", RLIMIT_FSIZE},       {"locks", RLIMIT_LOCKS},
    {"memlock", RLIMIT_MEMLOCK}, {"msgqueue", RLIMIT_MSGQUEUE}, {"nice", RLIMIT_NICE},
    {"nofile", RLIMIT_NOFILE},   {"nproc", RLIMIT_NPROC},       {"rss", RLIMIT_RSS},
    {"rtprio", RLIMIT_RTPRIO},   {"rttime", RLIMIT_RTTIME},     {"sigpending", RLIMIT_SIGPENDING},
    {"stack", RLIMIT_STACK},
};

Result<uint64_t> parse_rlimit_value(const std::string& v) {
    if (v == "unlimited" || v == "infinity") return static_cast<uint64_t>(RLIM_INFINITY);
    return parse_size(v);
}

// --memory, --memory-swap, --pids, --cpus and --limits (SPEC §7).
Result<CgroupLimits> parse_limits(const SettingsLayer& merged) {
    CgroupLimits l;
    if (auto m = get_quantity(merged, "memory")) {
        if (m->value < (1ULL << 20)) return make_error("--memory", "invalid value '" + m->text + "': at least 1M");
        l.memory = m->value;
    }
    if (auto m = get_string(merged, "memory-swap")) {
        if (*m == "max") {
            l.memory_swap = UINT64_MAX;
        } else {
            auto r = parse_size(*m);
            if (!r) return make_error("--memory-swap", r.error().what + ": " + r.error().why + " (or 'max')");
            l.memory_swap = *r;
        }
        if (!l.memory) return make_error("--memory-swap", "only makes sense with --memory");
    }
    if (auto p = get_uint(merged, "pids")) {
        if (*p < 1) return make_error("--pids", "invalid value '0': at least 1");
        l.pids = *p;
    }
    if (auto c = get_string(merged, "cpus")) {
        CORDON_ASSIGN_OR_RETURN(l.cpu_quota_us, parse_cpus(*c));
    }
    if (auto mode = get_string(merged, "limits")) {
        if (*mode != "required" && *mode != "best-effort") {
            return make_error("--limits", "invalid value '" + *mode + "': expected required or best-effort");
        }
        l.best_effort = *mode == "best-effort";
    }
    return l;
}

Result<Rlimit> parse_rlimit(const std::string& text) {
    auto bad = [&](const std::string& why) { return make_error("--rlimit", "invalid value '" + text + "': " + why); };
    size_t eq = text.find('=');
    if (eq == std::string::npos) return bad("expected NAME=SOFT[:HARD]");
    std::string name = text.substr(0, eq);
    std::string rest = text.substr(eq + 1);
    const RlimitName* found = nullptr;
    for (const auto& r : kRlimits) {
        if (name == r.name || ("RLIMIT_" + std::string(r.name)) == name) found = &r;
    }
    if (!found)
        return bad("unknown limit '" + name + "' (as, core, cpu, data, fsize, memlock, nofile, nproc, stack, ...)");
    size_t colon = rest.find(':');
    auto soft = parse_rlimit_value(rest.substr(0, colon));
    if (!soft) return bad(soft.error().why.empty() ? soft.error().what : soft.error().why);
    uint64_t hard = *soft;
    if (colon != std::string::npos) {
        auto h = parse_rlimit_value(rest.substr(colon + 1));
        if (!h) return bad(h.error().why.empty() ? h.error().what : h.error().why);
        hard = *h;
    }
    if (soft.value() > hard) return bad("the soft limit is above the hard limit");
    return Rlimit{found->resource, found->name, *soft, hard};
}

}  // namespace

namespace spec_steps {

// --timeout, the cgroup limits and --rlimit.
Status set_limits(const SettingsLayer& merged, Spec& s) {
    if (auto t = get_quantity(merged, "timeout")) s.timeout_ms = t->value;
    CORDON_ASSIGN_OR_RETURN(s.limits, parse_limits(merged));
    s.rlimits.push_back(Rlimit{RLIMIT_CORE, "core", 0, 0});  // core dumps off unless asked
    for (const auto& text : get_list(merged, "rlimit")) {
        CORDON_ASSIGN_OR_RETURN(const Rlimit r, parse_rlimit(text));
        std::erase_if(s.rlimits, [&](const Rlimit& x) { return x.resource == r.resource; });
        s.rlimits.push_back(r);
    }
    return {};
}

}  // namespace spec_steps
}  // namespace cordon

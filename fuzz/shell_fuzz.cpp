// Shell text -> parser -> analyser -> default policy. Any input must give a value or a clear
// error: no crash, no leak, no hang.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cordon/policy.hpp"
#include "cordon/policy/analyze.hpp"
#include "cordon/policy/shell.hpp"

namespace {

const cordon::policy::PolicySet& policy() {
    static const cordon::policy::PolicySet set = [] {
        auto r = cordon::policy::load({CORDON_DEFAULT_POLICY});
        if (!r) {
            std::fprintf(stderr, "%s\n", r.error().message().c_str());
            std::abort();
        }
        return std::move(*r);
    }();
    return set;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    auto parsed = cordon::policy::parse_script(text);
    if (!parsed && parsed.error().what.empty()) std::abort();  // errors always carry a position
    auto invs = cordon::policy::analyze_script(text, "/home/user/project", "/home/user");
    (void)invs;
    auto d = policy().check_script(text, "/home/user/project", "/home/user");
    if (!d.allow && d.rule_id.empty()) std::abort();
    // The same bytes as one argv element: never parsed as shell text.
    auto a = policy().check_argv({"echo", text}, "/", "/home/user");
    if (!a.allow) std::abort();
    return 0;
}

// Policy file text -> loader -> examples and a check. Malformed files must be errors that name
// FILE:LINE:COLUMN; well-formed ones must be usable.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "cordon/policy.hpp"
#include "cordon/policy/rules.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    auto p = cordon::policy::parse_policy(text, "fuzz.toml");
    if (!p) {
        if (p.error().what.rfind("fuzz.toml:", 0) != 0) std::abort();
        return 0;
    }
    auto failures = cordon::policy::run_examples(*p);
    (void)failures;
    cordon::policy::PolicySet set;
    set.add(std::make_shared<const cordon::policy::Policy>(std::move(*p)));
    auto d = set.check_script("sudo rm -rf / ; ls | xargs rm ; dd of=/dev/sda", "/", "/root");
    (void)d;
    return 0;
}

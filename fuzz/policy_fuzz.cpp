// Policy file text -> loader -> examples and a check. Malformed files must be errors that name
// FILE:LINE:COLUMN; well-formed ones must be usable. And parse_toml, which drops comment-only
// lines before toml++ reads the text, must make of it what toml++ makes of it whole: the same
// table, or the same error at the same line and column.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include "cordon/policy.hpp"
#include "cordon/policy/rules.hpp"
#include "cordon/toml.hpp"

namespace {

std::string raw_toml(const std::string& text) {
    try {
        std::ostringstream out;
        out << toml::parse(std::string_view(text), std::string_view("x"));
        return out.str();
    } catch (const toml::parse_error& e) {
        return "x:" + std::to_string(e.source().begin.line) + ":" + std::to_string(e.source().begin.column) + ": " +
               std::string(e.description());
    }
}

std::string cordon_toml(const std::string& text) {
    auto tbl = cordon::parse_toml(text, "x");
    if (!tbl) return tbl.error().what + ": " + tbl.error().why;
    std::ostringstream out;
    out << *tbl;
    return out.str();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    // Only text that the shield leaves as it is: toml++ must not see the rest (toml.hpp).
    if (auto shielded = cordon::shield_unicode(text); shielded && *shielded == text) {
        if (raw_toml(text) != cordon_toml(text)) std::abort();
    }
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

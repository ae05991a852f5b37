// The git-config reader that judges what a run leaves (leftovers.hpp): any bytes give entries
// and an error line, or none; no crash, leak or hang. What it says must hold together: entries
// come in line order, and git_config_unsafe names a finding whenever a key is unsafe or the text
// cannot be read.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cordon/git_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const cordon::GitConfigParse p = cordon::parse_git_config(text);
    int last = 0;
    bool unsafe = p.error_line != 0;
    for (const auto& e : p.entries) {
        if (e.line < last || e.line < 1) std::abort();
        if (p.error_line != 0 && e.line > p.error_line) std::abort();
        last = e.line;
        if (!cordon::git_config_key_safe(e.key)) unsafe = true;
    }
    if (unsafe == cordon::git_config_unsafe(text).empty()) std::abort();
    return 0;
}

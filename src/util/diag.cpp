// The diagnostics sink (cordon/diag.hpp).
#include "cordon/diag.hpp"

#include <atomic>
#include <cstdio>
#include <string>

namespace cordon::diag {

namespace {

// Set by main before any thread starts; read by the network filter's threads too.
std::atomic<int> g_verbosity{0};

void write_whole(std::string_view text) {
    (void)std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace

void set_verbosity(int level) {
    g_verbosity.store(level, std::memory_order_relaxed);
}

int verbosity() {
    return g_verbosity.load(std::memory_order_relaxed);
}

bool shown(Show show) {
    switch (show) {
        case Show::Always:
            return true;
        case Show::Normal:
            return verbosity() >= 0;
        case Show::Verbose:
            return verbosity() > 0;
    }
    return true;
}

void write_line(Show show, std::string_view line) {
    if (!shown(show)) return;
    std::string out;
    out.reserve(line.size() + 1);
    out.append(line).push_back('\n');
    write_whole(out);
}

void error(const Error& e) {
    write_line(Show::Always, e.message());
}

namespace detail {

void vline(Show show, std::string_view label, fmt::string_view format, fmt::format_args args) {
    if (!shown(show)) return;
    fmt::memory_buffer out;
    const std::string_view prefix = "cordon: ";
    out.append(prefix.data(), prefix.data() + prefix.size());
    out.append(label.data(), label.data() + label.size());
    fmt::vformat_to(fmt::appender(out), format, args);
    out.push_back('\n');
    write_whole({out.data(), out.size()});
}

}  // namespace detail

}  // namespace cordon::diag

// The diagnostics sink: every line cordon itself says on stderr (errors, denials, notes,
// warnings, -v's lines), each written whole by one call, and shown or not by the verbosity that
// main sets once from the command line (-q, -v) rather than by each caller. The supervisor's
// threads (the network filter) print through it too. It allocates: never for the jail's
// processes after clone, which report over the sync socket instead.
#pragma once

#include <fmt/format.h>

#include <string_view>

#include "cordon/error.hpp"

namespace cordon::diag {

// Who sees a line: everyone (errors, denials, what -q still says), all but -q, or -v alone.
enum class Show { Always, Normal, Verbose };

// -1 quiet (-q), 0 normal, 1+ verbose (-v), as the command line gives it; 0 until it is set.
void set_verbosity(int level);
[[nodiscard]] int verbosity();
[[nodiscard]] bool shown(Show show);

// LINE as it is and a newline on stderr, in one write, if SHOW is shown at the verbosity set.
void write_line(Show show, std::string_view line);

// E's message (cordon/error.hpp: "cordon: ...", possibly several lines), always.
void error(const Error& e);

namespace detail {
// "cordon: " LABEL, then FORMAT with ARGS, as one line if SHOW is shown (formatted only then).
void vline(Show show, std::string_view label, fmt::string_view format, fmt::format_args args);
}  // namespace detail

// "cordon: TEXT", shown as SHOW says: the lines with a label of their own ("timeout: ...",
// "network: ...", "jail: ...").
template <typename... Args>
void line(Show show, fmt::format_string<Args...> format, Args&&... args) {
    detail::vline(show, "", format, fmt::make_format_args(args...));
}

// "cordon: TEXT", always.
template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
    detail::vline(Show::Always, "", format, fmt::make_format_args(args...));
}

// "cordon: warning: TEXT", but not under -q.
template <typename... Args>
void warning(fmt::format_string<Args...> format, Args&&... args) {
    detail::vline(Show::Normal, "warning: ", format, fmt::make_format_args(args...));
}

// "cordon: note: TEXT", but not under -q.
template <typename... Args>
void note(fmt::format_string<Args...> format, Args&&... args) {
    detail::vline(Show::Normal, "note: ", format, fmt::make_format_args(args...));
}

// "cordon: note: TEXT", under -v only.
template <typename... Args>
void verbose(fmt::format_string<Args...> format, Args&&... args) {
    detail::vline(Show::Verbose, "note: ", format, fmt::make_format_args(args...));
}

}  // namespace cordon::diag

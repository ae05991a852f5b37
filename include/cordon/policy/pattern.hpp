// Words after expansion (fields) and path patterns: what a command line operand may denote.
// A value the analyser cannot know statically stays in the field as an Unknown piece, and a path
// pattern keeps it as "any string", so matching asks "may this operand be that path?".
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.hpp"

namespace cordon::policy {

struct Piece {
    enum class Kind : unsigned char { Lit, Glob, Unknown };
    Kind kind = Kind::Lit;
    std::string text;  // Lit: the characters; Glob: unquoted glob syntax; Unknown: how it was written
};

// One argument after expansion (one argv element, or what it may be).
struct Field {
    std::vector<Piece> pieces;

    static Field lit(std::string_view s);
    static Field unknown(std::string_view label = "<unknown>");
    void add(Piece::Kind kind, std::string_view s);
    // True when every piece is literal: the field is exactly static_text().
    [[nodiscard]] bool is_static() const;
    [[nodiscard]] bool has_unknown() const;
    [[nodiscard]] std::string static_text() const;             // as written; exact when is_static()
    [[nodiscard]] bool starts_with(std::string_view s) const;  // a literal prefix
    // The field with its first N literal characters removed (N within the first piece).
    [[nodiscard]] Field drop_prefix(size_t n) const;
};

struct Tok {
    enum class Kind : unsigned char { Ch, One, Star, Any };  // char, ?, * (no '/'), anything
    Kind kind = Kind::Ch;
    char c = 0;
    bool operator==(const Tok&) const = default;
};
using Pattern = std::vector<Tok>;

// An operand resolved to an absolute, normalised path pattern ('.', '..', '//', trailing '/'
// removed; relative paths joined to CWD; unknown parts kept). When the last component is a
// bare '*' ("every child of DIR"), all_children holds DIR.
struct PathOperand {
    Pattern path;
    Pattern all_children;
    bool has_all_children = false;
};

Pattern literal_pattern(std::string_view s);
PathOperand resolve_path(const Field& f, const Pattern& cwd);

// A path pattern from a policy file: '~', '$HOME' and '${HOME}' at the start mean HOME;
// '*' and '?' and [...] match within one component, '**' matches anything.
Result<Pattern> compile_policy_path(std::string_view text, std::string_view home);

// Whether some string matches both patterns.
bool may_overlap(const Pattern& a, const Pattern& b);
bool may_denote(const PathOperand& op, const Pattern& target);

std::string to_string(const Pattern& p);

}  // namespace cordon::policy

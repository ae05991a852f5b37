#include "cordon/policy/pattern.hpp"

#include <algorithm>
#include <string_view>

namespace cordon::policy {

Field Field::lit(std::string_view s) {
    Field f;
    f.add(Piece::Kind::Lit, s);
    return f;
}

Field Field::unknown(std::string_view label) {
    Field f;
    f.pieces.push_back({Piece::Kind::Unknown, std::string(label)});
    return f;
}

void Field::add(Piece::Kind kind, std::string_view s) {
    if (s.empty() && kind != Piece::Kind::Unknown) return;
    if (kind != Piece::Kind::Unknown && !pieces.empty() && pieces.back().kind == kind) {
        pieces.back().text.append(s);
        return;
    }
    pieces.push_back({kind, std::string(s)});
}

bool Field::is_static() const {
    for (const auto& p : pieces) {
        if (p.kind != Piece::Kind::Lit) return false;
    }
    return true;
}

bool Field::has_unknown() const {
    for (const auto& p : pieces) {
        if (p.kind == Piece::Kind::Unknown) return true;
    }
    return false;
}

std::string Field::static_text() const {
    std::string out;
    for (const auto& p : pieces) out += p.text;
    return out;
}

bool Field::starts_with(std::string_view s) const {
    return !pieces.empty() && pieces[0].kind == Piece::Kind::Lit &&
           std::string_view(pieces[0].text).substr(0, s.size()) == s;
}

Field Field::drop_prefix(size_t n) const {
    Field f = *this;
    if (f.pieces.empty()) return f;
    f.pieces[0].text.erase(0, n);
    if (f.pieces[0].text.empty()) f.pieces.erase(f.pieces.begin());
    return f;
}

Pattern literal_pattern(std::string_view s) {
    Pattern p;
    p.reserve(s.size());
    for (char c : s) p.push_back({Tok::Kind::Ch, c});
    return p;
}

namespace {

// Glob syntax to tokens. any_double: '**' means "anything" (policy files, bash globstar).
void glob_tokens(std::string_view g, Pattern& out) {
    for (size_t i = 0; i < g.size(); ++i) {
        char c = g[i];
        if (c == '*') {
            if (i + 1 < g.size() && g[i + 1] == '*') {
                while (i + 1 < g.size() && g[i + 1] == '*') ++i;
                out.push_back({Tok::Kind::Any, 0});
            } else {
                out.push_back({Tok::Kind::Star, 0});
            }
        } else if (c == '?') {
            out.push_back({Tok::Kind::One, 0});
        } else if (c == '[') {
            size_t close = g.find(']', i + 2);
            if (close == std::string_view::npos) {
                out.push_back({Tok::Kind::Ch, c});
            } else {
                out.push_back({Tok::Kind::One, 0});
                i = close;
            }
        } else {
            out.push_back({Tok::Kind::Ch, c});
        }
    }
}

bool is_slash(const Tok& t) {
    return t.kind == Tok::Kind::Ch && t.c == '/';
}
bool is_dot(const Tok& t) {
    return t.kind == Tok::Kind::Ch && t.c == '.';
}

Pattern normalise(const Pattern& in, bool* all_children, Pattern* parent, const Pattern* cwd = nullptr);

// Whether the component of OUT that starts at START is exactly the literal WORD.
bool component_is(const Pattern& out, size_t start, size_t end, std::string_view word) {
    if (end - start != word.size() + 1) return false;
    for (size_t k = 0; k < word.size(); ++k) {
        const Tok& t = out[start + 1 + k];
        if (t.kind != Tok::Kind::Ch || t.c != word[k]) return false;
    }
    return true;
}

// /proc/PID/root is the process's root directory and /proc/self/cwd (or thread-self) the
// checked command's own working directory: the path so far, /proc/X/root or /proc/X/cwd,
// becomes / or CWD (another process's working directory is unknown).
void proc_links(Pattern& out, std::vector<size_t>& starts, const Pattern& cwd) {
    if (starts.size() != 3 || !component_is(out, starts[0], starts[1], "proc")) return;
    const bool me =
        component_is(out, starts[1], starts[2], "self") || component_is(out, starts[1], starts[2], "thread-self");
    if (component_is(out, starts[2], out.size(), "root")) {
        out.clear();
        starts.clear();
    } else if (component_is(out, starts[2], out.size(), "cwd")) {
        const bool absolute = !cwd.empty() && cwd[0].kind == Tok::Kind::Ch && cwd[0].c == '/';
        out = me && absolute ? normalise(cwd, nullptr, nullptr) : Pattern{{Tok::Kind::Ch, '/'}, {Tok::Kind::Any, 0}};
        if (out.size() == 1) out.clear();  // "/"
        starts.clear();
        for (size_t k = 0; k < out.size(); ++k) {
            if (out[k].kind == Tok::Kind::Ch && out[k].c == '/') starts.push_back(k);
        }
    }
}

// Lexically normalise an absolute token path: '.', '..', '//' and a trailing '/' go away.
// A '..' after a component that may span several ("**") makes the whole path unknown. For an
// operand (CWD given, normalised), /proc/PID/root and /proc/self/cwd are followed (proc_links).
Pattern normalise(const Pattern& in, bool* all_children, Pattern* parent, const Pattern* cwd) {
    Pattern out;
    out.reserve(in.size() + 1);
    std::vector<size_t> starts;  // where each kept component's '/' is in out
    size_t i = 0;
    while (i < in.size()) {
        if (is_slash(in[i])) {
            ++i;
            continue;
        }
        size_t j = i;
        while (j < in.size() && !is_slash(in[j])) ++j;
        size_t len = j - i;
        if (len == 1 && is_dot(in[i])) {
        } else if (len == 2 && is_dot(in[i]) && is_dot(in[i + 1])) {
            if (!starts.empty()) {
                bool spans = std::any_of(out.begin() + static_cast<std::ptrdiff_t>(starts.back()), out.end(),
                                         [](const Tok& t) { return t.kind == Tok::Kind::Any; });
                if (spans) {
                    out.assign({{Tok::Kind::Ch, '/'}, {Tok::Kind::Any, 0}});
                    starts.assign(1, 0);
                } else {
                    out.resize(starts.back());
                    starts.pop_back();
                }
            }
        } else {
            starts.push_back(out.size());
            out.push_back({Tok::Kind::Ch, '/'});
            out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(i),
                       in.begin() + static_cast<std::ptrdiff_t>(j));
            if (cwd) proc_links(out, starts, *cwd);
        }
        i = j;
    }
    if (all_children) {
        *all_children = !starts.empty() && out.size() - starts.back() == 2 && out.back().kind == Tok::Kind::Star;
        if (*all_children) {
            parent->assign(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(starts.back()));
            if (parent->empty()) parent->push_back({Tok::Kind::Ch, '/'});
        }
    }
    if (out.empty()) out.push_back({Tok::Kind::Ch, '/'});
    return out;
}

}  // namespace

PathOperand resolve_path(const Field& f, const Pattern& cwd) {
    Pattern raw;
    for (const auto& p : f.pieces) {
        switch (p.kind) {
            case Piece::Kind::Lit:
                for (char c : p.text) raw.push_back({Tok::Kind::Ch, c});
                break;
            case Piece::Kind::Glob:
                glob_tokens(p.text, raw);
                break;
            case Piece::Kind::Unknown:
                raw.push_back({Tok::Kind::Any, 0});
                break;
        }
    }
    PathOperand op;
    if (!raw.empty() && raw[0].kind == Tok::Kind::Any) {
        // An unknown start may be absolute or relative; "anything" covers both.
        raw.insert(raw.begin(), {Tok::Kind::Ch, '/'});
    } else if (raw.empty() || !(raw[0].kind == Tok::Kind::Ch && raw[0].c == '/')) {
        Pattern joined = cwd;
        joined.push_back({Tok::Kind::Ch, '/'});
        joined.insert(joined.end(), raw.begin(), raw.end());
        raw = std::move(joined);
    }
    op.path = normalise(raw, &op.has_all_children, &op.all_children, &cwd);
    if (op.path.size() == 2 && op.path[0].c == '/' && op.path[1].kind == Tok::Kind::Any) {
        op.path.erase(op.path.begin());  // "/**" from an unknown start: also relative spellings
    }
    return op;
}

Result<Pattern> compile_policy_path(std::string_view text, std::string_view home) {
    Pattern raw;
    std::string_view rest = text;
    if (rest == "~" || rest.substr(0, 2) == "~/") {
        rest.remove_prefix(1);
    } else if (rest.substr(0, 7) == "${HOME}") {
        rest.remove_prefix(7);
    } else if (rest.substr(0, 5) == "$HOME" && (rest.size() == 5 || rest[5] == '/')) {
        rest.remove_prefix(5);
    } else if (rest.empty() || rest[0] != '/') {
        return make_error(std::string(text), "a path pattern must be absolute or start with ~ or ${HOME}");
    } else {
        home = {};
    }
    for (char c : home) raw.push_back({Tok::Kind::Ch, c});
    glob_tokens(rest, raw);
    if (raw.empty() || raw[0].kind != Tok::Kind::Ch || raw[0].c != '/') raw.insert(raw.begin(), {Tok::Kind::Ch, '/'});
    return normalise(raw, nullptr, nullptr);
}

bool may_overlap(const Pattern& a, const Pattern& b) {
    // Literal prefixes and suffixes decide most pairs without the full product below.
    auto lit = [](const Tok& t) { return t.kind == Tok::Kind::Ch; };
    for (size_t i = 0; i < a.size() && i < b.size() && lit(a[i]) && lit(b[i]); ++i) {
        if (a[i].c != b[i].c) return false;
    }
    for (size_t i = 1; i <= a.size() && i <= b.size() && lit(a[a.size() - i]) && lit(b[b.size() - i]); ++i) {
        if (a[a.size() - i].c != b[b.size() - i].c) return false;
    }
    const size_t n = a.size(), m = b.size();
    // reach[i][j]: a[0..i) and b[0..j) can produce the same string.
    thread_local std::vector<unsigned char> reach;
    reach.assign((n + 1) * (m + 1), 0);
    auto R = [&](size_t i, size_t j) -> unsigned char& { return reach[i * (m + 1) + j]; };
    auto star = [](const Tok& t) { return t.kind == Tok::Kind::Star || t.kind == Tok::Kind::Any; };
    // Can star-like token S consume the single character that token T produces?
    auto eats = [](const Tok& s, const Tok& t) {
        if (s.kind == Tok::Kind::Any) return true;
        return !(t.kind == Tok::Kind::Ch && t.c == '/');
    };
    auto same_char = [](const Tok& x, const Tok& y) {
        if (x.kind == Tok::Kind::Ch && y.kind == Tok::Kind::Ch) return x.c == y.c;
        if (x.kind == Tok::Kind::Ch) return x.c != '/';
        if (y.kind == Tok::Kind::Ch) return y.c != '/';
        return true;
    };
    R(0, 0) = 1;
    for (size_t i = 0; i <= n; ++i) {
        for (size_t j = 0; j <= m; ++j) {
            if (!R(i, j)) continue;
            if (i < n && star(a[i])) R(i + 1, j) = 1;
            if (j < m && star(b[j])) R(i, j + 1) = 1;
            if (i < n && j < m) {
                bool sa = star(a[i]), sb = star(b[j]);
                if (sa && !sb && eats(a[i], b[j])) R(i, j + 1) = 1;
                if (sb && !sa && eats(b[j], a[i])) R(i + 1, j) = 1;
                if (!sa && !sb && same_char(a[i], b[j])) R(i + 1, j + 1) = 1;
            }
        }
    }
    return R(n, m) != 0;
}

bool may_denote(const PathOperand& op, const Pattern& target) {
    if (may_overlap(op.path, target)) return true;
    return op.has_all_children && may_overlap(op.all_children, target);
}

std::string to_string(const Pattern& p) {
    std::string out;
    for (const auto& t : p) {
        switch (t.kind) {
            case Tok::Kind::Ch:
                out.push_back(t.c);
                break;
            case Tok::Kind::One:
                out.push_back('?');
                break;
            case Tok::Kind::Star:
                out.push_back('*');
                break;
            case Tok::Kind::Any:
                out += "**";
                break;
        }
    }
    return out;
}

}  // namespace cordon::policy

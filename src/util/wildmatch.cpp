#include "cordon/wildmatch.hpp"

#include <string_view>

namespace cordon {

namespace {

// How a match attempt ended. The two aborts are git's pruning, and part of its results: an
// attempt that ran out of text can succeed from no later start (All); a single '*' that met a
// '/' hands back to the nearest "**" (ToStarStar).
enum class Wm { Match, NoMatch, AbortAll, AbortToStarStar };

// ASCII only, as git's sane_ctype: the locale must not change what a pattern matches.
bool is_upper(unsigned char c) {
    return c >= 'A' && c <= 'Z';
}
bool is_lower(unsigned char c) {
    return c >= 'a' && c <= 'z';
}
bool is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}
bool is_alpha(unsigned char c) {
    return is_upper(c) || is_lower(c);
}
bool is_space(unsigned char c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
}
bool is_print(unsigned char c) {
    return c >= 0x20 && c < 0x7f;
}
bool is_punct(unsigned char c) {
    return is_print(c) && c != ' ' && !is_alpha(c) && !is_digit(c);
}
bool is_xdigit(unsigned char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
unsigned char to_lower(unsigned char c) {
    return is_upper(c) ? static_cast<unsigned char>(c - 'A' + 'a') : c;
}
unsigned char to_upper(unsigned char c) {
    return is_lower(c) ? static_cast<unsigned char>(c - 'a' + 'A') : c;
}
bool glob_special(unsigned char c) {
    return c == '*' || c == '?' || c == '[' || c == '\\';
}

// Whether T is in the [:NAME:] class (1 or 0), or -1 for a name git does not know.
int in_named_class(std::string_view name, unsigned char t, bool fold) {
    if (name == "alnum") return is_alpha(t) || is_digit(t);
    if (name == "alpha") return is_alpha(t);
    if (name == "blank") return t == ' ' || t == '\t';
    if (name == "cntrl") return t < 0x20 || t == 0x7f;
    if (name == "digit") return is_digit(t);
    if (name == "graph") return is_print(t) && t != ' ';
    if (name == "lower") return is_lower(t);
    if (name == "print") return is_print(t);
    if (name == "punct") return is_punct(t);
    if (name == "space") return is_space(t);
    if (name == "upper") return is_upper(t) || (fold && is_lower(t));
    if (name == "xdigit") return is_xdigit(t);
    return -1;
}

// The class at PAT[P] (P at '['), against the text character T (folded already where FOLD):
// P is left at its ']'. Returns NoMatch or Match, or AbortAll where the class is not closed or
// names an unknown [:class:].
Wm match_class(std::string_view pat, size_t& p, unsigned char t, bool fold) {
    auto at = [&](size_t i) -> unsigned char { return i < pat.size() ? static_cast<unsigned char>(pat[i]) : 0; };
    unsigned char c = at(++p);
    const bool negated = c == '!' || c == '^';
    if (negated) c = at(++p);
    unsigned char prev = 0;
    bool matched = false;
    do {
        if (c == 0) return Wm::AbortAll;
        if (c == '\\') {
            c = at(++p);
            if (c == 0) return Wm::AbortAll;
            matched = matched || t == c;
        } else if (c == '-' && prev != 0 && at(p + 1) != 0 && at(p + 1) != ']') {
            c = at(++p);
            if (c == '\\') {
                c = at(++p);
                if (c == 0) return Wm::AbortAll;
            }
            const unsigned char up = to_upper(t);
            matched = matched || (t >= prev && t <= c) || (fold && is_lower(t) && up >= prev && up <= c);
            c = 0;  // a range's end starts no range
        } else if (c == '[' && at(p + 1) == ':') {
            const size_t name = p + 2;
            size_t end = name;
            while (at(end) != 0 && at(end) != ']') ++end;
            if (at(end) == 0) return Wm::AbortAll;
            if (end < name + 1 || at(end - 1) != ':') {  // no ":]": the '[' is a plain member
                matched = matched || t == '[';
            } else {
                const int in = in_named_class(pat.substr(name, end - 1 - name), t, fold);
                if (in < 0) return Wm::AbortAll;
                matched = matched || in == 1;
                p = end;
                c = 0;  // starts no range either
            }
        } else {
            matched = matched || t == c;
        }
        prev = c;
        c = at(++p);
    } while (c != ']');
    return matched != negated && t != '/' ? Wm::Match : Wm::NoMatch;
}

Wm match_from(std::string_view pat, size_t p, std::string_view text, size_t t, bool fold, size_t& steps) {
    if (steps == 0) return Wm::AbortAll;
    --steps;
    auto fold_char = [fold](char c) {
        const auto u = static_cast<unsigned char>(c);
        return fold ? to_lower(u) : u;
    };
    for (; p < pat.size(); ++p, ++t) {
        unsigned char pc = fold_char(pat[p]);
        if (t >= text.size() && pc != '*') return Wm::AbortAll;
        const unsigned char tc = t < text.size() ? fold_char(text[t]) : 0;
        switch (pc) {
            case '\\':  // the next character as written, not folded; none (the end) matches nothing
                pc = p + 1 < pat.size() ? static_cast<unsigned char>(pat[++p]) : 0;
                if (tc != pc) return Wm::NoMatch;
                continue;
            case '?':
                if (tc == '/') return Wm::NoMatch;
                continue;
            case '[': {
                const Wm m = match_class(pat, p, tc, fold);
                if (m != Wm::Match) return m;
                continue;
            }
            case '*': {
                bool match_slash = false;
                const bool after_slash = p == 0 || pat[p - 1] == '/';
                ++p;
                if (p < pat.size() && pat[p] == '*') {
                    while (p < pat.size() && pat[p] == '*') ++p;
                    if (after_slash && (p == pat.size() || pat[p] == '/' ||
                                        (pat[p] == '\\' && p + 1 < pat.size() && pat[p + 1] == '/'))) {
                        // "**/": first as no directory at all
                        if (p < pat.size() && pat[p] == '/' &&
                            match_from(pat, p + 1, text, t, fold, steps) == Wm::Match)
                            return Wm::Match;
                        match_slash = true;
                    }
                }
                if (p == pat.size()) {  // at the end: "**" takes the rest, '*' up to a '/'
                    if (!match_slash && text.find('/', t) != std::string_view::npos) return Wm::NoMatch;
                    return Wm::Match;
                }
                if (!match_slash && pat[p] == '/') {  // "*/": the rest of this directory's name
                    const size_t slash = text.find('/', t);
                    if (slash == std::string_view::npos) return Wm::NoMatch;
                    t = slash;
                    continue;  // the loop's step takes the '/' from both
                }
                for (;;) {
                    if (t >= text.size()) break;
                    if (!glob_special(static_cast<unsigned char>(pat[p]))) {
                        // A literal next: the star takes everything before it (within one
                        // directory's name unless "**").
                        const unsigned char want = fold_char(pat[p]);
                        while (t < text.size() && (match_slash || text[t] != '/') && fold_char(text[t]) != want) ++t;
                        if (t >= text.size() || fold_char(text[t]) != want) return Wm::NoMatch;
                    }
                    const Wm m = match_from(pat, p, text, t, fold, steps);
                    if (m != Wm::NoMatch) {
                        if (!match_slash || m != Wm::AbortToStarStar) return m;
                    } else if (!match_slash && text[t] == '/') {
                        return Wm::AbortToStarStar;
                    }
                    ++t;
                }
                return Wm::AbortAll;
            }
            default:
                if (tc != pc) return Wm::NoMatch;
                continue;
        }
    }
    return t < text.size() ? Wm::NoMatch : Wm::Match;
}

}  // namespace

bool git_wildmatch(std::string_view pattern, std::string_view text, bool fold, size_t& steps) {
    return match_from(pattern, 0, text, 0, fold, steps) == Wm::Match;
}

}  // namespace cordon

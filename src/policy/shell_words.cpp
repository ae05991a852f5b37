// The shell parser's word reader: quoting, expansions, substitutions, here-document bodies.
#include <fmt/format.h>

#include <cstring>

#include "shell_parser.hpp"

namespace cordon::policy::shell_detail {

void add_lit(Word& w, std::string_view s, bool quoted) {
    if (s.empty()) return;
    if (!w.empty() && w.back().kind == WordPart::Kind::Lit && w.back().quoted == quoted) {
        w.back().text.append(s);
        return;
    }
    WordPart p;
    p.kind = WordPart::Kind::Lit;
    p.quoted = quoted;
    p.text = std::string(s);
    w.push_back(std::move(p));
}

std::string literal_text(const Word& w, bool* quoted) {
    std::string out;
    for (const auto& p : w) {
        if (p.quoted) *quoted = true;
        if (p.kind == WordPart::Kind::Lit)
            out += p.text;
        else if (p.kind == WordPart::Kind::Tilde)
            out += "~" + p.text;
        else if (p.kind == WordPart::Kind::Param)
            out += "$" + p.text;
    }
    return out;
}

void Parser::read_heredoc(const PendingHeredoc& h) {
    Word& body = *h.body;
    std::string text;
    while (!eof()) {
        size_t e = s_.find('\n', p_);
        if (e == std::string_view::npos) e = s_.size();
        std::string_view line = s_.substr(p_, e - p_);
        p_ = e < s_.size() ? e + 1 : e;
        if (h.strip_tabs) {
            while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
        }
        if (line == h.delim) break;
        text.append(line);
        text.push_back('\n');
    }
    if (h.quoted) {
        add_lit(body, text, true);
        return;
    }
    Parser sub(text, depth_);
    sub.read_parts(body, Mode::Heredoc);
}

// The word lexer's state machine: one loop over the characters, one case per quoting or
// expansion form, sharing the position and the brace depth. Kept whole so it reads as sh(1)'s
// token rules do.
void Parser::read_parts(Word& w, Mode mode) {  // NOLINT(readability-function-size)
    bool first = true;
    int brace = 0;
    for (;;) {
        if (eof()) {
            return;
        }
        char c = at();
        if (mode == Mode::Word && is_meta(c)) {
            if (first && (c == '<' || c == '>') && at(1) == '(') {
                w.push_back(proc_subst());
                first = false;
                continue;
            }
            return;
        }
        if (mode == Mode::DQuote && c == '"') return;
        if (mode == Mode::Brace && c == '}' && brace == 0) return;
        if (mode == Mode::Brace && c == '{') ++brace;
        if (mode == Mode::Brace && c == '}') --brace;
        bool quoted = mode == Mode::DQuote || mode == Mode::Heredoc;
        if (c == '\\') {
            if (at(1) == '\n') {
                p_ += 2;
            } else if (p_ + 1 >= s_.size()) {
                add_lit(w, "\\", quoted);
                ++p_;
            } else if (quoted && !std::strchr("$`\"\\", at(1))) {
                add_lit(w, s_.substr(p_, 2), true);
                p_ += 2;
            } else if (quoted && mode == Mode::Heredoc && at(1) == '"') {
                add_lit(w, "\\\"", true);
                p_ += 2;
            } else {
                add_lit(w, s_.substr(p_ + 1, 1), true);
                p_ += 2;
            }
        } else if (c == '\'' && (mode == Mode::Word || mode == Mode::Brace)) {
            size_t e = s_.find('\'', p_ + 1);
            if (e == std::string_view::npos) fail("unterminated single quote");
            add_lit(w, s_.substr(p_ + 1, e - p_ - 1), true);
            if (e == p_ + 1 && w.empty()) add_empty_quoted(w);
            p_ = e + 1;
        } else if (c == '"' && (mode == Mode::Word || mode == Mode::Brace)) {
            size_t open = p_++;
            size_t before = w.size();
            read_parts(w, Mode::DQuote);
            if (at() != '"') fail_at(open, "unterminated double quote");
            ++p_;
            if (w.size() == before) add_empty_quoted(w);
        } else if (c == '$') {
            dollar(w, quoted);
        } else if (c == '`') {
            w.push_back(backquote(quoted));
        } else if (c == '~' && first && mode == Mode::Word) {
            size_t e = p_ + 1;
            if (e < s_.size() && (s_[e] == '+' || s_[e] == '-')) {
                ++e;  // ~+ is $PWD, ~- is $OLDPWD
            } else {
                while (e < s_.size() && (is_name_char(s_[e]) || s_[e] == '-' || s_[e] == '.')) ++e;
            }
            if (e >= s_.size() || s_[e] == '/' || is_meta(s_[e]) || s_[e] == ':') {
                WordPart t;
                t.kind = WordPart::Kind::Tilde;
                t.text = std::string(s_.substr(p_ + 1, e - p_ - 1));
                w.push_back(std::move(t));
                p_ = e;
            } else {
                add_lit(w, "~", false);
                ++p_;
            }
        } else {
            // A run of characters with no meaning in this mode, in one piece.
            auto plain = [mode](char ch) {
                if (ch == '\\' || ch == '$' || ch == '`') return false;
                switch (mode) {
                    case Mode::Word:
                        return !is_meta(ch) && ch != '\'' && ch != '"';
                    case Mode::DQuote:
                        return ch != '"';
                    case Mode::Brace:
                        return ch != '{' && ch != '}' && ch != '\'' && ch != '"';
                    case Mode::Heredoc:
                        return true;
                }
                return false;
            };
            size_t e = p_ + 1;
            while (e < s_.size() && plain(s_[e])) ++e;
            add_lit(w, s_.substr(p_, e - p_), quoted);
            p_ = e;
        }
        first = false;
    }
}

void Parser::add_empty_quoted(Word& w) {
    WordPart p;
    p.kind = WordPart::Kind::Lit;
    p.quoted = true;
    w.push_back(std::move(p));
}

WordPart Parser::proc_subst() {
    DepthGuard guard(*this);
    size_t open = p_;
    p_ += 2;
    WordPart part;
    part.kind = WordPart::Kind::ProcSubst;
    part.body = list({});
    skip_blank_lines();
    if (at() != ')') fail_at(open, "unterminated process substitution");
    ++p_;
    return part;
}

void Parser::dollar(Word& w, bool quoted) {
    DepthGuard guard(*this);
    size_t open = p_;
    char n = at(1);
    WordPart part;
    part.quoted = quoted;
    if (n == '(' && at(2) == '(' && arith_end() != 0) {
        p_ = arith_end();
        part.kind = WordPart::Kind::Arith;
    } else if (n == '(') {
        p_ += 2;
        part.kind = WordPart::Kind::CmdSubst;
        part.body = list({});
        skip_blank_lines();
        if (at() != ')') fail_at(open, "unterminated $(");
        ++p_;
    } else if (n == '{') {
        p_ += 2;
        part.kind = WordPart::Kind::Param;
        size_t start = p_;
        Word inner;
        read_parts(inner, Mode::Brace);
        if (at() != '}') fail_at(open, "unterminated ${");
        std::string_view raw = s_.substr(start, p_ - start);
        ++p_;  // the closing brace
        if (simple_param(raw)) {
            part.text = std::string(raw);
        } else {
            for (auto& ip : inner) {
                for (auto& node : ip.body) part.body.push_back(std::move(node));
            }
        }
    } else if (n == '\'' && !quoted) {
        p_ += 2;
        add_lit(w, ansi_c(open), true);
        if (w.empty()) add_empty_quoted(w);
        return;
    } else if (n == '"' && !quoted) {
        ++p_;  // the quote itself is read as a double-quoted string
        return;
    } else if (is_name_start(n)) {
        size_t e = p_ + 1;
        while (e < s_.size() && is_name_char(s_[e])) ++e;
        part.kind = WordPart::Kind::Param;
        part.text = std::string(s_.substr(p_ + 1, e - p_ - 1));
        p_ = e;
    } else if (n != '\0' && (is_digit(n) || std::strchr("@*#?-$!", n))) {
        part.kind = WordPart::Kind::Param;
        part.text = std::string(1, n);
        p_ += 2;
    } else {
        add_lit(w, "$", quoted);
        ++p_;
        return;
    }
    w.push_back(std::move(part));
}

bool Parser::simple_param(std::string_view raw) {
    if (raw.empty()) return false;
    if (raw.size() == 1 && std::strchr("@*#?-$!", raw[0])) return true;
    bool digits = true;
    for (char c : raw) digits = digits && is_digit(c);
    if (digits) return true;
    if (!is_name_start(raw[0])) return false;
    for (char c : raw) {
        if (!is_name_char(c)) return false;
    }
    return true;
}

size_t Parser::arith_end() const {
    return arith_end_from(p_ + 1);
}

std::string Parser::ansi_c(size_t open) {
    std::string out;
    for (;;) {
        if (eof()) fail_at(open, "unterminated $'");
        char c = at();
        if (c == '\'') {
            ++p_;
            return out;
        }
        if (c != '\\') {
            out.push_back(c);
            ++p_;
            continue;
        }
        char e = at(1);
        p_ += 2;
        switch (e) {
            case 'n':
                out.push_back('\n');
                break;
            case 't':
                out.push_back('\t');
                break;
            case 'r':
                out.push_back('\r');
                break;
            case 'a':
                out.push_back('\a');
                break;
            case 'b':
                out.push_back('\b');
                break;
            case 'f':
                out.push_back('\f');
                break;
            case 'v':
                out.push_back('\v');
                break;
            case 'e':
            case 'E':
                out.push_back('\x1b');
                break;
            case 'x':
                out.push_back(static_cast<char>(radix(16, 2)));
                break;
            case 'u':
                out.push_back(static_cast<char>(radix(16, 4) & 0x7f));
                break;
            case 'c':
                if (!eof()) {
                    out.push_back(static_cast<char>(at() & 0x1f));
                    ++p_;
                }
                break;
            case '\0':
                fail_at(open, "unterminated $'");
            default:
                if (e >= '0' && e <= '7') {
                    --p_;
                    out.push_back(static_cast<char>(radix(8, 3)));
                } else {
                    out.push_back(e);
                }
        }
    }
}

unsigned Parser::radix(unsigned base, int max) {
    unsigned v = 0;
    for (int i = 0; i < max && !eof(); ++i) {
        char c = at();
        unsigned d = 0;
        if (c >= '0' && c <= '9')
            d = static_cast<unsigned>(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = static_cast<unsigned>(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = static_cast<unsigned>(c - 'A' + 10);
        else
            break;
        if (d >= base) break;
        v = v * base + d;
        ++p_;
    }
    return v;
}

WordPart Parser::backquote(bool quoted) {
    DepthGuard guard(*this);
    size_t open = p_++;
    std::string inner;
    for (;;) {
        if (eof()) fail_at(open, "unterminated backquote");
        char c = at();
        if (c == '`') break;
        if (c == '\\' && p_ + 1 < s_.size() &&
            (at(1) == '`' || at(1) == '\\' || at(1) == '$' || (quoted && at(1) == '"'))) {
            inner.push_back(at(1));
            p_ += 2;
            continue;
        }
        inner.push_back(c);
        ++p_;
    }
    ++p_;
    WordPart part;
    part.kind = WordPart::Kind::CmdSubst;
    part.quoted = quoted;
    try {
        Parser sub(inner, depth_);
        part.body = sub.program();
    } catch (const ParseFail& f) {
        fail_at(open, "in backquotes: " + f.why);
    }
    return part;
}

}  // namespace cordon::policy::shell_detail

// The shell parser's internals, shared by its word reader (shell_words.cpp) and its grammar
// (shell_parser.cpp). Private to src/policy.
#pragma once

#include <fmt/format.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/policy/shell.hpp"

namespace cordon::policy::shell_detail {

constexpr int kMaxDepth = 64;

inline bool is_meta(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' || c == '>' || c == '(' ||
           c == ')';
}
inline bool is_name_start(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool is_name_char(char c) {
    return is_name_start(c) || (c >= '0' && c <= '9');
}
inline bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

struct ParseFail {
    size_t pos;
    std::string why;
};
void add_lit(Word& w, std::string_view s, bool quoted);
// Text of a word after quote removal, and whether any quoting was present (here-doc delimiters).
std::string literal_text(const Word& w, bool* quoted);

// Reads characters directly: shell tokenisation depends on the grammar position (reserved words,
// here-documents). Errors unwind as ParseFail to parse_script.
class Parser {
public:
    Parser(std::string_view src, int depth) : s_(src), depth_(depth) {}

    std::vector<Node> program() {
        auto nodes = list({});
        skip_blank_lines();
        if (!eof()) fail(fmt::format("unexpected '{}'", peek_token()));
        return nodes;
    }

    [[noreturn]] void fail(std::string why) const { throw ParseFail{p_, std::move(why)}; }
    [[noreturn]] void fail_at(size_t pos, std::string why) const { throw ParseFail{pos, std::move(why)}; }

private:
    std::string_view s_;
    size_t p_ = 0;
    int depth_;
    struct PendingHeredoc {
        std::shared_ptr<Word> body;
        std::string delim;
        bool strip_tabs;
        bool quoted;  // a quoted delimiter: the body is literal
    };
    std::vector<PendingHeredoc> pending_;

    struct DepthGuard {
        explicit DepthGuard(Parser& p) : parser(p) {
            if (++parser.depth_ > kMaxDepth) parser.fail("nesting too deep");
        }
        ~DepthGuard() { --parser.depth_; }
        DepthGuard(const DepthGuard&) = delete;
        DepthGuard& operator=(const DepthGuard&) = delete;
        Parser& parser;
    };

    bool eof() const { return p_ >= s_.size(); }
    char at(size_t off = 0) const { return p_ + off < s_.size() ? s_[p_ + off] : '\0'; }
    bool starts(std::string_view t) const { return s_.substr(p_, t.size()) == t; }

    std::string peek_token() const {
        if (eof()) return "end of input";
        size_t e = p_ + 1;
        while (e < s_.size() && e < p_ + 8 && !is_meta(s_[e]) && !is_meta(s_[p_])) ++e;
        return std::string(s_.substr(p_, e - p_));
    }

    // Blanks, line continuations and comments; never a newline.
    void skip_ws() {
        for (;;) {
            if (at() == ' ' || at() == '\t' || at() == '\r') {
                ++p_;
            } else if (at() == '\\' && at(1) == '\n') {
                p_ += 2;
            } else if (at() == '#') {
                while (!eof() && at() != '\n') ++p_;
            } else {
                return;
            }
        }
    }

    // A newline token: here-document bodies start right after it.
    void newline() {
        ++p_;
        auto pending = std::move(pending_);
        pending_.clear();
        for (const auto& h : pending) read_heredoc(h);
    }

    void skip_blank_lines() {
        for (;;) {
            skip_ws();
            if (at() == '\n')
                newline();
            else
                return;
        }
    }

    void read_heredoc(const PendingHeredoc& h);

    // ---- words -------------------------------------------------------------------------

    enum class Mode { Word, DQuote, Brace, Heredoc };

    // Read word parts until the mode's end; returns at the closing character (not consumed).
    void read_parts(Word& w, Mode mode);
    static void add_empty_quoted(Word& w);
    WordPart proc_subst();
    void dollar(Word& w, bool quoted);
    static bool simple_param(std::string_view raw);

    // Position after the closing "))" of $(( ... )), or 0 when this is $( ( ... ) ).
    size_t arith_end() const;
    std::string ansi_c(size_t open);
    unsigned radix(unsigned base, int max);
    WordPart backquote(bool quoted);

    // ---- grammar -----------------------------------------------------------------------

    // The plain word at the cursor if it is unquoted and ends at a metacharacter.
    std::string_view bare_word() const;
    bool at_terminator(const std::vector<std::string_view>& terms) const;
    void expect_word(std::string_view w, size_t open, std::string_view what);
    std::vector<Node> list(const std::vector<std::string_view>& terms);
    Node and_or();
    Node pipeline();
    Node command();
    static Node seq(std::vector<Node> kids);
    Node do_group(size_t open);
    bool skip_double_paren();
    size_t arith_end_from(size_t from) const;
    Node if_clause();
    Node for_clause(size_t kw);
    Node case_clause();
    Node test_clause();
    static bool assignment_name(const Word& w, std::string* name, size_t* eq);
    Node simple(size_t start);
    static void tilde_in_value(Word& v);
    void array_value(Assignment& a);
    void redirects(Node& n);
    bool redirect(Node& n);
};

}  // namespace cordon::policy::shell_detail

// Recursive-descent parser for the POSIX shell grammar (plus the bash forms agents write:
// [[ ]], (( )), $'...', <(...), function, &>, <<<): lists, pipelines, compound commands,
// simple commands with assignments and redirections.
#include <fmt/format.h>

#include <cstring>

#include "shell_parser.hpp"

namespace cordon::policy {
namespace shell_detail {

std::string_view Parser::bare_word() const {
    size_t e = p_;
    while (e < s_.size() && !is_meta(s_[e]) && !std::strchr("'\"\\$`", s_[e])) ++e;
    if (e < s_.size() && !is_meta(s_[e])) return {};
    return s_.substr(p_, e - p_);
}

bool Parser::at_terminator(const std::vector<std::string_view>& terms) const {
    if (eof() || at() == ')') return true;
    if (at() == ';' && (at(1) == ';' || at(1) == '&')) return true;
    std::string_view w = bare_word();
    for (auto t : terms) {
        if (w == t) return true;
    }
    return false;
}

void Parser::expect_word(std::string_view w, size_t open, std::string_view what) {
    skip_blank_lines();
    if (bare_word() != w) {
        fail_at(open, fmt::format("{} without a matching '{}' (found {})", what, w, peek_token()));
    }
    p_ += w.size();
}

std::vector<Node> Parser::list(const std::vector<std::string_view>& terms) {
    DepthGuard guard(*this);
    std::vector<Node> nodes;
    for (;;) {
        skip_blank_lines();
        if (at_terminator(terms)) return nodes;
        nodes.push_back(and_or());
        skip_ws();
        if (at() == ';' && at(1) != ';' && at(1) != '&') {
            ++p_;
        } else if (at() == '&' && at(1) != '&' && at(1) != '>') {
            nodes.back().background = true;
            ++p_;
        } else if (at() == '\n') {
            newline();
        } else if (!at_terminator(terms)) {
            fail(fmt::format("unexpected '{}'", peek_token()));
        }
    }
}

Node Parser::and_or() {
    Node n;
    n.kind = Node::Kind::AndOr;
    n.kids.push_back(pipeline());
    for (;;) {
        skip_ws();
        if (!(starts("&&") || starts("||"))) break;
        p_ += 2;
        skip_blank_lines();
        n.kids.push_back(pipeline());
    }
    if (n.kids.size() == 1) return std::move(n.kids[0]);
    return n;
}

Node Parser::pipeline() {
    Node n;
    n.kind = Node::Kind::Pipeline;
    // Prefixes: `!`, and the `time`/`coproc` keywords when a compound command follows (before a
    // simple command, `time` is left to be seen as the time(1) wrapper, which it is in sh).
    for (;;) {
        skip_ws();
        std::string_view w = bare_word();
        if (w == "!") {
            n.negated = !n.negated;
            ++p_;
            continue;
        }
        if (w == "time" || w == "coproc") {
            size_t save = p_;
            p_ += w.size();
            skip_ws();
            if (w == "time" && bare_word() == "-p") p_ += 2;
            skip_ws();
            std::string_view next = bare_word();
            if (at() == '(' || next == "{" || next == "if" || next == "while" || next == "until" || next == "for" ||
                next == "case" || next == "select" || next == "[[" || next == "!") {
                continue;
            }
            p_ = save;
        }
        break;
    }
    n.kids.push_back(command());
    for (;;) {
        skip_ws();
        if (at() != '|' || at(1) == '|') break;
        p_ += at(1) == '&' ? 2 : 1;
        skip_blank_lines();
        n.kids.push_back(command());
    }
    if (n.kids.size() == 1 && !n.negated) return std::move(n.kids[0]);
    return n;
}

Node Parser::command() {
    DepthGuard guard(*this);
    skip_ws();
    size_t start = p_;
    if (eof() || at() == ')' || at() == ';' || at() == '&' || at() == '|' || at() == '\n') {
        fail(fmt::format("expected a command, found '{}'", peek_token()));
    }
    Node n;
    std::string_view w = bare_word();
    if (at() == '(' && at(1) == '(' && skip_double_paren()) {
        n.kind = Node::Kind::Arith;
    } else if (at() == '(') {
        ++p_;
        n.kind = Node::Kind::Subshell;
        n.kids = list({});
        skip_blank_lines();
        if (at() != ')') fail_at(start, "'(' without a matching ')'");
        ++p_;
    } else if (w == "{") {
        ++p_;
        n.kind = Node::Kind::Group;
        n.kids = list({"}"});
        expect_word("}", start, "'{'");
    } else if (w == "if") {
        n = if_clause();
    } else if (w == "while" || w == "until") {
        p_ += w.size();
        n.kind = Node::Kind::Loop;
        n.kids.push_back(seq(list({"do"})));
        n.kids.push_back(do_group(start));
    } else if (w == "for" || w == "select") {
        n = for_clause(w.size());
    } else if (w == "case") {
        n = case_clause();
    } else if (w == "function") {
        p_ += w.size();
        skip_ws();
        n.kind = Node::Kind::Function;
        Word name;
        read_parts(name, Mode::Word);
        bool q = false;
        n.name = literal_text(name, &q);
        if (n.name.empty()) fail("function without a name");
        skip_ws();
        if (at() == '(') {
            ++p_;
            skip_ws();
            if (at() != ')') fail("expected ')' after the function name");
            ++p_;
        }
        skip_blank_lines();
        n.kids.push_back(command());
    } else if (w == "[[") {
        n = test_clause();
    } else {
        return simple(start);
    }
    redirects(n);
    n.text = std::string(s_.substr(start, p_ - start));
    while (!n.text.empty() && std::strchr(" \t\r", n.text.back())) n.text.pop_back();
    return n;
}

Node Parser::seq(std::vector<Node> kids) {
    Node n;
    n.kind = Node::Kind::List;
    n.kids = std::move(kids);
    return n;
}

Node Parser::do_group(size_t open) {
    expect_word("do", open, "loop");
    Node body = seq(list({"done"}));
    expect_word("done", open, "'do'");
    return body;
}

bool Parser::skip_double_paren() {
    size_t e = arith_end_from(p_);
    if (e == 0) return false;
    p_ = e;
    return true;
}

// Position after the "))" closing the "((" at FROM, or 0 when it is "( (" (a subshell in a
// subshell). The scan is bounded so that many unclosed "((" cannot make parsing quadratic.
size_t Parser::arith_end_from(size_t from) const {
    constexpr size_t kMaxArith = size_t{64} * 1024;
    int depth = 0;
    for (size_t i = from + 2; i < s_.size() && i < from + kMaxArith; ++i) {
        if (s_[i] == '(') {
            ++depth;
        } else if (s_[i] == ')') {
            if (depth == 0) return i + 1 < s_.size() && s_[i + 1] == ')' ? i + 2 : 0;
            --depth;
        }
    }
    return 0;
}

Node Parser::if_clause() {
    size_t open = p_;
    p_ += 2;
    Node n;
    n.kind = Node::Kind::If;
    for (;;) {
        n.kids.push_back(seq(list({"then"})));
        expect_word("then", open, "'if'");
        n.kids.push_back(seq(list({"elif", "else", "fi"})));
        skip_blank_lines();
        std::string_view w = bare_word();
        if (w == "elif") {
            p_ += 4;
            continue;
        }
        if (w == "else") {
            p_ += 4;
            n.kids.push_back(seq(list({"fi"})));
        }
        expect_word("fi", open, "'if'");
        return n;
    }
}

Node Parser::for_clause(size_t kw) {
    size_t open = p_;
    p_ += kw;
    skip_ws();
    Node n;
    n.kind = Node::Kind::For;
    if (at() == '(' && at(1) == '(') {
        if (!skip_double_paren()) fail_at(open, "unterminated for ((");
        n.kind = Node::Kind::Loop;
    } else {
        size_t e = p_;
        while (e < s_.size() && is_name_char(s_[e])) ++e;
        if (e == p_) fail("'for' without a variable name");
        n.name = std::string(s_.substr(p_, e - p_));
        p_ = e;
        skip_blank_lines();
        if (bare_word() == "in") {
            p_ += 2;
            for (;;) {
                skip_ws();
                if (eof() || at() == ';' || at() == '\n') break;
                if (is_meta(at())) fail(fmt::format("unexpected '{}' in a for list", peek_token()));
                Word w;
                read_parts(w, Mode::Word);
                n.words.push_back(std::move(w));
            }
        }
    }
    skip_ws();
    if (at() == ';') ++p_;
    n.kids.push_back(do_group(open));
    return n;
}

Node Parser::case_clause() {
    size_t open = p_;
    p_ += 4;
    skip_ws();
    Node n;
    n.kind = Node::Kind::Case;
    Word subject;
    read_parts(subject, Mode::Word);
    if (subject.empty()) fail("'case' without a word");
    n.words.push_back(std::move(subject));
    expect_word("in", open, "'case'");
    for (;;) {
        skip_blank_lines();
        if (bare_word() == "esac") {
            p_ += 4;
            return n;
        }
        if (eof()) fail_at(open, "'case' without a matching 'esac'");
        if (at() == '(') ++p_;
        for (;;) {
            skip_ws();
            Word pat;
            read_parts(pat, Mode::Word);
            if (pat.empty()) fail("expected a case pattern");
            n.words.push_back(std::move(pat));
            skip_ws();
            if (at() == '|') {
                ++p_;
                continue;
            }
            if (at() != ')') fail("expected ')' after a case pattern");
            ++p_;
            break;
        }
        n.kids.push_back(seq(list({"esac"})));
        skip_ws();
        if (starts(";;&"))
            p_ += 3;
        else if (starts(";;") || starts(";&"))
            p_ += 2;
    }
}

Node Parser::test_clause() {
    size_t open = p_;
    Node n;
    n.kind = Node::Kind::Simple;
    for (;;) {
        skip_ws();
        if (eof()) fail_at(open, "'[[' without a matching ']]'");
        if (at() == '\n') {
            newline();
            continue;
        }
        Word w;
        if (is_meta(at())) {
            size_t e = p_ + 1;
            if (e < s_.size() && (s_[e] == s_[p_]) && (at() == '&' || at() == '|')) ++e;
            add_lit(w, s_.substr(p_, e - p_), true);
            p_ = e;
        } else {
            read_parts(w, Mode::Word);
        }
        bool q = false;
        bool end = literal_text(w, &q) == "]]" && !q;
        n.words.push_back(std::move(w));
        if (end) return n;
    }
}

bool Parser::assignment_name(const Word& w, std::string* name, size_t* eq) {
    if (w.empty() || w[0].kind != WordPart::Kind::Lit || w[0].quoted) return false;
    const std::string& t = w[0].text;
    if (t.empty() || !is_name_start(t[0])) return false;
    size_t i = 1;
    while (i < t.size() && is_name_char(t[i])) ++i;
    if (i < t.size() && t[i] == '[') {
        size_t close = t.find(']', i);
        if (close == std::string::npos) return false;
        i = close + 1;
    }
    if (i < t.size() && t[i] == '+') ++i;
    if (i >= t.size() || t[i] != '=') return false;
    *name = t.substr(0, t.find_first_of("[+="));
    *eq = i;
    return true;
}

Node Parser::simple(size_t start) {
    Node n;
    n.kind = Node::Kind::Simple;
    size_t end = p_;
    for (;; end = p_) {
        skip_ws();
        if (eof()) break;
        if (redirect(n)) continue;
        char c = at();
        if (c == '(' && n.words.size() == 1 && n.assigns.empty()) {
            // name ( ) compound-command: a function definition.
            ++p_;
            skip_ws();
            if (at() != ')') fail("expected ')' in a function definition");
            ++p_;
            skip_blank_lines();
            Node f;
            f.kind = Node::Kind::Function;
            bool q = false;
            f.name = literal_text(n.words[0], &q);
            f.kids.push_back(command());
            redirects(f);
            f.text = std::string(s_.substr(start, p_ - start));
            return f;
        }
        if (is_meta(c) && !((c == '<' || c == '>') && at(1) == '(')) break;
        Word w;
        read_parts(w, Mode::Word);
        std::string name;
        size_t eq = 0;
        if (n.words.empty() && assignment_name(w, &name, &eq)) {
            Assignment a;
            a.name = name;
            std::string rest = w[0].text.substr(eq + 1);
            if (rest.empty() && w.size() == 1 && at() == '(') {
                a.is_array = true;
                array_value(a);
            } else {
                if (!rest.empty()) add_lit(a.value, rest, false);
                for (size_t i = 1; i < w.size(); ++i) a.value.push_back(std::move(w[i]));
                tilde_in_value(a.value);
            }
            n.assigns.push_back(std::move(a));
            continue;
        }
        n.words.push_back(std::move(w));
    }
    if (n.words.empty() && n.assigns.empty() && n.redirs.empty()) {
        fail(fmt::format("expected a command, found '{}'", peek_token()));
    }
    n.text = std::string(s_.substr(start, end - start));
    return n;
}

void Parser::tilde_in_value(Word& v) {
    if (v.empty() || v[0].kind != WordPart::Kind::Lit || v[0].quoted || v[0].text[0] != '~') return;
    std::string& t = v[0].text;
    size_t e = 1;
    while (e < t.size() && (is_name_char(t[e]) || t[e] == '-' || t[e] == '.')) ++e;
    if (e < t.size() && t[e] != '/' && t[e] != ':') return;
    WordPart tilde;
    tilde.kind = WordPart::Kind::Tilde;
    tilde.text = t.substr(1, e - 1);
    t.erase(0, e);
    if (t.empty()) v.erase(v.begin());
    v.insert(v.begin(), std::move(tilde));
}

void Parser::array_value(Assignment& a) {
    size_t open = p_++;
    for (;;) {
        skip_blank_lines();
        if (eof()) fail_at(open, "unterminated array assignment");
        if (at() == ')') {
            ++p_;
            return;
        }
        if (is_meta(at())) fail(fmt::format("unexpected '{}' in an array", peek_token()));
        Word w;
        read_parts(w, Mode::Word);
        a.array.push_back(std::move(w));
    }
}

void Parser::redirects(Node& n) {
    for (;;) {
        skip_ws();
        if (!redirect(n)) return;
    }
}

bool Parser::redirect(Node& n) {
    size_t save = p_;
    while (is_digit(at())) ++p_;
    if (at() == '{' && p_ == save) {
        size_t e = s_.find('}', p_);
        if (e != std::string_view::npos && e + 1 < s_.size() && (s_[e + 1] == '<' || s_[e + 1] == '>')) {
            p_ = e + 1;
        }
    }
    static constexpr std::string_view ops[] = {"<<<", "<<-", "&>>", "<<", ">>", ">|", "<>", "<&", ">&", "&>", "<", ">"};
    std::string_view op;
    for (auto o : ops) {
        if (starts(o)) {
            op = o;
            break;
        }
    }
    if (op.empty() || ((op == "<" || op == ">") && at(1) == '(')) {
        p_ = save;
        return false;
    }
    if ((op == "&>" || op == "&>>") && p_ != save) {
        p_ = save;
        return false;
    }
    p_ += op.size();
    skip_ws();
    Redir r;
    r.op = std::string(op);
    if (eof() || (is_meta(at()) && !((at() == '<' || at() == '>') && at(1) == '('))) {
        fail(fmt::format("redirection '{}' without a target", op));
    }
    read_parts(r.target, Mode::Word);
    if (op == "<<" || op == "<<-") {
        bool quoted = false;
        std::string delim = literal_text(r.target, &quoted);
        r.heredoc = std::make_shared<Word>();
        pending_.push_back({r.heredoc, delim, op == "<<-", quoted});
    }
    n.redirs.push_back(std::move(r));
    return true;
}

}  // namespace shell_detail

namespace {

std::pair<size_t, size_t> line_col(std::string_view s, size_t pos) {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos && i < s.size(); ++i) {
        if (s[i] == '\n') {
            ++line;
            col = 1;
        } else {
            ++col;
        }
    }
    return {line, col};
}

}  // namespace

Result<std::vector<Node>> parse_script(std::string_view text) {
    try {
        shell_detail::Parser parser(text, 0);
        return parser.program();
    } catch (const shell_detail::ParseFail& f) {
        auto [line, col] = line_col(text, f.pos);
        return make_error(fmt::format("{}:{}", line, col), f.why);
    }
}

}  // namespace cordon::policy

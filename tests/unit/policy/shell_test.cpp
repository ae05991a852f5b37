// The shell parser: structure, quoting, and malformed input (clear errors, never a crash or hang).
#include <catch2/catch.hpp>

#include "cordon/policy/shell.hpp"

using namespace cordon::policy;

namespace {

std::vector<Node> parse_ok(const std::string& s) {
    auto r = parse_script(s);
    INFO(s << " -> " << (r ? "" : r.error().what + ": " + r.error().why));
    REQUIRE(r.ok());
    return std::move(*r);
}

std::string parse_err(const std::string& s) {
    auto r = parse_script(s);
    INFO(s);
    REQUIRE_FALSE(r.ok());
    return r.error().what + ": " + r.error().why;
}

// Literal text of a word (quote removal), substitutions shown as $(...).
std::string text(const Word& w) {
    std::string out;
    for (const auto& p : w) {
        switch (p.kind) {
            case WordPart::Kind::Lit:
                out += p.text;
                break;
            case WordPart::Kind::Param:
                out += "${" + p.text + "}";
                break;
            case WordPart::Kind::CmdSubst:
                out += "$(...)";
                break;
            case WordPart::Kind::Arith:
                out += "$((...))";
                break;
            case WordPart::Kind::ProcSubst:
                out += "<(...)";
                break;
            case WordPart::Kind::Tilde:
                out += "~" + p.text;
                break;
        }
    }
    return out;
}

std::vector<std::string> words(const Node& n) {
    std::vector<std::string> out;
    for (const auto& w : n.words) out.push_back(text(w));
    return out;
}

// Every simple command in the tree, depth first, including those inside substitutions.
void collect(const std::vector<Node>& ns, std::vector<const Node*>& out);
void collect_word(const Word& w, std::vector<const Node*>& out) {
    for (const auto& p : w) collect(p.body, out);
}
void collect(const std::vector<Node>& ns, std::vector<const Node*>& out) {
    for (const auto& n : ns) {
        if (n.kind == Node::Kind::Simple) out.push_back(&n);
        for (const auto& w : n.words) collect_word(w, out);
        for (const auto& a : n.assigns) collect_word(a.value, out);
        for (const auto& r : n.redirs) {
            collect_word(r.target, out);
            if (r.heredoc) collect_word(*r.heredoc, out);
        }
        collect(n.kids, out);
    }
}

std::vector<std::string> simple_texts(const std::string& s) {
    auto nodes = parse_ok(s);
    std::vector<const Node*> found;
    collect(nodes, found);
    std::vector<std::string> out;
    for (const auto* n : found) out.push_back(n->text);
    return out;
}

}  // namespace

TEST_CASE("quoting forms are removed", "[policy][shell]") {
    auto n = parse_ok(R"(rm -rf '/' "/x" \/y $'\x2f'z "a"'b'c r\m)");
    REQUIRE(n.size() == 1);
    CHECK(words(n[0]) == std::vector<std::string>{"rm", "-rf", "/", "/x", "/y", "/z", "abc", "rm"});
    CHECK(n[0].words[2][0].quoted);
    CHECK_FALSE(n[0].words[1][0].quoted);
}

TEST_CASE("ANSI-C quoting decodes escapes", "[policy][shell]") {
    auto n = parse_ok(R"(echo $'a\tb\n' $'\162\155' $'\'')");
    CHECK(words(n[0]) == std::vector<std::string>{"echo", "a\tb\n", "rm", "'"});
}

TEST_CASE("lists, pipelines and and-or lists", "[policy][shell]") {
    auto t = simple_texts("a; b & c | d && e || f\ng");
    CHECK(t == std::vector<std::string>{"a", "b", "c", "d", "e", "f", "g"});
    auto n = parse_ok("a & b");
    CHECK(n[0].background);
    CHECK_FALSE(n[1].background);
}

TEST_CASE("compound commands", "[policy][shell]") {
    CHECK(simple_texts("(cd /; rm x)") == std::vector<std::string>{"cd /", "rm x"});
    CHECK(simple_texts("{ a; b; }") == std::vector<std::string>{"a", "b"});
    CHECK(simple_texts("if a; then b; elif c; then d; else e; fi") ==
          std::vector<std::string>{"a", "b", "c", "d", "e"});
    CHECK(simple_texts("while a; do b; done; until c; do d; done") == std::vector<std::string>{"a", "b", "c", "d"});
    CHECK(simple_texts("for x in 1 2; do echo $x; done") == std::vector<std::string>{"echo $x"});
    CHECK(simple_texts("for ((i=0;i<3;i++)); do b; done") == std::vector<std::string>{"b"});
    CHECK(simple_texts("case $x in a|b) one;; (c) two;& *) three;; esac") ==
          std::vector<std::string>{"one", "two", "three"});
    CHECK(simple_texts("[[ -n $x && $y == z ]] && ok") == std::vector<std::string>{"[[ -n $x && $y == z ]]", "ok"});
    CHECK(simple_texts("(( x++ )) && ok") == std::vector<std::string>{"ok"});
}

TEST_CASE("substitutions are parsed as commands", "[policy][shell]") {
    CHECK(simple_texts("echo $(rm -rf /)") == std::vector<std::string>{"echo $(rm -rf /)", "rm -rf /"});
    CHECK(simple_texts("echo `rm -rf /`") == std::vector<std::string>{"echo `rm -rf /`", "rm -rf /"});
    CHECK(simple_texts(R"x(echo "$(a "$(b)")")x").size() == 3);
    CHECK(simple_texts("diff <(ls a) >(tee b)") == std::vector<std::string>{"diff <(ls a) >(tee b)", "ls a", "tee b"});
    CHECK(simple_texts("echo ${x:-$(rm -rf /)}") == std::vector<std::string>{"echo ${x:-$(rm -rf /)}", "rm -rf /"});
    CHECK(simple_texts("echo $((1 + (2 * 3)))") == std::vector<std::string>{"echo $((1 + (2 * 3)))"});
    CHECK(simple_texts("echo $( (a) )") == std::vector<std::string>{"echo $( (a) )", "a"});
    CHECK(simple_texts("x=$(case a in a) b;; esac)") == std::vector<std::string>{"x=$(case a in a) b;; esac)", "b"});
}

TEST_CASE("here-documents", "[policy][shell]") {
    auto t = simple_texts("cat <<EOF | sh\nhello $(rm -rf ~)\nEOF\necho done");
    // The body is expanded before cat runs, so its substitution comes first.
    CHECK(t == std::vector<std::string>{"cat <<EOF", "rm -rf ~", "sh", "echo done"});
    // A quoted delimiter keeps the body literal: nothing in it runs.
    CHECK(simple_texts("cat <<'EOF'\n$(rm -rf ~)\nEOF\n") == std::vector<std::string>{"cat <<'EOF'"});
    CHECK(simple_texts("cat <<-EOF\n\t$(a)\n\tEOF\nb") == std::vector<std::string>{"cat <<-EOF", "a", "b"});
    // Unterminated: the body runs to the end (as bash does, with a warning).
    CHECK(simple_texts("cat <<EOF\nx") == std::vector<std::string>{"cat <<EOF"});
}

TEST_CASE("redirections and assignments", "[policy][shell]") {
    auto n = parse_ok("X=1 Y=\"a b\" cmd arg >out 2>&1 <in &>all {fd}>f");
    REQUIRE(n[0].assigns.size() == 2);
    CHECK(n[0].assigns[1].name == "Y");
    CHECK(text(n[0].assigns[1].value) == "a b");
    CHECK(words(n[0]) == std::vector<std::string>{"cmd", "arg"});
    REQUIRE(n[0].redirs.size() == 5);
    CHECK(n[0].redirs[0].op == ">");
    CHECK(n[0].redirs[1].op == ">&");
    CHECK(n[0].redirs[3].op == "&>");
    auto a = parse_ok("arr=(1 2 $(x)) y=~/z");
    CHECK(a[0].assigns[0].is_array);
    CHECK(a[0].assigns[0].array.size() == 3);
    CHECK(a[0].assigns[1].value[0].kind == WordPart::Kind::Tilde);
}

TEST_CASE("comments and line continuations", "[policy][shell]") {
    CHECK(simple_texts("a # rm -rf /\nb") == std::vector<std::string>{"a", "b"});
    auto n = parse_ok("r\\\nm -rf \\\n /");
    CHECK(words(n[0]) == std::vector<std::string>{"rm", "-rf", "/"});
    CHECK(words(parse_ok("echo a#b")[0]) == std::vector<std::string>{"echo", "a#b"});
}

TEST_CASE("time, coproc and ! before compound commands", "[policy][shell]") {
    CHECK(simple_texts("time { rm -rf /; }") == std::vector<std::string>{"rm -rf /"});
    CHECK(simple_texts("time -p ( a ) | b") == std::vector<std::string>{"a", "b"});
    CHECK(simple_texts("! ! { a; }") == std::vector<std::string>{"a"});
    CHECK(simple_texts("coproc { a; }") == std::vector<std::string>{"a"});
    CHECK(simple_texts("time rm x") == std::vector<std::string>{"time rm x"});  // time(1) in sh
}

TEST_CASE("function definitions", "[policy][shell]") {
    auto n = parse_ok(":(){ :|:& };:");
    REQUIRE(n.size() == 2);
    CHECK(n[0].kind == Node::Kind::Function);
    CHECK(n[0].name == ":");
    CHECK(n[1].kind == Node::Kind::Simple);
    auto f = parse_ok("function go { a; }\nfunction h() ( b )");
    CHECK(f[0].name == "go");
    CHECK(f[1].name == "h");
}

TEST_CASE("tilde and parameters", "[policy][shell]") {
    auto n = parse_ok("ls ~ ~/x ~root \"~\" $HOME ${HOME} $1 $@ ${#x}");
    const auto& w = n[0].words;
    CHECK(w[1][0].kind == WordPart::Kind::Tilde);
    CHECK(w[2][0].kind == WordPart::Kind::Tilde);
    CHECK(w[3][0].text == "root");
    CHECK(w[4][0].kind == WordPart::Kind::Lit);
    CHECK(w[5][0].text == "HOME");
    CHECK(w[6][0].text == "HOME");
    CHECK(w[7][0].text == "1");
    CHECK(w[8][0].text == "@");
    CHECK(w[9][0].text.empty());  // complex: unknown
}

TEST_CASE("malformed input is a clear error", "[policy][shell]") {
    CHECK(parse_err("echo 'abc") == "1:6: unterminated single quote");
    CHECK(parse_err("echo \"abc") == "1:6: unterminated double quote");
    CHECK(parse_err("x\necho `abc") == "2:6: unterminated backquote");
    CHECK(parse_err("echo $(ls") == "1:6: unterminated $(");
    CHECK(parse_err("echo ${x") == "1:6: unterminated ${");
    CHECK(parse_err("echo $'x") == "1:6: unterminated $'");
    CHECK(parse_err("if true; then a").find("without a matching 'fi'") != std::string::npos);
    CHECK(parse_err("while a; do b").find("'done'") != std::string::npos);
    CHECK(parse_err("{ a").find("'}'") != std::string::npos);
    CHECK(parse_err("(a").find("')'") != std::string::npos);
    CHECK(parse_err("a | ").find("expected a command") != std::string::npos);
    CHECK(parse_err("a && ").find("expected a command") != std::string::npos);
    CHECK(parse_err(";").find("expected a command") != std::string::npos);
    CHECK(parse_err("a )").find("unexpected ')'") != std::string::npos);
    CHECK(parse_err("echo >").find("without a target") != std::string::npos);
    CHECK(parse_err("case x in a) b").find("esac") != std::string::npos);
    CHECK(parse_err(std::string(200, '(')).find("nesting too deep") != std::string::npos);
    CHECK(parse_err([] {
              std::string s;
              for (int i = 0; i < 100; ++i) s += "{ ";
              return s + "a";
          }())
              .find("nesting too deep") != std::string::npos);
    std::string deep;
    for (int i = 0; i < 100; ++i) deep += "$(";
    CHECK(parse_err(deep).find("nesting too deep") != std::string::npos);
}

TEST_CASE("empty and blank scripts parse to nothing", "[policy][shell]") {
    CHECK(parse_ok("").empty());
    CHECK(parse_ok("  \n\n # only a comment\n").empty());
}

// A POSIX shell parser for policy checks: shell text in, a syntax tree out. Nothing is expanded
// or executed here; the analyser (analyze.hpp) walks the tree with what it knows statically.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.hpp"

namespace cordon::policy {

struct Node;
struct WordPart;
using Word = std::vector<WordPart>;

struct WordPart {
    enum class Kind : unsigned char {
        Lit,        // text; unquoted text may hold glob characters
        Param,      // $name, ${name}; text is the name, empty when the expansion is complex
        CmdSubst,   // $(...) or `...`; body holds the commands
        Arith,      // $((...))
        ProcSubst,  // <(...) or >(...)
        Tilde,      // ~ or ~user at the start of a word; text is the user
    };
    Kind kind = Kind::Lit;
    bool quoted = false;
    std::string text;
    std::vector<Node> body;  // commands run by a substitution, also those inside ${x:-$(...)}
};

struct Redir {
    std::string op;                 // "<", ">", ">>", ">|", "<>", "<&", ">&", "&>", "&>>", "<<", "<<-", "<<<"
    Word target;                    // file, fd or here-document delimiter
    std::shared_ptr<Word> heredoc;  // the body of a here-document, filled in at its newline
};

struct Assignment {
    std::string name;
    Word value;
    std::vector<Word> array;  // name=(a b c)
    bool is_array = false;
};

struct Node {
    enum class Kind : unsigned char {
        Simple,    // assigns, words, redirs; text is its source
        Pipeline,  // kids; negated
        AndOr,     // kids joined by && or ||
        List,      // kids run in order; a kid with background set ran with &
        Subshell,  // ( kids )
        Group,     // { kids }
        If,        // kids: condition, then-part, [condition, then-part]..., [else-part]
        Loop,      // while/until: kids: condition, body
        For,       // name, words (the list; none means "$@"), kids: body
        Case,      // words[0] subject, words[1..] every pattern; kids: the arms
        Function,  // name, kids: body; text is the definition's source
        Arith,     // (( ... )) or for ((...)); nothing to check
    };
    Kind kind = Kind::Simple;
    bool background = false;
    bool negated = false;
    std::string name;
    std::string text;
    std::vector<Assignment> assigns;
    std::vector<Word> words;
    std::vector<Redir> redirs;
    std::vector<Node> kids;
};

// Parse shell text. Errors carry "LINE:COLUMN" in what and the problem in why
// (an unterminated quote, a missing `fi`, nesting deeper than the parser accepts).
Result<std::vector<Node>> parse_script(std::string_view text);

}  // namespace cordon::policy

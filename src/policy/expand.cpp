// Word expansion with static knowledge only; whatever is not known becomes an Unknown piece.
#include <cctype>
#include <cstdlib>

#include "scope.hpp"

namespace cordon::policy {

void Scope::set(const std::string& name, const std::optional<std::string>& value) {
    if (subshells_ > 0) {
        auto it = vars.find(name);
        journal_.emplace_back(name, it == vars.end() ? std::nullopt : std::optional(it->second));
    }
    if (name == "IFS") custom_ifs = !value || *value != " \t\n";
    if (value)
        vars[name] = *value;
    else
        vars.erase(name);
}

Subshell::~Subshell() {
    for (size_t i = sc_.journal_.size(); i > mark_; --i) {
        auto& [name, old] = sc_.journal_[i - 1];
        if (old)
            sc_.vars[name] = std::move(*old);
        else
            sc_.vars.erase(name);
    }
    sc_.journal_.resize(mark_);
    --sc_.subshells_;
    sc_.cwd = std::move(cwd_);
    sc_.positional = std::move(positional_);
    sc_.positional_known = positional_known_;
    sc_.custom_ifs = custom_ifs_;
}

std::optional<std::string> Scope::get(const std::string& name) const {
    if (!name.empty() && std::isdigit(static_cast<unsigned char>(name[0]))) {
        size_t i = static_cast<size_t>(std::atoi(name.c_str()));
        if (i < positional.size()) return positional[i];
        if (positional_known) return std::string();
        return std::nullopt;
    }
    if (name == "#" && positional_known) return std::to_string(positional.empty() ? 0 : positional.size() - 1);
    auto it = vars.find(name);
    if (it != vars.end()) return it->second;
    return std::nullopt;
}

std::optional<std::string> static_value(const std::vector<Field>& fields) {
    if (fields.empty()) return std::string();
    if (fields.size() != 1 || !fields[0].is_static()) return std::nullopt;
    return fields[0].static_text();
}

namespace {

constexpr size_t kMaxBraceWords = 256;

void add_unquoted(Field& cur, std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
        char c = text[i];
        if (c == '*' || c == '?') {
            cur.add(Piece::Kind::Glob, text.substr(i, 1));
            ++i;
        } else if (c == '[' && text.find(']', i + 2) != std::string_view::npos) {
            size_t close = text.find(']', i + 2);
            cur.add(Piece::Kind::Glob, text.substr(i, close - i + 1));
            i = close + 1;
        } else {
            size_t e = text.find_first_of("*?[", i + 1);
            if (e == std::string_view::npos) e = text.size();
            cur.add(Piece::Kind::Lit, text.substr(i, e - i));
            i = e;
        }
    }
}

// A known value substituted unquoted: split on blanks, globs stay active.
void add_split(std::vector<Field>& fields, Field& cur, bool& have, std::string_view v) {
    size_t i = 0;
    while (i < v.size()) {
        if (v[i] == ' ' || v[i] == '\t' || v[i] == '\n') {
            if (have) fields.push_back(std::move(cur));
            cur = Field();
            have = false;
            while (i < v.size() && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n')) ++i;
            continue;
        }
        size_t e = v.find_first_of(" \t\n", i);
        if (e == std::string_view::npos) e = v.size();
        add_unquoted(cur, v.substr(i, e - i));
        have = true;
        i = e;
    }
}

// The first brace group in TEXT: open and close positions and the top-level comma positions.
struct BraceGroup {
    size_t open = 0, close = 0;
    std::vector<size_t> commas;
    bool sequence = false;  // {a..b}
};

std::optional<BraceGroup> find_brace(std::string_view t) {
    for (size_t open = t.find('{'); open != std::string_view::npos; open = t.find('{', open + 1)) {
        int depth = 0;
        BraceGroup g;
        g.open = open;
        for (size_t i = open + 1; i < t.size(); ++i) {
            if (t[i] == '{') {
                ++depth;
            } else if (t[i] == '}') {
                if (depth-- == 0) {
                    g.close = i;
                    break;
                }
            } else if (t[i] == ',' && depth == 0) {
                g.commas.push_back(i);
            }
        }
        if (g.close == 0) return std::nullopt;
        std::string_view inner = t.substr(open + 1, g.close - open - 1);
        g.sequence = g.commas.empty() && inner.find("..") != std::string_view::npos;
        if (!g.commas.empty() || g.sequence) return g;
    }
    return std::nullopt;
}

void brace_into(const Word& w, std::vector<Word>& out) {
    for (size_t k = 0; k < w.size(); ++k) {
        const WordPart& p = w[k];
        if (p.kind != WordPart::Kind::Lit || p.quoted) continue;
        auto g = find_brace(p.text);
        if (!g) continue;
        if (out.size() >= kMaxBraceWords) break;
        std::string prefix = p.text.substr(0, g->open), suffix = p.text.substr(g->close + 1);
        if (g->sequence) {  // {1..100}: some characters here, as a glob
            Word copy = w;
            copy[k].text = prefix + "*" + suffix;
            brace_into(copy, out);
            return;
        }
        size_t start = g->open + 1;
        g->commas.push_back(g->close);
        for (size_t c : g->commas) {
            Word copy = w;
            copy[k].text = prefix + p.text.substr(start, c - start) + suffix;
            brace_into(copy, out);
            start = c + 1;
        }
        return;
    }
    out.push_back(w);
}

}  // namespace

std::vector<Word> brace_expand(const Word& w) {
    bool any = false;
    for (const auto& p : w)
        any = any || (p.kind == WordPart::Kind::Lit && !p.quoted && p.text.find('{') != std::string::npos);
    if (!any) return {w};
    // Substitutions run once, not once per alternative: expand a copy without their commands and
    // give them back to the first word (brace expansion keeps the parts in place).
    Word stripped = w;
    for (auto& p : stripped) p.body.clear();
    std::vector<Word> out;
    brace_into(stripped, out);
    if (out.size() >= kMaxBraceWords) {
        WordPart unknown;
        unknown.kind = WordPart::Kind::Param;  // a complex parameter: unknown
        unknown.body = std::vector<Node>();
        Word result{unknown};
        for (const auto& p : w) {
            result[0].body.insert(result[0].body.end(), p.body.begin(), p.body.end());
        }
        return {result};
    }
    for (size_t k = 0; k < w.size() && k < out[0].size(); ++k) out[0][k].body = w[k].body;
    return out;
}

// One switch over the kinds of word part, each a few lines that share the field being built
// and the splitting state: split into functions, each would take and return all of it.
std::vector<Field> expand_word(const Word& w, Scope& sc, bool split,  // NOLINT(readability-function-size)
                               const RunSubstitution& run) {
    std::vector<Field> fields;
    Field cur;
    bool have = false;
    for (const auto& part : w) {
        using K = WordPart::Kind;
        switch (part.kind) {
            case K::Lit:
                if (part.quoted)
                    cur.add(Piece::Kind::Lit, part.text);
                else
                    add_unquoted(cur, part.text);
                have = true;
                break;
            case K::Tilde: {
                std::optional<std::string> dir;
                if (part.text.empty())
                    dir = sc.get("HOME");
                else if (part.text == "+")
                    dir = sc.get("PWD");
                else if (part.text == "-")
                    dir = sc.get("OLDPWD");
                else if (part.text == "root")
                    dir = "/root";
                if (dir)
                    cur.add(Piece::Kind::Lit, *dir);
                else
                    cur.add(Piece::Kind::Unknown, "~" + part.text);
                have = true;
                break;
            }
            case K::Param: {
                if (!part.body.empty()) {
                    Subshell sub(sc);
                    run(part.body, sc);
                }
                if ((part.text == "@" || part.text == "*") && sc.positional_known) {
                    bool first = true;
                    for (size_t i = 1; i < sc.positional.size(); ++i) {
                        const auto& v = sc.positional[i];
                        if (!first && (part.text == "@" || !part.quoted)) {
                            if (have) fields.push_back(std::move(cur));
                            cur = Field();
                        } else if (!first) {
                            cur.add(Piece::Kind::Lit, " ");
                        }
                        first = false;
                        if (v)
                            cur.add(Piece::Kind::Lit, *v);
                        else
                            cur.add(Piece::Kind::Unknown, "$" + part.text);
                        have = true;
                    }
                    break;
                }
                auto v = part.text.empty() ? std::nullopt : sc.get(part.text);
                bool splits = !part.quoted && split;
                if (!v || (splits && sc.custom_ifs)) {
                    cur.add(Piece::Kind::Unknown, part.text.empty() ? "${...}" : "$" + part.text);
                    have = true;
                } else if (!splits) {
                    cur.add(Piece::Kind::Lit, *v);
                    have = true;
                } else {
                    add_split(fields, cur, have, *v);
                }
                break;
            }
            case K::CmdSubst:
            case K::ProcSubst: {
                {
                    Subshell sub(sc);
                    run(part.body, sc);
                }
                if (part.kind == K::ProcSubst)
                    cur.add(Piece::Kind::Lit, "/dev/fd/63");
                else
                    cur.add(Piece::Kind::Unknown, "$(...)");
                have = true;
                break;
            }
            case K::Arith:
                cur.add(Piece::Kind::Unknown, "$((...))");
                have = true;
                break;
        }
    }
    if (have) fields.push_back(std::move(cur));
    return fields;
}

}  // namespace cordon::policy

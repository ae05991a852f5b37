// git_config.hpp: the parser follows git 2.39's config.c step by step (same states, same
// character classes, same line counting), so that what it reports is what git would use.
#include "cordon/git_config.hpp"

#include <array>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

namespace cordon {

namespace {

// git's sane_ctype: ASCII only, and "space" is these four (not \v or \f).
bool is_space(int c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
bool is_alpha(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_alnum(int c) {
    return is_alpha(c) || (c >= '0' && c <= '9');
}
bool is_keychar(int c) {
    return is_alnum(c) || c == '-';
}
char to_lower(int c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
}

// get_next_char: "\r\n" reads as "\n", the end reads as "\n" (again at every later call) with
// eof set, and each "\n" read counts a line.
class Reader {
public:
    explicit Reader(std::string_view text) : text_(text) {}

    int next() {
        int c = raw();
        if (c == '\r') {
            c = raw();
            if (c != '\n') {
                if (c != EOF) --pos_;
                c = '\r';
            }
        }
        if (c != EOF && ++total_ > INT_MAX) {  // git's guard against absurdly long files
            eof_ = true;
            return 0;
        }
        if (c == '\n') ++line;
        if (c == EOF) {
            eof_ = true;
            ++line;
            c = '\n';
        }
        return c;
    }
    [[nodiscard]] bool eof() const { return eof_; }

    int line = 1;

private:
    int raw() { return pos_ < text_.size() ? static_cast<unsigned char>(text_[pos_++]) : EOF; }

    std::string_view text_;
    size_t pos_ = 0;
    uint64_t total_ = 0;
    bool eof_ = false;
};

class Parser {
public:
    explicit Parser(std::string_view text) : in_(text) {}
    GitConfigParse run();

private:
    bool value(std::string& value);
    bool variable(int name_line);
    bool extended_section(int c);
    bool section();

    Reader in_;
    std::string var_;  // the section stem ("core.", "remote.Origin."), then the variable's name
    GitConfigParse out_;
};

// parse_value: into VALUE, as git makes it.
bool Parser::value(std::string& value) {
    bool quote = false;
    bool comment = false;
    size_t space = 0;
    for (;;) {
        int c = in_.next();
        if (c == '\n') {
            if (quote) {
                --in_.line;
                return false;
            }
            return true;
        }
        if (comment) continue;
        if (is_space(c) && !quote) {
            if (!value.empty()) ++space;
            continue;
        }
        if (!quote && (c == ';' || c == '#')) {
            comment = true;
            continue;
        }
        value.append(space, ' ');
        space = 0;
        if (c == '\\') {
            c = in_.next();
            if (c == '\n') continue;
            if (c == 't') {
                c = '\t';
            } else if (c == 'b') {
                c = '\b';
            } else if (c == 'n') {
                c = '\n';
            } else if (c != '\\' && c != '"') {
                return false;
            }
            value += static_cast<char>(c);
            continue;
        }
        if (c == '"') {
            quote = !quote;
            continue;
        }
        value += static_cast<char>(c);
    }
}

// get_value: the name's first letter is already in var_.
bool Parser::variable(int name_line) {
    int c = 0;
    for (;;) {
        c = in_.next();
        if (in_.eof() || !is_keychar(c)) break;
        var_ += to_lower(c);
    }
    while (c == ' ' || c == '\t') c = in_.next();
    std::optional<std::string> val;
    if (c != '\n') {
        if (c != '=' || !value(val.emplace())) return false;
    }
    // git's callbacks take the key as a C string: a NUL (from a subsection) ends it there.
    out_.entries.push_back({var_.substr(0, var_.find('\0')), name_line, std::move(val)});
    return true;
}

// get_extended_base_var: `[section "sub"]`, from the space after the section's name.
bool Parser::extended_section(int c) {
    do {
        if (c == '\n') {
            --in_.line;
            return false;
        }
        c = in_.next();
    } while (is_space(c));
    if (c != '"') return false;
    var_ += '.';
    for (;;) {
        c = in_.next();
        if (c == '"') break;
        if (c == '\\') c = in_.next();  // takes the next character as it is
        if (c == '\n') {
            --in_.line;
            return false;
        }
        var_ += static_cast<char>(c);
    }
    return in_.next() == ']';
}

// get_base_var: after '['.
bool Parser::section() {
    for (;;) {
        int c = in_.next();
        if (in_.eof()) return false;
        if (c == ']') return true;
        if (is_space(c)) return extended_section(c);
        if (!is_keychar(c) && c != '.') return false;
        var_ += to_lower(c);
    }
}

// git_parse_source's main loop.
GitConfigParse Parser::run() {
    constexpr std::string_view bom = "\xEF\xBB\xBF";
    size_t bom_read = 0;
    bool at_start = true;
    bool comment = false;
    size_t stem = 0;
    for (;;) {
        int c = in_.next();
        if (at_start && bom_read < bom.size()) {
            if (c == static_cast<unsigned char>(bom[bom_read])) {
                ++bom_read;
                continue;
            }
            if (bom_read != 0) break;  // a partial BOM is an error
            at_start = false;
        }
        if (c == '\n') {
            if (in_.eof()) return std::move(out_);
            comment = false;
            continue;
        }
        if (comment || is_space(c)) continue;
        if (c == '#' || c == ';') {
            comment = true;
            continue;
        }
        if (c == '[') {
            var_.clear();
            if (!section() || var_.empty()) break;
            var_ += '.';
            stem = var_.size();
            continue;
        }
        if (!is_alpha(c)) break;
        int name_line = in_.line;
        var_.resize(stem);
        var_ += to_lower(c);
        if (!variable(name_line)) break;
    }
    out_.error_line = in_.line;
    return std::move(out_);
}

// Names one section allows; "*" allows any name at that level, "" none.
struct AllowedSection {
    std::string_view section;
    std::string_view two_level;    // section.name
    std::string_view three_level;  // section.<sub>.name
};

// The one table of data-only keys. A key is safe only if its section is here and its name is
// listed at its level; everything else (alias, include, url, credential, filter, gpg, ssh, ...
// and every unknown section) is unsafe.
constexpr auto kAllowed = std::to_array<AllowedSection>({
    // core: the repository's format, index, packing and checkout settings; no command, pager,
    // editor, hook path, fsmonitor or proxy (worktree moves only the work tree, not config/hooks),
    // nor sharedrepository (0777 would have the host's git make world-writable files).
    {"core",
     "repositoryformatversion filemode bare logallrefupdates symlinks ignorecase "
     "precomposeunicode worktree autocrlf eol safecrlf checkroundtripencoding quotepath "
     "sparsecheckout sparsecheckoutcone splitindex untrackedcache commitgraph multipackindex "
     "abbrev compression loosecompression bigfilethreshold packedgitlimit packedgitwindowsize "
     "deltabasecachelimit preloadindex trustctime checkstat warnambiguousrefs "
     "whitespace commentchar commentstring excludesfile attributesfile fsync fsyncmethod "
     "fsyncobjectfiles createobject packedrefstimeout filesreflocktimeout protecthfs protectntfs "
     "notesref hidedotfiles restrictinheritedhandles",
     ""},
    // extensions: the repository format's feature flags (object format, worktree config, ...).
    {"extensions", "*", ""},
    // remote: where to fetch from and push to, and refspecs; not the programs run at either end.
    {"remote", "pushdefault",
     "url pushurl fetch push tagopt promisor partialclonefilter mirror prune prunetags "
     "skipdefaultupdate skipfetchall followremotehead"},
    // branch: upstream tracking and descriptions.
    {"branch", "autosetupmerge autosetuprebase sort", "remote merge rebase pushremote description"},
    // submodule: where submodules come from and which are active; not update (it may be a command).
    {"submodule", "recurse fetchjobs propagatebranches", "url active branch shallow ignore fetchrecursesubmodules"},
    // user, author, committer: identity strings.
    {"user", "name email signingkey useconfigonly", ""},
    {"author", "name email", ""},
    {"committer", "name email", ""},
    // init: the default branch's name only (templatedir would copy hooks in).
    {"init", "defaultbranch", ""},
    // pull, push, fetch, rebase, rerere, commit, tag: choices between git's own behaviours.
    {"pull", "rebase ff", ""},
    {"push", "default autosetupremote followtags", ""},
    {"fetch", "prune prunetags writecommitgraph recursesubmodules parallel showforcedupdates", ""},
    {"rebase", "autosquash autostash updaterefs missingcommitscheck abbreviatecommands", ""},
    {"rerere", "enabled autoupdate", ""},
    {"commit", "gpgsign verbose cleanup status", ""},
    {"tag", "gpgsign sort", ""},
    // merge, diff: git's built-in algorithms and their knobs; no external tool or driver.
    {"merge", "ff conflictstyle renames renamelimit log verbosity", ""},
    {"diff",
     "renames renamelimit algorithm mnemonicprefix noprefix relative context indentheuristic "
     "colormoved",
     ""},
    // Sections whose two-level keys are all display, housekeeping or built-in behaviour; their
    // three-level keys are not allowed (lfs.customtransfer.<x>.path is a program).
    {"color", "*", ""},
    {"advice", "*", ""},
    {"status", "*", ""},
    {"log", "*", ""},
    {"i18n", "*", ""},
    {"column", "*", ""},
    {"index", "*", ""},
    {"pack", "*", ""},
    {"gc", "*", ""},
    {"maintenance", "*", ""},
    {"feature", "*", ""},
    {"receive", "*", ""},
    {"worktree", "*", ""},
    {"clone", "*", ""},
    {"lfs", "*", ""},
    {"blame", "*", ""},
    {"grep", "*", ""},
    {"help", "*", ""},
    {"versionsort", "*", ""},
    // http: the few transport options a checkout writes, per URL too (actions/checkout's
    // extraheader); not the proxy or TLS settings, which together could turn the host's fetches
    // and pushes, credentials included, to someone else.
    {"http", "extraheader postbuffer version lowspeedlimit lowspeedtime emptyauth",
     "extraheader postbuffer version lowspeedlimit lowspeedtime emptyauth"},
});

bool iequal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (to_lower(static_cast<unsigned char>(a[i])) != to_lower(static_cast<unsigned char>(b[i]))) return false;
    }
    return true;
}

// NAME is one of the space-separated WORDS, or WORDS is "*".
bool listed(std::string_view words, std::string_view name) {
    if (words == "*") return !name.empty();
    while (!words.empty()) {
        size_t end = words.find(' ');
        if (iequal(words.substr(0, end), name)) return true;
        if (end == std::string_view::npos) break;
        words.remove_prefix(end + 1);
    }
    return false;
}

// A key in a message: its bytes as they are when printable, else \xNN.
std::string printable(std::string_view key) {
    std::string out;
    for (char ch : key) {
        auto c = static_cast<unsigned char>(ch);
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out += ch;
        } else {
            std::array<char, 5> hex{};
            std::snprintf(hex.data(), hex.size(), "\\x%02x", c);
            out += hex.data();
        }
    }
    return out;
}

}  // namespace

GitConfigParse parse_git_config(std::string_view text) {
    return Parser(text).run();
}

bool git_config_key_safe(std::string_view key) {
    size_t first = key.find('.');
    size_t last = key.rfind('.');
    if (first == std::string_view::npos || first == 0) return false;
    std::string_view section = key.substr(0, first);
    std::string_view name = key.substr(last + 1);
    bool three_level = first != last;
    for (const AllowedSection& allowed : kAllowed) {
        if (!iequal(allowed.section, section)) continue;
        return listed(three_level ? allowed.three_level : allowed.two_level, name);
    }
    return false;
}

std::string git_config_unsafe(std::string_view text) {
    GitConfigParse parsed = parse_git_config(text);
    if (parsed.error_line != 0) return "is not a config git can read (line " + std::to_string(parsed.error_line) + ")";
    for (const GitConfigEntry& entry : parsed.entries) {
        if (!git_config_key_safe(entry.key))
            return "sets " + printable(entry.key) + " (line " + std::to_string(entry.line) + ")";
    }
    return "";
}

std::string git_commondir_path(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    return std::string(text.substr(0, text.find('\0')));
}

std::string git_todo_unsafe(std::string_view text) {
    int line = 0;
    for (size_t at = 0; at < text.size(); ++line) {
        size_t end = text.find('\n', at);
        if (end == std::string_view::npos) end = text.size();
        const size_t word = text.find_first_not_of(" \t", at);
        if (word < end) {
            const size_t stop = std::min(end, text.find_first_of(" \t\r", word));
            const std::string_view cmd = text.substr(word, stop - word);
            if (cmd == "exec" || cmd == "x") return "has an exec line (line " + std::to_string(line + 1) + ")";
        }
        at = end + 1;
    }
    return "";
}

std::optional<std::string> git_file_path(std::string_view text) {
    constexpr std::string_view prefix = "gitdir: ";
    // starts_with on git's NUL-terminated buffer: a NUL inside the prefix fails it as here.
    if (text.substr(0, prefix.size()) != prefix) return std::nullopt;
    text.remove_prefix(prefix.size());
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    if (text.empty()) return std::nullopt;  // git: "no path in gitfile"
    return std::string(text.substr(0, text.find('\0')));
}

}  // namespace cordon

// parse_git_config(), git_config_key_safe() and git_config_unsafe(): git's config grammar rule by
// rule, the same texts (and a few hundred generated ones) compared with what the real git reads,
// and the allowlist against the configs real git commands write.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cordon/git_config.hpp"
#include "test_files.hpp"

using namespace cordon;
namespace fs = std::filesystem;

namespace {

using namespace std::string_literals;  // "...\0..."s keeps the NUL

std::vector<std::string> keys_of(std::string_view text) {
    std::vector<std::string> keys;
    for (const GitConfigEntry& e : parse_git_config(text).entries) keys.push_back(e.key);
    return keys;
}

int error_of(std::string_view text) {
    return parse_git_config(text).error_line;
}

// TEXT with its control and non-ASCII bytes visible, for failure messages.
std::string shown(std::string_view text) {
    std::string out;
    for (char ch : text) {
        auto c = static_cast<unsigned char>(ch);
        if (c == '\n') {
            out += "\\n";
        } else if (c >= 0x20 && c < 0x7f) {
            out += ch;
        } else {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        }
    }
    return out;
}

// A directory under the temp dir, removed with everything in it at the end of the test.
struct TempDir {
    fs::path path;
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "cordon-gitcfg-XXXXXX").string();
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
};

// A shell command line that runs ARGS in DIR with git seeing nothing of the host's or the
// caller's configuration (no system or global config, no GIT_* variables, C messages) and not
// finding a repository above DIR.
std::string in_clean_git(const fs::path& dir, const std::string& args) {
    std::string d = dir.string();
    return "cd '" + d + "' && env -i PATH=\"$PATH\" HOME='" + d + "' LC_ALL=C GIT_CONFIG_NOSYSTEM=1 " +
           "GIT_CONFIG_GLOBAL=/dev/null GIT_CEILING_DIRECTORIES='" + dir.parent_path().string() + "' " +
           "GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t.invalid GIT_COMMITTER_NAME=t " + "GIT_COMMITTER_EMAIL=t@t.invalid " +
           args;
}

int run_shell(const std::string& cmd) {
    int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void require_git() {
    if (run_shell("git --version >/dev/null 2>&1") != 0)
        FAIL("git is not installed: these tests compare with the real git (scripts/install-deps installs it)");
}

void write_file(const fs::path& path, std::string_view text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    REQUIRE(out.good());
}

// What `git config --file F --list --name-only` reads in TEXT: the keys it prints and, when it
// stops with "bad config line N", that N (0 when it reads the file to the end).
struct GitRead {
    std::vector<std::string> keys;
    int error_line = 0;
    std::string failure;  // anything else that went wrong
};

GitRead git_reads(const TempDir& dir, std::string_view text) {
    GitRead got;
    write_file(dir.path / "config", text);
    std::string cmd = in_clean_git(dir.path, "git config --file config --list --name-only -z 2>err");
    FILE* out = ::popen(cmd.c_str(), "r");
    REQUIRE(out != nullptr);
    std::string printed;
    char buf[4096];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, out)) > 0) printed.append(buf, n);
    int status = ::pclose(out);
    for (size_t at = 0; at < printed.size();) {
        size_t end = printed.find('\0', at);
        if (end == std::string::npos) end = printed.size();
        got.keys.push_back(printed.substr(at, end - at));
        at = end + 1;
    }
    std::string err = test::slurp((dir.path / "err").string());
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    size_t bad = err.find("bad config line ");
    if (code != 0 && bad != std::string::npos)
        got.error_line = std::atoi(err.c_str() + bad + 16);
    else if (code != 0 || !err.empty())
        got.failure = "exit " + std::to_string(code) + ": " + err;
    return got;
}

void check_same_as_git(const TempDir& dir, std::string_view text) {
    GitRead git = git_reads(dir, text);
    GitConfigParse ours = parse_git_config(text);
    std::vector<std::string> keys;
    for (const GitConfigEntry& e : ours.entries) keys.push_back(e.key);
    INFO("config: " << shown(text));
    CHECK(git.failure.empty());
    CHECK(keys == git.keys);
    CHECK(ours.error_line == git.error_line);
}

// The targeted texts: each grammar rule, and the tricks that hide or forge a key.
const std::vector<std::string>& targeted() {
    static const std::vector<std::string> texts = {
        "",
        "\n\n",
        "[core]\n\tbare = false\n",
        "[core] fsmonitor = x\n",
        "[core]fsmonitor\n",
        "[core.x]\nfsmonitor = y\n",
        "[Core.Sub]\nA = 1\n",
        "[Core]\n\tFSMonitor = x\n",
        "[remote \"Origin\"]\n\turl = u\n",
        "[remote  \t\"a\\\"b\\\\c\\d\"]\nurl = u\n",
        "[a]\nb = c \\\nfsmonitor = x\n",
        "[a]\nb = c \\\r\nfsmonitor = x\n",
        "[a]\nb = \"# ; not a comment\"\nc = d\n",
        "[a]\nb = x # comment \\\nfsmonitor = y\n",
        "[a]\nb = x ; comment \\\nfsmonitor = y\n",
        "; c \\\n[core]\n# c \\\nfsmonitor = x\n",
        "[core]\r\n\tbare = false\r\n\tfsmonitor = x\r\n",
        "[core]\rfsmonitor = x\n",
        "\xEF\xBB\xBF[core]\nbare = true\n",
        "\xEF\xBB[core]\nbare = true\n",
        "[core]\n\xEF\xBB\xBF"
        "bare = true\n",
        "[a]\nb = x\0y\nc = d\n"s,
        "[core \"fsmonitor\0x\"]\ny = z\n"s,
        "[a]\n\0b = c\n"s,
        "[a]\nb = \\t\\n\\b\\\\\\\"\n",
        "[a]\nb = \\q\n",
        "[a]\nb = \"x\ny\"\n",
        "[a]\nb = \"x",
        "[a]\nb = x\\",
        "[core",
        "[core\n",
        "[core \"x\"\n",
        "[core \"x\" ]\n",
        "[core \"x\ny\"]\n",
        "[core \"x\\\ny\"]\n",
        "[core x]\n",
        "[]\na = 1\n",
        "[ \"sub\"]\na = 1\n",
        "[.]\na = 1\n",
        "[a_b]\n",
        "[a]\n1b = c\n",
        "[a]\n-b = c\n",
        "[a]\nb-1 = c\n",
        "[a]\nb_c = d\n",
        "[a]\nb\n",
        "[a]\nb",
        "[a]\nb x\n",
        "[a]\nb \t = \t c\n",
        "[a]\nb\v= c\n",
        "\f[a]\n",
        "x = 1\n[a]\nb = 2\n",
        "[a]\nb = 1\n[c \"d\"]\ne\n[f]\ng = h\n",
        "[a]\n\n\nb = \"x\\\ny\" \\\n z\n\"",
    };
    return texts;
}

// Random configs from the pieces git's grammar is made of, right and wrong.
std::string random_config(std::mt19937& rng) {
    static const std::vector<std::string> headers = {"[core]",
                                                     "[Core]",
                                                     "[remote \"Origin\"]",
                                                     "[remote \"a\\\"b\"]",
                                                     "[s \"x\\\\y\"]",
                                                     "[a.B]",
                                                     "[a.b.C]",
                                                     "[]",
                                                     "[ \"s\"]",
                                                     "[.]",
                                                     "[core",
                                                     "[core \"x\"",
                                                     "[core \"x\" ]",
                                                     "[core\t\"x\"]",
                                                     "[core \"x\ny\"]",
                                                     "[c-d]",
                                                     "[c_d]",
                                                     "[1a]",
                                                     "[core \"\"]",
                                                     "[core \"a\\\n\"]",
                                                     "[s \"\\q\"]",
                                                     "[core \"a\0b\"]"s,
                                                     "[s\r\"x\"]",
                                                     "[s \"x\"]]"};
    static const std::vector<std::string> names = {"a", "FSMonitor", "x-y", "x_y", "1a", "-a", "a1", "B", "url"};
    static const std::vector<std::string> values = {"",
                                                    " = v",
                                                    "=v",
                                                    " = \"q # ; \"",
                                                    " = a # c",
                                                    " = a ; c \\",
                                                    " = a \\\n b",
                                                    " = \"a\nb\"",
                                                    " = \\q",
                                                    " = \\t\\n\\b\\\\\\\"",
                                                    "\t=\tv",
                                                    " x",
                                                    " = \"open",
                                                    " = a\\",
                                                    " = \"a\\\nb\"",
                                                    " = ",
                                                    " =",
                                                    " = a\rb",
                                                    " = a\0b"s,
                                                    " = a \\\r\n b"};
    static const std::vector<std::string> strays = {
        "\n", "\r\n", "\r", " ", "\t",  "# comment \\\n", "; c\n", "\v", "\f", "\0"s, "\xEF\xBB\xBF", "\xff", "=",
        "\"", "\\",   "]",  "#", "\n\n"};
    static const std::vector<std::string> plain = {
        "[core]",       "[remote \"Origin\"]", "[Core.Sub]",         "a = v",    "FSMonitor", "url = \"x # y\"",
        "b = c \\\n d", "x = \"a\\tb\" ; c",   "\t# only a comment", "[a] b = c"};
    auto pick = [&rng](const std::vector<std::string>& from) -> const std::string& {
        return from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
    };
    std::string text;
    if (rng() % 10 == 0) text += "\xEF\xBB\xBF";
    int pieces = std::uniform_int_distribution<int>(1, 8)(rng);
    for (int i = 0; i < pieces; ++i) {
        // Weighted so that a fair share of the texts get to their end: headers 2, well-formed
        // pieces 3, variables 3, stray bytes 1, line ends 1 in 10.
        unsigned kind = rng() % 10;
        if (kind < 2)
            text += pick(headers);
        else if (kind < 5)
            text += pick(plain);
        else if (kind < 8)
            text += pick(names) + pick(values);
        else if (kind < 9)
            text += pick(strays);
        else
            text += (rng() % 2 ? "\n" : "\r\n");
        if (rng() % 3 != 0) text += "\n";
    }
    return text;
}

// The keys of every config file under DIR's repositories (the main config, config.worktree,
// .git/modules/*/config, ...), as git_config_unsafe sees them.
std::vector<std::pair<std::string, std::string>> configs_under(const fs::path& dir) {
    std::vector<std::pair<std::string, std::string>> found;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        std::string name = e.path().filename().string();
        if (e.is_regular_file() && (name == "config" || name == "config.worktree") &&
            e.path().string().find("/objects/") == std::string::npos)
            found.emplace_back(e.path().string(), test::slurp(e.path().string()));
    }
    return found;
}

}  // namespace

// --- The grammar, rule by rule ------------------------------------------------------------------

TEST_CASE("git_config: sections, variables and their lines", "[git_config]") {
    GitConfigParse p = parse_git_config("# top\n[core]\n\tbare = false\n\n[remote \"Origin\"]\n\turl = u\n");
    CHECK(p.error_line == 0);
    REQUIRE(p.entries.size() == 2);
    CHECK(p.entries[0].key == "core.bare");
    CHECK(p.entries[0].line == 3);
    CHECK(p.entries[1].key == "remote.Origin.url");
    CHECK(p.entries[1].line == 6);
}

TEST_CASE("git_config: a variable on the header's line", "[git_config]") {
    CHECK(keys_of("[core] fsmonitor = x\n") == std::vector<std::string>{"core.fsmonitor"});
    CHECK(keys_of("[core]fsmonitor\n") == std::vector<std::string>{"core.fsmonitor"});
}

TEST_CASE("git_config: the legacy [section.Sub] form is lowercased whole", "[git_config]") {
    CHECK(keys_of("[core.x]\nfsmonitor = y\n") == std::vector<std::string>{"core.x.fsmonitor"});
    CHECK(keys_of("[Core.Sub]\nA = 1\n") == std::vector<std::string>{"core.sub.a"});
}

TEST_CASE("git_config: section and variable names are lowercased, subsections are not", "[git_config]") {
    CHECK(keys_of("[Core]\n\tFSMonitor = x\n") == std::vector<std::string>{"core.fsmonitor"});
    CHECK(keys_of("[Remote \"Origin\"]\nURL = u\n") == std::vector<std::string>{"remote.Origin.url"});
}

TEST_CASE("git_config: a subsection's backslash takes the next character as it is", "[git_config]") {
    CHECK(keys_of("[s  \t\"a\\\"b\\\\c\\d\"]\nx = u\n") == std::vector<std::string>{"s.a\"b\\cd.x"});
    CHECK(error_of("[core \"x\\\ny\"]\n") == 1);
}

TEST_CASE("git_config: a continued value hides what looks like a key", "[git_config]") {
    GitConfigParse p = parse_git_config("[a]\nb = c \\\nfsmonitor = x\nd = e\n");
    CHECK(p.error_line == 0);
    REQUIRE(p.entries.size() == 2);
    CHECK(p.entries[0].key == "a.b");
    CHECK(p.entries[1].key == "a.d");
    CHECK(p.entries[1].line == 4);  // the continuation line counts
    CHECK(keys_of("[a]\nb = c \\\r\nfsmonitor = x\n") == std::vector<std::string>{"a.b"});
}

TEST_CASE("git_config: quotes hold # and ; ; a comment's backslash continues nothing", "[git_config]") {
    CHECK(keys_of("[a]\nb = \"# ; x\"\nc = d\n") == std::vector<std::string>{"a.b", "a.c"});
    CHECK(keys_of("[a]\nb = x # c \\\nfsmonitor = y\n") == std::vector<std::string>{"a.b", "a.fsmonitor"});
    CHECK(keys_of("; c \\\n[core]\n# c \\\nfsmonitor = x\n") == std::vector<std::string>{"core.fsmonitor"});
}

TEST_CASE("git_config: CRLF, a lone CR, a BOM", "[git_config]") {
    CHECK(keys_of("[core]\r\n\tbare = false\r\n\tfsmonitor = x\r\n") ==
          std::vector<std::string>{"core.bare", "core.fsmonitor"});
    CHECK(keys_of("[core]\rfsmonitor = x\n") == std::vector<std::string>{"core.fsmonitor"});  // CR is a space
    CHECK(keys_of("\xEF\xBB\xBF[core]\nbare = true\n") == std::vector<std::string>{"core.bare"});
    CHECK(error_of("\xEF\xBB[core]\n") == 1);  // a partial BOM
    CHECK(error_of("[core]\n\xEF\xBB\xBF"
                   "bare = true\n") == 2);  // a BOM not at the start
}

TEST_CASE("git_config: NUL is an ordinary byte, and ends a key as git's C strings do", "[git_config]") {
    CHECK(keys_of("[a]\nb = x\0y\nc = d\n"s) == std::vector<std::string>{"a.b", "a.c"});
    CHECK(keys_of("[core \"fsmonitor\0x\"]\ny = z\n"s) == std::vector<std::string>{"core.fsmonitor"});
    CHECK(error_of("[a]\n\0b = c\n"s) == 2);
}

TEST_CASE("git_config: value escapes", "[git_config]") {
    CHECK(error_of("[a]\nb = \\t\\n\\b\\\\\\\"\n") == 0);
    CHECK(error_of("[a]\nb = \\q\n") == 2);
    CHECK(error_of("[a]\nb = x\\") == 0);  // a backslash at the end continues into the end
}

TEST_CASE("git_config: the errors git stops at, on git's line", "[git_config]") {
    CHECK(error_of("[a]\nb = \"x\ny\"\n") == 2);  // a newline inside quotes
    CHECK(error_of("[a]\nb = \"x") == 2);
    CHECK(error_of("[core") == 2);  // git counts the end as one more line
    CHECK(error_of("[core\n") == 1);
    CHECK(error_of("[core \"x\" ]\n") == 1);
    CHECK(error_of("[core x]\n") == 1);
    CHECK(error_of("[]\na = 1\n") == 1);
    CHECK(error_of("[a_b]\n") == 1);
    CHECK(error_of("[a]\n1b = c\n") == 2);
    CHECK(error_of("[a]\n-b = c\n") == 2);
    CHECK(error_of("[a]\nb_c = d\n") == 2);
    CHECK(error_of("[a]\nb x\n") == 2);
    CHECK(error_of("[a]\nb\v= c\n") == 2);  // \v and \f are not spaces to git
    CHECK(error_of("\n\v[a]\n") == 2);
    CHECK(error_of("\f[a]\n") == 1);
}

TEST_CASE("git_config: the keys before an error are kept (git has used them)", "[git_config]") {
    GitConfigParse p = parse_git_config("[core]\nfsmonitor = x\n[oops\n");
    CHECK(p.error_line == 3);
    CHECK(keys_of("[core]\nfsmonitor = x\n[oops\n") == std::vector<std::string>{"core.fsmonitor"});
}

TEST_CASE("git_config: what git accepts that looks odd", "[git_config]") {
    CHECK(keys_of("x = 1\n[a]\nb = 2\n") == std::vector<std::string>{"x", "a.b"});  // before any header
    CHECK(keys_of("[ \"sub\"]\na = 1\n") == std::vector<std::string>{".sub.a"});    // empty section name
    CHECK(keys_of("[.]\na = 1\n") == std::vector<std::string>{"..a"});
    CHECK(keys_of("[a]\nb\n") == std::vector<std::string>{"a.b"});
    CHECK(keys_of("[a]\nb") == std::vector<std::string>{"a.b"});
}

// --- The same texts, and generated ones, read by the real git ----------------------------------

TEST_CASE("git_config: reads what git 2.39 reads, text for text", "[git_config][git]") {
    require_git();
    TempDir dir;
    for (const std::string& text : targeted()) check_same_as_git(dir, text);
    std::mt19937 rng(20261201);
    int read_to_end = 0;
    for (int i = 0; i < 400; ++i) {
        std::string text = random_config(rng);
        check_same_as_git(dir, text);
        if (error_of(text) == 0) ++read_to_end;
    }
    // The generated texts exercise both outcomes, not only an early error.
    INFO("generated configs git reads to the end: " << read_to_end << " of 400");
    CHECK(read_to_end > 100);
    CHECK(read_to_end < 300);
}

// --- The allowlist -------------------------------------------------------------------------------

TEST_CASE("git_config: the configs real git commands write are safe", "[git_config][git]") {
    require_git();
    TempDir dir;
    const char* script =
        "git init -q a && git -C a commit -q --allow-empty -m one && "
        "git clone -q a b && git clone -q --bare a bare.git && git clone -q --mirror a mirror.git && "
        "git -C b worktree add -q ../wt && git -C wt sparse-checkout set --cone d && "
        "git -C b -c protocol.file.allow=always submodule add -q \"$PWD/a\" sub && "
        "git -C b config pull.rebase true";
    REQUIRE(run_shell(in_clean_git(dir.path, std::string("sh -c '") + script + "' >/dev/null 2>&1")) == 0);
    auto configs = configs_under(dir.path);
    bool saw_submodule = false;
    bool saw_worktree_config = false;
    for (const auto& [path, text] : configs) {
        INFO(path << ":\n" << text);
        CHECK(parse_git_config(text).error_line == 0);
        CHECK(git_config_unsafe(text).empty());
        if (path.find("/modules/sub/config") != std::string::npos) {
            saw_submodule = true;
            CHECK(text.find("worktree") != std::string::npos);
        }
        if (path.find("config.worktree") != std::string::npos) saw_worktree_config = true;
    }
    CHECK(saw_submodule);
    CHECK(saw_worktree_config);
    CHECK(configs.size() >= 6);
}

TEST_CASE("git_config: data keys are safe, at their level only", "[git_config]") {
    for (const char* key : {"core.bare",
                            "CORE.Bare",
                            "core.worktree",
                            "core.repositoryformatversion",
                            "extensions.objectformat",
                            "remote.pushdefault",
                            "remote.origin.url",
                            "remote.Any.Thing.fetch",
                            "branch.main.merge",
                            "branch.autosetupmerge",
                            "submodule.x.url",
                            "submodule.recurse",
                            "user.name",
                            "author.email",
                            "init.defaultbranch",
                            "pull.rebase",
                            "push.default",
                            "fetch.prune",
                            "merge.conflictstyle",
                            "diff.algorithm",
                            "color.ui",
                            "gc.auto",
                            "lfs.url",
                            "http.postbuffer",
                            "http.https://h.test/.extraheader",
                            "remote..url"})
        CHECK(git_config_key_safe(key));
}

TEST_CASE("git_config: keys that run code or point elsewhere are unsafe", "[git_config]") {
    for (const char* key : {"core.fsmonitor",
                            "core.sharedrepository",
                            "http.proxy",
                            "http.sslverify",
                            "http.https://h.test/.proxy",
                            "core.hookspath",
                            "core.sshcommand",
                            "core.pager",
                            "core.editor",
                            "core.askpass",
                            "core.gitproxy",
                            "core.alternaterefscommand",
                            "core.x.bare",
                            "remote.origin.uploadpack",
                            "remote.origin.receivepack",
                            "remote.origin.vcs",
                            "remote.origin.proxy",
                            "remote.origin.proxyauthmethod",
                            "remote.url",
                            "branch.main.mergeoptions",
                            "submodule.x.update",
                            "init.templatedir",
                            "pull.twohead",
                            "merge.tool",
                            "merge.x.driver",
                            "diff.external",
                            "diff.x.textconv",
                            "diff.x.command",
                            "lfs.customtransfer.x.path",
                            "color.x.y",
                            "user.x.name",
                            "alias.st",
                            "include.path",
                            "includeif.gitdir:/x.path",
                            "pager.log",
                            "interactive.difffilter",
                            "sequence.editor",
                            "gpg.program",
                            "ssh.variant",
                            "url.x.insteadof",
                            "credential.helper",
                            "filter.lfs.smudge",
                            "protocol.allow",
                            "transfer.fsckobjects",
                            "uploadpack.packobjectshook",
                            "instaweb.httpd",
                            "web.browser",
                            "browser.x.cmd",
                            "man.viewer",
                            "difftool.x.cmd",
                            "mergetool.x.cmd",
                            "gui.editor",
                            "safe.directory",
                            "trace2.eventtarget",
                            "nosuchsection.x",
                            "x",
                            "",
                            ".",
                            "..a",
                            ".sub.a",
                            "core.",
                            "color."})
        CHECK_FALSE(git_config_key_safe(key));
}

TEST_CASE("git_config: git_config_unsafe names the first finding", "[git_config]") {
    CHECK(git_config_unsafe("[core]\n\tbare = false\n[remote \"o\"]\n\turl = u\n").empty());
    CHECK(git_config_unsafe("[core]\n\tbare = false\n\n\tfsmonitor = x\n") == "sets core.fsmonitor (line 4)");
    CHECK(git_config_unsafe("[core \"fsmonitor\0x\"]\ny = z\n"s) == "sets core.fsmonitor (line 2)");
    CHECK(git_config_unsafe("[a \"\x1b[31m\"]\nb\n") == "sets a.\\x1b[31m.b (line 2)");
    CHECK(git_config_unsafe("[core]\nbare = true\n\n\n\n\n[oops\n") == "is not a config git can read (line 7)");
    CHECK(git_config_unsafe("[core]\nfsmonitor = x\n[oops\n") == "is not a config git can read (line 3)");
}

TEST_CASE("git_format: a .git file's path as read_gitfile_gently reads it", "[git_config]") {
    using namespace std::string_literals;
    CHECK(git_file_path("gitdir: t\n") == "t");
    CHECK(git_file_path("gitdir: t") == "t");
    CHECK(git_file_path("gitdir: t\r\r\n\n") == "t");
    CHECK(git_file_path("gitdir: t \t\n") == "t \t");  // blanks stay: they are the path's
    CHECK(git_file_path("gitdir: t\0/x\n"s) == "t");
    CHECK(git_file_path("gitdir: \0x"s) == "");  // the .git file's own directory
    CHECK(git_file_path("gitdir: /abs/p\n") == "/abs/p");
    CHECK_FALSE(git_file_path("gitdir: \n"));
    CHECK_FALSE(git_file_path("gitdir:t\n"));
    CHECK_FALSE(git_file_path("GITDIR: t\n"));
    CHECK_FALSE(git_file_path(" gitdir: t\n"));
    CHECK_FALSE(git_file_path("gitdi\0r: t"s));
}

TEST_CASE("git_format: a commondir's path as get_common_dir_noenv reads it", "[git_config]") {
    using namespace std::string_literals;
    CHECK(git_commondir_path("../..\n") == "../..");
    CHECK(git_commondir_path("../c\t\r\n") == "../c\t");
    CHECK(git_commondir_path("c\0junk\n"s) == "c");
    CHECK(git_commondir_path("\n") == "");
}

TEST_CASE("git_config: values as git's parse_value makes them", "[git_config]") {
    GitConfigParse p = parse_git_config(
        "[include]\n\tpath = ../.gitconfig ; a comment\n\tpath = \"a b\"\\tc  d\n"
        "[includeIf \"gitdir:~/w/\"]\n\tpath = x\\\ny # more\n[core]\n\tbare\n\tfsmonitor =\n");
    CHECK(p.error_line == 0);
    REQUIRE(p.entries.size() == 5);
    CHECK(p.entries[0].value == "../.gitconfig");
    CHECK(p.entries[1].value == "a b\tc  d");  // as `git config --list` prints it
    CHECK(p.entries[2].key == "includeif.gitdir:~/w/.path");
    CHECK(p.entries[2].value == "xy");
    CHECK_FALSE(p.entries[3].value.has_value());  // a bare name: git's boolean true
    CHECK(p.entries[4].value == "");
}

// A git config file read the way git 2.39's config.c reads it (git_parse_source and its helpers),
// and an allowlist of the keys git only stores data under. Pure: the scanner that looks at the
// repositories a run created or changed (issue 10) calls these on a config file's text and moves
// aside any file whose keys could make the host's git run code or follow another location.
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cordon {

struct GitConfigEntry {
    // As `git config --list --name-only` prints it: section and variable name lowercased,
    // subsection as written ("remote.Origin.url" keeps "Origin"), cut at a NUL byte as git's
    // C strings cut it (`[core "fsmonitor<NUL>x"] y = z` is core.fsmonitor to git).
    std::string key;
    int line = 0;  // 1-based line where the variable's name starts
    // The value as git's parse_value makes it (quotes, escapes and comments taken out, inner
    // blanks each a space); nullopt for a name without "=" (git's boolean true).
    std::optional<std::string> value;
};

struct GitConfigParse {
    std::vector<GitConfigEntry> entries;  // up to the error, if any: git uses those too
    int error_line = 0;                   // 0: parsed to the end; else git's "bad config line N"
};

GitConfigParse parse_git_config(std::string_view text);

// True when KEY (as above) is one git only stores data under: it never runs a command, a
// program or a shell, never loads another config, and never redirects to another repository's
// config or hooks (excludesfile and attributesfile name files git reads as data only). Everything not on the allowlist
// is unsafe.
bool git_config_key_safe(std::string_view key);

// The first unsafe thing in TEXT, for a message: "sets core.fsmonitor (line 3)", or
// "is not a config git can read (line 7)"; empty when every key is safe.
std::string git_config_unsafe(std::string_view text);

// Why a rebase's or cherry-pick's todo list (TEXT) is unsafe for the host's git: its first exec
// line ("exec" or "x"), which git runs on --continue, as "has an exec line (line 3)"; empty
// when it has none.
std::string git_todo_unsafe(std::string_view text);

// The path a .git file names, read as git 2.39's read_gitfile_gently reads one (TEXT is the
// whole file, which git reads only up to 1 MiB): it starts "gitdir: ", the file's trailing
// newlines and carriage returns are dropped and nothing else (a trailing space or tab is part of
// the path), and the path ends at a NUL. nullopt where git refuses the file; "" names the
// directory that holds the .git file.
std::optional<std::string> git_file_path(std::string_view text);

// The path a commondir file names, read as git's get_common_dir_noenv reads it: the same
// trimming, no prefix. "" names the git directory itself.
std::string git_commondir_path(std::string_view text);

}  // namespace cordon

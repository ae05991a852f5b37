#pragma once
// git's wildmatch with WM_PATHNAME, as git's includeIf "gitdir:" and "onbranch:" conditions use
// it, with git's own rules rather than fnmatch(3)'s:
//   '*' and '?' never match '/'; "**" matches across '/' only as a whole path component (at the
//   start or after '/', and at the end or before '/'), elsewhere it is one '*'; "**/" also
//   matches no directory at all;
//   [classes]: '!' or '^' negates, ranges, [:alpha:] and the other names, ']' first is a member,
//   a backslash escapes, and no class matches '/'; an unclosed class matches nothing;
//   a backslash makes the next character literal; a trailing one matches nothing.
// FOLD is gitdir/i: the text and the pattern's plain characters compare without case, and as in
// git an escaped character and a class's single members are compared as written (only ranges and
// [:upper:] fold). STEPS bounds the work, and is what is left of it on return: git's pruning
// keeps most patterns cheap, but many stars in one name backtrack (five over a 40-character
// name: some 760,000 steps); once it runs out, the answer is no match.
#include <cstddef>
#include <string_view>

namespace cordon {

bool git_wildmatch(std::string_view pattern, std::string_view text, bool fold, size_t& steps);

}  // namespace cordon

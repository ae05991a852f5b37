// What a program may act as for the name it is run under (its argv[0]): one rule, shared by the
// static check (over Fields, analyze.cpp) and the exec-time check (over real words, exec_gate.cpp).
#pragma once

#ifdef CORDON_UTIL
#error "util sees no jail, policy or CLI header: they build on it (CMakeLists.txt defines CORDON_UTIL for src/util)"
#endif

#include <string>
#include <string_view>
#include <vector>

#include "cordon/paths.hpp"
#include "cordon/policy/analyze.hpp"

namespace cordon::policy {

// The command lines a program run with ARGV's words after argv[0] and the name ARGV0 as its
// argv[0] may act as: ARGV with ARGV0 (first); that name without a login dash (busybox's -rm is
// rm); busybox or toybox named anything that begins with theirs run their first argument
// (busyboxZ rm); busybox run as another name is that applet run by busybox (busybox named sh is
// busybox sh, whose commands run in its own process); and a name git-SUB is git's SUB (git named
// git-clean), as git reads its name (no other program is split at a dash: tee-wrapper is not
// tee). LIT turns a name into a word of ARGV's kind (a std::string, or a Field).
template <class Word, class Lit>
std::vector<std::vector<Word>> argv0_variants(const std::vector<Word>& argv, std::string_view argv0,
                                              std::string_view program, Lit lit) {
    std::vector<std::vector<Word>> out;
    if (argv.empty() || argv0.empty()) return out;
    auto named = [&](std::vector<Word> head) {
        head.insert(head.end(), argv.begin() + 1, argv.end());
        return head;
    };
    out.push_back(named({lit(argv0)}));
    std::string_view name = path_basename(argv0);
    const std::string_view given = name;
    while (!name.empty() && name.front() == '-') name.remove_prefix(1);
    if (name.empty()) return out;
    if (name != given) out.push_back(named({lit(name)}));
    if (is_multicall(name) && argv.size() > 1) out.emplace_back(argv.begin() + 1, argv.end());
    if (is_multicall(path_basename(program)) && !is_multicall(name)) out.push_back(named({argv[0], lit(name)}));
    if (name.size() > 4 && name.starts_with("git-")) out.push_back(named({lit("git"), lit(name.substr(4))}));
    return out;
}

}  // namespace cordon::policy

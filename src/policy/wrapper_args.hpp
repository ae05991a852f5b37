// How wrapper programs (sudo, env, flock, strace, ...) spell their own options, and what they
// run: the pieces wrappers.cpp and program_wrappers.cpp share (wrapper_args.cpp). Internal to
// src/policy.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cordon/policy/analyze.hpp"

namespace cordon::policy::wrap {

using Argv = std::vector<Field>;

// getopt-style options that stop at the first operand (the wrapped command).
struct Opts {
    std::string_view short_arg;              // short options taking an argument
    std::vector<std::string_view> long_arg;  // long options taking an argument
    std::string_view short_optional = {};    // short options whose argument is attached, if any
};

struct Parsed {
    size_t next = 1;                                    // index of the first operand
    std::vector<std::pair<std::string, Field>> values;  // option (e.g. "-C" or "--chdir") -> value
    std::string flags;                                  // short flags seen, in order
    std::vector<std::string> longs;                     // long flags seen (without value)
    bool unknown = false;                               // a non-static word among the options
};

// Whether F is the static word W.
bool is_word(const Field& f, std::string_view w);

Parsed parse_opts(const Argv& argv, const Opts& o, size_t start = 1);
// Options anywhere among the operands, as GNU getopt permutes them (su root -c TEXT); up to "--".
Parsed parse_permuted(const Argv& argv, const Opts& o);
bool has_flag(const Parsed& p, char c);
bool has_long(const Parsed& p, std::string_view l);
// The last value given to any of NAMES ("-C", "--chdir"), or null.
const Field* value_of(const Parsed& p, std::initializer_list<std::string_view> names);

Argv rest(const Argv& argv, size_t from);
bool is_env_assignment(const Field& f);
size_t skip_assignments(const Argv& argv, size_t i);
// Arguments from FROM joined with spaces, as eval and watch pass them to a shell.
Field join(const Argv& argv, size_t from);
// A string split into words at blanks, with single and double quotes and a backslash taking the
// next character as it is outside single quotes (env -S "STRING", a git alias, as git's
// split_cmdline); one unknown word when F is not static.
Argv split_words(const Field& f);
// Every occurrence of REPL inside literal pieces replaced with VALUE's pieces.
Field substitute(const Field& f, std::string_view repl, const Field& value);

// An environment variable whose value other programs run as a command (EDITOR, GIT_SSH_COMMAND,
// PAGER, ...): its value is checked as shell text wherever it is set.
bool is_command_variable(std::string_view name);
// argv of a shell running TEXT: how a value that some program runs as a command is checked.
Argv shell_text(const Field& text);

// What a wrapper runs: the command line A (in directory CHDIR), shell text, or nothing known.
Unwrapped inner(Argv a, const Field* chdir = nullptr);
Unwrapped script(const Field& text);
// A shell running a script file (or source FILE): what it runs is checked at its execs.
Unwrapped script_file();
// An interactive shell started without a command (sudo -s, su, script): it reads its commands
// from standard input, which a pipe or a here-document may fill.
Unwrapped stdin_shell();
Unwrapped unanalyzable(std::string why);
// CMD run with NAME as its argv[0] (exec -a NAME, the loader's --argv0 NAME; none when null):
// CMD, and what NAME makes it (policy::argv0_variants). WHO names the option in a refusal.
Unwrapped inner_named(Argv cmd, const Field* name, std::string_view who);

}  // namespace cordon::policy::wrap

namespace cordon::policy {

// The wrappers of program_wrappers.cpp: flock, strace, unshare, systemd-run, ... and the
// table-driven ones (nice, timeout, ...). PROG is argv[0]'s basename; None for any other.
Unwrapped unwrap_program(std::string_view prog, const wrap::Argv& argv);
// git -C DIR and git's settings that run shell text (git_wrapper.cpp).
Unwrapped git(const wrap::Argv& argv);

}  // namespace cordon::policy

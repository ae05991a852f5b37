// bwrap mode's internals shared by the parent (run.cpp), the child's mount replay (setup.cpp)
// and the child's process steps (child.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cordon/bwrap.hpp"

namespace cordon::bwrap {

// A failure in the child: bubblewrap's message, without "bwrap: ", and the errno (0: none).
struct ChildError {
    std::string text;
    int err = 0;
};

// What the parent decided before clone and the child needs.
struct Plan {
    const Options* options = nullptr;
    bool privileged = false;  // uid 0 with its capabilities, and no new user namespace
    bool new_userns = false;
    bool need_init = false;                     // a process that waits for the payload (pid 1 of a new pid namespace)
    std::vector<int> keep_caps;                 // the capabilities the payload keeps
    std::string cwd;                            // the caller's working directory
    std::string host_tty;                       // stdout's terminal (ttyname): --dev's /dev/console
    std::vector<std::string> seccomp_programs;  // compiled BPF (struct sock_filter[]), in order
    int proceed_fd = -1;                        // the child reads one byte here once its id maps are written
    int report_fd = -1;                         // close-on-exec: 'S' + text on a setup failure, 'E' on exec failure
};

// Replay the ops inside the new mount namespace and pivot into the new root; runs in the child.
// Leaves lock files' descriptors in LOCKS.
bool setup_mounts(const Plan& plan, std::vector<int>& locks, ChildError& error);

// Whether this process has CAP_SYS_ADMIN in its effective set (with uid 0: bubblewrap's "privileged").
bool has_sys_admin();

// A check that bubblewrap makes of the options before anything runs, under the extras too:
// nullopt when they pass, else bubblewrap's message.
std::optional<std::string> check_options(const Options& o, bool privileged);

// The child: mounts, identity, capabilities, then the payload (and its waiting parent).
[[noreturn]] void child_main(const Plan& plan);

// "bwrap: TEXT[: strerror]" on stderr (with --level-prefix, "<3>" first).
void print_error(const Options& options, const std::string& text, int err);
// "bwrap: TEXT" on stderr (with --level-prefix, "<4>" first).
void print_warning(const Options& options, const std::string& text);

}  // namespace cordon::bwrap

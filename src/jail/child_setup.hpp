// Init's steps that build the jail (child_setup.cpp), for the step lists of child.cpp, which
// say why they come in their order. Each reports a failure with setup_failed and exits.
#pragma once

#include "cordon/jail.hpp"

namespace cordon::init {

// STEP failed (errno says why): a SetupError to the supervisor over FD, and exit 125 (child.cpp).
[[noreturn]] void setup_failed(int fd, const char* step);

void die_with_supervisor(int sync);
void close_inherited_fds(const ChildContext& ctx, bool premounts_attached);
void write_id_maps(const ChildContext& ctx);
void take_jail_ids(const ChildContext& ctx);
void enter_cgroup_namespace(const ChildContext& ctx);
bool build_filesystem(const ChildContext& ctx);
void set_up_uts_and_network(const ChildContext& ctx);
void enter_working_directory(const ChildContext& ctx);
int build_landlock(const ChildContext& ctx);
void lock_privileges(const ChildContext& ctx);
// At the payload's end (end_jail, child.cpp), before Exited is sent.
void hold_placeholders(const ChildContext& ctx);

}  // namespace cordon::init

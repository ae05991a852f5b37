// cordon-test-nouserns COMMAND [ARG...]: runs COMMAND under a syscall filter like Docker's
// default profile where it matters to cordon: clone and unshare with CLONE_NEWUSER fail with
// EPERM, clone3 with ENOSYS (its flags are in memory, out of a filter's reach). The Landlock
// jail's tests (tests/integration/t_isolation.sh) run cordon under it.
#include <linux/sched.h>
#include <seccomp.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: cordon-test-nouserns COMMAND [ARG...]\n");
        return 2;
    }
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (ctx == nullptr) return 2;
    const scmp_datum_t user = CLONE_NEWUSER;
    int rc =
        seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, user, user));
    if (rc == 0) {
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, user, user));
    }
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    if (rc == 0) rc = seccomp_load(ctx);  // sets no_new_privs, as a container runtime does
    seccomp_release(ctx);
    if (rc != 0) {
        std::fprintf(stderr, "cordon-test-nouserns: seccomp: %s\n", std::strerror(-rc));
        return 2;
    }
    ::execvp(argv[1], argv + 1);
    std::fprintf(stderr, "cordon-test-nouserns: %s: %s\n", argv[1], std::strerror(errno));
    return 127;
}

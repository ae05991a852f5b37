// Payloads for the VM limit tests, linked statically so the VM needs nothing for them.
//   vmhelper hog MB      touch MB mebibytes, 1 MiB at a time; prints "allocated MB"
//   vmhelper forks N     fork up to N sleeping children; prints "forked K" (K < N: refused)
//   vmhelper spin SEC    busy-loop for SEC seconds of wall time; prints "spun"
//   vmhelper as UID CMD...   drop to UID/GID UID without supplementary groups and exec CMD
//                        (busybox's setpriv cannot change ids)
//   vmhelper noclone3 CMD...  exec CMD with clone3 failing with ENOSYS, as on Linux < 5.3 or
//                        under a container's seccomp profile (cordon's fallback path)
#include <grp.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

int hog(long mb) {
    std::vector<char*> chunks;
    for (long i = 0; i < mb; ++i) {
        char* p = static_cast<char*>(std::malloc(1 << 20));
        if (!p) {
            std::printf("malloc failed after %ld MB\n", i);
            return 2;
        }
        std::memset(p, static_cast<int>(i & 0x7f) + 1, 1 << 20);
        chunks.push_back(p);
    }
    std::printf("allocated %ld\n", mb);
    return 0;
}

int forks(long n) {
    std::vector<pid_t> kids;
    int err = 0;
    for (long i = 0; i < n; ++i) {
        pid_t p = ::fork();
        if (p == 0) {
            ::pause();
            ::_exit(0);
        }
        if (p < 0) {
            err = errno;
            break;
        }
        kids.push_back(p);
    }
    std::printf("forked %zu%s%s\n", kids.size(), err ? " then " : "", err ? std::strerror(err) : "");
    std::fflush(stdout);
    for (pid_t p : kids) ::kill(p, SIGKILL);
    for (pid_t p : kids) ::waitpid(p, nullptr, 0);
    return 0;
}

int spin(long seconds) {
    struct timespec t0 {
    }, t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t0);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 100000; ++i) x = x + 1;
        ::clock_gettime(CLOCK_MONOTONIC, &t);
    } while (t.tv_sec - t0.tv_sec < seconds);
    std::printf("spun\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 4 && std::string(argv[1]) == "as") {
        auto id = static_cast<uid_t>(std::strtoul(argv[2], nullptr, 10));
        if (::setgroups(0, nullptr) != 0 || ::setresgid(id, id, id) != 0 || ::setresuid(id, id, id) != 0) {
            std::perror("vmhelper as");
            return 125;
        }
        ::execvp(argv[3], argv + 3);
        std::perror(argv[3]);
        return 127;
    }
    if (argc >= 3 && std::string(argv[1]) == "noclone3") {
        struct sock_filter filter[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog {
            static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter
        };
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
            std::perror("vmhelper noclone3");
            return 125;
        }
        ::execvp(argv[2], argv + 2);
        std::perror(argv[2]);
        return 127;
    }
    if (argc != 3) {
        std::fprintf(stderr, "usage: vmhelper hog MB | forks N | spin SECONDS\n");
        return 2;
    }
    std::string mode = argv[1];
    long n = std::strtol(argv[2], nullptr, 10);
    if (mode == "hog") return hog(n);
    if (mode == "forks") return forks(n);
    if (mode == "spin") return spin(n);
    std::fprintf(stderr, "vmhelper: unknown mode %s\n", argv[1]);
    return 2;
}

/* Interleaved start-up timing: runs each command once per round, alternating the order every
 * round, N rounds after 20 warm-up rounds, and prints mean, median, p10 and p90 per command.
 * Drift on a busy machine then hits every command alike. Output of the commands is discarded.
 *   cc -O2 -o interleave bench/interleave.c
 *   ./interleave 500 "/path/cordon -q -- /bin/true" "/usr/bin/bwrap --unshare-all ... /bin/true"
 * Commands are split on spaces (no quoting) and run without a shell: give absolute paths. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kMaxCommands = 16, kMaxArgs = 64 };

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int compare(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static double run(char** argv, int devnull) {
    double start = now_us();
    pid_t pid = fork();
    if (pid == 0) {
        dup2(devnull, 1);
        dup2(devnull, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    waitpid(pid, NULL, 0);
    return now_us() - start;
}

int main(int argc, char** argv) {
    if (argc < 3 || argc - 2 > kMaxCommands) {
        fprintf(stderr, "usage: interleave ROUNDS COMMAND... (at most %d commands)\n", kMaxCommands);
        return 2;
    }
    int rounds = atoi(argv[1]), n = argc - 2;
    static char* cmd[kMaxCommands][kMaxArgs + 1];
    for (int c = 0; c < n; ++c) {
        int k = 0;
        for (char* p = strtok(strdup(argv[c + 2]), " "); p && k < kMaxArgs; p = strtok(NULL, " ")) cmd[c][k++] = p;
    }
    double* t = calloc((size_t)rounds * (size_t)n, sizeof *t);
    int devnull = open("/dev/null", O_WRONLY);
    for (int r = 0; r < 20; ++r)
        for (int c = 0; c < n; ++c) run(cmd[c], devnull);
    for (int r = 0; r < rounds; ++r)
        for (int i = 0; i < n; ++i) {
            int c = r % 2 ? n - 1 - i : i;
            t[c * rounds + r] = run(cmd[c], devnull);
        }
    for (int c = 0; c < n; ++c) {
        double* x = t + c * rounds;
        double sum = 0;
        for (int r = 0; r < rounds; ++r) sum += x[r];
        qsort(x, (size_t)rounds, sizeof *x, compare);
        printf("mean %6.0f us  median %6.0f  p10 %6.0f  p90 %6.0f  %s\n", sum / rounds, x[rounds / 2], x[rounds / 10],
               x[rounds * 9 / 10], argv[c + 2]);
    }
    return 0;
}

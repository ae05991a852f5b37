/* Concurrent start-up: starts N copies of each command at once, R rounds, the commands taking
 * turns round by round (the first one alternating), and prints for each the p50, p90 and p99
 * of spawn-to-exit and the number of runs that did not exit 0. Between rounds it pauses PAUSE
 * milliseconds, so a round does not pay for the previous one's namespace teardown.
 *   cc -O2 -o burst bench/burst.c
 *   ./burst N ROUNDS PAUSE_MS "/path/cordon -q -- /bin/true" "/usr/bin/bwrap ... /bin/true"
 * Commands are split on spaces (no quoting) and run without a shell: give absolute paths.
 * Output, one line per command:
 *   p50 US p90 US p99 US max US failures K/M  COMMAND */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kMaxCommands = 8, kMaxArgs = 64 };

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int compare(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* One burst: N children forked back to back; each one's time runs from just before its fork to
 * the moment wait reports it. Returns the failures; times go to OUT. */
static int burst(char** argv, int n, int devnull, double* out) {
    pid_t* pids = calloc((size_t)n, sizeof *pids);
    double* start = calloc((size_t)n, sizeof *start);
    int failures = 0;
    for (int i = 0; i < n; ++i) {
        start[i] = now_us();
        pids[i] = fork();
        if (pids[i] == 0) {
            dup2(devnull, 1);
            dup2(devnull, 2);
            execv(argv[0], argv);
            _exit(127);
        }
    }
    for (int done = 0; done < n; ++done) {
        int status = 0;
        pid_t pid = wait(&status);
        double end = now_us();
        for (int i = 0; i < n; ++i) {
            if (pids[i] == pid) {
                out[i] = end - start[i];
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
            }
        }
    }
    free(pids);
    free(start);
    return failures;
}

int main(int argc, char** argv) {
    if (argc < 5 || argc - 4 > kMaxCommands) {
        fprintf(stderr, "usage: burst N ROUNDS PAUSE_MS COMMAND... (at most %d commands)\n", kMaxCommands);
        return 2;
    }
    int n = atoi(argv[1]), rounds = atoi(argv[2]), pause_ms = atoi(argv[3]), ncmd = argc - 4;
    if (n < 1 || rounds < 1) return 2;
    static char* cmd[kMaxCommands][kMaxArgs + 1];
    for (int c = 0; c < ncmd; ++c) {
        int k = 0;
        for (char* p = strtok(strdup(argv[c + 4]), " "); p && k < kMaxArgs; p = strtok(NULL, " ")) cmd[c][k++] = p;
    }
    size_t per = (size_t)n * (size_t)rounds;
    double* t = calloc(per * (size_t)ncmd, sizeof *t);
    int* failures = calloc((size_t)ncmd, sizeof *failures);
    int devnull = open("/dev/null", O_WRONLY);
    struct timespec pause = {pause_ms / 1000, (long)(pause_ms % 1000) * 1000000L};
    for (int c = 0; c < ncmd; ++c) burst(cmd[c], n < 10 ? n : 10, devnull, t); /* warm-up */
    for (int r = 0; r < rounds; ++r) {
        for (int i = 0; i < ncmd; ++i) {
            int c = r % 2 ? ncmd - 1 - i : i;
            nanosleep(&pause, NULL);
            failures[c] += burst(cmd[c], n, devnull, t + (size_t)c * per + (size_t)r * (size_t)n);
        }
    }
    for (int c = 0; c < ncmd; ++c) {
        double* x = t + (size_t)c * per;
        qsort(x, per, sizeof *x, compare);
        printf("p50 %7.0f p90 %7.0f p99 %7.0f max %7.0f failures %d/%zu  %s\n", x[per / 2], x[per * 9 / 10],
               x[per * 99 / 100], x[per - 1], failures[c], per, argv[c + 4]);
    }
    return 0;
}

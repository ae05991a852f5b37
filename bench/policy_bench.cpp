// How long the policy takes to decide: a one-line agent command must be well under 50 us,
// a 200-line script under 2 ms (issue 3). Run: build/bench/bench_policy
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "cordon/policy.hpp"

namespace {

using cordon::policy::PolicySet;

const PolicySet& policy() {
    static const PolicySet set = [] {
        auto r = cordon::policy::load({CORDON_DEFAULT_POLICY});
        if (!r) {
            std::fprintf(stderr, "%s\n", r.error().message().c_str());
            std::abort();
        }
        return std::move(*r);
    }();
    return set;
}

constexpr const char* kCwd = "/home/user/project";
constexpr const char* kHome = "/home/user";

void check(benchmark::State& state, const std::string& script, bool expect_allow) {
    const PolicySet& set = policy();
    for (auto _ : state) {
        auto d = set.check_script(script, kCwd, kHome);
        if (d.allow != expect_allow) state.SkipWithError("unexpected decision");
        benchmark::DoNotOptimize(d);
    }
}

void BM_OneLine(benchmark::State& state) {
    check(state, "cd /home/user/project && npm test -- --watch=false 2>&1 | tail -n 50", true);
}
BENCHMARK(BM_OneLine);

void BM_OneLineDenied(benchmark::State& state) {
    check(state, "sudo rm -rf --no-preserve-root /", false);
}
BENCHMARK(BM_OneLineDenied);

void BM_NestedWrappers(benchmark::State& state) {
    check(state, "sudo env -i nice -n 5 timeout 10 bash -lc 'cd build && find . -name \"*.o\" -delete'", true);
}
BENCHMARK(BM_NestedWrappers);

std::string script_200() {
    const char* lines[] = {
        "set -euo pipefail",
        "cd \"$(dirname \"$0\")\"",
        "export PATH=\"$HOME/.local/bin:$PATH\"",
        "rm -rf build dist && mkdir -p build",
        "if [ -f requirements.txt ]; then pip install -r requirements.txt; fi",
        "for f in src/*.c; do gcc -c \"$f\" -o \"build/$(basename \"$f\" .c).o\"; done",
        "find . -name '*.pyc' -delete",
        "git log --oneline -n 5 | tee build/log.txt > /dev/null",
        "case \"${1:-all}\" in test) make test;; *) make -j2 all;; esac",
        "echo \"done: $(date +%s)\" >> build/times.log",
    };
    std::string s;
    for (int i = 0; i < 200; ++i) {
        s += lines[i % 10];
        s += '\n';
    }
    return s;
}

void BM_Script200Lines(benchmark::State& state) {
    check(state, script_200(), true);
}
BENCHMARK(BM_Script200Lines)->Unit(benchmark::kMicrosecond);

void BM_Argv(benchmark::State& state) {
    const PolicySet& set = policy();
    std::vector<std::string> argv{"/usr/bin/make", "-j2", "-C", "build", "test"};
    for (auto _ : state) benchmark::DoNotOptimize(set.check_argv(argv, kCwd, kHome));
}
BENCHMARK(BM_Argv);

void BM_LoadDefaultPolicy(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(cordon::policy::load({CORDON_DEFAULT_POLICY}));
}
BENCHMARK(BM_LoadDefaultPolicy)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

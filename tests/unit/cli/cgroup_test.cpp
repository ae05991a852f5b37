// cgroup v2 limits (SPEC §7): option parsing, the /proc parsers, base selection and planning
// against a fake cgroup directory. Nothing here touches /sys/fs/cgroup.
#include <catch2/catch.hpp>

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cordon/cgroup.hpp"
#include "cordon/cli.hpp"
#include "cordon/spec_builder.hpp"

using namespace cordon;
using Strings = std::vector<std::string>;

namespace {

Result<Spec> build(const Strings& args) {
    auto cli = parse_command_line(args);
    if (!cli) return cli.error();
    HostInfo host;
    host.uid = 1000;
    host.gid = 1000;
    host.home = "/nonexistent-home";
    host.cwd = "/";
    auto run = build_spec(*cli, cli->layer, host);
    if (!run) return run.error();
    return std::move(run->spec);
}

// A directory that looks like a cgroup to the planner: the files it reads, nothing more.
struct FakeCgroup {
    std::string dir;
    explicit FakeCgroup(const std::string& controllers) {
        char tmpl[] = "/tmp/cordon-cgroup-test-XXXXXX";
        REQUIRE(::mkdtemp(tmpl) != nullptr);
        dir = tmpl;
        put("cgroup.controllers", controllers + "\n");
        put("cgroup.subtree_control", "\n");
        put("cgroup.procs", std::to_string(::getpid()) + "\n");
    }
    ~FakeCgroup() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
    FakeCgroup(const FakeCgroup&) = delete;
    FakeCgroup& operator=(const FakeCgroup&) = delete;
    void put(const std::string& name, const std::string& text) const { std::ofstream(dir + "/" + name) << text; }
    [[nodiscard]] CgroupHost host() const {
        CgroupHost h;
        h.mount = Cgroup2Mount{dir, "/"};
        h.path = "/";
        h.dir = dir;
        return h;
    }
};

}  // namespace

TEST_CASE("limit options become cgroup values", "[cgroup]") {
    auto s = build({"--memory", "64M", "--pids", "10", "--cpus", "0.5", "--", "true"});
    REQUIRE(s);
    CHECK(s->limits.memory == 64ULL << 20);
    CHECK(!s->limits.memory_swap);  // written as 0 by the supervisor
    CHECK(s->limits.pids == 10u);
    CHECK(s->limits.cpu_quota_us == 50000u);
    CHECK_FALSE(s->limits.best_effort);
    CHECK(s->limits.any());
    CHECK(needed_controllers(s->limits) == Strings{"memory", "pids", "cpu"});

    auto none = build({"--", "true"});
    REQUIRE(none);
    CHECK_FALSE(none->limits.any());
    CHECK(needed_controllers(none->limits).empty());

    auto be = build({"--limits", "best-effort", "--memory", "1G", "--memory-swap", "max", "--", "true"});
    REQUIRE(be);
    CHECK(be->limits.best_effort);
    CHECK(be->limits.memory_swap == UINT64_MAX);
    auto swap = build({"--memory", "1G", "--memory-swap", "512M", "--", "true"});
    REQUIRE(swap);
    CHECK(swap->limits.memory_swap == 512ULL << 20);
}

TEST_CASE("bad limit values name the option and the value", "[cgroup]") {
    struct Case {
        Strings args;
        std::string what, value;
    };
    for (const auto& c : std::vector<Case>{{{"--memory", "12Q"}, "--memory", "12Q"},
                                           {{"--memory", "100K"}, "--memory", "100K"},
                                           {{"--cpus", "abc"}, "--cpus", "abc"},
                                           {{"--cpus", "0.001"}, "--cpus", "0.001"},
                                           {{"--cpus", "1."}, "--cpus", "1."},
                                           {{"--cpus", "-1"}, "--cpus", "-1"},
                                           {{"--pids", "0"}, "--pids", "0"},
                                           {{"--limits", "sometimes"}, "--limits", "sometimes"},
                                           {{"--memory", "1G", "--memory-swap", "lots"}, "--memory-swap", "lots"}}) {
        Strings args = c.args;
        args.insert(args.end(), {"--", "true"});
        auto s = build(args);
        INFO(c.what << " " << c.value);
        REQUIRE_FALSE(s);
        CHECK(s.error().message().find(c.what) != std::string::npos);
        CHECK(s.error().message().find(c.value) != std::string::npos);
    }
    auto lone_swap = build({"--memory-swap", "1G", "--", "true"});
    REQUIRE_FALSE(lone_swap);
    CHECK(lone_swap.error().what == "--memory-swap");
}

TEST_CASE("parse_cpus: microseconds per 100 ms period", "[cgroup]") {
    CHECK(*parse_cpus("0.5") == 50000);
    CHECK(*parse_cpus("2") == 200000);
    CHECK(*parse_cpus("1.25") == 125000);
    CHECK(*parse_cpus(".5") == 50000);
    CHECK(*parse_cpus("0.01") == 1000);
    CHECK(*parse_cpus("0.1234567") == 12345);
    for (const char* bad : {"", ".", "0", "0.009", "1e3", "1,5", " 1", "999999"}) {
        INFO(bad);
        CHECK_FALSE(parse_cpus(bad));
    }
    CHECK(cpu_max_value(50000) == "50000 100000");
}

TEST_CASE("cgroup2 mount and path from /proc", "[cgroup]") {
    const std::string mixed =
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw\n";
    auto m = parse_cgroup2_mount(mixed);
    REQUIRE(m);
    CHECK(m->mount_point == "/sys/fs/cgroup/unified");
    CHECK(m->root == "/");
    auto escaped = parse_cgroup2_mount("50 1 0:40 /sub /mnt/my\\040cg rw - cgroup2 none rw,nsdelegate\n");
    REQUIRE(escaped);
    CHECK(escaped->mount_point == "/mnt/my cg");
    CHECK(escaped->root == "/sub");
    CHECK_FALSE(parse_cgroup2_mount("35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"));

    CHECK(parse_cgroup2_path("4:memory:/x\n1:cpu:/\n0::/user.slice/a.scope\n") == "/user.slice/a.scope");
    CHECK(parse_cgroup2_path("0::/\n") == "/");
    CHECK_FALSE(parse_cgroup2_path("4:memory:/x\n"));

    Cgroup2Mount top{"/sys/fs/cgroup", "/"};
    CHECK(cgroup_dir(top, "/") == "/sys/fs/cgroup");
    CHECK(cgroup_dir(top, "/a/b") == "/sys/fs/cgroup/a/b");
    CHECK_FALSE(cgroup_dir(top, "/../../outside"));  // outside our cgroup namespace
    Cgroup2Mount sub{"/mnt", "/a"};
    CHECK(cgroup_dir(sub, "/a") == "/mnt");
    CHECK(cgroup_dir(sub, "/a/b") == "/mnt/b");
    CHECK_FALSE(cgroup_dir(sub, "/ab"));
    CHECK_FALSE(cgroup_dir(sub, "/c"));
}

TEST_CASE("controller lists and key-value files", "[cgroup]") {
    CHECK(split_words("cpuset cpu io memory\n") == Strings{"cpuset", "cpu", "io", "memory"});
    CHECK(split_words("\n").empty());
    const std::string events = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n";
    CHECK(stat_value(events, "oom_kill") == 1u);
    CHECK(stat_value(events, "oom") == 1u);
    CHECK(stat_value(events, "max") == 12u);
    CHECK_FALSE(stat_value(events, "oom_kil"));
    CHECK(stat_value("usage_usec 1234\nnr_throttled 7\n", "nr_throttled") == 7u);
    const std::string proc_cgroups =
        "#subsys_name\thierarchy\tnum_cgroups\tenabled\n"
        "cpu\t1\t1\t1\nmemory\t4\t90\t1\nhugetlb\t0\t1\t1\npids\t8\t1\t1\nrdma\t0\t1\t0\n";
    CHECK(v1_controllers(proc_cgroups) == Strings{"cpu", "memory", "pids"});
    CHECK(v1_controllers("#subsys_name\thierarchy\tnum_cgroups\tenabled\nmemory\t0\t50\t1\n").empty());
}

TEST_CASE("choose_base follows the no-internal-processes rule", "[cgroup]") {
    BaseFacts f;
    f.self = 100;
    f.own_procs = {100, 42};
    CHECK(choose_base(f) == BaseChoice::NotDelegated);
    f.own_is_root = true;
    f.own_writable = true;
    CHECK(choose_base(f) == BaseChoice::Own);  // the root cgroup may hold processes
    f.own_is_root = false;
    CHECK(choose_base(f) == BaseChoice::Busy);  // shared with 42, parent not ours
    f.parent_writable = true;
    CHECK(choose_base(f) == BaseChoice::Parent);
    f.own_procs = {100};
    CHECK(choose_base(f) == BaseChoice::OwnVacated);  // alone: move to a leaf, use our cgroup
    f.own_writable = false;
    CHECK(choose_base(f) == BaseChoice::Parent);
    f.parent_writable = false;
    CHECK(choose_base(f) == BaseChoice::NotDelegated);
}

TEST_CASE("plan_cgroup: no limits, no cgroup", "[cgroup]") {
    std::vector<std::string> warnings;
    auto p = plan_cgroup(CgroupLimits{}, CgroupHost{}, warnings);
    REQUIRE(p);
    CHECK_FALSE(p->has_value());
    CHECK(warnings.empty());
}

TEST_CASE("plan_cgroup without cgroup2: 125 unless best-effort", "[cgroup]") {
    CgroupLimits l;
    l.memory = 64ULL << 20;
    std::vector<std::string> warnings;
    auto p = plan_cgroup(l, CgroupHost{}, warnings);
    REQUIRE_FALSE(p);
    CHECK(p.error().what == "--memory");
    CHECK(p.error().message().find("no cgroup2 file system is mounted") != std::string::npos);
    CHECK(p.error().hint.find("best-effort") != std::string::npos);
    CHECK(static_cast<int>(p.error().kind) == 125);

    l.best_effort = true;
    auto be = plan_cgroup(l, CgroupHost{}, warnings);
    REQUIRE(be);
    CHECK_FALSE(be->has_value());
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("--memory not applied") != std::string::npos);
}

TEST_CASE("plan_cgroup checks the controllers the base offers", "[cgroup]") {
    FakeCgroup cg("memory pids");
    CgroupLimits l;
    l.memory = 64ULL << 20;
    l.pids = 10;
    std::vector<std::string> warnings;
    auto ok = plan_cgroup(l, cg.host(), warnings);
    REQUIRE(ok);
    REQUIRE(ok->has_value());
    CHECK((*ok)->backend == "cgroupfs");
    CHECK((*ok)->controllers == Strings{"memory", "pids"});
    CHECK(warnings.empty());

    l.cpu_quota_us = 50000;
    auto no_cpu = plan_cgroup(l, cg.host(), warnings);
    REQUIRE_FALSE(no_cpu);
    CHECK(no_cpu.error().what == "--cpus");
    CHECK(no_cpu.error().why.find("cpu controller is not available") != std::string::npos);
    CHECK(no_cpu.error().why.find("offers: memory pids") != std::string::npos);

    CgroupHost v1 = cg.host();
    v1.v1 = {"cpu"};
    auto on_v1 = plan_cgroup(l, v1, warnings);
    REQUIRE_FALSE(on_v1);
    CHECK(on_v1.error().hint.find("cgroup v1 hierarchy") != std::string::npos);

    l.best_effort = true;
    auto partial = plan_cgroup(l, cg.host(), warnings);
    REQUIRE(partial);
    REQUIRE(partial->has_value());
    CHECK((*partial)->controllers == Strings{"memory", "pids"});
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("--cpus not applied") != std::string::npos);
}

TEST_CASE("plan_cgroup names a controller bound to cgroup v1 before delegation", "[cgroup]") {
    // The host of this project's CI: cgroup2 offers only hugetlb, memory and pids are on v1.
    // The cause is the same for root and for a user whose cgroup is not delegated: no
    // "run as root" for a user, since root fails the same way.
    CgroupHost h;
    h.mount = Cgroup2Mount{"/nonexistent/cgroup2", "/"};
    h.path = "/user.slice";
    h.dir = "/nonexistent/cgroup2/user.slice";
    h.v1 = {"memory", "pids"};
    h.v2_root = Strings{"hugetlb"};
    CgroupLimits l;
    l.memory = 64ULL << 20;
    std::vector<std::string> warnings;
    auto p = plan_cgroup(l, h, warnings);
    REQUIRE_FALSE(p);
    CHECK(p.error().what == "--memory");
    CHECK(p.error().why.find("memory controller is bound to a cgroup v1 hierarchy") != std::string::npos);
    CHECK(p.error().why.find("offers: hugetlb") != std::string::npos);
    CHECK(p.error().hint.find("the same for root and every user") != std::string::npos);
    CHECK(p.error().message().find("run as root") == std::string::npos);

    l.best_effort = true;
    auto be = plan_cgroup(l, h, warnings);
    REQUIRE(be);
    CHECK_FALSE(be->has_value());
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("--memory not applied (--limits best-effort): the memory controller is bound") !=
          std::string::npos);

    // Offered by cgroup2 after all (v1 holds it but the root lists it): the backends decide.
    h.v2_root = Strings{"hugetlb", "memory"};
    l.best_effort = false;
    auto p2 = plan_cgroup(l, h, warnings);
    REQUIRE_FALSE(p2);
    CHECK(p2.error().why.find("bound to a cgroup v1 hierarchy") == std::string::npos);
}

TEST_CASE("plan_cgroup refuses a cgroup shared with other processes", "[cgroup]") {
    FakeCgroup cg("memory");
    cg.put("cgroup.procs", std::to_string(::getpid()) + "\n1\n");
    cg.put("cgroup.type", "domain\n");  // not the real root
    CgroupHost h = cg.host();
    h.path = "/";  // no parent within the hierarchy
    CgroupLimits l;
    l.memory = 64ULL << 20;
    std::vector<std::string> warnings;
    auto p = plan_cgroup(l, h, warnings);
    REQUIRE_FALSE(p);
    CHECK(p.error().what == "--memory");
    CHECK(p.error().why.find("holds other processes") != std::string::npos);
}

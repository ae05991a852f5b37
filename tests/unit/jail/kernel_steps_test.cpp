// The kernel steps both jails take (kernel_steps.hpp): what can be seen without privileges,
// the id maps written into a directory that stands in for /proc/PID, and the capability sets.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <string>

#include "cordon/kernel_steps.hpp"
#include "test_files.hpp"

using namespace cordon;

namespace {

// A stand-in for /proc/PID: the files the kernel has, empty.
struct ProcDir {
    std::string path;
    ProcDir() {
        char tmpl[] = "/tmp/cordon-kernel-steps.XXXXXX";
        REQUIRE(::mkdtemp(tmpl) != nullptr);
        path = tmpl;
        for (const char* name : {"setgroups", "uid_map", "gid_map"}) make(name);
    }
    ~ProcDir() {
        for (const char* name : {"setgroups", "uid_map", "gid_map"}) (void)::unlink((path + "/" + name).c_str());
        (void)::rmdir(path.c_str());
    }
    ProcDir(const ProcDir&) = delete;
    ProcDir& operator=(const ProcDir&) = delete;
    void make(const char* name) const {
        ::close(::open((path + "/" + name).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
    }
    std::string read(const char* name) const { return test::slurp(path + "/" + name); }
};

}  // namespace

TEST_CASE("kernel steps: id maps, setgroups denied first", "[kernel_steps]") {
    ProcDir proc;
    const IdMap uid[] = {{0, 1000, 1}};
    const IdMap gid[] = {{0, 100, 1}, {1, 100000, 65536}};
    CHECK(kernel::write_id_maps(proc.path.c_str(), kernel::Setgroups::Deny, uid, gid) == kernel::IdMapStep::Done);
    CHECK(proc.read("setgroups") == "deny");
    CHECK(proc.read("uid_map") == "0 1000 1\n");
    CHECK(proc.read("gid_map") == "0 100 1\n1 100000 65536\n");
}

TEST_CASE("kernel steps: setgroups left alone", "[kernel_steps]") {
    ProcDir proc;
    const IdMap map[] = {{0, 2147483646U, 1}};
    CHECK(kernel::write_id_maps(proc.path.c_str(), kernel::Setgroups::Leave, map, map) == kernel::IdMapStep::Done);
    CHECK(proc.read("setgroups").empty());
    CHECK(proc.read("uid_map") == "0 2147483646 1\n");
    CHECK(proc.read("gid_map") == "0 2147483646 1\n");
}

TEST_CASE("kernel steps: the write that failed, with its errno", "[kernel_steps]") {
    const IdMap map[] = {{1000, 1000, 1}};
    {
        ProcDir proc;
        (void)::unlink((proc.path + "/setgroups").c_str());
        errno = 0;
        CHECK(kernel::write_id_maps(proc.path.c_str(), kernel::Setgroups::Deny, map, map) ==
              kernel::IdMapStep::Setgroups);
        CHECK(errno == ENOENT);
        CHECK(proc.read("uid_map").empty());  // nothing after the failure
        // Tried only: the maps are written all the same.
        CHECK(kernel::write_id_maps(proc.path.c_str(), kernel::Setgroups::TryDeny, map, map) ==
              kernel::IdMapStep::Done);
        CHECK(proc.read("gid_map") == "1000 1000 1\n");
    }
    {
        ProcDir proc;
        (void)::unlink((proc.path + "/uid_map").c_str());
        CHECK(kernel::write_id_maps(proc.path.c_str(), kernel::Setgroups::Deny, map, map) == kernel::IdMapStep::UidMap);
        CHECK(errno == ENOENT);
        CHECK(proc.read("gid_map").empty());
        proc.make("uid_map");
        (void)::unlink((proc.path + "/gid_map").c_str());
        CHECK(kernel::write_id_maps(proc.path.c_str(), kernel::Setgroups::Deny, map, map) == kernel::IdMapStep::GidMap);
        CHECK(errno == ENOENT);
    }
}

TEST_CASE("kernel steps: capability sets as capset takes them", "[kernel_steps]") {
    kernel::CapSets sets{};
    const int caps[] = {0, 12, 31, 32, 40};  // both words, and each end of the first
    kernel::add_capabilities(sets, caps, /*inheritable=*/false);
    CHECK(sets[0].effective == ((1U << 0) | (1U << 12) | (1U << 31)));
    CHECK(sets[0].permitted == sets[0].effective);
    CHECK(sets[1].effective == ((1U << 0) | (1U << 8)));
    CHECK(sets[1].permitted == sets[1].effective);
    CHECK(sets[0].inheritable == 0);
    CHECK(sets[1].inheritable == 0);
    kernel::add_capabilities(sets, caps, /*inheritable=*/true);
    CHECK(sets[0].inheritable == sets[0].effective);
    CHECK(sets[1].inheritable == sets[1].effective);
}

// Id maps: the caller's ids become the jail's ids, nothing else is mapped.
#include <catch2/catch.hpp>

#include "cordon/jail.hpp"

using namespace cordon;

TEST_CASE("idmap: the caller maps to the chosen inside ids", "[idmap]") {
    Spec s;
    s.host_uid = 1000;
    s.host_gid = 100;
    s.uid = 0;
    s.gid = 0;
    auto u = uid_maps(s, false);
    REQUIRE(u.size() == 1);
    CHECK(u[0].inside == 0);
    CHECK(u[0].outside == 1000);
    CHECK(u[0].count == 1);
    auto g = gid_maps(s, false);
    REQUIRE(g.size() == 1);
    CHECK(g[0].inside == 0);
    CHECK(g[0].outside == 100);
    CHECK(g[0].count == 1);
    CHECK(format_id_map(u) == "0 1000 1\n");
    CHECK(format_id_map(g) == "0 100 1\n");
}

TEST_CASE("idmap: uid and gid are independent", "[idmap]") {
    Spec s;
    s.host_uid = 0;
    s.host_gid = 0;
    s.uid = 1234;
    s.gid = 5678;
    CHECK(format_id_map(uid_maps(s, false)) == "1234 0 1\n");
    CHECK(format_id_map(gid_maps(s, false)) == "5678 0 1\n");
}

TEST_CASE("idmap: formatting", "[idmap]") {
    CHECK(format_id_map({}).empty());
    CHECK(format_id_map({IdMap{0, 100000, 65536}, IdMap{65536, 1000, 1}}) == "0 100000 65536\n65536 1000 1\n");
    CHECK(format_id_map({IdMap{4294967294U, 4294967294U, 1}}) == "4294967294 4294967294 1\n");
}

TEST_CASE("idmap: a remapped root caller's jail runs as cordon's jail id", "[idmap]") {
    Spec s;
    s.host_uid = 0;
    s.host_gid = 0;
    CHECK(format_id_map(uid_maps(s, true)) == "0 2147483646 1\n");
    CHECK(format_id_map(gid_maps(s, true)) == "0 2147483646 1\n");
    s.uid = 1000;  // --uid 1000
    CHECK(format_id_map(uid_maps(s, true)) == "1000 2147483646 1\n");
}

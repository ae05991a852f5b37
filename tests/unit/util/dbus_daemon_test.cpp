// The D-Bus client against a real dbus-daemon: hidden from the plain unit run, started by
// tests/unit/with-dbus-daemon.sh (CTest: dbus.daemon) with DBUS_SESSION_BUS_ADDRESS set to a
// private bus.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "cordon/dbus.hpp"

using namespace cordon;
using namespace cordon::dbus;

namespace {

constexpr auto kTimeout = std::chrono::seconds(5);
constexpr const char* kBus = "org.freedesktop.DBus";
constexpr const char* kBusPath = "/org/freedesktop/DBus";

Connection connect() {
    auto path = user_bus_path(std::getenv("DBUS_SESSION_BUS_ADDRESS"), nullptr);
    REQUIRE(path.has_value());
    auto bus = Connection::open(*path, kTimeout);
    INFO((bus.ok() ? "" : bus.error().message()));
    REQUIRE(bus.ok());
    return std::move(*bus);
}

}  // namespace

TEST_CASE("dbus-daemon: Hello, a call, a property and an error", "[.dbus-daemon]") {
    Connection bus = connect();
    CHECK(bus.unique_name().rfind(":1.", 0) == 0);

    auto id = bus.call(method_call(kBus, kBusPath, kBus, "GetId"), kTimeout);
    REQUIRE(id.ok());
    REQUIRE(id->body_signature() == "s");
    CHECK(id->body[0].str.size() == 32);

    auto interfaces = get_property(bus, kBus, kBusPath, kBus, "Interfaces", kTimeout);
    INFO((interfaces.ok() ? "" : interfaces.error().message()));
    REQUIRE(interfaces.ok());
    CHECK(interfaces->type_signature() == "as");

    auto unknown = bus.call(method_call(kBus, kBusPath, kBus, "NoSuchMethod"), kTimeout);
    REQUIRE_FALSE(unknown.ok());
    CHECK_THAT(unknown.error().why, Catch::Contains("(org.freedesktop.DBus.Error.UnknownMethod)"));
}

TEST_CASE("dbus-daemon: a StartTransientUnit call is well-formed and signals are routed", "[.dbus-daemon]") {
    Connection bus = connect();
    // The daemon checks every message it receives and drops a client that sends a malformed
    // one; this one is routed, to a name nobody owns on this bus.
    auto start = bus.call(
        method_call(
            "org.freedesktop.systemd1", "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
            "StartTransientUnit",
            {Value::string("cordon-1-0.scope"), Value::string("fail"),
             Value::array(
                 "(sv)", {Value::structure({Value::string("PIDs"), Value::variant(Value::array("u", {Value::u32(1)}))}),
                          Value::structure({Value::string("Delegate"), Value::variant(Value::boolean(true))})}),
             Value::array("(sa(sv))", {})}),
        kTimeout);
    REQUIRE_FALSE(start.ok());
    CHECK_THAT(start.error().why, Catch::Contains("org.freedesktop.DBus.Error.ServiceUnknown"));

    // A signal the bus sends on its own when a second client connects.
    REQUIRE(add_match(bus, "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged'", kTimeout).ok());
    Connection other = connect();
    for (;;) {
        auto signal = bus.next_signal(Clock::now() + kTimeout);
        REQUIRE(signal.ok());
        if (signal->member != "NameOwnerChanged") continue;  // NameAcquired, for our own name
        REQUIRE(signal->body_signature() == "sss");
        if (signal->body[0].str != other.unique_name()) continue;
        CHECK(signal->body[2].str == other.unique_name());
        break;
    }
}

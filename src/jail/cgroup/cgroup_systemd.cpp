// The systemd backend (SPEC §7): when cordon's cgroup is not delegated (an ordinary login
// session), ask the caller's systemd user manager over D-Bus for a transient scope with
// Delegate=yes holding the supervisor, then let the cgroupfs logic work inside that scope.
// D-Bus is spoken by cordon's own client (cordon/dbus.hpp), not libsystemd's sd-bus: a static
// executable cannot load a shared library.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <random>

#include "cordon/cgroup.hpp"
#include "cordon/dbus.hpp"

namespace cordon {

namespace {

using dbus::Value;

constexpr const char* kDest = "org.freedesktop.systemd1";
constexpr const char* kPath = "/org/freedesktop/systemd1";
constexpr const char* kManager = "org.freedesktop.systemd1.Manager";
// How long sd-bus waits for a reply by default, and how long the scope's start job may take.
constexpr auto kCallTimeout = std::chrono::seconds(25);
constexpr auto kJobTimeout = std::chrono::seconds(10);

Error bus_error(const std::string& step, const std::string& why) {
    return make_error("systemd", step + ": " + why);
}
// A D-Bus failure with its errno spelled out: plan_cgroup and doctor show only the why.
Error bus_error(const std::string& step, const Error& e) {
    std::string why = e.why;
    if (e.err != 0) why += (why.empty() ? "" : ": ") + std::string(std::strerror(e.err));
    return bus_error(step, why);
}

Result<dbus::Connection> connect_user_bus() {
    const char* runtime_dir = std::getenv("XDG_RUNTIME_DIR");
    const std::string hint = std::string(" (is a systemd user manager running? XDG_RUNTIME_DIR=") +
                             (runtime_dir ? runtime_dir : "unset") + ")";
    auto path = dbus::user_bus_path(std::getenv("DBUS_SESSION_BUS_ADDRESS"), runtime_dir);
    if (!path) {
        const std::string why =
            "neither DBUS_SESSION_BUS_ADDRESS (a unix:path= address) nor XDG_RUNTIME_DIR names its socket";
        return bus_error("connect to the user bus", why + hint);
    }
    auto bus = dbus::Connection::open(*path, kCallTimeout);
    if (!bus) {
        Error e = bus_error("connect to the user bus", bus.error());
        e.why += hint;
        return e;
    }
    return bus;
}

Result<std::string> manager_cgroup(dbus::Connection& bus) {
    auto cg = dbus::get_property(bus, kDest, kPath, kManager, "ControlGroup", kCallTimeout);
    if (!cg) return bus_error("ask the user manager for its cgroup", cg.error());
    if (cg->type != 's') return bus_error("ask the user manager for its cgroup", "ControlGroup is not a string");
    return cg->str;
}

Value unit_property(const char* name, Value value) {
    return Value::structure({Value::string(name), Value::variant(std::move(value))});
}

// JobRemoved(u id, o job, s unit, s result) of JOB, sent by the manager that queued it.
bool ends_job(const dbus::Message& m, const std::string& job, const std::string& manager) {
    return m.sender == manager && m.path == kPath && m.interface == kManager && m.member == "JobRemoved" &&
           m.body_signature() == "uoss" && m.body[1].str == job;
}

class SystemdBackend final : public CgroupBackend {
public:
    [[nodiscard]] const char* name() const override { return "systemd"; }

    Result<std::vector<std::string>> check(const CgroupHost& host) override {
        auto bus = connect_user_bus();
        if (!bus) return bus.error();
        auto cg = manager_cgroup(*bus);
        if (!cg) return cg.error();
        // What the user manager was delegated is what its scopes can get.
        auto dir = host.mount ? cgroup_dir(*host.mount, *cg) : std::nullopt;
        if (!dir) return bus_error("find the user manager's cgroup", *cg + " is not under the cgroup2 mount");
        auto text = read_file(*dir + "/cgroup.controllers");
        if (!text) return text.error();
        return split_words(*text);
    }

    Result<CgroupBase> acquire(const CgroupHost& host) override {
        auto bus = connect_user_bus();
        if (!bus) return bus.error();
        std::random_device rd;
        char buf[64];
        (void)std::snprintf(buf, sizeof buf, "cordon-%d-%08x.scope", static_cast<int>(::getpid()), rd());
        const std::string unit = buf;

        // The manager sends its signals only while someone subscribes, and the bus routes them
        // only to the clients whose match they fit: both come before the job starts, or its
        // end may pass unseen.
        auto subscribed = bus->call(dbus::method_call(kDest, kPath, kManager, "Subscribe"), kCallTimeout);
        if (!subscribed) return bus_error("subscribe to the user manager", subscribed.error());
        const std::string rule = std::string("type='signal',sender='") + kDest + "',path='" + kPath + "',interface='" +
                                 kManager + "',member='JobRemoved'";
        if (auto s = dbus::add_match(*bus, rule, kCallTimeout); !s) return bus_error("watch for JobRemoved", s.error());

        auto start = dbus::method_call(
            kDest, kPath, kManager, "StartTransientUnit",
            {Value::string(unit), Value::string("fail"),
             Value::array("(sv)",
                          {unit_property("Description", Value::string("cordon sandbox (resource limits)")),
                           unit_property("PIDs", Value::array("u", {Value::u32(static_cast<uint32_t>(::getpid()))})),
                           unit_property("Delegate", Value::boolean(true)),
                           unit_property("CollectMode", Value::string("inactive-or-failed"))}),
             Value::array("(sa(sv))", {})});
        auto reply = bus->call(std::move(start), kCallTimeout);
        if (!reply) return bus_error("start the transient scope " + unit, reply.error());
        if (reply->body_signature() != "o") return bus_error("start the scope", "no job returned");
        const std::string job = reply->body[0].str;

        // The scope's start job moves us; wait for its result. Its JobRemoved may have come
        // before the reply: the connection kept it.
        const auto deadline = dbus::Clock::now() + kJobTimeout;
        std::optional<std::string> result;
        while (!result) {
            auto signal = bus->next_signal(deadline);
            if (!signal && signal.error().err == ETIMEDOUT) {
                return bus_error("start the transient scope " + unit, "timed out");
            }
            if (!signal) return bus_error("wait for the scope", signal.error());
            if (ends_job(*signal, job, reply->sender)) result = signal->body[3].str;
        }
        if (*result != "done") return bus_error("start the transient scope " + unit, "job " + *result);

        // Now we live in the scope, alone: the cgroupfs logic takes over there.
        auto self = read_file("/proc/self/cgroup");
        if (!self) return self.error();
        auto path = parse_cgroup2_path(*self).value_or("");
        auto dir = host.mount ? cgroup_dir(*host.mount, path) : std::nullopt;
        if (!dir || path.find(unit) == std::string::npos) {
            return bus_error("enter the transient scope " + unit, "cordon is in " + path + " instead");
        }
        return CgroupBase{*dir, true};
    }
};

}  // namespace

std::unique_ptr<CgroupBackend> systemd_backend() {
    return std::make_unique<SystemdBackend>();
}

}  // namespace cordon

// The systemd backend (SPEC §7): when cordon's cgroup is not delegated (an ordinary login
// session), ask the caller's systemd user manager over D-Bus for a transient scope with
// Delegate=yes holding the supervisor, then let the cgroupfs logic work inside that scope.
// Built only with libsystemd's headers; the library itself is loaded with dlopen the first
// time a run needs it, so an ordinary start does not pay for libsystemd and its dependencies.
#include <dlfcn.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include <cstring>
#include <random>
#include <type_traits>

#include "cordon/cgroup.hpp"

namespace cordon {

namespace {

constexpr const char* kDest = "org.freedesktop.systemd1";
constexpr const char* kPath = "/org/freedesktop/systemd1";
constexpr const char* kManager = "org.freedesktop.systemd1.Manager";
constexpr uint64_t kJobTimeoutUs = 10'000'000;

// The sd-bus functions we use, resolved from libsystemd.so.0 at first use.
struct SdApi {
    decltype(&::sd_bus_call) call;
    decltype(&::sd_bus_call_method) call_method;
    decltype(&::sd_bus_error_free) error_free;
    decltype(&::sd_bus_error_is_set) error_is_set;
    decltype(&::sd_bus_flush_close_unref) flush_close_unref;
    decltype(&::sd_bus_get_property_string) get_property_string;
    decltype(&::sd_bus_match_signal) match_signal;
    decltype(&::sd_bus_message_append) message_append;
    decltype(&::sd_bus_message_close_container) message_close_container;
    decltype(&::sd_bus_message_new_method_call) message_new_method_call;
    decltype(&::sd_bus_message_open_container) message_open_container;
    decltype(&::sd_bus_message_read) message_read;
    decltype(&::sd_bus_message_unref) message_unref;
    decltype(&::sd_bus_open_user) open_user;
    decltype(&::sd_bus_process) process;
    decltype(&::sd_bus_wait) wait;
};

// nullptr when libsystemd cannot be loaded (not installed): the backend is then unavailable.
const SdApi* load_sd_api() {
    static const SdApi* api_ptr = [] () -> const SdApi* {
        void* lib = ::dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
        if (!lib) return nullptr;
        static SdApi api{};
        bool ok = true;
        auto load = [&](auto& fn, const char* name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(lib, name));
            ok = ok && fn != nullptr;
        };
            load(api.call, "sd_bus_call");
            load(api.call_method, "sd_bus_call_method");
            load(api.error_free, "sd_bus_error_free");
            load(api.error_is_set, "sd_bus_error_is_set");
            load(api.flush_close_unref, "sd_bus_flush_close_unref");
            load(api.get_property_string, "sd_bus_get_property_string");
            load(api.match_signal, "sd_bus_match_signal");
            load(api.message_append, "sd_bus_message_append");
            load(api.message_close_container, "sd_bus_message_close_container");
            load(api.message_new_method_call, "sd_bus_message_new_method_call");
            load(api.message_open_container, "sd_bus_message_open_container");
            load(api.message_read, "sd_bus_message_read");
            load(api.message_unref, "sd_bus_message_unref");
            load(api.open_user, "sd_bus_open_user");
            load(api.process, "sd_bus_process");
            load(api.wait, "sd_bus_wait");
        return ok ? &api : nullptr;
    }();
    return api_ptr;
}

// Only called once systemd_backend() has checked that the library loaded.
const SdApi& sd() { return *load_sd_api(); }

// RAII for the sd-bus handles.
struct Bus {
    sd_bus* p = nullptr;
    Bus() = default;
    Bus(const Bus&) = delete;
    Bus& operator=(const Bus&) = delete;
    ~Bus() { sd().flush_close_unref(p); }
};
struct Msg {
    sd_bus_message* p = nullptr;
    Msg() = default;
    Msg(const Msg&) = delete;
    Msg& operator=(const Msg&) = delete;
    ~Msg() { sd().message_unref(p); }
};
struct BusError {
    sd_bus_error e = SD_BUS_ERROR_NULL;
    BusError() = default;
    BusError(const BusError&) = delete;
    BusError& operator=(const BusError&) = delete;
    ~BusError() { sd().error_free(&e); }
    [[nodiscard]] std::string text(int r) const {
        if (sd().error_is_set(&e)) return std::string(e.message ? e.message : e.name);
        return std::strerror(-r);
    }
};

Error bus_error(const std::string& step, const std::string& why) {
    Error e = make_error("systemd", step + ": " + why);
    return e;
}

Result<std::string> manager_cgroup(sd_bus* bus) {
    BusError err;
    char* cg = nullptr;
    int r = sd().get_property_string(bus, kDest, kPath, kManager, "ControlGroup", &err.e, &cg);
    if (r < 0) return bus_error("ask the user manager for its cgroup", err.text(r));
    std::string out = cg ? cg : "";
    std::free(cg);
    return out;
}

Status connect_user_bus(Bus& bus) {
    int r = sd().open_user(&bus.p);
    if (r < 0) {
        return bus_error("connect to the user bus",
                         std::string(std::strerror(-r)) + " (is a systemd user manager running? XDG_RUNTIME_DIR=" +
                             (std::getenv("XDG_RUNTIME_DIR") ? std::getenv("XDG_RUNTIME_DIR") : "unset") + ")");
    }
    return {};
}

// JobRemoved(u id, o job, s unit, s result) for the job we wait on.
struct JobWait {
    std::string job;
    std::string result;
    bool done = false;
};

int on_job_removed(sd_bus_message* m, void* userdata, sd_bus_error*) {
    auto* w = static_cast<JobWait*>(userdata);
    uint32_t id = 0;
    const char *path = nullptr, *unit = nullptr, *result = nullptr;
    if (sd().message_read(m, "uoss", &id, &path, &unit, &result) < 0) return 0;
    if (path && w->job == path) {
        w->result = result ? result : "";
        w->done = true;
    }
    return 0;
}

class SystemdBackend final : public CgroupBackend {
public:
    [[nodiscard]] const char* name() const override { return "systemd"; }

    Result<std::vector<std::string>> check(const CgroupHost& host) override {
        Bus bus;
        CORDON_TRY(connect_user_bus(bus));
        auto cg = manager_cgroup(bus.p);
        if (!cg) return cg.error();
        // What the user manager was delegated is what its scopes can get.
        auto dir = host.mount ? cgroup_dir(*host.mount, *cg) : std::nullopt;
        if (!dir) return bus_error("find the user manager's cgroup", *cg + " is not under the cgroup2 mount");
        auto text = read_file(*dir + "/cgroup.controllers");
        if (!text) return text.error();
        return split_words(*text);
    }

    Result<CgroupBase> acquire(const CgroupHost& host) override {
        Bus bus;
        CORDON_TRY(connect_user_bus(bus));
        std::random_device rd;
        char unit[64];
        (void)std::snprintf(unit, sizeof unit, "cordon-%d-%08x.scope", static_cast<int>(::getpid()), rd());

        // Manager signals go only to subscribers; subscribe and match before starting the job.
        BusError err;
        int r = sd().call_method(bus.p, kDest, kPath, kManager, "Subscribe", &err.e, nullptr, "");
        if (r < 0) return bus_error("subscribe to the user manager", err.text(r));
        JobWait wait;
        r = sd().match_signal(bus.p, nullptr, kDest, kPath, kManager, "JobRemoved", on_job_removed, &wait);
        if (r < 0) return bus_error("watch for JobRemoved", std::strerror(-r));

        Msg m, reply;
        r = sd().message_new_method_call(bus.p, &m.p, kDest, kPath, kManager, "StartTransientUnit");
        if (r >= 0) r = sd().message_append(m.p, "ss", unit, "fail");
        if (r >= 0) r = sd().message_open_container(m.p, 'a', "(sv)");
        if (r >= 0) r = sd().message_append(m.p, "(sv)", "Description", "s", "cordon sandbox (resource limits)");
        if (r >= 0) r = sd().message_append(m.p, "(sv)", "PIDs", "au", 1, static_cast<uint32_t>(::getpid()));
        if (r >= 0) r = sd().message_append(m.p, "(sv)", "Delegate", "b", 1);
        if (r >= 0) r = sd().message_append(m.p, "(sv)", "CollectMode", "s", "inactive-or-failed");
        if (r >= 0) r = sd().message_close_container(m.p);
        if (r >= 0) r = sd().message_append(m.p, "a(sa(sv))", 0);
        if (r < 0) return bus_error("build the StartTransientUnit call", std::strerror(-r));
        r = sd().call(bus.p, m.p, 0, &err.e, &reply.p);
        if (r < 0) return bus_error(std::string("start the transient scope ") + unit, err.text(r));
        const char* job = nullptr;
        if (sd().message_read(reply.p, "o", &job) < 0 || !job) return bus_error("start the scope", "no job returned");
        wait.job = job;

        // The scope's start job moves us; wait for its result.
        uint64_t waited = 0;
        while (!wait.done && waited < kJobTimeoutUs) {
            r = sd().process(bus.p, nullptr);
            if (r < 0) return bus_error("wait for the scope", std::strerror(-r));
            if (r > 0) continue;
            (void)sd().wait(bus.p, 100'000);
            waited += 100'000;
        }
        if (!wait.done) return bus_error(std::string("start the transient scope ") + unit, "timed out");
        if (wait.result != "done")
            return bus_error(std::string("start the transient scope ") + unit, "job " + wait.result);

        // Now we live in the scope, alone: the cgroupfs logic takes over there.
        auto self = read_file("/proc/self/cgroup");
        if (!self) return self.error();
        auto path = parse_cgroup2_path(*self).value_or("");
        auto dir = host.mount ? cgroup_dir(*host.mount, path) : std::nullopt;
        if (!dir || path.find(unit) == std::string::npos) {
            return bus_error(std::string("enter the transient scope ") + unit, "cordon is in " + path + " instead");
        }
        return CgroupBase{*dir, true};
    }
};

}  // namespace

std::unique_ptr<CgroupBackend> systemd_backend() {
    if (!load_sd_api()) return nullptr;
    return std::make_unique<SystemdBackend>();
}

}  // namespace cordon

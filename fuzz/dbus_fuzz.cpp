// The D-Bus decoder (util/dbus_wire.cpp), which reads the bytes of another process (the systemd
// user manager, for the cgroup scope of a run): any input must decode or be refused, with no
// crash, leak or hang, and what decodes must survive a round trip through the encoder.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cordon/dbus.hpp"

namespace {

bool same_value(const cordon::dbus::Value& a, const cordon::dbus::Value& b) {
    if (a.type != b.type || a.num != b.num || a.str != b.str || a.items.size() != b.items.size()) return false;
    for (size_t i = 0; i < a.items.size(); ++i) {
        if (!same_value(a.items[i], b.items[i])) return false;
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    if (size >= 16) (void)cordon::dbus::frame_length(bytes.substr(0, 16));
    auto m = cordon::dbus::decode(bytes);
    if (!m) return 0;
    // A whole message decodes: its frame length, from its own head, is its size.
    if (size < 16) std::abort();
    auto len = cordon::dbus::frame_length(bytes.substr(0, 16));
    if (!len || *len != size) std::abort();
    // What decodes, encodes (little-endian) and decodes again to the same message.
    auto again = cordon::dbus::encode(*m);
    if (!again) return 0;  // a value the encoder refuses to write (e.g. a type it does not make)
    auto back = cordon::dbus::decode(*again);
    if (!back) std::abort();
    if (back->type != m->type || back->flags != m->flags || back->serial != m->serial || back->path != m->path ||
        back->interface != m->interface || back->member != m->member || back->error_name != m->error_name ||
        back->reply_serial != m->reply_serial || back->destination != m->destination || back->sender != m->sender ||
        back->body.size() != m->body.size())
        std::abort();
    for (size_t i = 0; i < m->body.size(); ++i) {
        if (!same_value(back->body[i], m->body[i])) std::abort();
    }
    return 0;
}

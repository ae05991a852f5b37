// A minimal, blocking D-Bus client: the wire format of the D-Bus specification, SASL EXTERNAL
// over a unix stream socket, method calls and signals. Enough for the systemd cgroup backend
// (src/jail/cgroup/cgroup_systemd.cpp) to ask the user manager for a transient scope without
// libsystemd, which a static executable cannot load.
//
// The marshalling is pure (encode/decode work on byte strings and are unit-tested); only
// Connection touches a socket. Nothing from the peer is trusted: every length and offset is
// checked against the bytes received, messages are bounded by kMaxMessageSize and nesting by
// kMaxDepth, and a malformed message is an Error, never an exception.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cordon/error.hpp"
#include "cordon/fd.hpp"

namespace cordon::dbus {

// The specification allows 128 MiB; the replies and signals cordon needs are a few hundred bytes.
inline constexpr size_t kMaxMessageSize = size_t{1} << 20;
// Containers nested in one value, variants included (the specification's limit).
inline constexpr int kMaxDepth = 64;

// One value of the wire format, tagged with its D-Bus type code:
//   'y' 'b' 'n' 'q' 'i' 'u' 'h' 'x' 't' 'd'  num: the value's bits, zero-extended
//   's' 'o' 'g'                              str
//   'a'                                      str: the element signature; items: the elements
//   '(' '{'                                  items: the fields (a dict entry has two)
//   'v'                                      items: the one value inside
struct Value {
    char type = 0;
    uint64_t num = 0;
    std::string str;
    std::vector<Value> items;

    static Value byte(uint8_t v) { return {'y', v, {}, {}}; }
    static Value boolean(bool v) { return {'b', v ? 1U : 0U, {}, {}}; }
    static Value i32(int32_t v) { return {'i', static_cast<uint32_t>(v), {}, {}}; }
    static Value u32(uint32_t v) { return {'u', v, {}, {}}; }
    static Value u64(uint64_t v) { return {'t', v, {}, {}}; }
    static Value string(std::string s) { return {'s', 0, std::move(s), {}}; }
    static Value object_path(std::string s) { return {'o', 0, std::move(s), {}}; }
    static Value signature(std::string s) { return {'g', 0, std::move(s), {}}; }
    // The element signature is explicit: an empty array still has one.
    static Value array(std::string element_signature, std::vector<Value> elements) {
        return {'a', 0, std::move(element_signature), std::move(elements)};
    }
    static Value structure(std::vector<Value> fields) { return {'(', 0, {}, std::move(fields)}; }
    static Value dict_entry(Value key, Value value) { return {'{', 0, {}, {std::move(key), std::move(value)}}; }
    static Value variant(Value inner) { return {'v', 0, {}, {std::move(inner)}}; }

    // The value's type as a signature: "u", "a(sv)", "(sa(sv))".
    [[nodiscard]] std::string type_signature() const;
};

// A signature of zero or more complete types, as the specification defines it.
[[nodiscard]] bool valid_signature(std::string_view sig);
// "/", or "/" followed by "/"-separated non-empty elements of [A-Za-z0-9_].
[[nodiscard]] bool valid_object_path(std::string_view path);

enum class MessageType : uint8_t { MethodCall = 1, MethodReturn = 2, Error = 3, Signal = 4 };
// The header flag of a call that wants no reply.
inline constexpr uint8_t kNoReplyExpected = 0x1;

// One message: the fixed header, the header fields cordon uses, and the body. Types the
// specification may add later decode with no required fields, and are ignored by Connection.
struct Message {
    MessageType type = MessageType::MethodCall;
    uint8_t flags = 0;
    uint32_t serial = 0;
    std::string path;
    std::string interface;
    std::string member;
    std::string error_name;
    uint32_t reply_serial = 0;  // 0: none (a serial is never 0)
    std::string destination;
    std::string sender;
    std::vector<Value> body;  // its signature is the SIGNATURE header field

    [[nodiscard]] std::string body_signature() const;
};

// A method call with ARGS as its body.
Message method_call(std::string destination, std::string path, std::string interface, std::string member,
                    std::vector<Value> args = {});

// The whole message, little-endian; an error when a value is invalid (a string with a NUL, a
// bad object path or signature, array elements of the wrong type) or the message too large.
Result<std::string> encode(const Message& m);
// The length of the message whose first 16 bytes (the fixed header and the length of the
// header fields) are HEAD, or why it cannot be a message of at most kMaxMessageSize.
Result<size_t> frame_length(std::string_view head);
// Exactly one whole message, either byte order, checked against the specification's rules
// (alignment padding zeroed, lengths within bounds, strings NUL-terminated, required header
// fields present with their types).
Result<Message> decode(std::string_view bytes);

// The socket of the caller's user bus, where sd_bus_open_user() looks for it: the first
// "unix:path=" address in DBUS_SESSION_BUS_ADDRESS (other transports are not supported), else
// XDG_RUNTIME_DIR/bus; nullopt when neither gives one. The arguments are the two variables
// (nullptr: unset).
std::optional<std::string> user_bus_path(const char* session_bus_address, const char* xdg_runtime_dir);

using Clock = std::chrono::steady_clock;

// A connection to a bus, authenticated, with its unique name. Blocking: every operation waits
// (poll) until its deadline at most. Not thread-safe.
class Connection final {
public:
    // Connect to the bus socket at PATH, authenticate as our uid and say Hello.
    static Result<Connection> open(const std::string& path, Clock::duration timeout);

    [[nodiscard]] const std::string& unique_name() const { return unique_name_; }
    // Send a method call and wait for its reply; an error reply becomes an Error carrying the
    // D-Bus error's name and message. Signals that arrive meanwhile are kept for next_signal(),
    // so that one sent before the reply is not lost.
    Result<Message> call(Message m, Clock::duration timeout);
    // The oldest signal kept or, when none is, the next one to arrive before DEADLINE.
    Result<Message> next_signal(Clock::time_point deadline);

private:
    explicit Connection(UniqueFd fd) : fd_(std::move(fd)) {}
    Status authenticate(Clock::time_point deadline);
    // Give M the next serial, send it and return the serial.
    Result<uint32_t> send(Message m, Clock::time_point deadline);
    // Read until IN_ holds WANT bytes.
    Status fill(size_t want, Clock::time_point deadline);
    Result<std::string> read_line(Clock::time_point deadline);
    // The bytes of the next whole message.
    Result<std::string> read_frame(Clock::time_point deadline);
    Status keep_signal(std::string frame);

    UniqueFd fd_;
    uint32_t last_serial_ = 0;
    std::string unique_name_;
    std::string in_;                // received, not yet consumed
    std::deque<std::string> kept_;  // signals that came during a call, as received: decoded again when taken
    size_t kept_bytes_ = 0;
};

// org.freedesktop.DBus.Properties.Get: the value inside the returned variant.
Result<Value> get_property(Connection& bus, const std::string& destination, const std::string& path,
                           const std::string& interface, const std::string& property, Clock::duration timeout);
// org.freedesktop.DBus.AddMatch: have the bus route the signals RULE matches to us.
Status add_match(Connection& bus, const std::string& rule, Clock::duration timeout);

}  // namespace cordon::dbus

// The D-Bus client (cordon/dbus.hpp): the wire format against bytes derived by hand from the
// D-Bus specification, the rejection of malformed input, the user bus's address, and a
// connection to a scripted fake bus (authentication, replies, errors, signals that come
// before the reply they belong to, timeouts).
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <thread>

#include "cordon/dbus.hpp"

using namespace cordon;
using namespace cordon::dbus;
using namespace std::string_literals;

namespace {

std::string byte(unsigned v) {
    return std::string(1, static_cast<char>(v));
}
std::string le32(uint32_t v) {
    return byte(v & 0xff) + byte((v >> 8) & 0xff) + byte((v >> 16) & 0xff) + byte(v >> 24);
}
std::string be32(uint32_t v) {
    return byte(v >> 24) + byte((v >> 16) & 0xff) + byte((v >> 8) & 0xff) + byte(v & 0xff);
}
std::string zeros(size_t n) {
    return std::string(n, '\0');
}
// A string's text and its terminating NUL.
std::string sz(const std::string& s) {
    return s + '\0';
}

Message start_transient_unit_like() {
    auto property = [](const char* name, Value v) {
        return Value::structure({Value::string(name), Value::variant(std::move(v))});
    };
    Message m = method_call("org.freedesktop.systemd1", "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                            "StartTransientUnit",
                            {Value::string("cordon-42.scope"), Value::string("fail"),
                             Value::array("(sv)", {property("Description", Value::string("x")),
                                                   property("PIDs", Value::array("u", {Value::u32(1234)})),
                                                   property("Delegate", Value::boolean(true))}),
                             Value::array("(sa(sv))", {})});
    m.serial = 7;
    return m;
}

// The rules used below, from the specification's "Marshaling (Wire Format)":
//   - every value starts at a multiple of its alignment, counted from the start of the
//     message, and the padding bytes are zero: 1 for BYTE, SIGNATURE and VARIANT; 4 for
//     BOOLEAN, UINT32, STRING, OBJECT_PATH and ARRAY (their uint32 length); 8 for STRUCT and
//     DICT_ENTRY;
//   - STRING and OBJECT_PATH: uint32 length, the bytes, a NUL; SIGNATURE: one length byte,
//     the bytes, a NUL; VARIANT: the contained value's signature, then the value;
//   - ARRAY: uint32 length in bytes of the elements, not counting the padding from the end of
//     the length to the first element's alignment, which is present even when it is empty;
//   - the header is "yyyyuua(yv)": byte order, type, flags, version 1, body length, serial,
//     then the header fields as (code, variant); the header ends padded to 8, so the body
//     starts 8-aligned.
// Offsets in the comments are from the start of the message.
std::string start_transient_unit_like_bytes() {
    std::string m;
    m += "l" + byte(1) + byte(0) + byte(1);  // 0: little-endian, METHOD_CALL, no flags, version 1
    m += le32(120);                          // 4: body length (200..319 below)
    m += le32(7);                            // 8: serial
    m += le32(182);                          // 12: the header fields' array: 16..197
    // 16: (PATH, <o>): the code; the variant's signature "o" at 17..19; the path's length at
    // 20 (4-aligned), its 25 bytes and NUL at 24..49.
    m += byte(1) + byte(1) + sz("o") + le32(25) + sz("/org/freedesktop/systemd1");
    m += zeros(6);  // 50..55: the next struct at 56
    // 56: (INTERFACE, <s>): signature at 57..59, length at 60, 32 bytes and NUL at 64..96.
    m += byte(2) + byte(1) + sz("s") + le32(32) + sz("org.freedesktop.systemd1.Manager");
    m += zeros(7);  // 97..103
    // 104: (MEMBER, <s>): signature at 105..107, length at 108, 18 bytes and NUL at 112..130.
    m += byte(3) + byte(1) + sz("s") + le32(18) + sz("StartTransientUnit");
    m += zeros(5);  // 131..135
    // 136: (DESTINATION, <s>): signature at 137..139, length at 140, 24 bytes and NUL at 144..168.
    m += byte(6) + byte(1) + sz("s") + le32(24) + sz("org.freedesktop.systemd1");
    m += zeros(7);  // 169..175
    // 176: (SIGNATURE, <g>): signature at 177..179, the body's signature (1-aligned) at 180:
    // length 16, the 16 bytes and NUL at 181..197.
    m += byte(8) + byte(1) + sz("g") + byte(16) + sz("ssa(sv)a(sa(sv))");
    m += zeros(2);  // 198..199: the body starts 8-aligned, at 200

    // The body; offsets from its start, which has the same alignment.
    m += le32(15) + sz("cordon-42.scope");  // 0: length, 15 bytes and NUL at 4..19
    m += le32(4) + sz("fail");              // 20: length, 4 bytes and NUL at 24..28
    m += zeros(3);                          // 29..31
    m += le32(76);                          // 32: a(sv) length: its elements are 40..115
    m += zeros(4);                          // 36..39: the first struct at 40, 8-aligned
    // 40: ("Description", <"x">): length, 11 bytes and NUL at 44..55; the variant's signature
    // at 56..58; padding at 59; the string at 60: length, "x" and NUL at 64..65.
    m += le32(11) + sz("Description") + byte(1) + sz("s") + zeros(1) + le32(1) + sz("x");
    m += zeros(6);  // 66..71
    // 72: ("PIDs", <[1234]>): length, 4 bytes and NUL at 76..80; signature "au" at 81..84;
    // padding 85..87; the array's length at 88 (4 bytes of elements); 1234 at 92 (already
    // 4-aligned, no padding after the length).
    m += le32(4) + sz("PIDs") + byte(2) + sz("au") + zeros(3) + le32(4) + le32(1234);
    // 96: ("Delegate", <true>): length, 8 bytes and NUL at 100..108; signature at 109..111;
    // the boolean, a uint32, at 112.
    m += le32(8) + sz("Delegate") + byte(1) + sz("b") + le32(1);
    // 116: a(sa(sv)), empty: length 0, then the padding to its structs' 8 (none: 120 is aligned).
    m += le32(0);
    return m;
}

// A METHOD_RETURN of serial 7 with one object path: header fields REPLY_SERIAL,
// DESTINATION, SENDER and SIGNATURE, derived the same way. ORDER is 'l' or 'B'.
std::string job_reply_bytes(char order) {
    auto u32 = order == 'l' ? le32 : be32;
    std::string m;
    m += std::string(1, order) + byte(2) + byte(1) + byte(1);  // 0: METHOD_RETURN, NO_REPLY_EXPECTED
    m += u32(37);                                              // 4: body length (64..100)
    m += u32(3);                                               // 8: serial
    m += u32(47);                                              // 12: fields at 16..62
    m += byte(5) + byte(1) + sz("u") + u32(7);                 // 16: REPLY_SERIAL, the uint32 at 20
    m += byte(6) + byte(1) + sz("s") + u32(4) + sz(":1.9");    // 24: DESTINATION; string at 28..36
    m += zeros(3);                                             // 37..39
    m += byte(7) + byte(1) + sz("s") + u32(4) + sz(":1.5");    // 40: SENDER; string at 44..52
    m += zeros(3);                                             // 53..55
    m += byte(8) + byte(1) + sz("g") + byte(1) + sz("o");      // 56: SIGNATURE; "o" at 60..62
    m += zeros(1);                                             // 63: the body at 64
    m += u32(32) + sz("/org/freedesktop/systemd1/job/42");     // 64: length, 32 bytes and NUL
    return m;
}

std::string encoded(const Message& m) {
    auto bytes = encode(m);
    REQUIRE(bytes.ok());
    return *bytes;
}

std::string decode_error(std::string_view bytes) {
    auto m = decode(bytes);
    REQUIRE_FALSE(m.ok());
    return m.error().why;
}

}  // namespace

TEST_CASE("dbus: a StartTransientUnit call marshals to the bytes the specification gives", "[dbus]") {
    const std::string want = start_transient_unit_like_bytes();
    REQUIRE(want.size() == 320);
    CHECK(encoded(start_transient_unit_like()) == want);
}

TEST_CASE("dbus: the StartTransientUnit call decodes back to what was encoded", "[dbus]") {
    auto m = decode(start_transient_unit_like_bytes());
    REQUIRE(m.ok());
    CHECK(m->type == MessageType::MethodCall);
    CHECK(m->serial == 7);
    CHECK(m->path == "/org/freedesktop/systemd1");
    CHECK(m->interface == "org.freedesktop.systemd1.Manager");
    CHECK(m->member == "StartTransientUnit");
    CHECK(m->destination == "org.freedesktop.systemd1");
    CHECK(m->body_signature() == "ssa(sv)a(sa(sv))");
    REQUIRE(m->body.size() == 4);
    CHECK(m->body[0].str == "cordon-42.scope");
    const Value& props = m->body[2];
    REQUIRE(props.items.size() == 3);
    CHECK(props.items[1].items[0].str == "PIDs");
    const Value& pids = props.items[1].items[1].items[0];
    CHECK(pids.type_signature() == "au");
    REQUIRE(pids.items.size() == 1);
    CHECK(pids.items[0].num == 1234);
    CHECK(props.items[2].items[1].items[0].type == 'b');
    CHECK(props.items[2].items[1].items[0].num == 1);
    CHECK(m->body[3].items.empty());
    CHECK(m->body[3].str == "(sa(sv))");
    CHECK(encoded(*m) == start_transient_unit_like_bytes());
}

TEST_CASE("dbus: a method return decodes in either byte order", "[dbus]") {
    for (char order : {'l', 'B'}) {
        auto m = decode(job_reply_bytes(order));
        REQUIRE(m.ok());
        CHECK(m->type == MessageType::MethodReturn);
        CHECK(m->flags == kNoReplyExpected);
        CHECK(m->serial == 3);
        CHECK(m->reply_serial == 7);
        CHECK(m->destination == ":1.9");
        CHECK(m->sender == ":1.5");
        REQUIRE(m->body_signature() == "o");
        CHECK(m->body[0].str == "/org/freedesktop/systemd1/job/42");
    }
    auto le = decode(job_reply_bytes('l'));
    REQUIRE(le.ok());
    CHECK(encoded(*le) == job_reply_bytes('l'));
}

TEST_CASE("dbus: errors and signals round-trip with their header fields", "[dbus]") {
    Message error;
    error.type = MessageType::Error;
    error.serial = 9;
    error.reply_serial = 4;
    error.error_name = "org.freedesktop.systemd1.UnitExists";
    error.body = {Value::string("Unit cordon-1.scope already exists.")};
    auto e = decode(encoded(error));
    REQUIRE(e.ok());
    CHECK(e->type == MessageType::Error);
    CHECK(e->reply_serial == 4);
    CHECK(e->error_name == "org.freedesktop.systemd1.UnitExists");
    CHECK(e->body[0].str == "Unit cordon-1.scope already exists.");

    Message signal;
    signal.type = MessageType::Signal;
    signal.serial = 12;
    signal.sender = ":1.0";
    signal.path = "/org/freedesktop/systemd1";
    signal.interface = "org.freedesktop.systemd1.Manager";
    signal.member = "JobRemoved";
    signal.body = {Value::u32(42), Value::object_path("/org/freedesktop/systemd1/job/42"),
                   Value::string("cordon-1.scope"), Value::string("done")};
    auto s = decode(encoded(signal));
    REQUIRE(s.ok());
    CHECK(s->type == MessageType::Signal);
    CHECK(s->member == "JobRemoved");
    CHECK(s->sender == ":1.0");
    REQUIRE(s->body_signature() == "uoss");
    CHECK(s->body[0].num == 42);
    CHECK(s->body[3].str == "done");

    // Containers the backend does not send but a peer may: dict entries, 8-byte integers.
    Message rich;
    rich.type = MessageType::MethodReturn;
    rich.serial = 1;
    rich.reply_serial = 1;
    rich.body = {Value::array("{sv}", {Value::dict_entry(Value::string("MemoryMax"), Value::variant(Value::u64(~0ULL))),
                                       Value::dict_entry(Value::string("Nice"), Value::variant(Value::i32(-5)))}),
                 Value::byte(7)};
    auto r = decode(encoded(rich));
    REQUIRE(r.ok());
    CHECK(r->body_signature() == "a{sv}y");
    CHECK(r->body[0].items[0].items[1].items[0].num == ~0ULL);
    CHECK(static_cast<int32_t>(r->body[0].items[1].items[1].items[0].num) == -5);
}

TEST_CASE("dbus: truncated, oversized and misaligned input is refused", "[dbus]") {
    const std::string good = job_reply_bytes('l');

    // Every proper prefix: the header announces more than there is.
    for (size_t n = 0; n < good.size(); ++n) CHECK_FALSE(decode(good.substr(0, n)).ok());
    CHECK_THAT(decode_error(good + '\0'), Catch::Contains("where the header announces 101"));

    // Lengths beyond the 1 MiB bound, including ones that would wrap 32-bit arithmetic.
    std::string huge = good;
    huge.replace(4, 4, le32(kMaxMessageSize));
    REQUIRE_FALSE(frame_length(huge).ok());
    CHECK_THAT(frame_length(huge).error().why, Catch::Contains("accepts up to 1048576"));
    huge = good;
    huge.replace(12, 4, le32(0xfffffff8));
    CHECK_FALSE(frame_length(huge).ok());

    // Padding must be zero: the byte between the header fields and the body, and the
    // padding inside the header.
    std::string padded = good;
    padded[63] = 'x';
    CHECK_THAT(decode_error(padded), Catch::Contains("nonzero alignment padding at offset 63"));
    padded = good;
    padded[38] = 1;
    CHECK_THAT(decode_error(padded), Catch::Contains("nonzero alignment padding"));

    // A string whose length points past its NUL, and one without a NUL.
    std::string longer = good;
    longer.replace(64, 4, le32(33));
    CHECK_THAT(decode_error(longer), Catch::Contains("string runs past the end"));
    std::string unterminated = good;
    unterminated[100] = 'x';
    CHECK_THAT(decode_error(unterminated), Catch::Contains("without its terminating NUL"));

    // The header field array's length cutting a field in two.
    std::string cut = good;
    cut.replace(12, 4, le32(46));
    CHECK_FALSE(decode(cut).ok());

    // A header field of the wrong type, an unknown byte order, another protocol version, the
    // INVALID message type, serial 0.
    std::string typed = good;
    typed[18] = 's';
    CHECK_FALSE(decode(typed).ok());
    std::string order = good;
    order[0] = 'x';
    CHECK_THAT(decode_error(order), Catch::Contains("unknown byte order"));
    std::string version = good;
    version[3] = 2;
    CHECK_THAT(decode_error(version), Catch::Contains("protocol version 2"));
    std::string invalid = good;
    invalid[1] = 0;
    CHECK_THAT(decode_error(invalid), Catch::Contains("message type 0"));
    std::string serial = good;
    serial.replace(8, 4, le32(0));
    CHECK_THAT(decode_error(serial), Catch::Contains("serial 0"));
}

TEST_CASE("dbus: bodies that contradict their signature are refused", "[dbus]") {
    Message m;
    m.type = MessageType::MethodReturn;
    m.serial = 2;
    m.reply_serial = 1;

    // A boolean that is neither 0 nor 1.
    m.body = {Value::boolean(true)};
    std::string b = encoded(m);
    b[b.size() - 4] = 2;
    CHECK_THAT(decode_error(b), Catch::Contains("a boolean other than 0 or 1"));

    // An array whose length ends inside its last element.
    m.body = {Value::array("u", {Value::u32(1), Value::u32(2)})};
    std::string a = encoded(m);
    a.replace(a.size() - 12, 4, le32(6));
    CHECK_FALSE(decode(a).ok());

    // A variant whose signature is two complete types.
    m.body = {Value::variant(Value::structure({Value::byte(1), Value::byte(2)}))};
    std::string v = encoded(m);
    v.replace(v.find("(yy)"), 4, "yyyy");
    CHECK_THAT(decode_error(v), Catch::Contains("not one complete type"));

    // Variants nested deeper than kMaxDepth: the encoder refuses to write them, the decoder to
    // read them.
    Value nested = Value::byte(1);
    for (int i = 0; i < kMaxDepth; ++i) nested = Value::variant(std::move(nested));
    m.body = {nested};
    std::string deepest = encoded(m);
    CHECK(decode(deepest).ok());
    m.body = {Value::variant(nested)};
    CHECK_THAT(encode(m).error().why, Catch::Contains("nested deeper"));
    // One more variant around the body: its signature "v" (1-aligned, no padding) in front.
    uint32_t body_length = static_cast<unsigned char>(deepest[4]) | static_cast<unsigned char>(deepest[5]) << 8;
    std::string too_deep = deepest;
    too_deep.insert(too_deep.size() - body_length, byte(1) + sz("v"));
    too_deep.replace(4, 4, le32(body_length + 3));
    CHECK_THAT(decode_error(too_deep), Catch::Contains("nested deeper"));
}

TEST_CASE("dbus: the encoder refuses values the wire format cannot carry", "[dbus]") {
    Message m = method_call("a.b", "/", "a.b", "M");
    m.serial = 1;
    auto refused = [&](Value v) {
        m.body = {std::move(v)};
        auto r = encode(m);
        return r.ok() ? std::string() : r.error().why;
    };
    CHECK_THAT(refused(Value::string("a\0b"s)), Catch::Contains("NUL"));
    CHECK_THAT(refused(Value::object_path("/a//b")), Catch::Contains("invalid object path"));
    CHECK_THAT(refused(Value::object_path("relative")), Catch::Contains("invalid object path"));
    CHECK_THAT(refused(Value::array("u", {Value::string("x")})), Catch::Contains("in an array of 'u'"));
    CHECK_THAT(refused(Value::dict_entry(Value::string("k"), Value::byte(1))), Catch::Contains("body signature"));
    CHECK_THAT(refused(Value::structure({})), Catch::Contains("signature"));
    CHECK_THAT(refused(Value::array("{vs}", {})), Catch::Contains("signature"));
    CHECK(refused(Value::array("{sv}", {})).empty());

    Message no_path = method_call("a.b", "", "a.b", "M");
    no_path.serial = 1;
    CHECK_FALSE(encode(no_path).ok());
    Message no_serial = method_call("a.b", "/", "a.b", "M");
    CHECK_FALSE(encode(no_serial).ok());
}

TEST_CASE("dbus: signatures and object paths", "[dbus]") {
    for (const char* ok : {"", "s", "ssa(sv)a(sa(sv))", "a{sv}", "a{ta(yv)}", "v", "aay", "(i(y))"}) {
        CHECK(valid_signature(ok));
    }
    for (const char* bad : {"a", "(", ")", "()", "{sv}", "a{vs}", "a{s}", "a{svs}", "z", "(sv", "a{sv"}) {
        CHECK_FALSE(valid_signature(bad));
    }
    CHECK(valid_signature(std::string(32, 'a') + "y"));
    CHECK_FALSE(valid_signature(std::string(33, 'a') + "y"));
    CHECK(valid_signature(std::string(32, '(') + "y" + std::string(32, ')')));
    CHECK_FALSE(valid_signature(std::string(33, '(') + "y" + std::string(33, ')')));
    CHECK_FALSE(valid_signature(std::string(256, 'y')));

    CHECK(valid_object_path("/"));
    CHECK(valid_object_path("/org/freedesktop/systemd1/job/42"));
    for (const char* bad : {"", "org", "/a/", "//", "/a//b", "/a-b", "/a.b"}) CHECK_FALSE(valid_object_path(bad));
}

TEST_CASE("dbus: the user bus is found as sd_bus_open_user finds it", "[dbus]") {
    CHECK(user_bus_path("unix:path=/run/user/1000/bus", "/run/user/7") == "/run/user/1000/bus");
    CHECK(user_bus_path("unix:guid=abc,path=/tmp/my%20bus", nullptr) == "/tmp/my bus");
    CHECK(user_bus_path("tcp:host=x,port=1;unix:path=/b", nullptr) == "/b");
    // Addresses this client cannot use: the runtime directory's socket instead.
    CHECK(user_bus_path("unix:abstract=/tmp/dbus-x", "/run/user/1000") == "/run/user/1000/bus");
    CHECK(user_bus_path("unix:path=/bad%2", "/run/user/1000") == "/run/user/1000/bus");
    CHECK(user_bus_path("unix:path=/nul%00", "/run/user/1000") == "/run/user/1000/bus");
    CHECK(user_bus_path(nullptr, "/run/user/1000") == "/run/user/1000/bus");
    CHECK(user_bus_path("", "relative") == std::nullopt);
    CHECK(user_bus_path(nullptr, nullptr) == std::nullopt);
}

namespace {

// A bus on a unix socket in a temporary directory, played by a thread that follows a script.
// The script runs outside Catch (its assertions are not thread-safe): it records the first
// thing that went wrong in `problem`, checked once the thread has ended.
class FakeBus {
public:
    using Script = std::function<void(FakeBus&)>;

    explicit FakeBus(Script script) {
        char tmpl[] = "/tmp/cordon-dbus-test-XXXXXX";
        REQUIRE(::mkdtemp(tmpl) != nullptr);
        dir_ = tmpl;
        path = dir_ + "/bus";
        listener_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::copy(path.begin(), path.end(), addr.sun_path);
        REQUIRE(::bind(listener_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
        REQUIRE(::listen(listener_.get(), 1) == 0);
        thread_ = std::thread([this, script = std::move(script)] {
            conn_.reset(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
            if (!conn_) return fail("accept");
            script(*this);
            conn_.reset();
        });
    }
    FakeBus(const FakeBus&) = delete;
    FakeBus& operator=(const FakeBus&) = delete;
    ~FakeBus() {
        finish();
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
    void finish() {
        if (thread_.joinable()) thread_.join();
    }

    // The script's steps.
    void fail(const std::string& what) {
        if (problem.empty()) problem = what;
    }
    std::string line() {
        for (;;) {
            if (size_t end = in_.find("\r\n"); end != std::string::npos) {
                std::string l = in_.substr(0, end);
                in_.erase(0, end + 2);
                return l;
            }
            if (!more()) return {};
        }
    }
    void write(const std::string& bytes) {
        if (!write_all(conn_.get(), bytes.data(), bytes.size())) fail("write");
    }
    // The authentication of a client with our euid, and its Hello, answered with NAME.
    void accept_client(const std::string& name) {
        std::string hex;
        for (char c : std::to_string(::geteuid())) hex += "3" + std::string(1, c);
        if (line() != "\0AUTH EXTERNAL "s + hex) fail("AUTH line");
        write("OK 00112233445566778899aabbccddeeff\r\n");
        if (line() != "BEGIN") fail("BEGIN line");
        Message hello = read();
        if (hello.member != "Hello" || hello.destination != "org.freedesktop.DBus") fail("Hello");
        send(reply_to(hello, {Value::string(name)}));
        Message acquired = signal("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameAcquired");
        acquired.destination = name;
        acquired.body = {Value::string(name)};
        send(acquired);
    }
    Message read() {
        for (;;) {
            if (in_.size() >= 16) {
                auto n = frame_length(std::string_view(in_).substr(0, 16));
                if (!n) {
                    fail("frame: " + n.error().why);
                    return {};
                }
                if (in_.size() >= *n) {
                    auto m = decode(std::string_view(in_).substr(0, *n));
                    in_.erase(0, *n);
                    if (!m) fail("decode: " + m.error().why);
                    return m ? *m : Message{};
                }
            }
            if (!more()) return {};
        }
    }
    void send(Message m) {
        m.serial = ++serial_;
        auto bytes = encode(m);
        if (!bytes) return fail("encode: " + bytes.error().why);
        write(*bytes);
    }
    Message reply_to(const Message& call, std::vector<Value> body) {
        Message r;
        r.type = MessageType::MethodReturn;
        r.reply_serial = call.serial;
        r.sender = sender;
        r.body = std::move(body);
        return r;
    }
    Message signal(const std::string& p, const std::string& interface, const std::string& member) {
        Message s;
        s.type = MessageType::Signal;
        s.sender = sender;
        s.path = p;
        s.interface = interface;
        s.member = member;
        return s;
    }

    std::string path;
    std::string sender = "org.freedesktop.DBus";
    std::string problem;

private:
    bool more() {
        char buf[4096];
        ssize_t n = ::read(conn_.get(), buf, sizeof buf);
        if (n <= 0) return false;
        in_.append(buf, static_cast<size_t>(n));
        return true;
    }

    std::string dir_;
    UniqueFd listener_;
    UniqueFd conn_;
    std::string in_;
    uint32_t serial_ = 0;
    std::thread thread_;
};

constexpr auto kTimeout = std::chrono::seconds(5);

Message call_to(const std::string& member) {
    return method_call(":1.0", "/org/example", "org.example", member);
}

}  // namespace

TEST_CASE("dbus: a connection authenticates, says Hello and keeps early signals", "[dbus]") {
    FakeBus bus([](FakeBus& b) {
        b.accept_client(":1.7");
        b.sender = ":1.0";
        // The race the systemd backend meets: the job's end is signalled before the reply
        // that names the job.
        Message start = b.read();
        if (start.member != "Start") b.fail("Start");
        Message removed = b.signal("/org/example", "org.example", "JobRemoved");
        removed.body = {Value::u32(1), Value::object_path("/job/1"), Value::string("x.scope"), Value::string("done")};
        b.send(removed);
        b.send(b.reply_to(start, {Value::object_path("/job/1")}));

        Message failing = b.read();
        Message error;
        error.type = MessageType::Error;
        error.reply_serial = failing.serial;
        error.error_name = "org.example.Failed";
        error.body = {Value::string("it failed")};
        b.send(error);

        // Unanswered, then the connection is closed.
        (void)b.read();
        (void)b.read();
    });

    auto conn = Connection::open(bus.path, kTimeout);
    REQUIRE(conn.ok());
    CHECK(conn->unique_name() == ":1.7");

    auto reply = conn->call(call_to("Start"), kTimeout);
    REQUIRE(reply.ok());
    REQUIRE(reply->body_signature() == "o");
    CHECK(reply->body[0].str == "/job/1");
    CHECK(reply->sender == ":1.0");
    // Kept in the order they came: the bus's NameAcquired, then JobRemoved.
    auto first = conn->next_signal(Clock::now() + kTimeout);
    REQUIRE(first.ok());
    CHECK(first->member == "NameAcquired");
    auto second = conn->next_signal(Clock::now() + kTimeout);
    REQUIRE(second.ok());
    CHECK(second->member == "JobRemoved");
    CHECK(second->body[3].str == "done");

    auto failed = conn->call(call_to("Fail"), kTimeout);
    REQUIRE_FALSE(failed.ok());
    CHECK(failed.error().why == "it failed (org.example.Failed)");

    auto slow = conn->call(call_to("Slow"), std::chrono::milliseconds(100));
    REQUIRE_FALSE(slow.ok());
    CHECK(slow.error().err == ETIMEDOUT);
    CHECK(slow.error().why == "no reply to org.example.Slow");

    auto closed = conn->call(call_to("Last"), kTimeout);
    REQUIRE_FALSE(closed.ok());
    CHECK(closed.error().why == "the bus closed the connection");
    bus.finish();
    CHECK(bus.problem.empty());
}

TEST_CASE("dbus: a rejected authentication and an oversized message are errors", "[dbus]") {
    SECTION("REJECTED") {
        FakeBus bus([](FakeBus& b) {
            (void)b.line();
            b.write("REJECTED DBUS_COOKIE_SHA1\r\n");
        });
        auto conn = Connection::open(bus.path, kTimeout);
        REQUIRE_FALSE(conn.ok());
        CHECK_THAT(conn.error().why, Catch::Contains("rejected authentication") && Catch::Contains("DBUS_COOKIE_SHA1"));
    }
    SECTION("a message over the bound") {
        FakeBus bus([](FakeBus& b) {
            b.accept_client(":1.3");
            (void)b.read();
            std::string head = "l" + byte(2) + byte(0) + byte(1) + le32(64 << 20) + le32(99) + le32(0);
            b.write(head);
            (void)b.read();
        });
        auto conn = Connection::open(bus.path, kTimeout);
        REQUIRE(conn.ok());
        auto big = conn->call(call_to("Big"), kTimeout);
        REQUIRE_FALSE(big.ok());
        CHECK_THAT(big.error().why, Catch::Contains("cordon accepts up to"));
    }
    SECTION("no bus") {
        auto conn = Connection::open("/nonexistent/bus", kTimeout);
        REQUIRE_FALSE(conn.ok());
        CHECK(conn.error().err == ENOENT);
        CHECK(conn.error().why == "connect to /nonexistent/bus");
    }
}

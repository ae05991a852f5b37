// The D-Bus connection: a unix stream socket, SASL EXTERNAL, Hello, and method calls that wait
// for their reply while keeping the signals that arrive meanwhile.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>

#include "cordon/dbus.hpp"

namespace cordon::dbus {

namespace {

constexpr const char* kBusName = "org.freedesktop.DBus";
constexpr const char* kBusPath = "/org/freedesktop/DBus";
// The longest line of the authentication exchange we wait for ("OK <guid>" is 35 bytes).
constexpr size_t kMaxAuthLine = 1024;
// Signals kept while a call waits for its reply, in bytes as received: thousands of
// JobRemoved, while a peer that floods us cannot make cordon grow without bound.
constexpr size_t kMaxKeptBytes = 4 * kMaxMessageSize;

Error bus_error(std::string why, int err = 0) {
    return make_error("D-Bus", std::move(why), err);
}

// Wait until FD is ready for EVENTS (or has an error or hangup the next read or write will
// report), or DEADLINE passes (ETIMEDOUT).
Status wait_fd(int fd, short events, Clock::time_point deadline) {
    for (;;) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) return bus_error("", ETIMEDOUT);
        pollfd p{fd, events, 0};
        int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX)));
        if (r > 0) return {};
        if (r < 0 && errno != EINTR) return bus_error("poll", errno);
    }
}

Status write_all_until(int fd, std::string_view data, Clock::time_point deadline) {
    while (!data.empty()) {
        // MSG_NOSIGNAL: a bus that went away is an error to report, not a SIGPIPE.
        ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n >= 0) {
            data.remove_prefix(static_cast<size_t>(n));
        } else if (errno == EAGAIN) {
            CORDON_TRY(wait_fd(fd, POLLOUT, deadline));
        } else if (errno != EINTR) {
            return bus_error("send", errno);
        }
    }
    return {};
}

std::string hex(std::string_view s) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) {
        out += kDigits[c >> 4];
        out += kDigits[c & 0xf];
    }
    return out;
}

// The bus's text in an error message: printable ASCII, at most 80 characters.
std::string printable(std::string_view s) {
    std::string out;
    for (char c : s.substr(0, 80)) out += (c >= ' ' && c <= '~') ? c : '?';
    return out;
}

// An error reply as an Error: its message (the first argument, by convention) and its name.
Error peer_error(const Message& reply) {
    std::string text = !reply.body.empty() && reply.body[0].type == 's' ? reply.body[0].str : "";
    return bus_error(text.empty() ? reply.error_name : text + " (" + reply.error_name + ")");
}

// The value of one %XX-escaped D-Bus address value; nullopt when an escape is broken or
// yields a NUL.
std::optional<std::string> unescape(std::string_view s) {
    auto digit = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out += s[i];
            continue;
        }
        if (i + 2 >= s.size()) return std::nullopt;
        const int hi = digit(s[i + 1]), lo = digit(s[i + 2]);
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) return std::nullopt;
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return out;
}

}  // namespace

std::optional<std::string> user_bus_path(const char* session_bus_address, const char* xdg_runtime_dir) {
    // DBUS_SESSION_BUS_ADDRESS: addresses separated by ';', each "transport:key=value,...".
    std::string_view addresses = session_bus_address ? session_bus_address : "";
    while (!addresses.empty()) {
        const size_t end = std::min(addresses.find(';'), addresses.size());
        std::string_view address = addresses.substr(0, end);
        addresses.remove_prefix(std::min(end + 1, addresses.size()));
        if (address.rfind("unix:", 0) != 0) continue;
        std::string_view pairs = address.substr(5);
        while (!pairs.empty()) {
            const size_t comma = std::min(pairs.find(','), pairs.size());
            std::string_view pair = pairs.substr(0, comma);
            pairs.remove_prefix(std::min(comma + 1, pairs.size()));
            if (pair.rfind("path=", 0) != 0) continue;
            if (auto path = unescape(pair.substr(5)); path && !path->empty()) return path;
        }
    }
    if (xdg_runtime_dir && xdg_runtime_dir[0] == '/') return std::string(xdg_runtime_dir) + "/bus";
    return std::nullopt;
}

Result<Connection> Connection::open(const std::string& path, Clock::duration timeout) {
    const auto deadline = Clock::now() + timeout;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path) return bus_error("the socket path " + path + " is too long");
    std::copy(path.begin(), path.end(), addr.sun_path);
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd) return bus_error("socket", errno);
    // A unix socket connects at once or fails (EAGAIN: the bus's backlog is full); it never
    // leaves a connection in progress.
    if (retry_eintr([&] { return ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr); }) != 0) {
        return bus_error("connect to " + path, errno);
    }
    Connection bus(std::move(fd));
    CORDON_TRY(bus.authenticate(deadline));
    // The bus answers nothing else before Hello, which gives the connection its unique name.
    CORDON_ASSIGN_OR_RETURN(const Message hello,
                            bus.call(method_call(kBusName, kBusPath, kBusName, "Hello"), deadline - Clock::now()));
    if (hello.body_signature() != "s") return bus_error("Hello returned '" + hello.body_signature() + "'");
    bus.unique_name_ = hello.body[0].str;
    return bus;
}

// The specification's SASL exchange: a NUL byte first (on some systems it carries the
// credentials), then EXTERNAL with our uid in decimal, hex-encoded; the bus compares it with
// the socket's peer credentials, the euid at connect().
Status Connection::authenticate(Clock::time_point deadline) {
    auto failed = [](Error e) {
        e.why = "authenticate" + (e.why.empty() ? "" : ": " + e.why);
        return e;
    };
    const std::string uid = std::to_string(::geteuid());
    const std::string auth = std::string(1, '\0') + "AUTH EXTERNAL " + hex(uid) + "\r\n";
    if (auto s = write_all_until(fd_.get(), auth, deadline); !s) return failed(s.error());
    auto answer = read_line(deadline);
    if (!answer) return failed(answer.error());
    if (answer->rfind("REJECTED", 0) == 0) {
        return bus_error("the bus rejected authentication as uid " + uid +
                         " (it offers:" + printable(answer->substr(8)) + ")");
    }
    if (answer->rfind("OK ", 0) != 0) return bus_error("unexpected answer to AUTH: " + printable(*answer));
    if (auto s = write_all_until(fd_.get(), "BEGIN\r\n", deadline); !s) return failed(s.error());
    return {};
}

Result<std::string> Connection::read_line(Clock::time_point deadline) {
    for (;;) {
        if (size_t end = in_.find("\r\n"); end != std::string::npos) {
            std::string line = in_.substr(0, end);
            in_.erase(0, end + 2);
            return line;
        }
        if (in_.size() > kMaxAuthLine) return bus_error("the bus's answer to AUTH is too long");
        CORDON_TRY(fill(in_.size() + 1, deadline));
    }
}

Status Connection::fill(size_t want, Clock::time_point deadline) {
    while (in_.size() < want) {
        const size_t have = in_.size();
        const size_t chunk = std::max<size_t>(want - have, 4096);
        in_.resize(have + chunk);
        ssize_t n = ::read(fd_.get(), in_.data() + have, chunk);
        in_.resize(have + static_cast<size_t>(std::max<ssize_t>(n, 0)));
        if (n == 0) return bus_error("the bus closed the connection");
        if (n < 0 && errno == EAGAIN) {
            CORDON_TRY(wait_fd(fd_.get(), POLLIN, deadline));
        } else if (n < 0 && errno != EINTR) {
            return bus_error("read", errno);
        }
    }
    return {};
}

Result<std::string> Connection::read_frame(Clock::time_point deadline) {
    CORDON_TRY(fill(16, deadline));
    CORDON_ASSIGN_OR_RETURN(const size_t length, frame_length(std::string_view(in_).substr(0, 16)));
    CORDON_TRY(fill(length, deadline));
    std::string frame = in_.substr(0, length);
    in_.erase(0, length);
    return frame;
}

Result<uint32_t> Connection::send(Message m, Clock::time_point deadline) {
    // Serials only need to differ among this connection's pending calls; 0 is never one.
    if (++last_serial_ == 0) ++last_serial_;
    m.serial = last_serial_;
    CORDON_ASSIGN_OR_RETURN(const std::string bytes, encode(m));
    CORDON_TRY(write_all_until(fd_.get(), bytes, deadline));
    return m.serial;
}

Result<Message> Connection::call(Message m, Clock::duration timeout) {
    const auto deadline = Clock::now() + timeout;
    const std::string method = m.interface + "." + m.member;
    CORDON_ASSIGN_OR_RETURN(const uint32_t serial, send(std::move(m), deadline));
    for (;;) {
        auto frame = read_frame(deadline);
        if (!frame) {
            if (frame.error().err == ETIMEDOUT) frame.error().why = "no reply to " + method;
            return frame.error();
        }
        CORDON_ASSIGN_OR_RETURN(Message reply, decode(*frame));
        switch (reply.type) {
            case MessageType::Signal:
                CORDON_TRY(keep_signal(std::move(*frame)));
                break;
            case MessageType::MethodReturn:
                if (reply.reply_serial == serial) return reply;
                break;
            case MessageType::Error:
                if (reply.reply_serial == serial) return peer_error(reply);
                break;
            default:
                // Calls to us and replies we no longer wait for: a short-lived client that
                // exports nothing leaves them unanswered.
                break;
        }
    }
}

Status Connection::keep_signal(std::string frame) {
    if (kept_bytes_ + frame.size() > kMaxKeptBytes) {
        return bus_error("more signals arrived during a call than cordon keeps (" + std::to_string(kMaxKeptBytes) +
                         " bytes)");
    }
    kept_bytes_ += frame.size();
    kept_.push_back(std::move(frame));
    return {};
}

Result<Message> Connection::next_signal(Clock::time_point deadline) {
    for (;;) {
        std::string frame;
        if (!kept_.empty()) {
            frame = std::move(kept_.front());
            kept_.pop_front();
            kept_bytes_ -= frame.size();
        } else {
            CORDON_ASSIGN_OR_RETURN(frame, read_frame(deadline));
        }
        auto m = decode(frame);
        if (!m || m->type == MessageType::Signal) return m;
    }
}

Result<Value> get_property(Connection& bus, const std::string& destination, const std::string& path,
                           const std::string& interface, const std::string& property, Clock::duration timeout) {
    CORDON_ASSIGN_OR_RETURN(Message reply,
                            bus.call(method_call(destination, path, "org.freedesktop.DBus.Properties", "Get",
                                                 {Value::string(interface), Value::string(property)}),
                                     timeout));
    if (reply.body_signature() != "v") {
        return bus_error("Properties.Get returned '" + reply.body_signature() + "' instead of a variant");
    }
    return std::move(reply.body[0].items[0]);
}

Status add_match(Connection& bus, const std::string& rule, Clock::duration timeout) {
    CORDON_TRY(bus.call(method_call(kBusName, kBusPath, kBusName, "AddMatch", {Value::string(rule)}), timeout));
    return {};
}

}  // namespace cordon::dbus

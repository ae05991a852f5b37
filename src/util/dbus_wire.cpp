// The D-Bus wire format ("Message Protocol" in the D-Bus specification): signatures, the
// marshalling of values and the framing of messages. Pure; the socket is in dbus.cpp.
#include <cstring>

#include "cordon/dbus.hpp"

namespace cordon::dbus {

namespace {

// The specification's limits: on an array's length in bytes, and on a signature's length.
constexpr uint64_t kMaxArrayLength = uint64_t{1} << 26;
constexpr size_t kMaxSignature = 255;
constexpr int kMaxNesting = 32;  // arrays, and separately structs and dict entries, in one signature

// The header field codes.
enum FieldCode : uint8_t {
    kPath = 1,
    kInterface = 2,
    kMember = 3,
    kErrorName = 4,
    kReplySerial = 5,
    kDestination = 6,
    kSender = 7,
    kSignature = 8,
    kUnixFds = 9,
};

Error malformed(const std::string& why) {
    return make_error("D-Bus", "malformed message: " + why);
}

bool is_basic(char c) {
    return c != '\0' && std::strchr("ybnqiuxtdhsog", c) != nullptr;
}

// Every value starts at a multiple of its type's alignment, counted from the start of the
// message: 1 for bytes, signatures and variants (whose signature comes first), 2 and 4 and 8
// for the integers of that size, 4 for booleans (a uint32), strings, object paths and arrays
// (their uint32 length), 8 for doubles, structs and dict entries.
size_t alignment(char c) {
    switch (c) {
        case 'n':
        case 'q':
            return 2;
        case 'b':
        case 'i':
        case 'u':
        case 'h':
        case 's':
        case 'o':
        case 'a':
            return 4;
        case 'x':
        case 't':
        case 'd':
        case '(':
        case '{':
            return 8;
        default:
            return 1;
    }
}

// The size of a fixed-size basic type; 0 for the others.
size_t fixed_size(char c) {
    switch (c) {
        case 'y':
            return 1;
        case 'n':
        case 'q':
            return 2;
        case 'b':
        case 'i':
        case 'u':
        case 'h':
            return 4;
        case 'x':
        case 't':
        case 'd':
            return 8;
        default:
            return 0;
    }
}

// Where the single complete type starting at SIG[POS] ends, or npos when none starts there.
// ARRAYS and STRUCTS count the containers already open, against the specification's limits.
size_t complete_type_end(std::string_view sig, size_t pos, int arrays, int structs) {
    if (pos >= sig.size()) return std::string_view::npos;
    const char c = sig[pos];
    if (is_basic(c) || c == 'v') return pos + 1;
    if (c == 'a') {
        if (arrays == kMaxNesting) return std::string_view::npos;
        // A dict entry exists only as an array's element: a basic key and one complete type.
        if (pos + 1 < sig.size() && sig[pos + 1] == '{') {
            if (structs == kMaxNesting || pos + 2 >= sig.size() || !is_basic(sig[pos + 2])) {
                return std::string_view::npos;
            }
            size_t end = complete_type_end(sig, pos + 3, arrays + 1, structs + 1);
            if (end == std::string_view::npos || end >= sig.size() || sig[end] != '}') return std::string_view::npos;
            return end + 1;
        }
        return complete_type_end(sig, pos + 1, arrays + 1, structs);
    }
    if (c == '(') {
        if (structs == kMaxNesting) return std::string_view::npos;
        size_t p = pos + 1;
        if (p < sig.size() && sig[p] == ')') return std::string_view::npos;  // a struct has a field
        while (p < sig.size() && sig[p] != ')') {
            p = complete_type_end(sig, p, arrays, structs + 1);
            if (p == std::string_view::npos) return p;
        }
        return p < sig.size() ? p + 1 : std::string_view::npos;
    }
    return std::string_view::npos;
}

bool single_complete_type(std::string_view sig) {
    return sig.size() <= kMaxSignature && complete_type_end(sig, 0, 0, 0) == sig.size();
}

// The complete types a valid signature is made of, one after the other.
std::vector<std::string_view> split_types(std::string_view sig) {
    std::vector<std::string_view> out;
    for (size_t pos = 0; pos < sig.size();) {
        size_t end = complete_type_end(sig, pos, 0, 0);
        out.push_back(sig.substr(pos, end - pos));
        pos = end;
    }
    return out;
}

uint32_t load32(std::string_view in, size_t pos, bool big_endian) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) {
        auto b = static_cast<uint32_t>(static_cast<unsigned char>(in[pos + i]));
        v |= b << (8 * (big_endian ? 3 - i : i));
    }
    return v;
}

// Appends values to OUT. Alignment counts from OUT's start, which is the message's start or
// the body's: the body starts at a multiple of 8, the largest alignment, so both give the
// same padding.
class Writer {
public:
    explicit Writer(std::string& out) : out_(out) {}

    void pad(size_t align) { out_.append((align - out_.size() % align) % align, '\0'); }
    // Little-endian, aligned to its own size.
    void fixed(uint64_t v, size_t size) {
        pad(size);
        for (size_t i = 0; i < size; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xff);
    }
    bool value(const Value& v, int depth);
    [[nodiscard]] const std::string& why() const { return why_; }

private:
    bool fail(std::string why) {
        why_ = std::move(why);
        return false;
    }
    bool text(const std::string& s, size_t length_size) {
        if (s.find('\0') != std::string::npos) return fail("a string holds a NUL byte");
        if (s.size() > kMaxMessageSize) return fail("a string longer than a message");
        fixed(s.size(), length_size);
        out_ += s;
        out_ += '\0';
        return true;
    }

    std::string& out_;
    std::string why_;
};

bool Writer::value(const Value& v, int depth) {
    if (depth > kMaxDepth) return fail("values nested deeper than " + std::to_string(kMaxDepth));
    if (size_t size = fixed_size(v.type)) {
        if (size < 8 && v.num >> (8 * size) != 0) return fail(std::string("a value too large for type ") + v.type);
        if (v.type == 'b' && v.num > 1) return fail("a boolean other than 0 or 1");
        fixed(v.num, size);
        return true;
    }
    switch (v.type) {
        case 's':
            return text(v.str, 4);
        case 'o':
            if (!valid_object_path(v.str)) return fail("an invalid object path '" + v.str + "'");
            return text(v.str, 4);
        case 'g':
            if (!valid_signature(v.str)) return fail("an invalid signature '" + v.str + "'");
            return text(v.str, 1);
        case 'a': {
            if (v.str.empty() || !single_complete_type("a" + v.str)) {
                return fail("an invalid array element type '" + v.str + "'");
            }
            // The length counts the elements only: not the padding between it and the first
            // element, which is there even when the array is empty.
            fixed(0, 4);
            const size_t length_at = out_.size() - 4;
            pad(alignment(v.str[0]));
            const size_t start = out_.size();
            for (const auto& e : v.items) {
                if (auto t = e.type_signature(); t != v.str) {
                    return fail("an element of type '" + t + "' in an array of '" + v.str + "'");
                }
                if (!value(e, depth + 1)) return false;
            }
            const size_t length = out_.size() - start;
            if (length > kMaxArrayLength) return fail("an array longer than 64 MiB");
            for (size_t i = 0; i < 4; ++i) out_[length_at + i] = static_cast<char>((length >> (8 * i)) & 0xff);
            return true;
        }
        case '(':
        case '{':
            if (v.items.empty()) return fail("a struct without fields");
            if (v.type == '{' && (v.items.size() != 2 || !is_basic(v.items[0].type))) {
                return fail("a dict entry that is not a basic key and a value");
            }
            pad(8);
            for (const auto& f : v.items) {
                if (!value(f, depth + 1)) return false;
            }
            return true;
        case 'v': {
            if (v.items.size() != 1) return fail("a variant that does not hold one value");
            const std::string inner = v.items[0].type_signature();
            if (!single_complete_type(inner)) return fail("a variant holding the invalid type '" + inner + "'");
            return text(inner, 1) && value(v.items[0], depth + 1);
        }
        default:
            return fail(std::string("the unknown type code '") + v.type + "'");
    }
}

// Reads values from a whole message IN, in its byte order, checking every length and padding
// byte against what is there.
class Reader {
public:
    Reader(std::string_view in, bool big_endian, size_t pos) : in_(in), big_(big_endian), pos_(pos) {}

    [[nodiscard]] size_t pos() const { return pos_; }
    [[nodiscard]] const std::string& why() const { return why_; }

    // The specification requires padding bytes to be zero.
    bool pad(size_t align) {
        const size_t to = (pos_ + align - 1) / align * align;
        if (to > in_.size()) return fail("padding runs past the end");
        for (; pos_ < to; ++pos_) {
            if (in_[pos_] != '\0') return fail("nonzero alignment padding at offset " + std::to_string(pos_));
        }
        return true;
    }
    bool fixed(size_t size, uint64_t& v) {
        if (!pad(size)) return false;
        if (size > in_.size() - pos_) return fail("a value runs past the end");
        v = 0;
        for (size_t i = 0; i < size; ++i) {
            auto b = static_cast<uint64_t>(static_cast<unsigned char>(in_[pos_ + i]));
            v |= b << (8 * (big_ ? size - 1 - i : i));
        }
        pos_ += size;
        return true;
    }
    // One value of TYPE, a single complete type from a signature already validated.
    bool value(std::string_view type, int depth, Value& out);

private:
    bool fail(std::string why) {
        why_ = std::move(why);
        return false;
    }
    // LENGTH bytes of text, then the NUL that ends them; no NUL inside.
    bool text(uint64_t length, std::string& out) {
        if (length >= in_.size() - pos_) return fail("a string runs past the end");
        std::string_view s = in_.substr(pos_, length);
        if (in_[pos_ + length] != '\0') return fail("a string without its terminating NUL");
        if (s.find('\0') != std::string_view::npos) return fail("a string holds a NUL byte");
        out.assign(s);
        pos_ += length + 1;
        return true;
    }

    std::string_view in_;
    bool big_;
    size_t pos_;
    std::string why_;
};

bool Reader::value(std::string_view type, int depth, Value& out) {
    if (depth > kMaxDepth) return fail("values nested deeper than " + std::to_string(kMaxDepth));
    out = Value{};
    out.type = type[0];
    if (size_t size = fixed_size(out.type)) {
        if (!fixed(size, out.num)) return false;
        if (out.type == 'b' && out.num > 1) return fail("a boolean other than 0 or 1");
        return true;
    }
    uint64_t length = 0;
    switch (out.type) {
        case 's':
        case 'o':
            if (!fixed(4, length) || !text(length, out.str)) return false;
            if (out.type == 'o' && !valid_object_path(out.str)) return fail("an invalid object path");
            return true;
        case 'g':
            if (!fixed(1, length) || !text(length, out.str)) return false;
            if (!valid_signature(out.str)) return fail("an invalid signature");
            return true;
        case 'a': {
            if (!fixed(4, length)) return false;
            if (length > kMaxArrayLength) return fail("an array longer than 64 MiB");
            std::string_view element = type.substr(1);
            if (!pad(alignment(element[0]))) return false;
            if (length > in_.size() - pos_) return fail("an array runs past the end");
            const size_t end = pos_ + length;
            out.str.assign(element);
            // Every element takes at least one byte, so the loop ends.
            while (pos_ < end) {
                out.items.emplace_back();
                if (!value(element, depth + 1, out.items.back())) return false;
            }
            if (pos_ != end) return fail("an array's length ends inside an element");
            return true;
        }
        case '(':
        case '{':
            if (!pad(8)) return false;
            for (std::string_view field : split_types(type.substr(1, type.size() - 2))) {
                out.items.emplace_back();
                if (!value(field, depth + 1, out.items.back())) return false;
            }
            return true;
        case 'v': {
            std::string inner;
            if (!fixed(1, length) || !text(length, inner)) return false;
            if (!single_complete_type(inner)) return fail("a variant whose signature is not one complete type");
            out.items.emplace_back();
            return value(inner, depth + 1, out.items.back());
        }
        default:
            return fail("the unknown type code '" + std::string(type.substr(0, 1)) + "'");
    }
}

// The header fields a message of this type cannot do without; nullptr when it has them.
const char* missing_field(const Message& m) {
    switch (m.type) {
        case MessageType::MethodCall:
            if (m.path.empty()) return "PATH";
            if (m.member.empty()) return "MEMBER";
            return nullptr;
        case MessageType::Signal:
            if (m.path.empty()) return "PATH";
            if (m.interface.empty()) return "INTERFACE";
            if (m.member.empty()) return "MEMBER";
            return nullptr;
        case MessageType::Error:
            if (m.error_name.empty()) return "ERROR_NAME";
            if (m.reply_serial == 0) return "REPLY_SERIAL";
            return nullptr;
        case MessageType::MethodReturn:
            if (m.reply_serial == 0) return "REPLY_SERIAL";
            return nullptr;
    }
    return nullptr;  // a type added after this was written: no field is known to be required
}

Value header_field(FieldCode code, Value v) {
    return Value::structure({Value::byte(code), Value::variant(std::move(v))});
}

// Store the header field CODE of type V.type in M; fields this client does not know are
// skipped, as the specification requires.
Status read_header_field(uint64_t code, const Value& v, Message& m, std::string& signature) {
    auto expect = [&](char type) -> Status {
        if (v.type != type) {
            return malformed("header field " + std::to_string(code) + " has type '" + v.type_signature() + "'");
        }
        return {};
    };
    switch (code) {
        case kPath:
            CORDON_TRY(expect('o'));
            m.path = v.str;
            break;
        case kInterface:
            CORDON_TRY(expect('s'));
            m.interface = v.str;
            break;
        case kMember:
            CORDON_TRY(expect('s'));
            m.member = v.str;
            break;
        case kErrorName:
            CORDON_TRY(expect('s'));
            m.error_name = v.str;
            break;
        case kReplySerial:
            CORDON_TRY(expect('u'));
            m.reply_serial = static_cast<uint32_t>(v.num);
            break;
        case kDestination:
            CORDON_TRY(expect('s'));
            m.destination = v.str;
            break;
        case kSender:
            CORDON_TRY(expect('s'));
            m.sender = v.str;
            break;
        case kSignature:
            CORDON_TRY(expect('g'));
            signature = v.str;
            break;
        case kUnixFds:
            // File descriptors come only to a client that asked for them (NEGOTIATE_UNIX_FD).
            CORDON_TRY(expect('u'));
            if (v.num != 0) return malformed("file descriptors that were not negotiated");
            break;
        default:
            break;
    }
    return {};
}

}  // namespace

std::string Value::type_signature() const {
    switch (type) {
        case 'a':
            return "a" + str;
        case '(':
        case '{': {
            std::string sig(1, type);
            for (const auto& f : items) sig += f.type_signature();
            return sig + (type == '(' ? ')' : '}');
        }
        default:
            return std::string(1, type);
    }
}

bool valid_signature(std::string_view sig) {
    if (sig.size() > kMaxSignature) return false;
    for (size_t pos = 0; pos < sig.size();) {
        pos = complete_type_end(sig, pos, 0, 0);
        if (pos == std::string_view::npos) return false;
    }
    return true;
}

bool valid_object_path(std::string_view path) {
    if (path.empty() || path[0] != '/') return false;
    if (path.size() == 1) return true;
    if (path.back() == '/') return false;
    for (size_t i = 1; i < path.size(); ++i) {
        const char c = path[i];
        if (c == '/') {
            if (path[i - 1] == '/') return false;
        } else if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) {
            return false;
        }
    }
    return true;
}

std::string Message::body_signature() const {
    std::string sig;
    for (const auto& v : body) sig += v.type_signature();
    return sig;
}

Message method_call(std::string destination, std::string path, std::string interface, std::string member,
                    std::vector<Value> args) {
    Message m;
    m.type = MessageType::MethodCall;
    m.destination = std::move(destination);
    m.path = std::move(path);
    m.interface = std::move(interface);
    m.member = std::move(member);
    m.body = std::move(args);
    return m;
}

Result<std::string> encode(const Message& m) {
    if (m.serial == 0) return make_error("D-Bus", "a message needs a serial");
    if (const char* field = missing_field(m)) {
        return make_error("D-Bus", std::string("a message of this type needs the header field ") + field);
    }
    const std::string signature = m.body_signature();
    if (!valid_signature(signature)) return make_error("D-Bus", "an invalid body signature '" + signature + "'");

    // The body first: the header holds its length. It starts at a multiple of 8 in the
    // message, so it is marshalled on its own from offset 0.
    std::string body;
    Writer body_writer(body);
    for (const auto& v : m.body) {
        if (!body_writer.value(v, 0)) return make_error("D-Bus", body_writer.why());
    }

    // The header: the fixed part (byte order, type, flags, protocol version 1, body length,
    // serial) and the header fields as an array of (code, variant), then padding to 8.
    std::vector<Value> fields;
    if (!m.path.empty()) fields.push_back(header_field(kPath, Value::object_path(m.path)));
    if (!m.interface.empty()) fields.push_back(header_field(kInterface, Value::string(m.interface)));
    if (!m.member.empty()) fields.push_back(header_field(kMember, Value::string(m.member)));
    if (!m.error_name.empty()) fields.push_back(header_field(kErrorName, Value::string(m.error_name)));
    if (m.reply_serial != 0) fields.push_back(header_field(kReplySerial, Value::u32(m.reply_serial)));
    if (!m.destination.empty()) fields.push_back(header_field(kDestination, Value::string(m.destination)));
    if (!m.sender.empty()) fields.push_back(header_field(kSender, Value::string(m.sender)));
    if (!signature.empty()) fields.push_back(header_field(kSignature, Value::signature(signature)));

    std::string out;
    Writer w(out);
    w.fixed('l', 1);
    w.fixed(static_cast<uint8_t>(m.type), 1);
    w.fixed(m.flags, 1);
    w.fixed(1, 1);
    w.fixed(body.size(), 4);
    w.fixed(m.serial, 4);
    if (!w.value(Value::array("(yv)", std::move(fields)), 0)) return make_error("D-Bus", w.why());
    w.pad(8);
    out += body;
    if (out.size() > kMaxMessageSize) return make_error("D-Bus", "a message larger than 1 MiB");
    return out;
}

Result<size_t> frame_length(std::string_view head) {
    if (head.size() < 16) return malformed("shorter than its 16-byte fixed header");
    const char order = head[0];
    if (order != 'l' && order != 'B') return malformed("unknown byte order");
    if (head[3] != 1) return malformed("protocol version " + std::to_string(static_cast<unsigned char>(head[3])));
    const bool big = order == 'B';
    // 64-bit arithmetic: the peer's two lengths cannot wrap the sum.
    const uint64_t body_length = load32(head, 4, big);
    const uint64_t fields_length = load32(head, 12, big);
    const uint64_t total = (16 + fields_length + 7) / 8 * 8 + body_length;
    if (total > kMaxMessageSize) {
        return make_error("D-Bus", "a message of " + std::to_string(total) + " bytes (cordon accepts up to " +
                                       std::to_string(kMaxMessageSize) + ")");
    }
    return static_cast<size_t>(total);
}

Result<Message> decode(std::string_view bytes) {
    CORDON_ASSIGN_OR_RETURN(const size_t length, frame_length(bytes));
    if (length != bytes.size()) {
        return malformed(std::to_string(bytes.size()) + " bytes where the header announces " + std::to_string(length));
    }
    if (bytes[1] == 0) return malformed("message type 0 (INVALID)");
    const bool big = bytes[0] == 'B';
    Message m;
    m.type = static_cast<MessageType>(bytes[1]);
    m.flags = static_cast<uint8_t>(bytes[2]);
    m.serial = load32(bytes, 8, big);
    if (m.serial == 0) return malformed("serial 0");

    Reader r(bytes, big, 12);
    Value fields;
    if (!r.value("a(yv)", 0, fields)) return malformed("header fields: " + r.why());
    std::string signature;
    for (const auto& f : fields.items) {
        CORDON_TRY(read_header_field(f.items[0].num, f.items[1].items[0], m, signature));
    }
    if (!r.pad(8)) return malformed("header: " + r.why());
    for (std::string_view type : split_types(signature)) {
        m.body.emplace_back();
        if (!r.value(type, 0, m.body.back())) return malformed("body: " + r.why());
    }
    if (r.pos() != bytes.size()) return malformed("the body is longer than its signature '" + signature + "'");
    if (const char* field = missing_field(m)) return malformed(std::string("no ") + field + " header field");
    return m;
}

}  // namespace cordon::dbus

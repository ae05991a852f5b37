// Length-prefixed binary records for the data compiled into cordon at build time (the shipped
// policies and profiles): fields in native byte order, a format private to one build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace cordon {

class ByteWriter {
public:
    void u32(uint32_t v) { raw(&v, sizeof v); }
    void byte(unsigned char c) { out_ += static_cast<char>(c); }
    void flag(bool b) { byte(b ? 1 : 0); }
    void str(std::string_view s) {
        u32(static_cast<uint32_t>(s.size()));
        out_.append(s);
    }
    void raw(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
    std::string take() { return std::move(out_); }

protected:
    std::string out_;
};

// Every read is bounds-checked; the first short or malformed read sets bad() for good (and
// ends the input), and reads after it return empty values.
class ByteReader {
public:
    explicit ByteReader(std::string_view in) : in_(in) {}

    [[nodiscard]] bool bad() const { return bad_; }
    [[nodiscard]] bool at_end() const { return pos_ == in_.size(); }
    void reject() { fail(); }
    bool expect(std::string_view s) {
        if (in_.substr(pos_, s.size()) != s) return fail();
        pos_ += s.size();
        return true;
    }
    bool raw(void* p, size_t n) {
        if (!have(n)) return false;
        std::memcpy(p, in_.data() + pos_, n);
        pos_ += n;
        return true;
    }
    uint32_t u32() {
        uint32_t v = 0;
        raw(&v, sizeof v);
        return v;
    }
    unsigned char byte() {
        if (!have(1)) return 0;
        return static_cast<unsigned char>(in_[pos_++]);
    }
    bool flag() {
        unsigned char b = byte();
        if (b > 1) fail();
        return b == 1;
    }
    // An enumerator stored as one byte, at most MAX.
    template <typename E>
    E enumerator(E max) {
        unsigned char b = byte();
        if (b > static_cast<unsigned char>(max)) fail();
        return static_cast<E>(b);
    }
    std::string str() { return std::string(view()); }
    // A length-prefixed field, not copied.
    std::string_view view() {
        uint32_t n = u32();
        if (!have(n)) return {};
        std::string_view v = in_.substr(pos_, n);
        pos_ += n;
        return v;
    }
    // A count of items that each take at least MIN_BYTES: a corrupt count cannot allocate much.
    size_t count(size_t min_bytes) {
        uint32_t n = u32();
        if (!have(static_cast<size_t>(n) * min_bytes)) return 0;
        return n;
    }

protected:
    std::string_view in_;
    size_t pos_ = 0;
    bool bad_ = false;

    bool fail() {
        bad_ = true;
        pos_ = in_.size();
        return false;
    }
    bool have(size_t n) {
        if (bad_ || n > in_.size() - pos_) return fail();
        return true;
    }
};

}  // namespace cordon

// Errors as values: what failed, the errno (0 if none) and the path or argument involved.
#pragma once

#include <cerrno>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace cordon {

// The exit status a failure maps to (SPEC §3). Most errors are cordon's own (125).
enum class ErrorKind { Setup = 125, Denied = 126, NotFound = 127 };

struct Error {
    std::string what;  // "mount /newroot/etc", "--memory", "profiles/x.toml:3:1"
    std::string why;   // human text; empty when errno says it all
    int err = 0;       // errno, or 0
    std::string hint;  // how to fix it, when we know
    ErrorKind kind = ErrorKind::Setup;
    // Further errors found in the same input (a profile's other bad keys), each a whole
    // message, in the input's order.
    std::vector<std::string> also;

    // "cordon: <what>: <why>: <strerror>", the further errors, then the hint, each on its own line.
    [[nodiscard]] std::string message() const;
};

[[nodiscard]] inline Error make_error(std::string what, std::string why, int err = 0) {
    return Error{std::move(what), std::move(why), err, {}, ErrorKind::Setup, {}};
}
[[nodiscard]] inline Error sys_error(std::string what, int err = errno) {
    return Error{std::move(what), {}, err, {}, ErrorKind::Setup, {}};
}

// A minimal expected<T, Error>.
template <typename T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
    Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
    [[nodiscard]] bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() & { return std::get<0>(v_); }
    const T& value() const& { return std::get<0>(v_); }
    T&& value() && { return std::get<0>(std::move(v_)); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    const Error& error() const { return std::get<1>(v_); }
    Error& error() { return std::get<1>(v_); }

private:
    std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : err_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)
    [[nodiscard]] bool ok() const { return ok_; }
    explicit operator bool() const { return ok_; }
    const Error& error() const { return err_; }
    Error& error() { return err_; }

private:
    Error err_;
    bool ok_ = true;
};

using Status = Result<void>;

}  // namespace cordon

// Propagate an error from an expression yielding Result<...>.
#define CORDON_TRY(expr)                                   \
    do {                                                   \
        if (auto cordon_try_r_ = (expr); !cordon_try_r_) { \
            return std::move(cordon_try_r_.error());       \
        }                                                  \
    } while (0)

#define CORDON_CONCAT_INNER_(a, b) a##b
#define CORDON_CONCAT_(a, b) CORDON_CONCAT_INNER_(a, b)

// Assign the value of an expression yielding Result<T> to LHS (a declaration such as `auto x`
// or an existing variable), or return its error:
//   CORDON_ASSIGN_OR_RETURN(auto fd, open_dir(path));
// Expands to more than one statement: not for the body of an unbraced if.
// NOLINTBEGIN(bugprone-macro-parentheses): LHS is a declaration and TMP a name, neither can be
// parenthesised.
#define CORDON_ASSIGN_OR_RETURN(lhs, expr) \
    CORDON_ASSIGN_OR_RETURN_IMPL_(CORDON_CONCAT_(cordon_assign_r_, __LINE__), lhs, expr)
#define CORDON_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
    auto tmp = (expr);                                \
    if (!tmp) return std::move(tmp.error());          \
    lhs = std::move(*tmp)
// NOLINTEND(bugprone-macro-parentheses)

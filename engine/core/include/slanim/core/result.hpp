// SPDX-License-Identifier: MIT
// Error values (ACL style): every fallible slanim call returns a Result<T> instead of throwing,
// or a Status (Result<void>) when it has no value to return.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <variant>

namespace slanim {

/// What went wrong, where. `offset` is a byte offset into the input for binary formats,
/// `line` a 1-based line for text formats; either is -1 when it does not apply.
struct Error {
    std::string message;
    long long offset = -1;
    long long line = -1;
    /// A machine-readable reason for APIs that document one (e.g. OverrideError), so a caller
    /// (the C API) can map it to its own codes; 0 when the API gives none.
    int code = 0;

    /// "message (at byte N)" / "message (line N)" / "message".
    [[nodiscard]] std::string describe() const;
};

/// Either a value or an Error. Minimal stand-in for C++23 std::expected.
template <class T>
class Result {
public:
    Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}   // NOLINT: implicit by design
    Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {} // NOLINT

    [[nodiscard]] bool ok() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }

    /// The value. Precondition: ok().
    T& value() & { return std::get<0>(v_); }
    const T& value() const& { return std::get<0>(v_); }
    T&& value() && { return std::get<0>(std::move(v_)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    /// The error. Precondition: !ok().
    const Error& error() const { return std::get<1>(v_); }

private:
    std::variant<T, Error> v_;
};

/// Success, or an Error: the result of a call with no value to return.
template <>
class Result<void> {
public:
    Result() = default;  ///< success
    Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design

    [[nodiscard]] bool ok() const noexcept { return ok_; }
    explicit operator bool() const noexcept { return ok_; }
    /// The error. Precondition: !ok().
    [[nodiscard]] const Error& error() const { return error_; }

private:
    Error error_;
    bool ok_ = true;
};
using Status = Result<void>;

}  // namespace slanim

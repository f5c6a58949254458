// SPDX-License-Identifier: MIT
// Error values (ACL style): every fallible slanim call returns a Result<T> instead of throwing.
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

}  // namespace slanim

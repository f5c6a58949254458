// SPDX-License-Identifier: MIT
// Force-included into every C++ file of the WebAssembly build (cmake/SlanimWasm.cmake): what
// Emscripten 3.1.6's libc++ (LLVM 14) lacks of C++20. std::bit_cast (a memcpy, as the standard
// defines it). operator<=> for std::array and std::basic_string (lexicographic, as C++20's), so
// that the defaulted <=> of types holding them (slanim/formats/llsd.hpp's Uuid) exists.
// Floating-point std::to_chars / std::from_chars: these overloads give the readers and writers (formats, appearance,
// puppetry) the standard's results: to_chars writes the shortest round-trip text
// (slanim::detail::shortest_float_text, engine/core/src/format_message.hpp); from_chars reads
// the standard's pattern (no leading '+' or space, no hex, fixed: no exponent, scientific: an
// exponent required) with strtod/strtof, value untouched on errors.
#pragma once

#if defined(__cplusplus) && defined(__EMSCRIPTEN__)
#include <array>
#include <bit>
#include <compare>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <strings.h>
#include <system_error>

#include "../../engine/core/src/format_message.hpp"

namespace slanim::wasm_charconv {

inline std::to_chars_result write(char* first, char* last, const std::string& text) {
    if (static_cast<std::size_t>(last - first) < text.size()) return {last, std::errc::value_too_large};
    std::memcpy(first, text.data(), text.size());
    return {first + text.size(), std::errc{}};
}

/// The end of the longest prefix of [p, last) that std::from_chars reads as a number in `fmt`,
/// or p when there is none.
inline const char* number_end(const char* p, const char* last, std::chars_format fmt) {
    const char* s = p;
    if (s < last && *s == '-') ++s;
    const auto word = [&](const char* w) {
        const std::size_t n = std::strlen(w);
        return static_cast<std::size_t>(last - s) >= n && strncasecmp(s, w, n) == 0;
    };
    if (word("infinity")) return s + 8;
    if (word("inf")) return s + 3;
    if (word("nan")) {
        const char* q = s + 3;
        if (q < last && *q == '(') {
            const char* r = q + 1;
            while (r < last && (std::isalnum(static_cast<unsigned char>(*r)) || *r == '_')) ++r;
            if (r < last && *r == ')') return r + 1;
        }
        return q;
    }
    const char* d = s;
    bool any = false;
    while (d < last && *d >= '0' && *d <= '9') ++d, any = true;
    if (d < last && *d == '.') {
        ++d;
        while (d < last && *d >= '0' && *d <= '9') ++d, any = true;
    }
    if (!any) return p;
    const bool sci = (static_cast<int>(fmt) & static_cast<int>(std::chars_format::scientific)) != 0;
    const bool fix = (static_cast<int>(fmt) & static_cast<int>(std::chars_format::fixed)) != 0;
    if (sci && d < last && (*d == 'e' || *d == 'E')) {
        const char* e = d + 1;
        if (e < last && (*e == '+' || *e == '-')) ++e;
        const char* digits = e;
        while (e < last && *e >= '0' && *e <= '9') ++e;
        if (e > digits) return e;
    }
    return (sci && !fix) ? p : d;  // scientific alone needs an exponent
}

template <typename T>
std::from_chars_result read(const char* first, const char* last, T& value, std::chars_format fmt) {
    const char* end = number_end(first, last, fmt);
    if (end == first) return {first, std::errc::invalid_argument};
    std::string text(first, end);
    errno = 0;
    char* stop = nullptr;
    const T v = sizeof(T) == 4 ? static_cast<T>(std::strtof(text.c_str(), &stop)) : static_cast<T>(std::strtod(text.c_str(), &stop));
    if (errno == ERANGE && (std::isinf(v) || v == 0)) return {end, std::errc::result_out_of_range};
    value = v;
    return {end, std::errc{}};
}

}  // namespace slanim::wasm_charconv

namespace std {

#if defined(_LIBCPP_VERSION) && _LIBCPP_VERSION < 16000
template <class T, size_t N>
constexpr auto operator<=>(const array<T, N>& a, const array<T, N>& b) {
    for (size_t i = 0; i < N; ++i)
        if (const auto c = a[i] <=> b[i]; c != 0) return c;
    return decltype(a[0] <=> b[0])::equivalent;
}
template <class C, class Tr, class A>
auto operator<=>(const basic_string<C, Tr, A>& a, const basic_string<C, Tr, A>& b) {
    return a.compare(b) <=> 0;
}
#endif

#if !defined(__cpp_lib_bit_cast)
template <class To, class From>
    requires(sizeof(To) == sizeof(From) && is_trivially_copyable_v<To> && is_trivially_copyable_v<From>)
constexpr To bit_cast(const From& from) noexcept {
    return __builtin_bit_cast(To, from);
}
#endif

inline to_chars_result to_chars(char* first, char* last, float value) {
    return slanim::wasm_charconv::write(first, last, slanim::detail::shortest_float_text(value));
}
inline to_chars_result to_chars(char* first, char* last, double value) {
    return slanim::wasm_charconv::write(first, last, slanim::detail::shortest_float_text(value));
}
inline to_chars_result to_chars(char* first, char* last, float value, chars_format fmt) {
    return slanim::wasm_charconv::write(first, last, slanim::detail::shortest_float_text(value, fmt == chars_format::fixed));
}
inline to_chars_result to_chars(char* first, char* last, double value, chars_format fmt) {
    return slanim::wasm_charconv::write(first, last, slanim::detail::shortest_float_text(value, fmt == chars_format::fixed));
}
inline from_chars_result from_chars(const char* first, const char* last, float& value,
                                    chars_format fmt = chars_format::general) {
    return slanim::wasm_charconv::read(first, last, value, fmt);
}
inline from_chars_result from_chars(const char* first, const char* last, double& value,
                                    chars_format fmt = chars_format::general) {
    return slanim::wasm_charconv::read(first, last, value, fmt);
}

}  // namespace std
#endif

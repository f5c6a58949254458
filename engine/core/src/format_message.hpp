// SPDX-License-Identifier: MIT
// Private: error-message formatting for slanim::core, which links no third-party library.
// format_message("vertex {} has weight {}", v, w) replaces each "{}" in turn; numbers are
// written in their shortest round-trip form (std::to_chars), as fmt's "{}" writes them.
#pragma once

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <type_traits>

namespace slanim::detail {

inline void append_message_arg(std::string& out, std::string_view s) { out += s; }
inline void append_message_arg(std::string& out, const std::string& s) { out += s; }
inline void append_message_arg(std::string& out, const char* s) { out += s; }

/// True where the standard library lacks floating-point std::to_chars (Emscripten 3.1.6's
/// libc++): floats and doubles then take shortest_float_text.
#if defined(__EMSCRIPTEN__) && defined(_LIBCPP_VERSION)
inline constexpr bool kNoFloatToChars = true;
#else
inline constexpr bool kNoFloatToChars = false;
#endif

/// std::to_chars(value)'s text for a float or double, portably (no_scientific: std::to_chars(
/// value, std::chars_format::fixed)'s): the fewest significant digits that read back to the
/// same value (printf's correctly rounded %.*e at rising precision), then the shorter of the
/// fixed and the scientific notation (fixed on a tie; exponent with sign and ≥ 2 digits;
/// integers in fixed notation with all their exact digits; inf, -inf, nan as printf writes
/// them). It could differ from to_chars only where a shortest digit string other than the
/// correctly rounded one reads back (none in 2.6 million random floats and doubles).
template <typename T>
    requires std::is_floating_point_v<T>
std::string shortest_float_text(T value, bool no_scientific = false) {
    char buf[400];
    if (!(value - value == value - value)) {  // inf or nan
        std::snprintf(buf, sizeof buf, "%g", static_cast<double>(value));
        return buf;
    }
    const int max_digits = sizeof(T) == 4 ? 9 : 17;
    for (int digits = 1; digits <= max_digits; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*e", digits - 1, static_cast<double>(value));
        const T back = sizeof(T) == 4 ? static_cast<T>(std::strtof(buf, nullptr)) : static_cast<T>(std::strtod(buf, nullptr));
        if (back == value) break;
    }
    // buf: [-]d[.ddd]e±XX
    const std::string_view text(buf);
    const std::size_t e = text.find('e');
    const bool negative = text[0] == '-';
    std::string digits;
    for (char c : text.substr(0, e))
        if (c >= '0' && c <= '9') digits += c;
    const int exponent = std::atoi(buf + e + 1);
    const int n = static_cast<int>(digits.size());
    std::string scientific = digits.substr(0, 1);
    if (n > 1) scientific += "." + digits.substr(1);
    char exp_text[16];
    std::snprintf(exp_text, sizeof exp_text, "e%c%02d", exponent < 0 ? '-' : '+', exponent < 0 ? -exponent : exponent);
    scientific += exp_text;
    std::string fixed;
    if (exponent >= 0) {
        if (n <= exponent) {  // an integer: to_chars writes its exact digits, not zeros
            std::snprintf(buf, sizeof buf, "%.0f", static_cast<double>(negative ? -value : value));
            fixed = buf;
        } else {
            fixed = digits.substr(0, static_cast<std::size_t>(exponent + 1));
            if (n > exponent + 1) fixed += "." + digits.substr(static_cast<std::size_t>(exponent + 1));
        }
    } else {
        fixed = "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    }
    return (negative ? "-" : "") + (no_scientific || fixed.size() <= scientific.size() ? fixed : scientific);
}

template <typename T>
    requires std::is_arithmetic_v<T>
void append_message_arg(std::string& out, T value) {
    if constexpr (kNoFloatToChars && std::is_floating_point_v<T>) {
        out += shortest_float_text(value);
    } else {
        char buf[64];
        const auto r = std::to_chars(buf, buf + sizeof buf, value);
        out.append(buf, r.ptr);
    }
}

template <typename... Args>
std::string format_message(std::string_view pattern, const Args&... args) {
    std::string out;
    out.reserve(pattern.size() + 16 * sizeof...(Args));
    std::size_t pos = 0;
    const auto next = [&](const auto& arg) {
        const std::size_t hole = pattern.find("{}", pos);
        if (hole == std::string_view::npos) return;
        out.append(pattern.substr(pos, hole - pos));
        append_message_arg(out, arg);
        pos = hole + 2;
    };
    (next(args), ...);
    out.append(pattern.substr(pos));
    return out;
}

}  // namespace slanim::detail

// SPDX-License-Identifier: MIT
// Private: error-message formatting for slanim::core, which links no third-party library.
// format_message("vertex {} has weight {}", v, w) replaces each "{}" in turn; numbers are
// written in their shortest round-trip form (std::to_chars), as fmt's "{}" writes them.
#pragma once

#include <charconv>
#include <string>
#include <string_view>
#include <type_traits>

namespace slanim::detail {

inline void append_message_arg(std::string& out, std::string_view s) { out += s; }
inline void append_message_arg(std::string& out, const std::string& s) { out += s; }
inline void append_message_arg(std::string& out, const char* s) { out += s; }

template <typename T>
    requires std::is_arithmetic_v<T>
void append_message_arg(std::string& out, T value) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, r.ptr);
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

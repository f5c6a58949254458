// SPDX-License-Identifier: MIT
// Private: a short, printable rendering of input text for error messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace slanim::detail {

/// `s` in single quotes, at most `max` bytes (then "..."), with control bytes, non-ASCII bytes,
/// quotes and backslashes written as \xNN.
inline std::string shown_text(std::string_view s, std::size_t max) {
    std::string out = "'";
    for (std::size_t i = 0; i < s.size() && i < max; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x20 || c >= 0x7F || c == '\'' || c == '\\')
            out += fmt::format("\\x{:02X}", static_cast<unsigned>(c));
        else
            out += static_cast<char>(c);
    }
    if (s.size() > max) out += "...";
    out += "'";
    return out;
}

}  // namespace slanim::detail

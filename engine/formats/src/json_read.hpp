// SPDX-License-Identifier: MIT
// Private helpers for the JSON readers (BVH sidecar, BVJ): typed field access with errors that
// name the JSON path of the bad field ("$.HIERARCHY.JOINTS[2].OFFSET[1]").
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "slanim/core/math.hpp"
#include "slanim/core/result.hpp"

namespace slanim::json_read {

using Json = nlohmann::json;

/// Thrown inside a reader and turned into an Error at its boundary (never escapes the engine).
struct ReadError {
    std::string message;
};

inline std::string key_path(const std::string& path, std::string_view key) {
    const bool plain = !key.empty() && key.find_first_of(".[]\" ") == std::string_view::npos;
    return plain ? fmt::format("{}.{}", path, key) : fmt::format("{}[\"{}\"]", path, key);
}
inline std::string index_path(const std::string& path, std::size_t i) {
    return fmt::format("{}[{}]", path, i);
}

/// A short rendering of a value for messages (at most ~40 characters).
inline std::string show(const Json& v) {
    if (v.is_array()) return fmt::format("an array of {}", v.size());
    if (v.is_object()) return fmt::format("an object of {} key(s)", v.size());
    std::string s = v.dump();
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return s;
}

[[noreturn]] inline void fail(const std::string& path, std::string_view expected, const Json& found) {
    throw ReadError{fmt::format("{}: expected {}, found {}", path, expected, show(found))};
}

inline double number(const Json& v, const std::string& path, std::string_view expected = "a number") {
    if (!v.is_number()) fail(path, expected, v);
    const double d = v.get<double>();
    if (!std::isfinite(d)) fail(path, expected, v);
    return d;
}

/// A number representable as a finite float, within [lo, hi].
inline float real(const Json& v, const std::string& path, double lo = -3.0e38, double hi = 3.0e38,
                  std::string_view expected = "a number") {
    const double d = number(v, path, expected);
    if (d < lo || d > hi) fail(path, expected, v);
    return static_cast<float>(d);
}

/// An integer (a JSON number without fraction or exponent, or a real with an integral value)
/// within [lo, hi].
inline long long integer(const Json& v, const std::string& path, long long lo, long long hi,
                         std::string_view expected) {
    if (v.is_number_integer()) {
        if (v.is_number_unsigned()) {
            const auto u = v.get<std::uint64_t>();
            if (u > static_cast<std::uint64_t>(hi)) fail(path, expected, v);
            return static_cast<long long>(u);
        }
        const auto i = v.get<std::int64_t>();
        if (i < lo || i > hi) fail(path, expected, v);
        return i;
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && std::floor(d) == d && d >= static_cast<double>(lo) &&
            d <= static_cast<double>(hi))
            return static_cast<long long>(d);
    }
    fail(path, expected, v);
}

inline bool boolean(const Json& v, const std::string& path) {
    if (!v.is_boolean()) fail(path, "true or false", v);
    return v.get<bool>();
}

inline const std::string& string(const Json& v, const std::string& path) {
    if (!v.is_string()) fail(path, "a string", v);
    return v.get_ref<const std::string&>();
}

inline Vec3 vec3(const Json& v, const std::string& path, double lo = -3.0e38, double hi = 3.0e38,
                 std::string_view expected = "an array of 3 numbers") {
    if (!v.is_array() || v.size() != 3) fail(path, expected, v);
    return {real(v[0], index_path(path, 0), lo, hi), real(v[1], index_path(path, 1), lo, hi),
            real(v[2], index_path(path, 2), lo, hi)};
}

/// Parses JSON text; syntax errors give the byte offset.
inline Result<Json> parse(std::string_view text) {
    try {
        return Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& e) {
        // nlohmann counts bytes from 1 (the byte it stopped at); Error::offset is 0-based and
        // within the text.
        const std::size_t at = std::min(e.byte > 0 ? e.byte - 1 : 0, text.size());
        return Error{fmt::format("JSON syntax error at byte {}: {}", at, e.what()),
                     static_cast<long long>(at)};
    } catch (const Json::exception& e) {
        return Error{fmt::format("JSON error: {}", e.what())};
    }
}

/// A float as the shortest JSON number that reads back to the same float.
inline Json num(float f) {
    // nlohmann writes a double's shortest text; the double nearest to the float's shortest text
    // therefore prints as that text (0.3f → 0.3, not 0.30000001192092896).
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, f);
    double d = 0.0;
    std::from_chars(buf, r.ptr, d);
    return Json(d);
}

}  // namespace slanim::json_read

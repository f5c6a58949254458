// SPDX-License-Identifier: MIT
// LLSD (Linden Lab Structured Data): the value type, and its XML and notation serializations.
//
// LLSD is the self-describing data model the viewer uses for capabilities (LLSD XML bodies, e.g.
// the "Puppetry" capability, spec §9.5), for LEAP plugin messages (LLSD notation, §9.4) and for
// some assets (the Firestorm poser's hand poses). It mirrors the viewer's `LLSD` class
// (llcommon/llsd.h) and its serializers (llcommon/llsdserialize.cpp, llsdserialize_xml.cpp):
//
//   type        C++ value                     notation                 XML element
//   undefined   (none)                        !                        <undef/>
//   boolean     bool                          true false 1 0 t f ...   <boolean>
//   integer     std::int32_t                  i42                      <integer>
//   real        double                        r1.5                     <real>
//   string      std::string (UTF-8 bytes)     'a' "a" s(1)"a"          <string>
//   uuid        Uuid (16 bytes)               u01234567-89ab-...       <uuid>
//   date        LlsdDate (s since the epoch)  d"2022-05-06T17:23:57Z"  <date>
//   uri         LlsdUri (text)                l"http://x/"             <uri>
//   binary      LlsdBinary (bytes)            b64"AAE=" b16"0001" ...  <binary encoding="base64">
//   array       Llsd::Array                   [v,v]                    <array>
//   map         Llsd::Map (unique keys)       {'k':v,'l':w}            <map><key>k</key>v</map>
//
// Both parsers are strict (a value is accepted only when its text is exactly one of the forms
// documented on the parse functions), report the position of the first problem, never throw
// (but for std::bad_alloc), never read past the input and never recurse deeper than
// kLlsdMaxDepth. format(parse(x)) is a canonical text and parse(format(v)) == v for every value
// (see the formatters for the exceptions: NaN reals compare unequal, XML cannot carry a NUL
// byte, LlsdDate::str's corner case).
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "slanim/core/result.hpp"

namespace slanim {

/// A 128-bit UUID (LLUUID), stored as its 16 bytes in text order.
struct Uuid {
    std::array<std::uint8_t, 16> bytes{};

    /// Parses the canonical 36-character form `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`
    /// (hexadecimal digits in either case). nullopt for anything else (no braces, no spaces).
    static std::optional<Uuid> parse(std::string_view text);
    /// The canonical text, lower case.
    [[nodiscard]] std::string str() const;
    /// All bytes zero (LLUUID::null).
    [[nodiscard]] bool is_null() const;

    friend auto operator<=>(const Uuid&, const Uuid&) = default;
};

/// An LLSD date: seconds since 1970-01-01T00:00:00Z (UTC, no leap seconds), like LLDate.
struct LlsdDate {
    double seconds = 0.0;

    /// Parses ISO-8601 `YYYY-MM-DDTHH:MM:SS[.fraction]Z` (years 0001…9999, a valid calendar day,
    /// hours 0…23, minutes 0…59, seconds 0…60, any number of fraction digits, an upper-case T
    /// and Z). nullopt for anything else.
    static std::optional<LlsdDate> parse(std::string_view text);
    /// `YYYY-MM-DDTHH:MM:SS[.f]Z`: the fraction to the microsecond (trailing zeros removed,
    /// omitted when zero) when that text reads back to the same value, which holds for every
    /// date parsed from a text with at most six fraction digits before year 2242; otherwise
    /// the shortest decimal fraction that reads back exactly (parse(str()) == *this, except
    /// within the second before the epoch, where it is within 1e-16 s). Precondition:
    /// `seconds` is finite and within years 1…9999; other values are written as the epoch.
    [[nodiscard]] std::string str() const;

    friend auto operator<=>(const LlsdDate&, const LlsdDate&) = default;
};

/// An LLSD URI: text, not validated (like LLURI in LLSD).
struct LlsdUri {
    std::string text;
    friend auto operator<=>(const LlsdUri&, const LlsdUri&) = default;
};

/// LLSD binary data.
using LlsdBinary = std::vector<std::uint8_t>;

/// Deepest nesting of arrays and maps the parsers accept (the outermost container is depth 1).
inline constexpr int kLlsdMaxDepth = 256;

namespace detail {
/// Owns a heap-allocated T with value semantics (deep copy). Lets Llsd hold its own array and
/// map types, and keeps moving a value a pointer move. A moved-from box reads as an empty T.
template <class T>
class LlsdBox {
public:
    LlsdBox() = default;
    explicit LlsdBox(T v) : p_(std::make_unique<T>(std::move(v))) {}
    LlsdBox(const LlsdBox& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
    LlsdBox(LlsdBox&&) noexcept = default;
    LlsdBox& operator=(const LlsdBox& o) {
        if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
        return *this;
    }
    LlsdBox& operator=(LlsdBox&&) noexcept = default;
    ~LlsdBox() = default;

    [[nodiscard]] const T& get() const { return p_ ? *p_ : empty(); }
    T& get() {
        if (!p_) p_ = std::make_unique<T>();
        return *p_;
    }
    friend bool operator==(const LlsdBox& a, const LlsdBox& b) { return a.get() == b.get(); }

private:
    static const T& empty() {
        static const T e{};
        return e;
    }
    std::unique_ptr<T> p_;
};
}  // namespace detail

/// One LLSD value. A default-constructed value is undefined. Copyable, comparable (==: same
/// type and equal contents; reals compare as doubles, so NaN ≠ NaN).
class Llsd {
public:
    enum class Type : std::uint8_t { Undefined, Boolean, Integer, Real, String, Uuid, Date, Uri,
                                     Binary, Array, Map };
    using Array = std::vector<Llsd>;
    /// Keys are unique and kept sorted (the viewer's LLSD map is a std::map too).
    using Map = std::map<std::string, Llsd, std::less<>>;

    Llsd() = default;
    Llsd(bool v) : v_(v) {}                                    // NOLINT: implicit by design
    Llsd(std::int32_t v) : v_(v) {}                            // NOLINT
    Llsd(double v) : v_(v) {}                                  // NOLINT
    Llsd(std::string v) : v_(std::move(v)) {}                  // NOLINT
    Llsd(std::string_view v) : v_(std::string(v)) {}           // NOLINT
    Llsd(const char* v) : v_(std::string(v)) {}                // NOLINT
    Llsd(slanim::Uuid v) : v_(v) {}                            // NOLINT
    Llsd(LlsdDate v) : v_(v) {}                                // NOLINT
    Llsd(LlsdUri v) : v_(std::move(v)) {}                      // NOLINT
    Llsd(LlsdBinary v) : v_(std::move(v)) {}                   // NOLINT
    Llsd(Array v) : v_(std::in_place_type<detail::LlsdBox<Array>>, std::move(v)) {}  // NOLINT
    Llsd(Map v) : v_(std::in_place_type<detail::LlsdBox<Map>>, std::move(v)) {}      // NOLINT

    /// An empty array / an empty map.
    static Llsd empty_array() { return Llsd(Array{}); }
    static Llsd empty_map() { return Llsd(Map{}); }

    [[nodiscard]] Type type() const { return static_cast<Type>(v_.index()); }
    [[nodiscard]] bool is_undefined() const { return type() == Type::Undefined; }
    [[nodiscard]] bool is_boolean() const { return type() == Type::Boolean; }
    [[nodiscard]] bool is_integer() const { return type() == Type::Integer; }
    [[nodiscard]] bool is_real() const { return type() == Type::Real; }
    /// Integer or real.
    [[nodiscard]] bool is_number() const { return is_integer() || is_real(); }
    [[nodiscard]] bool is_string() const { return type() == Type::String; }
    [[nodiscard]] bool is_uuid() const { return type() == Type::Uuid; }
    [[nodiscard]] bool is_date() const { return type() == Type::Date; }
    [[nodiscard]] bool is_uri() const { return type() == Type::Uri; }
    [[nodiscard]] bool is_binary() const { return type() == Type::Binary; }
    [[nodiscard]] bool is_array() const { return type() == Type::Array; }
    [[nodiscard]] bool is_map() const { return type() == Type::Map; }

    /// Typed pointers: the value when it has that type, nullptr otherwise. No conversion.
    [[nodiscard]] const bool* if_boolean() const { return std::get_if<bool>(&v_); }
    [[nodiscard]] const std::int32_t* if_integer() const { return std::get_if<std::int32_t>(&v_); }
    [[nodiscard]] const double* if_real() const { return std::get_if<double>(&v_); }
    [[nodiscard]] const std::string* if_string() const { return std::get_if<std::string>(&v_); }
    [[nodiscard]] const slanim::Uuid* if_uuid() const { return std::get_if<slanim::Uuid>(&v_); }
    [[nodiscard]] const LlsdDate* if_date() const { return std::get_if<LlsdDate>(&v_); }
    [[nodiscard]] const LlsdUri* if_uri() const { return std::get_if<LlsdUri>(&v_); }
    [[nodiscard]] const LlsdBinary* if_binary() const { return std::get_if<LlsdBinary>(&v_); }
    [[nodiscard]] const Array* if_array() const {
        const auto* b = std::get_if<detail::LlsdBox<Array>>(&v_);
        return b ? &b->get() : nullptr;
    }
    [[nodiscard]] const Map* if_map() const {
        const auto* b = std::get_if<detail::LlsdBox<Map>>(&v_);
        return b ? &b->get() : nullptr;
    }
    [[nodiscard]] Array* if_array() {
        auto* b = std::get_if<detail::LlsdBox<Array>>(&v_);
        return b ? &b->get() : nullptr;
    }
    [[nodiscard]] Map* if_map() {
        auto* b = std::get_if<detail::LlsdBox<Map>>(&v_);
        return b ? &b->get() : nullptr;
    }

    /// Checked accessors. Precondition: the value has that type (else std::bad_variant_access).
    [[nodiscard]] bool as_boolean() const { return std::get<bool>(v_); }
    [[nodiscard]] std::int32_t as_integer() const { return std::get<std::int32_t>(v_); }
    [[nodiscard]] double as_real() const { return std::get<double>(v_); }
    [[nodiscard]] const std::string& as_string() const { return std::get<std::string>(v_); }
    [[nodiscard]] const slanim::Uuid& as_uuid() const { return std::get<slanim::Uuid>(v_); }
    [[nodiscard]] const LlsdDate& as_date() const { return std::get<LlsdDate>(v_); }
    [[nodiscard]] const LlsdUri& as_uri() const { return std::get<LlsdUri>(v_); }
    [[nodiscard]] const LlsdBinary& as_binary() const { return std::get<LlsdBinary>(v_); }
    [[nodiscard]] const Array& as_array() const { return std::get<detail::LlsdBox<Array>>(v_).get(); }
    [[nodiscard]] const Map& as_map() const { return std::get<detail::LlsdBox<Map>>(v_).get(); }
    [[nodiscard]] Array& as_array() { return std::get<detail::LlsdBox<Array>>(v_).get(); }
    [[nodiscard]] Map& as_map() { return std::get<detail::LlsdBox<Map>>(v_).get(); }

    /// An integer or real as a double; nullopt for every other type (no string parsing).
    [[nodiscard]] std::optional<double> to_number() const;

    /// Map lookup: the value under `key`, or nullptr when this is not a map or has no such key.
    [[nodiscard]] const Llsd* find(std::string_view key) const;
    /// Array element: nullptr when this is not an array or `index` is out of range.
    [[nodiscard]] const Llsd* at(std::size_t index) const;
    /// Elements of an array or entries of a map; 0 for every other type.
    [[nodiscard]] std::size_t size() const;

    /// Inserts or replaces `key` in a map. An undefined value first becomes an empty map.
    /// Precondition: this is a map or undefined (else std::bad_variant_access).
    Llsd& set(std::string key, Llsd value);
    /// Appends to an array. An undefined value first becomes an empty array.
    /// Precondition: this is an array or undefined (else std::bad_variant_access).
    Llsd& append(Llsd value);

    friend bool operator==(const Llsd&, const Llsd&) = default;

private:
    std::variant<std::monostate, bool, std::int32_t, double, std::string, slanim::Uuid, LlsdDate,
                 LlsdUri, LlsdBinary, detail::LlsdBox<Array>, detail::LlsdBox<Map>>
        v_;
};

/// The type's LLSD name: "undefined", "boolean", "integer", "real", "string", "uuid", "date",
/// "uri", "binary", "array", "map".
std::string_view llsd_type_name(Llsd::Type t);

/// Parses LLSD XML (llsdserialize_xml.cpp: LLSDXMLParser), with pugixml.
///
/// The document's root element is `<llsd>`, holding one value element or nothing (undefined);
/// an optional XML declaration, comments and whitespace around elements are ignored. Elements:
///  * `<undef/>`; `<boolean>` with `1`, `0`, `true`, `false` or nothing (false);
///  * `<integer>`: an optional sign and decimal digits within the 32-bit range, or nothing (0);
///  * `<real>`: a decimal number (std::from_chars, any magnitude a double holds), `nan`, `inf`,
///    `-inf`, or nothing (0);
///  * `<string>`: the text exactly, whitespace included (entity and character references
///    decoded, CR LF read as LF); `<uri>` likewise;
///  * `<uuid>`: the 36-character form or nothing (the null UUID);
///  * `<date>`: ISO-8601 as LlsdDate::parse, or nothing (the epoch);
///  * `<binary>` with no `encoding` attribute or `encoding="base64"`: base64 with optional
///    padding, whitespace between characters ignored; other encodings are rejected;
///  * `<array>` of value elements; `<map>` of `<key>name</key>` value pairs (a `<key>` must be
///    followed by a value; a key may appear once).
/// Numbers may be surrounded by whitespace. Text inside a container, unknown elements,
/// attributes other than `encoding` on `<binary>` (ignored elsewhere), nesting deeper than
/// kLlsdMaxDepth, malformed XML: errors with Error::line set and a message
/// "line L, column C: <what> at <path>", where path names the element, e.g.
/// "/llsd/map['mHead']/array[2]/real" (array indices from 0).
Result<Llsd> parse_llsd_xml(std::string_view xml);

/// How format_llsd_xml lays out the document.
enum class LlsdXmlStyle : std::uint8_t {
    Compact,  ///< `<?xml …?>`, then the whole `<llsd>` element on one line.
    Pretty,   ///< One element per line, nested elements indented by two spaces.
};

/// Writes LLSD XML: `<?xml version="1.0" encoding="UTF-8"?>`, a line break, `<llsd>…</llsd>`
/// and a final line break. Undefined is `<undef />`; booleans `true`/`false`; reals the
/// shortest text that reads back to the same double (`nan`, `inf`, `-inf`); dates as
/// LlsdDate::str; binary as base64 with padding; `&`, `<`, `>` escaped, CR and other control
/// bytes below 0x20 except TAB and LF as character references (`&#13;`) so that the text reads
/// back unchanged. parse_llsd_xml(format_llsd_xml(v)) == v for every value whose strings hold
/// no NUL byte (XML cannot carry one) and whose dates read back from LlsdDate::str (see
/// there).
std::string format_llsd_xml(const Llsd& v, LlsdXmlStyle style = LlsdXmlStyle::Compact);

/// Parses LLSD notation (llsdserialize.cpp: LLSDNotationParser), the text form LEAP uses.
///
/// Values (whitespace — space, TAB, CR, LF — is allowed before and after every value and around
/// `,` and `:`):
///  * `!` undefined;
///  * booleans `1` `0` `t` `f` `T` `F` `true` `false` `TRUE` `FALSE`;
///  * `i` then an optional sign and decimal digits within the 32-bit range (`i-3`);
///  * `r` then a decimal number (`r1.5`, `r-2e3`, `r.5`), or `rnan`, `rinf`, `r-inf`;
///  * strings: `'…'` or `"…"` with the escapes `\a \b \f \n \r \t \v \\ \' \"` and `\xHH`;
///    any other escaped character stands for itself (`\q` is `q`), like the viewer; or
///    `s(N)"…"` / `s(N)'…'`: exactly N raw bytes between the quotes;
///  * `u` then the 36-character UUID; `d"…"` a date as LlsdDate::parse (quoted like a string);
///    `l"…"` a URI (quoted like a string);
///  * binary `b64"…"` (base64, padding optional), `b16"…"` (hex digits, either case, even
///    count), `b(N)"…"` (exactly N raw bytes);
///  * `[v,v,…]` arrays, `{k:v,k:v,…}` maps whose keys are quoted strings or `s(N)"…"` and
///    appear once. No trailing comma.
/// Exactly one value, then only whitespace. Errors have Error::offset set to the byte offset of
/// the problem and a message naming what was expected and what was found, e.g.
/// "expected ',' or '}' in a map, found 'x'".
Result<Llsd> parse_llsd_notation(std::string_view text);

/// Writes compact LLSD notation (no whitespace): `!`, `true`/`false`, `i42`, `r` with the
/// shortest text that reads back to the same double (`rnan`, `rinf`, `r-inf`), strings and map
/// keys in single quotes (`\\`, `\'`, `\n`, `\r`, `\t` and `\xHH` for other bytes below 0x20
/// and 0x7F escaped; other bytes, UTF-8 included, raw), `u` + UUID, `d"…"`, `l"…"`, `b64"…"`,
/// `[…]`, `{…}`. parse_llsd_notation(format_llsd_notation(v)) == v for every value whose
/// dates read back from LlsdDate::str (see format_llsd_xml).
std::string format_llsd_notation(const Llsd& v);

/// Base64 (RFC 4648, standard alphabet, with padding).
std::string base64_encode(std::span<const std::uint8_t> bytes);

}  // namespace slanim

// SPDX-License-Identifier: MIT
// LLSD value, XML (pugixml) and notation serializations. See llsd.hpp for the accepted forms.
#include "slanim/formats/io.hpp"
#include "slanim/formats/llsd.hpp"

#include <fmt/format.h>
#include <pugixml.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>
#include <utility>

namespace slanim {

namespace {

// ---- small text helpers ---------------------------------------------------------------------

constexpr bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

std::string_view trim_ws(std::string_view s) {
    while (!s.empty() && is_ws(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
    return s;
}

// A short, printable rendering of input text for messages: at most 24 bytes, control and
// non-ASCII bytes as \xNN.
std::string shown(std::string_view s) { return quote_for_message(s, 24); }

// Strict decimal 32-bit integer: optional sign, then digits only.
bool parse_int32(std::string_view s, std::int32_t& out) {
    if (s.empty()) return false;
    std::size_t i = (s[0] == '+' || s[0] == '-') ? 1 : 0;
    if (i == s.size()) return false;
    for (std::size_t k = i; k < s.size(); ++k)
        if (!is_digit(s[k])) return false;
    if (s[0] == '+') s.remove_prefix(1);
    long long v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return false;
    if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
        return false;
    out = static_cast<std::int32_t>(v);
    return true;
}

// Strict real: `nan`, `inf`, `-inf`, or [sign] digits [. digits] [e [sign] digits] with at
// least one digit in the mantissa. Values beyond the double range are rejected.
bool parse_real(std::string_view s, double& out) {
    if (s == "nan") { out = std::numeric_limits<double>::quiet_NaN(); return true; }
    if (s == "inf") { out = std::numeric_limits<double>::infinity(); return true; }
    if (s == "-inf") { out = -std::numeric_limits<double>::infinity(); return true; }
    std::size_t i = 0;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t mant_digits = 0;
    while (i < s.size() && is_digit(s[i])) { ++i; ++mant_digits; }
    if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && is_digit(s[i])) { ++i; ++mant_digits; }
    }
    if (mant_digits == 0) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
        std::size_t exp_digits = 0;
        while (i < s.size() && is_digit(s[i])) { ++i; ++exp_digits; }
        if (exp_digits == 0) return false;
    }
    if (i != s.size()) return false;
    if (s[0] == '+') s.remove_prefix(1);
    double v = 0.0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
    if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v)) return false;
    out = v;
    return true;
}

std::string format_real(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

// ---- base64 / base16 ------------------------------------------------------------------------

constexpr std::string_view kB64 =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int b64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

// Decodes base64 (whitespace ignored, padding optional but only at the end). On failure
// returns the index in `s` of the offending byte and a reason.
bool b64_decode(std::string_view s, LlsdBinary& out, std::size_t& bad, std::string& why) {
    out.clear();
    std::uint32_t acc = 0;
    int bits = 0;
    std::size_t data_chars = 0, pad = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (is_ws(c)) continue;
        if (c == '=') {
            ++pad;
            if (pad > 2) { bad = i; why = "too much base64 padding"; return false; }
            continue;
        }
        const int v = b64_value(c);
        if (v < 0) { bad = i; why = "invalid base64 character " + shown(s.substr(i, 1)); return false; }
        if (pad > 0) { bad = i; why = "base64 data after the padding"; return false; }
        ++data_chars;
        acc = (acc << 6) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<std::uint8_t>((acc >> bits) & 0xFFu));
        }
    }
    if (data_chars % 4 == 1) { bad = s.size(); why = "truncated base64 (a lone final character)"; return false; }
    if (pad > 0 && (data_chars + pad) % 4 != 0) { bad = s.size(); why = "wrong base64 padding"; return false; }
    return true;
}

bool b16_decode(std::string_view s, LlsdBinary& out, std::size_t& bad, std::string& why) {
    out.clear();
    int hi = -1;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const int v = hex_value(s[i]);
        if (v < 0) { bad = i; why = "invalid hexadecimal digit " + shown(s.substr(i, 1)); return false; }
        if (hi < 0) {
            hi = v;
        } else {
            out.push_back(static_cast<std::uint8_t>(hi * 16 + v));
            hi = -1;
        }
    }
    if (hi >= 0) { bad = s.size(); why = "odd number of hexadecimal digits"; return false; }
    return true;
}

// ---- dates ----------------------------------------------------------------------------------

// Days since 1970-01-01 of a proleptic Gregorian date (the usual era-based civil algorithm).
long long days_from_civil(long long y, unsigned m, unsigned d) {
    y -= m <= 2 ? 1 : 0;
    const long long era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned mp = m > 2 ? m - 3 : m + 9;
    const unsigned doy = (153 * mp + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<long long>(doe) - 719468;
}

void civil_from_days(long long z, long long& y, unsigned& m, unsigned& d) {
    z += 719468;
    const long long era = (z >= 0 ? z : z - 146096) / 146097;
    const auto doe = static_cast<unsigned>(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    y = static_cast<long long>(yoe) + era * 400;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    d = doy - (153 * mp + 2) / 5 + 1;
    m = mp < 10 ? mp + 3 : mp - 9;
    y += m <= 2 ? 1 : 0;
}

bool is_leap(long long y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(long long y, unsigned m) {
    static constexpr unsigned kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

constexpr double kMinDateSeconds = -62135596800.0;   // 0001-01-01T00:00:00Z
constexpr double kMaxDateSeconds = 253402300800.0;   // 10000-01-01T00:00:00Z (exclusive)

bool fixed_digits(std::string_view s, std::size_t pos, std::size_t n, unsigned& out) {
    if (pos + n > s.size()) return false;
    out = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
        if (!is_digit(s[i])) return false;
        out = out * 10 + static_cast<unsigned>(s[i] - '0');
    }
    return true;
}

// ---- XML formatting -------------------------------------------------------------------------

void xml_escape(std::string& out, std::string_view s) {
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            default:
                if ((c < 0x20 && ch != '\t' && ch != '\n') || c == 0x7F)
                    out += fmt::format("&#{};", static_cast<unsigned>(c));
                else
                    out += ch;
        }
    }
}

class XmlWriter {
public:
    explicit XmlWriter(bool pretty) : pretty_(pretty) {}

    std::string run(const Llsd& v) {
        out_ = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<llsd>";
        write(v, 1);
        newline(0);
        out_ += "</llsd>\n";
        return std::move(out_);
    }

private:
    bool pretty_;
    std::string out_;

    void newline(int depth) {
        if (!pretty_) return;
        out_ += '\n';
        out_.append(static_cast<std::size_t>(depth) * 2, ' ');
    }
    void element(std::string_view name, std::string_view text) {
        out_ += '<';
        out_ += name;
        out_ += '>';
        xml_escape(out_, text);
        out_ += "</";
        out_ += name;
        out_ += '>';
    }

    void write(const Llsd& v, int depth) {
        newline(depth);
        switch (v.type()) {
            case Llsd::Type::Undefined: out_ += "<undef />"; break;
            case Llsd::Type::Boolean: element("boolean", v.as_boolean() ? "true" : "false"); break;
            case Llsd::Type::Integer: element("integer", std::to_string(v.as_integer())); break;
            case Llsd::Type::Real: element("real", format_real(v.as_real())); break;
            case Llsd::Type::String: element("string", v.as_string()); break;
            case Llsd::Type::Uuid: element("uuid", v.as_uuid().str()); break;
            case Llsd::Type::Date: element("date", v.as_date().str()); break;
            case Llsd::Type::Uri: element("uri", v.as_uri().text); break;
            case Llsd::Type::Binary:
                out_ += "<binary encoding=\"base64\">";
                out_ += base64_encode(v.as_binary());
                out_ += "</binary>";
                break;
            case Llsd::Type::Array:
                if (v.as_array().empty()) { out_ += "<array />"; break; }
                out_ += "<array>";
                for (const Llsd& e : v.as_array()) write(e, depth + 1);
                newline(depth);
                out_ += "</array>";
                break;
            case Llsd::Type::Map:
                if (v.as_map().empty()) { out_ += "<map />"; break; }
                out_ += "<map>";
                for (const auto& [k, e] : v.as_map()) {
                    newline(depth + 1);
                    element("key", k);
                    write(e, depth + 1);
                }
                newline(depth);
                out_ += "</map>";
                break;
        }
    }
};

// ---- XML parsing ----------------------------------------------------------------------------

class XmlParser {
public:
    explicit XmlParser(std::string_view text) : text_(text) {}

    Result<Llsd> run() {
        const pugi::xml_parse_result res = doc_.load_buffer(
            text_.data(), text_.size(), pugi::parse_default | pugi::parse_ws_pcdata_single,
            pugi::encoding_utf8);
        if (!res) {
            fail_at(res.offset, std::string("malformed XML: ") + res.description());
            return err_;
        }
        const pugi::xml_node root = doc_.document_element();
        if (!root) {
            fail_at(0, "no <llsd> root element");
            return err_;
        }
        if (std::string_view(root.name()) != "llsd") {
            fail_at(root.offset_debug(), "the root element is <" + std::string(root.name()) +
                                             ">, expected <llsd>");
            return err_;
        }
        path_ = "/llsd";
        pugi::xml_node value;
        for (pugi::xml_node c = root.first_child(); c; c = c.next_sibling()) {
            if (!check_container_child(c, "<llsd>")) return err_;
            if (c.type() != pugi::node_element) continue;
            if (value) {
                fail_at(c.offset_debug(), "a second value in <llsd> at " + path_);
                return err_;
            }
            value = c;
        }
        if (!value) return Llsd{};
        Llsd out;
        if (!parse_value(value, 0, out)) return err_;
        return out;
    }

private:
    std::string_view text_;
    pugi::xml_document doc_;
    std::string path_;
    Error err_;

    bool fail_at(std::ptrdiff_t offset, const std::string& what) {
        if (offset < 0) offset = 0;
        const auto end = std::min(static_cast<std::size_t>(offset), text_.size());
        long long line = 1;
        std::size_t line_start = 0;
        for (std::size_t i = 0; i < end; ++i)
            if (text_[i] == '\n') { ++line; line_start = i + 1; }
        const std::size_t col = end - line_start + 1;
        err_ = Error{fmt::format("line {}, column {}: {}", line, col, what), -1, line};
        return false;
    }
    bool fail_node(const pugi::xml_node& n, const std::string& what) {
        return fail_at(n.offset_debug(), what + " at " + path_);
    }

    // Whitespace-only text, comments and processing instructions may sit between values.
    bool check_container_child(const pugi::xml_node& c, std::string_view container) {
        if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) {
            if (!trim_ws(c.value()).empty())
                return fail_at(c.offset_debug(), "unexpected text " + shown(trim_ws(c.value())) +
                                                     " in " + std::string(container) + " at " + path_);
        }
        return true;
    }

    // The text of a scalar element: its text and CDATA children concatenated.
    bool scalar_text(const pugi::xml_node& n, std::string& out) {
        out.clear();
        for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
            if (c.type() == pugi::node_element)
                return fail_at(c.offset_debug(), "unexpected element <" + std::string(c.name()) +
                                                     "> inside <" + n.name() + "> at " + path_);
            if (c.type() == pugi::node_pcdata || c.type() == pugi::node_cdata) out += c.value();
        }
        return true;
    }

    bool parse_value(const pugi::xml_node& n, int depth, Llsd& out) {
        const std::string_view name = n.name();
        const std::size_t path_len = path_.size();
        path_ += '/';
        path_ += name;
        const bool ok = parse_element(n, name, depth, out);
        if (ok) path_.resize(path_len);
        return ok;
    }

    bool parse_element(const pugi::xml_node& n, std::string_view name, int depth, Llsd& out) {
        if (name == "array" || name == "map") {
            if (depth + 1 > kLlsdMaxDepth)
                return fail_node(n, fmt::format("nesting deeper than {} levels", kLlsdMaxDepth));
            return name == "array" ? parse_array(n, depth + 1, out) : parse_map(n, depth + 1, out);
        }
        std::string text;
        if (!scalar_text(n, text)) return false;
        const std::string_view t = trim_ws(text);
        if (name == "undef") {
            if (!t.empty()) return fail_node(n, "<undef> holds text " + shown(t));
            out = Llsd{};
        } else if (name == "boolean") {
            if (t == "1" || t == "true") out = true;
            else if (t.empty() || t == "0" || t == "false") out = false;
            else return fail_node(n, "expected 1, 0, true or false in <boolean>, found " + shown(t));
        } else if (name == "integer") {
            std::int32_t v = 0;
            if (!t.empty() && !parse_int32(t, v))
                return fail_node(n, "expected a 32-bit decimal integer in <integer>, found " + shown(t));
            out = v;
        } else if (name == "real") {
            double v = 0.0;
            if (!t.empty() && !parse_real(t, v))
                return fail_node(n, "expected a decimal number, nan, inf or -inf in <real>, found " +
                                        shown(t));
            out = v;
        } else if (name == "string") {
            out = std::move(text);
        } else if (name == "uri") {
            out = LlsdUri{std::move(text)};
        } else if (name == "uuid") {
            if (t.empty()) {
                out = Uuid{};
            } else {
                const auto u = Uuid::parse(t);
                if (!u) return fail_node(n, "expected a UUID (8-4-4-4-12 hexadecimal digits) in <uuid>, found " + shown(t));
                out = *u;
            }
        } else if (name == "date") {
            if (t.empty()) {
                out = LlsdDate{};
            } else {
                const auto d = LlsdDate::parse(t);
                if (!d) return fail_node(n, "expected an ISO-8601 date YYYY-MM-DDTHH:MM:SS[.f]Z in <date>, found " + shown(t));
                out = *d;
            }
        } else if (name == "binary") {
            const pugi::xml_attribute enc = n.attribute("encoding");
            if (enc && std::string_view(enc.value()) != "base64")
                return fail_node(n, "unsupported binary encoding " + shown(enc.value()) +
                                        " (only base64)");
            LlsdBinary bytes;
            std::size_t bad = 0;
            std::string why;
            if (!b64_decode(text, bytes, bad, why)) return fail_node(n, why + " in <binary>");
            out = std::move(bytes);
        } else {
            return fail_node(n, "unknown LLSD element <" + std::string(name) + ">");
        }
        return true;
    }

    bool parse_array(const pugi::xml_node& n, int depth, Llsd& out) {
        Llsd::Array arr;
        const std::size_t base = path_.size();
        for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
            if (!check_container_child(c, "<array>")) return false;
            if (c.type() != pugi::node_element) continue;
            path_ += fmt::format("[{}]", arr.size());
            Llsd v;
            if (!parse_value(c, depth, v)) return false;
            path_.resize(base);
            arr.push_back(std::move(v));
        }
        out = std::move(arr);
        return true;
    }

    bool parse_map(const pugi::xml_node& n, int depth, Llsd& out) {
        Llsd::Map map;
        const std::size_t base = path_.size();
        pugi::xml_node key_node;
        std::string key;
        for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling()) {
            if (!check_container_child(c, "<map>")) return false;
            if (c.type() != pugi::node_element) continue;
            if (!key_node) {
                if (std::string_view(c.name()) != "key")
                    return fail_at(c.offset_debug(), "expected <key> in <map>, found <" +
                                                         std::string(c.name()) + "> at " + path_);
                path_ += "/key";
                if (!scalar_text(c, key)) return false;
                path_.resize(base);
                if (map.find(key) != map.end())
                    return fail_at(c.offset_debug(), "repeated key " + shown(key) + " in <map> at " + path_);
                key_node = c;
                continue;
            }
            path_ += "[" + shown(key) + "]";
            Llsd v;
            if (!parse_value(c, depth, v)) return false;
            path_.resize(base);
            map.emplace(std::move(key), std::move(v));
            key.clear();
            key_node = pugi::xml_node();
        }
        if (key_node)
            return fail_at(key_node.offset_debug(), "<key> " + shown(key) +
                                                        " without a value in <map> at " + path_);
        out = std::move(map);
        return true;
    }
};

// ---- notation formatting --------------------------------------------------------------------

void notation_quoted(std::string& out, std::string_view s, char quote) {
    out += quote;
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (ch == quote || ch == '\\') {
            out += '\\';
            out += ch;
        } else if (ch == '\n') {
            out += "\\n";
        } else if (ch == '\r') {
            out += "\\r";
        } else if (ch == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7F) {
            out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
        } else {
            out += ch;
        }
    }
    out += quote;
}

void notation_write(std::string& out, const Llsd& v) {
    switch (v.type()) {
        case Llsd::Type::Undefined: out += '!'; break;
        case Llsd::Type::Boolean: out += v.as_boolean() ? "true" : "false"; break;
        case Llsd::Type::Integer: out += 'i'; out += std::to_string(v.as_integer()); break;
        case Llsd::Type::Real: out += 'r'; out += format_real(v.as_real()); break;
        case Llsd::Type::String: notation_quoted(out, v.as_string(), '\''); break;
        case Llsd::Type::Uuid: out += 'u'; out += v.as_uuid().str(); break;
        case Llsd::Type::Date: out += 'd'; notation_quoted(out, v.as_date().str(), '"'); break;
        case Llsd::Type::Uri: out += 'l'; notation_quoted(out, v.as_uri().text, '"'); break;
        case Llsd::Type::Binary:
            out += "b64\"";
            out += base64_encode(v.as_binary());
            out += '"';
            break;
        case Llsd::Type::Array: {
            out += '[';
            bool first = true;
            for (const Llsd& e : v.as_array()) {
                if (!first) out += ',';
                first = false;
                notation_write(out, e);
            }
            out += ']';
            break;
        }
        case Llsd::Type::Map: {
            out += '{';
            bool first = true;
            for (const auto& [k, e] : v.as_map()) {
                if (!first) out += ',';
                first = false;
                notation_quoted(out, k, '\'');
                out += ':';
                notation_write(out, e);
            }
            out += '}';
            break;
        }
    }
}

// ---- notation parsing -----------------------------------------------------------------------

class NotationParser {
public:
    explicit NotationParser(std::string_view text) : s_(text) {}

    Result<Llsd> run() {
        Llsd v;
        skip_ws();
        if (!parse_value(v, 0)) return err_;
        skip_ws();
        if (p_ < s_.size()) {
            fail(p_, "expected the end of the input after the value, found " + found());
            return err_;
        }
        return v;
    }

private:
    std::string_view s_;
    std::size_t p_ = 0;
    Error err_;

    bool fail(std::size_t at, const std::string& what) {
        err_ = Error{what, static_cast<long long>(at), -1};
        return false;
    }
    [[nodiscard]] std::string found() const {
        return p_ < s_.size() ? shown(s_.substr(p_, 1)) : std::string("the end of the input");
    }
    void skip_ws() {
        while (p_ < s_.size() && is_ws(s_[p_])) ++p_;
    }
    bool starts(std::string_view lit) const { return s_.substr(p_, lit.size()) == lit; }

    // A quoted string at p_ (' or "), escapes decoded. p_ ends after the closing quote.
    bool parse_delimited(std::string& out, const char* what) {
        if (p_ >= s_.size() || (s_[p_] != '\'' && s_[p_] != '"'))
            return fail(p_, std::string("expected a quote starting ") + what + ", found " + found());
        const char q = s_[p_];
        const std::size_t start = p_;
        ++p_;
        out.clear();
        while (true) {
            if (p_ >= s_.size())
                return fail(start, std::string("unterminated ") + what + " (no closing " +
                                       (q == '"' ? "\"" : "'") + ")");
            const char c = s_[p_++];
            if (c == q) return true;
            if (c != '\\') {
                out += c;
                continue;
            }
            if (p_ >= s_.size())
                return fail(start, std::string("unterminated ") + what + " (ends in a backslash)");
            const char e = s_[p_++];
            switch (e) {
                case 'a': out += '\a'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'v': out += '\v'; break;
                case 'x': {
                    const int hi = p_ < s_.size() ? hex_value(s_[p_]) : -1;
                    const int lo = p_ + 1 < s_.size() ? hex_value(s_[p_ + 1]) : -1;
                    if (hi < 0 || lo < 0)
                        return fail(p_ - 2, "expected two hexadecimal digits after \\x");
                    out += static_cast<char>(hi * 16 + lo);
                    p_ += 2;
                    break;
                }
                default: out += e; break;  // \\ \' \" and any other character: itself
            }
        }
    }

    // `(N)` then a quote, N raw bytes, the same quote. p_ is at '(', after the prefix letter.
    bool parse_sized_raw(std::string_view& out, const char* what) {
        const std::size_t start = p_ - 1;  // the 's' or 'b' prefix
        if (p_ >= s_.size() || s_[p_] != '(')
            return fail(p_, std::string("expected '(' after the ") + what + " prefix, found " + found());
        ++p_;
        const std::size_t digits = p_;
        while (p_ < s_.size() && is_digit(s_[p_])) ++p_;
        if (p_ == digits) return fail(p_, std::string("expected the byte count of a sized ") + what + ", found " + found());
        std::size_t n = 0;
        const auto r = std::from_chars(s_.data() + digits, s_.data() + p_, n);
        if (r.ec != std::errc() || r.ptr != s_.data() + p_)
            return fail(digits, std::string("byte count of a sized ") + what + " out of range");
        if (p_ >= s_.size() || s_[p_] != ')')
            return fail(p_, std::string("expected ')' after the byte count, found ") + found());
        ++p_;
        if (p_ >= s_.size() || (s_[p_] != '"' && s_[p_] != '\''))
            return fail(p_, std::string("expected a quote after the byte count, found ") + found());
        const char q = s_[p_++];
        if (n > s_.size() - p_ || s_.size() - p_ - n < 1)
            return fail(start, fmt::format("sized {} of {} bytes runs past the end of the input "
                                           "({} bytes left)", what, n, s_.size() - p_));
        out = s_.substr(p_, n);
        p_ += n;
        if (s_[p_] != q)
            return fail(p_, fmt::format("expected the closing quote of a sized {} after {} bytes, found {}",
                                        what, n, found()));
        ++p_;
        return true;
    }

    bool parse_string_value(std::string& out) {
        if (p_ < s_.size() && s_[p_] == 's') {
            ++p_;
            std::string_view raw;
            if (!parse_sized_raw(raw, "string")) return false;
            out.assign(raw);
            return true;
        }
        return parse_delimited(out, "a string");
    }

    bool parse_value(Llsd& out, int depth) {
        if (p_ >= s_.size()) return fail(p_, "expected a value, found the end of the input");
        const std::size_t start = p_;
        const char c = s_[p_];
        switch (c) {
            case '!': ++p_; out = Llsd{}; return true;
            case '1': ++p_; out = true; return true;
            case '0': ++p_; out = false; return true;
            case 't': ++p_; if (starts("rue")) p_ += 3; out = true; return true;
            case 'T': ++p_; if (starts("RUE")) p_ += 3; out = true; return true;
            case 'f': ++p_; if (starts("alse")) p_ += 4; out = false; return true;
            case 'F': ++p_; if (starts("ALSE")) p_ += 4; out = false; return true;
            case 'i': {
                ++p_;
                const std::size_t b = p_;
                if (p_ < s_.size() && (s_[p_] == '-' || s_[p_] == '+')) ++p_;
                while (p_ < s_.size() && is_digit(s_[p_])) ++p_;
                std::int32_t v = 0;
                if (!parse_int32(s_.substr(b, p_ - b), v))
                    return fail(b, "expected a 32-bit decimal integer after 'i', found " +
                                       shown(s_.substr(b, std::max<std::size_t>(p_ - b, 1))));
                out = v;
                return true;
            }
            case 'r': {
                ++p_;
                const std::size_t b = p_;
                if (starts("nan")) p_ += 3;
                else if (starts("inf")) p_ += 3;
                else if (starts("-inf")) p_ += 4;
                else
                    while (p_ < s_.size() && (is_digit(s_[p_]) || s_[p_] == '.' || s_[p_] == 'e' ||
                                              s_[p_] == 'E' || s_[p_] == '+' || s_[p_] == '-'))
                        ++p_;
                double v = 0.0;
                if (!parse_real(s_.substr(b, p_ - b), v))
                    return fail(b, "expected a decimal number, nan, inf or -inf after 'r', found " +
                                       shown(s_.substr(b, std::max<std::size_t>(p_ - b, 1))));
                out = v;
                return true;
            }
            case '\'':
            case '"':
            case 's': {
                std::string str;
                if (!parse_string_value(str)) return false;
                out = std::move(str);
                return true;
            }
            case 'u': {
                ++p_;
                const auto u = Uuid::parse(s_.substr(p_, 36));
                if (!u) return fail(p_, "expected a UUID (8-4-4-4-12 hexadecimal digits) after 'u'");
                p_ += 36;
                out = *u;
                return true;
            }
            case 'd': {
                ++p_;
                const std::size_t b = p_;
                std::string text;
                if (!parse_delimited(text, "a date")) return false;
                const auto d = LlsdDate::parse(text);
                if (!d) return fail(b, "expected an ISO-8601 date YYYY-MM-DDTHH:MM:SS[.f]Z, found " + shown(text));
                out = *d;
                return true;
            }
            case 'l': {
                ++p_;
                std::string text;
                if (!parse_delimited(text, "a URI")) return false;
                out = LlsdUri{std::move(text)};
                return true;
            }
            case 'b': return parse_binary(out);
            case '[': return parse_array(out, depth + 1);
            case '{': return parse_map(out, depth + 1);
            default:
                return fail(start, "expected a value (one of ! 0 1 t f i r ' \" s u d l b [ {), found " + found());
        }
    }

    bool parse_binary(Llsd& out) {
        const std::size_t start = p_;
        ++p_;  // 'b'
        if (p_ < s_.size() && s_[p_] == '(') {
            std::string_view raw;
            if (!parse_sized_raw(raw, "binary")) return false;
            out = LlsdBinary(raw.begin(), raw.end());
            return true;
        }
        const bool b64 = starts("64");
        const bool b16 = starts("16");
        if (!b64 && !b16) {
            if (starts("85")) return fail(start, "base85 binary (b85) is not supported");
            return fail(p_, "expected 64, 16 or '(' after 'b', found " + found());
        }
        p_ += 2;
        const std::size_t q = p_;
        if (p_ >= s_.size() || (s_[p_] != '"' && s_[p_] != '\''))
            return fail(p_, "expected a quote after the binary encoding, found " + found());
        const char quote = s_[p_];
        const std::size_t close = s_.find(quote, p_ + 1);
        if (close == std::string_view::npos) return fail(q, "unterminated binary (no closing quote)");
        const std::string_view body = s_.substr(p_ + 1, close - p_ - 1);
        LlsdBinary bytes;
        std::size_t bad = 0;
        std::string why;
        if (!(b64 ? b64_decode(body, bytes, bad, why) : b16_decode(body, bytes, bad, why)))
            return fail(p_ + 1 + bad, why);
        p_ = close + 1;
        out = std::move(bytes);
        return true;
    }

    bool parse_array(Llsd& out, int depth) {
        if (depth > kLlsdMaxDepth) return fail(p_, fmt::format("nesting deeper than {} levels", kLlsdMaxDepth));
        ++p_;  // '['
        Llsd::Array arr;
        skip_ws();
        if (p_ < s_.size() && s_[p_] == ']') {
            ++p_;
            out = std::move(arr);
            return true;
        }
        while (true) {
            skip_ws();
            Llsd v;
            if (!parse_value(v, depth)) return false;
            arr.push_back(std::move(v));
            skip_ws();
            if (p_ < s_.size() && s_[p_] == ',') { ++p_; continue; }
            if (p_ < s_.size() && s_[p_] == ']') { ++p_; break; }
            return fail(p_, "expected ',' or ']' in an array, found " + found());
        }
        out = std::move(arr);
        return true;
    }

    bool parse_map(Llsd& out, int depth) {
        if (depth > kLlsdMaxDepth) return fail(p_, fmt::format("nesting deeper than {} levels", kLlsdMaxDepth));
        ++p_;  // '{'
        Llsd::Map map;
        skip_ws();
        if (p_ < s_.size() && s_[p_] == '}') {
            ++p_;
            out = std::move(map);
            return true;
        }
        while (true) {
            skip_ws();
            const std::size_t key_at = p_;
            if (p_ >= s_.size() || (s_[p_] != '\'' && s_[p_] != '"' && s_[p_] != 's'))
                return fail(p_, "expected a quoted map key, found " + found());
            std::string key;
            if (!parse_string_value(key)) return false;
            if (map.find(key) != map.end()) return fail(key_at, "repeated map key " + shown(key));
            skip_ws();
            if (p_ >= s_.size() || s_[p_] != ':')
                return fail(p_, "expected ':' after the map key " + shown(key) + ", found " + found());
            ++p_;
            skip_ws();
            Llsd v;
            if (!parse_value(v, depth)) return false;
            map.emplace(std::move(key), std::move(v));
            skip_ws();
            if (p_ < s_.size() && s_[p_] == ',') { ++p_; continue; }
            if (p_ < s_.size() && s_[p_] == '}') { ++p_; break; }
            return fail(p_, "expected ',' or '}' in a map, found " + found());
        }
        out = std::move(map);
        return true;
    }
};

}  // namespace

// ---- Uuid / LlsdDate ------------------------------------------------------------------------

std::optional<Uuid> Uuid::parse(std::string_view text) {
    if (text.size() != 36) return std::nullopt;
    Uuid u;
    std::size_t b = 0;
    for (std::size_t i = 0; i < 36;) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (text[i] != '-') return std::nullopt;
            ++i;
            continue;
        }
        const int hi = hex_value(text[i]);
        const int lo = hex_value(text[i + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        u.bytes[b++] = static_cast<std::uint8_t>(hi * 16 + lo);
        i += 2;
    }
    return u;
}

std::string Uuid::str() const {
    std::string out;
    out.reserve(36);
    constexpr std::string_view kHex = "0123456789abcdef";
    for (std::size_t i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
        out += kHex[bytes[i] >> 4];
        out += kHex[bytes[i] & 15];
    }
    return out;
}

bool Uuid::is_null() const {
    return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

std::optional<LlsdDate> LlsdDate::parse(std::string_view s) {
    unsigned y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
    if (s.size() < 20 || !fixed_digits(s, 0, 4, y) || s[4] != '-' || !fixed_digits(s, 5, 2, mo) ||
        s[7] != '-' || !fixed_digits(s, 8, 2, d) || s[10] != 'T' || !fixed_digits(s, 11, 2, h) ||
        s[13] != ':' || !fixed_digits(s, 14, 2, mi) || s[16] != ':' || !fixed_digits(s, 17, 2, se))
        return std::nullopt;
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 60)
        return std::nullopt;
    std::size_t p = 19;
    double frac = 0.0;
    if (s[p] == '.') {
        const std::size_t b = p;
        ++p;
        while (p < s.size() && is_digit(s[p])) ++p;
        if (p == b + 1) return std::nullopt;
        const auto r = std::from_chars(s.data() + b, s.data() + p, frac, std::chars_format::fixed);
        if (r.ec != std::errc() || r.ptr != s.data() + p) return std::nullopt;
    }
    if (p + 1 != s.size() || s[p] != 'Z') return std::nullopt;
    const long long days = days_from_civil(y, mo, d);
    const long long whole = days * 86400 + static_cast<long long>(h) * 3600 + mi * 60LL + se;
    return LlsdDate{static_cast<double>(whole) + frac};
}

namespace {

// "YYYY-MM-DDTHH:MM:SS" of whole seconds since the epoch.
std::string date_whole_text(long long whole) {
    long long days = whole / 86400;
    long long rem = whole % 86400;
    if (rem < 0) {
        rem += 86400;
        --days;
    }
    long long y = 0;
    unsigned m = 0, d = 0;
    civil_from_days(days, y, m, d);
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", y, m, d, rem / 3600, (rem / 60) % 60,
                       rem % 60);
}

}  // namespace

std::string LlsdDate::str() const {
    double s = seconds;
    if (!std::isfinite(s) || s < kMinDateSeconds || s >= kMaxDateSeconds) s = 0.0;
    const double whole_d = std::floor(s);
    const auto whole = static_cast<long long>(whole_d);
    const double frac = s - whole_d;
    // The fraction to the microsecond when that reads back to the same double (every date
    // parsed from such a text before year 2242), else the shortest exact decimal fraction.
    const auto micros = static_cast<long long>(std::llround(frac * 1e6));
    if (micros < 1000000) {
        std::string out = date_whole_text(whole);
        if (micros > 0) {
            std::string f = fmt::format("{:06}", micros);
            while (f.back() == '0') f.pop_back();
            out += '.';
            out += f;
        }
        out += 'Z';
        if (const auto back = parse(out); back && back->seconds == s) return out;
    }
    std::string out = date_whole_text(whole);
    if (frac > 0.0) {
        char buf[64];
        const auto r = std::to_chars(buf, buf + sizeof buf, frac, std::chars_format::fixed);
        const std::string_view digits(buf, static_cast<std::size_t>(r.ptr - buf));  // "0.xxx"
        out += digits.substr(1);
    }
    out += 'Z';
    return out;
}

// ---- Llsd -----------------------------------------------------------------------------------

std::optional<double> Llsd::to_number() const {
    if (const auto* i = if_integer()) return static_cast<double>(*i);
    if (const auto* r = if_real()) return *r;
    return std::nullopt;
}

const Llsd* Llsd::find(std::string_view key) const {
    const Map* m = if_map();
    if (m == nullptr) return nullptr;
    const auto it = m->find(key);
    return it == m->end() ? nullptr : &it->second;
}

const Llsd* Llsd::at(std::size_t index) const {
    const Array* a = if_array();
    if (a == nullptr || index >= a->size()) return nullptr;
    return &(*a)[index];
}

std::size_t Llsd::size() const {
    if (const Array* a = if_array()) return a->size();
    if (const Map* m = if_map()) return m->size();
    return 0;
}

Llsd& Llsd::set(std::string key, Llsd value) {
    if (is_undefined()) v_ = detail::LlsdBox<Map>(Map{});
    Map& m = as_map();
    m.insert_or_assign(std::move(key), std::move(value));
    return *this;
}

Llsd& Llsd::append(Llsd value) {
    if (is_undefined()) v_ = detail::LlsdBox<Array>(Array{});
    as_array().push_back(std::move(value));
    return *this;
}

std::string_view llsd_type_name(Llsd::Type t) {
    switch (t) {
        case Llsd::Type::Undefined: return "undefined";
        case Llsd::Type::Boolean: return "boolean";
        case Llsd::Type::Integer: return "integer";
        case Llsd::Type::Real: return "real";
        case Llsd::Type::String: return "string";
        case Llsd::Type::Uuid: return "uuid";
        case Llsd::Type::Date: return "date";
        case Llsd::Type::Uri: return "uri";
        case Llsd::Type::Binary: return "binary";
        case Llsd::Type::Array: return "array";
        case Llsd::Type::Map: return "map";
    }
    return "unknown";
}

// ---- entry points ---------------------------------------------------------------------------

std::string base64_encode(std::span<const std::uint8_t> bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        const std::uint32_t v = (static_cast<std::uint32_t>(bytes[i]) << 16) |
                                (static_cast<std::uint32_t>(bytes[i + 1]) << 8) | bytes[i + 2];
        out += kB64[(v >> 18) & 63];
        out += kB64[(v >> 12) & 63];
        out += kB64[(v >> 6) & 63];
        out += kB64[v & 63];
    }
    const std::size_t rest = bytes.size() - i;
    if (rest > 0) {
        std::uint32_t v = static_cast<std::uint32_t>(bytes[i]) << 16;
        if (rest == 2) v |= static_cast<std::uint32_t>(bytes[i + 1]) << 8;
        out += kB64[(v >> 18) & 63];
        out += kB64[(v >> 12) & 63];
        out += rest == 2 ? kB64[(v >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

Result<Llsd> parse_llsd_xml(std::string_view xml) { return XmlParser(xml).run(); }

std::string format_llsd_xml(const Llsd& v, LlsdXmlStyle style) {
    return XmlWriter(style == LlsdXmlStyle::Pretty).run(v);
}

Result<Llsd> parse_llsd_notation(std::string_view text) { return NotationParser(text).run(); }

std::string format_llsd_notation(const Llsd& v) {
    std::string out;
    notation_write(out, v);
    return out;
}

}  // namespace slanim

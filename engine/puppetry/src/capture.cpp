// SPDX-License-Identifier: MIT
// Webcam capture reader and LEAP `set` message conversion into PuppetryFrame (spec §9.4,
// llpuppetmodule.cpp). See slanim/puppetry/capture.hpp for the accepted forms.
#include "slanim/formats/io.hpp"
#include "slanim/puppetry/capture.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>
#include <utility>


namespace slanim {

namespace {

constexpr float kMaxImaginarySq = 1.0001f;
constexpr int kMaxLiteralDepth = 64;

constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string shown(std::string_view s) { return quote_for_message(s, 32); }

// ---- joint values (shared by captures and LEAP) -----------------------------------------------

enum class Source : std::uint8_t { Capture, LeapIk, LeapJointState };

// A 3-vector of finite numbers, or an error text.
std::optional<std::string> read_vec3(const Llsd& v, Vec3& out) {
    const Llsd::Array* a = v.if_array();
    if (a == nullptr || a->size() != 3) return std::string("expected an array of 3 finite numbers");
    float f[3];
    for (std::size_t i = 0; i < 3; ++i) {
        const std::optional<double> d = (*a)[i].to_number();
        if (!d || !std::isfinite(*d) || std::fabs(*d) > std::numeric_limits<float>::max())
            return std::string("expected an array of 3 finite numbers");
        f[i] = static_cast<float>(*d);
    }
    out = {f[0], f[1], f[2]};
    return std::nullopt;
}

std::optional<std::string> read_rotation(const Llsd& v, Quat& out) {
    Vec3 xyz;
    if (auto e = read_vec3(v, xyz)) return e;
    const float len_sq = dot(xyz, xyz);
    if (!(len_sq <= kMaxImaginarySq))
        return fmt::format("({}, {}, {}) is not the imaginary part of a unit quaternion "
                           "(|xyz|² = {} > 1)", xyz.x, xyz.y, xyz.z, len_sq);
    if (len_sq > 1.f) {
        const float len = std::sqrt(len_sq);
        out = {xyz.x / len, xyz.y / len, xyz.z / len, 0.f};
    } else {
        out = {xyz.x, xyz.y, xyz.z, std::sqrt(1.f - len_sq)};
    }
    return std::nullopt;
}

// Converts one joint's value map into 1 or 2 targets (a capture's pos goes to Root, the rest to
// Parent). On failure returns the message, prefixed by the offending key.
std::optional<std::string> read_joint(const std::string& joint, const Llsd& value, Source src,
                                      std::vector<PuppetryJointTarget>& out) {
    if (joint.empty()) return std::string("empty joint key");
    const Llsd::Map* m = value.if_map();
    if (m == nullptr)
        return fmt::format("expected a map of joint values, found {}", llsd_type_name(value.type()));
    const PuppetryRefFrame main =
        src == Source::LeapIk ? PuppetryRefFrame::Root : PuppetryRefFrame::Parent;
    PuppetryJointTarget parent{joint, main, {}, {}, {}, false};
    PuppetryJointTarget root{joint, PuppetryRefFrame::Root, {}, {}, {}, false};
    for (const auto& [key, v] : *m) {
        std::optional<std::string> e;
        if (key == "rotation" || key == "r" || (src == Source::Capture && key == "rot")) {
            Quat q;
            e = read_rotation(v, q);
            if (!e) parent.rotation = q;
        } else if (key == "position" || key == "p" || (src == Source::Capture && key == "pos")) {
            Vec3 p;
            e = read_vec3(v, p);
            if (!e) (src == Source::Capture ? root : parent).position = p;
        } else if ((key == "scale" || key == "s") && src != Source::LeapIk) {
            Vec3 s;
            e = read_vec3(v, s);
            if (!e) parent.scale = s;
        } else if (key == "disable_constraint" || key == "d") {
            const bool* b = v.if_boolean();
            parent.disable_constraint = b == nullptr || *b;
        } else {
            return fmt::format("unknown key {}", shown(key));
        }
        if (e) return shown(key) + ": " + *e;
    }
    const auto has = [](const PuppetryJointTarget& t) {
        return t.position || t.rotation || t.scale || t.disable_constraint;
    };
    // Keep the entries sorted by frame (Parent before Root), an entry only when it says something
    // (but one entry for an empty value map, so the joint is not silently dropped).
    if (has(parent) || !has(root)) out.push_back(std::move(parent));
    if (has(root)) out.push_back(std::move(root));
    return std::nullopt;
}

void sort_targets(std::vector<PuppetryJointTarget>& t) {
    std::stable_sort(t.begin(), t.end(), [](const PuppetryJointTarget& a, const PuppetryJointTarget& b) {
        if (a.joint != b.joint) return a.joint < b.joint;
        return a.frame < b.frame;
    });
}

// ---- Python literal reader (one line) -----------------------------------------------------------

class PyLiteral {
public:
    explicit PyLiteral(std::string_view line) : s_(line) {}

    /// Parses the whole line as one dict; `keys` receives each top-level key's 1-based column.
    bool parse_top(Llsd& out, std::vector<std::pair<std::string, std::size_t>>& keys) {
        skip_ws();
        if (p_ >= s_.size() || s_[p_] != '{') return fail(p_, "expected '{' starting a dict, found " + found());
        if (!parse_dict(out, 1, &keys)) return false;
        skip_ws();
        if (p_ < s_.size()) return fail(p_, "expected the end of the line after the dict, found " + found());
        return true;
    }
    [[nodiscard]] std::size_t error_column() const { return err_col_ + 1; }
    [[nodiscard]] const std::string& error() const { return err_; }

private:
    std::string_view s_;
    std::size_t p_ = 0;
    std::size_t err_col_ = 0;
    std::string err_;

    bool fail(std::size_t at, std::string what) {
        err_col_ = std::min(at, s_.size());
        err_ = std::move(what);
        return false;
    }
    [[nodiscard]] std::string found() const {
        return p_ < s_.size() ? shown(s_.substr(p_, 1)) : std::string("the end of the line");
    }
    void skip_ws() {
        while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t' || s_[p_] == '\r')) ++p_;
    }
    bool starts(std::string_view w) const { return s_.substr(p_, w.size()) == w; }

    bool parse_string(std::string& out) {
        const char q = s_[p_];
        const std::size_t start = p_++;
        out.clear();
        while (true) {
            if (p_ >= s_.size()) return fail(start, "unterminated string");
            const char c = s_[p_++];
            if (c == q) return true;
            if (c != '\\') {
                out += c;
                continue;
            }
            if (p_ >= s_.size()) return fail(start, "unterminated string (ends in a backslash)");
            const char e = s_[p_++];
            switch (e) {
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case '\\': case '\'': case '"': out += e; break;
                case 'x': {
                    unsigned v = 0;
                    const auto r = std::from_chars(s_.data() + p_, s_.data() + std::min(p_ + 2, s_.size()), v, 16);
                    if (r.ec != std::errc() || r.ptr != s_.data() + p_ + 2)
                        return fail(p_ - 2, "expected two hexadecimal digits after \\x");
                    out += static_cast<char>(v);
                    p_ += 2;
                    break;
                }
                default:  // Python keeps unknown escapes as written
                    out += '\\';
                    out += e;
            }
        }
    }

    bool parse_number(Llsd& out) {
        const std::size_t start = p_;
        if (p_ < s_.size() && (s_[p_] == '-' || s_[p_] == '+')) ++p_;
        if (starts("inf") || starts("nan")) {
            const bool nan = s_[p_] == 'n';
            p_ += 3;
            const bool neg = s_[start] == '-';
            out = nan ? std::numeric_limits<double>::quiet_NaN()
                      : (neg ? -1.0 : 1.0) * std::numeric_limits<double>::infinity();
            return true;
        }
        bool is_real = false;
        std::size_t digits = 0;
        while (p_ < s_.size() && is_digit(s_[p_])) { ++p_; ++digits; }
        if (p_ < s_.size() && s_[p_] == '.') {
            is_real = true;
            ++p_;
            while (p_ < s_.size() && is_digit(s_[p_])) { ++p_; ++digits; }
        }
        if (digits == 0) return fail(start, "expected a number, found " + shown(s_.substr(start, 1)));
        if (p_ < s_.size() && (s_[p_] == 'e' || s_[p_] == 'E')) {
            is_real = true;
            ++p_;
            if (p_ < s_.size() && (s_[p_] == '-' || s_[p_] == '+')) ++p_;
            const std::size_t e = p_;
            while (p_ < s_.size() && is_digit(s_[p_])) ++p_;
            if (p_ == e) return fail(start, "malformed exponent in number " + shown(s_.substr(start, p_ - start)));
        }
        std::string_view num = s_.substr(start, p_ - start);
        if (!num.empty() && num[0] == '+') num.remove_prefix(1);
        if (!is_real) {
            std::int32_t i = 0;
            const auto r = std::from_chars(num.data(), num.data() + num.size(), i);
            if (r.ec == std::errc() && r.ptr == num.data() + num.size()) {
                out = i;
                return true;
            }
        }
        double d = 0.0;
        const auto r = std::from_chars(num.data(), num.data() + num.size(), d);
        if (r.ec != std::errc() || r.ptr != num.data() + num.size())
            return fail(start, "number out of range: " + shown(num));
        out = d;
        return true;
    }

    bool parse_value(Llsd& out, int depth) {
        skip_ws();
        if (p_ >= s_.size()) return fail(p_, "expected a value, found the end of the line");
        const char c = s_[p_];
        if (c == '{') return parse_dict(out, depth + 1, nullptr);
        if (c == '[' || c == '(') return parse_list(out, depth + 1);
        if (c == '\'' || c == '"') {
            std::string str;
            if (!parse_string(str)) return false;
            out = std::move(str);
            return true;
        }
        if (starts("True")) { p_ += 4; out = true; return true; }
        if (starts("False")) { p_ += 5; out = false; return true; }
        if (starts("None")) { p_ += 4; out = Llsd{}; return true; }
        if (c == '-' || c == '+' || c == '.' || is_digit(c) || starts("inf") || starts("nan"))
            return parse_number(out);
        return fail(p_, "expected a value (dict, list, string, number, True, False or None), found " + found());
    }

    bool parse_list(Llsd& out, int depth) {
        if (depth > kMaxLiteralDepth) return fail(p_, fmt::format("nesting deeper than {} levels", kMaxLiteralDepth));
        const char close = s_[p_] == '[' ? ']' : ')';
        ++p_;
        Llsd::Array arr;
        while (true) {
            skip_ws();
            if (p_ < s_.size() && s_[p_] == close) { ++p_; break; }
            Llsd v;
            if (!parse_value(v, depth)) return false;
            arr.push_back(std::move(v));
            skip_ws();
            if (p_ < s_.size() && s_[p_] == ',') { ++p_; continue; }
            if (p_ < s_.size() && s_[p_] == close) { ++p_; break; }
            return fail(p_, fmt::format("expected ',' or '{}' in a list, found {}", close, found()));
        }
        out = std::move(arr);
        return true;
    }

    bool parse_dict(Llsd& out, int depth, std::vector<std::pair<std::string, std::size_t>>* keys) {
        if (depth > kMaxLiteralDepth) return fail(p_, fmt::format("nesting deeper than {} levels", kMaxLiteralDepth));
        ++p_;  // '{'
        Llsd::Map map;
        while (true) {
            skip_ws();
            if (p_ < s_.size() && s_[p_] == '}') { ++p_; break; }
            const std::size_t key_at = p_;
            if (p_ >= s_.size() || (s_[p_] != '\'' && s_[p_] != '"'))
                return fail(p_, "expected a string key in a dict, found " + found());
            std::string key;
            if (!parse_string(key)) return false;
            if (map.find(key) != map.end()) return fail(key_at, "repeated key " + shown(key));
            skip_ws();
            if (p_ >= s_.size() || s_[p_] != ':')
                return fail(p_, "expected ':' after the key " + shown(key) + ", found " + found());
            ++p_;
            Llsd v;
            if (!parse_value(v, depth)) return false;
            if (keys != nullptr) keys->emplace_back(key, key_at + 1);
            map.emplace(std::move(key), std::move(v));
            skip_ws();
            if (p_ < s_.size() && s_[p_] == ',') { ++p_; continue; }
            if (p_ < s_.size() && s_[p_] == '}') { ++p_; break; }
            return fail(p_, "expected ',' or '}' in a dict, found " + found());
        }
        out = std::move(map);
        return true;
    }
};

// "YYYY-MM-DD HH:MM:SS[.f][Z|+HH:MM|-HH:MM]" → seconds since the epoch.
std::optional<double> parse_capture_time(std::string_view s) {
    if (s.size() < 19 || (s[10] != ' ' && s[10] != 'T')) return std::nullopt;
    std::size_t p = 19;
    if (p < s.size() && s[p] == '.') {
        ++p;
        while (p < s.size() && is_digit(s[p])) ++p;
    }
    std::string iso(s.substr(0, p));
    iso[10] = 'T';
    iso += 'Z';
    const auto d = LlsdDate::parse(iso);
    if (!d) return std::nullopt;
    const std::string_view zone = s.substr(p);
    if (zone.empty() || zone == "Z") return d->seconds;
    if (zone.size() != 6 || (zone[0] != '+' && zone[0] != '-') || zone[3] != ':' ||
        !is_digit(zone[1]) || !is_digit(zone[2]) || !is_digit(zone[4]) || !is_digit(zone[5]))
        return std::nullopt;
    const int hh = (zone[1] - '0') * 10 + (zone[2] - '0');
    const int mm = (zone[4] - '0') * 10 + (zone[5] - '0');
    if (hh > 23 || mm > 59) return std::nullopt;
    const double offset = (hh * 3600 + mm * 60) * (zone[0] == '-' ? -1.0 : 1.0);
    return d->seconds - offset;
}

Error line_error(long long line, std::size_t col, const std::string& what) {
    return Error{fmt::format("line {}, column {}: {}", line, col, what), -1, line};
}

}  // namespace

const PuppetryJointTarget* PuppetryFrame::find(std::string_view joint, PuppetryRefFrame frame) const {
    for (const PuppetryJointTarget& t : joints)
        if (t.joint == joint && t.frame == frame) return &t;
    return nullptr;
}

Result<PuppetryCapture> parse_puppetry_capture(std::string_view text) {
    PuppetryCapture cap;
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    long long line_no = 0;
    double last_time = -std::numeric_limits<double>::infinity();
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t e = text.find('\n', pos);
        if (e == std::string_view::npos) e = text.size();
        std::string_view line = text.substr(pos, e - pos);
        pos = e + 1;
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;

        PyLiteral lit(line);
        Llsd dict;
        std::vector<std::pair<std::string, std::size_t>> keys;
        if (!lit.parse_top(dict, keys)) return line_error(line_no, lit.error_column(), lit.error());
        const auto col_of = [&](std::string_view key) -> std::size_t {
            for (const auto& [k, c] : keys)
                if (k == key) return c;
            return 1;
        };

        PuppetryFrame frame;
        const Llsd* time = dict.find("time");
        if (time == nullptr) return line_error(line_no, 1, "no 'time' entry");
        if (!time->is_string())
            return line_error(line_no, col_of("time"), "'time' must be a string");
        const auto t = parse_capture_time(time->as_string());
        if (!t)
            return line_error(line_no, col_of("time"),
                              "'time' " + shown(time->as_string()) +
                                  " is not YYYY-MM-DD HH:MM:SS[.f][Z|+HH:MM|-HH:MM]");
        if (*t < last_time)
            return line_error(line_no, col_of("time"),
                              fmt::format("time goes backwards by {:.6f} s", last_time - *t));
        last_time = *t;
        if (cap.frames.empty()) cap.start_epoch_seconds = *t;
        frame.time = *t - cap.start_epoch_seconds;
        if (const Llsd* cmd = dict.find("command")) {
            if (!cmd->is_string() || cmd->as_string() != "move")
                return line_error(line_no, col_of("command"), "'command' must be 'move'");
        }
        for (const auto& [name, value] : dict.as_map()) {
            if (name == "time" || name == "command") continue;
            if (auto err = read_joint(name, value, Source::Capture, frame.joints))
                return line_error(line_no, col_of(name), "joint " + shown(name) + ": " + *err);
        }
        sort_targets(frame.joints);
        cap.frames.push_back(std::move(frame));
    }
    return cap;
}

Result<PuppetryCapture> load_puppetry_capture(const std::string& path) {
    auto bytes = read_file_bytes(path);
    if (!bytes) return bytes.error();
    auto r = parse_puppetry_capture(
        std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
    if (!r) {
        Error e = r.error();
        e.message = path + ": " + e.message;
        return e;
    }
    return r;
}

Result<PuppetryFrame> puppetry_frame_from_leap(const Llsd& message, double time) {
    const auto err = [](const std::string& path, const std::string& what) {
        return Error{path + ": " + what, -1, -1};
    };
    if (!message.is_map()) return err("message", "expected a map, found " + std::string(llsd_type_name(message.type())));
    const Llsd* data = &message;
    std::string base;
    if (const Llsd* cmd = message.find("command")) {
        if (!cmd->is_string() || cmd->as_string() != "set")
            return err("command", "expected 'set' (the only command carrying joint data)");
        data = message.find("data");
        base = "data";
        if (data == nullptr) {
            data = message.find("d");
            base = "d";
        }
        if (data == nullptr) return err("message", "a 'set' command without 'data' (or 'd')");
        for (const auto& [k, v] : message.as_map()) {
            (void)v;
            if (k != "command" && k != "data" && k != "d" && k != "reqid" && k != "reply")
                return err(k, "unknown key in a 'set' message");
        }
        if (!data->is_map()) return err(base, "expected a map");
        base += ".";
    }
    PuppetryFrame frame;
    frame.time = time;
    for (const auto& [key, value] : data->as_map()) {
        Source src;
        if (key == "inverse_kinematics" || key == "i") src = Source::LeapIk;
        else if (key == "joint_state" || key == "j") src = Source::LeapJointState;
        else return err(base + key, "unknown key (expected inverse_kinematics, i, joint_state or j)");
        const Llsd::Map* joints = value.if_map();
        if (joints == nullptr) return err(base + key, "expected a map of joints");
        for (const auto& [name, jv] : *joints) {
            if (auto e = read_joint(name, jv, src, frame.joints))
                return err(base + key + "." + name, *e);
        }
    }
    sort_targets(frame.joints);
    // The same joint in both `i` and `inverse_kinematics` (or `j` and `joint_state`) would give
    // two entries of one frame: ambiguous.
    for (std::size_t i = 1; i < frame.joints.size(); ++i)
        if (frame.joints[i].joint == frame.joints[i - 1].joint &&
            frame.joints[i].frame == frame.joints[i - 1].frame)
            return err(base + frame.joints[i].joint,
                       "the joint appears twice in the same map kind (long and short name)");
    return frame;
}

}  // namespace slanim

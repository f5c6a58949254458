// SPDX-License-Identifier: MIT
// BVH text reader and writer: the raw model under the BVH importer (spec §8.1, the text that
// LLBVHLoader::loadBVHFile reads). See bvh.hpp for what is accepted and rejected.
#include "slanim/formats/bvh.hpp"
#include "slanim/formats/io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <system_error>
#include <utility>


namespace slanim {

namespace {

constexpr std::array<std::string_view, 6> kChannelNames = {
    "Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation"};

constexpr bool is_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

constexpr char ascii_lower(char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    return true;
}

bool istarts_with(std::string_view s, std::string_view prefix) {
    return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

std::size_t skip_space(std::string_view s, std::size_t p) {
    while (p < s.size() && is_space(s[p])) ++p;
    return p;
}

// The whitespace-delimited token starting at p (empty at the end of the line).
std::string_view token_at(std::string_view s, std::size_t p) {
    std::size_t e = p;
    while (e < s.size() && !is_space(s[e])) ++e;
    return s.substr(p, e - p);
}

// 'token' for messages: at most 40 bytes, control and non-ASCII bytes as \xNN.
std::string quote(std::string_view tok) {
    constexpr std::size_t kMax = 40;
    std::string out = "'";
    for (std::size_t i = 0; i < tok.size() && i < kMax; ++i) {
        const auto c = static_cast<unsigned char>(tok[i]);
        if (c < 0x20 || c >= 0x7F || c == '\'' || c == '\\')
            out += fmt::format("\\x{:02X}", static_cast<unsigned>(c));
        else
            out += static_cast<char>(c);
    }
    if (tok.size() > kMax) out += "...";
    out += "'";
    return out;
}

enum class NumberStatus : std::uint8_t { Ok, NotANumber, NotFinite, OutOfRange };

// Locale-independent decimal float (see parse_bvh's docstring for the accepted forms).
NumberStatus parse_float(std::string_view tok, float& out) {
    if (tok.size() >= 2 && tok[0] == '+' && tok[1] != '-' && tok[1] != '+') tok.remove_prefix(1);
    if (tok.empty()) return NumberStatus::NotANumber;
    const char* first = tok.data();
    const char* last = tok.data() + tok.size();
    float f = 0.f;
    const auto r = std::from_chars(first, last, f, std::chars_format::general);
    if (r.ptr != last) return NumberStatus::NotANumber;
    if (r.ec == std::errc::invalid_argument) return NumberStatus::NotANumber;
    if (r.ec == std::errc::result_out_of_range) {
        // Overflow, or an underflow below the smallest subnormal: decide through double.
        double d = 0.0;
        const auto rd = std::from_chars(first, last, d, std::chars_format::general);
        if (rd.ec != std::errc() || rd.ptr != last) return NumberStatus::OutOfRange;
        if (!(std::fabs(d) <= static_cast<double>(std::numeric_limits<float>::max())))
            return NumberStatus::OutOfRange;
        f = static_cast<float>(d);
    } else if (r.ec != std::errc()) {
        return NumberStatus::NotANumber;
    }
    if (!std::isfinite(f)) return NumberStatus::NotFinite;  // "inf", "nan", "infinity"
    out = f;
    return NumberStatus::Ok;
}

// Whole-token integer with an optional leading '+'. Out of range → `overflow` set.
bool parse_integer(std::string_view tok, long long& out, bool& overflow) {
    overflow = false;
    if (tok.size() >= 2 && tok[0] == '+' && tok[1] != '-' && tok[1] != '+') tok.remove_prefix(1);
    if (tok.empty()) return false;
    const char* last = tok.data() + tok.size();
    const auto r = std::from_chars(tok.data(), last, out);
    if (r.ptr != last) return false;
    if (r.ec == std::errc::result_out_of_range) {
        overflow = true;
        return false;
    }
    return r.ec == std::errc();
}

struct Token {
    std::string_view text;
    std::size_t col = 0;  // 1-based byte column
};

void tokenize(std::string_view line, std::vector<Token>& out) {
    out.clear();
    std::size_t p = 0;
    while (true) {
        p = skip_space(line, p);
        if (p >= line.size()) break;
        const std::string_view t = token_at(line, p);
        out.push_back({t, p + 1});
        p += t.size();
    }
}

// Physical lines split on CRLF, LF or CR.
class Lines {
public:
    explicit Lines(std::string_view text) : t_(text) {
        if (t_.size() >= 3 && t_.substr(0, 3) == "\xEF\xBB\xBF") t_.remove_prefix(3);  // BOM
    }
    bool next(std::string_view& line) {
        if (pos_ >= t_.size()) return false;
        std::size_t e = pos_;
        while (e < t_.size() && t_[e] != '\n' && t_[e] != '\r') ++e;
        line = t_.substr(pos_, e - pos_);
        if (e < t_.size() && t_[e] == '\r' && e + 1 < t_.size() && t_[e + 1] == '\n')
            pos_ = e + 2;
        else
            pos_ = e < t_.size() ? e + 1 : e;
        ++number_;
        last_len_ = line.size();
        return true;
    }
    /// 1-based number of the line last returned (0 before the first).
    [[nodiscard]] long long number() const { return number_; }
    [[nodiscard]] std::size_t last_length() const { return last_len_; }
    [[nodiscard]] std::size_t remaining() const { return t_.size() - pos_; }

private:
    std::string_view t_;
    std::size_t pos_ = 0;
    long long number_ = 0;
    std::size_t last_len_ = 0;
};

class BvhParser {
public:
    explicit BvhParser(std::string_view text) : lines_(text) {}

    Result<BvhMotion> run() {
        if (!parse_hierarchy() || !parse_motion_header() || !parse_frames()) return err_;
        parse_trailing();
        return std::move(m_);
    }

private:
    enum class State : std::uint8_t { Brace, Offset, Channels, Body, SiteBrace, SiteOffset,
                                      SiteClose };

    Lines lines_;
    std::string_view line_;
    std::vector<Token> toks_;
    BvhMotion m_;
    Error err_;
    std::vector<int> stack_;      // open joints, innermost last
    bool brace_inline_ = false;   // the last ROOT/JOINT/End Site line ended with '{'
    long long root_close_line_ = 0;
    long long frames_line_ = 0;
    std::size_t frames_col_ = 0;

    // ---- errors ------------------------------------------------------------------------
    bool fail(long long line, std::size_t col, const std::string& msg) {
        if (line < 1) line = 1;
        if (col < 1) col = 1;
        err_ = Error{fmt::format("line {}, column {}: {}", line, col, msg), -1, line};
        return false;
    }
    bool fail_at(const Token& t, const std::string& msg) { return fail(lines_.number(), t.col, msg); }
    bool fail_eol(const std::string& msg) { return fail(lines_.number(), line_.size() + 1, msg); }
    // At the end of the input: the end of the last line.
    bool fail_eof(const std::string& expected) {
        return fail(lines_.number(), lines_.last_length() + 1,
                    fmt::format("expected {}, found end of file", expected));
    }
    // "found 'tok'" for token i of the current line, or "found end of line".
    std::string found(std::size_t i) const {
        return i < toks_.size() ? "found " + quote(toks_[i].text) : std::string("found end of line");
    }
    bool expect_end(std::size_t i, std::string_view after) {
        if (i >= toks_.size()) return true;
        return fail_at(toks_[i], fmt::format("expected end of line after {}, {}", after, found(i)));
    }

    // Next line with at least one token; false at the end of the input.
    bool next_content() {
        while (lines_.next(line_)) {
            tokenize(line_, toks_);
            if (!toks_.empty()) return true;
        }
        return false;
    }

    std::string joint_label(int j) const {
        return fmt::format("joint {}", quote(m_.joints[static_cast<std::size_t>(j)].name));
    }

    // ---- hierarchy ---------------------------------------------------------------------
    std::string expected_in(State s) const {
        switch (s) {
        case State::Brace:
            return fmt::format("'{{' after the {} name", stack_.size() == 1 ? "ROOT" : "JOINT");
        case State::Offset: return "OFFSET";
        case State::Channels: return "CHANNELS";
        case State::Body: return "JOINT, End Site or '}'";
        case State::SiteBrace: return "'{' after End Site";
        case State::SiteOffset: return "OFFSET in the End Site";
        case State::SiteClose: return "'}' to close the End Site";
        }
        return "?";
    }
    std::string open_blocks() const {
        const BvhJoint& j = m_.joints[static_cast<std::size_t>(stack_.back())];
        return fmt::format(" (unbalanced braces: {} block(s) still open, the innermost is {} "
                           "from line {})",
                           stack_.size(), joint_label(stack_.back()), j.line);
    }

    // "ROOT name" / "JOINT name" (name = rest of the line, trimmed; a final " {" opens it).
    bool open_joint(std::string_view keyword) {
        const Token& kw = toks_[0];
        std::string_view rest = line_.substr(kw.col - 1 + kw.text.size());
        brace_inline_ = false;
        if (toks_.size() >= 3 && toks_.back().text == "{") {
            brace_inline_ = true;
            rest = line_.substr(kw.col - 1 + kw.text.size(),
                                toks_.back().col - 1 - (kw.col - 1 + kw.text.size()));
        }
        const std::string_view name = trim(rest);
        if (name.empty() || name == "{")
            return fail(lines_.number(), toks_.size() > 1 ? toks_[1].col : line_.size() + 1,
                        fmt::format("expected a joint name after {}, {}", keyword, found(1)));
        // "JOINT a { {": a name may not end in a separate '{' (it would read back as a brace).
        if (name.size() >= 2 && name.back() == '{' && is_space(name[name.size() - 2]))
            return fail(lines_.number(), toks_[toks_.size() - (brace_inline_ ? 2 : 1)].col,
                        fmt::format("unexpected '{{' in the {} name {}", keyword, quote(name)));
        if (m_.joints.size() >= static_cast<std::size_t>(kBvhMaxJoints))
            return fail_at(kw, fmt::format("more than {} joints (the limit)", kBvhMaxJoints));
        if (stack_.size() >= static_cast<std::size_t>(kBvhMaxDepth))
            return fail_at(kw, fmt::format("joint {} is nested deeper than {} levels (the limit)",
                                           quote(name), kBvhMaxDepth));
        BvhJoint j;
        j.name = std::string(name);
        j.parent = stack_.empty() ? -1 : stack_.back();
        j.line = static_cast<int>(std::min<long long>(lines_.number(),
                                                      std::numeric_limits<int>::max()));
        m_.joints.push_back(std::move(j));
        stack_.push_back(static_cast<int>(m_.joints.size() - 1));
        return true;
    }

    bool read_vec3(std::string_view keyword, Vec3& v) {
        static constexpr const char* kAxis[] = {"x", "y", "z"};
        float* out[] = {&v.x, &v.y, &v.z};
        for (std::size_t i = 0; i < 3; ++i) {
            if (i + 1 >= toks_.size())
                return fail_eol(fmt::format("expected 3 numbers after {}, found {}", keyword, i));
            const Token& t = toks_[i + 1];
            switch (parse_float(t.text, *out[i])) {
            case NumberStatus::Ok: break;
            case NumberStatus::NotANumber:
                return fail_at(t, fmt::format("expected a number for {} {}, found {}", keyword,
                                              kAxis[i], quote(t.text)));
            case NumberStatus::NotFinite:
                return fail_at(t, fmt::format("{} {} is {}, not a finite number", keyword,
                                              kAxis[i], quote(t.text)));
            case NumberStatus::OutOfRange:
                return fail_at(t, fmt::format("{} {} {} is out of the float range", keyword,
                                              kAxis[i], quote(t.text)));
            }
        }
        return expect_end(4, fmt::format("the 3 {} numbers", keyword));
    }

    bool read_channels(BvhJoint& j) {
        if (toks_.size() < 2)
            return fail_eol("expected a channel count from 0 to 6 after CHANNELS, found end of "
                            "line");
        long long n = 0;
        bool overflow = false;
        if (!parse_integer(toks_[1].text, n, overflow) || n < 0 || n > 6)
            return fail_at(toks_[1],
                           fmt::format("expected a channel count from 0 to 6 after CHANNELS, {}",
                                       found(1)));
        const std::size_t count = static_cast<std::size_t>(n);
        const std::size_t listed = toks_.size() - 2;
        for (std::size_t i = 0; i < std::min(count, listed); ++i) {
            const Token& t = toks_[i + 2];
            std::size_t c = 0;
            while (c < kChannelNames.size() && !iequals(t.text, kChannelNames[c])) ++c;
            if (c == kChannelNames.size())
                return fail_at(t, fmt::format("unknown channel {} (expected Xposition, Yposition, "
                                              "Zposition, Xrotation, Yrotation or Zrotation)",
                                              quote(t.text)));
            const auto ch = static_cast<BvhChannel>(c);
            if (std::find(j.channels.begin(), j.channels.end(), ch) != j.channels.end())
                return fail_at(t, fmt::format("channel {} is listed twice for {}",
                                              kChannelNames[c], joint_label(stack_.back())));
            j.channels.push_back(ch);
        }
        if (listed < count)
            return fail_eol(fmt::format("expected {} channel names after 'CHANNELS {}', found {}",
                                        count, count, listed));
        return expect_end(2 + count, fmt::format("the {} channel name(s) of 'CHANNELS {}'",
                                                 count, count));
    }

    bool parse_hierarchy() {
        if (!next_content()) return fail_eof("HIERARCHY");
        if (!iequals(toks_[0].text, "HIERARCHY"))
            return fail_at(toks_[0], fmt::format("expected HIERARCHY, {}", found(0)));
        if (!expect_end(1, "HIERARCHY")) return false;
        if (!next_content()) return fail_eof("ROOT");
        if (!iequals(toks_[0].text, "ROOT"))
            return fail_at(toks_[0], fmt::format("expected ROOT, {}", found(0)));
        if (!open_joint("ROOT")) return false;
        State st = brace_inline_ ? State::Offset : State::Brace;

        while (!stack_.empty()) {
            if (!next_content()) {
                return fail(lines_.number(), lines_.last_length() + 1,
                            fmt::format("expected {}, found end of file{}", expected_in(st),
                                        st == State::Body ? open_blocks() : std::string()));
            }
            const Token& t0 = toks_[0];
            BvhJoint& j = m_.joints[static_cast<std::size_t>(stack_.back())];
            switch (st) {
            case State::Brace:
            case State::SiteBrace:
                if (t0.text != "{")
                    return fail_at(t0, fmt::format("expected {}, {}", expected_in(st), found(0)));
                if (!expect_end(1, "'{'")) return false;
                st = st == State::Brace ? State::Offset : State::SiteOffset;
                break;
            case State::Offset:
            case State::SiteOffset:
                if (!iequals(t0.text, "OFFSET"))
                    return fail_at(t0, fmt::format("expected {}, {}", expected_in(st), found(0)));
                if (st == State::Offset) {
                    if (!read_vec3("OFFSET", j.offset)) return false;
                    st = State::Channels;
                } else {
                    if (!read_vec3("OFFSET", j.end_site_offset)) return false;
                    st = State::SiteClose;
                }
                break;
            case State::Channels:
                if (!iequals(t0.text, "CHANNELS"))
                    return fail_at(t0, fmt::format("expected CHANNELS, {}", found(0)));
                if (!read_channels(j)) return false;
                st = State::Body;
                break;
            case State::SiteClose:
                if (t0.text != "}")
                    return fail_at(t0, fmt::format("expected {}, {}", expected_in(st), found(0)));
                if (!expect_end(1, "'}'")) return false;
                st = State::Body;
                break;
            case State::Body:
                if (iequals(t0.text, "JOINT")) {
                    if (!open_joint("JOINT")) return false;
                    st = brace_inline_ ? State::Offset : State::Brace;
                } else if (iequals(t0.text, "End")) {
                    if (toks_.size() < 2 || !iequals(toks_[1].text, "Site"))
                        return fail(lines_.number(),
                                    toks_.size() > 1 ? toks_[1].col : line_.size() + 1,
                                    fmt::format("expected 'Site' after 'End', {}", found(1)));
                    const bool inline_brace = toks_.size() == 3 && toks_[2].text == "{";
                    if (!inline_brace && !expect_end(2, "End Site")) return false;
                    if (j.has_end_site)
                        return fail_at(t0, fmt::format("{} has a second End Site (at most one "
                                                       "per joint)",
                                                       joint_label(stack_.back())));
                    j.has_end_site = true;
                    st = inline_brace ? State::SiteOffset : State::SiteBrace;
                } else if (t0.text == "}") {
                    if (!expect_end(1, "'}'")) return false;
                    stack_.pop_back();
                    if (stack_.empty()) root_close_line_ = lines_.number();
                } else {
                    return fail_at(t0, fmt::format("expected {}, {}{}", expected_in(st),
                                                   found(0), open_blocks()));
                }
                break;
            }
        }
        return true;
    }

    // ---- MOTION, Frames:, Frame Time: -------------------------------------------------
    bool parse_motion_header() {
        const BvhJoint& root = m_.joints.front();
        if (!next_content()) return fail_eof("MOTION after the ROOT block");
        const Token& t0 = toks_[0];
        if (t0.text == "}")
            return fail_at(t0, fmt::format("unbalanced '}}': the ROOT block already closed at "
                                           "line {}",
                                           root_close_line_));
        if (iequals(t0.text, "ROOT"))
            return fail_at(t0, fmt::format("a second ROOT {}: only one ROOT is supported (the "
                                           "first, {}, is at line {})",
                                           quote(trim(line_.substr(t0.col - 1 + 4))),
                                           quote(root.name), root.line));
        if (!iequals(t0.text, "MOTION"))
            return fail_at(t0, fmt::format("expected MOTION after the ROOT block (closed at line "
                                           "{}), {}",
                                           root_close_line_, found(0)));
        if (!expect_end(1, "MOTION")) return false;

        // Frames: N
        if (!next_content()) return fail_eof("'Frames:'");
        std::size_t p = skip_space(line_, 0);
        if (!istarts_with(line_.substr(p), "Frames") ||
            (p + 6 < line_.size() && !is_space(line_[p + 6]) && line_[p + 6] != ':'))
            return fail(lines_.number(), p + 1,
                        fmt::format("expected 'Frames:', found {}", quote(token_at(line_, p))));
        p = skip_space(line_, p + 6);
        if (p >= line_.size() || line_[p] != ':')
            return fail(lines_.number(), p + 1,
                        fmt::format("expected ':' after 'Frames', found {}",
                                    p >= line_.size() ? std::string("end of line")
                                                      : quote(token_at(line_, p))));
        p = skip_space(line_, p + 1);
        const std::string_view ntok = token_at(line_, p);
        if (ntok.empty())
            return fail_eol("expected the number of frames after 'Frames:', found end of line");
        long long n = 0;
        bool overflow = false;
        const bool is_int = parse_integer(ntok, n, overflow);
        if (overflow || (is_int && n > kBvhMaxFrames))
            return fail(lines_.number(), p + 1,
                        fmt::format("Frames {} exceeds the limit of {}", quote(ntok),
                                    kBvhMaxFrames));
        if (!is_int)
            return fail(lines_.number(), p + 1,
                        fmt::format("expected a whole number of frames after 'Frames:', found {}",
                                    quote(ntok)));
        if (n < 1)
            return fail(lines_.number(), p + 1,
                        fmt::format("Frames must be at least 1, found {}", n));
        frames_line_ = lines_.number();
        frames_col_ = p + 1;
        p = skip_space(line_, p + ntok.size());
        if (p < line_.size())
            return fail(lines_.number(), p + 1,
                        fmt::format("expected end of line after the number of frames, found {}",
                                    quote(token_at(line_, p))));
        m_.num_frames = static_cast<int>(n);

        // Frame Time: t
        if (!next_content()) return fail_eof("'Frame Time:'");
        p = skip_space(line_, 0);
        const std::size_t start = p;
        bool ok = istarts_with(line_.substr(p), "Frame");
        if (ok) {
            p = skip_space(line_, p + 5);
            ok = istarts_with(line_.substr(p), "Time");
            p += 4;
        }
        if (!ok)
            return fail(lines_.number(), start + 1,
                        fmt::format("expected 'Frame Time:', found {}",
                                    quote(token_at(line_, start))));
        p = skip_space(line_, p);
        if (p >= line_.size() || line_[p] != ':')
            return fail(lines_.number(), p + 1,
                        fmt::format("expected ':' after 'Frame Time', found {}",
                                    p >= line_.size() ? std::string("end of line")
                                                      : quote(token_at(line_, p))));
        p = skip_space(line_, p + 1);
        const std::string_view ttok = token_at(line_, p);
        if (ttok.empty())
            return fail_eol("expected the frame time in seconds after 'Frame Time:', found end "
                            "of line");
        float dt = 0.f;
        switch (parse_float(ttok, dt)) {
        case NumberStatus::Ok: break;
        case NumberStatus::NotANumber:
            return fail(lines_.number(), p + 1,
                        fmt::format("expected the frame time in seconds after 'Frame Time:', "
                                    "found {}",
                                    quote(ttok)));
        case NumberStatus::NotFinite:
        case NumberStatus::OutOfRange:
            return fail(lines_.number(), p + 1,
                        fmt::format("Frame Time {} is not a finite float", quote(ttok)));
        }
        if (!(dt > 0.f))
            return fail(lines_.number(), p + 1,
                        fmt::format("Frame Time must be greater than 0, found {}", quote(ttok)));
        p = skip_space(line_, p + ttok.size());
        if (p < line_.size())
            return fail(lines_.number(), p + 1,
                        fmt::format("expected end of line after the frame time, found {}",
                                    quote(token_at(line_, p))));
        m_.frame_time = dt;
        return true;
    }

    // ---- frames ------------------------------------------------------------------------
    bool parse_frames() {
        const std::size_t total = m_.total_channels();
        const long long count = static_cast<long long>(m_.num_frames) *
                                static_cast<long long>(total);
        if (count > kBvhMaxValues)
            return fail(frames_line_, frames_col_,
                        fmt::format("Frames × channels = {} × {} = {} values exceeds the limit "
                                    "of {}",
                                    m_.num_frames, total, count, kBvhMaxValues));
        if (total == 0) return true;
        // Every value takes at least 2 bytes but the last: never reserve more than the input
        // can hold.
        m_.values.reserve(std::min(static_cast<std::size_t>(count), lines_.remaining() / 2 + 1));

        const int frames = m_.num_frames;
        int frame = 0;             // 0-based; messages count from 1
        std::size_t in_frame = 0;  // values read for `frame`
        long long last_line = 0;   // where the last value of `frame` so far ends
        std::size_t last_col = 0;
        while (frame < frames) {
            if (!lines_.next(line_)) {
                if (in_frame > 0)
                    return fail(last_line, last_col,
                                fmt::format("frame {} has {} values, expected {} (end of file)",
                                            frame + 1, in_frame, total));
                return fail_eof(fmt::format("frame {} of {} ({} values)", frame + 1, frames,
                                            total));
            }
            tokenize(line_, toks_);
            if (toks_.empty()) continue;
            const std::size_t m = toks_.size();
            if (in_frame > 0 && in_frame + m > total)
                return fail(last_line, last_col,
                            fmt::format("frame {} has {} values, expected {} (line {} holds {} "
                                        "more, past the end of the frame: a line never holds "
                                        "values of two frames)",
                                        frame + 1, in_frame, total, lines_.number(), m));
            const std::size_t take = std::min(m, total - in_frame);
            for (std::size_t i = 0; i < take; ++i) {
                const Token& t = toks_[i];
                float v = 0.f;
                switch (parse_float(t.text, v)) {
                case NumberStatus::Ok: break;
                case NumberStatus::NotANumber:
                    if (in_frame == 0)
                        return fail_at(t, fmt::format("expected frame {} of {} ({} values), "
                                                      "found {}",
                                                      frame + 1, frames, total, quote(t.text)));
                    return fail_at(t, fmt::format("expected a number for value {} of frame {} "
                                                  "({} values per frame), found {}",
                                                  in_frame + 1, frame + 1, total, quote(t.text)));
                case NumberStatus::NotFinite:
                    return fail_at(t, fmt::format("value {} of frame {} is {}, not a finite "
                                                  "number",
                                                  in_frame + 1, frame + 1, quote(t.text)));
                case NumberStatus::OutOfRange:
                    return fail_at(t, fmt::format("value {} of frame {} ({}) is out of the float "
                                                  "range",
                                                  in_frame + 1, frame + 1, quote(t.text)));
                }
                m_.values.push_back(v);
                ++in_frame;
            }
            if (m > take) {
                const Token& extra = toks_[take];
                float ignored = 0.f;
                if (parse_float(extra.text, ignored) == NumberStatus::NotANumber)
                    return fail_at(extra, fmt::format("expected end of line after the {} values "
                                                      "of frame {}, found {}",
                                                      total, frame + 1, quote(extra.text)));
                return fail_at(extra, fmt::format("frame {} has {} values, expected {}",
                                                  frame + 1, m, total));
            }
            last_line = lines_.number();
            last_col = toks_[take - 1].col + toks_[take - 1].text.size();
            if (in_frame == total) {
                ++frame;
                in_frame = 0;
            }
        }
        return true;
    }

    void parse_trailing() {
        while (lines_.next(line_)) {
            if (!trim(line_).empty()) m_.trailing_lines.emplace_back(line_);
        }
    }
};

// ---- writer --------------------------------------------------------------------------------

void append_float(std::string& out, float v) {
    std::array<char, 64> buf{};
    const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v);
    out.append(buf.data(), r.ptr);
}

void indent(std::string& out, std::size_t depth) { out.append(depth, '\t'); }

void append_offset(std::string& out, std::size_t depth, Vec3 v) {
    indent(out, depth);
    out += "OFFSET ";
    append_float(out, v.x);
    out += ' ';
    append_float(out, v.y);
    out += ' ';
    append_float(out, v.z);
    out += '\n';
}

}  // namespace

std::string_view bvh_channel_name(BvhChannel c) {
    const auto i = static_cast<std::size_t>(c);
    return i < kChannelNames.size() ? kChannelNames[i] : std::string_view("?");
}

std::size_t BvhMotion::total_channels() const {
    std::size_t n = 0;
    for (const BvhJoint& j : joints) n += j.channels.size();
    return n;
}

std::size_t BvhMotion::channel_offset(int joint) const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(joint) && i < joints.size(); ++i)
        n += joints[i].channels.size();
    return n;
}

std::span<const float> BvhMotion::frame_values(int frame) const {
    const std::size_t total = total_channels();
    return std::span<const float>(values).subspan(static_cast<std::size_t>(frame) * total, total);
}

float BvhMotion::value(int frame, int joint, int channel_index) const {
    return values[static_cast<std::size_t>(frame) * total_channels() + channel_offset(joint) +
                  static_cast<std::size_t>(channel_index)];
}

int BvhMotion::find_joint(std::string_view name) const {
    for (std::size_t i = 0; i < joints.size(); ++i)
        if (joints[i].name == name) return static_cast<int>(i);
    return -1;
}

Result<BvhMotion> parse_bvh(std::string_view text) { return BvhParser(text).run(); }

std::string write_bvh(const BvhMotion& m) {
    std::string out;
    out.reserve(256 + m.joints.size() * 96 + m.values.size() * 10);
    out += "HIERARCHY\n";
    std::vector<std::size_t> stack;
    const auto close = [&] {
        const BvhJoint& j = m.joints[stack.back()];
        const std::size_t depth = stack.size() - 1;
        if (j.has_end_site) {
            indent(out, depth + 1);
            out += "End Site\n";
            indent(out, depth + 1);
            out += "{\n";
            append_offset(out, depth + 2, j.end_site_offset);
            indent(out, depth + 1);
            out += "}\n";
        }
        indent(out, depth);
        out += "}\n";
        stack.pop_back();
    };
    for (std::size_t i = 0; i < m.joints.size(); ++i) {
        const BvhJoint& j = m.joints[i];
        // Close every open joint that is not the parent (all of them for a root, or for a
        // parent index that is not an open joint: the result is then not readable).
        while (!stack.empty() &&
               static_cast<long long>(stack.back()) != static_cast<long long>(j.parent))
            close();
        const std::size_t depth = stack.size();
        indent(out, depth);
        out += depth == 0 ? "ROOT " : "JOINT ";
        out += j.name;
        out += '\n';
        indent(out, depth);
        out += "{\n";
        append_offset(out, depth + 1, j.offset);
        indent(out, depth + 1);
        out += "CHANNELS ";
        out += std::to_string(j.channels.size());
        for (const BvhChannel c : j.channels) {
            out += ' ';
            out += bvh_channel_name(c);
        }
        out += '\n';
        stack.push_back(i);
    }
    while (!stack.empty()) close();

    out += "MOTION\nFrames: ";
    out += std::to_string(m.num_frames);
    out += "\nFrame Time: ";
    append_float(out, m.frame_time);
    out += '\n';
    // One line per frame; none when there are no channels (parse_bvh reads no lines then).
    const std::size_t total = m.total_channels();
    const std::size_t frames = total == 0 ? 0 : static_cast<std::size_t>(std::max(m.num_frames, 0));
    for (std::size_t f = 0; f < frames; ++f) {
        for (std::size_t c = 0; c < total; ++c) {
            const std::size_t idx = f * total + c;
            if (idx >= m.values.size()) break;
            if (c > 0) out += ' ';
            append_float(out, m.values[idx]);
        }
        out += '\n';
    }
    for (const std::string& line : m.trailing_lines) {
        out += line;
        out += '\n';
    }
    return out;
}

Result<BvhMotion> load_bvh(const std::string& path) {
    auto bytes = read_file_bytes(path);
    if (!bytes) return bytes.error();
    const std::vector<std::uint8_t>& b = bytes.value();
    auto m = parse_bvh(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
    if (!m) {
        Error e = m.error();
        e.message = path + ": " + e.message;
        return e;
    }
    return m;
}

Result<bool> save_bvh(const std::string& path, const BvhMotion& m) {
    const std::string text = write_bvh(m);
    return write_file_atomic(path, std::span<const std::uint8_t>(
                                       reinterpret_cast<const std::uint8_t*>(text.data()),
                                       text.size()));
}

}  // namespace slanim

// SPDX-License-Identifier: MIT
// LEAP framing reader with resynchronisation (leap_stream.hpp).
#include "slanim/net/leap_stream.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace slanim {

namespace {
// A resynchronisation candidate's length has at most as many digits as kMaxMessage (7): a
// longer run is more likely garbage than a skippable message.
constexpr std::size_t kMaxResyncDigits = 7;
// Longer declared lengths are not skipped but resynchronised (garbage, not a message).
constexpr std::uint64_t kMaxLength = std::uint64_t{1} << 40;
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_space(char c) { return c == '\n' || c == '\r' || c == ' ' || c == '\t'; }
}  // namespace

void LeapFrameReader::feed(std::string_view bytes) {
    if (pos_ > 0 && pos_ * 2 > buf_.size()) drop_front(pos_);
    buf_.append(bytes);
}

void LeapFrameReader::drop_front(std::size_t n) {
    buf_.erase(0, n);
    consumed_ += static_cast<long long>(n);
    pos_ -= std::min(pos_, n);
}

LeapFrameReader::Item LeapFrameReader::fault(std::string what, std::size_t at) {
    ++faults_;
    Item it;
    it.number = ++number_;
    it.fault = std::move(what);
    it.offset = consumed_ + static_cast<long long>(at);
    return it;
}

// Moves pos_ to the next `DIGITS:{` after it; false (keeping a tail that may hold a split
// prefix) when the buffer has none yet.
bool LeapFrameReader::resync() {
    for (std::size_t c = buf_.find(":{", pos_); c != std::string::npos; c = buf_.find(":{", c + 1)) {
        std::size_t d = c;
        while (d > pos_ && is_digit(buf_[d - 1])) --d;
        if (d < c && c - d <= kMaxResyncDigits) {
            pos_ = d;
            resyncing_ = false;
            return true;
        }
    }
    const std::size_t keep = kMaxPrefix + 1;
    if (buf_.size() - pos_ > keep) pos_ = buf_.size() - keep;
    return false;
}

std::optional<LeapFrameReader::Item> LeapFrameReader::next() {
    if (skip_ > 0) {
        const std::size_t n = std::min(skip_, buf_.size() - pos_);
        pos_ += n;
        skip_ -= n;
        if (skip_ > 0) {
            drop_front(pos_);
            return std::nullopt;
        }
    }
    if (resyncing_ && !resync()) return std::nullopt;
    while (pos_ < buf_.size() && is_space(buf_[pos_])) ++pos_;
    const std::size_t start = pos_;
    std::size_t i = start;
    std::uint64_t len = 0;
    while (i < buf_.size() && is_digit(buf_[i]) && i - start < kMaxPrefix) {
        if (len <= kMaxLength) len = len * 10 + static_cast<std::uint64_t>(buf_[i] - '0');
        ++i;
    }
    if (i == buf_.size()) return std::nullopt;  // prefix incomplete
    if (i == start || buf_[i] != ':') {
        const char c = buf_[i];
        std::string what = i - start >= kMaxPrefix
                               ? std::string("the length prefix has more than 20 digits")
                               : fmt::format("expected a decimal length and ':' before the message, found {}",
                                             c >= 0x20 && c < 0x7f ? fmt::format("'{}'", c) : std::string("a control byte"));
        pos_ = start + 1;
        resyncing_ = true;
        return fault(std::move(what) + "; skipping to the next 'N:{'", start);
    }
    if (len > kMaxLength) {
        pos_ = i + 1;
        resyncing_ = true;
        return fault("the declared length is beyond any message; skipping to the next 'N:{'", start);
    }
    if (len > kMaxMessage) {
        pos_ = i + 1;
        skip_ = static_cast<std::size_t>(len);
        return fault("the declared length " + std::to_string(len) + " exceeds 1 MiB: the message is skipped", start);
    }
    if (buf_.size() - (i + 1) < static_cast<std::size_t>(len)) return std::nullopt;  // body incomplete
    Item it;
    it.number = ++number_;
    it.text = buf_.substr(i + 1, static_cast<std::size_t>(len));
    it.offset = consumed_ + static_cast<long long>(start);
    pos_ = i + 1 + static_cast<std::size_t>(len);
    return it;
}

std::string leap_frame(std::string_view notation) {
    return std::to_string(notation.size()) + ":" + std::string(notation);
}

}  // namespace slanim

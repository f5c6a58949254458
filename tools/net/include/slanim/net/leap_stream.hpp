// SPDX-License-Identifier: MIT
// LEAP framing (the viewer's LLLeap, llleap.cpp): every message in either direction is its
// byte length in decimal, ':', then exactly that many bytes of LLSD notation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace slanim {

/// Incremental reader of `N:` + N bytes framing that survives bad input (where the viewer kills
/// the plug-in): a bad prefix is one fault, after which the reader resynchronises on the next
/// `DIGITS:{` (every LEAP message is a map; at most 7 digits); a declared length above
/// kMaxMessage is one fault and its N bytes are skipped as they arrive (never buffered), unless
/// it is above 2^40, which is taken as garbage (a fault, then resynchronisation). Whitespace between frames is
/// skipped. Memory is bounded by kMaxMessage plus what one feed() brings. Not thread-safe.
class LeapFrameReader {
public:
    /// The largest message read (1 MiB); longer ones are skipped.
    static constexpr std::size_t kMaxMessage = 1 << 20;
    /// The most digits a length prefix may have (the viewer's plug-in reader stops at 20).
    static constexpr std::size_t kMaxPrefix = 20;

    /// One framed message, or one framing fault.
    struct Item {
        std::uint64_t number = 0;         ///< 1-based, faults included
        std::optional<std::string> text;  ///< the message's bytes; nullopt for a fault
        std::string fault;                ///< what was wrong (for a fault)
        long long offset = 0;             ///< stream byte offset of the message's prefix
    };

    /// Appends bytes; complete messages become available through next().
    void feed(std::string_view bytes);
    /// The next complete message or fault, or nullopt when more bytes are needed.
    std::optional<Item> next();
    /// Framing faults so far.
    [[nodiscard]] std::uint64_t faults() const { return faults_; }
    /// Bytes fed so far.
    [[nodiscard]] long long bytes_read() const { return consumed_ + static_cast<long long>(buf_.size()); }

private:
    Item fault(std::string what, std::size_t at);
    bool resync();
    void drop_front(std::size_t n);
    std::string buf_;
    std::size_t pos_ = 0;
    long long consumed_ = 0;      // bytes of the stream before buf_[0]
    std::uint64_t number_ = 0;    // messages and faults seen
    std::uint64_t faults_ = 0;
    std::size_t skip_ = 0;        // bytes of an oversize message still to drop
    bool resyncing_ = false;
};

/// Formats one LEAP frame: the decimal byte length of `notation`, ':', then `notation`.
std::string leap_frame(std::string_view notation);

}  // namespace slanim

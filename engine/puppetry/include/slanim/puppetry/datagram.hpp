// SPDX-License-Identifier: MIT
// The UDP datagram framing slanim uses to carry puppetry between a sender, the relay
// (`slanim relay`) and receivers (`slanim play --puppetry udp://...`).
//
// The viewer carries puppetry event blocks inside the `AgentAnimation` (viewer → simulator) and
// `AvatarAnimation` (simulator → viewer) messages as `PhysicalAvatarEventList.TypeData`, each
// block with a 1-byte length prefix, so at most 255 bytes per block (spec §9.1). slanim has no
// simulator message system, so it defines this small datagram with the same block rule. Each
// block is one puppetry TypeData block (slanim/puppetry/event_block.hpp) and is carried opaquely here:
// this layer checks the framing, never the block contents.
//
// Every datagram starts with a 2-byte header, then the sender's agent id. All integers and
// floats are little-endian; a float is an IEEE-754 binary32.
//
//   offset size  field
//   0      1     U8   magic/version = kDatagramMagicVersion (0xA1: magic nibble 0xA, version 1)
//   1      1     U8   kind: 1 = blocks (DatagramKind::Blocks), 2 = position report,
//                     3 = use circuit code
//   2      16    agent id (LLUUID bytes in text order): the agent whose avatar the data drives
//
//   kind 1, blocks (sender → relay, and relay → receivers with the sender's id unchanged):
//   18     1     U8   block count n, 1..255
//   19     ...   n × { U8 length L (1..255), L bytes: one puppetry event block }
//                the datagram ends exactly after the last block
//
//   kind 2, position report (agent → relay; the relay learns the agent's UDP address from it):
//   18     12    F32 x, y, z   the agent's position in metres, region frame (X east, Y north,
//                              Z up), finite
//                the datagram is exactly 30 bytes
//
//   kind 3, use circuit code (agent → relay, first; the relay binds the agent's circuit to the
//   address it came from, like the viewer's UseCircuitCode message, spec-free: llstartup.cpp
//   and process_teleport_finish send it before anything else, and LLMessageSystem::checkMessages
//   drops messages from a host without a circuit except this one):
//   18     4     U32  circuit code, as the relay issued it with the agent's capability
//                the datagram is exactly 22 bytes
//
// A datagram that breaks any of these rules is rejected as a whole with a reason (decoders never
// read past the input); receivers count and drop it. The largest blocks datagram is
// 19 + 255 × 256 = 65299 bytes, below the UDP payload limit of 65507; senders should stay near
// the viewer's message budget (`MTUBYTES` 1200, kDatagramSoftLimit) so the relay can forward
// datagrams unfragmented.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <vector>

#include "slanim/formats/llsd.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/result.hpp"

namespace slanim::puppetry {

/// An agent id: the 16 bytes of an LLUUID in text order (slanim::Uuid from llsd.hpp).
using AgentId = Uuid;

/// First byte of every datagram: magic nibble 0xA, framing version 1 in the low nibble.
inline constexpr std::uint8_t kDatagramMagicVersion = 0xA1;
/// Bytes before the kind-specific part: magic/version, kind, 16-byte agent id.
inline constexpr std::size_t kDatagramHeaderSize = 18;
/// Most blocks one datagram carries (the U8 block count).
inline constexpr std::size_t kMaxBlocksPerDatagram = 255;
/// Largest block (the viewer's 1-byte TypeData length prefix, spec §9.1).
inline constexpr std::size_t kMaxBlockSize = 255;
/// Largest blocks datagram: header, count, 255 × (length byte + 255 bytes) = 65299 bytes.
inline constexpr std::size_t kMaxDatagramSize =
    kDatagramHeaderSize + 1 + kMaxBlocksPerDatagram * (1 + kMaxBlockSize);
/// Size of a position report datagram.
inline constexpr std::size_t kPositionReportSize = kDatagramHeaderSize + 12;
/// Size of a use-circuit-code datagram.
inline constexpr std::size_t kUseCircuitCodeSize = kDatagramHeaderSize + 4;
/// The viewer's per-message budget (`MTUBYTES`, §9.1); encode_blocks_split keeps each datagram
/// at or below it when the blocks allow.
inline constexpr std::size_t kDatagramSoftLimit = 1200;

enum class DatagramKind : std::uint8_t { Blocks = 1, PositionReport = 2, UseCircuitCode = 3 };

/// A validated datagram's block list, as views into the datagram bytes (no copy). Iterating
/// yields each block's bytes (1..255 bytes) in datagram order. Valid while the datagram bytes
/// live.
class BlockList {
public:
    class iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = std::span<const std::uint8_t>;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = value_type;

        iterator() = default;
        value_type operator*() const { return {p_ + 1, static_cast<std::size_t>(*p_)}; }
        iterator& operator++() {
            p_ += 1 + static_cast<std::size_t>(*p_);
            return *this;
        }
        iterator operator++(int) {
            iterator t = *this;
            ++*this;
            return t;
        }
        friend bool operator==(iterator a, iterator b) { return a.p_ == b.p_; }

    private:
        friend class BlockList;
        explicit iterator(const std::uint8_t* p) : p_(p) {}
        const std::uint8_t* p_ = nullptr;
    };

    BlockList() = default;
    /// `count` blocks framed in `bytes` (each a length byte and its bytes). Precondition:
    /// the framing was validated (decode_datagram does this).
    BlockList(std::span<const std::uint8_t> bytes, std::size_t count) : bytes_(bytes), count_(count) {}

    [[nodiscard]] std::size_t size() const { return count_; }
    [[nodiscard]] bool empty() const { return count_ == 0; }
    [[nodiscard]] iterator begin() const { return iterator(bytes_.data()); }
    [[nodiscard]] iterator end() const { return iterator(bytes_.data() + bytes_.size()); }
    /// The framed bytes (length bytes included), exactly as in the datagram.
    [[nodiscard]] std::span<const std::uint8_t> framed_bytes() const { return bytes_; }

private:
    std::span<const std::uint8_t> bytes_;
    std::size_t count_ = 0;
};

/// A decoded datagram. For kind Blocks `blocks` is set and `position` is zero; for kind
/// PositionReport `position` is set and `blocks` is empty; for kind UseCircuitCode
/// `circuit_code` is set.
struct Datagram {
    DatagramKind kind = DatagramKind::Blocks;
    AgentId agent;
    BlockList blocks;  ///< views into the decoded bytes
    Vec3 position;     ///< metres, region frame
    std::uint32_t circuit_code = 0;  ///< kind UseCircuitCode
};

/// Why a datagram was rejected (counted per reason by the receivers).
enum class DatagramFault : std::uint8_t {
    Short,           ///< shorter than the 18-byte header (or empty)
    Magic,           ///< wrong magic/version byte
    Kind,            ///< unknown kind byte
    BlockCount,      ///< block count missing or 0
    BlockLength,     ///< a block of length 0 or running past the end
    Trailing,        ///< bytes after the last block
    PositionReport,  ///< a position report of the wrong size or with a non-finite coordinate
    Oversize,        ///< larger than the receiver's buffer (set by receivers, not by decoding)
    CircuitCode,     ///< a use-circuit-code datagram of the wrong size
};
inline constexpr std::size_t kNumDatagramFaults = 9;
/// "short", "magic", "kind", "block count", "block length", "trailing bytes", "position report",
/// "oversize", "circuit code".
const char* datagram_fault_name(DatagramFault fault);

/// Validates and decodes one datagram. Errors (with the byte offset of the problem): empty or
/// shorter than its header, wrong magic/version byte, unknown kind, zero block count, a zero
/// block length, a block running past the end, bytes left after the last block, a position
/// report that is not exactly kPositionReportSize bytes or holds a non-finite coordinate, a
/// use-circuit-code datagram that is not exactly kUseCircuitCodeSize bytes.
/// On an error `*fault`, when given, says which rule failed. Never reads outside `bytes`;
/// allocates only the error message.
Result<Datagram> decode_datagram(std::span<const std::uint8_t> bytes, DatagramFault* fault = nullptr);

/// Encodes a blocks datagram into `out` (cleared first). Errors: no block, more than
/// kMaxBlocksPerDatagram blocks, a block that is empty or longer than kMaxBlockSize.
Result<std::size_t> encode_blocks(const AgentId& agent,
                                  std::span<const std::span<const std::uint8_t>> blocks,
                                  std::vector<std::uint8_t>& out);

/// Encodes blocks into as many datagrams as needed, in order, each holding consecutive blocks
/// and staying at or below `soft_limit` bytes unless a single block alone exceeds it (then that
/// datagram holds just that block). Appends to `out`. Same errors as encode_blocks.
Result<std::size_t> encode_blocks_split(const AgentId& agent,
                                        std::span<const std::span<const std::uint8_t>> blocks,
                                        std::vector<std::vector<std::uint8_t>>& out,
                                        std::size_t soft_limit = kDatagramSoftLimit);

/// Encodes a position report (kPositionReportSize bytes). Error: a non-finite coordinate.
Result<std::array<std::uint8_t, kPositionReportSize>> encode_position_report(const AgentId& agent,
                                                                            Vec3 position_m);

/// Encodes a use-circuit-code datagram (kUseCircuitCodeSize bytes).
std::array<std::uint8_t, kUseCircuitCodeSize> encode_use_circuit_code(const AgentId& agent,
                                                                      std::uint32_t circuit_code);

}  // namespace slanim::puppetry

// SPDX-License-Identifier: MIT
// Federation of puppetry relays over a message bus (NATS): the grid file, the subjects and the
// bus message. Socket-free and thread-free; `slanim relay --nats` (slanim::RelayServer, tools/net/relay_server)
// moves these bytes through the NATS C client, slanim::PuppetryRelay produces and consumes them.
//
// The grid. SL lays regions out on a grid of 256 m squares; a region's "handle" is its south-west
// corner in global metres (the viewer's to_region_handle / from_region_handle, indra_constants'
// REGION_WIDTH_METERS = 256). A grid file lists one region per line:
//
//   # comment lines and blank lines are ignored
//   NAME GRID_X GRID_Y
//
// NAME is 1..64 characters from [A-Za-z0-9_-] (a valid single NATS subject token); GRID_X and
// GRID_Y are integers in [0, 65535], the region's position on the map in region units, so its
// origin in global metres is (256·GRID_X, 256·GRID_Y). Names and positions are unique. Two regions
// are neighbours when their grid positions differ by at most 1 on both axes (the eight squares
// around a region, corners included).
//
// Subjects. A relay publishes the blocks it accepts from its own agents on
// `slanim.relay.<REGION>.blocks` and subscribes to that subject of each neighbour.
//
// The bus message. All integers little-endian, a double is an IEEE-754 binary64.
//
//   offset size  field
//   0      1     U8   magic/version = kBusMagicVersion (0xB1)
//   1      1     U8   kind = 1 (blocks)
//   2      16    sender agent id (LLUUID bytes in text order), not null
//   18     1     U8   flags: bit 0 = the sender's position is known; other bits 0
//   19     24    F64 x, y, z   the sender's position in global metres (region origin + region
//                              frame position; X east, Y north, Z up), finite; all 0 when unknown
//   43     1     U8   block count n, 1..kRelayBlocksPerSenderPerTick (5)
//   44     ...   n × { U8 length L (1..kBusMaxBlockSize = 210), L bytes: one puppetry block }
//                the message ends exactly after the last block
//
// So a message is at most 44 + 5 × 211 = 1099 bytes (kBusMaxMessageSize). The sender's relay has
// already applied the sender's transmit flag, event_size truncation and the newest-5 rule; each
// message carries what one tick accepted from one sender, oldest block first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/core/result.hpp"
#include "slanim/formats/llsd.hpp"

namespace slanim {

/// Side of a region, metres (REGION_WIDTH_METERS).
inline constexpr double kRegionWidthM = 256.0;
/// First byte of every bus message: magic nibble 0xB, version 1.
inline constexpr std::uint8_t kBusMagicVersion = 0xB1;
/// Bytes before the blocks: magic, kind, agent, flags, position, count.
inline constexpr std::size_t kBusHeaderSize = 44;
/// Most blocks in one message (the relay's per-sender, per-tick bound).
inline constexpr std::size_t kBusMaxBlocks = 5;
/// Largest block on the bus: the relay's largest event_size (10-byte header + 200 bytes).
inline constexpr std::size_t kBusMaxBlockSize = 210;
/// Largest valid message, bytes.
inline constexpr std::size_t kBusMaxMessageSize = kBusHeaderSize + kBusMaxBlocks * (1 + kBusMaxBlockSize);

/// One region of a grid file.
struct GridRegion {
    std::string name;
    int grid_x = 0, grid_y = 0;  ///< map position in region units, [0, 65535]
    /// Global metres of the region's south-west corner.
    [[nodiscard]] double origin_x() const { return kRegionWidthM * grid_x; }
    [[nodiscard]] double origin_y() const { return kRegionWidthM * grid_y; }
};

/// A parsed grid file: regions in file order.
struct Grid {
    std::vector<GridRegion> regions;
    /// The region called `name`, or nullptr.
    [[nodiscard]] const GridRegion* find(std::string_view name) const;
    /// The regions next to `name` (grid positions within 1 on both axes, itself excluded), in
    /// file order; empty when `name` is unknown.
    [[nodiscard]] std::vector<const GridRegion*> neighbours(std::string_view name) const;
};

/// Parses grid file text (format in the file comment). `source` names the input in errors,
/// which give `source:line: ` and what was expected. At most 4096 regions.
Result<Grid> parse_grid(std::string_view text, std::string_view source = "grid");
/// Reads and parses a grid file; errors name the path.
Result<Grid> load_grid(const std::string& path);

/// True when `name` is a valid region name (1..64 of [A-Za-z0-9_-]).
bool valid_region_name(std::string_view name);
/// The subject a region's relay publishes its blocks on: `slanim.relay.<name>.blocks`.
std::string bus_subject(std::string_view region);

/// A decoded bus message; `blocks` are views into the message bytes.
struct BusMessage {
    Uuid sender;
    bool has_position = false;
    double x = 0, y = 0, z = 0;  ///< global metres
    std::vector<std::span<const std::uint8_t>> blocks;
};

/// Why a bus message was rejected.
enum class BusFault : std::uint8_t {
    Oversize,     ///< longer than kBusMaxMessageSize
    Short,        ///< shorter than its header
    Magic,        ///< wrong magic/version byte
    Kind,         ///< kind other than 1
    Sender,       ///< null sender id
    Flags,        ///< unknown flag bits
    Position,     ///< a non-finite coordinate, or non-zero coordinates with no position
    BlockCount,   ///< count 0 or over kBusMaxBlocks
    BlockLength,  ///< a block of length 0, over kBusMaxBlockSize, or running past the end
    Trailing,     ///< bytes after the last block
};
/// "oversize", "short", "magic", "kind", "sender", "flags", "position", "block count",
/// "block length", "trailing bytes".
const char* bus_fault_name(BusFault f);

/// Validates the framing of a bus message and decodes it (the blocks' contents are checked by
/// the receiving relay with the puppetry decoder). Errors give the byte offset and the rule;
/// `*fault`, when given, says which. Never reads outside `bytes`; `out.blocks` is reused.
Result<bool> decode_bus_message(std::span<const std::uint8_t> bytes, BusMessage& out,
                                BusFault* fault = nullptr);

/// Encodes a bus message into `out` (cleared first). Errors: null sender, non-finite position,
/// 0 or more than kBusMaxBlocks blocks, a block empty or longer than kBusMaxBlockSize.
Result<std::size_t> encode_bus_message(const Uuid& sender, bool has_position, double x, double y,
                                       double z,
                                       std::span<const std::span<const std::uint8_t>> blocks,
                                       std::vector<std::uint8_t>& out);

}  // namespace slanim

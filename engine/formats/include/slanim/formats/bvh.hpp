// SPDX-License-Identifier: MIT
// The BVH (Biovision hierarchy) text format: a raw model, a parser and a writer.
//
// BvhMotion is the raw model of one file, the input of a BVH → .anim importer (spec §8, what
// LLBVHLoader reads). It keeps everything the file says, unconverted: joint names as written,
// OFFSETs and End Site offsets in the file's units (usually inches), each joint's channels in
// file order, every frame value as written (degrees for rotation channels, file units for
// position channels), and the non-empty lines some tools append after the last frame. Only the
// layout is not kept: write_bvh writes a canonical text, and parse_bvh(write_bvh(m)) == m for
// every motion parse_bvh returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/core/math.hpp"
#include "slanim/core/result.hpp"

namespace slanim {

/// One animated degree of freedom of a joint, as named after `CHANNELS n`.
enum class BvhChannel : std::uint8_t { Xposition, Yposition, Zposition, Xrotation, Yrotation,
                                       Zrotation };

/// The channel's name as written in a file ("Xposition" … "Zrotation").
std::string_view bvh_channel_name(BvhChannel c);

/// A ROOT or JOINT block. End Sites are not joints: an End Site block is recorded on the joint
/// that contains it.
struct BvhJoint {
    std::string name;  ///< The rest of the ROOT/JOINT line, trimmed (may contain spaces).
    int parent = -1;   ///< Index in BvhMotion::joints of the enclosing joint; −1 for the root.
    Vec3 offset;       ///< OFFSET x y z, in file units.
    /// The CHANNELS list in file order: 0 to 6 channels, each at most once, in any order.
    std::vector<BvhChannel> channels;
    bool has_end_site = false;  ///< The joint contains an `End Site` block (at most one).
    Vec3 end_site_offset;       ///< The End Site's OFFSET, in file units; zero when absent.
    /// 1-based line of the ROOT/JOINT keyword in the parsed text; −1 when not parsed. Source
    /// location only: operator== ignores it (a written file has its own layout).
    int line = -1;

    /// Equal data: every field but `line`.
    friend bool operator==(const BvhJoint& a, const BvhJoint& b) {
        return a.name == b.name && a.parent == b.parent && a.offset == b.offset &&
               a.channels == b.channels && a.has_end_site == b.has_end_site &&
               a.end_site_offset == b.end_site_offset;
    }
};

/// The raw model of one BVH file.
struct BvhMotion {
    /// The joints in file order (depth first, a parent before its children), joints[0] is the
    /// single ROOT.
    std::vector<BvhJoint> joints;
    int num_frames = 0;       ///< `Frames:` — every frame is stored, frame 0 included.
    float frame_time = 0.f;   ///< `Frame Time:`, seconds per frame (> 0).
    /// num_frames × total_channels() values, row-major: frame f's values start at
    /// f × total_channels(), then joint by joint in file order, each joint's channels in its
    /// CHANNELS order. Rotation channels are Euler angles in degrees, position channels are in
    /// file units (usually inches).
    std::vector<float> values;
    /// The non-blank lines after the last frame (some tools append key lists or notes there),
    /// verbatim without their line terminator. Blank lines there are not kept.
    std::vector<std::string> trailing_lines;

    /// Channels per frame: the sum of every joint's channel count.
    [[nodiscard]] std::size_t total_channels() const;
    /// Index within a frame's row of joint `joint`'s first channel (O(joint)).
    /// Precondition: 0 ≤ joint < joints.size().
    [[nodiscard]] std::size_t channel_offset(int joint) const;
    /// The values of frame `frame`. Precondition: 0 ≤ frame < num_frames and values holds
    /// num_frames × total_channels() values.
    [[nodiscard]] std::span<const float> frame_values(int frame) const;
    /// The value of channel `channel_index` (an index into joints[joint].channels) in frame
    /// `frame`. Preconditions as above, and 0 ≤ channel_index < joints[joint].channels.size().
    [[nodiscard]] float value(int frame, int joint, int channel_index) const;
    /// Index of the first joint named `name` (exact match), or −1.
    [[nodiscard]] int find_joint(std::string_view name) const;

    friend bool operator==(const BvhMotion&, const BvhMotion&) = default;
};

/// Limits parse_bvh enforces (a file beyond them is rejected with an error naming the limit).
inline constexpr int kBvhMaxJoints = 1024;        ///< ROOT + JOINT blocks.
inline constexpr int kBvhMaxDepth = 256;          ///< Nested joints; the ROOT is depth 1.
inline constexpr int kBvhMaxFrames = 1'000'000;   ///< `Frames:` upper bound.
inline constexpr long long kBvhMaxValues = 100'000'000;  ///< Frames × channels per frame.

/// Parses BVH text.
///
/// Accepted:
///  * CRLF, LF or CR line endings (mixed too), spaces and tabs (also \v, \f) as separators,
///    blank lines anywhere, a leading UTF-8 byte order mark (dropped);
///  * keywords in any letter case; `Frames:` and `Frame Time:` with any whitespace around the
///    words and the colon (also none); a `{` at the end of a ROOT, JOINT or End Site line;
///  * `HIERARCHY`, one `ROOT name`, nested `JOINT name` blocks, each with `OFFSET x y z` then
///    `CHANNELS n` with n in 0…6 distinct channel names in any order; at most one `End Site`
///    block (`OFFSET` only) per joint, before, between or after its child joints;
///  * `MOTION`, `Frames: N` (1 ≤ N ≤ 1,000,000), `Frame Time: t` (finite, > 0), then the
///    frames. A frame starts on a new line and may wrap over several lines; a line never holds
///    values of two frames. Then any lines (kept, when not blank, in trailing_lines).
///  * Numbers are read with std::from_chars, independent of the locale: decimal with optional
///    sign (a leading '+' is accepted), fraction and exponent ("-0", "1.", ".5", "+1.5",
///    "1e-5", "2E+3"), rounded to the nearest float; a magnitude too small for a float becomes
///    0 or a subnormal. Rejected: hexadecimal, "1,5", "inf", "nan", magnitudes above the
///    float range or below the double range ("1e-400").
///
/// On failure the Error has `line` (1-based) and a message "line L, column C: …" (C 1-based,
/// in bytes, a tab counts as one) naming what was expected and what was found, e.g.
/// "line 12, column 5: expected '{' after the JOINT name, found 'OFFSET'". Rejected: a missing
/// HIERARCHY, ROOT or MOTION; unbalanced braces; a second ROOT; a bad CHANNELS count, an unknown
/// or repeated channel name; a non-number or non-finite number; Frames < 1 or > 1,000,000;
/// Frame Time ≤ 0 or non-finite; a frame with too few or too many values ("frame 37 has 45
/// values, expected 48"; messages count frames from 1, BvhMotion from 0); fewer frames than
/// `Frames:` says; more than kBvhMaxJoints joints; nesting deeper than kBvhMaxDepth;
/// Frames × channels above kBvhMaxValues. Never throws (but for std::bad_alloc), never reads
/// past the input, no recursion.
Result<BvhMotion> parse_bvh(std::string_view text);

/// Writes canonical BVH text: LF line endings, one tab per nesting level, `OFFSET` and
/// `CHANNELS` on their own lines, End Site after the child joints, `Frames: N`,
/// `Frame Time: t`, one frame per line with values separated by single spaces (no frame lines
/// when there are no channels), then the trailing lines. Numbers use the shortest text that reads back to the same float
/// (std::to_chars). parse_bvh(write_bvh(m)) == m for every motion parse_bvh returns.
/// Precondition for a readable result: `m` satisfies what parse_bvh guarantees (joints in
/// depth-first order with parent < index, values.size() == num_frames × total_channels(),
/// trailing lines without line breaks); other input never crashes the writer.
std::string write_bvh(const BvhMotion& m);

/// Reads and parses a BVH file. Errors start with the path.
Result<BvhMotion> load_bvh(const std::string& path);
/// Writes write_bvh(m) to `path` atomically (write_file_atomic). Errors name the path.
Result<bool> save_bvh(const std::string& path, const BvhMotion& m);

}  // namespace slanim

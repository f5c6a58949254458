// SPDX-License-Identifier: MIT
// The `.anim` binary format (LLKeyframeMotion::deserialize / serialize, spec §1).
//
// RawMotion is the editable raw model: it keeps the file's quantized codes and every header
// field as stored, so parse → write of an unmodified file is byte-identical (constraint volume
// name fields and trailing bytes included). Decoding to SI units lives in anim_codec.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/core/math.hpp"
#include "slanim/core/result.hpp"

namespace slanim {

class Skeleton;

/// One version-1.0 key: U16 time over [0, duration] and U16 x, y, z over [−1, 1] (rotation,
/// imaginary part of a w ≥ 0 unit quaternion) or [−5, 5] m (position).
struct RawKey {
    std::uint16_t time = 0, x = 0, y = 0, z = 0;
    friend bool operator==(const RawKey&, const RawKey&) = default;
};

/// One legacy (version 0.1) key: F32 time in seconds, then Euler degrees (rotation, converted
/// with mayaQ(x, y, z, ZYX)) or metres (position, clamped to ±5 m when decoded).
struct LegacyKey {
    float time = 0.f;
    Vec3 value;
    friend bool operator==(const LegacyKey&, const LegacyKey&) = default;
};

struct RawJoint {
    std::string name;          ///< As stored (may be an alias; decode resolves it).
    std::int32_t priority = 0; ///< −1 = use the motion's base priority.
    std::vector<RawKey> rot_keys, pos_keys;           ///< version 1.0
    std::vector<LegacyKey> legacy_rot_keys, legacy_pos_keys;  ///< version 0.1 only
    friend bool operator==(const RawJoint&, const RawJoint&) = default;
};

struct RawConstraint {
    std::uint8_t chain_length = 0;  ///< Joints above the source volume's joint that may move.
    std::uint8_t type = 0;          ///< ConstraintType
    std::array<char, 16> source_volume{};  ///< Fixed 16-byte field, NUL padded as stored.
    Vec3 source_offset;  ///< In the source volume's unit-sphere space.
    std::array<char, 16> target_volume{};  ///< "GROUND" or a collision volume name.
    Vec3 target_offset;
    Vec3 target_dir;  ///< Read but never used by the viewer.
    float ease_in_start = 0.f, ease_in_stop = 0.f, ease_out_start = 0.f, ease_out_stop = 0.f;

    /// The name as the viewer reads it: the 16 bytes NUL-terminated.
    [[nodiscard]] std::string source_name() const;
    [[nodiscard]] std::string target_name() const;
    friend bool operator==(const RawConstraint&, const RawConstraint&) = default;
};

/// Makes a NUL-padded 16-byte volume field like the viewer's snprintf (≤ 15 characters + NUL).
std::array<char, 16> make_volume_field(std::string_view name);

/// The editable raw model of one `.anim` file.
struct RawMotion {
    std::uint16_t version = 1, sub_version = 0;  ///< (1,0), or (0,1) for the legacy format.
    std::int32_t base_priority = 0;
    float duration = 0.f;       ///< seconds
    std::string emote_name;     ///< may be empty
    float loop_in = 0.f, loop_out = 0.f;  ///< seconds
    std::int32_t loop = 0;      ///< non-zero = looping
    float ease_in = 0.f, ease_out = 0.f;  ///< seconds
    std::uint32_t hand_pose = 0;
    std::vector<RawJoint> joints;
    /// The stored constraint count. When it is < 0 or > 10 the viewer ignores all constraint
    /// data; `constraints` is then empty and the bytes stay in `trailing`.
    std::int32_t num_constraints = 0;
    std::vector<RawConstraint> constraints;
    /// Bytes after the last field read. The viewer ignores them; they are kept for exact
    /// round trips.
    std::vector<std::uint8_t> trailing;

    [[nodiscard]] bool is_legacy() const { return version == 0 && sub_version == 1; }
    friend bool operator==(const RawMotion&, const RawMotion&) = default;
};

enum class Severity : std::uint8_t { Error, Warning };

/// One finding of the reader. `rule` is a stable identifier (see docs/anim-validation.md);
/// `offset` is the byte offset of the offending field.
struct Diagnostic {
    Severity severity = Severity::Error;
    std::string rule;
    std::string message;
    long long offset = -1;
    int joint = -1;       ///< joint entry index in the file, or −1
    int key = -1;         ///< key index within the joint, or −1
    int constraint = -1;  ///< constraint index, or −1

    /// "error: [rule] message (joint 3 'mHead', key 7, at byte 1234)".
    [[nodiscard]] std::string describe() const;
};

struct ParseOptions {
    /// Skeleton for joint and collision-volume names; null = the embedded default.
    const Skeleton* skeleton = nullptr;
    /// `deserialize(..., allow_invalid_joints)`: playback passes true (unknown joints are a
    /// warning), upload passes false (unknown joints are an error).
    bool allow_invalid_joints = true;
    /// The asset UUID, when known: an emote naming the motion itself is rejected, and the two
    /// female-land assets are forced not to loop (SL-17206).
    std::string asset_id;
};

/// Result of reading one file: the raw model when the bytes were structurally complete, and
/// every diagnostic. `ok()` is what the viewer's deserialize would return.
struct ParseResult {
    bool has_motion = false;
    RawMotion motion;
    std::vector<Diagnostic> diagnostics;

    [[nodiscard]] bool ok() const;
    [[nodiscard]] const Diagnostic* first_error() const;
    [[nodiscard]] std::size_t count(Severity s) const;
};

/// Reads and validates `.anim` bytes with every reject rule of the viewer's deserialize, in its
/// order (spec §1.5), each reported with its byte offset; plus warnings for what the viewer
/// accepts but changes or ignores (spec §1.2, §11.2). Structural errors (truncation, an
/// unknown version) stop the read; semantic errors are reported and reading continues so that
/// all of them are listed. Never throws, never reads out of bounds.
ParseResult parse_anim(std::span<const std::uint8_t> bytes, const ParseOptions& options = {});

/// Serializes a raw motion. A parsed, unmodified motion comes out byte-identical. A legacy
/// (0.1) motion is written as version 1.0 with the viewer's encoding (see anim_codec.hpp).
std::vector<std::uint8_t> write_anim(const RawMotion& motion);

/// Case-insensitive lookup of a built-in animation state name (`gAnimLibrary` names such as
/// "express_smile"), as `LLAnimationLibrary::stringToAnimState` without the UUID fallback.
bool is_builtin_animation_name(std::string_view name);
/// True for a canonical 36-character UUID string (what the viewer's emote lookup also accepts).
bool is_uuid_string(std::string_view s);

}  // namespace slanim

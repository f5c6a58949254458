// SPDX-License-Identifier: MIT
// Puppetry event blocks: the raw model of live joint data and its two byte layouts.
//
// SL puppetry streams joint data between viewers through the simulator, in the `TypeData` field
// of the `PhysicalAvatarEventList` blocks of `AgentAnimation` / `AvatarAnimation` (spec §9.1).
// A block is at most 255 bytes (a 1-byte length prefix) and holds one or more events; one event
// (a timestamp and a list of joint events) may be split over several blocks with the same
// timestamp. An event's payload (its joint records) is at most 200 bytes: the viewer's receiver
// copies it into a 200-byte buffer without checking (spec §9.2), so a longer one would overflow
// it. Two layouts exist and are selected explicitly:
//
//  * PuppetryLayout::Viewer — what the viewer branches implement (llpuppetevent.cpp,
//    LLPuppetEvent::pack/unpack, spec §9.2). Little-endian:
//      S32 timestamp_ms, U16 joint count, S32 payload length, then per joint:
//      S16 joint id, U8 flags (PuppetryFlag), then U16 x,y,z rotation if LocalRot|TargetRot,
//      U16 x,y,z position if LocalPos|TargetPos, U16 x,y,z scale if LocalScale.
//    Every component is quantized over [−5, 5] (LL_MAX_PELVIS_OFFSET), rotations included.
//  * PuppetryLayout::Documented — the layout of the "Puppetry Network Control" page.
//    Little-endian: S32 timestamp_ms, U16 joint count, S32 payload length ("size of event
//    block": slanim reads it as the byte length of the joint records that follow, the field the
//    viewer layout has at the same offset), then per joint: S16 joint id, U8 mask
//    (PuppetryDocMask), then F32 x,y,z position if 0x01, F32 x,y,z orientation (imaginary part,
//    w ≥ 0) if 0x04. Scale (0x10) is "reserved, not yet supported" there and is rejected.
//
// The raw model (PuppetryEvent) is layout-neutral and uses the viewer's flag bits (llik.h).
// Units: metres, unit quaternions x,y,z,w; frames SL (X forward, Y left, Z up): a LocalPos /
// LocalRot value is in the joint's parent frame (like an `.anim` key), a TargetPos / TargetRot
// value is an IK target in the avatar's root (pelvis) frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "slanim/core/math.hpp"
#include "slanim/core/result.hpp"

namespace slanim {

/// The viewer's joint event flags (llik.h CONFIG_FLAG_*; the wire field is one byte).
enum PuppetryFlag : std::uint8_t {
    kPuppetLocalPos = 0x01,           ///< position in the parent frame
    kPuppetLocalRot = 0x02,           ///< rotation in the parent frame
    kPuppetLocalScale = 0x04,         ///< scale (rider branch applies it)
    kPuppetDisableConstraint = 0x08,  ///< no data
    kPuppetTargetPos = 0x10,          ///< position target in the root frame
    kPuppetTargetRot = 0x20,          ///< rotation target in the root frame
    kPuppetHasDelegated = 0x40,       ///< experimental, no data
    kPuppetEnableReporting = 0x80,    ///< DRTVWR-558 / rider, no data
};
/// Flags that carry a rotation / a position (LLIK::MASK_ROT / MASK_POS).
inline constexpr std::uint8_t kPuppetMaskRot = kPuppetLocalRot | kPuppetTargetRot;
inline constexpr std::uint8_t kPuppetMaskPos = kPuppetLocalPos | kPuppetTargetPos;

/// The documented layout's mask bits ("Puppetry Network Control").
enum PuppetryDocMask : std::uint8_t {
    kDocPosition = 0x01,           ///< 12-byte position follows
    kDocPositionParent = 0x02,     ///< the position is in the parent frame (else root frame)
    kDocOrientation = 0x04,        ///< 12-byte orientation (imaginary xyz, w ≥ 0) follows
    kDocOrientationParent = 0x08,  ///< the orientation is in the parent frame (else root frame)
    kDocScaleReserved = 0x10,      ///< reserved for scale, not supported: rejected
    kDocDisableConstraint = 0x80,
};

enum class PuppetryLayout : std::uint8_t {
    Viewer,      ///< U16 components quantized over ±5 (llpuppetevent.cpp)
    Documented,  ///< F32 triples, the wiki's mask bits
};

/// Largest TypeData block (its length prefix is one byte).
inline constexpr std::size_t kPuppetryMaxBlockBytes = 255;
/// Event header: S32 timestamp, U16 joint count, S32 payload length.
inline constexpr std::size_t kPuppetryHeaderBytes = 10;
/// Largest event payload: `LLPuppetEvent::unpack` copies the payload into a 200-byte static
/// buffer (`PUPPET_MAX_EVENT_BYTES`) without checking its length (spec §9.2, §11.2).
inline constexpr std::size_t kPuppetryMaxPayloadBytes = 200;
/// Largest block of one event a viewer can receive: header + kPuppetryMaxPayloadBytes = 210.
inline constexpr std::size_t kPuppetryMaxEventBlockBytes = kPuppetryHeaderBytes + kPuppetryMaxPayloadBytes;
/// Smallest `event_size` the viewer packs with (LLPuppetMotion::packEvents).
inline constexpr int kPuppetryMinEventSize = 30;
/// Range of every quantized component of the viewer layout (LL_MAX_PELVIS_OFFSET).
inline constexpr float kPuppetryQuantRange = 5.f;

/// One joint's data in an event.
struct PuppetryJointEvent {
    /// LLJoint::getJointNum (spec §7.2: 0 = mPelvis … 132); any S16 is carried, the receiver
    /// drops ids it does not know.
    std::int16_t joint_id = 0;
    std::uint8_t flags = 0;            ///< PuppetryFlag bits
    Quat rotation = Quat::identity();  ///< if flags & kPuppetMaskRot: unit quaternion
    Vec3 position;                     ///< if flags & kPuppetMaskPos: metres
    Vec3 scale;                        ///< if flags & kPuppetLocalScale

    [[nodiscard]] bool has_rotation() const { return (flags & kPuppetMaskRot) != 0; }
    [[nodiscard]] bool has_position() const { return (flags & kPuppetMaskPos) != 0; }
    [[nodiscard]] bool has_scale() const { return (flags & kPuppetLocalScale) != 0; }

    /// Equal flags and equal values of the components the flags carry (others are ignored).
    friend bool operator==(const PuppetryJointEvent& a, const PuppetryJointEvent& b);
};

/// One event: a sender timestamp and joint events (LLPuppetEvent).
struct PuppetryEvent {
    /// Sender clock, milliseconds (the viewer sends its process uptime × 1000, truncated).
    std::int32_t timestamp_ms = 0;
    std::vector<PuppetryJointEvent> joints;

    friend bool operator==(const PuppetryEvent&, const PuppetryEvent&) = default;
};

/// Encoded blocks in one buffer (no allocation per block). Block i is bytes
/// [offset(i), offset(i + 1)).
class PuppetryBlocks {
public:
    [[nodiscard]] std::size_t size() const { return ends_.size(); }
    [[nodiscard]] bool empty() const { return ends_.empty(); }
    [[nodiscard]] std::span<const std::uint8_t> operator[](std::size_t i) const {
        const std::size_t b = i == 0 ? 0 : ends_[i - 1];
        return {bytes_.data() + b, ends_[i] - b};
    }
    /// All blocks back to back.
    [[nodiscard]] std::span<const std::uint8_t> bytes() const { return bytes_; }
    /// Removes every block, keeps the capacity.
    void clear() {
        bytes_.clear();
        ends_.clear();
    }
    /// Appends a copy of `block`.
    void append(std::span<const std::uint8_t> block) {
        bytes_.insert(bytes_.end(), block.begin(), block.end());
        ends_.push_back(bytes_.size());
    }

private:
    friend class PuppetryEncoder;
    std::vector<std::uint8_t> bytes_;
    std::vector<std::size_t> ends_;
};

struct PuppetryEncodeOptions {
    PuppetryLayout layout = PuppetryLayout::Viewer;
    /// The capability's `event_size`: blocks are at most min(event_size, 210) bytes
    /// (kPuppetryMaxEventBlockBytes: the viewer's packEvents caps at 255, which lets a payload
    /// overflow its receivers' 200-byte buffer; slanim splits at 210 instead). Must be
    /// ≥ kPuppetryMinEventSize (the viewer does not send below that).
    int event_size = 255;
    /// Viewer layout only: budget 12 bytes per vector when deciding where to split, like
    /// LLPuppetJointEvent::getSize, so that splits fall where the viewer's do. Otherwise the
    /// exact record sizes are used and blocks are filled completely.
    bool viewer_size_budget = false;
};

/// Encodes events into blocks (LLPuppetMotion::packEvents / LLPuppetEvent::pack): each event
/// starts a new block; its joint records go in order into the current block while they fit,
/// then into a new block with the same timestamp (so one block never holds two events, and the
/// viewer's receiver, which reads one event per block, reads everything). An event without
/// joints is one header-only block.
///
/// Viewer layout values are quantized exactly like the viewer: the rotation is ll_normalized,
/// negated when w < 0, quantized as LLQuaternion::quantize16(−5, 5) (round to nearest, decode,
/// ll_normalize) and then floor-encoded; positions and scales are quantize16(−5, 5) then
/// floor-encoded (values outside ±5 m are clamped, as in the viewer). Documented layout values
/// are written as F32: the rotation ll_normalized with w ≥ 0, its x, y, z.
///
/// Errors (Error::offset is −1; the message names the event and joint index): event_size below
/// kPuppetryMinEventSize; a non-finite value in a component the flags carry; a joint record
/// larger than an empty block; more than 65,535 joint records in one block (impossible at 255
/// bytes); for the documented layout, flags it cannot express (LocalScale, HasDelegated,
/// EnableReporting, or both the local and the target bit of a component). On error `out` is
/// left as it was.
class PuppetryEncoder {
public:
    explicit PuppetryEncoder(PuppetryEncodeOptions options = {}) : o_(options) {}
    [[nodiscard]] const PuppetryEncodeOptions& options() const { return o_; }

    /// Appends the blocks of `event` to `out`; returns how many were appended.
    Result<std::size_t> encode(const PuppetryEvent& event, PuppetryBlocks& out) const;
    /// Appends the blocks of every event, in order; returns how many were appended.
    Result<std::size_t> encode(std::span<const PuppetryEvent> events, PuppetryBlocks& out) const;

private:
    PuppetryEncodeOptions o_;
};

/// Decodes one block (its TypeData bytes, without the length prefix) and appends its events
/// to `out`; returns how many were appended. A block holds one or more events back to back
/// (the viewer's sender may pack several; unlike the viewer's receiver, every one is read).
///
/// Validated, with the reason and the byte offset within the block on failure (then `out` is
/// left as it was): the block is 10…255 bytes; each event header is complete; the payload
/// length is 0…200 (kPuppetryMaxPayloadBytes: a viewer copies the payload into a 200-byte
/// buffer without checking, spec §9.2, so a longer one is refused at the length field, offset
/// 6 of the event, in both layouts) and within the block; the joint records fill the payload
/// exactly — exactly `joint count` records, none truncated, no byte left over; documented
/// layout: no reserved mask bit (0x10, 0x20, 0x40), no frame bit without its data bit (0x02
/// without 0x01, 0x08 without 0x04), finite floats, an orientation with |xyz|² ≤ 1.0001. No
/// read ever goes past the block and there is no intermediate buffer. (Records are 3 + 6k or
/// 3 + 12k bytes, so a valid payload is a multiple of 3: the largest is 198 bytes.)
///
/// Decoded values: viewer layout as LLPuppetJointEvent::unpack (U16_to_F32 over ±5 with its
/// zero snap; rotation w = sqrt(1 − |xyz|²), or xyz normalized and w = 0 when |xyz|² > 1);
/// documented layout: the floats, w = sqrt(1 − |xyz|²) (xyz normalized and w = 0 when
/// 1 < |xyz|² ≤ 1.0001). Mask bits of the documented layout are translated into PuppetryFlag.
Result<std::size_t> decode_puppetry_block(std::span<const std::uint8_t> block,
                                          PuppetryLayout layout, std::vector<PuppetryEvent>& out);

/// What encode-then-decode gives for `event` in `layout` (the values a receiver sees), without
/// encoding. Precondition: the encoder accepts `event` with that layout.
PuppetryEvent puppetry_quantized(const PuppetryEvent& event, PuppetryLayout layout);

/// Size in bytes of one joint record in `layout` (3 + 6 or 12 per vector the flags carry).
/// For the documented layout, flags are the PuppetryFlag bits as in the model.
std::size_t puppetry_record_size(std::uint8_t flags, PuppetryLayout layout);

}  // namespace slanim

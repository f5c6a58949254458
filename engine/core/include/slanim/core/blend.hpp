// SPDX-License-Identifier: MIT
// Per-joint priority blending: LLPoseBlender + LLJointStateBlender (spec §3.4).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "slanim/core/math.hpp"
#include "slanim/core/pose.hpp"
#include "slanim/core/track_usage.hpp"

namespace slanim {

/// One joint state offered to the blender (`LLJointState` as seen by `addJointState`).
/// Pointers refer to the owner's buffers and must stay valid until blend_and_apply().
struct JointStateRef {
    const Vec3* position = nullptr;  ///< metres, parent frame (used when usage has POS)
    const Quat* rotation = nullptr;  ///< local rotation (used when usage has ROT)
    const Vec3* scale = nullptr;     ///< local scale (used when usage has SCALE)
    float weight = 0.f;              ///< the motion's pose weight this frame
    std::int8_t priority = 0;        ///< resolved priority (never −1)
    std::uint8_t usage = 0;          ///< kUsagePos | kUsageRot | kUsageScale
    bool additive = false;           ///< ADDITIVE_BLEND motion
};

/// The tracks of one 16-joint block of the skeleton (joints 16·block .. 16·block + 15) in a
/// LayerShape: bit i of `mask` set when joint 16·block + i has a track; those tracks are
/// `first`, `first` + 1, ... in ascending joint order. `priority` is their common priority
/// when they all have the same one (a motion's usual case), −1 when they differ: blocks where
/// every layer has one priority are folded layer by layer in slot order, without per-joint
/// ranking (PoseBlender). `usage` is the union of their usages (a block of rotation-only tracks
/// reads no positions), `usage_all` the intersection (a layer whose tracks cover the block with
/// rotations and positions replaces the pose there: the pose need not be read).
struct LayerBlock {
    std::uint16_t block = 0;
    std::uint16_t mask = 0;
    std::uint16_t first = 0;
    std::int8_t priority = -1;
    std::uint8_t usage = 0;
    std::uint8_t usage_all = 0;
};

/// What does not change from frame to frame in a layer of joint states (one motion's tracks):
/// per track the joint, its resolved priority and its usage, tracks sorted by joint, each joint
/// at most once; and where they fall in 16-joint blocks. Built once per motion (MotionClip
/// keeps one); immutable afterwards and shareable between threads.
struct LayerShape {
    std::vector<std::int16_t> joints;     ///< per track: skeleton joint index, strictly ascending
    std::vector<std::int8_t> priorities;  ///< per track: resolved priority (0-127, never −1)
    std::vector<std::uint8_t> usages;     ///< per track: kUsagePos | kUsageRot | kUsageScale
    std::vector<LayerBlock> blocks;       ///< the non-empty blocks, ascending

    /// Fills the shape from per-track arrays of equal length. Returns false (leaving the shape
    /// empty) when the lengths differ, a joint is negative, the joints are not strictly
    /// ascending, or a priority is negative. Allocates.
    bool build(std::span<const std::int16_t> joints, std::span<const std::int8_t> priorities,
               std::span<const std::uint8_t> usages);
    [[nodiscard]] std::size_t size() const { return joints.size(); }
};

/// One layer for PoseBlender::add_layer: a motion's joint states this frame, per track of its
/// shape (ozz's BlendingJob::Layer, with the viewer's per-joint priorities). The shape and the
/// arrays must stay valid until the blender has used them (PoseBlender::add_layer says when).
struct BlendLayer {
    const LayerShape* shape = nullptr;
    /// Per track: local rotation (unit quaternion, parent frame), or null when no track has ROT.
    const Quat* rotations = nullptr;
    /// Per track: local position in metres (parent frame, SL axes: X forward, Y left, Z up),
    /// or null when no track has POS.
    const Vec3* positions = nullptr;
    /// Per track: local scale (unitless factors), or null when no track has SCALE.
    const Vec3* scales = nullptr;
    float weight = 0.f;     ///< the motion's pose weight this frame, [0, 1] (0: kept in a slot, skipped)
    bool additive = false;  ///< ADDITIVE_BLEND motion
};

/// A joint state as the blender holds it (values copied by PoseBlender::add).
struct QueuedJointState {
    Quat rotation;      ///< unspecified when usage has no ROT
    Vec3 position;      ///< unspecified when usage has no POS
    Vec3 scale;         ///< unspecified when usage has no SCALE
    float weight = 0.f;
    std::int8_t priority = 0;
    std::uint8_t usage = 0;
    bool additive = false;
};

/// Collects joint states per joint in up to 6 slots ordered by descending priority (newest
/// first among equals, because callers offer newest motions first), then blends them into the
/// avatar's local pose with the viewer's capacity-limited weighted average, first-contributor
/// copy and additive rules. Joints nobody offered a state keep their previous transform.
///
/// Layout (SoA, like ozz's BlendingJob inputs): per slot, one float array per component
/// (rotation x/y/z/w, position x/y/z, scale x/y/z, weight) over the joints, padded to a multiple
/// of 16, plus priority and usage bytes. add() copies the state's values into its slot (so the
/// pointers of a JointStateRef need only be valid during the call); blend_and_apply() folds the
/// slots with contiguous loads, one lane per joint, on the instruction set active_isa() names
/// (slanim/core/isa.hpp: 16 joints per AVX-512 register, 8 per AVX2 register, 4 per SSE2
/// register, or the scalar code), performing for every lane the float operations of the
/// viewer's scalar `LLJointStateBlender::blendJointStates` in the same order, so results are
/// bit-identical to it on every one; joints holding an additive or scaled state take the scalar
/// code. A motion is best offered whole (add_layer): with nothing else offered in the frame it
/// is folded without going through the slots at all (any vector instruction set), else its
/// states are inserted (a 16-joint block at a time with AVX-512). Not thread-safe, including
/// the const members (count and slot insert recorded layers): one blender per thread (the
/// World keeps one per worker); change the instruction set (set_active_isa) only between
/// frames.
class PoseBlender {
public:
    static constexpr int kSlots = 6;  ///< JSB_NUM_JOINT_STATES

    /// Sizes the blender for a skeleton (allocates). Clears pending states.
    void resize(int num_joints);
    [[nodiscard]] int num_joints() const { return num_joints_; }

    /// `LLJointStateBlender::addJointState`. Returns false when the state was dropped because
    /// all six slots hold states of priority ≥ its own, or `joint` is out of range. Copies the
    /// state's values (only the pointers its usage names are read). No allocation.
    bool add(int joint, const JointStateRef& state) {
        if (num_deferred_) flush_deferred();  // states keep their order with earlier layers
        if (static_cast<unsigned>(joint) < static_cast<unsigned>(num_joints_)) {
            const auto j = static_cast<std::size_t>(joint);
            const std::uint8_t n = counts_[j];
            // Fast path: states arriving in non-increasing priority order are appended.
            if (n == 0 || (n < kSlots && state.priority <= priorities_[(n - 1u) * stride_ + j])) {
                store(n, j, state);
                counts_[j] = static_cast<std::uint8_t>(n + 1);
                return true;
            }
        }
        return add_slow(joint, state);
    }

    /// add() for every track of the layer in track order: the same states end in the same
    /// slots, with the same results. A component whose array is null counts as absent from
    /// every track's usage; tracks whose joint is ≥ num_joints() are dropped, as add() drops
    /// them; a null `layer.shape` adds nothing. No allocation.
    ///
    /// With a vector instruction set (active_isa() above Isa::Scalar) the layer is only
    /// recorded (up to kMaxDeferred; more are inserted as they come), so **its arrays and shape
    /// must stay valid until the next blend_and_apply(), add(), count() or slot() call**. When
    /// a frame's states all come from such layers (no add(), no additive layer, no scales),
    /// blend_and_apply() folds them straight from the layers' arrays, 16 (AVX-512), 8 (AVX2)
    /// or 4 (SSE2) joints at a time, ranking each joint's states by the viewer's slot rule
    /// (priority, then order offered; the first six kept) instead of storing them in slots;
    /// otherwise the layers are inserted into the slots (AVX-512: a 16-joint block at a time,
    /// masked vector stores with the slot rule evaluated per lane; else add() per track)
    /// before the other calls run.
    void add_layer(const BlendLayer& layer);
    /// Layers recorded at most before they are inserted into the slots.
    static constexpr int kMaxDeferred = 16;

    /// `blendJointStates(apply_now = true)` for every joint that received a state this frame,
    /// writing `pose` (spans of at least num_joints() elements; a joint's scale only when one of
    /// its states carried a scale: otherwise the viewer's sum leaves it unchanged); then clears
    /// the slots. No allocation.
    void blend_and_apply(const LocalPose& pose);

    /// Number of states queued for `joint` (for tests and overlays). Inserts recorded layers
    /// first (add_layer).
    [[nodiscard]] int count(int joint) const {
        if (num_deferred_) const_cast<PoseBlender*>(this)->flush_deferred();
        return counts_[static_cast<std::size_t>(joint)];
    }
    /// The queued state in `slot` of `joint` (slot < count(joint)). Inserts recorded layers
    /// first (add_layer).
    [[nodiscard]] QueuedJointState slot(int joint, int slot) const;

    /// Component arrays of a slot (the kernel's view; blend.cpp).
    enum Field : int { kRx, kRy, kRz, kRw, kPx, kPy, kPz, kSx, kSy, kSz, kWeight, kFields };

private:
    bool add_slow(int joint, const JointStateRef& state);
    void add_layer_states(const BlendLayer& layer);  // add() per track
    void flush_deferred();                           // inserts the recorded layers, in order
    /// Writes a state into slot `s` of joint `j`: only the components its usage names (the
    /// others are never read for this state). Inline: add()'s fast path runs once per state.
    void store(std::size_t s, std::size_t j, const JointStateRef& st) {
        float* base = values_.data() + s * kFields * stride_ + j;
        const std::uint8_t usage = st.usage & kUsageAll;
        if (usage & kUsageRot) {
            base[kRx * stride_] = st.rotation->x, base[kRy * stride_] = st.rotation->y;
            base[kRz * stride_] = st.rotation->z, base[kRw * stride_] = st.rotation->w;
        }
        if (usage & kUsagePos) {
            base[kPx * stride_] = st.position->x, base[kPy * stride_] = st.position->y;
            base[kPz * stride_] = st.position->z;
        }
        if (usage & kUsageScale) {
            base[kSx * stride_] = st.scale->x, base[kSy * stride_] = st.scale->y;
            base[kSz * stride_] = st.scale->z;
        }
        base[kWeight * stride_] = st.weight;
        priorities_[s * stride_ + j] = st.priority;
        flags_[s * stride_ + j] = static_cast<std::uint8_t>(usage | (st.additive ? kAdditiveFlag : 0u));
        if (st.additive || (usage & kUsageScale)) scalar_[j] = 1, any_scalar_ = true;
        slots_used_ = true;
    }
    static constexpr std::uint8_t kAdditiveFlag = 0x80;
    void move_slot(std::size_t from, std::size_t to, std::size_t joint);
    void blend_one(std::size_t joint, const LocalPose& pose) const;
    [[nodiscard]] float* field(std::size_t slot, int f) {
        return values_.data() + (slot * kFields + static_cast<std::size_t>(f)) * stride_;
    }
    [[nodiscard]] const float* field(std::size_t slot, int f) const {
        return values_.data() + (slot * kFields + static_cast<std::size_t>(f)) * stride_;
    }
    int num_joints_ = 0;
    std::size_t stride_ = 0;             // num_joints rounded up to 16
    std::vector<float> values_;          // kSlots × kFields × stride_
    std::vector<std::int8_t> priorities_;  // kSlots × stride_
    std::vector<std::uint8_t> flags_;    // kSlots × stride_: usage | kAdditiveFlag
    std::vector<std::uint8_t> counts_;   // stride_: filled slots per joint
    std::vector<std::uint8_t> scalar_;   // stride_: 1 when a state is additive or carries a scale
    bool any_scalar_ = false;            // some scalar_ entry is 1
    bool slots_used_ = false;            // some slot holds a state this frame
    std::array<BlendLayer, kMaxDeferred> deferred_{};  // recorded layers (add_layer)
    int num_deferred_ = 0;
    bool deferred_slots_ = false;  // a recorded layer is additive or has scales: slots needed
    std::vector<std::byte> fold_scratch_;  // the AVX-512 fold's running blends (blend_avx512.cpp)
};

}  // namespace slanim

// SPDX-License-Identifier: MIT
// Per-joint priority blending: LLPoseBlender + LLJointStateBlender (spec §3.4).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "slanim/core/math.hpp"

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

/// Local joint transforms of one avatar (parent frame; metres).
struct LocalPoseView {
    std::span<Vec3> positions;
    std::span<Quat> rotations;
    std::span<Vec3> scales;
};

/// Collects joint states per joint in up to 6 slots ordered by descending priority (newest
/// first among equals, because callers offer newest motions first), then blends them into the
/// avatar's local pose with the viewer's capacity-limited weighted average, first-contributor
/// copy and additive rules. Joints nobody offered a state keep their previous transform.
class PoseBlender {
public:
    static constexpr int kSlots = 6;  ///< JSB_NUM_JOINT_STATES

    /// Sizes the blender for a skeleton (allocates). Clears pending states.
    void resize(int num_joints);
    [[nodiscard]] int num_joints() const { return static_cast<int>(counts_.size()); }

    /// `LLJointStateBlender::addJointState`. Returns false when the state was dropped because
    /// all six slots hold states of priority ≥ its own. No allocation.
    bool add(int joint, const JointStateRef& state) {
        // Fast path: states arriving in non-increasing priority order are appended.
        if (static_cast<unsigned>(joint) < counts_.size()) {
            std::uint8_t& n = counts_[static_cast<std::size_t>(joint)];
            JointStateRef* s = slots_.data() + static_cast<std::size_t>(joint) * kSlots;
            if (n == 0) {
                active_.push_back(static_cast<std::int16_t>(joint));
                s[0] = state;
                n = 1;
                return true;
            }
            if (n < kSlots && state.priority <= s[n - 1].priority) {
                s[n++] = state;
                return true;
            }
        }
        return add_slow(joint, state);
    }

    /// `blendJointStates(apply_now = true)` for every joint that received a state this frame,
    /// writing `pose` (a joint's scale only when one of its states carried a scale: otherwise
    /// the viewer's sum leaves it unchanged); then clears the slots. No allocation.
    void blend_and_apply(const LocalPoseView& pose);

    /// Number of states queued for `joint` (for tests and overlays).
    [[nodiscard]] int count(int joint) const { return counts_[joint]; }
    /// The queued state in `slot` of `joint` (slot < count(joint)).
    [[nodiscard]] const JointStateRef& slot(int joint, int s) const { return slots_[joint * kSlots + s]; }

private:
    bool add_slow(int joint, const JointStateRef& state);
    void blend_one(int joint, const LocalPoseView& pose);
    struct Lanes;  // SIMD kernel state (blend.cpp)
    void lanes_begin(Lanes& g, const std::int16_t* joints, int lanes, const LocalPoseView& pose) const;
    void lanes_step(Lanes& g, int slot) const;
    void lanes_end(const Lanes& g, const LocalPoseView& pose);
    void blend_eight(const std::int16_t* joints, int count, const LocalPoseView& pose);
    std::vector<JointStateRef> slots_;   // num_joints × kSlots
    std::vector<std::uint8_t> counts_;   // filled slots per joint
    std::vector<std::int16_t> active_;   // joints with at least one state, in first-touch order
};

}  // namespace slanim

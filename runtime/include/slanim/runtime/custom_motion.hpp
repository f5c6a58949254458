// SPDX-License-Identifier: MIT
// Custom motions: joint states a host computes itself each frame, played by the motion
// controller like any motion (the viewer's LLMotion subclasses: LLHeadRotMotion,
// LLBreatheMotionRot, ...; spec §3.1–§3.4, §3.7).
//
// A CustomMotionType is the motion's id (what start/stop name, like a motion UUID) and its
// fixed properties (LLMotion's virtuals: joints and channels, priorities, blend type, ease,
// loop, duration, minimum pixel area); it creates one CustomMotion object per playing instance
// (the viewer's registry creates an LLMotion per avatar, and a fresh one when a blending
// instance is restarted and the old one is deprecated). The controller gives each instance its
// own joint states, which keep their values between frames (LLJointState objects do), and
// applies the weight rules of every motion to it: ease in/out with cubic_step, stop and
// deprecation, LOD fade, joint signatures (a fully weighted instance whose joints are all
// covered by newer motions of higher or equal priority is not updated), then the PoseBlender's
// per-joint priority slots, NORMAL or ADDITIVE, exactly as for keyframe motions.
//
// Threads: update() runs during World::step in the `sample` phase, on a worker thread, for one
// avatar at a time: never concurrently for the same instance or for the same avatar; different
// avatars' instances run concurrently. on_activate() runs on the thread that calls
// MotionController::start_custom (between steps); on_deactivate() on the thread that stops or
// deactivates the instance (a worker during step(), or the caller of stop()). An update must
// not touch other avatars' data or anything shared and mutable without its own locking; it
// should not allocate (the World's step() allocates nothing once motions are started).
//
// A C adapter is a CustomMotion subclass holding the callbacks and a user pointer:
// CustomMotionStates are plain arrays (Quat = 4 floats x, y, z, w; Vec3 = 3 floats) indexed
// like CustomMotionSpec::joints.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "slanim/core/clip.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"

namespace slanim {

enum class BlendType : std::uint8_t { Normal, Additive };

// CustomMotionStates are handed to C callbacks as plain float arrays.
static_assert(sizeof(Quat) == 4 * sizeof(float) && std::is_standard_layout_v<Quat>, "Quat = float[4]");
static_assert(sizeof(Vec3) == 3 * sizeof(float) && std::is_standard_layout_v<Vec3>, "Vec3 = float[3]");

/// One joint a custom motion drives (an `LLJointState` added by `LLMotion::addJointState`).
struct CustomJoint {
    int joint = -1;  ///< skeleton joint index
    /// kUsagePos | kUsageRot | kUsageScale (at least one). Positions: metres, parent frame;
    /// rotations: local; scales: local factors. Note (viewer rule, spec §3.3): joint
    /// signatures ignore scale, so a motion animating scale only is never re-evaluated once
    /// its weight is 1 if no other channel of it is new.
    std::uint8_t usage = kUsageRot;
    /// `LLJoint::JointPriority` of this joint, 0 (LOW) … 6, or −1 for the motion's priority.
    int priority = -1;
};

/// The fixed properties of a custom motion (LLMotion's virtual getters).
struct CustomMotionSpec {
    std::vector<CustomJoint> joints;  ///< each skeleton joint at most once
    int priority = 1;                 ///< `getPriority()`: 0 (LOW) … 6
    BlendType blend_type = BlendType::Normal;  ///< `getBlendType()`
    float ease_in = 0.f;   ///< `getEaseInDuration()`, seconds ≥ 0
    float ease_out = 0.f;  ///< `getEaseOutDuration()`, seconds ≥ 0
    bool loop = true;      ///< `getLoop()`
    /// `getDuration()`, seconds ≥ 0. A non-looping motion with a duration is stopped (eases
    /// out) once T passes activation + duration − ease_out, as any motion; 0 = runs until
    /// stopped or until update() returns false.
    float duration = 0.f;
    float min_pixel_area = 40.f;  ///< `getMinPixelArea()`: LOD fade threshold, pixels²
    bool can_deprecate = true;    ///< `canDeprecate()`
    /// Deactivation sets the rotation of every joint of the motion to identity (what
    /// `LLEyeMotion::onDeactivate` does); the next blend applies it, before other motions.
    bool identity_on_deactivate = false;
};

/// The avatar's animation data a motion may read (`LLCharacter::getAnimationData`).
struct AnimationData {
    /// "LookAtPoint" (set by `LLHUDEffectLookAt::calcTargetPosition`): the vector from the
    /// head joint to the look-at target, metres, avatar-root axes (X forward, Y left, Z up);
    /// null when the avatar has no target (`removeAnimationData`).
    const Vec3* look_at = nullptr;
};

/// What the motion's visual params should become (`setVisualParamWeight` calls of
/// LLEyeMotion): applied by the avatar's Appearance in its morph phase, when it has one.
struct AnimationOutputs {
    bool blink_set = false;  ///< Blink_Left / Blink_Right were set this frame
    float blink_left = 0.f, blink_right = 0.f;  ///< [0, 1]
};

/// What update() gets besides its joint states.
struct CustomMotionContext {
    /// Seconds since activation (`onUpdate(time)`: T − A, ≥ 0; the stop time − A on the last
    /// frame of a motion stopped past its ease out).
    float time = 0.f;
    /// This frame's controller time step (seconds, after the time factor; the interval of a
    /// reduced-rate LOD update; 0 for dt = 0 steps).
    float dt = 0.f;
    /// The instance's pose weight this frame (0 … 1), for information.
    float weight = 0.f;
    const Skeleton* skeleton = nullptr;
    /// The avatar's pose before this frame's blend (what the last step left), indexed by
    /// skeleton joint: local (parent frame) and model (avatar-root frame: the joints'
    /// `getWorldRotation`/`getWorldPosition` in the viewer, whose root is at the identity
    /// here). Empty when the caller of MotionController::sample gave no pose.
    std::span<const Quat> local_rotations;
    std::span<const Vec3> local_positions;
    std::span<const Quat> model_rotations;
    std::span<const Vec3> model_positions;
    AnimationData data;
    /// Visual param requests (same avatar; written by the motion, read by the morph phase).
    AnimationOutputs* outputs = nullptr;
};

/// The instance's joint states, indexed like CustomMotionSpec::joints. They hold what the
/// motion wrote last frame (initially identity rotations, zero positions, unit scales); only
/// the channels in each joint's usage are blended.
struct CustomMotionStates {
    std::span<Quat> rotations;
    std::span<Vec3> positions;
    std::span<Vec3> scales;
};

/// One playing instance of a custom motion (an LLMotion subclass instance).
class CustomMotion {
public:
    virtual ~CustomMotion() = default;
    /// `onActivate()`: the instance starts (or restarts after it was stopped and ended).
    virtual void on_activate() {}
    /// `onUpdate(time, joint_mask)`: write this frame's joint states. Return false to stop
    /// the motion (it then eases out like any stopped motion; the states written are still
    /// blended this frame). Called only for frames where the controller evaluates the motion
    /// (not while an avatar is hidden, nor when the joint-signature test leaves it idle).
    virtual bool update(const CustomMotionContext& ctx, CustomMotionStates& states) = 0;
    /// `onDeactivate()`.
    virtual void on_deactivate() {}
    /// Bytes this object holds (itself and what it owns), for World::avatar_state_bytes.
    [[nodiscard]] virtual std::size_t footprint_bytes() const { return sizeof(CustomMotion); }
};

/// A custom motion's id and properties, built for one skeleton; shared (immutable) by every
/// avatar of that skeleton that plays it.
class CustomMotionType {
public:
    /// Creates one instance; `seed` is a per-instance value (deterministic per avatar and per
    /// start) for motions that need random numbers.
    using Factory = std::function<std::unique_ptr<CustomMotion>(std::uint64_t seed)>;

    /// Validates the spec against the skeleton: joints in range and unique, usage non-empty
    /// and ⊆ pos|rot|scale, priorities in [0, 6] (joints: −1 allowed), ease and duration
    /// finite and ≥ 0, a factory given. Errors name the offending joint entry.
    static Result<std::shared_ptr<const CustomMotionType>> create(CustomMotionSpec spec, const Skeleton& skeleton,
                                                                  Factory factory, std::string name = {});

    [[nodiscard]] const CustomMotionSpec& spec() const { return spec_; }
    [[nodiscard]] const std::string& name() const { return shape_->name(); }
    /// The motion's shape as a clip without animation (one constant key per rot/pos channel):
    /// what the controller reads for timing, priorities and joint signatures, and the id
    /// MotionController::stop / is_active take. Start the motion with start_custom (start()
    /// with the shape would play its constant keys as a keyframe motion).
    [[nodiscard]] const MotionClip& shape() const { return *shape_; }
    /// Resolved priority of spec().joints[k] (joint priority, else the motion's).
    [[nodiscard]] std::int8_t joint_priority(std::size_t k) const { return priorities_[k]; }
    [[nodiscard]] int num_skeleton_joints() const { return shape_->num_skeleton_joints(); }
    /// Makes an instance (calls the factory).
    [[nodiscard]] std::unique_ptr<CustomMotion> instantiate(std::uint64_t seed) const { return factory_(seed); }

private:
    CustomMotionType() = default;
    CustomMotionSpec spec_;
    std::vector<std::int8_t> priorities_;
    std::shared_ptr<const MotionClip> shape_;
    Factory factory_;
};

}  // namespace slanim

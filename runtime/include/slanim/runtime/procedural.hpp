// SPDX-License-Identifier: MIT
// The viewer's always-on procedural motions (spec §3.7), built on custom motions
// (slanim/runtime/custom_motion.hpp) as the viewer's are LLMotion subclasses:
//
//   motion      viewer class            joints                       priority blend     ease in/out
//   breathe     LLBreatheMotionRot      mChest rot                   MEDIUM   NORMAL    0 / 0
//   body noise  LLBodyNoiseMotion       mTorso rot                   HIGH     ADDITIVE  0 / 0
//   head rot    LLHeadRotMotion         mTorso, mNeck, mHead rot     MEDIUM   NORMAL    1 / 1
//   eye         LLEyeMotion             mEyeLeft/Right (+ the Bento  MEDIUM   NORMAL    0.5 / 0.5
//                                       mFaceEyeAltLeft/Right) rot
//
// All loop with duration 0 (run until stopped). Every constant below is the viewer's
// (llheadrotmotion.cpp, llvoavatar.cpp). Frames: SL avatar-root axes (X forward, Y left,
// Z up), metres, seconds, radians; the avatar root is the identity here (the viewer's mRoot
// world rotation), so the viewer's "world" rotations are model rotations.
//
// Randomness: the viewer draws ll_frand() from one process-wide generator; here each instance
// has its own generator seeded from its avatar's controller (MotionController::set_random_seed,
// set per avatar by the World) and a count of instances made, so results are deterministic and
// identical for every thread count. Timers: the viewer's LLFrameTimers run on wall-clock frame
// time; here they run on the instance's own clock, the sum of the time steps it was updated
// with.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/runtime/custom_motion.hpp"

namespace slanim {

class MotionController;

namespace procedural {
// llvoavatar.cpp
inline constexpr float kTorsoNoiseAmountDeg = 1.0f;  ///< TORSO_NOISE_AMOUNT, degrees
inline constexpr float kTorsoNoiseSpeed = 0.2f;      ///< TORSO_NOISE_SPEED
inline constexpr float kTorsoNoiseScale = 0.42f;     ///< divisor of noise2 in LLBodyNoiseMotion::onUpdate
inline constexpr float kBreatheRotStrength = 0.05f;  ///< BREATHE_ROT_MOTION_STRENGTH, radians
inline constexpr float kBreatheRate = 1.f;           ///< mBreatheRate, radians per second
inline constexpr float kMinPixelAreaBodyNoise = 10000.f;  ///< MIN_REQUIRED_PIXEL_AREA_BODY_NOISE
inline constexpr float kMinPixelAreaBreathe = 10000.f;    ///< MIN_REQUIRED_PIXEL_AREA_BREATHE
// llheadrotmotion.h / .cpp
inline constexpr float kMinPixelAreaHeadRot = 500.f;  ///< MIN_REQUIRED_PIXEL_AREA_HEAD_ROT
inline constexpr float kMinPixelAreaEye = 25000.f;    ///< MIN_REQUIRED_PIXEL_AREA_EYE
inline constexpr float kPiByTwo = 1.57079632679489661923f;
inline constexpr float kTorsoLag = 0.35f;                    ///< TORSO_LAG
inline constexpr float kNeckLag = 0.5f;                      ///< NECK_LAG
inline constexpr float kHeadLookAtLagHalfLife = 0.15f;       ///< HEAD_LOOKAT_LAG_HALF_LIFE, s
inline constexpr float kTorsoLookAtLagHalfLife = 0.27f;      ///< TORSO_LOOKAT_LAG_HALF_LIFE, s
inline constexpr float kHeadRotationConstraint = kPiByTwo * 0.8f;  ///< HEAD_ROTATION_CONSTRAINT, rad
inline constexpr float kMinHeadLookAtDistance = 0.3f;        ///< MIN_HEAD_LOOKAT_DISTANCE, m
inline constexpr float kEyeJitterMinTime = 0.3f;             ///< EYE_JITTER_MIN_TIME, s
inline constexpr float kEyeJitterMaxTime = 2.5f;             ///< EYE_JITTER_MAX_TIME, s
inline constexpr float kEyeJitterMaxYaw = 0.08f;             ///< EYE_JITTER_MAX_YAW, rad
inline constexpr float kEyeJitterMaxPitch = 0.015f;          ///< EYE_JITTER_MAX_PITCH, rad
inline constexpr float kEyeLookAwayMinTime = 5.f;            ///< EYE_LOOK_AWAY_MIN_TIME, s
inline constexpr float kEyeLookAwayMaxTime = 15.f;           ///< EYE_LOOK_AWAY_MAX_TIME, s
inline constexpr float kEyeLookBackMinTime = 1.f;            ///< EYE_LOOK_BACK_MIN_TIME, s
inline constexpr float kEyeLookBackMaxTime = 5.f;            ///< EYE_LOOK_BACK_MAX_TIME, s
inline constexpr float kEyeLookAwayMaxYaw = 0.15f;           ///< EYE_LOOK_AWAY_MAX_YAW, rad
inline constexpr float kEyeLookAwayMaxPitch = 0.12f;         ///< EYE_LOOK_AWAY_MAX_PITCH, rad
inline constexpr float kEyeRotLimitAngle = kPiByTwo * 0.3f;  ///< EYE_ROT_LIMIT_ANGLE, rad
inline constexpr float kEyeBlinkMinTime = 0.5f;              ///< EYE_BLINK_MIN_TIME, s
inline constexpr float kEyeBlinkMaxTime = 8.f;               ///< EYE_BLINK_MAX_TIME, s
inline constexpr float kEyeBlinkCloseTime = 0.03f;           ///< EYE_BLINK_CLOSE_TIME, s
inline constexpr float kEyeBlinkSpeed = 0.015f;              ///< EYE_BLINK_SPEED, s per open/close
inline constexpr float kEyeBlinkTimeDelta = 0.005f;          ///< EYE_BLINK_TIME_DELTA, s (right eye lag)
inline constexpr float kFovealOffset = 4.f * 0.01745329251994329577f;  ///< 4° added to the vergence

/// `noise2(vec)` (indra/newview/noise.cpp): Perlin's 2-D gradient noise on a 256-entry lattice
/// with the viewer's `fast_setup` (coordinates offset by 4096 and wrapped to 8 bits). The
/// gradient table is built as the viewer's `init()` builds it (components (r mod 512 − 256)/256,
/// normalized; a shuffled permutation) but from slanim's own fixed generator: the viewer's
/// comes from the C library's rand() after srand(42) and differs between platforms. On a
/// lattice line (x or y an integer, as both of LLBodyNoiseMotion's samples are) |noise2| ≤ 0.5.
/// Thread-safe (the table is built once, on first use).
float noise2(float x, float y);

/// The per-instance replacement for `ll_frand`: splitmix64, 24-bit floats in [0, 1).
class FrandGenerator {
public:
    explicit FrandGenerator(std::uint64_t seed) : state_(seed) {}
    /// `ll_frand()`: [0, 1).
    float frand();
    /// `ll_frand(v)`: [0, v).
    float frand(float v) { return frand() * v; }

private:
    std::uint64_t state_;
};

/// `LLVector3::normalize()`: returns the length; below 1e-7 the vector becomes zero.
float normalize_vec(Vec3& v);
}  // namespace procedural

/// LLBreatheMotionRot::onUpdate: mChest rotates about Y by sin(time) × 0.05 rad.
class BreatheMotion final : public CustomMotion {
public:
    bool update(const CustomMotionContext& ctx, CustomMotionStates& states) override;
    [[nodiscard]] std::size_t footprint_bytes() const override { return sizeof(*this); }
};

/// LLBodyNoiseMotion::onUpdate: mTorso gets roll/pitch from noise2 at (0.2·t, 0) and
/// (0, 0.2·t), each scaled to 1°/0.42 (so |angle| ≤ 0.5/0.42 degrees), added on top.
class BodyNoiseMotion final : public CustomMotion {
public:
    bool update(const CustomMotionContext& ctx, CustomMotionStates& states) override;
    [[nodiscard]] std::size_t footprint_bytes() const override { return sizeof(*this); }
};

/// LLHeadRotMotion::onUpdate: the head turns toward the look-at point (or stays with the root
/// when there is none, or toward the pelvis orientation when the target is closer than
/// 0.3 m), limited to 72° (0.8 · 90°) from the root, eased by the critical-damp interpolants
/// of half-lives 0.15 s (head) and 0.27 s (torso, which takes 35 % of the turn); the neck and
/// head share the rest, relative to the chest's last model rotation. States: torso, neck, head.
class HeadRotMotion final : public CustomMotion {
public:
    HeadRotMotion(int pelvis, int neck_parent) : pelvis_(pelvis), neck_parent_(neck_parent) {}
    bool update(const CustomMotionContext& ctx, CustomMotionStates& states) override;
    [[nodiscard]] std::size_t footprint_bytes() const override { return sizeof(*this); }
    /// `mLastHeadRot`: the eased head rotation relative to the root.
    [[nodiscard]] Quat last_head_rotation() const { return last_head_rot_; }

private:
    int pelvis_, neck_parent_;
    Quat last_head_rot_ = Quat::identity();
};

/// LLEyeMotion::onUpdate: saccades ("jitter", new every 0.3–2.5 s, ≤ 0.08 rad yaw and 0.015
/// pitch), look-aways (≤ 0.15 yaw, 0.12 pitch, for 1–5 s every 5–15 s), blinks (every
/// 0.5–8 s, and on 90 % of look-away changes: each eye closes over 0.015 s, the right one
/// 0.005 s later, stays closed 0.03 s, opens over 0.015 s) on the Blink_Left/Blink_Right
/// params (AnimationOutputs), and both eye pairs turned toward the look-at point in the head's
/// frame with roll removed, limited to 27° (0.3 · 90°), with vergence −atan(interocular/2 /
/// distance) + 4°; saccades apply only while the vergence is above −0.05 rad.
/// States: left, right, then (when the skeleton has them) alt left, alt right.
class EyeMotion final : public CustomMotion {
public:
    /// `pairs`: 1 or 2 eye pairs (skeleton joints of each pair's left and right eye).
    EyeMotion(std::uint64_t seed, int head, std::array<int, 4> eyes, int pairs)
        : rng_(seed), head_(head), eyes_(eyes), pairs_(pairs) {}
    bool update(const CustomMotionContext& ctx, CustomMotionStates& states) override;
    [[nodiscard]] std::size_t footprint_bytes() const override { return sizeof(*this); }

    [[nodiscard]] bool eyes_closed() const { return eyes_closed_; }
    [[nodiscard]] float jitter_yaw() const { return jitter_yaw_; }
    [[nodiscard]] float jitter_pitch() const { return jitter_pitch_; }
    [[nodiscard]] float look_away_yaw() const { return look_away_yaw_; }
    [[nodiscard]] float look_away_pitch() const { return look_away_pitch_; }

private:
    void adjust_eye_target(const CustomMotionContext& ctx, int left_joint, int right_joint, Quat& left,
                           Quat& right) const;
    procedural::FrandGenerator rng_;
    int head_;
    std::array<int, 4> eyes_;
    int pairs_;
    float clock_ = 0.f;  // the instance's clock: sum of update dts (the viewer's frame timers)
    float jitter_timer_ = 0.f, blink_timer_ = 0.f;  // clock_ at the last reset
    float jitter_time_ = 0.f, jitter_yaw_ = 0.f, jitter_pitch_ = 0.f;
    float look_away_time_ = 0.f, look_away_yaw_ = 0.f, look_away_pitch_ = 0.f;
    float blink_time_ = 0.f;
    bool eyes_closed_ = false;
};

/// Which procedural motions run (LLVOAvatar::startDefaultMotions starts head rot, eye,
/// body noise and breathe on every avatar; here each is optional, all off by default).
struct ProceduralSet {
    bool breathe = false;
    bool body_noise = false;
    bool head_rot = false;
    bool eye = false;
    static constexpr ProceduralSet all() { return {true, true, true, true}; }
    friend constexpr bool operator==(const ProceduralSet&, const ProceduralSet&) = default;
};

/// The four motion types for one skeleton (shared by its avatars). A type is null when the
/// skeleton lacks its joints (breathe: mChest; body noise: mTorso; head rot: mPelvis, mTorso,
/// mNeck, mHead; eye: mHead, mEyeLeft, mEyeRight — mFaceEyeAltLeft/Right are used when
/// present).
struct ProceduralMotionTypes {
    std::shared_ptr<const CustomMotionType> breathe, body_noise, head_rot, eye;
    static ProceduralMotionTypes create(const Skeleton& skeleton);
};

/// Starts the motions of `set` in the viewer's order (head rot, eye, body noise, breathe:
/// `startDefaultMotions`) and stops the others (`stopMotion`: they ease out). Starting a
/// running motion does nothing. Returns false when `set` asks for a motion whose type is null
/// (the others are still applied).
bool apply_procedural_set(MotionController& controller, const ProceduralMotionTypes& types, const ProceduralSet& set);

}  // namespace slanim

// SPDX-License-Identifier: MIT
// The viewer's procedural motions on the custom-motion interface (procedural.hpp):
// LLBreatheMotionRot, LLBodyNoiseMotion (llvoavatar.cpp), LLHeadRotMotion and LLEyeMotion
// (llheadrotmotion.cpp). Float operations follow the viewer's order.
#include "slanim/runtime/procedural.hpp"

#include <algorithm>
#include <cmath>

#include "slanim/runtime/motion_controller.hpp"

namespace slanim {

namespace procedural {

namespace {
constexpr int kB = 0x100;
constexpr float kMagThreshold = 1e-7f;  // FP_MAG_THRESHOLD

std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// The lattice of noise2 (noise.h init()), from a fixed seed.
struct NoiseTable {
    std::array<int, kB + kB + 2> p{};
    std::array<std::array<float, 2>, kB + kB + 2> g2{};
    NoiseTable() {
        std::uint64_t state = 42;
        const auto rnd = [&state](int mod) { return static_cast<int>(splitmix64(state) % static_cast<std::uint64_t>(mod)); };
        int i = 0;
        for (i = 0; i < kB; ++i) {
            p[static_cast<std::size_t>(i)] = i;
            float x = 0.f, y = 0.f;
            while (x == 0.f && y == 0.f) {  // the viewer would divide by zero here
                x = static_cast<float>(rnd(kB + kB) - kB) / kB;
                y = static_cast<float>(rnd(kB + kB) - kB) / kB;
            }
            const float s = 1.f / std::sqrt(x * x + y * y);
            g2[static_cast<std::size_t>(i)] = {x * s, y * s};
        }
        while (--i) {
            const int j = rnd(kB);
            std::swap(p[static_cast<std::size_t>(i)], p[static_cast<std::size_t>(j)]);
        }
        for (i = 0; i < kB + 2; ++i) {
            p[static_cast<std::size_t>(kB + i)] = p[static_cast<std::size_t>(i)];
            g2[static_cast<std::size_t>(kB + i)] = g2[static_cast<std::size_t>(i)];
        }
    }
};

const NoiseTable& noise_table() {
    static const NoiseTable table;  // built once, thread-safe
    return table;
}

// noise.h fast_setup: lattice cell (8 bits) and the offsets to its two corners.
void fast_setup(float v, std::uint8_t& b0, std::uint8_t& b1, float& r0, float& r1) {
    r1 = v + 4096.f;
    const int t = static_cast<int>(r1);
    b0 = static_cast<std::uint8_t>(t);
    b1 = static_cast<std::uint8_t>(b0 + 1);
    r0 = r1 - static_cast<float>(t);
    r1 = r0 - 1.f;
}

float s_curve(float t) { return t * t * (3.f - 2.f * t); }
float lerp_m(float t, float a, float b) { return a + t * (b - a); }
}  // namespace

float noise2(float x, float y) {
    const NoiseTable& n = noise_table();
    std::uint8_t bx0, bx1, by0, by1;
    float rx0, rx1, ry0, ry1;
    fast_setup(x, bx0, bx1, rx0, rx1);
    fast_setup(y, by0, by1, ry0, ry1);
    const int i = n.p[bx0];
    const int j = n.p[bx1];
    const auto b00 = static_cast<std::size_t>(n.p[static_cast<std::size_t>(i + by0)]);
    const auto b10 = static_cast<std::size_t>(n.p[static_cast<std::size_t>(j + by0)]);
    const auto b01 = static_cast<std::size_t>(n.p[static_cast<std::size_t>(i + by1)]);
    const auto b11 = static_cast<std::size_t>(n.p[static_cast<std::size_t>(j + by1)]);
    const float sx = s_curve(rx0);
    const float sy = s_curve(ry0);
    float u = rx0 * n.g2[b00][0] + ry0 * n.g2[b00][1];
    float v = rx1 * n.g2[b10][0] + ry0 * n.g2[b10][1];
    const float a = lerp_m(sx, u, v);
    u = rx0 * n.g2[b01][0] + ry1 * n.g2[b01][1];
    v = rx1 * n.g2[b11][0] + ry1 * n.g2[b11][1];
    const float b = lerp_m(sx, u, v);
    return lerp_m(sy, a, b);
}

float FrandGenerator::frand() {
    return static_cast<float>(splitmix64(state_) >> 40) * (1.f / 16777216.f);
}

float normalize_vec(Vec3& v) {
    const float mag = std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z);
    if (mag > kMagThreshold) {
        const float inv = 1.f / mag;
        v = {v.x * inv, v.y * inv, v.z * inv};
        return mag;
    }
    v = {};
    return 0.f;
}

}  // namespace procedural

using namespace procedural;

namespace {
Quat model_rotation(const CustomMotionContext& ctx, int joint) {
    if (joint < 0 || static_cast<std::size_t>(joint) >= ctx.model_rotations.size()) return Quat::identity();
    return ctx.model_rotations[static_cast<std::size_t>(joint)];
}
Vec3 model_position(const CustomMotionContext& ctx, int joint) {
    if (joint < 0 || static_cast<std::size_t>(joint) >= ctx.model_positions.size()) return {};
    return ctx.model_positions[static_cast<std::size_t>(joint)];
}
}  // namespace

bool BreatheMotion::update(const CustomMotionContext& ctx, CustomMotionStates& states) {
    const float breathe_amt = std::sin(kBreatheRate * ctx.time) * kBreatheRotStrength;
    states.rotations[0] = quat_from_axis_angle(breathe_amt, {0.f, 1.f, 0.f});
    return true;
}

bool BodyNoiseMotion::update(const CustomMotionContext& ctx, CustomMotionStates& states) {
    const float noise_x = noise2(ctx.time * kTorsoNoiseSpeed, 0.f);
    const float noise_y = noise2(0.f, ctx.time * kTorsoNoiseSpeed);
    constexpr float kDegToRad = 0.01745329251994329577f;
    const float rx = kTorsoNoiseAmountDeg * kDegToRad * noise_x / kTorsoNoiseScale;
    const float ry = kTorsoNoiseAmountDeg * kDegToRad * noise_y / kTorsoNoiseScale;
    states.rotations[0] = quat_from_roll_pitch_yaw(rx, ry, 0.f);
    return true;
}

bool HeadRotMotion::update(const CustomMotionContext& ctx, CustomMotionStates& states) {
    const Quat root = Quat::identity();  // mRoot's world rotation: the avatar-root frame
    const Quat inv_root = conjugate(root);
    const float head_amt = smooth_interpolant(ctx.dt, kHeadLookAtLagHalfLife);
    const float torso_amt = smooth_interpolant(ctx.dt, kTorsoLookAtLagHalfLife);

    Quat target_world = root;
    if (ctx.data.look_at) {
        Vec3 look = *ctx.data.look_at;
        const float distance = normalize_vec(look);
        if (distance < kMinHeadLookAtDistance) {
            target_world = model_rotation(ctx, pelvis_);
        } else {
            const Vec3 root_up = rotate({0.f, 0.f, 1.f}, root);
            Vec3 left = cross(root_up, look);
            // A target straight above or below: lean the look direction toward the root's
            // forward so the frame stays defined.
            if (dot(left, left) < 0.15f) {
                Vec3 root_at = rotate({1.f, 0.f, 0.f}, root);
                root_at.z = 0.f;
                normalize_vec(root_at);
                look = lerp(look, root_at, 0.4f);
                normalize_vec(look);
                left = cross(root_up, look);
            }
            const Vec3 up = cross(look, left);
            target_world = quat_from_axes(look, left, up);
        }
    }
    Quat head_rot_local = ll_constrain(ll_mul(target_world, inv_root), kHeadRotationConstraint);

    // The torso follows 35 % of the turn, eased with its own half-life.
    const Quat torso_rot_local = ll_nlerp(kTorsoLag, Quat::identity(), head_rot_local);
    states.rotations[0] = ll_nlerp(torso_amt, states.rotations[0], torso_rot_local);

    head_rot_local = ll_nlerp(head_amt, last_head_rot_, head_rot_local);
    last_head_rot_ = head_rot_local;

    // Neck and head share what the chest (the neck's parent, last frame) does not turn.
    const Quat torso_world_local = ll_mul(model_rotation(ctx, neck_parent_), inv_root);
    head_rot_local = ll_mul(head_rot_local, conjugate(torso_world_local));
    states.rotations[1] = ll_nlerp(kNeckLag, Quat::identity(), head_rot_local);
    states.rotations[2] = ll_nlerp(1.f - kNeckLag, Quat::identity(), head_rot_local);
    return true;
}

void EyeMotion::adjust_eye_target(const CustomMotionContext& ctx, int left_joint, int right_joint, Quat& left_rot,
                                  Quat& right_rot) const {
    Quat target_eye_rot = Quat::identity();
    float vergence = 0.f;
    const bool has_target = ctx.data.look_at != nullptr;
    if (has_target) {
        Vec3 look = *ctx.data.look_at;
        const float distance = normalize_vec(look);
        const Vec3 left = cross({0.f, 0.f, 1.f}, look);
        const Vec3 up = cross(look, left);
        target_eye_rot = quat_from_axes(look, left, up);
        // Into the head's frame, roll removed, limited to the front of the face.
        target_eye_rot = ll_mul(target_eye_rot, conjugate(model_rotation(ctx, head_)));
        float roll, pitch, yaw;
        ll_euler_angles(target_eye_rot, roll, pitch, yaw);
        target_eye_rot = quat_from_roll_pitch_yaw(0.f, pitch, yaw);
        target_eye_rot = ll_constrain(target_eye_rot, kEyeRotLimitAngle);
        const float interocular = length(model_position(ctx, left_joint) - model_position(ctx, right_joint));
        vergence = -std::atan2(interocular / 2.f, distance);
        // (the viewer's llclamp of the vergence discards its result)
    }
    vergence += kFovealOffset;

    Quat jitter = Quat::identity();
    if (vergence > -0.05f)
        jitter = quat_from_roll_pitch_yaw(0.f, jitter_pitch_ + look_away_pitch_, jitter_yaw_ + look_away_yaw_);
    Quat vergence_quat = Quat::identity();
    if (has_target) vergence_quat = quat_from_axis_angle(vergence, {0.f, 0.f, 1.f});
    left_rot = ll_mul(ll_mul(vergence_quat, jitter), target_eye_rot);
    right_rot = ll_mul(ll_mul(conjugate(vergence_quat), jitter), target_eye_rot);
}

bool EyeMotion::update(const CustomMotionContext& ctx, CustomMotionStates& states) {
    clock_ += ctx.dt;
    const float jitter_elapsed = clock_ - jitter_timer_;
    // Saccades and look-aways.
    if (jitter_elapsed > jitter_time_) {
        jitter_time_ = kEyeJitterMinTime + rng_.frand(kEyeJitterMaxTime - kEyeJitterMinTime);
        jitter_yaw_ = (rng_.frand(2.f) - 1.f) * kEyeJitterMaxYaw;
        jitter_pitch_ = (rng_.frand(2.f) - 1.f) * kEyeJitterMaxPitch;
        look_away_time_ -= std::max(0.f, jitter_elapsed);  // the look-away clock restarts with it
        jitter_timer_ = clock_;
    } else if (jitter_elapsed > look_away_time_) {
        if (rng_.frand() > 0.1f) blink_time_ = clock_ - blink_timer_;  // blink while moving the eyes
        if (look_away_yaw_ == 0.f && look_away_pitch_ == 0.f) {
            look_away_yaw_ = (rng_.frand(2.f) - 1.f) * kEyeLookAwayMaxYaw;
            look_away_pitch_ = (rng_.frand(2.f) - 1.f) * kEyeLookAwayMaxPitch;
            look_away_time_ = kEyeLookBackMinTime + rng_.frand(kEyeLookBackMaxTime - kEyeLookBackMinTime);
        } else {
            look_away_yaw_ = 0.f;
            look_away_pitch_ = 0.f;
            look_away_time_ = kEyeLookAwayMinTime + rng_.frand(kEyeLookAwayMaxTime - kEyeLookAwayMinTime);
        }
    }

    // Blinking.
    const float blink_elapsed = clock_ - blink_timer_;
    if (!eyes_closed_ && blink_elapsed >= blink_time_) {
        const float t = blink_elapsed - blink_time_;
        const float left = std::clamp(t / kEyeBlinkSpeed, 0.f, 1.f);
        const float right = std::clamp((t - kEyeBlinkTimeDelta) / kEyeBlinkSpeed, 0.f, 1.f);
        if (ctx.outputs) *ctx.outputs = {true, left, right};
        if (right == 1.f) {
            eyes_closed_ = true;
            blink_time_ = kEyeBlinkCloseTime;
            blink_timer_ = clock_;
        }
    } else if (eyes_closed_ && blink_elapsed >= blink_time_) {
        const float t = blink_elapsed - blink_time_;
        const float left = 1.f - std::clamp(t / kEyeBlinkSpeed, 0.f, 1.f);
        const float right = 1.f - std::clamp((t - kEyeBlinkTimeDelta) / kEyeBlinkSpeed, 0.f, 1.f);
        if (ctx.outputs) *ctx.outputs = {true, left, right};
        if (right == 0.f) {
            eyes_closed_ = false;
            blink_time_ = kEyeBlinkMinTime + rng_.frand(kEyeBlinkMaxTime - kEyeBlinkMinTime);
            blink_timer_ = clock_;
        }
    }

    for (int pair = 0; pair < pairs_; ++pair) {
        const auto k = static_cast<std::size_t>(2 * pair);
        adjust_eye_target(ctx, eyes_[k], eyes_[k + 1], states.rotations[k], states.rotations[k + 1]);
    }
    return true;
}

ProceduralMotionTypes ProceduralMotionTypes::create(const Skeleton& s) {
    ProceduralMotionTypes t;
    const auto rot = [](int joint) { return CustomJoint{joint, kUsageRot, -1}; };
    const int chest = s.find("mChest"), torso = s.find("mTorso"), pelvis = s.find("mPelvis");
    const int neck = s.find("mNeck"), head = s.find("mHead");
    const int eye_l = s.find("mEyeLeft"), eye_r = s.find("mEyeRight");
    const int alt_l = s.find("mFaceEyeAltLeft"), alt_r = s.find("mFaceEyeAltRight");
    const auto make = [&](CustomMotionSpec spec, CustomMotionType::Factory f, const char* name) {
        auto r = CustomMotionType::create(std::move(spec), s, std::move(f), name);
        return r ? r.value() : nullptr;
    };
    if (chest >= 0) {
        CustomMotionSpec spec;
        spec.joints = {rot(chest)};
        spec.priority = 1;  // MEDIUM_PRIORITY
        spec.min_pixel_area = kMinPixelAreaBreathe;
        t.breathe = make(spec, [](std::uint64_t) { return std::make_unique<BreatheMotion>(); }, "breathe_rot");
    }
    if (torso >= 0) {
        CustomMotionSpec spec;
        spec.joints = {rot(torso)};
        spec.priority = 2;  // HIGH_PRIORITY
        spec.blend_type = BlendType::Additive;
        spec.min_pixel_area = kMinPixelAreaBodyNoise;
        t.body_noise = make(spec, [](std::uint64_t) { return std::make_unique<BodyNoiseMotion>(); }, "body_noise");
    }
    if (pelvis >= 0 && torso >= 0 && neck >= 0 && head >= 0) {
        CustomMotionSpec spec;
        spec.joints = {rot(torso), rot(neck), rot(head)};
        spec.priority = 1;  // MEDIUM_PRIORITY
        spec.ease_in = 1.f;
        spec.ease_out = 1.f;
        spec.min_pixel_area = kMinPixelAreaHeadRot;
        const int neck_parent = s.parent(neck);
        t.head_rot = make(spec, [pelvis, neck_parent](std::uint64_t) {
            return std::make_unique<HeadRotMotion>(pelvis, neck_parent);
        }, "head_rot");
    }
    if (head >= 0 && eye_l >= 0 && eye_r >= 0) {
        CustomMotionSpec spec;
        spec.joints = {rot(eye_l), rot(eye_r)};
        std::array<int, 4> eyes{eye_l, eye_r, -1, -1};
        int pairs = 1;
        if (alt_l >= 0 && alt_r >= 0) {
            spec.joints.push_back(rot(alt_l));
            spec.joints.push_back(rot(alt_r));
            eyes[2] = alt_l;
            eyes[3] = alt_r;
            pairs = 2;
        }
        spec.priority = 1;  // MEDIUM_PRIORITY
        spec.ease_in = 0.5f;
        spec.ease_out = 0.5f;
        spec.min_pixel_area = kMinPixelAreaEye;
        spec.identity_on_deactivate = true;
        t.eye = make(spec, [head, eyes, pairs](std::uint64_t seed) {
            return std::make_unique<EyeMotion>(seed, head, eyes, pairs);
        }, "eye_rot");
    }
    return t;
}

bool apply_procedural_set(MotionController& c, const ProceduralMotionTypes& types, const ProceduralSet& set) {
    bool ok = true;
    const auto apply = [&](const std::shared_ptr<const CustomMotionType>& type, bool on) {
        if (!type) {
            ok = ok && !on;
            return;
        }
        if (on) {
            // Started when not running or stopping; an instance easing in is left alone (a
            // second startMotion would deprecate it and start afresh).
            const MotionInstance* running = nullptr;
            for (const auto& m : c.active())
                if (!m->deprecated && m->clip.get() == &type->shape()) running = m.get();
            if (!running || running->stopped) c.start_custom(type);
        } else {
            c.stop(&type->shape());
        }
    };
    apply(types.head_rot, set.head_rot);
    apply(types.eye, set.eye);
    apply(types.body_noise, set.body_noise);
    apply(types.breathe, set.breathe);
    return ok;
}

}  // namespace slanim

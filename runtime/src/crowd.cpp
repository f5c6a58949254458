// SPDX-License-Identifier: MIT
#include "slanim/runtime/crowd.hpp"

#include <cmath>
#include <functional>
#include <numbers>
#include <string>

namespace slanim {

namespace {
constexpr float kTwoPi = 2.f * std::numbers::pi_v<float>;

Motion looping_motion(int priority, float duration) {
    Motion m;
    m.base_priority = priority;
    m.max_priority = priority;
    m.duration = duration;
    m.loop = true;
    m.loop_in = 0.f;
    m.loop_out = duration;
    m.ease_in = 0.5f;
    m.ease_out = 0.5f;
    m.hand_pose = 1;  // relaxed
    return m;
}

// A joint whose rotation is rot(phase) at `keys` evenly spaced keys (first = last: seamless).
void add_rot(Motion& m, const Skeleton& s, const std::string& name, int keys,
             const std::function<Quat(float)>& rot) {
    MotionJoint j;
    j.name = name;
    j.joint = s.find(name);
    j.priority = -1;
    for (int k = 0; k < keys; ++k) {
        const float u = static_cast<float>(k) / static_cast<float>(keys - 1);
        j.rot_keys.push_back({u * m.duration, rot(kTwoPi * u)});
    }
    m.joints.push_back(std::move(j));
}

Quat euler_deg(float x, float y, float z) { return maya_q(x, y, z, EulerOrder::XYZ); }
}  // namespace

std::vector<DemoMotion> make_crowd_demo_motions(const Skeleton& s) {
    std::vector<DemoMotion> out;

    Motion walk = looping_motion(1, 1.f);
    for (const char* side : {"Left", "Right"}) {
        const float sign = std::string(side) == "Left" ? 1.f : -1.f;
        add_rot(walk, s, std::string("mHip") + side, 13,
                [sign](float p) { return euler_deg(0.f, 25.f * sign * std::sin(p), 0.f); });
        add_rot(walk, s, std::string("mKnee") + side, 13,
                [sign](float p) { return euler_deg(0.f, 20.f + 20.f * sign * std::sin(p + 1.f), 0.f); });
        add_rot(walk, s, std::string("mAnkle") + side, 13,
                [sign](float p) { return euler_deg(0.f, -8.f * sign * std::sin(p), 0.f); });
        add_rot(walk, s, std::string("mShoulder") + side, 13,
                [sign](float p) { return euler_deg(70.f * sign, -15.f * sign * std::sin(p), 0.f); });
    }
    MotionJoint pelvis;
    pelvis.name = "mPelvis";
    pelvis.joint = s.find("mPelvis");
    pelvis.priority = -1;
    for (int k = 0; k < 13; ++k) {
        const float u = static_cast<float>(k) / 12.f;
        pelvis.pos_keys.push_back({u, Vec3{0.f, 0.f, 0.015f * std::sin(2.f * kTwoPi * u)}});
    }
    walk.joints.push_back(std::move(pelvis));
    out.push_back({"demo_walk", std::move(walk)});

    Motion dance = looping_motion(2, 2.f);
    add_rot(dance, s, "mTorso", 17, [](float p) { return euler_deg(0.f, 0.f, 15.f * std::sin(p)); });
    add_rot(dance, s, "mChest", 17, [](float p) { return euler_deg(6.f * std::sin(2.f * p), 0.f, 0.f); });
    add_rot(dance, s, "mNeck", 17, [](float p) { return euler_deg(0.f, 5.f * std::sin(2.f * p), 0.f); });
    add_rot(dance, s, "mHead", 17, [](float p) { return euler_deg(0.f, 0.f, -10.f * std::sin(p)); });
    add_rot(dance, s, "mShoulderRight", 17, [](float p) { return euler_deg(-60.f - 20.f * std::sin(p), 0.f, 0.f); });
    add_rot(dance, s, "mElbowRight", 17, [](float p) { return euler_deg(0.f, 0.f, 50.f + 30.f * std::sin(2.f * p)); });
    add_rot(dance, s, "mWristRight", 17, [](float p) { return euler_deg(0.f, 0.f, 15.f * std::sin(2.f * p)); });
    out.push_back({"demo_dance", std::move(dance)});

    Motion hands = looping_motion(3, 1.5f);
    for (const char* side : {"Left", "Right"})
        for (const char* finger : {"Thumb", "Index", "Middle", "Ring", "Pinky"})
            for (int seg = 1; seg <= 3; ++seg)
                add_rot(hands, s, std::string("mHand") + finger + std::to_string(seg) + side, 7,
                        [seg](float p) { return euler_deg(0.f, 10.f * static_cast<float>(seg) * (1.f + std::sin(p)), 0.f); });
    for (const char* face : {"mFaceEyebrowInnerLeft", "mFaceEyebrowInnerRight", "mFaceEyeLidUpperLeft",
                             "mFaceEyeLidUpperRight", "mFaceJaw", "mFaceLipCornerLeft", "mFaceLipCornerRight"})
        add_rot(hands, s, face, 7, [](float p) { return euler_deg(0.f, 6.f * std::sin(p), 0.f); });
    out.push_back({"demo_hands", std::move(hands)});

    Motion reach = looping_motion(2, 2.f);
    add_rot(reach, s, "mShoulderLeft", 9, [](float p) { return euler_deg(40.f + 10.f * std::sin(p), 0.f, 0.f); });
    add_rot(reach, s, "mElbowLeft", 9, [](float p) { return euler_deg(0.f, 0.f, -40.f - 20.f * std::sin(p)); });
    add_rot(reach, s, "mWristLeft", 9, [](float) { return euler_deg(0.f, 0.f, 0.f); });
    MotionConstraint c;
    c.chain_length = 2;
    c.type = ConstraintType::Point;
    c.source_volume = "L_HAND";
    c.target_volume = "L_UPPER_LEG";
    c.target_offset = Vec3{0.f, 0.5f, 0.6f};
    c.ease_in_start = 0.f;
    c.ease_in_stop = 0.3f;
    c.ease_out_start = 1.7f;
    c.ease_out_stop = 2.f;
    reach.constraints.push_back(c);
    out.push_back({"demo_reach", std::move(reach)});

    return out;
}

void make_looping(Motion& m) {
    if (m.loop) return;
    m.loop = true;
    m.loop_in = 0.f;
    m.loop_out = m.duration;
}

std::vector<Entity> populate_crowd(World& world, const std::shared_ptr<const Skeleton>& skeleton,
                                   std::span<const std::shared_ptr<const MotionClip>> clips, int avatars) {
    std::vector<Entity> out;
    out.reserve(static_cast<std::size_t>(std::max(avatars, 0)));
    constexpr double kGolden = 0.6180339887498949;
    for (int k = 0; k < avatars; ++k) {
        const Entity e = world.create_avatar(skeleton);
        const double frac = std::fmod(static_cast<double>(k) * kGolden, 1.0);
        for (const auto& clip : clips) {
            StartOptions o;
            o.start_offset = static_cast<float>(frac) * std::max(clip->duration(), 1.f);
            world.controller(e).start(clip, o);
        }
        out.push_back(e);
    }
    return out;
}

}  // namespace slanim

// SPDX-License-Identifier: MIT
#include "slanim/runtime/demo_motions.hpp"

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

// A joint with `keys` evenly spaced keys over the motion's duration (first = last: seamless),
// each made by key(time, phase) with the phase running from 0 to 2π.
template <class MakeKeys>
void add_joint(Motion& m, const Skeleton& s, const std::string& name, int keys, MakeKeys&& key) {
    MotionJoint j;
    j.name = name;
    j.joint = s.find(name);
    j.priority = -1;
    for (int k = 0; k < keys; ++k) {
        const float u = static_cast<float>(k) / static_cast<float>(keys - 1);
        key(j, u * m.duration, kTwoPi * u);
    }
    m.joints.push_back(std::move(j));
}

// A joint whose rotation is rot(phase) at `keys` keys, as add_joint.
void add_rot(Motion& m, const Skeleton& s, const std::string& name, int keys,
             const std::function<Quat(float)>& rot) {
    add_joint(m, s, name, keys, [&](MotionJoint& j, float t, float phase) { j.rot_keys.push_back({t, rot(phase)}); });
}

// A joint whose position is pos(phase) at `keys` keys, as add_joint.
void add_pos(Motion& m, const Skeleton& s, const std::string& name, int keys,
             const std::function<Vec3(float)>& pos) {
    add_joint(m, s, name, keys, [&](MotionJoint& j, float t, float phase) { j.pos_keys.push_back({t, pos(phase)}); });
}

Quat euler_deg(float x, float y, float z) { return maya_q(x, y, z, EulerOrder::XYZ); }
}  // namespace

Motion make_demo_motion(const Skeleton& s) {
    Motion m = looping_motion(3, 2.f);
    // Raise the right arm (about X, the forward axis: negative lifts the right arm sideways-up),
    // bend the elbow, and wave the forearm about Z.
    add_rot(m, s, "mShoulderRight", 17, [](float) { return euler_deg(-75.f, 0.f, 0.f); });
    add_rot(m, s, "mElbowRight", 17, [](float p) { return euler_deg(0.f, 0.f, 60.f + 25.f * std::sin(p * 2.f)); });
    add_rot(m, s, "mWristRight", 17, [](float p) { return euler_deg(0.f, 0.f, 10.f * std::sin(p * 2.f)); });
    add_rot(m, s, "mTorso", 17, [](float p) { return euler_deg(0.f, 0.f, 6.f * std::sin(p)); });
    add_rot(m, s, "mHead", 17, [](float p) { return euler_deg(0.f, 4.f * std::sin(p), 0.f); });
    add_pos(m, s, "mPelvis", 17, [](float p) { return Vec3{0.f, 0.f, 0.01f * std::sin(2.f * p)}; });
    return m;
}

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
    add_pos(walk, s, "mPelvis", 13, [](float p) { return Vec3{0.f, 0.f, 0.015f * std::sin(2.f * p)}; });
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

DemoMotion make_demo_gesture(const Skeleton& s) {
    Motion m = looping_motion(3, 2.4f);
    m.loop = false;
    m.loop_out = 0.f;
    m.ease_in = 0.2f;
    m.ease_out = 0.4f;
    m.hand_pose = 10;  // salute_r
    m.emote_name = "Express_Kiss";
    add_rot(m, s, "mShoulderRight", 13, [](float p) { return euler_deg(-50.f - 20.f * std::sin(0.5f * p), 0.f, 0.f); });
    add_rot(m, s, "mElbowRight", 13, [](float p) { return euler_deg(0.f, 0.f, 70.f + 20.f * std::sin(p)); });
    add_rot(m, s, "mHead", 13, [](float p) { return euler_deg(0.f, 8.f * std::sin(p), 0.f); });
    return {"demo_gesture", std::move(m)};
}

}  // namespace slanim

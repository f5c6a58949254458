// SPDX-License-Identifier: MIT
#include "demo_motion.hpp"

#include <cmath>
#include <numbers>

namespace slanim::cli {

Motion make_demo_motion() {
    constexpr float kDuration = 2.f;
    constexpr int kKeys = 17;  // every 0.125 s, first and last equal (seamless loop)
    constexpr float kPi = std::numbers::pi_v<float>;
    Motion m;
    m.base_priority = 3;
    m.duration = kDuration;
    m.loop = true;
    m.loop_in = 0.f;
    m.loop_out = kDuration;
    m.ease_in = 0.5f;
    m.ease_out = 0.5f;
    m.hand_pose = 1;  // relaxed

    auto joint = [&](const char* name, auto&& rot_at) {
        MotionJoint j;
        j.name = name;
        j.priority = -1;
        for (int k = 0; k < kKeys; ++k) {
            const float t = kDuration * static_cast<float>(k) / static_cast<float>(kKeys - 1);
            const float phase = 2.f * kPi * t / kDuration;
            j.rot_keys.push_back({t, rot_at(phase)});
        }
        m.joints.push_back(std::move(j));
    };
    // Raise the right arm (about X, the forward axis: negative lifts the right arm sideways-up),
    // bend the elbow, and wave the forearm about Z.
    joint("mShoulderRight", [](float) { return maya_q(-75.f, 0.f, 0.f, EulerOrder::XYZ); });
    joint("mElbowRight", [](float p) {
        return maya_q(0.f, 0.f, 60.f + 25.f * std::sin(p * 2.f), EulerOrder::XYZ);
    });
    joint("mWristRight", [](float p) { return maya_q(0.f, 0.f, 10.f * std::sin(p * 2.f), EulerOrder::XYZ); });
    joint("mTorso", [](float p) { return maya_q(0.f, 0.f, 6.f * std::sin(p), EulerOrder::XYZ); });
    joint("mHead", [](float p) { return maya_q(0.f, 4.f * std::sin(p), 0.f, EulerOrder::XYZ); });

    MotionJoint pelvis;
    pelvis.name = "mPelvis";
    pelvis.priority = -1;
    for (int k = 0; k < kKeys; ++k) {
        const float t = kDuration * static_cast<float>(k) / static_cast<float>(kKeys - 1);
        pelvis.pos_keys.push_back({t, Vec3{0.f, 0.f, 0.01f * std::sin(4.f * kPi * t / kDuration)}});
    }
    m.joints.push_back(std::move(pelvis));
    return m;
}

}  // namespace slanim::cli

// SPDX-License-Identifier: MIT
// Helpers shared by the test suites: small motions built in code.
#pragma once

#include <cmath>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "slanim/core/clip.hpp"
#include "slanim/core/isa.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/skeleton.hpp"

namespace slanim::test {

inline const Skeleton& skel() { return *Skeleton::default_skeleton(); }

/// Every instruction set this CPU and build run: Scalar up to detected_isa(), in order.
inline std::vector<Isa> supported_isas() {
    std::vector<Isa> out;
    for (int i = 0; i <= static_cast<int>(detected_isa()); ++i) out.push_back(static_cast<Isa>(i));
    return out;
}

/// Restores active_isa() to what it was at construction (tests that loop over
/// supported_isas() with set_active_isa, also when an assertion returns early).
class ActiveIsaGuard {
public:
    ActiveIsaGuard() : before_(active_isa()) {}
    ~ActiveIsaGuard() { set_active_isa(before_); }
    ActiveIsaGuard(const ActiveIsaGuard&) = delete;
    ActiveIsaGuard& operator=(const ActiveIsaGuard&) = delete;

private:
    Isa before_;
};

/// A joint with rotation keys (time, z-angle degrees) and optional position keys.
inline MotionJoint rot_joint(const std::string& name, std::vector<std::pair<float, float>> z_deg,
                             int priority = -1) {
    MotionJoint j;
    j.name = name;
    j.joint = skel().find(name);
    j.priority = priority;
    for (auto [t, a] : z_deg) j.rot_keys.push_back({t, maya_q(0.f, 0.f, a, EulerOrder::XYZ)});
    return j;
}

inline Motion motion(std::vector<MotionJoint> joints, float duration, int priority = 2,
                     float ease_in = 0.f, float ease_out = 0.f, bool loop = false,
                     float loop_in = 0.f, float loop_out = 0.f) {
    Motion m;
    m.joints = std::move(joints);
    m.duration = duration;
    m.base_priority = priority;
    m.ease_in = ease_in;
    m.ease_out = ease_out;
    m.loop = loop;
    m.loop_in = loop_in;
    m.loop_out = loop_out;
    return m;
}

inline std::shared_ptr<const MotionClip> clip(const Motion& m, const std::string& name = "test") {
    return MotionClip::build(m, skel(), name);
}

/// The viewer's curve lookup (`RotationCurve/PositionCurve::getValue`, spec §2.1) on a
/// std::map: the reference the cursor-based sampler must match bit for bit.
template <class V, class Interp>
V viewer_get_value(const std::map<float, V>& keys, float t, Interp interp) {
    auto right = keys.lower_bound(t);
    if (right == keys.end()) return std::prev(right)->second;
    if (right == keys.begin() || right->first == t) return right->second;
    auto left = std::prev(right);
    const float u = (t - left->first) / (right->first - left->first);
    return interp(u, left->second, right->second);
}
inline Quat viewer_rot(const std::map<float, Quat>& keys, float t) {
    return viewer_get_value(keys, t, [](float u, Quat a, Quat b) { return ll_nlerp(u, a, b); });
}
inline Vec3 viewer_pos(const std::map<float, Vec3>& keys, float t) {
    return viewer_get_value(keys, t, [](float u, Vec3 a, Vec3 b) { return lerp(a, b, u); });
}

/// Rotation angle about Z (degrees) of a quaternion that rotates about Z only.
inline float z_angle_deg(Quat q) { return 2.f * std::atan2(q.z, q.w) * 57.29577951308232f; }

}  // namespace slanim::test

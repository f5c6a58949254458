// Plays a motion built in code on ten avatars of a World and prints one avatar's left wrist.
#include <cstdio>

#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/runtime/world.hpp"

int main() {
    const auto skeleton = slanim::Skeleton::default_skeleton();
    slanim::Motion motion;
    motion.duration = 1.f;
    motion.base_priority = 2;
    motion.loop = true;
    motion.loop_out = 1.f;
    slanim::MotionJoint elbow;
    elbow.name = "mElbowLeft";
    elbow.joint = skeleton->find("mElbowLeft");
    elbow.rot_keys.push_back({0.f, slanim::Quat{}});
    elbow.rot_keys.push_back({1.f, slanim::maya_q(0.f, 0.f, 90.f, slanim::EulerOrder::XYZ)});
    motion.joints.push_back(elbow);
    const auto clip = slanim::MotionClip::build(motion, *skeleton, "consumer");

    slanim::World world;
    slanim::Entity first{};
    for (int i = 0; i < 10; ++i) {
        const auto avatar = world.create_avatar(skeleton);
        if (i == 0) first = avatar;
        world.controller(avatar).start(clip);
    }
    for (int frame = 0; frame < 15; ++frame) world.step(1.f / 30.f);
    const auto& pose = world.model_pose(first);
    const auto w = pose.positions[static_cast<std::size_t>(skeleton->find("mWristLeft"))];
    std::printf("runtime consumer: mWristLeft at %.4f %.4f %.4f\n", static_cast<double>(w.x),
                static_cast<double>(w.y), static_cast<double>(w.z));
    return 0;
}

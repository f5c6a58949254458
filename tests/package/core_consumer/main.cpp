// Samples a one-key motion built in code on the embedded default skeleton and prints the model
// position of the left wrist: everything slanim::core offers without reading a file.
#include <cstdio>
#include <vector>

#include "slanim/core/clip.hpp"
#include "slanim/core/local_to_model.hpp"
#include "slanim/core/math.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/core/sampling.hpp"
#include "slanim/core/skeleton.hpp"

int main() {
    const auto skeleton = slanim::Skeleton::default_skeleton();
    slanim::Motion motion;
    motion.duration = 1.f;
    motion.base_priority = 2;
    slanim::MotionJoint elbow;
    elbow.name = "mElbowLeft";
    elbow.joint = skeleton->find("mElbowLeft");
    elbow.rot_keys.push_back({0.f, slanim::maya_q(0.f, 0.f, 45.f, slanim::EulerOrder::XYZ)});
    motion.joints.push_back(elbow);
    const auto clip = slanim::MotionClip::build(motion, *skeleton, "consumer");
    if (!clip) return 1;

    const std::size_t tracks = clip->tracks().size();
    std::vector<slanim::Quat> track_rot(tracks);
    std::vector<slanim::Vec3> track_pos(tracks);
    slanim::SamplingCursor cursor;
    cursor.reset(*clip);
    const slanim::SamplingJob sample{clip.get(), 0.5f, &cursor, track_rot, track_pos};
    if (!sample.run()) return 1;

    const auto n = static_cast<std::size_t>(skeleton->num_joints());
    const auto rest = skeleton->rest_positions();
    std::vector<slanim::Vec3> local_pos(rest.begin(), rest.end()), model_pos(n);
    std::vector<slanim::Vec3> scales(n, slanim::Vec3{1.f, 1.f, 1.f});
    std::vector<slanim::Quat> local_rot(n), model_rot(n);
    local_rot[static_cast<std::size_t>(elbow.joint)] = track_rot[0];
    slanim::LocalToModelJob l2m;
    l2m.skeleton = skeleton.get();
    l2m.local_positions = local_pos;
    l2m.local_rotations = local_rot;
    l2m.local_scales = scales;
    l2m.model_positions = model_pos;
    l2m.model_rotations = model_rot;
    if (!l2m.run()) return 1;
    const auto w = model_pos[static_cast<std::size_t>(skeleton->find("mWristLeft"))];
    std::printf("core consumer: mWristLeft at %.4f %.4f %.4f\n", static_cast<double>(w.x),
                static_cast<double>(w.y), static_cast<double>(w.z));
    return 0;
}

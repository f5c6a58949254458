// SPDX-License-Identifier: MIT
// Plays every real animation of ../shared/anims through the world.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "slanim/core/motion.hpp"
#include "slanim/runtime/world.hpp"
#include "slanim/formats/anim_codec.hpp"

using namespace slanim;
namespace fs = std::filesystem;

namespace {
std::vector<fs::path> real_anims() {
    std::vector<fs::path> out;
    const fs::path dir = fs::path(SLANIM_SHARED_DIR) / "anims";
    if (!fs::is_directory(dir)) return out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.path().extension() == ".anim") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}
}  // namespace

// Every file plays from start to end (plus ease-out) at 30 fps: poses stay finite, rotations
// unit length, and every bone the motion does not position keeps its rest length.
TEST(RealPlay, EveryAnimationPlaysWithSoundPoses) {
    const auto files = real_anims();
    if (files.empty()) GTEST_SKIP() << "../shared/anims is absent (" << SLANIM_SHARED_DIR << ")";
    const auto skel = Skeleton::default_skeleton();
    for (const auto& f : files) {
        auto m = load_motion(f.string(), *skel);
        ASSERT_TRUE(m.ok()) << m.error().message;
        const auto clip = MotionClip::build(*m, *skel, f.filename().string());
        std::vector<bool> positioned(static_cast<std::size_t>(skel->num_joints()), false);
        for (const auto& j : m->joints)
            if (j.joint >= 0 && !j.pos_keys.empty()) positioned[j.joint] = true;

        World w;
        const Entity a = w.create_avatar(skel);
        w.controller(a).start(clip);
        const float end = std::min(m->duration, 30.f) + m->ease_out + 0.1f;
        w.step(0.f);
        for (float t = 0.f; t < end; t += 1.f / 30.f) {
            w.step(1.f / 30.f);
            const ModelPose& mp = w.model_pose(a);
            for (int j = 0; j < skel->num_bones(); ++j) {
                ASSERT_TRUE(is_finite(mp.positions[j]) && is_finite(mp.rotations[j])) << f << " " << skel->name(j);
                ASSERT_NEAR(dot(mp.rotations[j], mp.rotations[j]), 1.f, 1e-3f) << f << " " << skel->name(j);
                const int p = skel->parent(j);
                if (p < 0 || positioned[j]) continue;
                const float rest = length(skel->rest_positions()[j]);
                ASSERT_NEAR(length(mp.positions[j] - mp.positions[p]), rest, 1e-4f + rest * 1e-4f)
                    << f << " " << skel->name(j) << " t=" << t;
            }
        }
    }
}

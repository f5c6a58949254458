// SPDX-License-Identifier: MIT
// The viewer's constraint semantics around every solver (docs/ik.md, "Where constraints act"):
// per motion on its joint states before the blend (LLKeyframeMotion::onUpdate), the joint-mask
// skip, no pose-weight factor, the previous step's skeleton, bad input; and the shared
// constrained files' poses pinned at the frames issue 28 lists, as the viewer's own code plays
// them (values printed by the viewer's LLKeyframeMotion/LLMotionController built as a reference
// program, --solver viewer, 30 fps).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "slanim/core/clip.hpp"
#include "slanim/core/local_to_model.hpp"
#include "slanim/core/motion.hpp"
#include "slanim/formats/anim_codec.hpp"
#include "slanim/ik/constraints.hpp"
#include "slanim/runtime/ik_feature.hpp"
#include "slanim/runtime/world.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;

namespace slanim {
namespace {

using test::rot_joint;
using test::skel;

constexpr ik::Solver kSolvers[] = {ik::Solver::Ccd, ik::Solver::Fabrik, ik::Solver::Viewer};

MotionConstraint hand_to(const std::string& target, Vec3 offset = {2.5f, 0.f, 0.f}) {
    MotionConstraint c;
    c.chain_length = 2;
    c.type = ConstraintType::Point;
    c.source_volume = "R_HAND";
    c.target_volume = target;
    c.target_offset = offset;
    c.ease_in_start = 0.f;
    c.ease_in_stop = 0.f;
    c.ease_out_start = 100.f;
    c.ease_out_stop = 100.f;
    return c;
}

/// Right arm held still, priority 3, with `cs`; `extra` joints added.
Motion arm_motion(std::vector<MotionConstraint> cs, float duration = 2.f, float ease_in = 0.f, float ease_out = 0.f,
                  std::vector<MotionJoint> extra = {}) {
    std::vector<MotionJoint> js{rot_joint("mShoulderRight", {{0.f, 0.f}}), rot_joint("mElbowRight", {{0.f, 0.f}}),
                                rot_joint("mWristRight", {{0.f, 0.f}}), rot_joint("mCollarRight", {{0.f, 0.f}})};
    for (auto& j : extra) js.push_back(std::move(j));
    Motion m = test::motion(std::move(js), duration, 3, ease_in, ease_out);
    m.constraints = std::move(cs);
    return m;
}

struct AvatarWorld {
    World world;
    Entity avatar;
    explicit AvatarWorld(ik::Solver s) {
        ik::IkSettings st;
        st.solver = s;
        IkFeature::of(world).set_default_settings(st);
        avatar = world.create_avatar(Skeleton::default_skeleton());
    }
    const MotionInstance* instance(const MotionClip* c) {
        for (const auto& m : world.controller(avatar).active())
            if (m->clip.get() == c) return m.get();
        return nullptr;
    }
};

bool finite_pose(const ModelPose& mp, int n) {
    for (int j = 0; j < n; ++j)
        if (!is_finite(mp.positions[j]) || !is_finite(mp.rotations[j])) return false;
    return true;
}

/// A volume point (`getVolumePos`) on a model pose.
Vec3 volume_point(const ModelPose& mp, const LocalPose& lp, int volume, Vec3 offset) {
    return rotate(scaled(offset, lp.scales[volume]), mp.rotations[volume]) + mp.positions[volume];
}

// Rule: a constraint is skipped when a motion updated before it this frame claims a chain joint
// at ≥ its priority (the mask), and the chain joints given their keys before the masked one stay
// so on the live pose (applyConstraint returns from inside its key loop).
TEST(ViewerSemantics, MaskedHalfWayLeavesTheKeysOnTheLivePose) {
    const Skeleton& s = skel();
    auto clip = test::clip(arm_motion({hand_to("CHEST")}));
    ik::ConstraintSet set = ik::resolve_constraints(*clip, s);
    ASSERT_EQ(set.constraints.size(), 1u);
    const ik::ConstraintDef& c = set.constraints[0];
    const auto n = static_cast<std::size_t>(s.num_joints());
    std::vector<Vec3> pos(s.rest_positions().begin(), s.rest_positions().end());
    std::vector<Quat> rot(n, Quat::identity());
    std::vector<Vec3> sc(s.rest_scales().begin(), s.rest_scales().end());
    const std::size_t tracks = clip->tracks().size();
    std::vector<Quat> state_rot(tracks, maya_q(0.f, 0.f, 20.f, EulerOrder::XYZ));
    std::vector<Vec3> state_pos(tracks);
    std::vector<ik::ConstraintState> states(1);
    std::vector<ik::ConstraintReport> reports(1);
    std::array<std::uint8_t, kMaxAnimatedJoints> mask{};
    mask[static_cast<std::size_t>(c.joints[1])] = 0xFF;  // the elbow is claimed
    ik::ApplyConstraintsJob job;
    job.skeleton = &s;
    job.constraints = set.constraints;
    job.states = states;
    job.base_priority = 3;
    job.joint_mask = mask;
    job.clip = clip.get();
    job.state_rotations = state_rot;
    job.state_positions = state_pos;
    job.frame_dt = 1.f / 30.f;
    job.joints = {pos, rot, sc};
    job.reports = reports;
    ASSERT_TRUE(job.run());
    EXPECT_EQ(reports[0].outcome, ik::ConstraintOutcome::Masked);
    // J[0] (the wrist) holds its key; the elbow and shoulder were never touched.
    EXPECT_EQ(rot[static_cast<std::size_t>(c.joints[0])], state_rot[static_cast<std::size_t>(c.tracks[0])]);
    EXPECT_EQ(rot[static_cast<std::size_t>(c.joints[1])], Quat::identity());
    EXPECT_EQ(rot[static_cast<std::size_t>(c.joints[2])], Quat::identity());
    for (Quat q : state_rot) EXPECT_EQ(q, maya_q(0.f, 0.f, 20.f, EulerOrder::XYZ));  // states untouched
    // Unmasked: the states move, the live pose is put back as it was.
    mask.fill(0);
    std::fill(rot.begin(), rot.end(), Quat::identity());
    ASSERT_TRUE(job.run());
    EXPECT_EQ(reports[0].outcome, ik::ConstraintOutcome::Applied);
    for (std::size_t j = 0; j < n; ++j) EXPECT_EQ(rot[j], Quat::identity()) << j;
    EXPECT_NE(state_rot[static_cast<std::size_t>(c.tracks[1])], maya_q(0.f, 0.f, 20.f, EulerOrder::XYZ));
}

// Rule: under a newer motion of higher priority on the chain, every solver skips the
// constraint once that motion is at full weight, and the arm is exactly that motion's.
TEST(ViewerSemantics, ConstraintUnderAHigherPriorityMotionIsSkipped) {
    for (ik::Solver solver : kSolvers) {
        AvatarWorld r(solver);
        auto arm = test::clip(arm_motion({hand_to("CHEST")}), "arm");
        auto over = test::clip(test::motion({rot_joint("mShoulderRight", {{0.f, 40.f}}),
                                             rot_joint("mElbowRight", {{0.f, 30.f}}),
                                             rot_joint("mWristRight", {{0.f, 10.f}})},
                                            2.f, 4),
                               "over");
        r.world.controller(r.avatar).start(arm);
        r.world.controller(r.avatar).start(over);
        for (int f = 0; f < 5; ++f) r.world.step(f ? 1.f / 30.f : 0.f);
        EXPECT_EQ(r.instance(arm.get())->ik->reports[0].outcome, ik::ConstraintOutcome::Masked)
            << ik::solver_name(solver);
        // The same world without the constrained motion's constraint: identical pose.
        AvatarWorld plain(solver);
        Motion bare = arm_motion({});
        plain.world.controller(plain.avatar).start(test::clip(bare, "bare"));
        plain.world.controller(plain.avatar).start(over);
        for (int f = 0; f < 5; ++f) plain.world.step(f ? 1.f / 30.f : 0.f);
        const int wrist = skel().find("mWristRight");
        EXPECT_LT(length(r.world.model_pose(r.avatar).positions[wrist] -
                         plain.world.model_pose(plain.avatar).positions[wrist]),
                  1e-6f)
            << ik::solver_name(solver);
    }
}

// Rule: no pose-weight factor. Through the motion's ease-out the constraint keeps its full
// weight (the viewer solves on the motion's own states; the blender does the fading).
TEST(ViewerSemantics, ConstraintKeepsFullWeightThroughTheMotionsEaseOut) {
    for (ik::Solver solver : kSolvers) {
        AvatarWorld r(solver);
        auto arm = test::clip(arm_motion({hand_to("CHEST")}, 2.f, 0.f, 0.5f), "arm");
        r.world.controller(r.avatar).start(arm);
        int checked = 0;
        for (int f = 0; f < 40; ++f) {
            r.world.step(f ? 1.f / 30.f : 0.f);
            if (f == 20) r.world.controller(r.avatar).stop(arm.get());
            const MotionInstance* m = r.instance(arm.get());
            if (!m || f <= 21 || m->pose_weight <= 0.f || m->pose_weight >= 1.f) continue;
            const auto& rep = m->ik->reports[0];
            ASSERT_EQ(rep.outcome, ik::ConstraintOutcome::Applied) << f;
            EXPECT_FLOAT_EQ(rep.weight, 1.f) << ik::solver_name(solver) << " frame " << f << " pose weight "
                                             << m->pose_weight;
            ++checked;
            EXPECT_TRUE(finite_pose(r.world.model_pose(r.avatar), skel().num_joints()));
        }
        EXPECT_GT(checked, 5) << ik::solver_name(solver);
    }
}

// Rule: the previous step's skeleton. The target volume (on the chest, which the same motion
// turns) is read where the last step left it, not where this frame's keys put it.
TEST(ViewerSemantics, AMovingTargetIsReadWhereTheLastStepLeftIt) {
    for (ik::Solver solver : kSolvers) {
        AvatarWorld r(solver);
        std::vector<MotionJoint> chest{rot_joint("mChest", {{0.f, 0.f}, {1.f, 60.f}})};
        auto arm = test::clip(arm_motion({hand_to("CHEST")}, 1.f, 0.f, 0.f, chest), "arm");
        r.world.controller(r.avatar).start(arm);
        const Skeleton& s = skel();
        const int vol = s.find_collision_volume("CHEST");
        ASSERT_GE(vol, 0);
        const Vec3 off{2.5f, 0.f, 0.f};
        r.world.step(0.f);
        int moved = 0;
        for (int f = 1; f < 25; ++f) {
            const Vec3 before = volume_point(r.world.model_pose(r.avatar), r.world.local_pose(r.avatar), vol, off);
            r.world.step(1.f / 30.f);
            const Vec3 after = volume_point(r.world.model_pose(r.avatar), r.world.local_pose(r.avatar), vol, off);
            const auto& rep = r.instance(arm.get())->ik->reports[0];
            ASSERT_EQ(rep.outcome, ik::ConstraintOutcome::Applied);
            EXPECT_LT(length(rep.target - before), 1e-5f) << ik::solver_name(solver) << " frame " << f;
            if (length(after - before) > 1e-3f) ++moved;
        }
        EXPECT_GT(moved, 10);  // the target really moved from frame to frame
    }
}

// Bad input: volumes the skeleton lacks, chains the viewer cannot hold, a zero-length chain, a
// target on the source point: dropped with a warning or solved without NaN, never a NaN pose.
TEST(ViewerSemantics, BadConstraintsNeverGiveNaN) {
    MotionConstraint unknown = hand_to("NO_SUCH_VOLUME");
    MotionConstraint unknown_src = hand_to("CHEST");
    unknown_src.source_volume = "NOPE";
    MotionConstraint too_long = hand_to("CHEST");
    too_long.chain_length = 4;
    {
        auto clip = test::clip(arm_motion({unknown, unknown_src, too_long}));
        ik::ConstraintSet set = ik::resolve_constraints(*clip, skel());
        EXPECT_TRUE(set.constraints.empty());
        ASSERT_EQ(set.warnings.size(), 3u);
        EXPECT_NE(set.warnings[0].find("unknown target"), std::string::npos) << set.warnings[0];
        EXPECT_NE(set.warnings[1].find("unknown source"), std::string::npos) << set.warnings[1];
        EXPECT_NE(set.warnings[2].find(">= 4"), std::string::npos) << set.warnings[2];
    }
    // The source point as target (same volume, same offset): source → target is zero.
    MotionConstraint onto_self = hand_to("R_HAND", {0.f, 0.f, 0.f});
    // Zero length: a source point at its own joint with a chain of length 1 whose lengths the
    // plane type then measures along a zero normal.
    MotionConstraint plane_self = hand_to("R_HAND", {0.f, 0.f, 0.f});
    plane_self.type = ConstraintType::Plane;
    plane_self.chain_length = 1;
    for (ik::Solver solver : kSolvers) {
        for (const MotionConstraint& c : {onto_self, plane_self}) {
            AvatarWorld r(solver);
            auto clip = test::clip(arm_motion({c}));
            r.world.controller(r.avatar).start(clip);
            for (int f = 0; f < 10; ++f) {
                r.world.step(f ? 1.f / 30.f : 0.f);
                ASSERT_TRUE(finite_pose(r.world.model_pose(r.avatar), skel().num_joints()))
                    << ik::solver_name(solver) << " frame " << f;
                const auto& rep = r.instance(clip.get())->ik->reports[0];
                EXPECT_TRUE(std::isfinite(rep.goal_error) && std::isfinite(rep.weight));
                EXPECT_LT(rep.error_before, 1e-5f);
            }
        }
    }
    // A zero-length chain: every chain joint at its parent (a degenerate skeleton pose).
    const Skeleton& s = skel();
    auto clip = test::clip(arm_motion({hand_to("CHEST")}));
    ik::ConstraintSet set = ik::resolve_constraints(*clip, s);
    ASSERT_EQ(set.constraints.size(), 1u);
    const auto n = static_cast<std::size_t>(s.num_joints());
    std::vector<Vec3> pos(s.rest_positions().begin(), s.rest_positions().end());
    for (int k = 0; k <= set.constraints[0].chain_length; ++k) pos[static_cast<std::size_t>(set.constraints[0].joints[k])] = {};
    std::vector<Quat> rot(n, Quat::identity());
    std::vector<Vec3> sc(s.rest_scales().begin(), s.rest_scales().end());
    for (ik::Solver solver : kSolvers) {
        std::vector<Quat> state_rot(clip->tracks().size(), Quat::identity());
        std::vector<Vec3> state_pos(clip->tracks().size());
        std::vector<ik::ConstraintState> states(1);
        std::vector<ik::ConstraintReport> reports(1);
        std::array<std::uint8_t, kMaxAnimatedJoints> mask{};
        ik::ApplyConstraintsJob job;
        job.skeleton = &s;
        job.constraints = set.constraints;
        job.states = states;
        job.base_priority = 3;
        job.joint_mask = mask;
        job.clip = clip.get();
        job.state_rotations = state_rot;
        job.state_positions = state_pos;
        job.frame_dt = 1.f / 30.f;
        job.settings.solver = solver;
        job.joints = {pos, rot, sc};
        job.reports = reports;
        for (int f = 0; f < 5; ++f) {
            ASSERT_TRUE(job.run());
            for (Quat q : state_rot) EXPECT_TRUE(is_finite(q)) << ik::solver_name(solver);
            EXPECT_TRUE(std::isfinite(states[0].fixup_rms) && std::isfinite(states[0].weight));
        }
        EXPECT_TRUE(std::isfinite(states[0].total_length) && states[0].total_length >= 0.f);
    }
}

/// One pinned joint position: frame, joint, world position (the viewer's code, 30 fps).
struct Pin {
    int frame;
    const char* joint;
    Vec3 pos;
};

/// Plays `files` like `slanim play --solver viewer` (a step of 0, then steps of float(1/fps);
/// the motions stopped after the first step at or after `stop_at`) and checks the pins.
void check_pins(const std::vector<std::string>& files, double stop_at, const std::vector<Pin>& pins) {
    const fs::path dir = fs::path(SLANIM_SHARED_DIR) / "anims" / "linden";
    if (!fs::exists(dir)) GTEST_SKIP() << dir << " is absent (the shared reference data)";
    AvatarWorld r(ik::Solver::Viewer);
    std::vector<std::shared_ptr<const MotionClip>> clips;
    for (const auto& f : files) {
        auto m = load_motion((dir / f).string(), skel());
        ASSERT_TRUE(m) << f;
        clips.push_back(MotionClip::build(*m, skel(), f));
        r.world.controller(r.avatar).start(clips.back());
    }
    int last = 0;
    for (const Pin& p : pins) last = std::max(last, p.frame);
    const float dt = static_cast<float>(1.0 / 30.0);
    bool stopped = false;
    for (int f = 0; f <= last; ++f) {
        r.world.step(f == 0 ? 0.f : dt);
        if (stop_at >= 0.0 && !stopped && static_cast<double>(f) / 30.0 >= stop_at) {
            for (const auto& c : clips) r.world.controller(r.avatar).stop(c.get());
            stopped = true;
        }
        for (const Pin& p : pins) {
            if (p.frame != f) continue;
            const Vec3 got = r.world.model_pose(r.avatar).positions[skel().find(p.joint)];
            EXPECT_LT(length(got - p.pos), 1e-4f) << files[0] << " frame " << f << " " << p.joint << ": " << got.x
                                                  << " " << got.y << " " << got.z;
        }
    }
}

// Issue 28's cases, where slanim used to differ from the viewer by 1 cm to 0.5 m.
TEST(ViewerPinned, BowUnderAimBazookaSkipsTheHandConstraints) {
    check_pins({"BOW.anim", "AIM_R_BAZOOKA.anim"}, -1.0,
               {{5, "mWristLeft", {0.315715134f, 0.166976079f, 0.216250122f}},
                {8, "mHandRing3Left", {0.476325244f, -0.112949371f, 0.412076831f}},
                {8, "mWristRight", {0.120301306f, -0.146489412f, 0.334936917f}}});
}

TEST(ViewerPinned, ExpressAfraidKeepsTheHandPinnedThroughItsEaseOut) {
    check_pins({"EXPRESS_AFRAID.anim"}, -1.0,
               {{80, "mWristRight", {0.160657272f, -0.177293494f, 0.497887492f}},
                {90, "mWristRight", {0.163495943f, -0.194527328f, 0.533857167f}}});
}

TEST(ViewerPinned, Dance1AndDance5ReadTheLastStepsSkeleton) {
    check_pins({"DANCE1.anim"}, -1.0,
               {{31, "mWristRight", {0.212739319f, -0.804199159f, 0.00859612226f}},
                {31, "mHandIndex3Right", {0.319492728f, -0.884136975f, 0.127796248f}}});
    check_pins({"DANCE5.anim"}, -1.0,
               {{44, "mElbowRight", {0.0649145097f, -0.0578642488f, 0.27763176f}},
                {44, "mWristRight", {0.0755003616f, -0.187974498f, 0.119567186f}}});
}

// The frame clock's ties at exactly 30 fps (LLMotionController::updateMotions' F64 clock, F32 step).
TEST(ViewerPinned, TiesAtThirtyFpsFallAsInTheViewer) {
    check_pins({"WALK.anim"}, 2.0,
               {{72, "mPelvis", {0.f, -0.00118269469f, 0.00904189143f}},
                {72, "mToeRight", {-0.293540359f, -0.0488674194f, -1.02563298f}}});
    check_pins({"FALLDOWN.anim"}, -1.0,
               {{57, "mSkull", {0.379027933f, 0.00720912823f, 0.583040178f}},
                {171, "mHandMiddle3Right", {0.247267351f, -0.774592161f, 0.297222078f}}});
    check_pins({"SOFT_LAND.anim"}, -1.0,
               {{40, "mHead", {0.0164596029f, -2.11099978e-05f, 0.618638396f}},
                {40, "mToeRight", {0.228868037f, -0.13151601f, -1.04504633f}}});
}

}  // namespace
}  // namespace slanim

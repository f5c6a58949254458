// SPDX-License-Identifier: MIT
// .anim constraints in the runtime (spec §4): resolution, time windows and ramps, the joint
// mask, the pelvis-only case, every solver reaching its goal, and every real constrained motion.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>

#include "slanim/core/clip.hpp"
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

std::shared_ptr<const Skeleton> skel_ptr() { return Skeleton::default_skeleton(); }

MotionConstraint hand_to_chest(float in0 = 0.f, float in1 = 0.f, float out0 = 10.f,
                               float out1 = 10.f) {
    MotionConstraint c;
    c.chain_length = 2;
    c.type = ConstraintType::Point;
    c.source_volume = "R_HAND";
    c.target_volume = "CHEST";
    c.target_offset = {2.5f, 0.f, 0.f};  // a hand's width in front of the chest
    c.ease_in_start = in0;
    c.ease_in_stop = in1;
    c.ease_out_start = out0;
    c.ease_out_stop = out1;
    return c;
}

/// Right arm held still (identity keys), priority 3, with the given constraints.
Motion arm_motion(std::vector<MotionConstraint> cs, float duration = 2.f, int priority = 3) {
    Motion m = test::motion({rot_joint("mShoulderRight", {{0.f, 0.f}}),
                             rot_joint("mElbowRight", {{0.f, 0.f}}),
                             rot_joint("mWristRight", {{0.f, 0.f}}),
                             rot_joint("mCollarRight", {{0.f, 0.f}})},
                            duration, priority);
    m.constraints = std::move(cs);
    return m;
}

struct AvatarRun {
    World world;
    Entity avatar;
    std::shared_ptr<const MotionClip> clip;
    AvatarRun(const Motion& m, ik::Solver solver) {
        ik::IkSettings s;
        s.solver = solver;
        IkFeature::of(world).set_default_settings(s);
        avatar = world.create_avatar(skel_ptr());
        clip = MotionClip::build(m, skel(), "arm");
        world.controller(avatar).start(clip);
    }
    const MotionInstance* instance() {
        for (const auto& m : world.controller(avatar).active())
            if (m->clip == clip) return m.get();
        return nullptr;
    }
    const ik::ConstraintReport& report(std::size_t i = 0) { return instance()->ik->reports[i]; }
};

TEST(ConstraintResolve, RealSitChainIsWristElbowShoulder) {
    const fs::path f = fs::path(SLANIM_SHARED_DIR) / "anims/linden/SIT.anim";
    if (!fs::exists(f)) GTEST_SKIP() << f << " is absent";
    auto m = load_motion(f.string(), skel());
    ASSERT_TRUE(m) << m.error().describe();
    auto clip = MotionClip::build(*m, skel(), "sit");
    const ik::ConstraintSet set = ik::resolve_constraints(*clip, skel());
    ASSERT_EQ(set.constraints.size(), 2u);
    EXPECT_TRUE(set.warnings.empty());
    const ik::ConstraintDef& c = set.constraints[0];
    EXPECT_EQ(c.chain_length, 2);
    EXPECT_EQ(skel().name(c.source_volume), "R_HAND");
    EXPECT_EQ(skel().name(c.joints[0]), "mWristRight");
    EXPECT_EQ(skel().name(c.joints[1]), "mElbowRight");
    EXPECT_EQ(skel().name(c.joints[2]), "mShoulderRight");
    for (int k = 0; k <= 2; ++k) EXPECT_EQ(clip->tracks()[c.tracks[k]].joint, c.joints[k]);
}

TEST(ConstraintResolve, DropsOverlongChainsAndUnanimatedJointsWithWarnings) {
    MotionConstraint overlong = hand_to_chest();
    overlong.chain_length = 4;
    MotionConstraint unanimated = hand_to_chest();
    unanimated.source_volume = "L_HAND";  // the left arm is not animated
    auto clip = MotionClip::build(arm_motion({overlong, unanimated, hand_to_chest()}), skel(), "x");
    const ik::ConstraintSet set = ik::resolve_constraints(*clip, skel());
    ASSERT_EQ(set.constraints.size(), 1u);
    EXPECT_EQ(set.constraints[0].index, 2);
    ASSERT_EQ(set.warnings.size(), 2u);
    EXPECT_NE(set.warnings[0].find(">= 4"), std::string::npos) << set.warnings[0];
    EXPECT_NE(set.warnings[1].find("mWristLeft"), std::string::npos) << set.warnings[1];
}

TEST(ConstraintGround, DefaultGroundIsBelowTheFeet) {
    const float p2f = ik::pelvis_to_foot(skel());
    EXPECT_GT(p2f, 0.9f);
    EXPECT_LT(p2f, 1.1f);
    EXPECT_FLOAT_EQ(ik::default_ground(skel()).height, -p2f);
    const ik::GroundPlane tilted{-1.f, {0.f, 0.6f, 0.8f}};
    const Vec3 b = tilted.below({0.3f, 0.5f, 2.f});
    EXPECT_NEAR(dot(b - Vec3{0.f, 0.f, -1.f}, tilted.normal), 0.f, 1e-6f);
    EXPECT_EQ(b.x, 0.3f);
}

TEST(ConstraintBudget, ViewerIterationsFollowPixelArea) {
    EXPECT_EQ(ik::viewer_iteration_budget(1e9f), 20);
    EXPECT_EQ(ik::viewer_iteration_budget(80000.f), 20);
    EXPECT_EQ(ik::viewer_iteration_budget(1000.f), 1);
    EXPECT_EQ(ik::viewer_iteration_budget(10.f), 1);
    EXPECT_EQ(ik::viewer_iteration_budget(40500.f), 11);  // 10.5 rounds away from zero
}

class EverySolver : public ::testing::TestWithParam<ik::Solver> {};

TEST_P(EverySolver, HandReachesTheChestTarget) {
    AvatarRun r(arm_motion({hand_to_chest()}), GetParam());
    for (int f = 0; f < 30; ++f) r.world.step(f ? 1.f / 30.f : 0.f);
    const auto& rep = r.report();
    ASSERT_EQ(rep.outcome, ik::ConstraintOutcome::Applied);
    EXPECT_GT(rep.error_before, 0.05f);  // the arm starts far from the target
    EXPECT_TRUE(rep.reachable);
    EXPECT_FLOAT_EQ(rep.weight, 1.f);
    // CCD and FABRIK converge to the tolerance. The viewer's relaxation aims the hand volume
    // and then restores the hand's world rotation, which swings the volume point away again
    // (spec §4.2 step 8.6): it only gets closer.
    if (GetParam() == ik::Solver::Viewer)
        EXPECT_LT(rep.error_after, 0.5f * rep.error_before);
    else
        EXPECT_LT(rep.goal_error, 0.001f) << ik::solver_name(GetParam());
    // The model pose agrees with the report: the hand volume point is where the report says.
    const ModelPose& mp = r.world.model_pose(r.avatar);
    for (int j = 0; j < skel().num_joints(); ++j) {
        ASSERT_TRUE(is_finite(mp.positions[j]));
        ASSERT_TRUE(is_finite(mp.rotations[j]));
    }
}

TEST_P(EverySolver, HandKeepsItsWorldRotation) {
    AvatarRun r(arm_motion({hand_to_chest()}), GetParam());
    r.world.step(0.f);
    ik::IkSettings off;
    off.enabled = false;
    World plain;
    IkFeature::of(plain).set_default_settings(off);
    const Entity a = plain.create_avatar(skel_ptr());
    plain.controller(a).start(r.clip);
    plain.step(0.f);
    const int wrist = skel().find("mWristRight");
    const Quat q1 = r.world.model_pose(r.avatar).rotations[wrist];
    const Quat q0 = plain.model_pose(a).rotations[wrist];
    EXPECT_GT(std::fabs(dot(q0, q1)), 0.99999f);
    // ...while the elbow moved.
    const int elbow = skel().find("mElbowRight");
    EXPECT_LT(std::fabs(dot(r.world.model_pose(r.avatar).rotations[elbow],
                            plain.model_pose(a).rotations[elbow])),
              0.999f);
}

INSTANTIATE_TEST_SUITE_P(Solvers, EverySolver,
                         ::testing::Values(ik::Solver::Ccd, ik::Solver::Fabrik, ik::Solver::Viewer),
                         [](const ::testing::TestParamInfo<ik::Solver>& p) { return std::string(ik::solver_name(p.param)); });

TEST(ConstraintWindow, RampsInAndOutLinearlyOnMotionTime) {
    // ease in 0.5..1.0 s, ease out 1.5..2.0 s
    AvatarRun r(arm_motion({hand_to_chest(0.5f, 1.f, 1.5f, 2.f)}, 3.f), ik::Solver::Ccd);
    const float dt = 0.05f;
    for (int f = 0; f <= 50; ++f) {
        r.world.step(f ? dt : 0.f);
        const float t = r.instance()->curve_time;
        const auto& rep = r.report();
        if (t < 0.5f) {
            EXPECT_EQ(rep.outcome, ik::ConstraintOutcome::BeforeWindow) << t;
        } else if (t > 2.f) {
            EXPECT_EQ(rep.outcome, ik::ConstraintOutcome::AfterWindow) << t;
            EXPECT_FALSE(r.instance()->ik->states[0].active);
        } else {
            const float ramp = std::min(clamp_rescale(t, 0.5f, 1.f, 0.f, 1.f),
                                        clamp_rescale(t, 1.5f, 2.f, 1.f, 0.f));
            if (ramp == 0.f) {  // at exactly 0.5 s: nothing to solve
                EXPECT_EQ(rep.outcome, ik::ConstraintOutcome::ZeroWeight) << t;
                continue;
            }
            ASSERT_EQ(rep.outcome, ik::ConstraintOutcome::Applied) << t;
            // Reachable target: the reachability weight stays 1 (set on activation).
            EXPECT_NEAR(rep.weight, ramp, 1e-5f) << t;
            EXPECT_NEAR(length(rep.goal - lerp(rep.source, rep.target, ramp)), 0.f, 1e-5f);
        }
    }
}

TEST(ConstraintWindow, DefaultEaseOutStopZeroDisablesAfterTimeZero) {
    // The viewer's surprise: ease_out_stop = 0 deactivates the constraint for every t > 0.
    AvatarRun r(arm_motion({hand_to_chest(0.f, 0.f, 0.f, 0.f)}), ik::Solver::Ccd);
    r.world.step(0.f);
    EXPECT_EQ(r.report().outcome, ik::ConstraintOutcome::Applied);
    r.world.step(0.1f);
    EXPECT_EQ(r.report().outcome, ik::ConstraintOutcome::AfterWindow);
}

TEST(ConstraintMask, NewerMotionAtHigherPriorityOnTheChainSkipsIt) {
    AvatarRun r(arm_motion({hand_to_chest()}, 2.f, 3), ik::Solver::Ccd);
    r.world.step(0.f);
    EXPECT_EQ(r.report().outcome, ik::ConstraintOutcome::Applied);
    // A newer motion that rotates the elbow at priority 3 (≥ 3) masks the constraint.
    auto elbow = test::clip(test::motion({rot_joint("mElbowRight", {{0.f, 30.f}})}, 2.f, 3));
    r.world.controller(r.avatar).start(elbow);
    // Its signature joins the mask once its pose weight reached 1 (spec §3.3): next frame.
    r.world.step(0.1f);
    r.world.step(0.1f);
    EXPECT_EQ(r.report().outcome, ik::ConstraintOutcome::Masked);
    // A newer motion at priority 2 does not.
    AvatarRun r2(arm_motion({hand_to_chest()}, 2.f, 3), ik::Solver::Ccd);
    r2.world.step(0.f);
    auto low = test::clip(test::motion({rot_joint("mElbowRight", {{0.f, 30.f}})}, 2.f, 2));
    r2.world.controller(r2.avatar).start(low);
    r2.world.step(0.1f);
    r2.world.step(0.1f);
    EXPECT_EQ(r2.report().outcome, ik::ConstraintOutcome::Applied);
}

TEST(ConstraintPelvis, ChainLengthZeroMovesThePelvisToTheGround) {
    // Like sit-on-ground: the BUTT volume's bottom to GROUND, chain length 0 (pelvis only).
    MotionConstraint c;
    c.chain_length = 0;
    c.source_volume = "BUTT";
    c.source_offset = {0.f, 0.f, -1.f};
    c.target_ground = true;
    c.ease_out_start = c.ease_out_stop = 10.f;
    MotionJoint pelvis = rot_joint("mPelvis", {{0.f, 0.f}});
    pelvis.pos_keys.push_back({0.f, Vec3{}});
    Motion m = test::motion({pelvis}, 2.f, 3);
    m.constraints = {c};
    AvatarRun r(m, ik::Solver::Ccd);
    r.world.step(0.f);
    const auto& rep = r.report();
    ASSERT_EQ(rep.outcome, ik::ConstraintOutcome::Applied);
    const float ground = ik::default_ground(skel()).height;
    EXPECT_NEAR(rep.target.z, ground, 1e-5f);
    EXPECT_NEAR(rep.error_after, 0.f, 1e-4f);
    // The pelvis went down by the butt-to-ground distance.
    EXPECT_NEAR(r.world.local_pose(r.avatar).positions[skel().pelvis()].z, rep.target.z - rep.source.z,
                1e-4f);
    // Without a position curve nothing moves.
    MotionJoint rot_only = rot_joint("mPelvis", {{0.f, 0.f}});
    Motion m2 = test::motion({rot_only}, 2.f, 3);
    m2.constraints = {c};
    AvatarRun r2(m2, ik::Solver::Ccd);
    r2.world.step(0.f);
    EXPECT_EQ(r2.report().outcome, ik::ConstraintOutcome::NoPosition);
}

TEST(ConstraintSettings, PerAvatarSolverOverridesTheWorld) {
    World w;
    ik::IkSettings viewer;
    viewer.solver = ik::Solver::Viewer;
    IkFeature::of(w).set_default_settings(viewer);
    const Entity a = w.create_avatar(skel_ptr());
    const Entity b = w.create_avatar(skel_ptr());
    ik::IkSettings fab;
    fab.solver = ik::Solver::Fabrik;
    IkFeature::of(w).set_settings(b, fab);
    EXPECT_EQ(IkFeature::of(w).settings(a).solver, ik::Solver::Viewer);
    EXPECT_EQ(IkFeature::of(w).settings(b).solver, ik::Solver::Fabrik);
    IkFeature::of(w).clear_settings(b);
    EXPECT_EQ(IkFeature::of(w).settings(b).solver, ik::Solver::Viewer);
    // Settings the solvers would reject are refused, with nothing changed.
    ik::IkSettings bad = fab;
    bad.max_iterations = 0;
    const Status st = IkFeature::of(w).set_default_settings(bad);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.error().message.find("max_iterations"), std::string::npos);
    EXPECT_EQ(IkFeature::of(w).default_settings().solver, ik::Solver::Viewer);
    bad = fab;
    bad.tolerance = std::numeric_limits<float>::quiet_NaN();
    EXPECT_FALSE(IkFeature::of(w).set_settings(b, bad).ok());
    EXPECT_EQ(IkFeature::of(w).settings(b).solver, ik::Solver::Viewer);
    const Entity gone = w.create_avatar(skel_ptr());
    w.destroy(gone);
    EXPECT_FALSE(IkFeature::of(w).set_settings(gone, fab).ok());
    EXPECT_TRUE(IkFeature::of(w).set_settings(b, fab).ok());
    EXPECT_EQ(ik::parse_solver("fabrik"), ik::Solver::Fabrik);
    EXPECT_FALSE(ik::parse_solver("FABRIK").has_value());
}

// Every constrained animation of ../shared/anims, every solver: finite poses, and CCD within
// 1 mm of its goal whenever the constraint is at full weight and reachable.
TEST(ConstraintRealData, EveryConstrainedAnimationEverySolver) {
    const fs::path dir = fs::path(SLANIM_SHARED_DIR) / "anims";
    if (!fs::exists(dir)) GTEST_SKIP() << dir << " is absent";
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.path().extension() == ".anim") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    int constrained = 0, ground = 0, plane = 0, checked_full = 0;
    for (const auto& f : files) {
        auto m = load_motion(f.string(), skel());
        if (!m || m->constraints.empty()) continue;
        ++constrained;
        for (const auto& c : m->constraints) {
            ground += c.target_ground;
            plane += c.type == ConstraintType::Plane;
        }
        for (ik::Solver s : {ik::Solver::Ccd, ik::Solver::Fabrik, ik::Solver::Viewer}) {
            AvatarRun r(*m, s);
            const float dur = std::min(r.clip->duration(), 6.f);
            for (int f_ = 0; static_cast<float>(f_) * (1.f / 30.f) <= dur; ++f_) {
                r.world.step(f_ ? 1.f / 30.f : 0.f);
                const ModelPose& mp = r.world.model_pose(r.avatar);
                for (int j = 0; j < skel().num_bones(); ++j)
                    ASSERT_TRUE(is_finite(mp.positions[j]) && is_finite(mp.rotations[j]))
                        << f << " " << ik::solver_name(s) << " frame " << f_;
                const MotionInstance* inst = r.instance();
                if (!inst) break;
                for (const auto& rep : inst->ik->reports) {
                    if (rep.outcome != ik::ConstraintOutcome::Applied) continue;
                    ASSERT_TRUE(std::isfinite(rep.goal_error));
                    if (s == ik::Solver::Ccd && rep.weight >= 0.999f && rep.reachable) {
                        ++checked_full;
                        EXPECT_LE(rep.goal_error, 0.001f) << f << " frame " << f_;
                    }
                }
            }
        }
    }
    if (constrained == 0) GTEST_SKIP() << "no constrained animation in " << dir;
    EXPECT_GE(constrained, 20);
    EXPECT_GT(ground, 0);
    EXPECT_GT(plane, 0);
    EXPECT_GT(checked_full, 100);
}

// A playing world with constraints runs the dispatched kernels around the solvers (the
// blender's fold, local-to-model, which the constraint job's world transforms match): on every
// instruction set this CPU has, its model poses have the scalar run's bits, for every solver, on
// the hand-to-chest motion and on the first real constrained animations.
TEST(ConstraintIsa, EverySolverGivesTheSameBitsOnEveryInstructionSet) {
    const test::ActiveIsaGuard guard;
    std::vector<Motion> motions{arm_motion({hand_to_chest(0.f, 0.5f, 1.5f, 2.f)})};
    const fs::path dir = fs::path(SLANIM_SHARED_DIR) / "anims";
    if (fs::exists(dir)) {
        std::vector<fs::path> files;
        for (const auto& e : fs::recursive_directory_iterator(dir))
            if (e.path().extension() == ".anim") files.push_back(e.path());
        std::sort(files.begin(), files.end());
        for (const auto& f : files) {
            auto m = load_motion(f.string(), skel());
            if (m && !m->constraints.empty() && motions.size() < 5) motions.push_back(*m);
        }
    }
    for (std::size_t mi = 0; mi < motions.size(); ++mi) {
        for (ik::Solver solver : {ik::Solver::Ccd, ik::Solver::Fabrik, ik::Solver::Viewer}) {
            SCOPED_TRACE("motion " + std::to_string(mi) + " " + ik::solver_name(solver));
            std::vector<float> want;
            for (Isa isa : test::supported_isas()) {
                ASSERT_TRUE(set_active_isa(isa));
                AvatarRun r(motions[mi], solver);
                std::vector<float> got;
                for (int frame = 0; frame < 40; ++frame) {
                    r.world.step(frame ? 1.f / 30.f : 0.f);
                    const ModelPose& mp = r.world.model_pose(r.avatar);
                    for (int j = 0; j < skel().num_joints(); ++j) {
                        const Vec3 p = mp.positions[j];
                        const Quat q = mp.rotations[j];
                        got.insert(got.end(), {p.x, p.y, p.z, q.x, q.y, q.z, q.w});
                    }
                }
                if (isa == Isa::Scalar) want = got;
                else
                    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
                        << isa_name(isa);
            }
        }
    }
}

}  // namespace
}  // namespace slanim

namespace slanim {
namespace {

TEST(ConstraintWindow, UsesTheLoopedMotionTime) {
    // A 1 s loop; the constraint acts from 0.2 s to 0.8 s of every cycle.
    Motion m = arm_motion({hand_to_chest(0.2f, 0.3f, 0.7f, 0.8f)}, 1.f);
    m.loop = true;
    m.loop_in = 0.f;
    m.loop_out = 1.f;
    AvatarRun r(m, ik::Solver::Ccd);
    r.world.step(0.f);
    for (int i = 0; i < 15; ++i) r.world.step(0.1f);  // t = 1.5 s: looped 0.5 s
    EXPECT_NEAR(r.instance()->curve_time, 0.5f, 1e-4f);
    EXPECT_EQ(r.report().outcome, ik::ConstraintOutcome::Applied);
    for (int i = 0; i < 4; ++i) r.world.step(0.1f);  // t = 1.9 s: looped 0.9 s
    EXPECT_EQ(r.report().outcome, ik::ConstraintOutcome::AfterWindow);
    for (int i = 0; i < 3; ++i) r.world.step(0.1f);  // t = 2.2 s: looped 0.2 s, active again
    EXPECT_EQ(r.report().outcome, ik::ConstraintOutcome::Applied);
    EXPECT_TRUE(r.instance()->ik->states[0].active);
}

TEST(ConstraintSettings, EachAvatarIsSolvedWithItsOwnSolver) {
    // Same motion, same world: the avatar with the viewer solver keeps the viewer's residual,
    // the CCD one reaches the goal; with IK off the pose is the keyframe pose.
    World w;
    const auto clip = MotionClip::build(arm_motion({hand_to_chest()}), skel(), "arm");
    const Entity ccd = w.create_avatar(skel_ptr());
    const Entity viewer = w.create_avatar(skel_ptr());
    const Entity off = w.create_avatar(skel_ptr());
    ik::IkSettings vs;
    vs.solver = ik::Solver::Viewer;
    IkFeature::of(w).set_settings(viewer, vs);
    ik::IkSettings none;
    none.enabled = false;
    IkFeature::of(w).set_settings(off, none);
    for (Entity e : {ccd, viewer, off}) w.controller(e).start(clip);
    w.step(0.f);
    const auto report = [&](Entity e) { return w.controller(e).active()[0]->ik->reports[0]; };
    EXPECT_LT(report(ccd).goal_error, 0.001f);
    EXPECT_GT(report(viewer).goal_error, 0.005f);
    EXPECT_EQ(report(off).outcome, ik::ConstraintOutcome::BeforeWindow);  // never evaluated
    const int elbow = skel().find("mElbowRight");
    EXPECT_EQ(w.local_pose(off).rotations[elbow], Quat::identity());
    EXPECT_NE(w.local_pose(ccd).rotations[elbow], w.local_pose(viewer).rotations[elbow]);
}

// Constraint geometry on a custom skeleton as deep as Skeleton::build allows (216 joints: a
// chain of 214 bones and two volumes). The world transforms of the source and target volumes
// used to stop after 64 ancestors, which put the target 1.37 m too low here.
TEST(ConstraintDeepSkeleton, VolumesBelowAnyDepthAreWhereLocalToModelPutsThem) {
    constexpr int kBones = kMaxAnimatedJoints - 2;
    constexpr float kStep = 0.01f;  // each bone 1 cm above its parent
    SkeletonDesc d;
    for (int i = 0; i < kBones; ++i) {
        JointDesc b;
        b.name = i == 0 ? "mPelvis" : "mBone" + std::to_string(i);
        b.parent = i == 0 ? "" : (i == 1 ? "mPelvis" : "mBone" + std::to_string(i - 1));
        b.position = {0.f, 0.f, kStep};
        d.bones.push_back(b);
    }
    const auto volume = [](const char* name, const std::string& parent, Vec3 position) {
        JointDesc v;
        v.kind = JointKind::CollisionVolume;
        v.name = name;
        v.parent = parent;
        v.position = position;
        return v;
    };
    const std::string tip = "mBone" + std::to_string(kBones - 1);  // depth 213
    d.volumes.push_back(volume("SRC", tip, {}));
    d.volumes.push_back(volume("TGT", "mBone200", {0.01f, 0.f, 0.12f}));  // 1.4 cm from SRC
    auto built = Skeleton::build(d);
    ASSERT_TRUE(built) << built.error().describe();
    const std::shared_ptr<const Skeleton> deep = *built;
    ASSERT_EQ(deep->num_joints(), kMaxAnimatedJoints);

    Motion m;
    for (int i = kBones - 3; i < kBones; ++i) {  // the chain J[0..2]: the tip bone and two parents
        MotionJoint j;
        j.name = "mBone" + std::to_string(i);
        j.joint = deep->find(j.name);
        j.rot_keys.push_back({0.f, Quat::identity()});
        m.joints.push_back(j);
    }
    m.duration = 2.f;
    m.base_priority = 3;
    MotionConstraint c;
    c.chain_length = 2;
    c.source_volume = "SRC";
    c.target_volume = "TGT";
    c.ease_out_start = c.ease_out_stop = 10.f;
    m.constraints = {c};

    World world;
    const Entity avatar = world.create_avatar(deep);
    const auto clip = MotionClip::build(m, *deep, "deep");
    ASSERT_EQ(ik::resolve_constraints(*clip, *deep).constraints.size(), 1u);
    world.controller(avatar).start(clip);
    for (int f = 0; f < 10; ++f) world.step(f ? 1.f / 30.f : 0.f);
    const ik::ConstraintReport& rep = world.controller(avatar).active()[0]->ik->reports[0];
    ASSERT_EQ(rep.outcome, ik::ConstraintOutcome::Applied);
    // TGT hangs from mBone200 (depth 200), which the chain does not move: its point is the model
    // pose's, 200 bones up plus its own offset.
    const int tgt = deep->find("TGT");
    const Vec3 model = world.model_pose(avatar).positions[tgt];
    EXPECT_NEAR(model.z, 200 * kStep + 0.12f, 1e-4f);
    EXPECT_NEAR(rep.target.x, model.x, 1e-5f);
    EXPECT_NEAR(rep.target.y, model.y, 1e-5f);
    EXPECT_NEAR(rep.target.z, model.z, 1e-4f);
    // The source starts at the tip, 214 bones up, and the solver pulls it onto the target.
    EXPECT_NEAR(rep.error_before, length(Vec3{0.01f, 0.f, 0.01f}), 2e-3f);
    EXPECT_LT(rep.error_after, 0.001f);
    const Vec3 src = world.model_pose(avatar).positions[deep->find("SRC")];
    EXPECT_NEAR(length(src - model), rep.error_after, 1e-4f);
}

}  // namespace
}  // namespace slanim

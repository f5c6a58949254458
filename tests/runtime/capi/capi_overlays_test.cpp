// SPDX-License-Identifier: MIT
// slanim_avatar_joint_owners and slanim_avatar_constraint_targets (slanim.h, overlays): the
// owner of each joint after a step by the blend's priority rule, and the constraints' reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "capi_test_util.hpp"

namespace slanim::capi_test {
namespace {

const std::string kKiss = kShared + "/anims/linden/BLOWKISS.anim";
constexpr std::uint8_t kKissId[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

std::vector<slanim_joint_owner> owners_of(slanim_world* w, slanim_avatar a) {
    std::size_t needed = 0;
    const slanim_status first = slanim_avatar_joint_owners(w, a, nullptr, 0, &needed);
    EXPECT_EQ(first, needed ? SLANIM_ERROR_BUFFER_TOO_SMALL : SLANIM_OK);
    std::vector<slanim_joint_owner> out(needed);
    EXPECT_EQ(slanim_avatar_joint_owners(w, a, out.data(), out.size(), &needed), SLANIM_OK) << slanim_last_error();
    return out;
}

std::vector<slanim_constraint_target> targets_of(slanim_world* w, slanim_avatar a) {
    std::size_t needed = 0;
    const slanim_status first = slanim_avatar_constraint_targets(w, a, nullptr, 0, &needed);
    EXPECT_EQ(first, needed ? SLANIM_ERROR_BUFFER_TOO_SMALL : SLANIM_OK);
    std::vector<slanim_constraint_target> out(needed);
    EXPECT_EQ(slanim_avatar_constraint_targets(w, a, out.data(), out.size(), &needed), SLANIM_OK) << slanim_last_error();
    return out;
}

/// Per joint: the priority of the clip's rotation/position track on it, or −1.
std::map<int, int> track_priorities(const MotionClip& clip) {
    std::map<int, int> out;
    for (const ClipTrack& t : clip.tracks())
        if (t.joint >= 0 && (t.usage & (kUsagePos | kUsageRot)))
            out[t.joint] = std::max(out.count(t.joint) ? out[t.joint] : -1, static_cast<int>(t.priority));
    return out;
}

TEST(CApiOverlays, JointOwnersFollowTheTrackPrioritiesNewestWinsTies) {
    SKIP_WITHOUT(kDance);
    SKIP_WITHOUT(kKiss);
    DanceWorld d;
    ASSERT_NO_FATAL_FAILURE(open_dance_world(d, 1, 0.f));
    EXPECT_TRUE(owners_of(d.cw.w, d.a).empty());  // before any step: nothing evaluated
    const auto kiss = read_or_skip(kKiss);
    ASSERT_EQ(slanim_world_load_motion(d.cw.w, kKissId, kiss.data(), kiss.size()), SLANIM_OK) << slanim_last_error();
    ASSERT_EQ(slanim_avatar_start_motion(d.cw.w, d.a, kKissId, 0.f), SLANIM_OK);
    ASSERT_EQ(slanim_world_step(d.cw.w, 0.f), SLANIM_OK);
    for (int i = 0; i < 30; ++i) ASSERT_EQ(slanim_world_step(d.cw.w, 1.f / 30.f), SLANIM_OK);  // 1 s: both eased in

    const Skeleton& sk = *Skeleton::default_skeleton();
    const auto dance = track_priorities(*cxx_clip(read_or_skip(kDance), sk));
    const auto blow = track_priorities(*cxx_clip(kiss, sk));
    std::map<int, std::pair<const std::uint8_t*, int>> want;  // joint → (motion, priority)
    for (const auto& [j, p] : dance) want[j] = {kDanceId, p};
    for (const auto& [j, p] : blow)  // BLOWKISS is the newer: it wins a tie
        if (!want.count(j) || p >= want[j].second) want[j] = {kKissId, p};

    const auto owners = owners_of(d.cw.w, d.a);
    ASSERT_EQ(owners.size(), want.size());
    int kiss_joints = 0;
    for (std::size_t k = 0; k < owners.size(); ++k) {
        const slanim_joint_owner& o = owners[k];
        if (k > 0) {
            EXPECT_LT(owners[k - 1].joint, o.joint);  // joint-index order
        }
        ASSERT_TRUE(want.count(o.joint)) << sk.name(o.joint);
        EXPECT_EQ(o.priority, want[o.joint].second) << sk.name(o.joint);
        EXPECT_EQ(std::memcmp(o.motion_id, want[o.joint].first, 16), 0) << sk.name(o.joint);
        if (std::memcmp(o.motion_id, kKissId, 16) == 0) ++kiss_joints;
    }
    EXPECT_GT(kiss_joints, 0);
    EXPECT_LT(kiss_joints, static_cast<int>(owners.size()));

    // After both end (and DANCE1 is stopped), nobody owns anything.
    ASSERT_EQ(slanim_avatar_stop_all_motions(d.cw.w, d.a, 1), SLANIM_OK);
    ASSERT_EQ(slanim_world_step(d.cw.w, 1.f / 30.f), SLANIM_OK);
    EXPECT_TRUE(owners_of(d.cw.w, d.a).empty());
}

TEST(CApiOverlays, ConstraintTargetsAreTheReportsOfTheLastStepInTheRootFrame) {
    SKIP_WITHOUT(kDance);
    DanceWorld d;
    ASSERT_NO_FATAL_FAILURE(open_dance_world(d, 1, 0.f));
    ASSERT_EQ(slanim_world_step(d.cw.w, 0.f), SLANIM_OK);
    const Skeleton& sk = *Skeleton::default_skeleton();
    int applied = 0;
    for (int i = 0; i < 60; ++i) {
        ASSERT_EQ(slanim_world_step(d.cw.w, 1.f / 30.f), SLANIM_OK);
        const auto targets = targets_of(d.cw.w, d.a);
        ASSERT_EQ(targets.size(), 2u);  // DANCE1's two constraints, file order
        for (std::size_t c = 0; c < targets.size(); ++c) {
            const slanim_constraint_target& t = targets[c];
            EXPECT_EQ(t.index, static_cast<int32_t>(c));
            EXPECT_EQ(std::memcmp(t.motion_id, kDanceId, 16), 0);
            ASSERT_GE(t.source_joint, 0);
            EXPECT_GE(t.state, SLANIM_CONSTRAINT_APPLIED);
            EXPECT_LE(t.state, SLANIM_CONSTRAINT_NO_POSITION);
            if (t.state != SLANIM_CONSTRAINT_APPLIED) continue;
            ++applied;
            EXPECT_TRUE(t.ground || t.target_joint >= 0) << sk.name(t.source_joint);
            EXPECT_GE(t.weight, 0.f);
            EXPECT_LE(t.weight, 1.f);
            for (int k = 0; k < 3; ++k) {  // goal = lerp(source, target, weight); points near the avatar
                EXPECT_NEAR(t.goal[k], t.source[k] + (t.target[k] - t.source[k]) * t.weight, 1e-5f);
                EXPECT_LT(std::fabs(t.target[k]), 3.f);
            }
        }
    }
    EXPECT_GT(applied, 0);
    std::size_t needed = 0;
    slanim_constraint_target one{};
    EXPECT_EQ(slanim_avatar_constraint_targets(d.cw.w, d.a, &one, 1, &needed), SLANIM_ERROR_BUFFER_TOO_SMALL);
    EXPECT_EQ(needed, 2u);
    EXPECT_EQ(slanim_avatar_constraint_targets(d.cw.w, d.a + 1, &one, 1, &needed), SLANIM_ERROR_INVALID_HANDLE);
}

}  // namespace
}  // namespace slanim::capi_test

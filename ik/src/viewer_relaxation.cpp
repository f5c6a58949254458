// SPDX-License-Identifier: MIT
// The viewer's constraint solver: LLKeyframeMotion::applyConstraint, chain case (spec §4.2
// step 8). Operations follow the viewer's order so results stay close to the viewer's floats.
#include <array>
#include <cmath>

#include "chain_math.hpp"
#include "slanim/ik/solvers.hpp"

namespace slanim::ik {

namespace {
constexpr float kJointLengthK = 0.7f;           // JOINT_LENGTH_K
constexpr float kVelocityDamping = 0.7f;        // velocities[k] * 0.7f
constexpr float kMinAccelerationSquared = 0.0005f * 0.0005f;  // MIN_ACCELERATION_SQUARED
constexpr int kMinIterationCount = 2;           // MIN_ITERATION_COUNT
}  // namespace

bool ViewerRelaxationJob::validate() const {
    if (!detail::valid_pose(pose)) return false;
    const std::size_t n = pose.local_rotations.size();
    if (!lengths.empty() && lengths.size() != n - 1) return false;
    for (float l : lengths)
        if (!std::isfinite(l) || l < 0.f) return false;
    if (!start_points.empty() && start_points.size() != n - 2) return false;
    for (const Vec3& p : start_points)
        if (!is_finite(p)) return false;
    if (!relaxed_points.empty() && relaxed_points.size() != n - 2) return false;
    return is_finite(goal) && std::isfinite(weight) && weight >= 0.f && weight <= 1.f &&
           max_iterations >= 1;
}

bool ViewerRelaxationJob::run() const {
    if (!validate()) return false;
    const int n = static_cast<int>(pose.local_rotations.size());
    const int chain = n - 1;  // L

    detail::ChainWorld w;
    detail::forward_kinematics(pose, w);
    const Quat end_world = w.rot[0];  // "end_rot": saved before anything moves
    detail::LocalRotations input;  // the joint states' rotations
    detail::save_local_rotations(pose, input);

    std::array<float, kMaxSolverJoints> len{};
    if (lengths.empty()) {
        // initializeConstraint on the current pose.
        len[0] = length(w.pos[1] - w.effector);
        for (int k = 1; k < chain; ++k) len[k] = length(w.pos[k] - w.pos[k + 1]);
    } else {
        for (int k = 0; k < chain; ++k) len[k] = lengths[k];
    }

    const float initial_error = length(w.effector - goal);

    // Slam the ends: P[0] = goal, P[L] = root; interior points start where the caller says.
    std::array<Vec3, kMaxSolverJoints> p{};
    p[0] = goal;
    p[chain] = w.pos[chain];
    for (int k = 1; k < chain; ++k) p[k] = start_points.empty() ? w.pos[k] : start_points[k - 1];

    // Damped mass-spring relaxation of the interior points.
    std::array<Vec3, kMaxSolverJoints> v{};
    int iterations = 0;
    for (int it = 0; it < max_iterations; ++it) {
        iterations = it + 1;
        int finished = 0;
        for (int k = 1; k < chain; ++k) {
            Vec3 a = (p[k - 1] - p[k]) * ((length(p[k] - p[k - 1]) - len[k - 1]) * kJointLengthK);
            a += (p[k + 1] - p[k]) * ((length(p[k + 1] - p[k]) - len[k]) * kJointLengthK);
            if (dot(a, a) < kMinAccelerationSquared) ++finished;
            v[k - 1] = v[k - 1] * kVelocityDamping;
            p[k] += v[k - 1] + (a * 0.5f);
            v[k - 1] += a;
        }
        if (it >= kMinIterationCount && finished == chain - 1) break;
    }

    // Aim pass, root to tip, on the live chain so children see their parents' new rotations.
    for (int k = chain; k > 0; --k) {
        const Quat parent_rot = k == chain ? pose.root_parent_rotation : w.rot[k + 1];
        const Quat cur_rot = w.rot[k];
        const Vec3 target_at = p[k - 1] - p[k];
        // At the bottom of the chain aim the volume point, not the joint (viewer).
        const Vec3 current_at = k == 1 ? w.effector - w.pos[1] : rotate(pose.offsets[k - 1], cur_rot);
        const Quat fix = shortest_arc(current_at, target_at);
        Quat target_rot = ll_mul(ll_mul(cur_rot, fix), conjugate(parent_rot));
        if (weight != 1.f) target_rot = ll_nlerp(weight, input[k], target_rot);
        if (!is_finite(target_rot)) target_rot = input[k];
        pose.local_rotations[k] = target_rot;
        w.rot[k] = ll_mul(target_rot, parent_rot);
        detail::update_below(pose, w, k);
    }

    if (end_rotation == EndRotation::Keep) {
        const Quat end_local = ll_mul(end_world, conjugate(w.rot[1]));
        pose.local_rotations[0] = weight == 1.f ? end_local : ll_nlerp(weight, input[0], end_local);
        w.rot[0] = ll_mul(pose.local_rotations[0], w.rot[1]);
        w.effector = w.pos[0] + rotate(pose.effector, w.rot[0]);
    }

    for (int k = 1; k < chain && !relaxed_points.empty(); ++k) relaxed_points[k - 1] = p[k];

    if (report) {
        float reach = len[0];
        for (int k = 1; k < chain; ++k) reach += len[k];
        report->iterations = iterations;
        report->initial_error = initial_error;
        report->error = length(w.effector - goal);
        report->converged = report->error <= 0.0005f;
        report->reachable = length(goal - w.pos[chain]) <= reach;
    }
    return true;
}

}  // namespace slanim::ik

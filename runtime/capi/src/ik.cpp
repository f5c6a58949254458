// SPDX-License-Identifier: MIT
// The C API: IK on a chain of joint positions (slanim_ik_solve, CCD or FABRIK).

#include <array>
#include <cmath>

#include "capi_internal.hpp"
#include "slanim/ik/solvers.hpp"

using namespace slanim;
using namespace slanim::capi;

extern "C" {

slanim_status slanim_ik_solve(int32_t solver, const float* positions, size_t num_joints, const float* target,
                              const float* plane_normal, const slanim_ik_settings* settings, float* out_positions,
                              float* out_rotations, slanim_ik_report* report) {
    return guard(__func__, [&] {
        need(positions, "positions");
        need(target, "target");
        if (solver != SLANIM_IK_CCD && solver != SLANIM_IK_FABRIK)
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("solver {} is not SLANIM_IK_CCD or SLANIM_IK_FABRIK", solver));
        if (num_joints < 2 || num_joints > static_cast<std::size_t>(ik::kMaxSolverJoints))
            fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("num_joints {} is not in [2, {}]", num_joints, ik::kMaxSolverJoints));
        ik::SolveSettings ss;
        ss.end_rotation = ik::EndRotation::Follow;
        if (settings) {
            if (!(settings->tolerance >= 0.f) || !std::isfinite(settings->tolerance))
                fail(SLANIM_ERROR_OUT_OF_RANGE, "settings.tolerance must be finite and >= 0");
            if (settings->max_iterations < 1 || settings->max_iterations > 10000)
                fail(SLANIM_ERROR_OUT_OF_RANGE, "settings.max_iterations must be in [1, 10000]");
            ss.tolerance = settings->tolerance;
            ss.max_iterations = settings->max_iterations;
        }
        const std::size_t n = num_joints;
        // Input root first; the solvers number the chain from the end joint: J[k] = P[n-1-k].
        const auto point = [&](std::size_t i) {
            const Vec3 p{positions[3 * i], positions[3 * i + 1], positions[3 * i + 2]};
            if (!is_finite(p)) fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("positions[{}] is not finite", i));
            return p;
        };
        std::array<Vec3, ik::kMaxSolverJoints> offsets{};
        std::array<Quat, ik::kMaxSolverJoints> rots{};
        for (std::size_t k = 0; k + 1 < n; ++k) offsets[k] = point(n - 1 - k) - point(n - 2 - k);
        ik::Target t;
        t.point = {target[0], target[1], target[2]};
        if (!is_finite(t.point)) fail(SLANIM_ERROR_OUT_OF_RANGE, "target is not finite");
        if (plane_normal) {
            t.kind = ik::TargetKind::Plane;
            t.normal = {plane_normal[0], plane_normal[1], plane_normal[2]};
            if (!is_finite(t.normal) || length(t.normal) < 1e-6f)
                fail(SLANIM_ERROR_OUT_OF_RANGE, "plane_normal must be finite and non-zero");
        }
        ik::ChainPose pose{std::span<const Vec3>(offsets.data(), n), std::span<Quat>(rots.data(), n), point(0),
                           Quat::identity(), Vec3{}};
        ik::SolveReport rep;
        const bool ok = solver == SLANIM_IK_CCD ? ik::CcdJob{pose, t, ss, &rep}.run() : ik::FabrikJob{pose, t, ss, &rep}.run();
        if (!ok) fail(SLANIM_ERROR_OUT_OF_RANGE, "the solver rejected the chain (coincident joints or values too large)");
        // Forward kinematics from the root: world rotation of J[k] = ll_mul(local, parent world).
        Vec3 p = point(0);
        Quat r = Quat::identity();
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t k = n - 1 - i;  // J[k] is input index i
            if (i > 0) p = p + rotate(offsets[k], r);
            r = ll_mul(rots[k], r);
            if (out_positions) out_positions[3 * i] = p.x, out_positions[3 * i + 1] = p.y, out_positions[3 * i + 2] = p.z;
            if (out_rotations)
                out_rotations[4 * i] = r.x, out_rotations[4 * i + 1] = r.y, out_rotations[4 * i + 2] = r.z,
                out_rotations[4 * i + 3] = r.w;
        }
        if (report) {
            report->iterations = rep.iterations;
            report->initial_error = rep.initial_error;
            report->error = rep.error;
            report->converged = rep.converged ? 1 : 0;
            report->reachable = rep.reachable ? 1 : 0;
        }
    });
}

}  // extern "C"

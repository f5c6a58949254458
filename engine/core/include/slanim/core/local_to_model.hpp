// SPDX-License-Identifier: MIT
// Local-to-model transforms with the viewer's rules (spec §0, lljoint.cpp /
// LLXformMatrix::update): world position = parent world position + (local position ∘ parent
// local scale) rotated by the parent's world rotation; world rotation = local · parent world
// (viewer order); scale is not inherited.
#pragma once

#include <span>

#include "slanim/core/math.hpp"

namespace slanim {

class Skeleton;

struct LocalToModelJob {
    const Skeleton* skeleton = nullptr;
    std::span<const Vec3> local_positions;  ///< per joint, metres
    std::span<const Quat> local_rotations;  ///< per joint
    std::span<const Vec3> local_scales;     ///< per joint
    /// The avatar root (mRoot) in the output frame. Identity/origin gives avatar-root space
    /// (X forward, Y left, Z up), where a resting pelvis sits at (0, 0, 0).
    Vec3 root_position;
    Quat root_rotation;
    std::span<Vec3> model_positions;  ///< per joint, output
    std::span<Quat> model_rotations;  ///< per joint, output

    [[nodiscard]] bool validate() const;
    /// One pass over the skeleton's depths (Skeleton::depth_order); within a depth, four joints
    /// at a time on SIMD lanes (SSE2, in an AVX2 copy when active_isa() ≥ Avx2; one joint at a
    /// time with Isa::Scalar), with the scalar float operations in the same order:
    /// bit-identical results on every instruction set. No allocation. Thread-safe for distinct
    /// outputs.
    bool run() const;
};

}  // namespace slanim

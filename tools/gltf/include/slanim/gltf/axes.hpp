// SPDX-License-Identifier: MIT
// The axis change between SL and glTF, shared by the glTF exporter (export.hpp) and importer
// (slanim::gltf).
//
// glTF is +Y up, +Z forward, +X left, metres. SL (X forward, Y left, Z up) maps to glTF
// (X, Y, Z) = (y, z, x) — a proper rotation (a cyclic permutation) — and quaternions the same
// way: (qx, qy, qz, qw)_SL → (qy, qz, qx, qw)_glTF. Pure functions, thread-safe.
#pragma once

#include "slanim/core/math.hpp"

namespace slanim::gltf {

/// SL (X forward, Y left, Z up) → glTF (+Z forward, +X left, +Y up): (y, z, x).
constexpr Vec3 sl_to_gltf(Vec3 v) { return {v.y, v.z, v.x}; }
/// glTF → SL: the inverse permutation, (z, x, y).
constexpr Vec3 gltf_to_sl(Vec3 v) { return {v.z, v.x, v.y}; }
/// (qx, qy, qz, qw)_SL → (qy, qz, qx, qw)_glTF.
constexpr Quat sl_to_gltf(Quat q) { return {q.y, q.z, q.x, q.w}; }
/// (qx, qy, qz, qw)_glTF → (qz, qx, qy, qw)_SL.
constexpr Quat gltf_to_sl(Quat q) { return {q.z, q.x, q.y, q.w}; }

}  // namespace slanim::gltf

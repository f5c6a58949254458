// SPDX-License-Identifier: MIT
// The rotation keys slanim's glTF export adds where the viewer slerps, and their removal on
// import (issue 25). The viewer interpolates two rotation keys with ll_nlerp: a normalised
// component lerp, except when the keys have a negative dot, where it slerps (shortest path).
// glTF LINEAR players cannot be told which rule an interval uses (Blender lerps components on
// the shortest path and normalises, three.js slerps), so inside such an interval the export
// samples the viewer's slerp densely enough that either rule follows it.
#pragma once

#include <cstddef>
#include <vector>

#include "slanim/core/motion.hpp"

namespace slanim::gltf {

/// The largest quaternion angle (radians) between consecutive keys that viewer_slerp_keys
/// leaves: across it a normalised lerp departs from the slerp by at most 9·10⁻⁶ rad of rotation
/// (0.037·angle³), under 0.01 mm at 1 m from the joint.
inline constexpr double kSlerpKeyStep = 0.06;

/// The keys to insert strictly between rotation keys `a` and `b` (times a.time < b.time), both
/// taken as the viewer holds them after loading an .anim (w ≥ 0, as the format packs them):
/// none when dot(a, b) ≥ 0 (the viewer lerps there, as glTF players do); else n − 1 keys at the
/// times a.time + (b.time − a.time)·i/n, i = 1..n − 1, n = ⌈angle / kSlerpKeyStep⌉ (angle: the
/// quaternion angle between a and b on the shortest path), each the viewer's value there
/// (ll_slerp at u = (t − a.time)/(b.time − a.time), normalised). SL frame; thread-safe.
std::vector<RotKey> viewer_slerp_keys(const RotKey& a, const RotKey& b);

/// Removes from `keys` (increasing times) the keys viewer_slerp_keys would have inserted: a
/// run of keys strictly between two kept keys a and b with dot(a, b) < 0 (both with w ≥ 0, so an
/// importer's sign flips for continuity do not matter; a key with |w| < 1e-5, whose sign the flips may
/// have lost, allows either), at evenly spaced times
/// (within 1e-6 s) and each equal to the viewer's slerp of a and b at its time (within 2·10⁻⁶
/// per normalised component, either sign). The longest such run (at most 27 keys: the shortest
/// path spans at most π/2 of quaternion angle) after each kept key is removed.
/// Returns how many keys were removed. Thread-safe.
std::size_t drop_viewer_slerp_keys(std::vector<RotKey>& keys);

}  // namespace slanim::gltf

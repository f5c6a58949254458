// SPDX-License-Identifier: MIT
// The glTF importer's steps after the channels are read (private to slanim::gltf): dropping
// translation channels at rest, the pelvis origin, the time rebase, the size check, and the
// comparison that lets a file slanim wrote import to its original .anim bytes. See
// docs/creator-formats.md ("glTF 2.0 import"). Thread safety: pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "slanim/core/motion.hpp"
#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/gltf/import.hpp"

namespace slanim::gltf::detail {

/// Removes the position keys of every joint but `pelvis` whose keys all lie within
/// kRestTolerance of `rest[joint]` (its node's rest translation converted like its keys).
/// Returns the names of the joints whose keys were removed.
std::vector<std::string> drop_rest_translations(Motion& motion, const std::map<int, Vec3>& rest, int pelvis);

/// mPelvis's keys relative to `origin` (PelvisOrigin in import.hpp); `rest` is the node's rest
/// translation converted like its keys. Returns the mean distance of the position keys from 0
/// after the change (metres; 0 without keys), for the "floats" warning.
float make_pelvis_relative(Motion& motion, int pelvis, Vec3 rest, PelvisOrigin origin);

/// Moves every key time by −(the earliest key time) so that the first key is at 0. Returns the
/// shift in seconds (0 when the earliest key is at 0 or there is no key).
float rebase_times(Motion& motion);

/// One bone of the armature for the size check: its rest distance from the nearest ancestor
/// node that is an SL ancestor joint (metres, translations composed through rotations, scale
/// applied), and that SL distance.
struct BoneLength {
    int node = -1;
    std::string node_name;
    int joint = -1, ancestor = -1;
    float length = 0.f, sl_length = 0.f;
};

/// The median of length / sl_length over bones whose SL length is at least 2 cm, with the bone
/// closest to it; nullopt when there is none.
struct SizeRatio {
    float ratio = 1.f;
    std::size_t bones = 0;
    BoneLength example;
};
std::optional<SizeRatio> size_ratio(const std::vector<BoneLength>& bones);

/// SL rest world positions (avatar-root frame, metres) per joint of `skeleton`.
std::vector<Vec3> sl_rest_world_positions(const Skeleton& skeleton);

/// True when `imported` (the glTF channels as keys, before any step) has exactly the keys of
/// `decoded` (the source .anim decoded): the same joints with keys, times equal within 1e-6 s,
/// rotations within 2e-6 per component (or negated), positions within 2e-6 m. Joints of
/// `decoded` that the exporter did not write (`skipped`, or a repeated joint) are not compared.
bool same_keys(const Motion& imported, const Motion& decoded, const std::vector<std::string>& skipped);

/// True when the header fields of `a` and `b` agree (priorities, loop, loop points, ease, hand
/// pose, emote, duration, joint priorities, constraints count).
bool same_header(const Motion& a, const Motion& b);

}  // namespace slanim::gltf::detail

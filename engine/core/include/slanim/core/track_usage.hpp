// SPDX-License-Identifier: MIT
// Which components of a joint a track or a joint state drives: the viewer's `LLJointState`
// usage bits (POS = 1, ROT = 2, SCALE = 4), shared by clips (ClipTrack::usage), the blender
// (JointStateRef::usage, LayerShape::usages) and custom motions.
#pragma once

#include <cstdint>

namespace slanim {

/// `LLJointState` usage bits; a usage is a bitwise OR of them, stored in a std::uint8_t.
enum Usage : std::uint8_t { kUsagePos = 1, kUsageRot = 2, kUsageScale = 4 };

/// Every usage bit (position, rotation and scale): `usage & kUsageAll` drops anything else.
inline constexpr std::uint8_t kUsageAll = kUsagePos | kUsageRot | kUsageScale;

}  // namespace slanim

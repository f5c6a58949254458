// SPDX-License-Identifier: MIT
// The .anim encoding for editors (issue 25): each value takes its nearest code, so keys that
// were decoded from a file and left unchanged re-encode to that file's codes. A deliberate
// deviation from the viewer's serialize (F32_to_U16 floors, after a quantize16 pass that floors
// too: a decoded value can come back up to two codes lower); uploads and `slanim convert` keep
// the viewer's rule (encode_motion, anim_codec.hpp).
#pragma once

#include "slanim/core/motion.hpp"
#include "slanim/core/result.hpp"
#include "slanim/formats/anim.hpp"

namespace slanim {

/// encode_motion_checked (the same checks and errors, the same layout), but every key time,
/// rotation component (x, y, z after packing into w ≥ 0) and position component is encoded to
/// the code whose decoded value (U16_to_F32) is nearest: for a value decoded from code c, c
/// itself. For editors' exports (slanim_anim_encode_nearest); not what the viewer writes.
/// Thread-safe.
Result<RawMotion> encode_motion_nearest_checked(const Motion& motion);

}  // namespace slanim

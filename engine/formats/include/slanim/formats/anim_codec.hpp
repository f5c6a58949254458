// SPDX-License-Identifier: MIT
// The `.anim` codec: a RawMotion (the file's quantized codes) to a Motion in SI units with the
// viewer's decode rules (LLKeyframeMotion::deserialize, spec §1.2–§1.5), and back with the
// viewer's quantization (LLKeyframeMotion::serialize, spec §1.4).
#pragma once

#include <string>

#include "slanim/core/motion.hpp"
#include "slanim/core/result.hpp"
#include "slanim/formats/anim.hpp"

namespace slanim {

class Skeleton;

/// Decodes a raw motion: U16 decode with the zero snap, w rebuilt from x, y, z, duplicate
/// times collapsed (last wins), keys sorted by time, aliases resolved to canonical names,
/// legacy 0.1 keys converted (mayaQ ZYX degrees; positions clamped to ±5 m). Never fails: it
/// decodes whatever parse_anim produced; callers check ParseResult::ok() first when they want
/// the viewer's accept/reject decision. Unknown joints keep joint = −1.
Motion decode_motion(const RawMotion& raw, const Skeleton& skeleton);

/// Encodes a motion as the viewer's serialize does: times floor-quantized over
/// [0, duration], rotations packed (w ≥ 0 hemisphere), quantize16'd and floor-encoded,
/// positions quantize16'd and floor-encoded over ±5 m. Always version 1.0. Decoding the result
/// gives what the viewer would load from the viewer's own file. Like serialize it clamps what
/// lies outside the code ranges (a key time outside [0, duration], a position beyond ±5 m) and
/// truncates long volume names: writers of user files call encode_motion_checked instead.
RawMotion encode_motion(const Motion& motion);

/// The first value of `motion` that encode_motion would clamp, wrap or truncate instead of
/// encoding it: a non-finite duration or ease; a key time that is not finite or lies outside
/// [0, duration] (1e-6 s of slack); a rotation key that is not finite; a position component
/// that is not finite or lies beyond ±5 m (kMaxPelvisOffset, the .anim's position range); a
/// constraint chain length outside 0..255 or a volume name over 15 characters. The error names
/// the joint (or constraint), the key's time in seconds and the value. Thread-safe.
Result<bool> check_encodable(const Motion& motion);

/// check_encodable, then encode_motion: no value is ever clamped silently.
Result<RawMotion> encode_motion_checked(const Motion& motion);

/// Converts a legacy (0.1) raw motion to version 1.0 exactly as loading it in the viewer and
/// saving it again would.
RawMotion upgrade_legacy(const RawMotion& raw);

/// Reads, validates and decodes a file in one step. Fails with the first error diagnostic
/// (file name, rule, byte offset).
Result<Motion> load_motion(const std::string& path, const Skeleton& skeleton);

}  // namespace slanim

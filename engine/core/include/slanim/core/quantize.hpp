// SPDX-License-Identifier: MIT
// The viewer's 16-bit quantization (llcommon/llquantize.h), reproduced in float32.
#pragma once

#include <cstdint>

#include "slanim/core/math.hpp"

namespace slanim {

/// Range of quantized rotation components (imaginary part of a unit quaternion).
inline constexpr float kRotMin = -1.f, kRotMax = 1.f;
/// Range of quantized position components, metres (`LL_MAX_PELVIS_OFFSET`, lljoint.h).
inline constexpr float kMaxPelvisOffset = 5.f;

/// `F32_to_U16(v, lo, hi)`: clamp to [lo, hi], then floor((v − lo)/(hi − lo)·65535).
/// It is floor, not round. A NaN input encodes as `lo` (the viewer's behaviour is undefined).
std::uint16_t f32_to_u16(float v, float lo, float hi);

/// `U16_to_F32(c, lo, hi)`: c·(1/65535)·(hi − lo) + lo, with the zero snap: a result whose
/// magnitude is below (hi − lo)/65535 is exactly 0.
float u16_to_f32(std::uint16_t c, float lo, float hi);

/// `LLVector3::quantize16` with one range for all three components: decode(encode(v)).
Vec3 quantize16(Vec3 v, float lo, float hi);

}  // namespace slanim

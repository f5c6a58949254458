// SPDX-License-Identifier: MIT
// Sampling a clip (spec §2.1): SamplingJob evaluates every track of a MotionClip at one curve
// time, with a SamplingCursor per playing instance so that forward playback does no key search.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "slanim/core/clip.hpp"
#include "slanim/core/math.hpp"

namespace slanim {

/// Per-instance sampling state: for each animated curve or key-sharing group of the clip's
/// sampling plan, the index of the first key at or after the last sampled time (constant
/// curves need none, so a clip of 187 tracks in a few groups keeps a few slots). Sized by
/// SamplingCursor::reset; never allocates during sampling.
struct SamplingCursor {
    std::vector<std::uint32_t> rot, pos;
    const MotionClip* clip = nullptr;
    /// Prepares the cursor for `clip` (allocates); required before the first SamplingJob::run.
    void reset(const MotionClip& clip);
};

/// Samples every track of a clip at one curve time (already mapped through looping, spec §2.2)
/// with the viewer's curve rules (§2.1): hold before the first and after the last key, exact
/// key hits, nlerp rotations, linear positions. Outputs are per track, in track order; only the
/// components in a track's usage are written.
struct SamplingJob {
    const MotionClip* clip = nullptr;
    float time = 0.f;                 ///< curve time, seconds
    SamplingCursor* cursor = nullptr; ///< reset for `clip`
    std::span<Quat> rotations;        ///< ≥ clip->tracks().size()
    std::span<Vec3> positions;        ///< ≥ clip->tracks().size()

    [[nodiscard]] bool validate() const;
    /// Returns false (and writes nothing) when validate() fails. No allocation.
    bool run() const;
};

}  // namespace slanim

// SPDX-License-Identifier: MIT
// Curve evaluation with the viewer's semantics (RotationCurve/PositionCurve::getValue, §2.1),
// using a per-track cursor instead of the viewer's std::map lower_bound.
#include <algorithm>
#include <cmath>

#include "slanim/engine/clip.hpp"

namespace slanim {

namespace {

// Index of the first key with time >= t (std::lower_bound), starting from the cursor.
inline std::uint32_t seek(const float* times, std::uint32_t n, std::uint32_t cur, float t) {
    if (cur > n) cur = n;
    if (cur > 0 && times[cur - 1] >= t) {
        // Moved backwards (loop wrap or seek): binary search in [0, cur).
        return static_cast<std::uint32_t>(std::lower_bound(times, times + cur, t) - times);
    }
    // Forward: a few linear steps cover normal playback; gallop into a binary search otherwise.
    std::uint32_t i = cur;
    for (int steps = 0; steps < 4; ++steps) {
        if (i == n || times[i] >= t) return i;
        ++i;
    }
    return static_cast<std::uint32_t>(std::lower_bound(times + i, times + n, t) - times);
}

}  // namespace

bool SamplingJob::validate() const {
    if (!clip || !cursor || cursor->clip != clip) return false;
    const std::size_t n = clip->tracks().size();
    return rotations.size() >= n && positions.size() >= n && cursor->rot.size() == n &&
           cursor->pos.size() == n;
}

bool SamplingJob::run() const {
    if (!validate()) return false;
    const float t = std::isnan(time) ? 0.f : time;
    const auto tracks = clip->tracks();
    const float* rt = clip->rot_times().data();
    const Quat* rv = clip->rot_values().data();
    const float* pt = clip->pos_times().data();
    const Vec3* pv = clip->pos_values().data();
    std::uint32_t* rcur = cursor->rot.data();
    std::uint32_t* pcur = cursor->pos.data();

    for (std::size_t k = 0; k < tracks.size(); ++k) {
        const ClipTrack& tr = tracks[k];
        if (const std::uint32_t n = tr.rot_count; n == 1) {
            rotations[k] = rv[tr.rot_first];
        } else if (n > 1) {
            const float* times = rt + tr.rot_first;
            const Quat* vals = rv + tr.rot_first;
            const std::uint32_t i = seek(times, n, rcur[k], t);
            rcur[k] = i;
            if (i == n) {
                rotations[k] = vals[n - 1];
            } else if (i == 0 || times[i] == t) {
                rotations[k] = vals[i];
            } else {
                const float u = (t - times[i - 1]) / (times[i] - times[i - 1]);
                rotations[k] = ll_nlerp(u, vals[i - 1], vals[i]);
            }
        }
        if (const std::uint32_t n = tr.pos_count; n == 1) {
            positions[k] = pv[tr.pos_first];
        } else if (n > 1) {
            const float* times = pt + tr.pos_first;
            const Vec3* vals = pv + tr.pos_first;
            const std::uint32_t i = seek(times, n, pcur[k], t);
            pcur[k] = i;
            if (i == n) {
                positions[k] = vals[n - 1];
            } else if (i == 0 || times[i] == t) {
                positions[k] = vals[i];
            } else {
                const float u = (t - times[i - 1]) / (times[i] - times[i - 1]);
                positions[k] = lerp(vals[i - 1], vals[i], u);
            }
        }
    }
    return true;
}

}  // namespace slanim

// SPDX-License-Identifier: MIT
// Private to slanim::core: the sampling plan a MotionClip carries (built by MotionClip::build in
// clip.cpp, walked by SamplingJob in sampling.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "slanim/core/math.hpp"

namespace slanim {

namespace detail {

/// One animated curve (two keys or more) sampled on its own: `count` keys from `first` in the
/// clip's time/value arrays, driving `track`.
struct PlanCurve {
    std::uint32_t track = 0;
    std::uint32_t first = 0, count = 0;
    std::uint32_t cursor = 0;  ///< its slot in SamplingCursor::rot / pos
};

/// Animated curves of one kind whose key times are identical: one seek and one interpolant
/// per frame for all of them, values stored structure-of-arrays.
struct PlanGroup {
    std::uint32_t times_first = 0, num_keys = 0;  ///< the shared times, in rot/pos_times()
    std::uint32_t cursor = 0;        ///< the group's slot in SamplingCursor::rot / pos
    std::uint32_t tracks_first = 0;  ///< in SamplingPlan::group_tracks
    std::uint32_t num_curves = 0;    ///< lanes in use; lanes are padded to a multiple of 4
    std::uint32_t values_first = 0;  ///< in rot_soa / pos_soa: [key][component][lane]
};

/// How SamplingJob walks a clip, built once by MotionClip::build from tracks(). Curves with one
/// key are constants (copied, no search); animated curves sharing their key times with three
/// or more others form groups; the rest are sampled one by one.
struct SamplingPlan {
    std::vector<std::uint32_t> const_rot_tracks, const_pos_tracks;
    std::vector<Quat> const_rot_values;
    std::vector<Vec3> const_pos_values;
    std::vector<PlanCurve> rot_curves, pos_curves;
    std::vector<PlanGroup> rot_groups, pos_groups;
    std::vector<std::uint32_t> group_tracks;  ///< padding lanes hold kNoTrack
    std::vector<float> rot_soa, pos_soa;      ///< padding lanes hold identity / zero
    /// Cursor slots: one per animated rotation (position) curve or group.
    std::uint32_t rot_cursors = 0, pos_cursors = 0;
    static constexpr std::uint32_t kNoTrack = 0xFFFFFFFFu;
};

}  // namespace detail

}  // namespace slanim

// SPDX-License-Identifier: MIT
// `slanim crowd`: a measurement of the World at crowd scale, on the Crowd the crowd benchmarks
// use (slanim/runtime/crowd.hpp). By default a churn crowd: every avatar keeps a base motion and
// starts a gesture every few seconds at a staggered time (crowd_mix.hpp says which motions);
// with --settled every avatar plays every given motion (looped) or the built-in crowd mix with
// staggered starts. After Crowd::warm_up the world is stepped at a fixed 1/60 s as fast as it
// can for S seconds of wall time, each step timed with profiling off; a short separate run with
// World::set_profiling(true) gives the per-system table. Optional:
// --skin (an Appearance per avatar, so the morph and skin phases run), --lod (the viewer-like
// LOD rules fed with each avatar's pixel area from a fixed camera, see CrowdView), --render
// (one offscreen picture of the crowd).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "slanim/core/math.hpp"

namespace CLI {
class App;
}

namespace slanim::cli {

struct CrowdOptions {
    std::vector<std::string> files;  ///< .anim files, each made looping (none: the built-in or Linden mix)
    std::vector<std::string> gestures;  ///< churn: gesture .anim files (none: Linden BLOWKISS or generated)
    bool settled = false;            ///< every avatar plays every FILE (CrowdMode::Settled); else churn
    std::string character;           ///< viewer character folder (default: embedded skeleton)
    // Kept as text and checked by cmd_crowd, so a bad value gets a clear usage message.
    std::string avatars;             ///< required, 1..kMaxCrowdAvatars
    std::string seconds = "5";       ///< wall time of the measured run, > 0 and ≤ 3600
    std::string threads = "0";       ///< 0 = one per core, ≤ 256
    bool skin = false;               ///< an Appearance per avatar (needs --character)
    bool lod = false;                ///< LodFeature::set_settings({enabled}) with the pixel areas below
    std::string solver = "ccd";      ///< constraint solver: ccd, fabrik, viewer or none (as play)
    std::string render;              ///< PNG path, empty: no picture
};

/// The most avatars `slanim crowd` creates (the World's entity index has 20 bits).
inline constexpr int kMaxCrowdAvatars = 1000000;

/// The crowd's layout and the camera the LOD rules assume.
///
/// Avatars stand in a square grid 1.5 m apart: cols = ceil(sqrt(N)), avatar k in row
/// r = k / cols and column c = k mod cols, at x = −1.5 r, y = 1.5 (c − (cols − 1) / 2) on the
/// ground (SL frame: X forward, Y left, Z up; every avatar faces +X, toward the camera). The
/// camera stands 3 m in front of the first row (x = 3, y = 0) with its eye 1.8 m above the
/// ground, looks along −X, and has a 60° vertical field of view on a 1280 × 720 view, so its
/// focal length is f = 360 / tan(30°) ≈ 623.5 px. Each avatar is a 0.5 m × 1.8 m box centred
/// 0.9 m above its spot; at distance d (metres, camera to box centre) it covers
///
///     pixel area = (0.5 f / d) × (1.8 f / d) = 0.9 f² / d²  ≈ 349 920 / d²  px²
///
/// (38 880 px² for the first row's middle avatar at d ≈ 3.1 m; the LOD thresholds 10 000 and
/// 2 000 px² fall at d ≈ 5.9 m and 13.2 m). An avatar behind the camera (depth along the view
/// axis ≤ 0) or farther than 64 m (the viewer's default draw distance) is hidden.
struct CrowdView {
    static constexpr float kSpacing = 1.5f;       ///< metres between grid neighbours
    static constexpr float kCameraAhead = 3.f;    ///< metres in front of the first row
    static constexpr float kEyeHeight = 1.8f;     ///< metres above the ground
    static constexpr float kFovYDeg = 60.f;
    static constexpr int kWidth = 1280, kHeight = 720;
    static constexpr float kBoxWidth = 0.5f, kBoxHeight = 1.8f;
    static constexpr float kDrawDistance = 64.f;  ///< metres

    /// Where avatar k of n stands: x, y on the ground (z = 0 is the ground).
    static Vec3 spot(int k, int n);
    /// Camera eye relative to the ground (x = 3, y = 0, z = 1.8).
    static Vec3 eye() { return {kCameraAhead, 0.f, kEyeHeight}; }
    /// The focal length in pixels: (kHeight / 2) / tan(kFovYDeg / 2).
    static float focal_px();
    /// Pixel area of the box at `spot` (0 when hidden).
    static float pixel_area(Vec3 spot);
    /// False behind the camera or beyond kDrawDistance.
    static bool visible(Vec3 spot);
};

/// Registers the `crowd` subcommand on `app`, filling `o` (which must outlive the parse).
CLI::App* add_crowd_subcommand(CLI::App& app, CrowdOptions& o);

/// Runs it. Standard output: a steps line, the per-system table, and last the line
/// `crowd: N avatars, T threads, MODE, P50 ms/step p50, P99 ms/step p99, M KiB/avatar` (MODE
/// churn or settled). Exit status: 0 success, 1 failure (a FILE or --gesture file that does not
/// load, named in the message; no GL context for --render, unwritable picture), 2 usage error
/// (nothing is run or written).
int cmd_crowd(std::ostream& out, std::ostream& err, const CrowdOptions& o);

}  // namespace slanim::cli

// SPDX-License-Identifier: MIT
// `slanim crowd --render`: one offscreen picture of the crowd seen by CrowdView's camera.
#pragma once

#include <span>
#include <string>

#include "slanim/core/result.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim::cli {

struct CrowdRenderReport {
    int drawn = 0;         ///< avatars in the picture
    int over_budget = 0;   ///< in view but left out (vertex budget)
    bool meshes = false;   ///< avatar meshes (else generated bodies)
};

/// Vertices the picture may hold (positions and normals: 24 bytes each); the nearest avatars
/// are drawn first and the ones past the budget are left out (and counted).
inline constexpr std::size_t kMaxCrowdDrawVertices = 4'000'000;

/// Draws the crowd `ents` (standing at CrowdView::spot) once, seen by CrowdView's camera, and
/// writes the 1280 × 720 PNG to `path`; `time` (seconds) goes into the caption. The avatars that
/// are visible, in front of the camera, within the draw distance and inside the horizontal
/// field of view are drawn (nearest rows first, up to kMaxCrowdDrawVertices): the skinned avatar
/// mesh when they have an Appearance, else the generated body (collision volumes). Needs a
/// current OpenGL context (gfx::GlContext). Errors: no renderer, an unwritable picture.
Result<CrowdRenderReport> render_crowd(World& world, std::span<const Entity> ents, const std::string& path,
                                       double time);

}  // namespace slanim::cli

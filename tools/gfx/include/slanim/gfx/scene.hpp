// SPDX-License-Identifier: MIT
// What the renderer draws: a plain description of one frame, filled by scene builders
// (avatar_scene.hpp) or by any other code, and drawn by gfx::Renderer (renderer.hpp).
//
// Frame: the avatar-root frame of the runtime (X forward, Y left, Z up, metres). Nothing here
// touches OpenGL; a Scene can be built and inspected without a GL context.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "slanim/core/math.hpp"

namespace slanim::gfx {

/// A linear RGBA colour, components in [0, 1].
struct Rgba {
    float r = 1.f, g = 1.f, b = 1.f, a = 1.f;
    friend constexpr bool operator==(Rgba, Rgba) = default;
};

/// A lit triangle mesh given as CPU arrays. The renderer re-uploads the arrays every frame
/// (into dynamic vertex buffers), so a mesh may change from frame to frame (skinned meshes).
/// The spans are borrowed: they must stay valid until the Scene has been drawn.
struct RenderMesh {
    std::span<const Vec3> positions;  ///< metres, avatar-root frame
    std::span<const Vec3> normals;    ///< unit; same count as positions
    /// Triangle list, counter-clockwise seen from outside: exactly one of the two is
    /// non-empty; its size is a multiple of 3 and every index is < positions.size().
    std::span<const std::uint32_t> indices32;
    std::span<const std::uint16_t> indices16;
    Rgba colour;
    /// The mesh's problem, or an empty string when it can be drawn.
    [[nodiscard]] std::string check() const;
};

/// A line segment drawn on top of the meshes (no depth test), `width_px` pixels wide.
struct LineSeg {
    Vec3 a, b;
    Rgba colour;
    float width_px = 2.f;
};

/// A round dot drawn on top of everything, `size_px` pixels across.
struct PointMark {
    Vec3 p;
    Rgba colour;
    float size_px = 8.f;
};

/// A text line drawn with stb_easy_font (ASCII 32..126). Screen labels are placed in pixels
/// from the top-left corner of the viewport (negative x or y count from the right or bottom
/// edge); anchored labels sit next to the projection of `anchor` (skipped when it is behind
/// the camera).
struct Label {
    std::string text;
    float x = 0.f, y = 0.f;  ///< pixels (screen labels), or offset from the anchor's projection
    Rgba colour;
    float scale = 2.f;       ///< stb_easy_font glyphs are ~7 px tall at scale 1
    bool anchored = false;
    Vec3 anchor;             ///< metres, avatar-root frame (anchored labels)
    bool background = true;  ///< a translucent dark box behind the text

    /// A screen label at pixel (x, y).
    static Label at(std::string text, float x, float y, Rgba colour, float scale = 2.f) {
        Label l;
        l.text = std::move(text);
        l.x = x;
        l.y = y;
        l.colour = colour;
        l.scale = scale;
        return l;
    }
};

/// One frame's content.
struct Scene {
    std::vector<RenderMesh> meshes;
    std::vector<LineSeg> lines;
    std::vector<PointMark> points;
    std::vector<Label> labels;
    bool grid = true;            ///< draw the ground plane and a 0.5 m grid at ground_height
    float ground_height = 0.f;   ///< z of the ground, metres
    Rgba background{0.16f, 0.17f, 0.20f, 1.f};

    /// Empties every list (keeps their capacity) and restores the defaults.
    void clear();
};

/// An orbit camera around a target point. yaw 0 looks at the avatar's front from +X; positive
/// yaw turns the eye toward +Y (the avatar's left); positive pitch raises the eye.
struct OrbitCamera {
    Vec3 target;                  ///< metres, avatar-root frame (the pelvis, see follow())
    Vec3 pan;                     ///< metres, added to the target (right-drag in `slanim view`)
    float yaw = 0.4363323f;       ///< radians (25°)
    float pitch = 0.1570796f;     ///< radians (9°), clamped to ±1.5 by the renderer
    float distance = 4.f;         ///< metres from the target, > 0
    float fov_y = 0.61f;          ///< vertical field of view, radians (35°)

    /// Sets the target to `pelvis` lowered by 0.15 m (the middle of a standing body).
    void follow(Vec3 pelvis) { target = pelvis + Vec3{0.f, 0.f, -0.15f}; }
    /// The eye position (metres, avatar-root frame).
    [[nodiscard]] Vec3 eye() const;
    /// The look-at point: target + pan.
    [[nodiscard]] Vec3 centre() const { return target + pan; }
};

}  // namespace slanim::gfx

// SPDX-License-Identifier: MIT
// The OpenGL 3.3 core renderer of `slanim view` and `slanim render`.
//
// Draw order per frame: clear to the scene's background; the ground (a plane and a 0.5 m grid,
// depth tested); the meshes, lit by a key light (front, upper right), a fill light (left) and
// an ambient term, both faces lit; then, without depth test, the lines (screen-space quads of
// their width, built by a geometry shader), the points (round sprites) and the labels
// (stb_easy_font quads). Offscreen drawing goes to an FBO with 4× MSAA when the driver has it,
// resolved before reading back.
//
// Every call needs the GlContext that was current when the Renderer was created.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "slanim/core/result.hpp"
#include "slanim/gfx/image.hpp"
#include "slanim/gfx/scene.hpp"

namespace slanim::gfx {

class Renderer {
public:
    /// Compiles the shaders and creates the buffers. Errors carry the GL info log.
    static Result<std::unique_ptr<Renderer>> create();
    ~Renderer();
    Renderer(const Renderer&) = delete;
    Renderer& operator=(const Renderer&) = delete;

    /// Draws `scene` seen by `camera` into the framebuffer bound now (0: the window), over a
    /// width × height viewport in pixels. Meshes that fail RenderMesh::check() are skipped and
    /// counted in skipped_meshes().
    void draw(const Scene& scene, const OrbitCamera& camera, int width, int height);

    /// Draws into an offscreen framebuffer of width × height pixels (1..8192) and reads it back
    /// (top row first). Errors: bad size, incomplete framebuffer.
    Result<Image> render_image(const Scene& scene, const OrbitCamera& camera, int width,
                               int height);

    /// Meshes skipped by the last draw() because check() failed.
    [[nodiscard]] int skipped_meshes() const { return skipped_; }
    /// MSAA samples of the offscreen framebuffer (0 = none), known after render_image().
    [[nodiscard]] int samples() const { return fbo_samples_; }

private:
    Renderer() = default;
    struct Program {
        unsigned id = 0;
        int mvp = -1, colour = -1, viewport = -1, eye = -1;
    };
    Program mesh_, line_, point_, text_;
    unsigned mesh_vao_ = 0, mesh_vbo_ = 0, mesh_ebo_ = 0;
    unsigned over_vao_ = 0, over_vbo_ = 0;  // lines and points: pos, colour, size
    unsigned text_vao_ = 0, text_vbo_ = 0;  // 2D: pixel position, colour
    // Offscreen framebuffer (MSAA) and its resolve target.
    unsigned fbo_ = 0, fbo_colour_ = 0, fbo_depth_ = 0, resolve_fbo_ = 0, resolve_colour_ = 0;
    int fbo_w_ = 0, fbo_h_ = 0, fbo_samples_ = -1;
    int skipped_ = 0;
    std::vector<float> scratch_;
    std::vector<std::uint32_t> scratch_idx_;

    Result<bool> ensure_fbo(int width, int height);
    void draw_ground(const Scene& scene, const float* view_proj);
    void draw_overlays(const Scene& scene, const float* view_proj, int width, int height);
    void draw_labels(const Scene& scene, const float* view_proj, int width, int height);
};

}  // namespace slanim::gfx

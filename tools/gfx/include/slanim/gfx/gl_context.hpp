// SPDX-License-Identifier: MIT
// OpenGL 3.3 core contexts: offscreen (no display needed) for `slanim render`, and an SDL2
// window for `slanim view`. Creating a context makes it current on the calling thread and
// loads the GL entry points (glad); use one context at a time.
//
// Offscreen platforms, tried in this order (the first that gives a 3.3 core context wins):
//   1. EGL, Mesa's surfaceless platform (EGL_MESA_platform_surfaceless): no display, no
//      window system, renders with the GPU driver or llvmpipe;
//   2. EGL on the first EGL device (EGL_EXT_platform_device), e.g. a headless GPU;
//   3. EGL's default display (Wayland / X11 when one is running) with a pbuffer;
//   4. a hidden SDL2 window (needs a display, e.g. Xvfb).
// The renderer always draws into its own framebuffer object, so the context needs no surface.
// Destroying an EGL context leaves its display initialized for the next one (see the .cpp).
#pragma once

#include <memory>
#include <string>

#include "slanim/core/result.hpp"

struct SDL_Window;

namespace slanim::gfx {

enum class ContextPlatform { EglSurfaceless, EglDevice, EglDefault, SdlHidden, SdlWindow };
/// "egl-surfaceless", "egl-device", "egl-default", "sdl-hidden", "sdl-window".
const char* platform_name(ContextPlatform p);

class GlContext {
public:
    ~GlContext();
    GlContext(const GlContext&) = delete;
    GlContext& operator=(const GlContext&) = delete;

    /// An offscreen context (see the order above). The error lists every platform tried and
    /// why each failed.
    static Result<std::unique_ptr<GlContext>> create_offscreen();
    /// A visible, resizable SDL2 window with a 3.3 core context and vsync; 4× MSAA when the
    /// driver offers it. Errors carry SDL's message.
    static Result<std::unique_ptr<GlContext>> create_window(const std::string& title, int width,
                                                            int height);

    [[nodiscard]] ContextPlatform platform() const { return platform_; }
    /// "GL_RENDERER | GL_VERSION".
    [[nodiscard]] const std::string& description() const { return description_; }
    /// The window (SdlWindow / SdlHidden), else null.
    [[nodiscard]] SDL_Window* window() const { return window_; }
    /// Drawable size in pixels of the window (0 × 0 offscreen).
    void drawable_size(int& width, int& height) const;
    /// Presents the window's back buffer (no-op offscreen).
    void swap();

private:
    GlContext() = default;
    ContextPlatform platform_ = ContextPlatform::EglSurfaceless;
    std::string description_;
    SDL_Window* window_ = nullptr;
    void* sdl_gl_ = nullptr;       // SDL_GLContext
    void* egl_display_ = nullptr;  // EGLDisplay
    void* egl_context_ = nullptr;  // EGLContext
    void* egl_surface_ = nullptr;  // EGLSurface (pbuffer of the default display)
    bool sdl_video_ = false;       // SDL_InitSubSystem(SDL_INIT_VIDEO) was called

    static Result<std::unique_ptr<GlContext>> try_egl(ContextPlatform p);
    static Result<std::unique_ptr<GlContext>> try_sdl(bool hidden, const std::string& title,
                                                      int width, int height);
    Result<bool> finish_gl();
};

}  // namespace slanim::gfx

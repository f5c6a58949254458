// SPDX-License-Identifier: MIT
#include "slanim/gfx/gl_context.hpp"

#include <glad/egl.h>
#include <glad/gl.h>

#include <SDL.h>
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <string_view>

namespace slanim::gfx {

namespace {

const char* egl_error_name(EGLint e) {
    switch (e) {
        case EGL_SUCCESS: return "EGL_SUCCESS";
        case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
        case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
        case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
        case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
        case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
        case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
        case EGL_BAD_CURRENT_SURFACE: return "EGL_BAD_CURRENT_SURFACE";
        case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
        case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
        case EGL_BAD_NATIVE_PIXMAP: return "EGL_BAD_NATIVE_PIXMAP";
        case EGL_BAD_NATIVE_WINDOW: return "EGL_BAD_NATIVE_WINDOW";
        case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
        case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
        case EGL_CONTEXT_LOST: return "EGL_CONTEXT_LOST";
        default: return "unknown EGL error";
    }
}

std::string egl_failure(const char* call) {
    const EGLint e = eglGetError();
    return fmt::format("{} failed ({}, 0x{:04x})", call, egl_error_name(e), e);
}

bool has_extension(const char* list, std::string_view name) {
    if (!list) return false;
    std::string_view s(list);
    while (!s.empty()) {
        const auto sp = s.find(' ');
        if (s.substr(0, sp) == name) return true;
        if (sp == std::string_view::npos) break;
        s.remove_prefix(sp + 1);
    }
    return false;
}

GLADapiproc egl_proc(const char* name) { return eglGetProcAddress(name); }

GLADapiproc sdl_proc(const char* name) {
    void* p = SDL_GL_GetProcAddress(name);
    GLADapiproc f = nullptr;
    static_assert(sizeof(f) == sizeof(p));
    std::memcpy(&f, &p, sizeof(p));
    return f;
}

/// One EGL display being brought up; torn down unless release()d into a GlContext.
struct EglAttempt {
    EGLDisplay display = EGL_NO_DISPLAY;
    EGLContext context = EGL_NO_CONTEXT;
    EGLSurface surface = EGL_NO_SURFACE;
    bool initialized = false;
    ~EglAttempt() {
        if (display == EGL_NO_DISPLAY) return;
        eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        if (surface != EGL_NO_SURFACE) eglDestroySurface(display, surface);
        if (context != EGL_NO_CONTEXT) eglDestroyContext(display, context);
        if (initialized) eglTerminate(display);
        eglReleaseThread();
    }
};

}  // namespace

const char* platform_name(ContextPlatform p) {
    switch (p) {
        case ContextPlatform::EglSurfaceless: return "egl-surfaceless";
        case ContextPlatform::EglDevice: return "egl-device";
        case ContextPlatform::EglDefault: return "egl-default";
        case ContextPlatform::SdlHidden: return "sdl-hidden";
        case ContextPlatform::SdlWindow: return "sdl-window";
    }
    return "?";
}

GlContext::~GlContext() {
    if (egl_display_) {
        auto* d = static_cast<EGLDisplay>(egl_display_);
        eglMakeCurrent(d, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        if (egl_surface_) eglDestroySurface(d, static_cast<EGLSurface>(egl_surface_));
        if (egl_context_) eglDestroyContext(d, static_cast<EGLContext>(egl_context_));
        // The display stays initialized for the life of the process (EGL returns the same
        // display to the next create_offscreen, which then skips the driver start-up): Mesa
        // unloads its driver on eglTerminate, and the caches it drops with it would show up as
        // leaks under LeakSanitizer.
        eglReleaseThread();
    }
    if (sdl_gl_) SDL_GL_DeleteContext(static_cast<SDL_GLContext>(sdl_gl_));
    if (window_) SDL_DestroyWindow(window_);
    if (sdl_video_) {
        SDL_QuitSubSystem(SDL_INIT_VIDEO);
        SDL_Quit();
    }
}

Result<bool> GlContext::finish_gl() {
    const int version = platform_ == ContextPlatform::SdlWindow ||
                                platform_ == ContextPlatform::SdlHidden
                            ? gladLoadGL(sdl_proc)
                            : gladLoadGL(egl_proc);
    if (version == 0) return Error{"the OpenGL entry points could not be loaded"};
    if (GLAD_VERSION_MAJOR(version) * 10 + GLAD_VERSION_MINOR(version) < 33)
        return Error{fmt::format("OpenGL {}.{} < 3.3", GLAD_VERSION_MAJOR(version),
                                 GLAD_VERSION_MINOR(version))};
    const auto* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
    const auto* ver = reinterpret_cast<const char*>(glGetString(GL_VERSION));
    description_ = fmt::format("{} | {}", renderer ? renderer : "?", ver ? ver : "?");
    return true;
}

Result<std::unique_ptr<GlContext>> GlContext::try_egl(ContextPlatform p) {
    if (!gladLoaderLoadEGL(EGL_NO_DISPLAY))
        return Error{"libEGL.so.1 could not be loaded (install libegl1 and libegl-mesa0)"};
    const char* client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    const bool platform_base = has_extension(client, "EGL_EXT_platform_base") &&
                               glad_eglGetPlatformDisplayEXT != nullptr;
    EglAttempt a;
    if (p == ContextPlatform::EglSurfaceless) {
        if (!platform_base || !has_extension(client, "EGL_MESA_platform_surfaceless"))
            return Error{"EGL_MESA_platform_surfaceless is not offered by this libEGL"};
        a.display = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY,
                                             nullptr);
    } else if (p == ContextPlatform::EglDevice) {
        if (!platform_base || !has_extension(client, "EGL_EXT_platform_device") ||
            glad_eglQueryDevicesEXT == nullptr)
            return Error{"EGL_EXT_platform_device is not offered by this libEGL"};
        std::array<EGLDeviceEXT, 8> devices{};
        EGLint n = 0;
        if (!eglQueryDevicesEXT(static_cast<EGLint>(devices.size()), devices.data(), &n) || n < 1)
            return Error{"no EGL device found"};
        a.display = eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devices[0], nullptr);
    } else {
        a.display = eglGetDisplay(EGL_DEFAULT_DISPLAY);
    }
    if (a.display == EGL_NO_DISPLAY) return Error{egl_failure("eglGetDisplay")};
    EGLint major = 0, minor = 0;
    if (!eglInitialize(a.display, &major, &minor)) {
        const std::string why = egl_failure("eglInitialize");
        a.display = EGL_NO_DISPLAY;
        return Error{why};
    }
    a.initialized = true;
    gladLoaderLoadEGL(a.display);  // the display's extensions
    const char* exts = eglQueryString(a.display, EGL_EXTENSIONS);
    if (!eglBindAPI(EGL_OPENGL_API)) return Error{egl_failure("eglBindAPI(EGL_OPENGL_API)")};

    const bool surfaceless = has_extension(exts, "EGL_KHR_surfaceless_context") &&
                             p != ContextPlatform::EglDefault;
    const EGLint config_attribs[] = {EGL_SURFACE_TYPE,    EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                                     EGL_OPENGL_BIT,      EGL_RED_SIZE,    8,
                                     EGL_GREEN_SIZE,      8,               EGL_BLUE_SIZE,
                                     8,                   EGL_NONE};
    EGLConfig config = nullptr;
    EGLint count = 0;
    if (!eglChooseConfig(a.display, config_attribs, &config, 1, &count) || count < 1) {
        config = nullptr;
        if (!surfaceless || !has_extension(exts, "EGL_KHR_no_config_context"))
            return Error{"no EGL config with OpenGL and pbuffer support"};
    }
    const EGLint context_attribs[] = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 3,
                                      EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                      EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    a.context = eglCreateContext(a.display, config, EGL_NO_CONTEXT, context_attribs);
    if (a.context == EGL_NO_CONTEXT) return Error{egl_failure("eglCreateContext(OpenGL 3.3 core)")};
    if (!surfaceless) {
        if (!config) return Error{"no EGL config for a pbuffer"};
        const EGLint pbuffer_attribs[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
        a.surface = eglCreatePbufferSurface(a.display, config, pbuffer_attribs);
        if (a.surface == EGL_NO_SURFACE) return Error{egl_failure("eglCreatePbufferSurface")};
    }
    if (!eglMakeCurrent(a.display, a.surface, a.surface, a.context))
        return Error{egl_failure("eglMakeCurrent")};

    std::unique_ptr<GlContext> ctx(new GlContext());
    ctx->platform_ = p;
    ctx->egl_display_ = a.display;
    ctx->egl_context_ = a.context;
    ctx->egl_surface_ = a.surface == EGL_NO_SURFACE ? nullptr : a.surface;
    a.display = EGL_NO_DISPLAY;  // owned by ctx now
    if (auto r = ctx->finish_gl(); !r) return r.error();
    ctx->description_ += fmt::format(" | EGL {}.{}", major, minor);
    return ctx;
}

Result<std::unique_ptr<GlContext>> GlContext::try_sdl(bool hidden, const std::string& title,
                                                      int width, int height) {
    std::unique_ptr<GlContext> ctx(new GlContext());
    ctx->platform_ = hidden ? ContextPlatform::SdlHidden : ContextPlatform::SdlWindow;
    if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0)
        return Error{fmt::format("SDL video: {}", SDL_GetError())};
    ctx->sdl_video_ = true;
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3);
    SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
    SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
    SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 24);
    const Uint32 flags = SDL_WINDOW_OPENGL | SDL_WINDOW_ALLOW_HIGHDPI |
                         (hidden ? SDL_WINDOW_HIDDEN : SDL_WINDOW_RESIZABLE);
    // 4× MSAA on the window when the driver offers it, else none.
    for (int samples : {hidden ? 0 : 4, 0}) {
        SDL_GL_SetAttribute(SDL_GL_MULTISAMPLEBUFFERS, samples ? 1 : 0);
        SDL_GL_SetAttribute(SDL_GL_MULTISAMPLESAMPLES, samples);
        ctx->window_ = SDL_CreateWindow(title.c_str(), SDL_WINDOWPOS_CENTERED,
                                        SDL_WINDOWPOS_CENTERED, width, height, flags);
        if (ctx->window_) {
            ctx->sdl_gl_ = SDL_GL_CreateContext(ctx->window_);
            if (ctx->sdl_gl_) break;
            SDL_DestroyWindow(ctx->window_);
            ctx->window_ = nullptr;
        }
    }
    if (!ctx->window_ || !ctx->sdl_gl_)
        return Error{fmt::format("SDL OpenGL 3.3 core window: {}", SDL_GetError())};
    if (!hidden) SDL_GL_SetSwapInterval(1);
    if (auto r = ctx->finish_gl(); !r) return r.error();
    ctx->description_ += fmt::format(" | SDL {}", SDL_GetCurrentVideoDriver());
    return ctx;
}

Result<std::unique_ptr<GlContext>> GlContext::create_offscreen() {
    std::string tried;
    for (ContextPlatform p : {ContextPlatform::EglSurfaceless, ContextPlatform::EglDevice,
                              ContextPlatform::EglDefault, ContextPlatform::SdlHidden}) {
        auto r = p == ContextPlatform::SdlHidden ? try_sdl(true, "slanim", 64, 64) : try_egl(p);
        if (r) return r;
        tried += fmt::format("\n  {}: {}", platform_name(p), r.error().message);
    }
    return Error{"no OpenGL 3.3 core context could be created; platforms tried:" + tried};
}

Result<std::unique_ptr<GlContext>> GlContext::create_window(const std::string& title, int width,
                                                            int height) {
    return try_sdl(false, title, width, height);
}

void GlContext::drawable_size(int& width, int& height) const {
    width = height = 0;
    if (window_) SDL_GL_GetDrawableSize(window_, &width, &height);
}

void GlContext::swap() {
    if (window_ && platform_ == ContextPlatform::SdlWindow) SDL_GL_SwapWindow(window_);
    // Waits for the frame: drivers without a display to pace them (SDL's offscreen driver,
    // llvmpipe) otherwise queue frames without limit, about 2.3 MB each (found by the view flood
    // test); with a real display and vsync the swap has already waited, so this costs nothing.
    glFinish();
}

}  // namespace slanim::gfx

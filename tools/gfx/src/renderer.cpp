// SPDX-License-Identifier: MIT
#include "slanim/gfx/renderer.hpp"

#include <glad/gl.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <glm/glm.hpp>
#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/type_ptr.hpp>

#include <stb_easy_font.h>

namespace slanim::gfx {

static_assert(sizeof(Vec3) == 3 * sizeof(float), "Vec3 arrays are uploaded as they are");

namespace {

// ---- shaders ------------------------------------------------------------------------------

constexpr const char* kMeshVs = R"(#version 330 core
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_nrm;
uniform mat4 u_mvp;
out vec3 v_pos;
out vec3 v_nrm;
void main() {
    v_pos = a_pos;
    v_nrm = a_nrm;
    gl_Position = u_mvp * vec4(a_pos, 1.0);
}
)";

// Key light from the front, upper right of the avatar; fill from its left; ambient; a small
// Blinn highlight of the key. Both faces are lit (normals flipped toward the eye).
constexpr const char* kMeshFs = R"(#version 330 core
in vec3 v_pos;
in vec3 v_nrm;
uniform vec4 u_colour;
uniform vec3 u_eye;
out vec4 o_colour;
void main() {
    vec3 n = normalize(v_nrm);
    vec3 v = normalize(u_eye - v_pos);
    if (dot(n, v) < 0.0) n = -n;
    vec3 key = normalize(vec3(0.65, -0.45, 0.70));
    vec3 fill = normalize(vec3(0.15, 0.90, 0.25));
    float d = 0.28 + 0.72 * max(dot(n, key), 0.0) + 0.28 * max(dot(n, fill), 0.0);
    float s = 0.18 * pow(max(dot(n, normalize(key + v)), 0.0), 32.0);
    o_colour = vec4(u_colour.rgb * d + vec3(s), u_colour.a);
}
)";

constexpr const char* kOverlayVs = R"(#version 330 core
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec4 a_colour;
layout(location = 2) in float a_size;
uniform mat4 u_mvp;
out vec4 g_colour;
out float g_size;
void main() {
    g_colour = a_colour;
    g_size = a_size;
    gl_Position = u_mvp * vec4(a_pos, 1.0);
    gl_PointSize = a_size;
}
)";

// Lines → screen-space quads `g_size` pixels wide, clipped at the near plane.
constexpr const char* kLineGs = R"(#version 330 core
layout(lines) in;
layout(triangle_strip, max_vertices = 4) out;
in vec4 g_colour[];
in float g_size[];
uniform vec2 u_viewport;
out vec4 f_colour;
void main() {
    vec4 p0 = gl_in[0].gl_Position;
    vec4 p1 = gl_in[1].gl_Position;
    const float near_w = 1e-3;
    if (p0.w < near_w && p1.w < near_w) return;
    if (p0.w < near_w) p0 = mix(p0, p1, (near_w - p0.w) / (p1.w - p0.w));
    if (p1.w < near_w) p1 = mix(p1, p0, (near_w - p1.w) / (p0.w - p1.w));
    vec2 half_vp = 0.5 * u_viewport;
    vec2 s0 = p0.xy / p0.w * half_vp;
    vec2 s1 = p1.xy / p1.w * half_vp;
    vec2 d = s1 - s0;
    float len = length(d);
    vec2 dir = len > 1e-4 ? d / len : vec2(1.0, 0.0);
    vec2 off = vec2(-dir.y, dir.x) * (0.5 * g_size[0]) / half_vp;
    f_colour = g_colour[0];
    gl_Position = vec4(p0.xy + off * p0.w, p0.zw); EmitVertex();
    gl_Position = vec4(p0.xy - off * p0.w, p0.zw); EmitVertex();
    f_colour = g_colour[1];
    gl_Position = vec4(p1.xy + off * p1.w, p1.zw); EmitVertex();
    gl_Position = vec4(p1.xy - off * p1.w, p1.zw); EmitVertex();
    EndPrimitive();
}
)";

constexpr const char* kLineFs = R"(#version 330 core
in vec4 f_colour;
out vec4 o_colour;
void main() { o_colour = f_colour; }
)";

// Round dots with a dark rim.
constexpr const char* kPointFs = R"(#version 330 core
in vec4 g_colour;
out vec4 o_colour;
void main() {
    float r = length(gl_PointCoord - vec2(0.5)) * 2.0;
    if (r > 1.0) discard;
    o_colour = r > 0.72 ? vec4(0.05, 0.05, 0.05, g_colour.a) : g_colour;
}
)";

constexpr const char* kTextVs = R"(#version 330 core
layout(location = 0) in vec2 a_px;
layout(location = 1) in vec4 a_colour;
uniform vec2 u_viewport;
out vec4 f_colour;
void main() {
    f_colour = a_colour;
    gl_Position = vec4(a_px.x / u_viewport.x * 2.0 - 1.0, 1.0 - a_px.y / u_viewport.y * 2.0,
                       0.0, 1.0);
}
)";

Result<unsigned> compile(GLenum type, const char* src, const char* what) {
    const GLuint s = glCreateShader(type);
    glShaderSource(s, 1, &src, nullptr);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[2048] = {};
        glGetShaderInfoLog(s, sizeof(log), nullptr, log);
        glDeleteShader(s);
        return Error{fmt::format("the {} shader does not compile: {}", what, log)};
    }
    return static_cast<unsigned>(s);
}

Result<unsigned> link(const char* what, const char* vs, const char* fs, const char* gs = nullptr) {
    auto v = compile(GL_VERTEX_SHADER, vs, what);
    if (!v) return v.error();
    auto f = compile(GL_FRAGMENT_SHADER, fs, what);
    if (!f) {
        glDeleteShader(*v);
        return f.error();
    }
    unsigned g = 0;
    if (gs) {
        auto gr = compile(GL_GEOMETRY_SHADER, gs, what);
        if (!gr) {
            glDeleteShader(*v);
            glDeleteShader(*f);
            return gr.error();
        }
        g = *gr;
    }
    const GLuint p = glCreateProgram();
    glAttachShader(p, *v);
    glAttachShader(p, *f);
    if (g) glAttachShader(p, g);
    glLinkProgram(p);
    glDeleteShader(*v);
    glDeleteShader(*f);
    if (g) glDeleteShader(g);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[2048] = {};
        glGetProgramInfoLog(p, sizeof(log), nullptr, log);
        glDeleteProgram(p);
        return Error{fmt::format("the {} shader program does not link: {}", what, log)};
    }
    return static_cast<unsigned>(p);
}

const void* byte_offset(std::size_t n) { return reinterpret_cast<const void*>(n); }

glm::vec3 to_glm(Vec3 v) { return {v.x, v.y, v.z}; }

glm::mat4 view_projection(const OrbitCamera& cam, int width, int height) {
    const float aspect = static_cast<float>(width) / static_cast<float>(std::max(height, 1));
    const float dist = std::max(cam.distance, 0.05f);
    const glm::mat4 proj = glm::perspective(std::clamp(cam.fov_y, 0.05f, 3.0f), aspect,
                                            std::max(0.01f, dist * 0.01f), dist * 20.f + 50.f);
    const glm::mat4 view = glm::lookAt(to_glm(cam.eye()), to_glm(cam.centre()), {0.f, 0.f, 1.f});
    return proj * view;
}

void push_overlay_vertex(std::vector<float>& v, Vec3 p, Rgba c, float size) {
    v.insert(v.end(), {p.x, p.y, p.z, c.r, c.g, c.b, c.a, size});
}

}  // namespace

Result<std::unique_ptr<Renderer>> Renderer::create() {
    std::unique_ptr<Renderer> r(new Renderer());
    auto mesh = link("mesh", kMeshVs, kMeshFs);
    if (!mesh) return mesh.error();
    r->mesh_.id = *mesh;
    auto line = link("line", kOverlayVs, kLineFs, kLineGs);
    if (!line) return line.error();
    r->line_.id = *line;
    auto point = link("point", kOverlayVs, kPointFs);
    if (!point) return point.error();
    r->point_.id = *point;
    auto text = link("text", kTextVs, kLineFs);
    if (!text) return text.error();
    r->text_.id = *text;
    for (Program* p : {&r->mesh_, &r->line_, &r->point_, &r->text_}) {
        p->mvp = glGetUniformLocation(p->id, "u_mvp");
        p->colour = glGetUniformLocation(p->id, "u_colour");
        p->viewport = glGetUniformLocation(p->id, "u_viewport");
        p->eye = glGetUniformLocation(p->id, "u_eye");
    }

    glGenVertexArrays(1, &r->mesh_vao_);
    glGenBuffers(1, &r->mesh_vbo_);
    glGenBuffers(1, &r->mesh_ebo_);
    glGenVertexArrays(1, &r->over_vao_);
    glGenBuffers(1, &r->over_vbo_);
    glBindVertexArray(r->over_vao_);
    glBindBuffer(GL_ARRAY_BUFFER, r->over_vbo_);
    constexpr GLsizei kOverStride = 8 * sizeof(float);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, kOverStride, byte_offset(0));
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 4, GL_FLOAT, GL_FALSE, kOverStride, byte_offset(3 * sizeof(float)));
    glEnableVertexAttribArray(2);
    glVertexAttribPointer(2, 1, GL_FLOAT, GL_FALSE, kOverStride, byte_offset(7 * sizeof(float)));
    glGenVertexArrays(1, &r->text_vao_);
    glGenBuffers(1, &r->text_vbo_);
    glBindVertexArray(r->text_vao_);
    glBindBuffer(GL_ARRAY_BUFFER, r->text_vbo_);
    constexpr GLsizei kTextStride = 6 * sizeof(float);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, kTextStride, byte_offset(0));
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 4, GL_FLOAT, GL_FALSE, kTextStride, byte_offset(2 * sizeof(float)));
    glBindVertexArray(0);
    if (const GLenum e = glGetError(); e != GL_NO_ERROR)
        return Error{fmt::format("OpenGL error 0x{:04x} while creating the renderer", e)};
    return r;
}

Renderer::~Renderer() {
    for (Program* p : {&mesh_, &line_, &point_, &text_})
        if (p->id) glDeleteProgram(p->id);
    const unsigned vaos[] = {mesh_vao_, over_vao_, text_vao_};
    const unsigned bufs[] = {mesh_vbo_, mesh_ebo_, over_vbo_, text_vbo_};
    glDeleteVertexArrays(3, vaos);
    glDeleteBuffers(4, bufs);
    if (fbo_) glDeleteFramebuffers(1, &fbo_);
    if (resolve_fbo_) glDeleteFramebuffers(1, &resolve_fbo_);
    const unsigned rbs[] = {fbo_colour_, fbo_depth_, resolve_colour_};
    glDeleteRenderbuffers(3, rbs);
}

void Renderer::draw(const Scene& scene, const OrbitCamera& camera, int width, int height) {
    skipped_ = 0;
    if (width <= 0 || height <= 0) return;
    glViewport(0, 0, width, height);
    glClearColor(scene.background.r, scene.background.g, scene.background.b, 1.f);
    glClearDepth(1.0);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glDisable(GL_CULL_FACE);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);

    const glm::mat4 vp = view_projection(camera, width, height);
    const Vec3 eye = camera.eye();
    if (scene.grid) draw_ground(scene, glm::value_ptr(vp));

    // Meshes: positions then normals in one dynamic buffer, indices in another.
    glUseProgram(mesh_.id);
    glUniformMatrix4fv(mesh_.mvp, 1, GL_FALSE, glm::value_ptr(vp));
    glUniform3f(mesh_.eye, eye.x, eye.y, eye.z);
    glBindVertexArray(mesh_vao_);
    glBindBuffer(GL_ARRAY_BUFFER, mesh_vbo_);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, mesh_ebo_);
    for (const RenderMesh& m : scene.meshes) {
        if (!m.check().empty()) {
            ++skipped_;
            continue;
        }
        if (m.positions.empty()) continue;
        const std::size_t bytes = m.positions.size_bytes();
        glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(2 * bytes), nullptr, GL_STREAM_DRAW);
        glBufferSubData(GL_ARRAY_BUFFER, 0, static_cast<GLsizeiptr>(bytes), m.positions.data());
        glBufferSubData(GL_ARRAY_BUFFER, static_cast<GLintptr>(bytes), static_cast<GLsizeiptr>(bytes),
                        m.normals.data());
        glEnableVertexAttribArray(0);
        glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, byte_offset(0));
        glEnableVertexAttribArray(1);
        glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 0, byte_offset(bytes));
        const bool wide = !m.indices32.empty();
        const std::size_t count = wide ? m.indices32.size() : m.indices16.size();
        const std::size_t ibytes = wide ? m.indices32.size_bytes() : m.indices16.size_bytes();
        const void* idata = wide ? static_cast<const void*>(m.indices32.data())
                                 : static_cast<const void*>(m.indices16.data());
        glBufferData(GL_ELEMENT_ARRAY_BUFFER, static_cast<GLsizeiptr>(ibytes), idata, GL_STREAM_DRAW);
        glUniform4f(mesh_.colour, m.colour.r, m.colour.g, m.colour.b, m.colour.a);
        glDrawElements(GL_TRIANGLES, static_cast<GLsizei>(count),
                       wide ? GL_UNSIGNED_INT : GL_UNSIGNED_SHORT, byte_offset(0));
    }
    glBindVertexArray(0);

    draw_overlays(scene, glm::value_ptr(vp), width, height);
    draw_labels(scene, glm::value_ptr(vp), width, height);
    glUseProgram(0);
}

void Renderer::draw_ground(const Scene& scene, const float* view_proj) {
    // A 10 m square plane slightly darker than the background, then grid lines every 0.5 m
    // (every metre brighter), depth tested so the body hides them. The plane is pushed back
    // in depth so the lines on it always win.
    const float z = scene.ground_height;
    constexpr float kHalf = 5.f;
    const Vec3 quad[4] = {{-kHalf, -kHalf, z}, {kHalf, -kHalf, z}, {kHalf, kHalf, z}, {-kHalf, kHalf, z}};
    const Vec3 up[4] = {{0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {0, 0, 1}};
    const std::uint16_t idx[6] = {0, 1, 2, 0, 2, 3};
    glUseProgram(mesh_.id);
    glUniformMatrix4fv(mesh_.mvp, 1, GL_FALSE, view_proj);
    glUniform3f(mesh_.eye, 0.f, 0.f, z + 10.f);  // lit from above whatever the camera
    const Rgba bg = scene.background;
    glUniform4f(mesh_.colour, bg.r * 0.62f, bg.g * 0.62f, bg.b * 0.62f, 1.f);
    glBindVertexArray(mesh_vao_);
    glBindBuffer(GL_ARRAY_BUFFER, mesh_vbo_);
    glBufferData(GL_ARRAY_BUFFER, sizeof(quad) + sizeof(up), nullptr, GL_STREAM_DRAW);
    glBufferSubData(GL_ARRAY_BUFFER, 0, sizeof(quad), quad);
    glBufferSubData(GL_ARRAY_BUFFER, sizeof(quad), sizeof(up), up);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, byte_offset(0));
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 0, byte_offset(sizeof(quad)));
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, mesh_ebo_);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, sizeof(idx), idx, GL_STREAM_DRAW);
    glEnable(GL_POLYGON_OFFSET_FILL);
    glPolygonOffset(1.f, 1.f);
    glDrawElements(GL_TRIANGLES, 6, GL_UNSIGNED_SHORT, byte_offset(0));
    glDisable(GL_POLYGON_OFFSET_FILL);

    scratch_.clear();
    const Rgba minor{bg.r * 1.35f + 0.04f, bg.g * 1.35f + 0.04f, bg.b * 1.35f + 0.04f, 1.f};
    const Rgba major{bg.r * 1.8f + 0.08f, bg.g * 1.8f + 0.08f, bg.b * 1.8f + 0.08f, 1.f};
    for (int i = -10; i <= 10; ++i) {
        const float c = static_cast<float>(i) * 0.5f;
        const Rgba col = i % 2 == 0 ? major : minor;
        push_overlay_vertex(scratch_, {c, -kHalf, z}, col, 1.f);
        push_overlay_vertex(scratch_, {c, kHalf, z}, col, 1.f);
        push_overlay_vertex(scratch_, {-kHalf, c, z}, col, 1.f);
        push_overlay_vertex(scratch_, {kHalf, c, z}, col, 1.f);
    }
    GLint vp[4];
    glGetIntegerv(GL_VIEWPORT, vp);
    glUseProgram(line_.id);
    glUniformMatrix4fv(line_.mvp, 1, GL_FALSE, view_proj);
    glUniform2f(line_.viewport, static_cast<float>(vp[2]), static_cast<float>(vp[3]));
    glBindVertexArray(over_vao_);
    glBindBuffer(GL_ARRAY_BUFFER, over_vbo_);
    glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(scratch_.size() * sizeof(float)),
                 scratch_.data(), GL_STREAM_DRAW);
    glDrawArrays(GL_LINES, 0, static_cast<GLsizei>(scratch_.size() / 8));
    glBindVertexArray(0);
}

void Renderer::draw_overlays(const Scene& scene, const float* view_proj, int width, int height) {
    glDisable(GL_DEPTH_TEST);
    glBindVertexArray(over_vao_);
    glBindBuffer(GL_ARRAY_BUFFER, over_vbo_);
    if (!scene.lines.empty()) {
        scratch_.clear();
        for (const LineSeg& l : scene.lines) {
            push_overlay_vertex(scratch_, l.a, l.colour, l.width_px);
            push_overlay_vertex(scratch_, l.b, l.colour, l.width_px);
        }
        glUseProgram(line_.id);
        glUniformMatrix4fv(line_.mvp, 1, GL_FALSE, view_proj);
        glUniform2f(line_.viewport, static_cast<float>(width), static_cast<float>(height));
        glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(scratch_.size() * sizeof(float)),
                     scratch_.data(), GL_STREAM_DRAW);
        glDrawArrays(GL_LINES, 0, static_cast<GLsizei>(scratch_.size() / 8));
    }
    if (!scene.points.empty()) {
        scratch_.clear();
        for (const PointMark& p : scene.points) push_overlay_vertex(scratch_, p.p, p.colour, p.size_px);
        glEnable(GL_PROGRAM_POINT_SIZE);
        glUseProgram(point_.id);
        glUniformMatrix4fv(point_.mvp, 1, GL_FALSE, view_proj);
        glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(scratch_.size() * sizeof(float)),
                     scratch_.data(), GL_STREAM_DRAW);
        glDrawArrays(GL_POINTS, 0, static_cast<GLsizei>(scratch_.size() / 8));
        glDisable(GL_PROGRAM_POINT_SIZE);
    }
    glBindVertexArray(0);
    glEnable(GL_DEPTH_TEST);
}

void Renderer::draw_labels(const Scene& scene, const float* view_proj, int width, int height) {
    if (scene.labels.empty()) return;
    const glm::mat4 vp = glm::make_mat4(view_proj);
    const float w = static_cast<float>(width), h = static_cast<float>(height);
    scratch_.clear();
    std::vector<char> text;
    std::vector<unsigned char> quads;
    const auto push_quad = [&](float x0, float y0, float x1, float y1, Rgba c) {
        const float v[6][2] = {{x0, y0}, {x1, y0}, {x1, y1}, {x0, y0}, {x1, y1}, {x0, y1}};
        for (const auto& p : v) scratch_.insert(scratch_.end(), {p[0], p[1], c.r, c.g, c.b, c.a});
    };
    for (const Label& l : scene.labels) {
        if (l.text.empty()) continue;
        text.assign(l.text.begin(), l.text.end());
        for (char& ch : text)
            if (static_cast<unsigned char>(ch) < 32 || static_cast<unsigned char>(ch) > 126) ch = '?';
        text.push_back('\0');
        const float s = std::max(l.scale, 0.25f);
        const float tw = static_cast<float>(stb_easy_font_width(text.data())) * s;
        const float th = static_cast<float>(stb_easy_font_height(text.data())) * s;
        float x = l.x, y = l.y;
        if (l.anchored) {
            const glm::vec4 c = vp * glm::vec4(l.anchor.x, l.anchor.y, l.anchor.z, 1.f);
            if (c.w <= 1e-4f) continue;
            x += (c.x / c.w * 0.5f + 0.5f) * w;
            y += (0.5f - c.y / c.w * 0.5f) * h;
        } else {
            if (x < 0.f) x = w + x - tw;
            if (y < 0.f) y = h + y - th;
        }
        if (l.background) push_quad(x - 3.f, y - 2.f, x + tw + 3.f, y + th + 1.f, {0.f, 0.f, 0.f, 0.55f});
        quads.resize(text.size() * 300 + 64);
        const int n = stb_easy_font_print(0.f, 0.f, text.data(), nullptr, quads.data(),
                                          static_cast<int>(quads.size()));
        for (int q = 0; q < n; ++q) {
            float v[4][4];  // x, y, z, packed colour — 16 bytes per vertex
            std::memcpy(v, quads.data() + static_cast<std::size_t>(q) * 64u, sizeof(v));
            push_quad(x + v[0][0] * s, y + v[0][1] * s, x + v[2][0] * s, y + v[2][1] * s, l.colour);
        }
    }
    glDisable(GL_DEPTH_TEST);
    glUseProgram(text_.id);
    glUniform2f(text_.viewport, w, h);
    glBindVertexArray(text_vao_);
    glBindBuffer(GL_ARRAY_BUFFER, text_vbo_);
    glBufferData(GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(scratch_.size() * sizeof(float)),
                 scratch_.data(), GL_STREAM_DRAW);
    glDrawArrays(GL_TRIANGLES, 0, static_cast<GLsizei>(scratch_.size() / 6));
    glBindVertexArray(0);
    glEnable(GL_DEPTH_TEST);
}

Result<bool> Renderer::ensure_fbo(int width, int height) {
    if (fbo_ && width == fbo_w_ && height == fbo_h_) return true;
    if (!fbo_) {
        glGenFramebuffers(1, &fbo_);
        glGenFramebuffers(1, &resolve_fbo_);
        glGenRenderbuffers(1, &fbo_colour_);
        glGenRenderbuffers(1, &fbo_depth_);
        glGenRenderbuffers(1, &resolve_colour_);
    }
    GLint max_samples = 0;
    glGetIntegerv(GL_MAX_SAMPLES, &max_samples);
    fbo_samples_ = std::min(4, static_cast<int>(max_samples));
    if (fbo_samples_ < 2) fbo_samples_ = 0;
    glBindRenderbuffer(GL_RENDERBUFFER, fbo_colour_);
    glRenderbufferStorageMultisample(GL_RENDERBUFFER, fbo_samples_, GL_RGBA8, width, height);
    glBindRenderbuffer(GL_RENDERBUFFER, fbo_depth_);
    glRenderbufferStorageMultisample(GL_RENDERBUFFER, fbo_samples_, GL_DEPTH_COMPONENT24, width, height);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, fbo_colour_);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, fbo_depth_);
    const GLenum s1 = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    glBindRenderbuffer(GL_RENDERBUFFER, resolve_colour_);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, width, height);
    glBindFramebuffer(GL_FRAMEBUFFER, resolve_fbo_);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, resolve_colour_);
    const GLenum s2 = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glBindRenderbuffer(GL_RENDERBUFFER, 0);
    if (s1 != GL_FRAMEBUFFER_COMPLETE || s2 != GL_FRAMEBUFFER_COMPLETE) {
        fbo_w_ = fbo_h_ = 0;
        return Error{fmt::format("offscreen framebuffer of {}x{} incomplete (0x{:04x}, 0x{:04x})",
                                 width, height, s1, s2)};
    }
    fbo_w_ = width;
    fbo_h_ = height;
    return true;
}

Result<Image> Renderer::render_image(const Scene& scene, const OrbitCamera& camera, int width,
                                     int height) {
    constexpr int kMaxSide = 8192;
    if (width < 1 || height < 1 || width > kMaxSide || height > kMaxSide)
        return Error{fmt::format("image size {}x{} outside 1..{}", width, height, kMaxSide)};
    GLint max_rb = 0;
    glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &max_rb);
    if (width > max_rb || height > max_rb)
        return Error{fmt::format("image size {}x{} above the driver's limit of {}", width, height, max_rb)};
    while (glGetError() != GL_NO_ERROR) {
    }
    if (auto r = ensure_fbo(width, height); !r) return r.error();
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    draw(scene, camera, width, height);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo_);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, resolve_fbo_);
    glBlitFramebuffer(0, 0, width, height, 0, 0, width, height, GL_COLOR_BUFFER_BIT, GL_NEAREST);
    glBindFramebuffer(GL_FRAMEBUFFER, resolve_fbo_);
    Image img;
    img.width = width;
    img.height = height;
    img.rgba.resize(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 4u);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, img.rgba.data());
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (const GLenum e = glGetError(); e != GL_NO_ERROR)
        return Error{fmt::format("OpenGL error 0x{:04x} while rendering", e)};
    // GL rows are bottom-up; images are top-down.
    const std::size_t row = static_cast<std::size_t>(width) * 4u;
    std::vector<std::uint8_t> tmp(row);
    for (int y = 0; y < height / 2; ++y) {
        std::uint8_t* a = img.rgba.data() + static_cast<std::size_t>(y) * row;
        std::uint8_t* b = img.rgba.data() + static_cast<std::size_t>(height - 1 - y) * row;
        std::memcpy(tmp.data(), a, row);
        std::memcpy(a, b, row);
        std::memcpy(b, tmp.data(), row);
    }
    // Opaque output whatever the blending left in alpha.
    for (std::size_t i = 3; i < img.rgba.size(); i += 4) img.rgba[i] = 255;
    return img;
}

}  // namespace slanim::gfx

// SPDX-License-Identifier: MIT
// `slanim crowd --render`. See crowd_render.hpp.
#include "crowd_render.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <numbers>
#include <optional>
#include <string_view>
#include <vector>

#include "crowd_command.hpp"
#include "mesh_export.hpp"
#include "slanim/gfx/avatar_scene.hpp"
#include "slanim/gfx/image.hpp"
#include "slanim/gfx/renderer.hpp"
#include "slanim/runtime/appearance.hpp"
#include "slanim/runtime/appearance_feature.hpp"
#include "slanim/runtime/ik_feature.hpp"
#include "slanim/runtime/lod_feature.hpp"

namespace slanim::cli {

namespace {

/// Colours of the avatar mesh's parts (as `slanim render` draws them).
gfx::Rgba mesh_colour(std::string_view type) {
    if (type == "hairMesh") return {0.30f, 0.20f, 0.13f, 1.f};
    if (type == "eyelashMesh") return {0.12f, 0.09f, 0.08f, 1.f};
    if (type.starts_with("eyeBall")) return {0.90f, 0.90f, 0.92f, 1.f};
    return {0.80f, 0.60f, 0.48f, 1.f};  // skin
}

/// The avatars in the picture: visible, in front of the camera, within the draw distance and
/// inside the horizontal field of view (1 m margin), nearest rows first.
std::vector<int> avatars_in_view(World& world, std::span<const Entity> ents) {
    const int n = static_cast<int>(ents.size());
    const float tan_half_y = std::tan(CrowdView::kFovYDeg * std::numbers::pi_v<float> / 360.f);
    const float tan_half_x = tan_half_y * static_cast<float>(CrowdView::kWidth) / static_cast<float>(CrowdView::kHeight);
    const Vec3 eye = CrowdView::eye();
    std::vector<int> in_view;
    for (int k = 0; k < n; ++k) {
        const Vec3 s = CrowdView::spot(k, n);
        const float depth = eye.x - s.x;
        if (!LodFeature::of(world).visible(ents[k]) || !CrowdView::visible(s)) continue;
        if (std::fabs(s.y) > depth * tan_half_x + 1.f) continue;  // outside the picture (1 m margin)
        in_view.push_back(k);
    }
    return in_view;
}

/// Every drawn avatar's vertices, moved to its spot, in two arrays sized up front (the meshes'
/// spans point into them), and the parts (one per avatar mesh) that draw them.
class CrowdGeometry {
public:
    /// The body source: the avatar meshes of the first avatar's Appearance, else the generated
    /// body of its skeleton.
    explicit CrowdGeometry(World& world, std::span<const Entity> ents) : world_(world), ents_(ents) {
        const Appearance* first = AppearanceFeature::of(world).get(ents.front());
        if (first) {
            snapshot_.emplace(*first);
            for (const ExportMesh& m : snapshot_->meshes()) {
                auto& idx = mesh_indices_.emplace_back();
                // The skirt is drawn by the viewer only with a skirt wearable (as in `slanim render`).
                if (m.name == "skirtMesh" || m.positions.empty() || m.faces.empty()) continue;
                for (const auto& f : m.faces) idx.insert(idx.end(), f.begin(), f.end());
                per_avatar_ += m.positions.size();
            }
        } else {
            body_.emplace(world.skeleton(ents.front()), 6, 10);
            for (const gfx::RenderMesh& m : body_->meshes()) per_avatar_ += m.positions.size();
        }
    }

    [[nodiscard]] bool meshes() const { return snapshot_.has_value(); }
    [[nodiscard]] std::size_t per_avatar() const { return per_avatar_; }

    /// Poses and collects the avatars `in_view`.
    void collect(const std::vector<int>& in_view) {
        const int n = static_cast<int>(ents_.size());
        positions_.reserve(per_avatar_ * in_view.size());
        normals_.reserve(per_avatar_ * in_view.size());
        for (const int k : in_view) {
            const Vec3 s = CrowdView::spot(k, n);
            const Vec3 offset{s.x, s.y, 0.f};
            if (snapshot_) {
                const Appearance* a = AppearanceFeature::of(world_).get(ents_[k]);
                if (!a) continue;
                snapshot_->capture(*a);
                const auto meshes = snapshot_->meshes();
                for (std::size_t m = 0; m < meshes.size(); ++m)
                    if (!mesh_indices_[m].empty())
                        append(meshes[m].positions, meshes[m].normals, offset, mesh_indices_[m],
                               mesh_colour(meshes[m].name));
            } else {
                const ModelPose& pose = world_.model_pose(ents_[k]);
                body_->update(pose.positions, pose.rotations);
                for (const gfx::RenderMesh& m : body_->meshes())
                    append(m.positions, m.normals, offset, m.indices32, m.colour);
            }
        }
    }

    /// The collected parts as the scene's meshes.
    void add_to(gfx::Scene& scene) const {
        for (const Part& p : parts_) {
            gfx::RenderMesh m;
            m.positions = std::span<const Vec3>(positions_).subspan(p.first, p.count);
            m.normals = std::span<const Vec3>(normals_).subspan(p.first, p.count);
            m.indices32 = p.indices;
            m.colour = p.colour;
            scene.meshes.push_back(m);
        }
    }

private:
    struct Part {
        std::size_t first, count;
        std::span<const std::uint32_t> indices;
        gfx::Rgba colour;
    };

    void append(std::span<const Vec3> p, std::span<const Vec3> nrm, Vec3 offset, std::span<const std::uint32_t> idx,
                gfx::Rgba colour) {
        parts_.push_back({positions_.size(), p.size(), idx, colour});
        for (const Vec3& v : p) positions_.push_back(v + offset);
        normals_.insert(normals_.end(), nrm.begin(), nrm.end());
    }

    World& world_;
    std::span<const Entity> ents_;
    std::optional<SkinnedMeshSnapshot> snapshot_;
    std::vector<std::vector<std::uint32_t>> mesh_indices_;
    std::optional<gfx::GeneratedBody> body_;
    std::size_t per_avatar_ = 0;
    std::vector<Vec3> positions_, normals_;
    std::vector<Part> parts_;
};

/// The ground under the whole crowd of `n` (and up to the camera), a little darker than the sky.
struct CrowdGround {
    std::array<Vec3, 4> positions, normals;
    std::array<std::uint32_t, 6> indices{0, 1, 2, 0, 2, 3};

    CrowdGround(int n, float ground) {
        const Vec3 eye = CrowdView::eye();
        const int cols = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n))));
        const float half_w = 0.5f * CrowdView::kSpacing * static_cast<float>(cols) + 2.f;
        const float back = -CrowdView::kSpacing * static_cast<float>((n + cols - 1) / cols) - 2.f;
        positions = {Vec3{back, -half_w, ground}, Vec3{eye.x + 1.f, -half_w, ground},
                     Vec3{eye.x + 1.f, half_w, ground}, Vec3{back, half_w, ground}};
        normals = {Vec3{0, 0, 1}, Vec3{0, 0, 1}, Vec3{0, 0, 1}, Vec3{0, 0, 1}};
    }
    [[nodiscard]] gfx::RenderMesh mesh() const {
        gfx::RenderMesh floor;
        floor.positions = positions;
        floor.normals = normals;
        floor.indices32 = indices;
        floor.colour = {0.24f, 0.26f, 0.24f, 1.f};
        return floor;
    }
};

/// CrowdView's camera: the eye 3 m in front of the first row, 1.8 m above the ground, looking
/// along -X with a 60-degree vertical field of view.
gfx::OrbitCamera crowd_camera(float ground) {
    const Vec3 eye = CrowdView::eye();
    gfx::OrbitCamera cam;
    cam.yaw = 0.f;
    cam.pitch = 0.f;
    cam.distance = 5.f;  // eye - centre; the far plane is then 150 m
    cam.fov_y = CrowdView::kFovYDeg * std::numbers::pi_v<float> / 180.f;
    cam.target = Vec3{eye.x - cam.distance, eye.y, ground + eye.z};
    return cam;
}

}  // namespace

Result<CrowdRenderReport> render_crowd(World& world, std::span<const Entity> ents, const std::string& path,
                                       double time) {
    auto renderer = gfx::Renderer::create();
    if (!renderer) return renderer.error();
    const int n = static_cast<int>(ents.size());
    const float ground = IkFeature::of(world).ground(ents.front()).height;
    std::vector<int> in_view = avatars_in_view(world, ents);
    CrowdGeometry geometry(world, ents);
    CrowdRenderReport report;
    report.meshes = geometry.meshes();
    const std::size_t fit = geometry.per_avatar() ? kMaxCrowdDrawVertices / geometry.per_avatar() : in_view.size();
    if (in_view.size() > fit) {
        report.over_budget = static_cast<int>(in_view.size() - fit);
        in_view.resize(fit);
    }
    report.drawn = static_cast<int>(in_view.size());
    geometry.collect(in_view);

    gfx::Scene scene;
    scene.grid = false;  // the renderer's grid is 10 m wide; the crowd gets its own ground
    const CrowdGround floor(n, ground);
    scene.meshes.push_back(floor.mesh());
    geometry.add_to(scene);
    scene.labels.push_back(gfx::Label::at(
        fmt::format("slanim crowd: {} avatars ({} drawn), t = {:.2f} s", n, report.drawn, time), 10.f, -10.f,
        gfx::palette::kText, 1.5f));
    auto img = (*renderer)->render_image(scene, crowd_camera(ground), CrowdView::kWidth, CrowdView::kHeight);
    if (!img) return img.error();
    auto w = gfx::write_png(path, *img);
    if (!w) return w.error();
    return report;
}

}  // namespace slanim::cli

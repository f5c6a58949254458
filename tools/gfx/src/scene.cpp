// SPDX-License-Identifier: MIT
#include "slanim/gfx/scene.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace slanim::gfx {

namespace {
template <class Index>
std::string check_indices(std::span<const Index> indices, std::size_t vertices) {
    if (indices.size() % 3 != 0)
        return fmt::format("{} indices is not a whole number of triangles", indices.size());
    for (std::size_t i = 0; i < indices.size(); ++i)
        if (indices[i] >= vertices)
            return fmt::format("index {} at position {} is not below the {} vertices",
                               static_cast<std::uint64_t>(indices[i]), i, vertices);
    return {};
}
}  // namespace

std::string RenderMesh::check() const {
    if (normals.size() != positions.size())
        return fmt::format("{} normals for {} positions", normals.size(), positions.size());
    if (indices32.empty() == indices16.empty())
        return indices32.empty() ? "no indices" : "both 16- and 32-bit indices";
    return indices32.empty() ? check_indices(indices16, positions.size())
                             : check_indices(indices32, positions.size());
}

void Scene::clear() {
    meshes.clear();
    lines.clear();
    points.clear();
    labels.clear();
    grid = true;
    ground_height = 0.f;
    background = Scene{}.background;
}

Vec3 OrbitCamera::eye() const {
    const float p = std::clamp(pitch, -1.5f, 1.5f);
    const float d = std::max(distance, 0.05f);
    const Vec3 dir{std::cos(p) * std::cos(yaw), std::cos(p) * std::sin(yaw), std::sin(p)};
    return centre() + dir * d;
}

}  // namespace slanim::gfx

// SPDX-License-Identifier: MIT
// The C API: an avatar's appearance (visual params, wearables, skinned base meshes).

#include <algorithm>
#include <cstring>

#include "capi_internal.hpp"
#include "slanim/appearance/visual_params.hpp"
#include "slanim/appearance/wearable.hpp"

using namespace slanim;
using namespace slanim::capi;

namespace {

Appearance& appearance_of(slanim_world& w, const AvatarSlot& s) {
    Appearance* a = AppearanceFeature::of(w.world).get(s.entity);
    if (!a) fail(SLANIM_ERROR_UNSUPPORTED, "the avatar has no appearance (slanim_avatar_enable_appearance)");
    return *a;
}

ParamIndex param_of(const Appearance& a, int32_t id) {
    const ParamIndex p = a.model().find(static_cast<int>(id));
    if (p == kNoParam) fail(SLANIM_ERROR_NOT_FOUND, fmt::format("no visual param with id {}", id));
    return p;
}

const SkinnedMesh& mesh_of(slanim_world& w, const AvatarSlot& s, int32_t mesh) {
    const Appearance& a = appearance_of(w, s);
    const auto meshes = a.options().skin ? a.skinned() : std::span<const SkinnedMesh>{};
    if (mesh < 0 || static_cast<std::size_t>(mesh) >= meshes.size())
        fail(SLANIM_ERROR_OUT_OF_RANGE, fmt::format("mesh index {} is not in [0, {})", mesh, meshes.size()));
    return meshes[static_cast<std::size_t>(mesh)];
}

}  // namespace

extern "C" {

slanim_status slanim_avatar_enable_appearance(slanim_world* world, slanim_avatar avatar, int skin) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        SkeletonData& sd = *s.skeleton;
        if (sd.character_dir.empty())
            fail(SLANIM_ERROR_UNSUPPORTED, "the avatar's skeleton is the embedded default: an appearance needs a "
                                           "character folder (slanim_skeleton_load) with avatar_lad.xml and the .llm meshes");
        std::shared_ptr<const AppearanceModel> model;
        {
            std::lock_guard lock(sd.model_mutex);
            if (!sd.model) {
                auto m = load_appearance_model(sd.character_dir, sd.skeleton);
                if (!m) fail(SLANIM_ERROR_INVALID_DATA, m.error().describe());
                sd.model = std::move(*m);
            }
            model = sd.model;
        }
        AppearanceOptions ao;
        ao.skin = skin != 0;
        auto a = Appearance::create(std::move(model), ao);
        if (!a) fail(SLANIM_ERROR_INVALID_DATA, a.error().describe());
        if (!AppearanceFeature::of(w.world).set(s.entity, std::shared_ptr<Appearance>(std::move(*a))))
            fail(SLANIM_ERROR_INVALID_DATA, "the appearance model does not fit the avatar's skeleton");
    });
}

slanim_status slanim_avatar_get_visual_param(const slanim_world* world, slanim_avatar avatar, int32_t id,
                                             float* weight) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        const Appearance& a = appearance_of(w, w.slot(avatar));
        need(weight, "weight");
        *weight = a.state().weight(param_of(a, id));
    });
}

slanim_status slanim_avatar_set_visual_param(slanim_world* world, slanim_avatar avatar, int32_t id, float weight) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        Appearance& a = appearance_of(w, w.slot(avatar));
        const ParamIndex p = param_of(a, id);
        check_finite(weight, "weight");
        a.state().set_weight(p, weight);
    });
}

slanim_status slanim_avatar_visual_param_range(const slanim_world* world, slanim_avatar avatar, int32_t id, float* min,
                                               float* max, float* default_weight) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        const Appearance& a = appearance_of(w, w.slot(avatar));
        const AppearanceParam& p = a.model().param(param_of(a, id));
        if (min) *min = p.min;
        if (max) *max = p.max;
        if (default_weight) *default_weight = p.default_weight;
    });
}

slanim_status slanim_avatar_apply_wearable(slanim_world* world, slanim_avatar avatar, const char* text, size_t size,
                                           int32_t* applied) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        Appearance& a = appearance_of(w, w.slot(avatar));
        if (size > 0) need(text, "text");
        auto wearable = parse_wearable(std::string_view(text ? text : "", size));
        if (!wearable) fail(SLANIM_ERROR_INVALID_DATA, wearable.error().describe());
        const WearableType t = wearable->type;
        if (t != WearableType::Shape && t != WearableType::Skin && t != WearableType::Hair && t != WearableType::Eyes)
            fail(SLANIM_ERROR_UNSUPPORTED,
                 fmt::format("a {} wearable is not applied: only shape, skin, hair and eyes change the body "
                             "(clothing layers are not implemented)",
                             wearable_type_name(t)));
        const WearableApplyReport r = a.state().apply_wearable(*wearable);
        if (applied) *applied = r.applied;
    });
}

slanim_status slanim_avatar_mesh_count(const slanim_world* world, slanim_avatar avatar, int32_t* count) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        const Appearance& a = appearance_of(w, w.slot(avatar));
        need(count, "count");
        *count = a.options().skin ? static_cast<int32_t>(a.skinned().size()) : 0;
    });
}

slanim_status slanim_avatar_mesh_info(const slanim_world* world, slanim_avatar avatar, int32_t mesh,
                                      slanim_mesh_info* info) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const SkinnedMesh& m = mesh_of(w, s, mesh);
        need(info, "info");
        const AppearanceMesh& am = AppearanceFeature::of(w.world).get(s.entity)->model().meshes()[static_cast<std::size_t>(m.mesh)];
        info->vertex_count = static_cast<uint32_t>(am.num_vertices());
        info->triangle_count = static_cast<uint32_t>(am.faces.size());
        std::memset(info->type, 0, sizeof info->type);
        std::memcpy(info->type, am.type.data(), std::min(am.type.size(), sizeof info->type - 1));
    });
}

slanim_status slanim_avatar_mesh_vertices(const slanim_world* world, slanim_avatar avatar, int32_t mesh,
                                          float* positions, float* normals, size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const SkinnedMesh& m = mesh_of(w, s, mesh);
        const std::size_t n = m.positions.size();
        check_capacity(positions, capacity, 3 * n, needed, "positions");
        for (std::size_t v = 0; v < n; ++v) {
            const Vec3 p = m.positions.get(v);
            positions[3 * v] = p.x, positions[3 * v + 1] = p.y, positions[3 * v + 2] = p.z;
        }
        if (normals) {
            for (std::size_t v = 0; v < n; ++v) {
                const Vec3 q = v < m.normals.size() ? m.normals.get(v) : Vec3{};
                normals[3 * v] = q.x, normals[3 * v + 1] = q.y, normals[3 * v + 2] = q.z;
            }
        }
    });
}

slanim_status slanim_avatar_mesh_triangles(const slanim_world* world, slanim_avatar avatar, int32_t mesh,
                                           uint32_t* indices, size_t capacity, size_t* needed) {
    return guard(__func__, [&] {
        slanim_world& w = get(world);
        AvatarSlot& s = w.slot(avatar);
        const SkinnedMesh& m = mesh_of(w, s, mesh);
        const auto& faces = AppearanceFeature::of(w.world).get(s.entity)->model().meshes()[static_cast<std::size_t>(m.mesh)].faces;
        check_capacity(indices, capacity, 3 * faces.size(), needed, "indices");
        for (std::size_t f = 0; f < faces.size(); ++f)
            for (std::size_t k = 0; k < 3; ++k) indices[3 * f + k] = faces[f][k];
    });
}

}  // extern "C"

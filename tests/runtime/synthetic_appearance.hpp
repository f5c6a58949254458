// SPDX-License-Identifier: MIT
// A tiny appearance model for the runtime tests (no ../shared needed): one triangle of upper
// body skinned to mPelvis, one morph per hand pose, emote and blink param.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "slanim/appearance/avatar_definition.hpp"
#include "slanim/appearance/llm.hpp"
#include "slanim/appearance/visual_params.hpp"
#include "slanim/core/skeleton.hpp"

namespace slanim::test {

/// A one-quad upper body (skinned to mPelvis) with one morph per hand pose and emote param.
struct Synthetic {
    LlmMesh mesh;
    AvatarDefinition def;
    std::shared_ptr<const AppearanceModel> model;

    Synthetic() {
        mesh.kind = LlmFileKind::Base;
        mesh.has_weights = true;
        mesh.coords = {{0.f, 0.f, 1.f}, {0.1f, 0.f, 1.f}, {0.1f, 0.1f, 1.f}};
        mesh.normals.assign(3, Vec3{0.f, 0.f, 1.f});
        mesh.binormals.assign(3, Vec3{1.f, 0.f, 0.f});
        mesh.texcoords.assign(3, Vec2{});
        mesh.weights.assign(3, 1.f);  // entry 1 = mPelvis (entry 0 is mRoot)
        mesh.faces = {{0, 1, 2}};
        mesh.skin_joints = {"mPelvis"};
        int id = 1000;
        auto add = [&](const std::string& name, float def_w = 0.f) {
            LlmMorph m;
            m.name = name;
            m.vertices = {static_cast<std::uint32_t>(id % 3)};
            m.coords = {{0.f, 0.f, 0.01f}};
            m.normals = {{0.f, 0.f, 0.f}};
            m.binormals = {{0.f, 0.f, 0.f}};
            m.texcoords = {{0.f, 0.f}};
            mesh.morphs.push_back(m);
            VisualParamDef p;
            p.id = id++;
            p.name = name;
            p.kind = VisualParamKind::Morph;
            p.group = VisualParamGroup::Animatable;
            p.default_weight = def_w;
            p.mesh_type = "upperBodyMesh";
            def.params.push_back(p);
        };
        for (int i = 1; i < static_cast<int>(kNumHandPoses); ++i) add(hand_pose_param_name(i));
        add("Express_Closed_Mouth", 1.f);
        add("express_smile");
        add("express_frown");
        add("Blink_Left");
        add("Blink_Right");
        const AppearanceMeshInput in{"upperBodyMesh", &mesh};
        auto built = AppearanceModel::build(def, std::span(&in, 1), Skeleton::default_skeleton());
        if (!built) ADD_FAILURE() << built.error().describe();
        else model = *built;
    }
    [[nodiscard]] float w(const AppearanceState& s, std::string_view name) const {
        return s.weight(model->find(name));
    }
};

}  // namespace slanim::test

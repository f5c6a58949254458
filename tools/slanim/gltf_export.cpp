// SPDX-License-Identifier: MIT
#include "gltf_export.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <ostream>

#include "appearance_loading.hpp"
#include "loading.hpp"
#include "slanim/core/skinning.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/runtime/appearance.hpp"
#include "slanim/runtime/appearance_feature.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim::cli {

gltf::SkinnedMesh GltfSkinnedMesh::view() const {
    return {mesh.name, mesh.positions, mesh.normals, mesh.texcoords, mesh.faces, joints, weights};
}

Result<std::vector<GltfSkinnedMesh>> gltf_skinned_meshes(const Appearance& appearance,
                                                         const SkinnedMeshSnapshot& snapshot,
                                                         const gltf::JointMap& map) {
    std::vector<GltfSkinnedMesh> out;
    const auto skinned = appearance.skinned();
    const auto meshes = snapshot.meshes();
    if (skinned.size() != meshes.size()) return Error{"glTF: the mesh snapshot does not belong to the appearance"};
    for (std::size_t k = 0; k < skinned.size(); ++k) {
        const SkinnedMesh& sm = skinned[k];
        const AppearanceMesh& src = appearance.model().meshes()[static_cast<std::size_t>(sm.mesh)];
        const auto& entries = sm.joints.entries;
        if (entries.empty()) return Error{fmt::format("glTF: mesh {}: no skin joints", src.type)};
        std::vector<int> node_of_entry(entries.size());
        for (std::size_t e = 0; e < entries.size(); ++e) {
            const int j = entries[e].joint;
            node_of_entry[e] = j < 0 ? 0 : map.joint(j);
            if (node_of_entry[e] < 0)
                return Error{fmt::format("glTF: mesh {}: skin joint {} has no glTF joint", src.type,
                                         sm.joints.names[e])};
        }
        GltfSkinnedMesh g;
        g.mesh = meshes[k];
        for (Vec3& n : g.mesh.normals) n = gltf::unit_normal(n);
        const std::size_t nv = g.mesh.positions.size();
        g.joints.assign(nv, {0, 0, 0, 0});
        g.weights.assign(nv, {0.f, 0.f, 0.f, 0.f});
        const std::size_t last = entries.size() - 1;
        for (std::size_t v = 0; v < nv; ++v) {
            if (src.weights.empty()) {  // rigid: the one joint
                g.joints[v][0] = static_cast<std::uint16_t>(node_of_entry[0]);
                g.weights[v][0] = 1.f;
                continue;
            }
            const float w = src.weights[v];
            if (!std::isfinite(w) || w < 0.f)
                return Error{fmt::format("glTF: mesh {}: vertex {}: skin weight {} is not a finite value ≥ 0",
                                         src.type, v, w)};
            const std::size_t i = std::min(static_cast<std::size_t>(std::floor(w)), last);
            const double f = i == last ? 0.0 : static_cast<double>(w) - std::floor(static_cast<double>(w));
            const int a = node_of_entry[i], b = node_of_entry[std::min(i + 1, last)];
            double wa = 1.0 - f, wb = f;
            if (a == b) wa += wb, wb = 0.0;
            const double sum = wa + wb;
            wa /= sum;
            wb /= sum;
            // The larger weight first; a zero weight leaves its slot unused (joint 0, weight 0).
            if (wb > wa) {
                g.joints[v][0] = static_cast<std::uint16_t>(b);
                g.weights[v][0] = static_cast<float>(wb);
                g.joints[v][1] = static_cast<std::uint16_t>(a);
                g.weights[v][1] = static_cast<float>(wa);
            } else {
                g.joints[v][0] = static_cast<std::uint16_t>(a);
                g.weights[v][0] = static_cast<float>(wa);
                if (wb > 0.0) {
                    g.joints[v][1] = static_cast<std::uint16_t>(b);
                    g.weights[v][1] = static_cast<float>(wb);
                }
            }
            if (g.weights[v][1] == 0.f) g.joints[v][1] = 0;
        }
        out.push_back(std::move(g));
    }
    return out;
}

namespace {

/// What a character folder adds to the export: the rest local pose of the avatar shaped by the
/// viewer's default shape and the wearables, and (unless --no-mesh) its meshes skinned to it.
struct CharacterParts {
    std::vector<Vec3> rest_positions, rest_scales;
    std::vector<Quat> rest_rotations;
    std::optional<LoadedAppearance> loaded;  // outlives `meshes` (their faces point into its model)
    std::vector<GltfSkinnedMesh> meshes;
};

/// Loads the character parts of `o` (o.character not empty) on `skel`; notes go to `err`.
/// Errors: the message the command prints.
Result<bool> load_character_parts(std::ostream& err, const GltfConvertOptions& o,
                                  const std::shared_ptr<const Skeleton>& skel, CharacterParts& out) {
    // The viewer's default shape (and the wearables): the rest pose is the shaped avatar's,
    // as in every other command; the mesh only without --no-mesh.
    auto loaded_appearance = load_cli_appearance(o.character, skel, o.wearables, /*skin=*/!o.no_mesh);
    if (!loaded_appearance) return Error{loaded_appearance.error().describe()};
    out.loaded = std::move(*loaded_appearance);
    const LoadedAppearance& la = *out.loaded;
    for (const std::string& note : la.notes) err << "slanim convert: --wearable " << note << "\n";
    // The rest pose of the shaped avatar: one world step with no motion runs the morph
    // (visual and skeletal params) and skin phases.
    World world;
    const Entity avatar = world.create_avatar(skel);
    if (!AppearanceFeature::of(world).set(avatar, la.appearance))
        return Error{fmt::format("the appearance of {} does not fit its skeleton", o.character)};
    world.step(0.f);
    const LocalPose& lp = world.local_pose(avatar);
    out.rest_positions.assign(lp.positions.begin(), lp.positions.end());
    out.rest_rotations.assign(lp.rotations.begin(), lp.rotations.end());
    out.rest_scales.assign(lp.scales.begin(), lp.scales.end());
    if (o.no_mesh) return true;
    SkinnedMeshSnapshot snapshot(*la.appearance);
    snapshot.capture(*la.appearance);
    auto gm = gltf_skinned_meshes(*la.appearance, snapshot, gltf::make_joint_map(*skel));
    if (!gm) return Error{fmt::format("{}: {}", o.character, gm.error().message)};
    out.meshes = std::move(*gm);
    return true;
}

}  // namespace

int convert_anim_to_gltf(std::ostream& err, const GltfConvertOptions& o) {
    const auto usage = [&](const std::string& msg) {
        err << "slanim convert: " << msg << "\n";
        return 2;
    };
    const auto fail = [&](const std::string& msg) {
        err << "slanim convert: " << msg << "\n";
        return 1;
    };
    const auto format = mesh_format_for_path(o.output);
    if (!format || *format == MeshFormat::Obj)
        return usage(fmt::format("{}: a glTF output must end in .glb or .gltf", o.output));
    const auto in_format = mesh_format_for_path(o.input);
    if (in_format && *in_format != MeshFormat::Obj)
        return usage(fmt::format("{}: glTF → glTF is not a conversion; give an .anim input", o.input));
    if (!o.wearables.empty() && o.character.empty())
        return usage("--wearable needs --character DIR (the wearables shape the avatar mesh of that folder)");
    if (!o.wearables.empty() && o.no_mesh)
        return usage("--wearable shapes the avatar mesh: it cannot be combined with --no-mesh");

    auto skel = pick_skeleton(o.character);
    if (!skel) return fail(skel.error().describe());
    auto loaded = load(o.input, **skel);
    if (!loaded) return fail(loaded.error().message);

    CharacterParts character;
    if (!o.no_mesh && o.character.empty()) {
        err << "slanim convert: no --character DIR: writing the skeleton and the animation only (the "
               "avatar mesh comes from a character folder; --no-mesh silences this note)\n";
    } else if (o.no_mesh && !o.character.empty() && !character_has_shape(o.character)) {
        err << "slanim convert: note: " << default_shape_note(o.character) << "\n";
    } else if (!o.character.empty()) {
        if (auto r = load_character_parts(err, o, *skel, character); !r) return fail(r.error().message);
    }
    std::vector<std::uint8_t> source;
    if (std::filesystem::path(o.input).extension() == ".anim") {
        auto b = read_file_bytes(o.input);
        if (!b) return fail(b.error().message);
        source = std::move(*b);
    }
    // The export without a character folder (shared with slanim_anim_to_glb), then the
    // character's shaped rest pose and meshes.
    const std::string file_name = std::filesystem::path(o.input).filename().string();
    gltf::AnimationExport ex = gltf::convert_export(**skel, loaded->motion, file_name, source);
    if (character.loaded) {
        ex.rest_positions = character.rest_positions;
        ex.rest_rotations = character.rest_rotations;
        ex.rest_scales = character.rest_scales;
    }
    std::vector<gltf::SkinnedMesh> meshes;
    for (const GltfSkinnedMesh& m : character.meshes) meshes.push_back(m.view());
    ex.meshes = meshes;
    ex.comment = gltf::convert_comment(file_name, o.character, !meshes.empty());
    gltf::ExportReport rep;
    auto bytes = gltf::encode_animation(ex, *format == MeshFormat::Glb ? gltf::FileFormat::Glb : gltf::FileFormat::Gltf, &rep);
    if (!bytes) return fail(fmt::format("{}: {}", o.input, bytes.error().message));
    for (const std::string& j : rep.skipped_joints)
        err << "slanim convert: " << o.input << ": warning: joint " << j
            << " is not written (not in the skeleton, a HUD attachment point, or repeated)\n";
    auto w = write_file_atomic(o.output, *bytes);
    if (!w) return fail(w.error().message);
    err << fmt::format("slanim convert: {}: {} joints, {} mesh{}, {} rotation and {} translation channels\n", o.output,
                       rep.joints, rep.meshes, rep.meshes == 1 ? "" : "es", rep.rotation_channels,
                       rep.translation_channels);
    return 0;
}

}  // namespace slanim::cli

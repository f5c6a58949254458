// SPDX-License-Identifier: MIT
// The avatar appearance the `slanim` commands share (`play`, `view`, `render`): the run-time
// AppearanceModel of a viewer character folder (avatar_lad.xml + the base `.llm` meshes + the
// skeleton of the same folder), one Appearance component, and the LLWearable files applied to it.
// See docs/mesh-output.md.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/appearance/visual_params.hpp"
#include "slanim/appearance/wearable.hpp"
#include "slanim/runtime/bind_pose_cache.hpp"

namespace slanim {
class Appearance;  // slanim/runtime/appearance.hpp
}  // namespace slanim

namespace slanim::cli {

/// What the commands attach to their avatar.
struct LoadedAppearance {
    std::shared_ptr<const AppearanceModel> model;  ///< shared, immutable
    std::shared_ptr<Appearance> appearance;        ///< the avatar's component (AppearanceFeature::set)
    /// The body-part wearables applied to `appearance`, in order (for make()).
    std::vector<Wearable> applied;
    bool skin = true;  ///< AppearanceOptions::skin of the components
    /// AppearanceOptions::bind_poses of the components make() builds: set it to one cache for a
    /// crowd so that avatars whose meshes morph alike skin from one copy. Null: none shared.
    std::shared_ptr<BindPoseCache> bind_poses;
    /// One line per wearable, in application order, for standard error: "FILE: shape \"Name\":
    /// 190 params applied" (+ unknown ids / ids of other wearable types), or "FILE: shirt
    /// \"Name\": not applied (only shape, skin, hair and eyes wearables change the body)".
    std::vector<std::string> notes;

    /// A fresh component like `appearance` (weights reset, the same wearables applied again):
    /// for a world that restarts from t = 0. Allocates.
    [[nodiscard]] Result<std::shared_ptr<Appearance>> make() const;
};

/// True for the wearable types whose params the body applies (`LLWearable::writeToAvatar` of a
/// body part): shape, skin, hair and eyes. Clothing (shirt, pants, …, skirt, alpha, tattoo,
/// physics, universal) is layered textures and clothing morphs, not implemented.
bool wearable_changes_body(WearableType type);

/// The viewer's default shape: an avatar always has its visual params, each at avatar_lad.xml's
/// `value_default` until a shape (wearable) sets it (LLVisualParam::setInfo sets the default
/// weight; LLVOAvatar::updateVisualParams applies the skeletal distortions at those weights).
/// So every command given `--character DIR` shapes the skeleton with those defaults, wearables on
/// top: play, view, render, crowd, convert to glTF and the mesh output agree. True when
/// `character_dir` is given and holds avatar_lad.xml (a folder with the skeleton only gives
/// the skeleton unshaped, with default_shape_note). Thread-safe.
bool character_has_shape(const std::string& character_dir);

/// The stderr line for a character folder without avatar_lad.xml: its skeleton is not shaped.
std::string default_shape_note(const std::string& character_dir);

/// Builds the appearance of `skeleton` (which must come from the same `character_dir`, see
/// pick_skeleton) from `character_dir`: load_appearance_model (avatar_lad.xml and every lod-0
/// mesh it lists), then Appearance::create(model, {.skin = skin}) (`skin` false: morph only, no
/// skinned vertices), then each file of `wearables` in
/// order: load_wearable and, for a body-part wearable (wearable_changes_body), apply_wearable —
/// so a later shape replaces an earlier one's params; other types are reported in `notes`, not
/// applied. The weights reach the meshes in the world's next `morph` phase.
///
/// Errors (the message names the file and what was expected): `character_dir` empty ("no
/// character folder: the avatar mesh comes from --character DIR"), a missing or malformed
/// avatar_lad.xml or `.llm` (byte offset), a model that does not fit the skeleton, a missing or
/// malformed wearable (line number).
Result<LoadedAppearance> load_cli_appearance(const std::string& character_dir,
                                             std::shared_ptr<const Skeleton> skeleton,
                                             std::span<const std::string> wearables, bool skin = true);

}  // namespace slanim::cli

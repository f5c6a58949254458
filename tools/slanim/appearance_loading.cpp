// SPDX-License-Identifier: MIT
#include "appearance_loading.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

#include "slanim/runtime/appearance.hpp"

namespace slanim::cli {

bool wearable_changes_body(WearableType type) {
    return type == WearableType::Shape || type == WearableType::Skin || type == WearableType::Hair ||
           type == WearableType::Eyes;
}

bool character_has_shape(const std::string& character_dir) {
    std::error_code ec;
    return !character_dir.empty() && std::filesystem::is_regular_file(std::filesystem::path(character_dir) / "avatar_lad.xml", ec);
}

std::string default_shape_note(const std::string& character_dir) {
    return fmt::format("{} has no avatar_lad.xml: the skeleton is not shaped (the viewer's default shape is "
                       "avatar_lad.xml's default visual params)", character_dir);
}

Result<std::shared_ptr<Appearance>> LoadedAppearance::make() const {
    if (!model) return Error{"no appearance model"};
    AppearanceOptions options;
    options.skin = skin;
    options.bind_poses = bind_poses;
    auto a = Appearance::create(model, options);
    if (!a) return a.error();
    for (const Wearable& w : applied) (*a)->state().apply_wearable(w);
    return std::shared_ptr<Appearance>(std::move(*a));
}

Result<LoadedAppearance> load_cli_appearance(const std::string& character_dir,
                                             std::shared_ptr<const Skeleton> skeleton,
                                             std::span<const std::string> wearables, bool skin) {
    if (character_dir.empty())
        return Error{"no character folder: the avatar mesh, its visual params and the wearables' "
                     "params come from --character DIR (avatar_lad.xml and the .llm meshes)"};
    if (!skeleton) return Error{"no skeleton for the appearance"};
    auto model = load_appearance_model(character_dir, std::move(skeleton));
    if (!model) return model.error();
    LoadedAppearance out;
    out.model = *model;
    out.skin = skin;
    auto appearance = out.make();
    if (!appearance) {
        Error e = appearance.error();
        e.message = fmt::format("{}: {}", character_dir, e.message);
        return e;
    }
    out.appearance = std::move(*appearance);
    for (const std::string& path : wearables) {
        auto w = load_wearable(path);
        if (!w) return w.error();  // names the file and the line
        const char* type = wearable_type_name(w->type);
        if (!wearable_changes_body(w->type)) {
            out.notes.push_back(fmt::format(
                "{}: {} \"{}\": not applied (only shape, skin, hair and eyes wearables change the "
                "body; clothing layers are not implemented)",
                path, type, w->name));
            continue;
        }
        const WearableApplyReport r = out.appearance->state().apply_wearable(*w);
        out.applied.push_back(std::move(*w));
        std::string line = fmt::format("{}: {} \"{}\": {} params applied", path, type, out.applied.back().name, r.applied);
        if (!r.unknown_ids.empty())
            line += fmt::format(", {} unknown ids ignored (first {})", r.unknown_ids.size(), r.unknown_ids.front());
        if (!r.other_ids.empty())
            line += fmt::format(", {} ids of other wearable types ignored (first {})", r.other_ids.size(),
                                r.other_ids.front());
        if (out.applied.back().type == WearableType::Shape)
            line += out.appearance->state().sex() == Sex::Male ? " (male)" : " (female)";
        out.notes.push_back(std::move(line));
    }
    return out;
}

}  // namespace slanim::cli

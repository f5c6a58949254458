// SPDX-License-Identifier: MIT
// An imported glTF animation (import.hpp) as the .anim bytes `slanim convert IN.glb -o OUT.anim`
// writes: shared by the command and slanim_gltf_to_anim (slanim/slanim_gltf.h, the page).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/gltf/import.hpp"

namespace slanim::gltf {

struct AnimBytes {
    std::vector<std::uint8_t> bytes;  ///< the .anim file
    /// The file is the .anim the glTF was exported from (ImportResult::original_anim), unchanged.
    bool original = false;
    /// Set for an original .anim that would not pass an upload (it is returned all the same):
    /// "the source .anim (written unchanged) would not pass an upload: RULE …".
    std::optional<std::string> warning;
};

/// The .anim of `imported` (moved from): its original .anim when it carries one, else its
/// motion encoded and written; then checked against the upload rules (parse_anim with
/// `skeleton`, unknown joints refused). Errors (messages without the file name): the motion
/// cannot be encoded, or an encoded result would not pass an upload ("the result would not pass
/// an upload: …"). Pure; thread-safe.
Result<AnimBytes> to_anim_bytes(ImportResult&& imported, const Skeleton& skeleton);

}  // namespace slanim::gltf

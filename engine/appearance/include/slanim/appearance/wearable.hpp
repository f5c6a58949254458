// SPDX-License-Identifier: MIT
// `LLWearable version 22` text assets (`LLWearable::importStream`): body parts (shape, skin,
// hair, eyes) and clothing, as stored in inventory. The parameters are visual param weights by
// id; applying them to an avatar is slanim/appearance/visual_params.hpp's job.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slanim/core/result.hpp"

namespace slanim {

/// The wearable definition version of the shipped avatar_lad.xml (`wearable_definition_version`,
/// the viewer's `LLWearable::sCurrentDefinitionVersion`). Newer files are rejected except 24.
inline constexpr int kWearableDefinitionVersion = 22;
/// Limits of `LLWearable::importStream`.
inline constexpr int kWearableMaxParameters = 1000;
inline constexpr int kWearableMaxTextures = 100;
/// `TEX_NUM_INDICES`: texture entry indices are 0 … 44.
inline constexpr int kWearableTextureIndices = 45;

/// The null UUID text.
inline constexpr std::string_view kNullUuid = "00000000-0000-0000-0000-000000000000";

/// `LLWearableType::EType` values of the `type` line.
enum class WearableType : std::uint8_t {
    Shape = 0, Skin = 1, Hair = 2, Eyes = 3, Shirt = 4, Pants = 5, Shoes = 6, Socks = 7,
    Jacket = 8, Gloves = 9, Undershirt = 10, Underpants = 11, Skirt = 12, Alpha = 13,
    Tattoo = 14, Physics = 15, Universal = 16,
};
/// "shape", "skin", … (the `wearable` attribute of avatar_lad.xml params); "invalid" otherwise.
const char* wearable_type_name(WearableType t);

/// The `permissions 0 { … }` block (`LLPermissions::importLegacyStream`).
struct WearablePermissions {
    std::uint32_t base_mask = 0, owner_mask = 0, group_mask = 0, everyone_mask = 0,
                  next_owner_mask = 0;
    /// UUID text as read (the null UUID when absent).
    std::string creator_id = std::string(kNullUuid), owner_id = std::string(kNullUuid),
                last_owner_id = std::string(kNullUuid), group_id = std::string(kNullUuid);
    bool group_owned = false;  ///< `group_owned 1` (written only when set)
    friend bool operator==(const WearablePermissions&, const WearablePermissions&) = default;
};

/// The `sale_info 0 { … }` block (`LLSaleInfo::importLegacyStream`).
struct WearableSaleInfo {
    std::string sale_type = "not";  ///< "not", "orig", "copy", "cntn"
    int sale_price = 10;
    friend bool operator==(const WearableSaleInfo&, const WearableSaleInfo&) = default;
};

/// One parsed wearable asset.
struct Wearable {
    int version = 22;
    std::string name;         ///< the second line
    std::string description;  ///< empty unless present
    WearablePermissions permissions;
    WearableSaleInfo sale_info;
    WearableType type = WearableType::Shape;
    /// `parameters N` lines: (visual param id, weight), file order.
    std::vector<std::pair<int, float>> params;
    /// `textures N` lines: (texture entry index, UUID text), file order.
    std::vector<std::pair<int, std::string>> textures;

    friend bool operator==(const Wearable&, const Wearable&) = default;
};

/// Parses wearable text like `LLWearable::importStream` (with `LLPermissions` and `LLSaleInfo`
/// `importLegacyStream`). Errors carry the 1-based line (Error::line, and "line N: " in the
/// message) and what was expected. Tolerances, as in the viewer:
///  * LF or CRLF line ends (every CR before the LF is dropped: a name or description never ends
///    in a CR, so that writing and reading again gives the same wearable); blank lines before a block header,
///    parameter or texture line are skipped; blanks and tabs separate words anywhere;
///  * the second line is the name and the third the description, each verbatim (may be empty,
///    never skipped);
///  * inside `permissions` and `sale_info` blocks unknown keywords are ignored, the legacy
///    `creator_mask` sets base_mask, the legacy sale `perm_mask` sets next_owner_mask (adding
///    transfer when copy is missing); an unknown sale type reads as "not"; a negative price as 0;
///  * text after the parameter weight or texture UUID, and after the textures block, is ignored.
/// Rejected (the viewer's FAILURE results): a missing or newer header version (other than 24),
/// missing blocks, permissions/sale_info versions other than 0, a type outside 0…16, more than
/// 1000 parameters or 100 textures, a texture index ≥ 45, an invalid UUID, an early end. Also
/// rejected, where the viewer would keep garbage: negative counts or texture indices,
/// masks that are not hexadecimal, ids that are not UUIDs, weights that are not finite numbers.
Result<Wearable> parse_wearable(std::string_view text);
/// Reads and parses a file; errors are prefixed with the path.
Result<Wearable> load_wearable(const std::filesystem::path& path);
/// Writes the viewer's text form (`LLWearable::exportStream`): tab-indented permissions and
/// sale_info blocks, masks as 8 hex digits, weights in the viewer's terse form ("%.2f" without
/// trailing zeros or a leading zero: ".5", "-2.3", "1") when that reads back to the same float,
/// else the shortest form that does. parse_wearable(write_wearable(w)) == w for any parsed w.
/// Precondition: name and description contain no line break.
std::string write_wearable(const Wearable& w);

}  // namespace slanim

// SPDX-License-Identifier: MIT
// The avatar definition of avatar_lad.xml (`LLAvatarAppearance::loadAvatar`,
// `LLAvatarXmlInfo::parseXml*`, `LLVisualParamInfo::parseXml` and the param subclasses; spec §6).
//
// AvatarDefinition is the editable raw model: every visual param with its kind-specific data,
// every `<mesh>` entry with its LODs, and the attachment points. The immutable run-time model
// that binds it to loaded meshes and a skeleton is slanim/appearance/visual_params.hpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/core/math.hpp"
#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"

namespace slanim {

/// `EViewerVisualParamGroup` (spec §6.1).
enum class VisualParamGroup : std::uint8_t {
    Tweakable = 0,
    Animatable = 1,
    TweakableNoTransmit = 2,
    TransmitNotTweakable = 3,
};

/// `ESex` bits: a param whose sex does not match the avatar's applies its default weight.
enum class Sex : std::uint8_t { Female = 1, Male = 2, Both = 3 };

/// What a `<param>` does: its single `param_*` child element.
enum class VisualParamKind : std::uint8_t {
    Morph,     ///< `<param_morph>` inside a `<mesh>`: mesh morph target (+ volume morphs)
    Skeleton,  ///< `<param_skeleton>` inside `<skeleton>`: bone scale/offset deformation
    Driver,    ///< `<param_driver>`: drives other params through trapezoid ramps
    Color,     ///< `<param_color>` (texture layers; weights kept, nothing deformed)
    Alpha,     ///< `<param_alpha>` (texture layers; weights kept, nothing deformed)
};

/// "morph", "skeleton", "driver", "color" or "alpha": the kind as avatar_lad.xml's element
/// names it (`<param_morph>`, ...), for messages and reports.
const char* visual_param_kind_name(VisualParamKind kind);

/// `<volume_morph name scale pos>`: moves and scales a collision volume with the morph.
struct VolumeMorphDef {
    std::string volume;  ///< collision volume name, e.g. "BELLY"
    Vec3 scale;          ///< added to the volume's scale per unit weight change
    Vec3 position;       ///< added to the volume's local position per unit weight change, metres
    friend bool operator==(const VolumeMorphDef&, const VolumeMorphDef&) = default;
};

/// `<bone name scale [offset]>` of a `<param_skeleton>` (`LLPolySkeletalDistortionInfo`).
struct BoneDeformDef {
    std::string bone;    ///< bone name, e.g. "mNeck"
    Vec3 scale;          ///< local scale delta per unit weight
    Vec3 offset;         ///< local position delta per unit weight, metres
    bool has_offset = false;
    friend bool operator==(const BoneDeformDef&, const BoneDeformDef&) = default;
};

/// `<driven id min1 max1 max2 min2>` of a `<param_driver>` (`LLDrivenEntryInfo`), with the
/// defaults resolved against the driver's range (spec §6.3): min1 = driver min, max1 = max2 =
/// min2 = driver max when absent.
struct DrivenDef {
    int id = 0;
    float min1 = 0.f, max1 = 1.f, max2 = 1.f, min2 = 1.f;
    friend bool operator==(const DrivenDef&, const DrivenDef&) = default;
};

/// One `<param>` element.
struct VisualParamDef {
    int id = 0;
    std::string name;   ///< as written; look-ups are case-insensitive like the viewer's
    std::string label;  ///< `label`, else the name
    /// `group`; a value ≥ 4 is ignored like the viewer (stays Tweakable).
    VisualParamGroup group = VisualParamGroup::Tweakable;
    VisualParamKind kind = VisualParamKind::Morph;
    float min = 0.f;             ///< `value_min` (default 0)
    float max = 1.f;             ///< `value_max` (default 1)
    /// `value_default` (0 when absent), clamped into [min, max]. The viewer clamps only a given
    /// value_default; for the five shipped params without one whose range excludes 0
    /// (901–903, 914, 915: min 0.02) its info keeps 0 but the initial weight is clamped to
    /// 0.02 by setWeight, which is what this field holds.
    float default_weight = 0.f;
    Sex sex = Sex::Both;
    std::string wearable;    ///< "shape", "skin", "hair", "eyes", … (empty when absent)
    std::string edit_group;
    /// `shared="1"`: another `<param>` with the same id exists (a mesh's copy of a morph that
    /// lives on several meshes); the viewer chains them (`mNext`) and sets them together.
    bool shared = false;
    bool clothing_morph = false;  ///< `clothing_morph="true"`

    // Morph params.
    std::string mesh_type;  ///< the enclosing `<mesh type>`, e.g. "headMesh"
    std::string morph_name; ///< the `.llm` morph it binds to (the param name; see §6.2 lookup)
    std::vector<VolumeMorphDef> volume_morphs;
    // Skeleton params.
    std::vector<BoneDeformDef> bones;
    // Driver params: file order (the viewer's list is reversed, `push_front`; that matters only
    // when an id repeats).
    std::vector<DrivenDef> driven;

    friend bool operator==(const VisualParamDef&, const VisualParamDef&) = default;
};

/// One `<mesh>` element (`LLAvatarXmlInfo::LLAvatarMeshInfo`).
struct MeshDef {
    std::string type;       ///< e.g. "upperBodyMesh"
    int lod = 0;            ///< 0 = base mesh
    std::string file_name;  ///< e.g. "avatar_upper_body.llm"
    int min_pixel_width = 0;  ///< `min_pixel_width` (0 when absent)
    /// The viewer's LOD threshold (`mMinPixelArea`): `min_pixel_area` when given, else
    /// min_pixel_width², else 0.1.
    float min_pixel_area = 0.1f;
    /// Base file of an LOD (empty for base meshes). It decides the `.llm` layout: an entry with a
    /// reference is an LOD file (LlmFileKind::Lod); one without is a base file, whatever its
    /// lod number (the shipped eyes' lod 1, avatar_eye_1.llm, is a base file).
    std::string reference;
    friend bool operator==(const MeshDef&, const MeshDef&) = default;
};

/// The parsed avatar_lad.xml.
struct AvatarDefinition {
    int version_major = 0, version_minor = 0;  ///< `linden_avatar version`
    int wearable_definition_version = 0;       ///< 22 in the shipped file
    std::string skeleton_file;                 ///< `<skeleton file_name>`
    std::vector<MeshDef> meshes;               ///< file order
    /// Every param in file order (skeleton params, mesh morphs, layer-set colour/alpha params,
    /// driver params). Shared params appear once per occurrence.
    std::vector<VisualParamDef> params;
    /// `<attachment_point>` elements (kind AttachmentPoint), sorted by id.
    std::vector<JointDesc> attachment_points;
    /// One note per element the reader skipped, "line N: <tag> ignored: why" (unknown elements,
    /// a `<param>` of an unexpected kind under `<driver_parameters>` or a layer, a `<bone>`
    /// without name or scale, a `<volume_morph>` without name). The debug log of the viewer's
    /// LL_WARNS/LL_INFOS for the same cases.
    std::vector<std::string> ignored;

    /// First param with this id, or nullptr.
    [[nodiscard]] const VisualParamDef* find(int id) const;
    /// First param with this name, compared case-insensitively, or nullptr.
    [[nodiscard]] const VisualParamDef* find(std::string_view name) const;

    friend bool operator==(const AvatarDefinition&, const AvatarDefinition&) = default;
};

/// The `<mesh type>` names and their LOD counts (`LLAvatarAppearanceDictionary` mesh entries).
struct AvatarMeshType {
    std::string_view type;
    int lods;
};
inline constexpr AvatarMeshType kAvatarMeshTypes[] = {
    {"hairMesh", 6},        {"headMesh", 5},        {"eyelashMesh", 1},      {"upperBodyMesh", 5},
    {"lowerBodyMesh", 5},   {"eyeBallLeftMesh", 2}, {"eyeBallRightMesh", 2}, {"skirtMesh", 5},
};

/// Parses avatar_lad.xml text (`LLAvatarXmlInfo::parseXmlSkeletonNode/MeshNodes/ColorNodes/
/// LayerNodes/DriverNodes`). Read: `<skeleton>` params and attachment points, `<mesh>` entries
/// and their morph params, the params of `<global_color>` and `<layer_set>`/`<layer>`, and
/// `<driver_parameters>`. `<morph_masks>`, layer contents other than params and attributes the
/// model has no field for are skipped silently (known, not modelled); unknown elements are
/// noted in AvatarDefinition::ignored, never an error. Errors, with the line (Error::line):
/// malformed XML; a root other than `<linden_avatar version="1.0|2.0">`; a `<param>` without
/// id or name, or whose numbers do not parse, with value_min > value_max or an invalid sex; a
/// `<skeleton>` param without `<param_skeleton>` or a `<mesh>` param without `<param_morph>`;
/// a `<mesh>` of unknown type, lod out of range, missing file_name, or whose reference names
/// no earlier mesh; a `<driven>` without id or naming no param; a driver with a negative id.
Result<AvatarDefinition> parse_avatar_definition(std::string_view xml_text);
/// Reads `character_dir/avatar_lad.xml`; errors are prefixed with the path.
Result<AvatarDefinition> load_avatar_definition(const std::filesystem::path& character_dir);

}  // namespace slanim

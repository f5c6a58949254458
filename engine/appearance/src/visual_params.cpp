// SPDX-License-Identifier: MIT
// Visual params at run time: LLVisualParam / LLDriverParam / LLPolyMorphTarget /
// LLPolySkeletalDistortion behaviour (spec §6.1–§6.3).
#include "slanim/appearance/visual_params.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "animated_morph_kernel.hpp"
#include "slanim/core/isa.hpp"

#if defined(SLANIM_APPEARANCE_X86)
#include <emmintrin.h>
#endif

namespace slanim {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

/// `F_APPROXIMATELY_ZERO` of the binormal guard in `LLPolyMorphTarget::apply`.
constexpr float kApproximatelyZero = 0.00001f;

MorphTarget to_target(const LlmMorph& m) {
    MorphTarget t;
    t.name = m.name;
    t.vertices = m.vertices;
    t.coords = m.coords;
    t.normals = m.normals;
    t.binormals = m.binormals;
    t.texcoords = m.texcoords;
    return t;
}

// The physics clones of `LLPolyMeshSharedData::loadMesh` (clone_morph_param_*): the copy keeps
// the source's vertex indices and texture-coordinate deltas.
MorphTarget clone_duplicate(const MorphTarget& src, std::string name) {
    MorphTarget t = src;
    t.name = std::move(name);
    return t;
}
MorphTarget clone_direction(const MorphTarget& src, Vec3 direction, std::string name) {
    MorphTarget t = src;
    t.name = std::move(name);
    std::fill(t.coords.begin(), t.coords.end(), direction);
    std::fill(t.normals.begin(), t.normals.end(), Vec3{});
    std::fill(t.binormals.begin(), t.binormals.end(), Vec3{});
    return t;
}
MorphTarget clone_cleavage(const MorphTarget& src, float scale, std::string name) {
    MorphTarget t = src;
    t.name = std::move(name);
    const Vec3 sc{scale, scale, scale};
    const Vec3 nsc{scale, -scale, scale};  // mirrors y where the source pushes towards −y
    for (std::size_t v = 0; v < t.coords.size(); ++v) {
        const Vec3 s = src.coords[v].y < 0.f ? nsc : sc;
        t.coords[v] = scaled(src.coords[v], s);
        t.normals[v] = scaled(src.normals[v], s);
        t.binormals[v] = scaled(src.binormals[v], s);
    }
    return t;
}

void sanitize_binormals(MorphTarget& t) {
    for (Vec3& b : t.binormals)
        if (!is_finite(b) || dot(b, b) <= kApproximatelyZero) b = Vec3{1.f, 0.f, 0.f};
}

Result<AppearanceMesh> make_mesh(const std::string& type, const LlmMesh& m) {
    if (m.kind != LlmFileKind::Base)
        return Error{fmt::format("mesh type '{}': an LOD mesh was given where a base mesh is needed",
                                 type)};
    const std::size_t n = m.coords.size();
    if (m.normals.size() != n || m.binormals.size() != n || m.texcoords.size() != n ||
        (m.has_weights && m.weights.size() != n))
        return Error{fmt::format("mesh type '{}': per-vertex arrays of different lengths", type)};
    AppearanceMesh out;
    out.type = type;
    out.coords = m.coords;
    out.normals = m.normals;
    out.binormals = m.binormals;
    out.texcoords = m.texcoords;
    if (m.has_weights) out.weights = m.weights;
    out.faces = m.faces;
    out.skin_joints = m.skin_joints;
    for (const LlmMorph& lm : m.morphs) {
        const std::size_t k = lm.vertices.size();
        if (lm.coords.size() != k || lm.normals.size() != k || lm.binormals.size() != k ||
            lm.texcoords.size() != k)
            return Error{fmt::format("mesh type '{}', morph '{}': arrays of different lengths",
                                     type, lm.name)};
        for (std::size_t i = 0; i < k; ++i)
            if (lm.vertices[i] >= n)
                return Error{fmt::format(
                    "mesh type '{}', morph '{}': entry {} names vertex {} of a {}-vertex mesh",
                    type, lm.name, i, lm.vertices[i], n)};
        out.morphs.push_back(to_target(lm));
    }
    // Physics clones, in the order the viewer creates them.
    const std::size_t num_file_morphs = out.morphs.size();
    for (std::size_t i = 0; i < num_file_morphs; ++i) {
        const MorphTarget src = out.morphs[i];
        if (src.name == "Breast_Female_Cleavage") {
            out.morphs.push_back(clone_cleavage(src, 0.75f, "Breast_Physics_LeftRight_Driven"));
            out.morphs.push_back(clone_duplicate(src, "Breast_Physics_InOut_Driven"));
        }
        if (src.name == "Breast_Gravity")
            out.morphs.push_back(clone_duplicate(src, "Breast_Physics_UpDown_Driven"));
        if (src.name == "Big_Belly_Torso")
            out.morphs.push_back(
                clone_direction(src, {0.f, 0.f, 0.05f}, "Belly_Physics_Torso_UpDown_Driven"));
        if (src.name == "Big_Belly_Legs")
            out.morphs.push_back(
                clone_direction(src, {0.f, 0.f, 0.05f}, "Belly_Physics_Legs_UpDown_Driven"));
        if (src.name == "skirt_belly")
            out.morphs.push_back(
                clone_direction(src, {0.f, 0.f, 0.05f}, "Belly_Physics_Skirt_UpDown_Driven"));
        if (src.name == "Small_Butt") {
            out.morphs.push_back(
                clone_direction(src, {0.f, 0.f, 0.05f}, "Butt_Physics_UpDown_Driven"));
            out.morphs.push_back(
                clone_direction(src, {0.f, 0.03f, 0.f}, "Butt_Physics_LeftRight_Driven"));
        }
    }
    for (MorphTarget& t : out.morphs) sanitize_binormals(t);
    return out;
}

/// Sets a weight with `LLVisualParam::setWeight` clamping and `LLDriverParam::setWeight`
/// propagation (non-animating): weights[p] and, for a driver, its driven params. Returns true
/// when some weight changed; `changed_params`, when given, records each param whose weight
/// changed (once).
bool set_weight_impl(const AppearanceModel& model, std::span<float> weights, ParamIndex p,
                     float w, int depth, detail::ChangedParams* changed_params = nullptr) {
    const AppearanceParam& info = model.param(p);
    const float v = std::clamp(w, info.min, info.max);
    bool changed = weights[p] != v;
    weights[p] = v;
    if (changed && changed_params) changed_params->add(p);
    if (info.kind != VisualParamKind::Driver || depth > model.num_params()) return changed;
    const auto driven = model.driven_bindings().subspan(info.driven_first, info.driven_count);
    for (const DrivenBinding& d : driven) {
        const AppearanceParam& dp = model.param(d.param);
        const float dw = driven_weight(d, v, info.min, info.max, dp.min, dp.max);
        changed |= set_weight_impl(model, weights, d.param, dw, depth + 1, changed_params);
    }
    return changed;
}

Vec3 normalized_or(Vec3 v, Vec3 fallback) {
    const float len2 = dot(v, v);
    if (!(len2 > 0.f) || !std::isfinite(len2)) return fallback;
    return v * (1.f / std::sqrt(len2));
}

/// One morph entry in the differential form of `LLPolyMorphTarget::apply` on one vertex's
/// buffers (c coords, sn/sb scaled normal/binormal accumulators, n/b normal/binormal, uv).
inline void apply_entry(const MorphTarget& t, std::size_t i, float d, float soft, Vec3& c, Vec3& sn,
                        Vec3& n, Vec3& sb, Vec3& b, Vec2& uv) {
    c += t.coords[i] * d;
    sn += t.normals[i] * soft;
    n = normalized_or(sn, n);
    sb += t.binormals[i] * soft;
    const Vec3 tangent = cross(sb, n);
    b = normalized_or(cross(n, tangent), b);
    uv = uv + t.texcoords[i] * d;
}

/// A non-animated morph, differentially: entries on an animated slot go to that slot's shape
/// (`shape`, marked dirty), the others to the mesh buffers.
void apply_morph(const MorphTarget& t, float d, MeshBuffers& mb, const AnimatedMorphSet& set,
                 AnimatedShape& shape) {
    using namespace animated_detail;
    const float soft = d * kNormalSoftenFactor;
    const std::size_t k = t.vertices.size();
    const bool layered = !set.empty();
    const std::size_t S = set.stride;
    for (std::size_t i = 0; i < k; ++i) {
        const std::uint32_t v = t.vertices[i];
        const std::int32_t slot = layered ? set.slot_of[v] : -1;
        if (slot < 0) {
            apply_entry(t, i, d, soft, mb.coords[v], mb.scaled_normals[v], mb.normals[v],
                        mb.scaled_binormals[v], mb.binormals[v], mb.texcoords[v]);
            continue;
        }
        float* p = shape.planes.data() + slot;
        const auto get = [&](std::size_t q) { return Vec3{p[q * S], p[(q + 1) * S], p[(q + 2) * S]}; };
        const auto put = [&](std::size_t q, Vec3 x) {
            p[q * S] = x.x;
            p[(q + 1) * S] = x.y;
            p[(q + 2) * S] = x.z;
        };
        Vec3 c = get(kCx), sn = get(kSnx), n = get(kNx), sb = get(kSbx), b = get(kBx);
        Vec2 uv{p[kU * S], p[kV * S]};
        apply_entry(t, i, d, soft, c, sn, n, sb, b, uv);
        put(kCx, c);
        put(kSnx, sn);
        put(kNx, n);
        put(kSbx, sb);
        put(kBx, b);
        p[kU * S] = uv.x;
        p[kV * S] = uv.y;
        shape.dirty = true;
    }
    ++mb.revision;
}

/// The animated layer of `mesh`: the morphs of the animated params bound to it.
void build_animated_set(const AppearanceModel& model, std::uint32_t mesh_index, AppearanceMesh& mesh) {
    AnimatedMorphSet& set = mesh.animated;
    set.slot_of.assign(mesh.num_vertices(), -1);
    for (ParamIndex p = 0; p < model.num_params(); ++p) {
        const AppearanceParam& info = model.param(p);
        if (!info.animated) continue;
        for (const MorphBinding& b : model.morph_bindings().subspan(info.morphs_first, info.morphs_count)) {
            if (b.mesh != mesh_index) continue;
            AnimatedMorph am;
            am.param = p;
            am.morph = b.morph;
            set.morphs.push_back(std::move(am));
            for (std::uint32_t v : mesh.morphs[b.morph].vertices) set.slot_of[v] = 0;
        }
    }
    if (set.morphs.empty()) {
        set = {};
        return;
    }
    for (std::size_t v = 0; v < set.slot_of.size(); ++v)
        if (set.slot_of[v] == 0) {
            set.slot_of[v] = static_cast<std::int32_t>(set.vertices.size());
            set.vertices.push_back(static_cast<std::uint32_t>(v));
        } else {
            set.slot_of[v] = -1;
        }
    set.stride = (set.vertices.size() + 15) / 16 * 16;
    const std::size_t S = set.stride;
    using namespace animated_detail;
    for (AnimatedMorph& am : set.morphs) {
        const MorphTarget& t = mesh.morphs[am.morph];
        am.deltas.assign(kDeltaPlanes * S, 0.f);
        float* d = am.deltas.data();
        for (std::size_t i = 0; i < t.vertices.size(); ++i) {
            const auto j = static_cast<std::size_t>(set.slot_of[t.vertices[i]]);
            // A vertex listed twice in one morph: its entries add up.
            const Vec3 dv[3] = {t.coords[i], t.normals[i], t.binormals[i]};
            for (std::size_t q = 0; q < 3; ++q) {
                d[(3 * q) * S + j] += dv[q].x;
                d[(3 * q + 1) * S + j] += dv[q].y;
                d[(3 * q + 2) * S + j] += dv[q].z;
            }
            d[kDu * S + j] += t.texcoords[i].x;
            d[kDv * S + j] += t.texcoords[i].y;
        }
    }
}

bool has_cycle(const AppearanceModel& model, ParamIndex p, std::vector<std::uint8_t>& mark) {
    if (mark[p] == 1) return true;
    if (mark[p] == 2) return false;
    mark[p] = 1;
    const AppearanceParam& info = model.param(p);
    for (const DrivenBinding& d : model.driven_bindings().subspan(info.driven_first, info.driven_count))
        if (has_cycle(model, d.param, mark)) return true;
    mark[p] = 2;
    return false;
}

}  // namespace

float driven_weight(const DrivenBinding& d, float x, float driver_min, float driver_max,
                    float driven_min, float driven_max) {
    if (x <= d.min1) {
        if (d.min1 == d.max1 && d.min1 <= driver_min) return driven_max;
        return driven_min;
    }
    if (x <= d.max1) {
        const float t = (x - d.min1) / (d.max1 - d.min1);
        return driven_min + t * (driven_max - driven_min);
    }
    if (x <= d.max2) return driven_max;
    if (x <= d.min2) {
        const float t = (x - d.max2) / (d.min2 - d.max2);
        return driven_max + t * (driven_min - driven_max);
    }
    return d.max2 >= driver_max ? driven_max : driven_min;
}

bool is_animated_morph_name(std::string_view name) {
    const std::string l = lower(name.substr(0, std::min<std::size_t>(name.size(), 8)));
    return l.starts_with("hands_") || l.starts_with("express_") || l.starts_with("blink_");
}

const MorphTarget* AppearanceMesh::find_morph(std::string_view name) const {
    for (const MorphTarget& m : morphs)
        if (m.name == name) return &m;
    return nullptr;
}

Result<std::shared_ptr<const AppearanceModel>> AppearanceModel::build(
    const AvatarDefinition& def, std::span<const AppearanceMeshInput> meshes,
    std::shared_ptr<const Skeleton> skeleton) {
    if (!skeleton) return Error{"appearance model: no skeleton"};
    std::shared_ptr<AppearanceModel> model(new AppearanceModel());
    AppearanceModel& m = *model;
    m.skeleton_ = skeleton;
    const Skeleton& skel = *skeleton;

    for (const AppearanceMeshInput& in : meshes) {
        if (!in.mesh) return Error{fmt::format("mesh type '{}': no mesh given", in.type)};
        if (m.find_mesh(in.type) >= 0)
            return Error{fmt::format("mesh type '{}' given twice", in.type)};
        auto mesh = make_mesh(in.type, *in.mesh);
        if (!mesh) return mesh.error();
        m.meshes_.push_back(std::move(*mesh));
    }

    // Gather every param by id (shared occurrences merged, unshared repeats replace).
    struct Pending {
        const VisualParamDef* info = nullptr;
        std::vector<MorphBinding> morphs;
        std::vector<VolumeBinding> volumes;
        std::vector<JointScaleBinding> scales;
        std::vector<JointOffsetBinding> offsets;
    };
    std::map<int, Pending> pending;
    std::vector<int> driver_ids;
    for (const VisualParamDef& p : def.params) {
        auto it = pending.find(p.id);
        if (it != pending.end() && !p.shared) {
            m.warnings_.push_back(fmt::format(
                "param {} '{}' repeats id {} without shared=\"1\": it replaces '{}'", p.id, p.name,
                p.id, it->second.info->name));
            pending.erase(it);
            it = pending.end();
        }
        if (it == pending.end()) {
            it = pending.emplace(p.id, Pending{}).first;
            it->second.info = &p;
            if (p.kind == VisualParamKind::Driver) {
                std::erase(driver_ids, p.id);
                driver_ids.push_back(p.id);
            }
        } else if (it->second.info->kind != p.kind) {
            return Error{fmt::format("param {} '{}': shared occurrences of different kinds ({}, {})",
                                     p.id, p.name, visual_param_kind_name(it->second.info->kind),
                                     visual_param_kind_name(p.kind))};
        }
        Pending& pe = it->second;
        if (p.kind == VisualParamKind::Morph) {
            const int mi = m.find_mesh(p.mesh_type);
            if (mi < 0)
                return Error{fmt::format("param {} '{}' lives on mesh type '{}', which was not given",
                                         p.id, p.name, p.mesh_type)};
            const AppearanceMesh& mesh = m.meshes_[mi];
            std::string name = p.morph_name.empty() ? p.name : p.morph_name;
            const MorphTarget* t = mesh.find_morph(name);
            if (!t) {
                const auto pos = name.find("_Driven");
                if (pos != std::string::npos && pos > 0) t = mesh.find_morph(name.substr(0, pos));
            }
            if (!t)
                return Error{fmt::format("param {} '{}': mesh type '{}' has no morph named '{}'",
                                         p.id, p.name, p.mesh_type, name)};
            pe.morphs.push_back({static_cast<std::uint32_t>(mi),
                                 static_cast<std::uint32_t>(t - mesh.morphs.data())});
            for (const VolumeMorphDef& vm : p.volume_morphs) {
                const int j = skel.find_collision_volume(vm.volume);
                if (j < 0) {
                    m.warnings_.push_back(fmt::format(
                        "param {} '{}': volume morph on unknown collision volume '{}' skipped", p.id,
                        p.name, vm.volume));
                    continue;
                }
                pe.volumes.push_back({j, vm.scale, vm.position});
            }
        } else if (p.kind == VisualParamKind::Skeleton) {
            auto put_scale = [&](int joint, Vec3 s) {
                for (auto& b : pe.scales)
                    if (b.joint == joint) { b.scale = s; return; }
                pe.scales.push_back({joint, s});
            };
            for (const BoneDeformDef& b : p.bones) {
                const int j = skel.find(b.bone);
                if (j < 0)
                    return Error{fmt::format("param {} '{}': bone '{}' is not in the skeleton", p.id,
                                             p.name, b.bone)};
                put_scale(j, b.scale);
                // Direct children that inherit scale: the collision volumes.
                for (int c = 0; c < skel.num_joints(); ++c)
                    if (skel.parent(c) == j && skel.kind(c) == JointKind::CollisionVolume)
                        put_scale(c, scaled(skel.rest_scales()[c], b.scale));
                if (b.has_offset) {
                    bool found = false;
                    for (auto& o : pe.offsets)
                        if (o.joint == j) { o.offset = b.offset; found = true; }
                    if (!found) pe.offsets.push_back({j, b.offset});
                }
            }
        }
    }

    // Dense table in ascending id order.
    for (auto& [id, pe] : pending) {
        const VisualParamDef& p = *pe.info;
        AppearanceParam ap;
        ap.id = id;
        ap.name = p.name;
        ap.group = p.group;
        ap.kind = p.kind;
        ap.min = p.min;
        ap.max = p.max;
        ap.default_weight = std::clamp(p.default_weight, p.min, p.max);
        ap.sex = p.sex;
        ap.wearable = p.wearable;
        ap.animated = p.kind == VisualParamKind::Morph && is_animated_morph_name(p.name);
        auto put = [](auto& dst, const auto& src, std::uint32_t& first, std::uint32_t& count) {
            first = static_cast<std::uint32_t>(dst.size());
            count = static_cast<std::uint32_t>(src.size());
            dst.insert(dst.end(), src.begin(), src.end());
        };
        put(m.morphs_, pe.morphs, ap.morphs_first, ap.morphs_count);
        put(m.volumes_, pe.volumes, ap.volumes_first, ap.volumes_count);
        put(m.scales_, pe.scales, ap.scales_first, ap.scales_count);
        put(m.offsets_, pe.offsets, ap.offsets_first, ap.offsets_count);
        const auto index = static_cast<ParamIndex>(m.params_.size());
        m.by_id_[id] = index;
        m.by_name_[lower(p.name)] = index;  // last wins, like the viewer's name map
        m.params_.push_back(std::move(ap));
    }
    // Driven entries (the viewer pushes them to the front of its list: reverse file order).
    for (auto& [id, pe] : pending) {
        AppearanceParam& ap = m.params_[m.by_id_[id]];
        ap.driven_first = static_cast<std::uint32_t>(m.driven_.size());
        if (ap.kind != VisualParamKind::Driver) continue;
        for (auto it = pe.info->driven.rbegin(); it != pe.info->driven.rend(); ++it) {
            const auto found = m.by_id_.find(it->id);
            if (found == m.by_id_.end()) {
                m.warnings_.push_back(fmt::format("driver {} '{}': driven id {} names no param", id,
                                                  ap.name, it->id));
                continue;
            }
            m.driven_.push_back({found->second, it->min1, it->max1, it->max2, it->min2});
        }
        ap.driven_count = static_cast<std::uint32_t>(m.driven_.size()) - ap.driven_first;
    }
    std::vector<std::uint8_t> mark(m.params_.size(), 0);
    for (ParamIndex p = 0; p < m.num_params(); ++p)
        if (has_cycle(m, p, mark))
            return Error{fmt::format("driver params form a cycle through param {} '{}'",
                                     m.params_[p].id, m.params_[p].name)};
    for (int id : driver_ids) m.drivers_.push_back(m.by_id_[id]);

    m.finish_build();
    return std::shared_ptr<const AppearanceModel>(std::move(model));
}

void AppearanceModel::finish_build() {
    for (std::size_t k = 0; k < meshes_.size(); ++k)
        build_animated_set(*this, static_cast<std::uint32_t>(k), meshes_[k]);
    initial_weights_.resize(params_.size());
    for (std::size_t i = 0; i < params_.size(); ++i) initial_weights_[i] = params_[i].default_weight;
    for (ParamIndex d : drivers_) set_weight_impl(*this, initial_weights_, d, params_[d].default_weight, 0);
}

ParamIndex AppearanceModel::find(int id) const {
    const auto it = by_id_.find(id);
    return it == by_id_.end() ? kNoParam : it->second;
}

ParamIndex AppearanceModel::find(std::string_view name) const {
    const auto it = by_name_.find(lower(name));
    return it == by_name_.end() ? kNoParam : it->second;
}

int AppearanceModel::find_mesh(std::string_view type) const {
    for (std::size_t i = 0; i < meshes_.size(); ++i)
        if (meshes_[i].type == type) return static_cast<int>(i);
    return -1;
}

Result<std::shared_ptr<const AppearanceModel>> load_appearance_model(
    const std::filesystem::path& character_dir, std::shared_ptr<const Skeleton> skeleton) {
    auto def = load_avatar_definition(character_dir);
    if (!def) return def.error();
    std::map<std::string, LlmMesh> files;
    std::vector<std::pair<std::string, std::string>> types;  // (type, file)
    for (const MeshDef& md : def->meshes) {
        if (md.lod != 0) continue;
        if (!files.contains(md.file_name)) {
            auto mesh = load_llm(character_dir / md.file_name, LlmFileKind::Base);
            if (!mesh) return mesh.error();
            files.emplace(md.file_name, std::move(*mesh));
        }
        types.emplace_back(md.type, md.file_name);
    }
    std::vector<AppearanceMeshInput> inputs;
    for (const auto& [type, file] : types) inputs.push_back({type, &files.at(file)});
    auto model = AppearanceModel::build(*def, inputs, std::move(skeleton));
    if (!model) {
        Error e = model.error();
        e.message = fmt::format("{}: {}", (character_dir / "avatar_lad.xml").string(), e.message);
        return e;
    }
    return model;
}

// ---------------------------------------------------------------------------------------------
// AppearanceState
// ---------------------------------------------------------------------------------------------

AppearanceState::AppearanceState(std::shared_ptr<const AppearanceModel> model)
    : model_(std::move(model)) {
    const AppearanceModel& m = *model_;
    weights_.assign(m.initial_weights().begin(), m.initial_weights().end());
    last_.assign(weights_.size(), 0.f);  // `mLastWeight` starts at 0: the base mesh is weight 0
    for (const AppearanceMesh& mesh : m.meshes()) {
        MeshBuffers b;
        b.coords = mesh.coords;
        b.normals = mesh.normals;
        b.binormals = mesh.normals;  // initializeForMorph seeds binormals from the normals
        b.texcoords = mesh.texcoords;
        b.scaled_normals = mesh.normals;
        b.scaled_binormals = mesh.normals;
        meshes_.push_back(std::move(b));
        AnimatedShape sh;
        const std::size_t S = mesh.animated.stride;
        sh.planes.assign(animated_detail::kShapePlanes * S, 0.f);
        for (std::size_t j = 0; j < mesh.animated.vertices.size(); ++j) {
            using namespace animated_detail;
            const std::uint32_t v = mesh.animated.vertices[j];
            // Seeded like the mesh buffers (binormals and accumulators from the normals).
            const Vec3 c = mesh.coords[v], n = mesh.normals[v];
            const Vec3 seed[] = {c, n, n, n, n};
            const std::size_t first[] = {kCx, kSnx, kSbx, kNx, kBx};
            for (std::size_t q = 0; q < 5; ++q) {
                sh.planes[first[q] * S + j] = seed[q].x;
                sh.planes[(first[q] + 1) * S + j] = seed[q].y;
                sh.planes[(first[q] + 2) * S + j] = seed[q].z;
            }
            sh.planes[kU * S + j] = mesh.texcoords[v].x;
            sh.planes[kV * S + j] = mesh.texcoords[v].y;
        }
        sh.weights.assign(mesh.animated.morphs.size(), 0.f);
        const std::size_t most = mesh.animated.morphs.size();
        animated_.push_back(std::move(sh));
        if (active_morphs_.capacity() < most) {
            active_morphs_.reserve(most);
            active_weights_.reserve(most);
        }
    }
    const auto n = static_cast<std::size_t>(m.skeleton().num_joints());
    scale_deltas_.assign(n, Vec3{});
    position_deltas_.assign(n, Vec3{});
    changed_.reset(static_cast<std::size_t>(m.num_params()));
    dirty_ = true;
}

float AppearanceState::effective_weight(ParamIndex p) const {
    const AppearanceParam& info = model_->param(p);
    return (static_cast<unsigned>(info.sex) & static_cast<unsigned>(sex_)) != 0
               ? weights_[p]
               : info.default_weight;
}

bool AppearanceState::set_weight(ParamIndex p, float weight) {
    if (p < 0 || p >= model_->num_params() || std::isnan(weight)) return false;
    if (set_weight_impl(*model_, weights_, p, weight, 0, &changed_)) dirty_ = true;
    return true;
}

bool AppearanceState::set_weight_by_id(int id, float weight) {
    return set_weight(model_->find(id), weight);
}

bool AppearanceState::set_weight_by_name(std::string_view name, float weight) {
    return set_weight(model_->find(name), weight);
}

void AppearanceState::set_sex(Sex s) {
    if (s != sex_) dirty_ = changed_.all = true;  // every param's effective weight may change
    sex_ = s;
}

WearableApplyReport AppearanceState::apply_wearable(const Wearable& wearable) {
    WearableApplyReport report;
    const AppearanceModel& m = *model_;
    const std::string type = wearable_type_name(wearable.type);
    // The wearable's own copy of its params (`LLWearable` keeps one per param of its type):
    // defaults with driver propagation, then the file's values in ascending id order.
    std::vector<float> own(m.initial_weights().begin(), m.initial_weights().end());
    std::map<int, float> values;
    for (const auto& [id, w] : wearable.params) values[id] = w;  // a repeated id: last wins
    for (const auto& [id, w] : values) {
        const ParamIndex p = m.find(id);
        if (p == kNoParam) {
            report.unknown_ids.push_back(id);
            continue;
        }
        if (m.param(p).wearable != type) {
            report.other_ids.push_back(id);
            continue;
        }
        if (!std::isnan(w)) set_weight_impl(m, own, p, w, 0);
    }
    // writeToAvatar: every param of this type, ascending id.
    for (ParamIndex p = 0; p < m.num_params(); ++p) {
        if (m.param(p).wearable != type) continue;
        set_weight(p, own[p]);
        ++report.applied;
    }
    if (wearable.type == WearableType::Shape) {
        const ParamIndex male = m.find("male");
        if (male != kNoParam) set_sex(weights_[male] > 0.5f ? Sex::Male : Sex::Female);
    }
    return report;
}

// ---------------------------------------------------------------------------------------------
// Animated layer kernels (animated_morph_kernel.hpp): scalar and SSE2 here, AVX2 in its own file
// ---------------------------------------------------------------------------------------------

namespace animated_detail {

void evaluate_scalar(const Args& a) { evaluate<ScalarLanes>(a); }
void evaluate_soa_scalar(const Args& a) { evaluate_soa<ScalarLanes>(a); }

#if defined(SLANIM_APPEARANCE_X86)
namespace {
struct Sse2Lanes {
    using V = __m128;
    static constexpr std::size_t W = 4;
    static constexpr bool kStoresRuns = false;
    static V load(const float* p) { return _mm_loadu_ps(p); }
    static void store(float* p, V v) { _mm_storeu_ps(p, v); }
    static V set1(float f) { return _mm_set1_ps(f); }
    static V add(V a, V b) { return _mm_add_ps(a, b); }
    static V sub(V a, V b) { return _mm_sub_ps(a, b); }
    static V mul(V a, V b) { return _mm_mul_ps(a, b); }
    static V div(V a, V b) { return _mm_div_ps(a, b); }
    static V sqrt(V a) { return _mm_sqrt_ps(a); }
    static V usable(V len2) {
        return _mm_and_ps(_mm_cmpgt_ps(len2, _mm_setzero_ps()),
                          _mm_cmplt_ps(len2, _mm_set1_ps(std::numeric_limits<float>::infinity())));
    }
    static V select(V ok, V a, V b) { return _mm_or_ps(_mm_and_ps(ok, a), _mm_andnot_ps(ok, b)); }
    static bool all(V ok) { return _mm_movemask_ps(ok) == 0xF; }
};
}  // namespace
void evaluate_sse2(const Args& a) { evaluate<Sse2Lanes>(a); }
void evaluate_soa_sse2(const Args& a) { evaluate_soa<Sse2Lanes>(a); }
#else
void evaluate_sse2(const Args& a) { evaluate_scalar(a); }
void evaluate_soa_sse2(const Args& a) { evaluate_soa_scalar(a); }
#endif

}  // namespace animated_detail

// ---------------------------------------------------------------------------------------------
// VisualParamUpdateJob
// ---------------------------------------------------------------------------------------------

bool VisualParamUpdateJob::validate() const {
    if (!state) return false;
    const auto n = static_cast<std::size_t>(state->model().skeleton().num_joints());
    const bool no_pose = pose.positions.empty() && pose.scales.empty();
    if (!touched.empty() && touched.size() < n) return false;
    return no_pose || (pose.positions.size() >= n && pose.scales.size() >= n);
}

bool VisualParamUpdateJob::run() const {
    if (!validate()) return false;
    if (stats) *stats = {};
    AppearanceState& s = *state;
    if (!s.dirty_) {
        if (!defer_animated && s.pending_.load(std::memory_order_relaxed)) s.evaluate_pending();
        return true;
    }
    const AppearanceModel& m = *s.model_;
    const bool has_pose = !pose.positions.empty();
    // The params whose effective weight may differ from the last applied one (every other param
    // is skipped by the full loop's first test anyway), in param order.
    detail::ChangedParams& cp = s.changed_;
    const bool all = cp.all;
    if (!all) std::sort(cp.list.begin(), cp.list.end());
    const std::size_t candidates = all ? static_cast<std::size_t>(m.num_params()) : cp.list.size();
    for (std::size_t c = 0; c < candidates; ++c) {
        const ParamIndex p = all ? static_cast<ParamIndex>(c) : cp.list[c];
        const float eff = s.effective_weight(p);
        const float last = s.last_[p];
        if (eff == last) continue;
        const AppearanceParam& info = m.param(p);
        const float d = eff - last;
        switch (info.kind) {
            case VisualParamKind::Morph: {
                for (const MorphBinding& b :
                     m.morph_bindings().subspan(info.morphs_first, info.morphs_count)) {
                    const AppearanceMesh& mesh = m.meshes()[b.mesh];
                    if (info.animated) {
                        s.animated_[b.mesh].dirty = true;  // evaluated below, from the weights
                    } else {
                        const MorphTarget& t = mesh.morphs[b.morph];
                        apply_morph(t, d, s.meshes_[b.mesh], mesh.animated, s.animated_[b.mesh]);
                        if (stats) stats->vertices_touched += t.vertices.size();
                    }
                    if (stats) ++stats->morphs_applied;
                }
                for (const VolumeBinding& v :
                     m.volume_bindings().subspan(info.volumes_first, info.volumes_count)) {
                    const Vec3 ds = v.scale * d, dp = v.position * d;
                    s.scale_deltas_[v.joint] += ds;
                    s.position_deltas_[v.joint] += dp;
                    if (has_pose) {
                        pose.scales[v.joint] += ds;
                        pose.positions[v.joint] += dp;
                    }
                    if (stats) ++stats->skeletal_applied;
                }
                // `mLastWeight += delta_weight`: may differ from eff by rounding; the next run
                // applies the remainder, as in the viewer. Animated params are evaluated from
                // the weight itself.
                s.last_[p] = info.animated ? eff : last + d;
                if (s.last_[p] != eff) cp.kept.push_back(p);  // applied again next run
                break;
            }
            case VisualParamKind::Skeleton: {
                for (const JointScaleBinding& b :
                     m.scale_bindings().subspan(info.scales_first, info.scales_count)) {
                    const Vec3 ds = d * b.scale;
                    s.scale_deltas_[b.joint] += ds;
                    if (has_pose) pose.scales[b.joint] += ds;
                    if (!touched.empty()) touched[b.joint] |= 2u;
                }
                for (const JointOffsetBinding& b :
                     m.offset_bindings().subspan(info.offsets_first, info.offsets_count)) {
                    const Vec3 dp = eff * b.offset - last * b.offset;
                    s.position_deltas_[b.joint] += dp;
                    if (has_pose) pose.positions[b.joint] += dp;
                    if (!touched.empty()) touched[b.joint] |= 1u;
                }
                ++s.skeleton_serial_;
                s.last_[p] = eff;
                if (stats) ++stats->skeletal_applied;
                break;
            }
            case VisualParamKind::Driver:
            case VisualParamKind::Color:
            case VisualParamKind::Alpha:
                s.last_[p] = eff;
                break;
        }
        if (stats) ++stats->params_applied;
    }
    for (std::size_t k = 0; k < s.animated_.size(); ++k)
        if (s.animated_[k].dirty) {
            s.record_animated(k);
            if (stats) stats->vertices_touched += m.meshes()[k].animated.vertices.size();
        }
    if (!defer_animated && s.pending_.load(std::memory_order_relaxed)) s.evaluate_pending();
    s.dirty_ = !cp.kept.empty();
    cp.next_run();
    return true;
}

void AppearanceState::record_animated(std::size_t mesh) {
    const AnimatedMorphSet& set = model_->meshes()[mesh].animated;
    AnimatedShape& sh = animated_[mesh];
    for (std::size_t k = 0; k < set.morphs.size(); ++k) sh.weights[k] = effective_weight(set.morphs[k].param);
    sh.dirty = false;
    sh.pending = true;
    ++sh.serial;
    pending_.store(true, std::memory_order_relaxed);
}

void AppearanceState::animated_args(std::size_t mesh, animated_detail::Args& args) const {
    const AnimatedMorphSet& set = model_->meshes()[mesh].animated;
    const AnimatedShape& sh = animated_[mesh];
    active_morphs_.clear();
    active_weights_.clear();
    for (std::size_t k = 0; k < set.morphs.size(); ++k) {
        if (sh.weights[k] == 0.f) continue;
        active_morphs_.push_back(set.morphs[k].deltas.data());
        active_weights_.push_back(sh.weights[k]);
    }
    args.shape = sh.planes.data();
    args.stride = set.stride;
    args.slots = set.vertices.size();
    args.vertices = set.vertices.data();
    args.deltas = active_morphs_.data();
    args.weights = active_weights_.data();
    args.active = active_morphs_.size();
}

void AppearanceState::evaluate_pending() const {
    const std::lock_guard lock(pending_mutex_);
    if (!pending_.load(std::memory_order_relaxed)) return;
    const Isa isa = active_isa();
    for (std::size_t mesh = 0; mesh < animated_.size(); ++mesh) {
        if (!animated_[mesh].pending) continue;
        animated_detail::Args args;
        animated_args(mesh, args);
        args.out = &meshes_[mesh];
        if (isa >= Isa::Avx2) animated_detail::evaluate_avx2(args);
        else if (isa >= Isa::Sse2) animated_detail::evaluate_sse2(args);
        else animated_detail::evaluate_scalar(args);
        ++meshes_[mesh].revision;
        animated_[mesh].pending = false;
    }
    pending_.store(false, std::memory_order_release);
}

std::size_t AppearanceState::evaluate_animated_into(std::size_t mesh, SoaVec3Out positions, SoaVec3Out normals) {
    if (mesh >= animated_.size()) return 0;
    const std::size_t n = model_->meshes()[mesh].num_vertices();
    const AnimatedMorphSet& set = model_->meshes()[mesh].animated;
    if (set.empty() || positions.size() < n || normals.size() < n) return 0;
    animated_detail::Args args;
    animated_args(mesh, args);
    float* const soa[6] = {positions.x.data(), positions.y.data(), positions.z.data(),
                           normals.x.data(),   normals.y.data(),   normals.z.data()};
    std::copy(std::begin(soa), std::end(soa), args.soa);
    const Isa isa = active_isa();
    if (isa >= Isa::Avx2) animated_detail::evaluate_soa_avx2(args);
    else if (isa >= Isa::Sse2) animated_detail::evaluate_soa_sse2(args);
    else animated_detail::evaluate_soa_scalar(args);
    return set.vertices.size();
}

}  // namespace slanim

// SPDX-License-Identifier: MIT
// Visual params at run time: LLVisualParam / LLDriverParam / LLPolyMorphTarget /
// LLPolySkeletalDistortion behaviour (spec §6.1–§6.3).
#include "slanim/appearance/visual_params.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

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
/// propagation (non-animating). Returns true when some weight changed.
bool set_weight_impl(const AppearanceModel& model, std::span<float> weights, ParamIndex p,
                     float w, int depth) {
    const AppearanceParam& info = model.param(p);
    const float v = std::clamp(w, info.min, info.max);
    bool changed = weights[p] != v;
    weights[p] = v;
    if (info.kind != VisualParamKind::Driver || depth > model.num_params()) return changed;
    const auto driven = model.driven_bindings().subspan(info.driven_first, info.driven_count);
    for (const DrivenBinding& d : driven) {
        const AppearanceParam& dp = model.param(d.param);
        const float dw = driven_weight(d, v, info.min, info.max, dp.min, dp.max);
        changed |= set_weight_impl(model, weights, d.param, dw, depth + 1);
    }
    return changed;
}

Vec3 normalized_or(Vec3 v, Vec3 fallback) {
    const float len2 = dot(v, v);
    if (!(len2 > 0.f) || !std::isfinite(len2)) return fallback;
    return v * (1.f / std::sqrt(len2));
}

void apply_morph(const MorphTarget& t, float d, MeshBuffers& mb) {
    const float soft = d * kNormalSoftenFactor;
    const std::size_t k = t.vertices.size();
    for (std::size_t i = 0; i < k; ++i) {
        const std::uint32_t v = t.vertices[i];
        mb.coords[v] += t.coords[i] * d;
        mb.scaled_normals[v] += t.normals[i] * soft;
        const Vec3 n = normalized_or(mb.scaled_normals[v], mb.normals[v]);
        mb.normals[v] = n;
        mb.scaled_binormals[v] += t.binormals[i] * soft;
        const Vec3 tangent = cross(mb.scaled_binormals[v], n);
        mb.binormals[v] = normalized_or(cross(n, tangent), mb.binormals[v]);
        mb.texcoords[v] = mb.texcoords[v] + t.texcoords[i] * d;
    }
    ++mb.revision;
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

    m.initial_weights_.resize(m.params_.size());
    for (std::size_t i = 0; i < m.params_.size(); ++i)
        m.initial_weights_[i] = m.params_[i].default_weight;
    for (ParamIndex d : m.drivers_)
        set_weight_impl(m, m.initial_weights_, d, m.params_[d].default_weight, 0);
    return std::shared_ptr<const AppearanceModel>(std::move(model));
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
    }
    const auto n = static_cast<std::size_t>(m.skeleton().num_joints());
    scale_deltas_.assign(n, Vec3{});
    position_deltas_.assign(n, Vec3{});
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
    if (set_weight_impl(*model_, weights_, p, weight, 0)) dirty_ = true;
    return true;
}

bool AppearanceState::set_weight_by_id(int id, float weight) {
    return set_weight(model_->find(id), weight);
}

bool AppearanceState::set_weight_by_name(std::string_view name, float weight) {
    return set_weight(model_->find(name), weight);
}

void AppearanceState::set_sex(Sex s) {
    if (s != sex_) dirty_ = true;
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
    if (!s.dirty_) return true;
    const AppearanceModel& m = *s.model_;
    const bool has_pose = !pose.positions.empty();
    bool settled = true;
    for (ParamIndex p = 0; p < m.num_params(); ++p) {
        const float eff = s.effective_weight(p);
        const float last = s.last_[p];
        if (eff == last) continue;
        const AppearanceParam& info = m.param(p);
        const float d = eff - last;
        switch (info.kind) {
            case VisualParamKind::Morph: {
                for (const MorphBinding& b :
                     m.morph_bindings().subspan(info.morphs_first, info.morphs_count)) {
                    const MorphTarget& t = m.meshes()[b.mesh].morphs[b.morph];
                    apply_morph(t, d, s.meshes_[b.mesh]);
                    if (stats) {
                        ++stats->morphs_applied;
                        stats->vertices_touched += t.vertices.size();
                    }
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
                // applies the remainder, as in the viewer.
                s.last_[p] = last + d;
                if (s.last_[p] != eff) settled = false;
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
    s.dirty_ = !settled;
    return true;
}

}  // namespace slanim

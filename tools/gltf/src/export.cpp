// SPDX-License-Identifier: MIT
// encode_animation: a decoded Motion (+ skinned meshes) as a glTF 2.0 asset (export.hpp).
#include "slanim/gltf/export.hpp"

#include <fmt/format.h>
#include <tiny_gltf.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>

#include "slanim/core/local_to_model.hpp"
#include "slanim/gltf/accessor.hpp"
#include "slanim/gltf/axes.hpp"
#include "slanim/gltf/import.hpp"
#include "slanim/gltf/slerp_keys.hpp"

namespace slanim::gltf {

namespace {

using tinygltf::Value;

/// min/max per component of `count` tuples of `n` floats.
void set_min_max(tinygltf::Accessor& acc, const float* data, std::size_t count, std::size_t n) {
    acc.minValues.assign(n, std::numeric_limits<double>::infinity());
    acc.maxValues.assign(n, -std::numeric_limits<double>::infinity());
    for (std::size_t i = 0; i < count; ++i) {
        for (std::size_t k = 0; k < n; ++k) {
            const double v = data[i * n + k];
            acc.minValues[k] = std::min(acc.minValues[k], v);
            acc.maxValues[k] = std::max(acc.maxValues[k], v);
        }
    }
}

Value vec_value(Vec3 v) { return Value(Value::Array{Value(double{v.x}), Value(double{v.y}), Value(double{v.z})}); }

/// Normalises in double; a zero or non-finite quaternion is an error (nullopt).
std::optional<Quat> unit(Quat q) {
    const double n = std::sqrt(double{q.x} * q.x + double{q.y} * q.y + double{q.z} * q.z + double{q.w} * q.w);
    if (!std::isfinite(n) || n < 1e-12) return std::nullopt;
    return Quat{static_cast<float>(q.x / n), static_cast<float>(q.y / n), static_cast<float>(q.z / n),
                static_cast<float>(q.w / n)};
}

/// Column-major glTF matrix of the inverse of T(p) · R(q) (glTF axes, unit q).
std::array<float, 16> inverse_bind(Vec3 p, Quat q) {
    const double x = q.x, y = q.y, z = q.z, w = q.w;
    // Rotation matrix R (row r, column c).
    const double r[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                            {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                            {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
    const double t[3] = {p.x, p.y, p.z};
    std::array<float, 16> m{};
    // Inverse: rotation Rᵀ, translation −Rᵀ·p. Element (row i, column j) at j·4 + i.
    for (int i = 0; i < 3; ++i) {
        double tr = 0.0;
        for (int j = 0; j < 3; ++j) {
            m[static_cast<std::size_t>(j * 4 + i)] = static_cast<float>(r[j][i]);
            tr -= r[j][i] * t[j];
        }
        m[static_cast<std::size_t>(12 + i)] = static_cast<float>(tr);
    }
    m[15] = 1.f;
    return m;
}

const char* kind_name(JointKind k) {
    switch (k) {
        case JointKind::Bone: return "bone";
        case JointKind::CollisionVolume: return "collision_volume";
        case JointKind::AttachmentPoint: return "attachment_point";
    }
    return "bone";
}

}  // namespace

Vec3 unit_normal(Vec3 v) {
    const double n = std::sqrt(double{v.x} * v.x + double{v.y} * v.y + double{v.z} * v.z);
    if (!std::isfinite(n) || n < 1e-12) return {0.f, 0.f, 1.f};
    return {static_cast<float>(v.x / n), static_cast<float>(v.y / n), static_cast<float>(v.z / n)};
}

JointMap make_joint_map(const Skeleton& skeleton) {
    JointMap map;
    map.joint_of_skeleton.assign(static_cast<std::size_t>(skeleton.num_joints()), -1);
    map.skeleton_of_joint.push_back(-1);  // mRoot
    for (int j = 0; j < skeleton.num_joints(); ++j) {
        const int p = skeleton.parent(j);
        const bool hud = skeleton.kind(j) == JointKind::AttachmentPoint && skeleton.desc(j).hud;
        // A child of a left-out joint is left out too (parents come before children).
        if (hud || (p >= 0 && map.joint_of_skeleton[static_cast<std::size_t>(p)] < 0)) continue;
        map.joint_of_skeleton[static_cast<std::size_t>(j)] = static_cast<int>(map.skeleton_of_joint.size());
        map.skeleton_of_joint.push_back(j);
    }
    return map;
}

namespace {

/// Builds the tinygltf model of one AnimationExport, step by step (joints and skin, meshes,
/// animation, extras), then serialises it.
class AnimationEncoder {
public:
    explicit AnimationEncoder(const AnimationExport& in)
        : in_(in), sk_(*in.skeleton), map_(make_joint_map(sk_)), num_joints_(map_.skeleton_of_joint.size()) {}

    Result<std::vector<std::uint8_t>> encode(FileFormat format, ExportReport* report) {
        const auto nj = static_cast<std::size_t>(sk_.num_joints());
        if (in_.rest_positions.size() != nj || in_.rest_rotations.size() != nj || in_.rest_scales.size() != nj)
            return Error{fmt::format("glTF: the rest pose has {} positions, {} rotations, {} scales for {} joints",
                                     in_.rest_positions.size(), in_.rest_rotations.size(), in_.rest_scales.size(), nj)};
        if (auto r = rest_model_transforms(); !r) return r.error();
        start_model();
        if (auto r = add_joint_nodes(); !r) return r.error();
        scene_.name = "slanim";
        scene_.nodes = {0};
        for (const SkinnedMesh& gm : in_.meshes)
            if (auto r = add_mesh(gm); !r) return r.error();
        if (auto r = add_animation(); !r) return r.error();
        finish_model();
        std::ostringstream os(std::ios::out | std::ios::binary);
        tinygltf::TinyGLTF gltf;
        if (!gltf.WriteGltfSceneToStream(&m_, os, format == FileFormat::Gltf, format == FileFormat::Glb))
            return Error{"glTF: cannot serialise the asset"};
        if (report) *report = std::move(rep_);
        const std::string s = std::move(os).str();
        return std::vector<std::uint8_t>(s.begin(), s.end());
    }

private:
    Vec3 parent_scale(int j) const {
        const int p = sk_.parent(j);
        return p < 0 ? Vec3{1.f, 1.f, 1.f} : in_.rest_scales[static_cast<std::size_t>(p)];
    }

    /// Model transforms of the rest pose (avatar-root frame, SL axes).
    Result<bool> rest_model_transforms() {
        const auto nj = static_cast<std::size_t>(sk_.num_joints());
        model_pos_.resize(nj);
        model_rot_.resize(nj);
        LocalToModelJob l2m;
        l2m.skeleton = &sk_;
        l2m.local_positions = in_.rest_positions;
        l2m.local_rotations = in_.rest_rotations;
        l2m.local_scales = in_.rest_scales;
        l2m.model_positions = model_pos_;
        l2m.model_rotations = model_rot_;
        if (!l2m.run()) return Error{"glTF: the rest pose does not fit the skeleton (LocalToModelJob)"};
        return true;
    }

    void start_model() {
        m_.asset.version = "2.0";
        m_.asset.generator = "slanim";
        if (!in_.comment.empty()) {
            Value::Object extras;
            extras["comment"] = Value(in_.comment);
            m_.asset.extras = Value(std::move(extras));
        }
        m_.buffers.resize(1);
    }

    /// The node of skeleton joint `j`: its rest TRS (glTF axes), its kind in extras, and its
    /// inverse bind matrix appended to `ibm`.
    Result<tinygltf::Node> joint_node(int j, std::vector<float>& ibm) const {
        const auto ju = static_cast<std::size_t>(j);
        tinygltf::Node node;
        node.name = sk_.name(j);
        const Vec3 t = sl_to_gltf(scaled(in_.rest_positions[ju], parent_scale(j)));
        const auto q = unit(in_.rest_rotations[ju]);
        if (!is_finite(t) || !q) return Error{fmt::format("glTF: joint {}: the rest pose is not finite", node.name)};
        if (t.x != 0.f || t.y != 0.f || t.z != 0.f) node.translation = {t.x, t.y, t.z};
        const Quat r = sl_to_gltf(*q);
        if (r.x != 0.f || r.y != 0.f || r.z != 0.f || r.w != 1.f) node.rotation = {r.x, r.y, r.z, r.w};
        const Vec3 model_p = sl_to_gltf(model_pos_[ju]);
        const auto mq = unit(model_rot_[ju]);
        if (!is_finite(model_p) || !mq)
            return Error{fmt::format("glTF: joint {}: the rest model transform is not finite", node.name)};
        if (sk_.kind(j) != JointKind::Bone) {
            Value::Object extras;
            extras["kind"] = Value(std::string(kind_name(sk_.kind(j))));
            if (sk_.kind(j) == JointKind::CollisionVolume)
                extras["scale"] = vec_value(sl_to_gltf(in_.rest_scales[ju]));
            else
                extras["attachment_id"] = Value(sk_.desc(j).attachment_id);
            node.extras = Value(std::move(extras));
        }
        const auto b = inverse_bind(model_p, sl_to_gltf(*mq));
        ibm.insert(ibm.end(), b.begin(), b.end());
        return node;
    }

    /// Joint nodes (node index = glTF joint index; node 0 is mRoot) and the skin.
    Result<bool> add_joint_nodes() {
        std::vector<float> ibm;
        ibm.reserve(num_joints_ * 16);
        for (std::size_t g = 0; g < num_joints_; ++g) {
            const int j = map_.skeleton_of_joint[g];
            if (j < 0) {
                tinygltf::Node root;
                root.name = "mRoot";
                const auto b = inverse_bind(Vec3{}, Quat::identity());
                ibm.insert(ibm.end(), b.begin(), b.end());
                m_.nodes.push_back(std::move(root));
                continue;
            }
            auto node = joint_node(j, ibm);
            if (!node) return node.error();
            const int pg = map_.joint(sk_.parent(j));
            m_.nodes[static_cast<std::size_t>(pg)].children.push_back(static_cast<int>(g));
            m_.nodes.push_back(std::move(*node));
        }
        tinygltf::Skin skin;
        skin.name = "SL avatar skeleton";
        skin.skeleton = 0;
        for (std::size_t g = 0; g < num_joints_; ++g) skin.joints.push_back(static_cast<int>(g));
        skin.inverseBindMatrices = add_accessor(m_, ibm.data(), ibm.size() * sizeof(float), num_joints_,
                                                     TINYGLTF_TYPE_MAT4, TINYGLTF_COMPONENT_TYPE_FLOAT, 0);
        m_.skins.push_back(std::move(skin));
        return true;
    }

    int add_float_attribute(const std::vector<float>& data, std::size_t n, int type) {
        return add_accessor(m_, data.data(), data.size() * sizeof(float), n, type, TINYGLTF_COMPONENT_TYPE_FLOAT,
                                 TINYGLTF_TARGET_ARRAY_BUFFER);
    }

    /// POSITION, NORMAL and TEXCOORD_0 (glTF axes; the UV origin at the top left).
    Result<bool> add_vertex_attributes(const SkinnedMesh& em, tinygltf::Primitive& prim) {
        const std::size_t n = em.positions.size();
        pos_.resize(3 * n);
        for (std::size_t i = 0; i < n; ++i) {
            const Vec3 p = sl_to_gltf(em.positions[i]);
            if (!is_finite(p)) return Error{fmt::format("glTF: mesh {}: vertex {} is not finite", em.name, i)};
            pos_[3 * i] = p.x, pos_[3 * i + 1] = p.y, pos_[3 * i + 2] = p.z;
        }
        const int pa = add_float_attribute(pos_, n, TINYGLTF_TYPE_VEC3);
        set_min_max(m_.accessors[static_cast<std::size_t>(pa)], pos_.data(), n, 3);
        prim.attributes["POSITION"] = pa;
        if (em.normals.size() == n) {
            nrm_.resize(3 * n);
            for (std::size_t i = 0; i < n; ++i) {
                const Vec3 v = sl_to_gltf(unit_normal(em.normals[i]));
                nrm_[3 * i] = v.x, nrm_[3 * i + 1] = v.y, nrm_[3 * i + 2] = v.z;
            }
            prim.attributes["NORMAL"] = add_float_attribute(nrm_, n, TINYGLTF_TYPE_VEC3);
        }
        if (em.texcoords.size() == n) {
            uv_.resize(2 * n);
            for (std::size_t i = 0; i < n; ++i) {
                uv_[2 * i] = em.texcoords[i].x;
                uv_[2 * i + 1] = 1.f - em.texcoords[i].y;
            }
            prim.attributes["TEXCOORD_0"] = add_float_attribute(uv_, n, TINYGLTF_TYPE_VEC2);
        }
        return true;
    }

    /// JOINTS_0, WEIGHTS_0 and the triangle indices.
    Result<bool> add_skin_and_faces(const SkinnedMesh& gm, tinygltf::Primitive& prim) {
        const SkinnedMesh& em = gm;
        const std::size_t n = em.positions.size();
        for (const auto& jt : gm.joints)
            for (std::uint16_t j : jt)
                if (j >= num_joints_)
                    return Error{fmt::format("glTF: mesh {}: joint index {} out of range ({} joints)", em.name, j,
                                             num_joints_)};
        prim.attributes["JOINTS_0"] =
            add_accessor(m_, gm.joints.data(), n * sizeof(gm.joints[0]), n, TINYGLTF_TYPE_VEC4,
                              TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT, TINYGLTF_TARGET_ARRAY_BUFFER);
        prim.attributes["WEIGHTS_0"] = add_accessor(m_, gm.weights.data(), n * sizeof(gm.weights[0]), n,
                                                         TINYGLTF_TYPE_VEC4, TINYGLTF_COMPONENT_TYPE_FLOAT,
                                                         TINYGLTF_TARGET_ARRAY_BUFFER);
        indices_.clear();
        for (const auto& f : em.faces) {
            for (std::uint32_t v : f) {
                if (v >= n) return Error{fmt::format("glTF: mesh {}: face index {} out of range ({} vertices)", em.name, v, n)};
                indices_.push_back(v);
            }
        }
        prim.indices = add_accessor(m_, indices_.data(), indices_.size() * sizeof(std::uint32_t), indices_.size(),
                                         TINYGLTF_TYPE_SCALAR, TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT,
                                         TINYGLTF_TARGET_ELEMENT_ARRAY_BUFFER);
        return true;
    }

    /// A mesh (glTF axes) and its node at the scene root with the skin; an empty one is skipped
    /// (a glTF mesh needs a primitive with data).
    Result<bool> add_mesh(const SkinnedMesh& gm) {
        const SkinnedMesh& em = gm;
        const std::size_t n = em.positions.size();
        if (n == 0 || em.faces.empty()) return false;
        if (gm.joints.size() != n || gm.weights.size() != n)
            return Error{fmt::format("glTF: mesh {}: {} vertices but {} joint and {} weight tuples", em.name, n,
                                     gm.joints.size(), gm.weights.size())};
        if (n > std::numeric_limits<std::uint32_t>::max())
            return Error{fmt::format("glTF: mesh {}: too many vertices for 32-bit indices", em.name)};
        tinygltf::Primitive prim;
        prim.mode = TINYGLTF_MODE_TRIANGLES;
        if (auto r = add_vertex_attributes(em, prim); !r) return r;
        if (auto r = add_skin_and_faces(gm, prim); !r) return r;
        tinygltf::Mesh mesh;
        mesh.name = std::string(em.name);
        mesh.primitives.push_back(std::move(prim));
        m_.meshes.push_back(std::move(mesh));
        tinygltf::Node node;
        node.name = std::string(em.name);
        node.mesh = static_cast<int>(m_.meshes.size()) - 1;
        node.skin = 0;
        m_.nodes.push_back(std::move(node));
        scene_.nodes.push_back(static_cast<int>(m_.nodes.size()) - 1);
        ++rep_.meshes;
        return true;
    }

    void add_sampler(int input, int output, int node, const char* path) {
        tinygltf::AnimationSampler s;
        s.input = input;
        s.output = output;
        s.interpolation = "LINEAR";
        anim_.samplers.push_back(std::move(s));
        tinygltf::AnimationChannel c;
        c.sampler = static_cast<int>(anim_.samplers.size()) - 1;
        c.target_node = node;
        c.target_path = path;
        anim_.channels.push_back(std::move(c));
    }

    /// The key times of one channel (`times_`), checked, as an accessor.
    Result<int> add_times(const std::string& joint) {
        for (std::size_t i = 0; i < times_.size(); ++i) {
            if (!std::isfinite(times_[i]) || times_[i] < 0.f || (i > 0 && !(times_[i] > times_[i - 1])))
                return Error{fmt::format("glTF: joint {}: key times must be finite, ≥ 0 and increasing (key {}: {})",
                                         joint, i, times_[i])};
        }
        const int a = add_accessor(m_, times_.data(), times_.size() * sizeof(float), times_.size(),
                                        TINYGLTF_TYPE_SCALAR, TINYGLTF_COMPONENT_TYPE_FLOAT, 0);
        set_min_max(m_.accessors[static_cast<std::size_t>(a)], times_.data(), times_.size(), 1);
        return a;
    }

    /// The sampler and channel of `times_` and `values_` (tuples of `type`) on node `g`.
    Result<bool> add_channel(const std::string& joint, int g, int type, const char* path) {
        auto ta = add_times(joint);
        if (!ta) return ta.error();
        const int va = add_accessor(m_, values_.data(), values_.size() * sizeof(float), times_.size(), type,
                                         TINYGLTF_COMPONENT_TYPE_FLOAT, 0);
        add_sampler(*ta, va, g, path);
        return true;
    }

    /// Keys inside the interval a → b where the viewer slerps (a negative dot), sampling that
    /// slerp (viewer_slerp_keys) so that glTF LINEAR players follow the viewer's curve.
    void add_slerp_keys(const RotKey& a, const RotKey& b) {
        for (const RotKey& k : viewer_slerp_keys(a, b)) {
            const Quat r = sl_to_gltf(k.value);
            times_.push_back(k.time);
            values_.insert(values_.end(), {r.x, r.y, r.z, r.w});
        }
    }

    /// The rotation and translation channels of one motion joint on glTF joint `g`.
    Result<bool> add_joint_channels(const MotionJoint& mj, int g) {
        if (!mj.rot_keys.empty()) {
            times_.clear();
            values_.clear();
            for (std::size_t i = 0; i < mj.rot_keys.size(); ++i) {
                const RotKey& k = mj.rot_keys[i];
                const auto q = unit(k.value);
                if (!q) return Error{fmt::format("glTF: joint {}: rotation key at {} s is not a finite non-zero quaternion", mj.name, k.time)};
                if (i > 0) add_slerp_keys(mj.rot_keys[i - 1], k);
                const Quat r = sl_to_gltf(*q);
                times_.push_back(k.time);
                values_.insert(values_.end(), {r.x, r.y, r.z, r.w});
            }
            if (auto c = add_channel(mj.name, g, TINYGLTF_TYPE_VEC4, "rotation"); !c) return c;
            ++rep_.rotation_channels;
        }
        if (!mj.pos_keys.empty()) {
            times_.clear();
            values_.clear();
            const Vec3 ps = parent_scale(mj.joint);
            for (const PosKey& k : mj.pos_keys) {
                const Vec3 p = sl_to_gltf(scaled(k.value, ps));
                if (!is_finite(p)) return Error{fmt::format("glTF: joint {}: position key at {} s is not finite", mj.name, k.time)};
                times_.push_back(k.time);
                values_.insert(values_.end(), {p.x, p.y, p.z});
            }
            if (auto c = add_channel(mj.name, g, TINYGLTF_TYPE_VEC3, "translation"); !c) return c;
            ++rep_.translation_channels;
        }
        return true;
    }

    /// The animation's channels; joints without a node (or repeated) are reported as skipped.
    Result<bool> add_animation() {
        const Motion& motion = *in_.motion;
        anim_.name = in_.animation_name;
        std::vector<bool> seen(num_joints_, false);
        for (const MotionJoint& mj : motion.joints) {
            if (mj.priority >= 0) joint_priorities_[mj.name] = Value(mj.priority);
            const int g = mj.joint >= 0 && mj.joint < sk_.num_joints() ? map_.joint(mj.joint) : -1;
            if (g < 0 || seen[static_cast<std::size_t>(g)]) {
                if (!mj.rot_keys.empty() || !mj.pos_keys.empty()) rep_.skipped_joints.push_back(mj.name);
                continue;
            }
            if (mj.rot_keys.empty() && mj.pos_keys.empty()) continue;
            seen[static_cast<std::size_t>(g)] = true;
            if (auto r = add_joint_channels(mj, g); !r) return r;
        }
        return true;
    }

    /// The motion's header as extras: on the animation, or on the scene when there is no
    /// channel (glTF animations need at least one).
    void finish_model() {
        Value::Object extras = motion_extras(*in_.motion);
        if (!in_.source_anim.empty()) extras[kSourceAnimKey] = Value(base64_encode(in_.source_anim));
        // Empty arrays and objects are left out (tinygltf writes them as null).
        if (!joint_priorities_.empty()) extras["joint_priorities"] = Value(std::move(joint_priorities_));
        Value::Array constraints = constraint_extras(*in_.motion);
        if (!constraints.empty()) extras["constraints"] = Value(std::move(constraints));
        Value::Array skipped;
        for (const std::string& s : rep_.skipped_joints) skipped.push_back(Value(s));
        if (!skipped.empty()) extras["skipped_joints"] = Value(std::move(skipped));
        if (!anim_.channels.empty()) {
            anim_.extras = Value(std::move(extras));
            m_.animations.push_back(std::move(anim_));
        } else {
            scene_.extras = Value(std::move(extras));
        }
        m_.scenes.push_back(std::move(scene_));
        m_.defaultScene = 0;
        rep_.nodes = static_cast<int>(m_.nodes.size());
        rep_.joints = static_cast<int>(num_joints_);
    }

    static Value::Object motion_extras(const Motion& motion) {
        Value::Object extras;
        extras["format"] = Value(std::string("slanim-anim"));
        extras["version"] = Value(kExtrasVersion);
        extras["duration"] = Value(double{motion.duration});
        extras["priority"] = Value(motion.base_priority);
        extras["max_priority"] = Value(motion.max_priority);
        extras["loop"] = Value(motion.loop);
        extras["loop_in"] = Value(double{motion.loop_in});
        extras["loop_out"] = Value(double{motion.loop_out});
        extras["ease_in"] = Value(double{motion.ease_in});
        extras["ease_out"] = Value(double{motion.ease_out});
        extras["hand_pose"] = Value(static_cast<int>(motion.hand_pose));
        extras["emote"] = Value(motion.emote_name);
        return extras;
    }

    static Value::Array constraint_extras(const Motion& motion) {
        Value::Array constraints;
        for (const MotionConstraint& c : motion.constraints) {
            Value::Object o;
            o["chain_length"] = Value(c.chain_length);
            o["type"] = Value(std::string(c.type == ConstraintType::Plane ? "plane" : "point"));
            o["source_volume"] = Value(c.source_volume);
            o["source_offset"] = vec_value(c.source_offset);
            o["target_volume"] = Value(c.target_ground ? std::string("GROUND") : c.target_volume);
            o["target_offset"] = vec_value(c.target_offset);
            o["target_dir"] = vec_value(c.target_dir);
            o["ease_in_start"] = Value(double{c.ease_in_start});
            o["ease_in_stop"] = Value(double{c.ease_in_stop});
            o["ease_out_start"] = Value(double{c.ease_out_start});
            o["ease_out_stop"] = Value(double{c.ease_out_stop});
            constraints.push_back(Value(std::move(o)));
        }
        return constraints;
    }

    const AnimationExport& in_;
    const Skeleton& sk_;
    const JointMap map_;
    const std::size_t num_joints_;
    std::vector<Vec3> model_pos_;
    std::vector<Quat> model_rot_;
    tinygltf::Model m_;
    tinygltf::Scene scene_;
    tinygltf::Animation anim_;
    Value::Object joint_priorities_;
    ExportReport rep_;
    std::vector<float> pos_, nrm_, uv_, times_, values_;  // scratch, reused per mesh / channel
    std::vector<std::uint32_t> indices_;
};

}  // namespace

Result<std::vector<std::uint8_t>> encode_animation(const AnimationExport& in, FileFormat format, ExportReport* report) {
    if (in.skeleton == nullptr || in.motion == nullptr) return Error{"glTF: no skeleton or no motion"};
    return AnimationEncoder(in).encode(format, report);
}

}  // namespace slanim::gltf

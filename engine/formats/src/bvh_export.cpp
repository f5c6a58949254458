// SPDX-License-Identifier: MIT
// Motion → BVH: the inverse of LLBVHLoader::serialize's conversions (spec §8.4), sampled with
// the project's sampler; and the JSON sidecar.
#include "slanim/formats/bvh_export.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "json_read.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/core/sampling.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/io.hpp"

namespace slanim {

namespace {

constexpr float kInchesToMeters = 0.02540005f;  // LLBVHLoader's INCHES_TO_METERS
constexpr Quat kFrameRot{0.5f, 0.5f, 0.5f, 0.5f};  // the importer's frame matrix as a rotation
constexpr double kPi = 3.14159265358979323846;

using Mat3 = std::array<std::array<double, 3>, 3>;

/// Column-vector rotation matrix of a unit Hamilton quaternion.
Mat3 to_matrix(double x, double y, double z, double w) {
    return {{{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
             {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
             {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}}};
}

Mat3 axis_matrix(int axis, double angle) {
    const double c = std::cos(angle), s = std::sin(angle);
    Mat3 m{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
    const int l = (axis + 1) % 3, n = (axis + 2) % 3;
    m[l][l] = c;
    m[l][n] = -s;
    m[n][l] = s;
    m[n][n] = c;
    return m;
}

std::array<int, 3> axes_of(BvhRotationOrder o) {
    switch (o) {
        case BvhRotationOrder::XYZ: return {0, 1, 2};
        case BvhRotationOrder::XZY: return {0, 2, 1};
        case BvhRotationOrder::YXZ: return {1, 0, 2};
        case BvhRotationOrder::YZX: return {1, 2, 0};
        case BvhRotationOrder::ZXY: return {2, 0, 1};
        case BvhRotationOrder::ZYX: return {2, 1, 0};
    }
    return {0, 1, 2};
}

/// Linden's per-joint channel orders (their BVH sources of the default animations).
std::optional<BvhRotationOrder> linden_order(std::string_view canonical) {
    using O = BvhRotationOrder;
    static constexpr std::pair<std::string_view, O> kTable[] = {
        {"mPelvis", O::XZY},        {"mTorso", O::XZY},         {"mChest", O::XZY},
        {"mNeck", O::XZY},          {"mHead", O::XZY},          {"mCollarLeft", O::YZX},
        {"mShoulderLeft", O::ZYX},  {"mElbowLeft", O::YZX},     {"mWristLeft", O::ZYX},
        {"mCollarRight", O::YZX},   {"mShoulderRight", O::ZYX}, {"mElbowRight", O::YZX},
        {"mWristRight", O::ZYX},    {"mHipLeft", O::XZY},       {"mKneeLeft", O::XZY},
        {"mAnkleLeft", O::XYZ},     {"mHipRight", O::XZY},      {"mKneeRight", O::XZY},
        {"mAnkleRight", O::XYZ},
    };
    for (const auto& [n, o] : kTable)
        if (n == canonical) return o;
    return std::nullopt;
}

std::string export_name(const Skeleton& s, int j, BvhJointNames names) {
    if (names == BvhJointNames::Classic && s.kind(j) == JointKind::Bone) {
        for (const std::string& a : s.desc(j).aliases)
            if (a.rfind("avatar_", 0) != 0 && s.find(a) == j) return a;
    }
    return s.name(j);
}

}  // namespace

std::string_view bvh_rotation_order_name(BvhRotationOrder order) {
    switch (order) {
        case BvhRotationOrder::XYZ: return "XYZ";
        case BvhRotationOrder::XZY: return "XZY";
        case BvhRotationOrder::YXZ: return "YXZ";
        case BvhRotationOrder::YZX: return "YZX";
        case BvhRotationOrder::ZXY: return "ZXY";
        case BvhRotationOrder::ZYX: return "ZYX";
    }
    return "XYZ";
}

std::optional<BvhRotationOrder> parse_bvh_rotation_order(std::string_view text) {
    if (text.size() != 3) return std::nullopt;
    std::string up(text);
    for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (int i = 0; i < 6; ++i) {
        const auto o = static_cast<BvhRotationOrder>(i);
        if (bvh_rotation_order_name(o) == up) return o;
    }
    return std::nullopt;
}

std::vector<BvhChannel> bvh_rotation_channels(BvhRotationOrder order) {
    std::vector<BvhChannel> out;
    for (int a : axes_of(order))
        out.push_back(static_cast<BvhChannel>(static_cast<int>(BvhChannel::Xrotation) + a));
    return out;
}

Vec3 bvh_euler_degrees(Quat q, BvhRotationOrder order) {
    double x = q.x, y = q.y, z = q.z, w = q.w;
    const double n = std::sqrt(x * x + y * y + z * z + w * w);
    if (!(n > 0.0) || !std::isfinite(n)) return {};
    x /= n, y /= n, z /= n, w /= n;
    const Mat3 r = to_matrix(x, y, z, w);
    // R = R_i(a) · R_j(b) · R_k(c) for the channel order (i, j, k).
    const auto [i, j, k] = axes_of(order);
    const double s = ((j - i + 3) % 3 == 1) ? 1.0 : -1.0;  // cyclic order: +1
    double a = 0, b = 0, c = 0;
    const double cb = std::hypot(r[i][i], r[i][j]);
    b = std::atan2(s * r[i][k], cb);
    if (cb > 1e-9) {
        a = std::atan2(-s * r[j][k], r[k][k]);
        c = std::atan2(-s * r[i][j], r[i][i]);
    } else {
        // Gimbal lock: a = 0 and R_k(c) = R_j(b)ᵀ · R.
        const Mat3 rj = axis_matrix(j, b);
        Mat3 m{};
        for (int p = 0; p < 3; ++p)
            for (int q2 = 0; q2 < 3; ++q2)
                m[p][q2] = rj[0][p] * r[0][q2] + rj[1][p] * r[1][q2] + rj[2][p] * r[2][q2];
        const int l = (k + 1) % 3, nn = (k + 2) % 3;
        c = std::atan2(m[nn][l], m[l][l]);
    }
    double deg[3] = {0, 0, 0};
    deg[i] = a * 180.0 / kPi;
    deg[j] = b * 180.0 / kPi;
    deg[k] = c * 180.0 / kPi;
    return {static_cast<float>(deg[0]), static_cast<float>(deg[1]), static_cast<float>(deg[2])};
}

Quat sl_to_bvh_rotation(Quat q_sl) {
    // The importer: out = F ⊗ in ⊗ F⁻¹ (LL order ~F · in · F), so in = F⁻¹ ⊗ out ⊗ F.
    return hamilton(hamilton(conjugate(kFrameRot), q_sl), kFrameRot);
}

Vec3 sl_to_bvh_inches(Vec3 v) {
    return Vec3{v.y, v.z, v.x} * (1.f / kInchesToMeters);
}

Quat bvh_rotation_to_sl(Vec3 d, BvhRotationOrder order) {
    // bvhStringToOrder: the channel order reversed is the mayaQ order.
    EulerOrder maya = EulerOrder::ZYX;
    switch (order) {
        case BvhRotationOrder::XYZ: maya = EulerOrder::ZYX; break;
        case BvhRotationOrder::XZY: maya = EulerOrder::YZX; break;
        case BvhRotationOrder::YXZ: maya = EulerOrder::ZXY; break;
        case BvhRotationOrder::YZX: maya = EulerOrder::XZY; break;
        case BvhRotationOrder::ZXY: maya = EulerOrder::YXZ; break;
        case BvhRotationOrder::ZYX: maya = EulerOrder::XYZ; break;
    }
    const Quat in = maya_q(d.x, d.y, d.z, maya);
    return ll_mul(ll_mul(conjugate(kFrameRot), in), kFrameRot);
}

Vec3 bvh_inches_to_sl(Vec3 v) { return rotate(v, kFrameRot) * kInchesToMeters; }

std::optional<BvhRotationOrder> bvh_rotation_order_of(const std::vector<BvhChannel>& channels) {
    char o[3];
    int n = 0;
    for (BvhChannel c : channels) {
        if (c < BvhChannel::Xrotation) continue;
        if (n == 3) return std::nullopt;
        o[n++] = static_cast<char>('X' + (static_cast<int>(c) - static_cast<int>(BvhChannel::Xrotation)));
    }
    if (n != 3) return std::nullopt;
    return parse_bvh_rotation_order(std::string_view(o, 3));
}

Result<std::vector<BvhExportJoint>> bvh_export_hierarchy(const Motion& motion,
                                                         const Skeleton& skeleton,
                                                         const BvhExportOptions& options) {
    const int n = skeleton.num_joints();
    std::vector<char> include(static_cast<std::size_t>(n), 0), has_pos(static_cast<std::size_t>(n), 0);
    bool any = false;
    for (const MotionJoint& mj : motion.joints) {
        // Joints the skeleton does not know animate nothing in the viewer: not exported.
        if (mj.rot_keys.empty() && mj.pos_keys.empty()) continue;
        if (mj.joint < 0 || mj.joint >= n) continue;
        for (int p = mj.joint; p >= 0; p = skeleton.parent(p)) {
            include[static_cast<std::size_t>(p)] = 1;
            if (skeleton.parent(p) < 0 && p != skeleton.pelvis())
                return Error{fmt::format("joint '{}' is not below mPelvis (a HUD attachment "
                                         "point?): a BVH hierarchy cannot hold it",
                                         mj.name)};
        }
        if (!mj.pos_keys.empty()) has_pos[static_cast<std::size_t>(mj.joint)] = 1;
        any = true;
    }
    if (!any) return Error{"the motion animates no joint: nothing to export"};
    for (const auto& [name, order] : options.joint_rotation_orders)
        if (skeleton.find(name) < 0)
            return Error{fmt::format("rotation order for '{}': not a joint of the skeleton", name)};

    std::vector<BvhExportJoint> out;
    std::vector<int> index_of(static_cast<std::size_t>(n), -1);
    const int pelvis = skeleton.pelvis();
    for (int j = 0; j < n; ++j) {
        if (!include[static_cast<std::size_t>(j)]) continue;
        BvhExportJoint e;
        e.skeleton_joint = j;
        e.name = export_name(skeleton, j, options.names);
        const int p = skeleton.parent(j);
        e.parent = j == pelvis ? -1 : index_of[static_cast<std::size_t>(p)];
        if (j != pelvis && e.parent < 0)
            return Error{fmt::format("joint '{}': its parent is not exported", skeleton.name(j))};
        e.positions = has_pos[static_cast<std::size_t>(j)] != 0;
        if (j == pelvis)
            e.offset = e.positions ? Vec3{} : sl_to_bvh_inches(skeleton.default_position(pelvis));
        else
            e.offset = sl_to_bvh_inches(skeleton.rest_positions()[static_cast<std::size_t>(j)]);
        e.order = options.rotation_order.value_or(
            linden_order(skeleton.name(j)).value_or(BvhRotationOrder::XZY));
        for (const auto& [name, order] : options.joint_rotation_orders)
            if (skeleton.find(name) == j) e.order = order;
        index_of[static_cast<std::size_t>(j)] = static_cast<int>(out.size());
        out.push_back(std::move(e));
    }
    if (out.empty() || out[0].skeleton_joint != pelvis)
        return Error{"the exported hierarchy does not start at mPelvis"};
    std::vector<char> has_child(out.size(), 0);
    for (const auto& e : out)
        if (e.parent >= 0) has_child[static_cast<std::size_t>(e.parent)] = 1;
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (has_child[i]) continue;
        out[i].end_site = true;
        out[i].end_offset = sl_to_bvh_inches(skeleton.desc(out[i].skeleton_joint).end);
    }
    // Names must map back to their joint and be unique.
    for (std::size_t i = 0; i < out.size(); ++i) {
        for (std::size_t k = 0; k < i; ++k)
            if (out[k].name == out[i].name) out[i].name = skeleton.name(out[i].skeleton_joint);
    }
    return out;
}

Result<BvhMotion> export_bvh(const Motion& motion, const Skeleton& skeleton,
                             const BvhExportOptions& options) {
    if (!(options.fps > 0.f && options.fps <= 1000.f))
        return Error{fmt::format("fps {} is outside (0, 1000]", options.fps)};
    if (!(std::isfinite(motion.duration) && motion.duration >= 0.f))
        return Error{fmt::format("the motion's duration {} is not a finite number >= 0", motion.duration)};
    auto hierarchy = bvh_export_hierarchy(motion, skeleton, options);
    if (!hierarchy) return hierarchy.error();

    const double intervals_d = std::max(1.0, std::round(static_cast<double>(motion.duration) * options.fps));
    const double frames_d = intervals_d + 2.0;  // reference + intervals + 1
    BvhMotion bvh;
    for (const BvhExportJoint& e : *hierarchy) {
        BvhJoint j;
        j.name = e.name;
        j.parent = e.parent;
        j.offset = e.offset;
        if (e.positions) j.channels = {BvhChannel::Xposition, BvhChannel::Yposition, BvhChannel::Zposition};
        for (BvhChannel c : bvh_rotation_channels(e.order)) j.channels.push_back(c);
        j.has_end_site = e.end_site;
        j.end_site_offset = e.end_offset;
        bvh.joints.push_back(std::move(j));
    }
    const std::size_t per_frame = bvh.total_channels();
    if (frames_d > kBvhMaxFrames || frames_d * static_cast<double>(per_frame) > static_cast<double>(kBvhMaxValues))
        return Error{fmt::format("{:.0f} frames of {} channels exceed the BVH limits (duration {} s "
                                 "at {} fps)",
                                 frames_d, per_frame, motion.duration, options.fps)};
    const int intervals = static_cast<int>(intervals_d);
    bvh.num_frames = intervals + 2;
    bvh.frame_time = motion.duration > 0.f
                         ? static_cast<float>(static_cast<double>(motion.duration) / intervals_d)
                         : 1.f / options.fps;
    if (!(bvh.frame_time > 0.f)) return Error{"the frame time underflows: the duration is too small"};
    bvh.values.assign(static_cast<std::size_t>(bvh.num_frames) * per_frame, 0.f);

    auto clip = MotionClip::build(motion, skeleton);
    std::vector<int> track_of(static_cast<std::size_t>(skeleton.num_joints()), -1);
    for (std::size_t t = 0; t < clip->tracks().size(); ++t)
        track_of[static_cast<std::size_t>(clip->tracks()[t].joint)] = static_cast<int>(t);
    SamplingCursor cursor;
    cursor.reset(*clip);
    std::vector<Quat> rots(clip->tracks().size());
    std::vector<Vec3> poss(clip->tracks().size());
    const int pelvis = skeleton.pelvis();
    const Vec3 pelvis_rest = skeleton.default_position(pelvis);

    for (int f = 0; f < bvh.num_frames; ++f) {
        if (f > 0) {
            const double t = std::min(static_cast<double>(f - 1) * bvh.frame_time,
                                      static_cast<double>(motion.duration));
            SamplingJob job{clip.get(), static_cast<float>(t), &cursor, rots, poss};
            if (!job.run()) return Error{"sampling failed"};
        }
        float* row = bvh.values.data() + static_cast<std::size_t>(f) * per_frame;
        for (const BvhExportJoint& e : *hierarchy) {
            const int track = track_of[static_cast<std::size_t>(e.skeleton_joint)];
            const std::uint8_t usage = track >= 0 ? clip->tracks()[static_cast<std::size_t>(track)].usage : 0;
            if (e.positions) {
                Vec3 p = e.skeleton_joint == pelvis
                             ? pelvis_rest
                             : skeleton.rest_positions()[static_cast<std::size_t>(e.skeleton_joint)];
                if (f > 0 && (usage & kUsagePos)) {
                    const Vec3 s = poss[static_cast<std::size_t>(track)];
                    p = e.skeleton_joint == pelvis ? pelvis_rest + s : s;
                }
                const Vec3 b = sl_to_bvh_inches(p);
                *row++ = b.x;
                *row++ = b.y;
                *row++ = b.z;
            }
            Vec3 deg;
            if (f > 0 && (usage & kUsageRot))
                deg = bvh_euler_degrees(sl_to_bvh_rotation(rots[static_cast<std::size_t>(track)]), e.order);
            for (int a : axes_of(e.order)) *row++ = a == 0 ? deg.x : (a == 1 ? deg.y : deg.z);
        }
    }
    return bvh;
}

// ---- sidecar ----

BvhSidecar make_bvh_sidecar(const Motion& m) {
    BvhSidecar s;
    s.priority = m.base_priority;
    s.loop = m.loop;
    s.loop_in = m.loop_in;
    s.loop_out = m.loop_out;
    s.ease_in = m.ease_in;
    s.ease_out = m.ease_out;
    s.hand_pose = m.hand_pose;
    s.emote = m.emote_name;
    s.duration = m.duration;
    for (const MotionJoint& j : m.joints)
        if (j.priority != m.base_priority) s.joint_priorities.emplace_back(j.name, j.priority);
    return s;
}

std::string write_bvh_sidecar(const BvhSidecar& s) {
    using json_read::num;
    nlohmann::ordered_json j;
    j["format"] = "slanim-bvh-sidecar";
    j["version"] = 1;
    if (s.priority) j["priority"] = *s.priority;
    if (s.loop) j["loop"] = *s.loop;
    if (s.loop_in) j["loop_in"] = num(*s.loop_in);
    if (s.loop_out) j["loop_out"] = num(*s.loop_out);
    if (s.ease_in) j["ease_in"] = num(*s.ease_in);
    if (s.ease_out) j["ease_out"] = num(*s.ease_out);
    if (s.hand_pose) j["hand_pose"] = *s.hand_pose;
    if (s.emote) j["emote"] = *s.emote;
    if (s.duration) j["duration"] = num(*s.duration);
    if (!s.joint_priorities.empty()) {
        nlohmann::ordered_json jp = nlohmann::ordered_json::object();
        for (const auto& [name, p] : s.joint_priorities) jp[name] = p;
        j["joint_priorities"] = std::move(jp);
    }
    return j.dump(2) + "\n";
}

Result<BvhSidecar> parse_bvh_sidecar(std::string_view text) {
    namespace jr = json_read;
    auto parsed = jr::parse(text);
    if (!parsed) return parsed.error();
    const jr::Json& j = *parsed;
    BvhSidecar s;
    try {
        if (!j.is_object()) jr::fail("$", "an object", j);
        for (auto it = j.begin(); it != j.end(); ++it) {
            const std::string& k = it.key();
            const jr::Json& v = it.value();
            const std::string path = jr::key_path("$", k);
            if (k == "format") {
                if (jr::string(v, path) != "slanim-bvh-sidecar") jr::fail(path, "\"slanim-bvh-sidecar\"", v);
            } else if (k == "version") {
                jr::integer(v, path, 1, 1, "1");
            } else if (k == "priority") {
                s.priority = static_cast<int>(jr::integer(v, path, 0, 6, "an integer 0..6"));
            } else if (k == "loop") {
                s.loop = jr::boolean(v, path);
            } else if (k == "loop_in" || k == "loop_out" || k == "ease_in" || k == "ease_out" ||
                       k == "duration") {
                const float f = jr::real(v, path, 0.0, 3.0e38, "a number of seconds >= 0");
                (k == "loop_in" ? s.loop_in : k == "loop_out" ? s.loop_out : k == "ease_in" ? s.ease_in
                                              : k == "ease_out" ? s.ease_out : s.duration) = f;
            } else if (k == "hand_pose") {
                s.hand_pose = static_cast<std::uint32_t>(jr::integer(v, path, 0, 14, "an integer 0..14"));
            } else if (k == "emote") {
                s.emote = jr::string(v, path);
            } else if (k == "joint_priorities") {
                if (!v.is_object()) jr::fail(path, "an object of joint name: priority", v);
                for (auto jt = v.begin(); jt != v.end(); ++jt)
                    s.joint_priorities.emplace_back(
                        jt.key(), static_cast<int>(jr::integer(jt.value(), jr::key_path(path, jt.key()),
                                                               -1, 6, "an integer -1..6")));
            } else {
                throw jr::ReadError{fmt::format("{}: unknown key (expected format, version, priority, "
                                                "loop, loop_in, loop_out, ease_in, ease_out, "
                                                "hand_pose, emote, duration, joint_priorities)",
                                                path)};
            }
        }
    } catch (const jr::ReadError& e) {
        return Error{e.message};
    }
    return s;
}

Result<BvhSidecar> load_bvh_sidecar(const std::string& path) {
    auto bytes = read_file_bytes(path);
    if (!bytes) return bytes.error();
    auto s = parse_bvh_sidecar(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
    if (!s) return Error{fmt::format("{}: {}", path, s.error().message), s.error().offset};
    return s;
}

void apply_bvh_sidecar_defaults(const BvhSidecar& s, const BvhMotion& bvh, BvhImportOptions& o) {
    const bool legacy = o.importer == BvhImporter::LindenLegacy;
    const float duration = legacy ? static_cast<float>(bvh.num_frames) * bvh.frame_time
                                  : std::max(static_cast<float>(bvh.num_frames - 2), 1.f) * bvh.frame_time;
    const auto clamp_t = [&](float t) { return std::clamp(t, 0.f, duration); };
    if (!o.priority && s.priority) o.priority = s.priority;
    if (!o.loop && s.loop) o.loop = s.loop;
    if (!o.loop_in && s.loop_in) o.loop_in = clamp_t(*s.loop_in);
    if (!o.loop_out && s.loop_out) o.loop_out = clamp_t(*s.loop_out);
    if (!o.ease_in && s.ease_in) o.ease_in = s.ease_in;
    if (!o.ease_out && s.ease_out) o.ease_out = s.ease_out;
    if (!o.hand_pose && s.hand_pose) o.hand_pose = s.hand_pose;
    if (!o.emote && s.emote) o.emote = s.emote;
}

void apply_bvh_sidecar_joint_priorities(const BvhSidecar& s, Motion& m) {
    const int shift = m.base_priority - s.priority.value_or(m.base_priority);
    for (const auto& [name, p] : s.joint_priorities) {
        for (MotionJoint& j : m.joints) {
            if (j.name != name) continue;
            j.priority = p < 0 ? -1 : std::clamp(p + shift, 0, 6);
        }
    }
    m.max_priority = m.base_priority;
    for (const MotionJoint& j : m.joints) m.max_priority = std::max(m.max_priority, j.priority);
}

}  // namespace slanim

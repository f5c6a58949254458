// SPDX-License-Identifier: MIT
// LLBVHLoader (loadBVHFile / applyTranslations / optimize / serialize), spec §8.
#include "slanim/formats/bvh_import.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "slanim/core/quantize.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/anim_codec.hpp"

namespace slanim {

namespace {

constexpr float kInchesToMeters = 0.02540005f;                      // INCHES_TO_METERS
constexpr float kPositionKeyframeThresholdSq = 0.03f * 0.03f;        // raw BVH units
constexpr float kRotationKeyframeThreshold = 0.01f;
constexpr float kPositionMotionThresholdSq = 0.001f * 0.001f;
constexpr float kRotationMotionThreshold = 0.001f;
constexpr float kMaxBvhDuration = 60.f;  // the preview refuses longer files

/// The frame matrix rows (0,1,0), (0,0,1), (1,0,0): BVH x → SL y, y → z, z → x, i.e. a
/// rotation of 120° about (1,1,1).
constexpr Quat kFrameRot{0.5f, 0.5f, 0.5f, 0.5f};

struct Key {
    Vec3 pos;
    float rot[3] = {0.f, 0.f, 0.f};  // indexed by axis: X, Y, Z (degrees)
    bool ignore_pos = false, ignore_rot = false;
};

struct AnimJoint {
    std::string name, out_name;
    int channels = 0;
    char order[3] = {'X', 'Y', 'Z'};  // rotation axes in channel order
    EulerOrder maya_order = EulerOrder::ZYX;
    int child_tree_max_depth = 0;
    bool ignore = false, ignore_positions = true, relative = false;
    std::vector<Key> keys;
};

/// `bvhStringToOrder`: the channel order reversed, as a mayaQ order.
EulerOrder maya_order_of(const char o[3]) {
    const char r[3] = {o[2], o[1], o[0]};
    const auto is = [&](const char* s) { return r[0] == s[0] && r[1] == s[1] && r[2] == s[2]; };
    if (is("XYZ")) return EulerOrder::XYZ;
    if (is("YZX")) return EulerOrder::YZX;
    if (is("ZXY")) return EulerOrder::ZXY;
    if (is("XZY")) return EulerOrder::XZY;
    if (is("YXZ")) return EulerOrder::YXZ;
    return EulerOrder::ZYX;
}

Quat key_rot(const AnimJoint& j, const Key& k) {
    return maya_q(k.rot[0], k.rot[1], k.rot[2], j.maya_order);
}

/// |X·q1 − X·q2| + |Y·q1 − Y·q2|: how far the rotated X and Y axes moved.
float rot_metric(Quat a, Quat b) {
    return length(rotate({1.f, 0.f, 0.f}, a) - rotate({1.f, 0.f, 0.f}, b)) +
           length(rotate({0.f, 1.f, 0.f}, a) - rotate({0.f, 1.f, 0.f}, b));
}

float dist_sq(Vec3 a, Vec3 b) {
    const Vec3 d = a - b;
    return dot(d, d);
}

/// `LLBVHLoader::optimize` for one BVH joint (reduce_keys on its frames): flags the keys to drop,
/// returns whether the joint moves.
bool optimize_joint(AnimJoint& joint, bool reference_frame) {
    std::vector<Quat> rot(joint.keys.size());
    std::vector<Vec3> pos(joint.keys.size());
    for (std::size_t i = 0; i < joint.keys.size(); ++i) {
        rot[i] = key_rot(joint, joint.keys[i]);
        pos[i] = joint.keys[i].pos;
    }
    KeyReductionInput in;
    in.rotations = rot;
    in.positions = pos;
    in.child_tree_max_depth = joint.child_tree_max_depth;
    in.reference_frame = reference_frame;
    in.current_rules = reference_frame;
    const KeyReduction r = reduce_keys(in);
    for (std::size_t i = 0; i < joint.keys.size(); ++i) {
        joint.keys[i].ignore_rot = joint.keys[i].ignore_rot || !r.keep_rot[i];
        joint.keys[i].ignore_pos = joint.keys[i].ignore_pos || !r.keep_pos[i];
    }
    return r.moves;
}

/// reduce_keys' optional second pass: the curve playback makes of the kept keys (ll_nlerp /
/// lerp) is compared with the curve of all the frames at every dropped frame and at the quarter
/// points of every frame interval; while some run between two kept keys misses by
/// verify_fraction × the threshold or more, the dropped frame nearest its worst point is kept
/// again.
void verify_dropped(const KeyReductionInput& in, float rot_threshold, KeyReduction& out) {
    const std::size_t n = in.rotations.size();
    const auto at = [&](std::size_t i) { return in.times.empty() ? static_cast<float>(i) : in.times[i]; };
    const float rot_limit = rot_threshold * in.verify_fraction;
    const float pos_limit_sq = kPositionKeyframeThresholdSq * in.verify_fraction * in.verify_fraction;
    for (int pass = 0; pass < 2; ++pass) {
        std::vector<bool>& keep = pass == 0 ? out.keep_rot : out.keep_pos;
        // How far the kept keys a, b miss the frames' curve at fraction f of frame interval i → i+1.
        const auto miss = [&](std::size_t a, std::size_t b, std::size_t i, float f) {
            const float t = at(i) + f * (at(i + 1) - at(i));
            const float u = (t - at(a)) / (at(b) - at(a));
            if (pass == 0) {
                const Quat want = f == 0.f ? in.rotations[i] : ll_nlerp(f, in.rotations[i], in.rotations[i + 1]);
                return rot_metric(ll_nlerp(u, in.rotations[a], in.rotations[b]), want) / rot_limit;
            }
            const Vec3 want = lerp(in.positions[i], in.positions[i + 1], f) * in.position_scale;
            return std::sqrt(dist_sq(lerp(in.positions[a], in.positions[b], u) * in.position_scale, want) / pos_limit_sq);
        };
        for (bool changed = true; changed;) {
            changed = false;
            std::size_t a = 0;
            while (a < n && !keep[a]) ++a;
            while (a < n) {
                std::size_t b = a + 1;
                while (b < n && !keep[b]) ++b;
                if (b >= n) break;
                float worst = 1.f;  // in units of the limit
                std::size_t worst_i = n;
                for (std::size_t i = a; i < b && b > a + 1; ++i) {
                    for (const float f : {0.f, 0.25f, 0.5f, 0.75f}) {
                        if (f == 0.f && i == a) continue;  // a kept key
                        const float d = miss(a, b, i, f);
                        if (d < worst) continue;
                        worst = d;
                        // The dropped frame nearest that point (a and b are kept).
                        worst_i = f <= 0.5f ? (i == a ? i + 1 : i) : (i + 1 == b ? i : i + 1);
                    }
                }
                if (worst_i < n) keep[worst_i] = true, changed = true;
                a = b;
            }
        }
    }
}

}  // namespace

KeyReduction reduce_keys(const KeyReductionInput& in) {
    const std::size_t n = in.rotations.size();
    KeyReduction out;
    out.keep_rot.assign(n, true);
    out.keep_pos.assign(n, true);
    if (n == 0 || in.positions.size() != n || (!in.times.empty() && in.times.size() != n)) return out;
    const auto pos_at = [&](std::size_t i) { return in.positions[i] * in.position_scale; };
    bool pos_changed = false, rot_changed = false;
    const Vec3 first_pos = pos_at(0);
    const Quat first_rot = in.rotations[0];
    std::size_t ki = 0;
    if (n == 1) {
        rot_changed = true;  // a single frame is always output
    } else if (in.reference_frame) {
        out.keep_rot[0] = out.keep_pos[0] = false;  // the reference frame
        ki = 1;
    }
    std::size_t prev = ki, good_pos = ki, good_rot = ki, max_key = ki;
    int pos_considered = 2, rot_considered = 2;
    // The prediction of `prev` from the last kept key and the current one: 1/n of the way back
    // for uniform frames (the viewer's rule), the time ratio otherwise.
    const auto back_fraction = [&](std::size_t good, int considered) {
        if (in.times.empty()) return 1.f / static_cast<float>(considered);
        return (in.times[ki] - in.times[prev]) / (in.times[ki] - in.times[good]);
    };
    const float rot_threshold =
        kRotationKeyframeThreshold / std::max(static_cast<float>(in.child_tree_max_depth) * 0.33f, 1.f);
    double diff_max = 0.0;
    for (; ki < n; ++ki) {
        if (prev == good_pos) {
            if (dist_sq(pos_at(prev), first_pos) > kPositionMotionThresholdSq) pos_changed = true;
        } else {
            const Vec3 test = pos_at(prev), last_good = pos_at(good_pos), cur = pos_at(ki);
            const Vec3 interp = lerp(cur, last_good, back_fraction(good_pos, pos_considered));
            if (dist_sq(cur, first_pos) > kPositionMotionThresholdSq) pos_changed = true;
            if (dist_sq(interp, test) < kPositionKeyframeThresholdSq) {
                out.keep_pos[prev] = false;
                ++pos_considered;
            } else {
                pos_considered = 2;
                good_pos = prev;
            }
        }
        if (prev == good_rot) {
            if (rot_metric(first_rot, in.rotations[prev]) > kRotationMotionThreshold) rot_changed = true;
        } else {
            const Quat test = in.rotations[prev];
            const Quat last_good = in.rotations[good_rot];
            const Quat cur = in.rotations[ki];
            const Quat interp = ll_lerp(back_fraction(good_rot, rot_considered), cur, last_good);
            if (rot_metric(first_rot, test) > kRotationMotionThreshold) rot_changed = true;
            const float rot_test = rot_metric(interp, test);
            if (rot_test >= rot_threshold || (in.current_rules && ki + 1 == n && rot_considered > 2)) {
                rot_considered = 2;
                good_rot = prev;
                // Restore the most deviating frame seen since the last key (the viewer stores
                // the iterator one past the tested frame).
                if (diff_max > 0.0 && in.current_rules) {
                    out.keep_rot[max_key] = true;
                    diff_max = 0.0;
                }
            } else {
                out.keep_rot[prev] = false;
                ++rot_considered;
                if (rot_test > diff_max) {
                    diff_max = rot_test;
                    max_key = ki;
                }
            }
        }
        prev = ki;
    }
    out.moves = pos_changed || rot_changed;
    if (in.verify_fraction > 0.f) verify_dropped(in, rot_threshold, out);
    return out;
}

Result<BvhImportResult> import_bvh(const BvhMotion& bvh, const Skeleton& skeleton,
                                   const BvhImportOptions& o) {
    BvhImportResult out;
    if (bvh.joints.empty() || bvh.num_frames < 1) return Error{"the BVH has no joints or frames"};

    // Root: "hip" or an alias of the same joint (E_ST_BAD_ROOT).
    const int pelvis = skeleton.find("hip");
    const int root = skeleton.find(bvh.joints[0].name);
    if (pelvis < 0 || root != pelvis)
        return Error{fmt::format("line {}: the ROOT joint '{}' is not hip or another name of "
                                 "mPelvis (the viewer refuses it: \"Illegal ROOT joint\")",
                                 bvh.joints[0].line, bvh.joints[0].name),
                     0, bvh.joints[0].line};

    // loadBVHFile: channels, rotation order, child tree depth, keys.
    std::vector<AnimJoint> joints(bvh.joints.size());
    for (std::size_t i = 0; i < bvh.joints.size(); ++i) {
        const BvhJoint& bj = bvh.joints[i];
        AnimJoint& j = joints[i];
        j.name = bj.name;
        j.channels = static_cast<int>(bj.channels.size());
        int r = 0;
        for (BvhChannel c : bj.channels) {
            if (c == BvhChannel::Xrotation || c == BvhChannel::Yrotation || c == BvhChannel::Zrotation) {
                if (r < 3)
                    j.order[r] = c == BvhChannel::Xrotation ? 'X' : (c == BvhChannel::Yrotation ? 'Y' : 'Z');
                ++r;
            }
        }
        if (r < 3)
            return Error{fmt::format("line {}: joint '{}' has {} rotation channel(s); the viewer "
                                     "needs three (E_ST_NO_ROTATION)",
                                     bj.line, bj.name, r),
                         0, bj.line};
        if (j.channels != 3 && j.channels != 6)
            return Error{fmt::format("line {}: joint '{}' has {} channels; the viewer reads 3 "
                                     "(rotation) or 6 (position then rotation)",
                                     bj.line, bj.name, j.channels),
                         0, bj.line};
        if (j.channels == 6 && (bj.channels[0] != BvhChannel::Xposition ||
                                bj.channels[1] != BvhChannel::Yposition ||
                                bj.channels[2] != BvhChannel::Zposition))
            out.warnings.push_back(fmt::format(
                "joint '{}': the viewer reads the first three of 6 channels as X Y Z position "
                "whatever their names",
                bj.name));
        j.maya_order = maya_order_of(j.order);
        // Every ancestor's deepest descendant distance (mChildTreeMaxDepth).
        int depth = 1;
        for (int p = bj.parent; p >= 0; p = bvh.joints[p].parent, ++depth)
            joints[p].child_tree_max_depth = std::max(joints[p].child_tree_max_depth, depth);
    }
    std::size_t offset = 0;  // of joint i's first channel within a frame row
    for (std::size_t i = 0; i < bvh.joints.size(); ++i) {
        AnimJoint& j = joints[i];
        j.keys.resize(static_cast<std::size_t>(bvh.num_frames));
        for (int f = 0; f < bvh.num_frames; ++f) {
            const float* v = bvh.frame_values(f).data() + offset;
            Key& k = j.keys[static_cast<std::size_t>(f)];
            if (j.channels == 6) {
                k.pos = {v[0], v[1], v[2]};
                v += 3;
            }
            for (int a = 0; a < 3; ++a) k.rot[j.order[a] - 'X'] = v[a];
        }
        offset += static_cast<std::size_t>(j.channels);
    }

    const bool legacy = o.importer == BvhImporter::LindenLegacy;
    // Duration: frame 0 is a reference frame and the last frame marks the end; the legacy
    // loader plays every frame for a whole frame time.
    const float duration =
        legacy ? static_cast<float>(bvh.num_frames) * bvh.frame_time
               : std::max(static_cast<float>(bvh.num_frames - 2), 1.f) * bvh.frame_time;
    if (!(duration <= kMaxBvhDuration))
        return Error{fmt::format("the animation lasts {:.2f} s; the viewer refuses BVH files "
                                 "longer than 60 s",
                                 duration)};

    // applyTranslations: names through the avatar's alias map, ignored joints.
    for (std::size_t ji = 0; ji < joints.size(); ++ji) {
        AnimJoint& j = joints[ji];
        // Linden's old table also ignored Poser's figureHair (no Linden file animates mSkull).
        if (std::find(o.ignore_joints.begin(), o.ignore_joints.end(), j.name) != o.ignore_joints.end() ||
            (legacy && j.name == "figureHair")) {
            j.ignore = true;
            continue;
        }
        const int sj = skeleton.find(j.name);
        if (sj < 0) {
            if (!o.skip_unknown_joints)
                return Error{fmt::format("joint '{}' is not an SL joint: the viewer would emit it "
                                         "and then reject the file (use skip_unknown_joints / "
                                         "--skip-unknown to drop it)",
                                         j.name)};
            out.warnings.push_back(fmt::format("joint '{}' is not an SL joint: dropped", j.name));
            j.ignore = true;
            continue;
        }
        j.out_name = skeleton.name(sj);
        // The legacy serializer writes position keys for the first joint only.
        j.ignore_positions = legacy ? (ji != 0 || j.channels == 3) : j.channels == 3;
        j.relative = sj == pelvis;  // mRelativePositionKey / mRelativeRotationKey
    }

    Motion& m = out.motion;
    m.base_priority = 2;
    m.loop = false;
    m.loop_in = 0.f;
    m.loop_out = duration;
    m.ease_in = 0.3f;
    m.ease_out = 0.3f;
    m.hand_pose = 1;
    m.duration = duration;

    // optimize: ease scaling, then key reduction and dropping still joints.
    if (m.ease_in + m.ease_out > duration && duration != 0.f) {
        const float factor = duration / (m.ease_in + m.ease_out);
        m.ease_in *= factor;
        m.ease_out *= factor;
    }
    for (AnimJoint& j : joints) {
        if (j.ignore) continue;
        bool moves = true;
        if (o.keep_all_frames) {
            if (j.keys.size() > 1 && !legacy) j.keys[0].ignore_pos = j.keys[0].ignore_rot = true;
        } else {
            moves = optimize_joint(j, !legacy);
        }
        if (!moves && !legacy) j.ignore = true;
    }

    // serialize: LL-order products, inches to metres, key time = (frame − 1) × frame time.
    const Quat frame_inv = conjugate(kFrameRot);
    for (AnimJoint& j : joints) {
        if (j.ignore) continue;
        MotionJoint mj;
        mj.name = j.out_name;
        mj.joint = skeleton.find(j.out_name);
        mj.priority = m.base_priority;
        Quat first_rot = Quat::identity();
        Quat offset_rot = Quat::identity();  // the old table's `offset` matrix
        Vec3 rel_key, rel_pos;  // mRelativePositionKey's frame-0 value; mRelativePosition
        if (j.relative && !legacy) {
            first_rot = key_rot(j, j.keys[0]);
            rel_key = j.keys[0].pos;
        } else if (j.relative) {
            offset_rot = o.legacy_pelvis_offset;
            if (o.legacy_pelvis_origin == LegacyPelvisOrigin::FirstFrame)
                rel_key = j.keys[0].pos;
            else
                rel_pos = skeleton.default_position(pelvis);
        }
        const Quat inv_first = conjugate(first_rot);
        for (std::size_t f = 0; f < j.keys.size(); ++f) {
            const Key& k = j.keys[f];
            const float t = legacy ? static_cast<float>(f + 1) * bvh.frame_time
                                   : std::max(static_cast<float>(f) - 1.f, 0.f) * bvh.frame_time;
            if (!k.ignore_rot) {
                const Quat in = key_rot(j, k);
                const Quat out_rot = ll_mul(
                    ll_mul(ll_mul(ll_mul(frame_inv, in), inv_first), kFrameRot), offset_rot);
                mj.rot_keys.push_back({t, out_rot});
            }
            if (!j.ignore_positions && !k.ignore_pos) {
                const Vec3 in_pos = rotate(k.pos - rel_key, inv_first);
                Vec3 p = rotate(rotate(in_pos, kFrameRot), offset_rot) * kInchesToMeters - rel_pos;
                const Vec3 c{std::clamp(p.x, -kMaxPelvisOffset, kMaxPelvisOffset),
                             std::clamp(p.y, -kMaxPelvisOffset, kMaxPelvisOffset),
                             std::clamp(p.z, -kMaxPelvisOffset, kMaxPelvisOffset)};
                if (!(c == p))
                    out.warnings.push_back(fmt::format(
                        "joint '{}' frame {}: position clamped to ±5 m", j.name, f));
                mj.pos_keys.push_back({t, c});
            }
        }
        m.joints.push_back(std::move(mj));
    }
    if (m.joints.empty()) return Error{"no joint of the BVH moves: nothing to import"};

    // The preview deserializes the serialized buffer: quantize as the viewer does.
    m = decode_motion(encode_motion(m), skeleton);

    // UI overrides (LLFloaterBvhPreview setters), applied to the loaded motion.
    if (o.priority) {
        if (*o.priority < 0 || *o.priority > 6)
            return Error{fmt::format("priority {} is outside 0..6", *o.priority)};
        const int delta = *o.priority - m.base_priority;
        m.base_priority = *o.priority;
        for (MotionJoint& mj : m.joints) mj.priority = std::clamp(mj.priority + delta, 0, 6);
    }
    if (o.loop) m.loop = *o.loop;
    if (o.loop_in) m.loop_in = *o.loop_in;
    if (o.loop_out) m.loop_out = *o.loop_out;
    if (!(m.loop_in >= 0.f && m.loop_in <= m.loop_out && m.loop_out <= duration))
        return Error{fmt::format("loop points {:.3f}..{:.3f} s must satisfy 0 <= in <= out <= "
                                 "duration ({:.3f} s)",
                                 m.loop_in, m.loop_out, duration)};
    if (o.ease_in) m.ease_in = *o.ease_in;
    if (o.ease_out) m.ease_out = *o.ease_out;
    if (!(m.ease_in >= 0.f && m.ease_out >= 0.f))
        return Error{"ease durations must be >= 0 s"};
    if (o.hand_pose) {
        if (*o.hand_pose > 13) return Error{fmt::format("hand pose {} is outside 0..13", *o.hand_pose)};
        m.hand_pose = *o.hand_pose;
    }
    if (o.emote) m.emote_name = *o.emote;
    m.max_priority = m.base_priority;
    for (const MotionJoint& mj : m.joints) m.max_priority = std::max(m.max_priority, mj.priority);
    return out;
}

}  // namespace slanim

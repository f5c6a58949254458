// SPDX-License-Identifier: MIT
#include "slanim/gfx/avatar_scene.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <numbers>

#include "slanim/core/clip.hpp"
#include "slanim/runtime/ik_feature.hpp"
#include "slanim/runtime/joint_owners.hpp"

namespace slanim::gfx {

namespace {

constexpr Rgba kSkin{0.80f, 0.66f, 0.56f, 1.f};
constexpr Rgba kEyes{0.22f, 0.28f, 0.38f, 1.f};
constexpr float kEyeRadius = 0.012f;
constexpr Vec3 kEyeOffset{0.02f, 0.f, 0.f};  // eyeball centre ahead of the eye joint
constexpr float kLineStep = 12.f;            // stb_easy_font line height at scale 1

Vec3 normalized(Vec3 v) {
    const float l = length(v);
    return l > 0.f ? v * (1.f / l) : Vec3{0.f, 0.f, 1.f};
}

Rgba with_alpha(Rgba c, float a) { return {c.r, c.g, c.b, a}; }

float next_line(float y, float scale) { return y + kLineStep * scale + 4.f; }

}  // namespace

// ---- GeneratedBody --------------------------------------------------------------------------

GeneratedBody::GeneratedBody(const Skeleton& skeleton, int rings, int segments) {
    rings = std::max(rings, 3);
    segments = std::max(segments, 3);
    for (int j = skeleton.num_bones(); j < skeleton.num_bones() + skeleton.num_volumes(); ++j)
        parts_.push_back({j, skeleton.desc(j).scale, false});
    for (const char* eye : {"mEyeLeft", "mEyeRight"}) {
        const int j = skeleton.find(eye);
        if (j >= 0 && skeleton.kind(j) == JointKind::Bone)
            parts_.push_back({j, {kEyeRadius, kEyeRadius, kEyeRadius}, true});
    }
    // A latitude/longitude unit sphere (seam and poles duplicated, so every vertex has one
    // normal); z is the polar axis.
    const float pi = std::numbers::pi_v<float>;
    for (int r = 0; r <= rings; ++r) {
        const float theta = pi * static_cast<float>(r) / static_cast<float>(rings);
        for (int s = 0; s <= segments; ++s) {
            const float phi = 2.f * pi * static_cast<float>(s) / static_cast<float>(segments);
            unit_.push_back({std::sin(theta) * std::cos(phi), std::sin(theta) * std::sin(phi),
                             std::cos(theta)});
        }
    }
    const auto row = static_cast<std::uint32_t>(segments + 1);
    for (std::uint32_t r = 0; r < static_cast<std::uint32_t>(rings); ++r)
        for (std::uint32_t s = 0; s < static_cast<std::uint32_t>(segments); ++s) {
            const std::uint32_t a = r * row + s, b = a + row;
            // Counter-clockwise seen from outside.
            unit_indices_.insert(unit_indices_.end(), {a, b, a + 1, a + 1, b, b + 1});
        }
    std::size_t body_parts = 0, eye_parts = 0;
    for (const Part& p : parts_) (p.eye ? eye_parts : body_parts) += 1;
    const auto fill_indices = [&](std::vector<std::uint32_t>& idx, std::size_t parts) {
        for (std::size_t k = 0; k < parts; ++k) {
            const auto base = static_cast<std::uint32_t>(k * unit_.size());
            for (std::uint32_t i : unit_indices_) idx.push_back(base + i);
        }
    };
    fill_indices(body_idx_, body_parts);
    fill_indices(eye_idx_, eye_parts);
    body_pos_.resize(body_parts * unit_.size());
    body_nrm_.resize(body_pos_.size());
    eye_pos_.resize(eye_parts * unit_.size());
    eye_nrm_.resize(eye_pos_.size());
    if (body_parts) meshes_.push_back({body_pos_, body_nrm_, body_idx_, {}, kSkin});
    if (eye_parts) meshes_.push_back({eye_pos_, eye_nrm_, eye_idx_, {}, kEyes});
}

void GeneratedBody::update(std::span<const Vec3> model_positions,
                           std::span<const Quat> model_rotations) {
    std::size_t body_v = 0, eye_v = 0;
    for (const Part& part : parts_) {
        std::vector<Vec3>& pos = part.eye ? eye_pos_ : body_pos_;
        std::vector<Vec3>& nrm = part.eye ? eye_nrm_ : body_nrm_;
        std::size_t& v = part.eye ? eye_v : body_v;
        const auto j = static_cast<std::size_t>(part.joint);
        if (j >= model_positions.size() || j >= model_rotations.size()) {
            v += unit_.size();
            continue;
        }
        const Quat r = model_rotations[j];
        const Vec3 centre = model_positions[j] + (part.eye ? rotate(kEyeOffset, r) : Vec3{});
        const Vec3 inv{1.f / part.radii.x, 1.f / part.radii.y, 1.f / part.radii.z};
        for (const Vec3& u : unit_) {
            pos[v] = centre + rotate(scaled(u, part.radii), r);
            // An ellipsoid's normal at radii ⊙ u is along u ⊘ radii.
            nrm[v] = rotate(normalized(scaled(u, inv)), r);
            ++v;
        }
    }
}

// ---- owners ---------------------------------------------------------------------------------

Rgba palette::owner_colour(int i) {
    static constexpr std::array<Rgba, 10> kColours = {{
        {0.30f, 0.70f, 1.00f, 1.f},  // blue
        {1.00f, 0.55f, 0.20f, 1.f},  // orange
        {0.45f, 0.90f, 0.40f, 1.f},  // green
        {0.95f, 0.40f, 0.75f, 1.f},  // pink
        {0.70f, 0.55f, 1.00f, 1.f},  // violet
        {1.00f, 0.90f, 0.30f, 1.f},  // yellow
        {0.30f, 0.95f, 0.90f, 1.f},  // cyan
        {0.95f, 0.35f, 0.35f, 1.f},  // red
        {0.75f, 0.85f, 0.55f, 1.f},  // olive
        {0.85f, 0.70f, 0.50f, 1.f},  // tan
    }};
    return kColours[static_cast<std::size_t>(i < 0 ? 0 : i) % kColours.size()];
}

OwnerMap compute_owners(const MotionController& controller) {
    JointOwners owners = compute_joint_owners(controller);
    OwnerMap out;
    out.owners.reserve(owners.owners.size());
    for (JointOwners::Owner& o : owners.owners) {
        OwnerMap::Owner ow;
        ow.name = std::move(o.name);
        ow.base_priority = o.base_priority;
        ow.min_priority = o.min_priority;
        ow.max_priority = o.max_priority;
        ow.joints = o.joints;
        ow.colour = palette::owner_colour(static_cast<int>(out.owners.size()));
        ow.instance = o.instance;
        out.owners.push_back(std::move(ow));
    }
    out.joint_owner = std::move(owners.joint_owner);
    out.unowned_bones = owners.unowned_bones;
    return out;
}

// ---- overlays -------------------------------------------------------------------------------

void add_skeleton(Scene& scene, const Skeleton& skeleton, const ModelPose& pose,
                  const OwnerMap& owners, bool by_owner, Rgba colour) {
    const int n = std::min(skeleton.num_bones(), static_cast<int>(pose.positions.size()));
    const auto owner = [&](int j) {
        return static_cast<std::size_t>(j) < owners.joint_owner.size()
                   ? owners.joint_owner[static_cast<std::size_t>(j)]
                   : -1;
    };
    const auto shown = [&](int j) { return !skeleton.desc(j).extended || owner(j) >= 0; };
    const auto colour_of = [&](int j) {
        if (!by_owner) return colour;
        const int o = owner(j);
        return o >= 0 ? owners.owners[static_cast<std::size_t>(o)].colour : palette::kUnowned;
    };
    for (int j = 0; j < n; ++j) {
        if (!shown(j)) continue;
        const bool extended = skeleton.desc(j).extended;
        const int p = skeleton.parent(j);
        if (p >= 0 && p < n && skeleton.kind(p) == JointKind::Bone)
            scene.lines.push_back({pose.positions[static_cast<std::size_t>(p)],
                                   pose.positions[static_cast<std::size_t>(j)],
                                   with_alpha(colour_of(j), 0.9f), extended ? 1.5f : 2.5f});
    }
    for (int j = 0; j < n; ++j) {
        if (!shown(j)) continue;
        const bool extended = skeleton.desc(j).extended;
        scene.points.push_back(
            {pose.positions[static_cast<std::size_t>(j)], colour_of(j), extended ? 4.f : 8.f});
    }
}

float add_owner_legend(Scene& scene, const OwnerMap& owners, float x, float y, float scale) {
    scene.labels.push_back(Label::at("joint owners:", x, y, palette::kText, scale));
    y = next_line(y, scale);
    for (const OwnerMap::Owner& o : owners.owners) {
        std::string text = fmt::format("{} (priority {})", o.name, o.base_priority);
        if (o.min_priority != o.base_priority || o.max_priority != o.base_priority)
            text += o.min_priority == o.max_priority
                        ? fmt::format(" joints at {}", o.min_priority)
                        : fmt::format(" joints at {}..{}", o.min_priority, o.max_priority);
        text += fmt::format(", {} joint{}", o.joints, o.joints == 1 ? "" : "s");
        scene.labels.push_back(Label::at(text, x, y, o.colour, scale));
        y = next_line(y, scale);
    }
    scene.labels.push_back(Label::at(fmt::format("not animated, {} bone{}", owners.unowned_bones,
                                        owners.unowned_bones == 1 ? "" : "s"),
                            x, y, palette::kUnowned, scale));
    return next_line(y, scale);
}

float add_constraints(Scene& scene, const MotionController& controller, const Skeleton& skeleton,
                      float x, float y, float scale) {
    bool any = false;
    // Oldest first, the order the ik phase applies them in.
    const auto active = controller.active();
    for (std::size_t k = active.size(); k-- > 0;) {
        const MotionInstance& m = *active[k];
        if (!m.evaluate || !m.ik) continue;
        const auto& defs = m.ik->constraints.constraints;
        if (defs.empty() || m.ik->reports.size() != defs.size()) continue;
        if (!any) {
            scene.labels.push_back(Label::at("constraints:", x, y, palette::kText, scale));
            y = next_line(y, scale);
            any = true;
        }
        for (std::size_t ci = 0; ci < defs.size(); ++ci) {
            const ik::ConstraintDef& d = defs[ci];
            const ik::ConstraintReport& r = m.ik->reports[ci];
            const bool geometry = r.outcome == ik::ConstraintOutcome::Applied ||
                                  r.outcome == ik::ConstraintOutcome::ZeroWeight ||
                                  r.outcome == ik::ConstraintOutcome::NoPosition;
            Rgba state = palette::kInactive;
            if (r.outcome == ik::ConstraintOutcome::Applied)
                state = r.reachable ? palette::kApplied : palette::kUnreachable;
            else if (r.outcome == ik::ConstraintOutcome::ZeroWeight)
                state = palette::kZeroWeight;
            const bool plane = d.type == ConstraintType::Plane;
            const std::string target =
                d.ground ? std::string("GROUND")
                         : (d.target_volume >= 0 ? skeleton.name(d.target_volume) : "?");
            std::string text = fmt::format(
                "{} #{} {} -> {}{}: {}", m.clip->name(), d.index,
                d.source_volume >= 0 ? skeleton.name(d.source_volume) : "?", target,
                plane ? " (plane)" : "", ik::outcome_name(r.outcome));
            if (geometry) {
                const float err = r.outcome == ik::ConstraintOutcome::Applied ? r.error_after
                                                                               : r.error_before;
                text += fmt::format(" w={:.2f} err={:.1f} mm", r.weight, err * 1000.f);
            }
            scene.labels.push_back(Label::at(text, x, y, state, scale));
            y = next_line(y, scale);
            if (!geometry) continue;

            scene.lines.push_back({r.source, r.target, with_alpha(state, 0.85f), 2.f});
            if (plane) {
                Vec3 nrm = r.target - r.source;
                if (length(nrm) < 1e-6f) {
                    nrm = d.ground && ci < m.ik->states.size()
                              ? m.ik->states[ci].ground_normal
                              : Vec3{};
                }
                if (length(nrm) > 1e-6f) {
                    nrm = normalized(nrm);
                    const Vec3 ref = std::fabs(nrm.z) < 0.9f ? Vec3{0.f, 0.f, 1.f} : Vec3{1.f, 0.f, 0.f};
                    const Vec3 t1 = normalized(cross(nrm, ref)) * 0.1f;
                    const Vec3 t2 = cross(nrm, t1);
                    const Vec3 c[4] = {r.target + t1 + t2, r.target - t1 + t2,
                                       r.target - t1 - t2, r.target + t1 - t2};
                    for (int e = 0; e < 4; ++e)
                        scene.lines.push_back({c[e], c[(e + 1) % 4], palette::kTarget, 2.f});
                }
            }
            // Target under source under goal: a converged constraint reads as a cyan ring
            // around a state-coloured dot with a white centre.
            scene.points.push_back({r.target, palette::kTarget, 16.f});
            scene.points.push_back({r.source, state, 10.f});
            scene.points.push_back({r.goal, palette::kGoal, 5.f});
        }
    }
    if (!any) {
        scene.labels.push_back(Label::at("constraints: none evaluated", x, y, palette::kInactive, scale));
        y = next_line(y, scale);
    }
    return y;
}

void build_avatar_scene(Scene& scene, World& world, Entity avatar,
                        std::span<const RenderMesh> body, const OverlayOptions& o) {
    scene.ground_height = IkFeature::of(world).ground(avatar).height;
    scene.meshes.insert(scene.meshes.end(), body.begin(), body.end());
    const Skeleton& sk = world.skeleton(avatar);
    const ModelPose& pose = world.model_pose(avatar);
    const MotionController& ctrl = world.controller(avatar);
    float y = 10.f;
    const float x = 10.f;
    if (o.owners || o.skeleton) {
        const OwnerMap owners = compute_owners(ctrl);
        add_skeleton(scene, sk, pose, owners, o.owners);
        if (o.owners) y = add_owner_legend(scene, owners, x, y, o.label_scale) + 6.f;
    }
    if (o.constraints) add_constraints(scene, ctrl, sk, x, y, o.label_scale);
}

}  // namespace slanim::gfx

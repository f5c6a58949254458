// SPDX-License-Identifier: MIT
#include "slanim/ik/constraints.hpp"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "slanim/core/clip.hpp"
#include "slanim/core/skeleton.hpp"

namespace slanim::ik {

namespace {
constexpr float kMaxPixelAreaConstraints = 80000.f;  // MAX_PIXEL_AREA_CONSTRAINTS
constexpr float kMinPixelAreaConstraints = 1000.f;   // MIN_PIXEL_AREA_CONSTRAINTS
constexpr int kMaxIterations = 20;                   // MAX_ITERATIONS
constexpr int kMinIterations = 1;                    // MIN_ITERATIONS

struct Xform {
    Vec3 pos;
    Quat rot;
};

/// World (root-frame) transforms of joints of a local pose, with LocalToModelJob's rules, at
/// any depth, memoised: a constraint asks for several joints on one path (source volume, the
/// chain's joints and their parents), and the walk resumes from the deepest ancestor already
/// known, with the same float operations as a walk from the root, so results are identical.
/// Skeleton::build keeps every parent before its child and at most kMaxAnimatedJoints joints,
/// so the walk to the root ends and the path fits. clear() after the pose changed.
class WorldCache {
public:
    WorldCache(const Skeleton& s, const LocalPose& pose) : s_(s), pose_(pose) {}
    /// Forgets `joint` and every known descendant (their pose changed: a solve rewrote the
    /// chain from `joint` down); ancestors and other branches stay known.
    void forget_below(int joint) {
        int kept = 0;
        for (int i = 0; i < count_; ++i) {
            const int k = list_[static_cast<std::size_t>(i)];
            bool below = false;
            for (int a = k; a >= 0 && !below; a = s_.parent(a)) below = a == joint;
            if (below) known_[static_cast<std::size_t>(k) / 64] &= ~(std::uint64_t{1} << (k % 64));
            else list_[static_cast<std::size_t>(kept++)] = k;
        }
        count_ = kept;
    }
    Xform get(int joint) {
        std::array<int, kMaxAnimatedJoints> path;  // filled below up to `depth`
        int depth = 0;
        int j = joint;
        for (; j >= 0 && !is_known(j); j = s_.parent(j)) path[static_cast<std::size_t>(depth++)] = j;
        Xform x = j >= 0 ? x_[static_cast<std::size_t>(j)] : Xform{{}, Quat::identity()};
        Vec3 parent_scale = j >= 0 ? pose_.scales[static_cast<std::size_t>(j)] : Vec3{1.f, 1.f, 1.f};
        for (int i = depth - 1; i >= 0; --i) {
            const int k = path[static_cast<std::size_t>(i)];
            x.pos = x.pos + rotate(scaled(pose_.positions[k], parent_scale), x.rot);
            x.rot = ll_mul(pose_.rotations[k], x.rot);
            parent_scale = pose_.scales[k];
            x_[static_cast<std::size_t>(k)] = x;
            known_[static_cast<std::size_t>(k) / 64] |= std::uint64_t{1} << (k % 64);
            list_[static_cast<std::size_t>(count_++)] = k;
        }
        return x;
    }

private:
    [[nodiscard]] bool is_known(int j) const {
        return (known_[static_cast<std::size_t>(j) / 64] >> (j % 64)) & 1u;
    }
    const Skeleton& s_;
    const LocalPose& pose_;
    std::array<Xform, kMaxAnimatedJoints> x_;
    std::array<std::uint64_t, (kMaxAnimatedJoints + 63) / 64> known_{};
    std::array<int, kMaxAnimatedJoints> list_;  // the known joints, count_ of them
    int count_ = 0;
};

/// `getVolumePos(volume, offset)`: (offset ∘ volume scale) rotated by the volume's world
/// rotation, plus its world position.
Vec3 volume_point(WorldCache& wc, const LocalPose& pose, int volume, Vec3 offset) {
    const Xform v = wc.get(volume);
    return rotate(scaled(offset, pose.scales[volume]), v.rot) + v.pos;
}

int parent_or_self(const Skeleton& s, int j) { return s.parent(j) >= 0 ? s.parent(j) : j; }

/// `initializeConstraint` on `pose`.
void initialize(const Skeleton& s, WorldCache& wc, const ConstraintDef& c, const LocalPose& pose,
                ConstraintState& st) {
    const int L = c.chain_length;
    const Vec3 source = volume_point(wc, pose, c.source_volume, c.source_offset);
    const Xform j0 = wc.get(c.joints[0]);
    const float source_offset = length(source - j0.pos);
    st.lengths = {};
    st.fractions = {};
    st.lengths[0] = length(wc.get(parent_or_self(s, c.joints[0])).pos - source);
    st.total_length = st.lengths[0];
    for (int k = 1; k < L; ++k) {
        const Vec3 a = wc.get(c.joints[k]).pos;
        const Vec3 b = wc.get(parent_or_self(s, c.joints[k])).pos;
        st.lengths[k] = length(a - b);
        st.total_length += st.lengths[k];
    }
    for (int k = 1; k < L; ++k)
        st.fractions[k] = st.total_length > 0.f ? st.lengths[k] / st.total_length : 0.f;
    st.total_length += source_offset;
    st.initialized = true;
}

/// `activateConstraint`.
void activate(const Skeleton& s, WorldCache& wc, const ConstraintDef& c, const LocalPose& pose,
              const GroundPlane& ground, ConstraintState& st) {
    st.active = true;
    if (c.ground) {
        const Vec3 source = volume_point(wc, pose, c.source_volume, c.source_offset);
        st.ground_pos = ground.below(source) + c.target_offset;
        const float n = length(ground.normal);
        st.ground_normal = n > 0.f ? ground.normal * (1.f / n) : Vec3{0.f, 0.f, 1.f};
    }
    const Xform pelvis = wc.get(s.pelvis());
    for (int k = 1; k < c.chain_length; ++k)
        st.positions[k] =
            rotate(wc.get(c.joints[k]).pos - pelvis.pos, conjugate(pelvis.rot));
    st.weight = 1.f;
}

float lerp_scalar(float a, float b, float u) { return a + (b - a) * u; }
}  // namespace

const char* solver_name(Solver s) {
    switch (s) {
        case Solver::Ccd: return "ccd";
        case Solver::Fabrik: return "fabrik";
        case Solver::Viewer: return "viewer";
    }
    return "?";
}

std::optional<Solver> parse_solver(std::string_view name) {
    for (int i = 0; i < kNumSolvers; ++i)
        if (name == solver_name(static_cast<Solver>(i))) return static_cast<Solver>(i);
    return std::nullopt;
}

const char* outcome_name(ConstraintOutcome o) {
    switch (o) {
        case ConstraintOutcome::Applied: return "applied";
        case ConstraintOutcome::BeforeWindow: return "before_window";
        case ConstraintOutcome::AfterWindow: return "after_window";
        case ConstraintOutcome::Masked: return "masked";
        case ConstraintOutcome::ZeroWeight: return "zero_weight";
        case ConstraintOutcome::NoPosition: return "no_position";
    }
    return "?";
}

Vec3 GroundPlane::below(Vec3 p) const {
    // Plane: n·(x − (0,0,h)) = 0, solved for z at p's x and y.
    const float nz = std::fabs(normal.z) > 1e-6f ? normal.z : 1e-6f;
    return {p.x, p.y, height - (normal.x * p.x + normal.y * p.y) / nz};
}

float pelvis_to_foot(const Skeleton& s) {
    const int pelvis = s.find("mPelvis"), hip = s.find("mHipLeft"), knee = s.find("mKneeLeft");
    const int ankle = s.find("mAnkleLeft"), foot = s.find("mFootLeft");
    if (pelvis < 0 || hip < 0 || knee < 0 || ankle < 0 || foot < 0) return 0.f;
    const auto pos = s.rest_positions();
    const auto sc = s.rest_scales();
    // The hip term is added with its own (negative) sign, as in the viewer.
    return pos[hip].z * sc[pelvis].z - pos[knee].z * sc[hip].z - pos[ankle].z * sc[knee].z -
           pos[foot].z * sc[ankle].z;
}

GroundPlane default_ground(const Skeleton& s) { return {-pelvis_to_foot(s), {0.f, 0.f, 1.f}}; }

int viewer_iteration_budget(float pixel_area) {
    return static_cast<int>(std::lround(clamp_rescale(pixel_area, kMaxPixelAreaConstraints,
                                                      kMinPixelAreaConstraints,
                                                      static_cast<float>(kMaxIterations),
                                                      static_cast<float>(kMinIterations))));
}

ConstraintSet resolve_constraints(const MotionClip& clip, const Skeleton& skeleton) {
    ConstraintSet out;
    const auto& list = clip.motion().constraints;
    const auto tracks = clip.tracks();
    for (std::size_t i = 0; i < list.size(); ++i) {
        const MotionConstraint& mc = list[i];
        const auto drop = [&](const std::string& why) {
            out.warnings.push_back(fmt::format("constraint {} ({} -> {}): {}", i, mc.source_volume,
                                               mc.target_ground ? "GROUND" : mc.target_volume, why));
        };
        if (mc.chain_length >= kMaxViewerChainLength) {
            drop(fmt::format("chain length {} is >= 4, which overflows the viewer's arrays "
                             "(MAX_CHAIN_LENGTH); skipped",
                             mc.chain_length));
            continue;
        }
        ConstraintDef d;
        d.index = static_cast<int>(i);
        d.type = mc.type;
        d.ground = mc.target_ground;
        d.source_volume = skeleton.find_collision_volume(mc.source_volume);
        if (d.source_volume < 0) {
            drop("unknown source collision volume");
            continue;
        }
        if (!d.ground) {
            d.target_volume = skeleton.find_collision_volume(mc.target_volume);
            if (d.target_volume < 0) {
                drop("unknown target collision volume");
                continue;
            }
        }
        d.source_offset = mc.source_offset;
        d.target_offset = mc.target_offset;
        d.ease_in_start = mc.ease_in_start;
        d.ease_in_stop = mc.ease_in_stop;
        d.ease_out_start = mc.ease_out_start;
        d.ease_out_stop = mc.ease_out_stop;
        d.chain_length = mc.chain_length;
        bool ok = true;
        int j = d.source_volume;
        for (int k = 0; k <= d.chain_length && ok; ++k) {
            j = skeleton.parent(j);
            if (j < 0) {
                drop("the chain runs past the skeleton's root");
                ok = false;
                break;
            }
            d.joints[k] = j;
            d.tracks[k] = -1;
            for (std::size_t t = 0; t < tracks.size(); ++t)
                if (tracks[t].joint == j) {
                    d.tracks[k] = static_cast<int>(t);
                    break;
                }
            if (d.tracks[k] < 0) {
                drop(fmt::format("chain joint '{}' is not animated by the motion",
                                 skeleton.name(j)));
                ok = false;
            }
        }
        if (ok) out.constraints.push_back(d);
    }
    return out;
}

namespace {

/// The motion's joint state of chain joint k (its clip track).
Quat& state_rotation(const ApplyConstraintsJob& job, const ConstraintDef& c, int k) {
    return job.state_rotations[static_cast<std::size_t>(c.tracks[static_cast<std::size_t>(k)])];
}

/// Sets a joint of the live pose (the viewer's `LLJoint::setRotation`).
void set_joint_rotation(const ApplyConstraintsJob& job, WorldCache& wc, int joint, Quat q) {
    job.joints.rotations[static_cast<std::size_t>(joint)] = q;
    wc.forget_below(joint);
}

/// The target point of `applyConstraint`: the ground point captured at activation or the
/// target volume's point; a PLANE keeps only the normal component of source → target.
Vec3 constraint_target(WorldCache& wc, const ConstraintDef& c, const ConstraintState& st,
                       const LocalPose& joints, Vec3 source) {
    Vec3 target = c.ground ? st.ground_pos : volume_point(wc, joints, c.target_volume, c.target_offset);
    if (c.type != ConstraintType::Plane) return target;
    Vec3 norm;
    if (c.ground) {
        norm = st.ground_normal;
    } else {
        norm = target - wc.get(c.target_volume).pos;
        if (norm == Vec3{}) norm = rotate(c.source_offset * -1.f, wc.get(c.source_volume).rot);
        const float len = length(norm);
        norm = len > 0.f ? norm * (1.f / len) : Vec3{};
    }
    return source + norm * dot(target - source, norm);
}

/// The reachability weight `mWeight` (eased toward 0 when the target is out of reach, else
/// toward 1) times the linear ease-in/out ramps, as `applyConstraint` computes W.
float constraint_weight(const ApplyConstraintsJob& job, const ConstraintDef& c, ConstraintState& st,
                        Vec3 root_pos, Vec3 target) {
    const Vec3 rt = root_pos - target;
    if (c.chain_length != 0 && dot(rt, rt) * 0.95f > st.total_length * st.total_length)
        st.weight = lerp_scalar(st.weight, 0.f, smooth_interpolant(job.frame_dt, 0.1f));
    else
        st.weight = lerp_scalar(st.weight, 1.f, smooth_interpolant(job.frame_dt, 0.3f));
    float ramp = 1.f;
    if (c.ease_out_stop != 0.f) {
        const float in = clamp_rescale(job.time, c.ease_in_start, c.ease_in_stop, 0.f, 1.f);
        const float out = clamp_rescale(job.time, c.ease_out_start, c.ease_out_stop, 1.f, 0.f);
        ramp = in < out ? in : out;
    }
    return st.weight * ramp;
}

/// The chain (J[0..L] on the live pose, whose chain joints hold the motion's key rotations) as
/// a solver problem, recorded in `rep.input`. `locals` and `offsets` back the spans.
ChainPose chain_problem(const Skeleton& s, WorldCache& wc, const ConstraintDef& c, const LocalPose& joints,
                        Vec3 source, std::array<Vec3, kMaxViewerChainLength>& offsets,
                        std::array<Quat, kMaxViewerChainLength>& locals, ConstraintReport& rep) {
    const int L = c.chain_length;
    for (int k = 0; k <= L; ++k) {
        const int j = c.joints[k];
        locals[k] = joints.rotations[j];
        if (k < L) offsets[k] = scaled(joints.positions[j], joints.scales[c.joints[k + 1]]);
    }
    const int root_parent = s.parent(c.joints[L]);
    const Xform j0 = wc.get(c.joints[0]);
    ChainPose cp;
    cp.offsets = std::span<const Vec3>(offsets.data(), static_cast<std::size_t>(L + 1));
    cp.local_rotations = std::span<Quat>(locals.data(), static_cast<std::size_t>(L + 1));
    cp.root_position = wc.get(c.joints[L]).pos;
    cp.root_parent_rotation = root_parent >= 0 ? wc.get(root_parent).rot : Quat::identity();
    cp.effector = rotate(source - j0.pos, conjugate(j0.rot));
    rep.input.joints = L + 1;
    rep.input.offsets = offsets;
    rep.input.local_rotations = locals;
    rep.input.root_position = cp.root_position;
    rep.input.root_parent_rotation = cp.root_parent_rotation;
    rep.input.effector = cp.effector;
    rep.input.goal = rep.goal;
    return cp;
}

/// The viewer's relaxation (`applyConstraint` step 8): interior points from the remembered
/// pelvis-space points eased toward the key positions shifted along source → target, the
/// damped springs, the aim pass. Leaves the solved rotations in `locals` and the relaxed
/// points in `relaxed`.
void solve_viewer(const ApplyConstraintsJob& job, WorldCache& wc, const ConstraintDef& c, ConstraintState& st,
                  const ChainPose& cp, Vec3 source, Vec3 target, float weight,
                  std::array<Vec3, kMaxViewerChainLength>& relaxed, SolveReport& sr) {
    const int L = c.chain_length;
    const Xform pelvis = wc.get(job.skeleton->pelvis());
    std::array<Vec3, kMaxViewerChainLength> start{};
    const float tc = 1.f / clamp_rescale(st.fixup_rms, 0.f, 0.5f, 0.2f, 8.f);
    const float interp = smooth_interpolant(job.frame_dt, tc);
    for (int k = 1; k < L; ++k) {
        const Vec3 kinematic = wc.get(c.joints[k]).pos + (target - source) * st.fractions[k];
        const Vec3 remembered = rotate(st.positions[k], pelvis.rot) + pelvis.pos;
        start[k - 1] = lerp(remembered, kinematic, interp);
    }
    ViewerRelaxationJob relax;
    relax.pose = cp;
    relax.goal = lerp(source, target, weight);
    relax.lengths = std::span<const float>(st.lengths.data(), static_cast<std::size_t>(L));
    relax.start_points = std::span<const Vec3>(start.data(), static_cast<std::size_t>(L - 1));
    relax.relaxed_points = std::span<Vec3>(relaxed.data(), static_cast<std::size_t>(L - 1));
    relax.weight = weight;
    relax.max_iterations = viewer_iteration_budget(job.pixel_area);
    relax.end_rotation = EndRotation::Keep;
    relax.report = &sr;
    relax.run();
}

/// Step 8.7 of the viewer solver: the relaxed points saved in pelvis space (the pelvis as the
/// live pose has it after the aim pass) and the fix-up RMS speed.
void remember_points(const ApplyConstraintsJob& job, WorldCache& wc, const ConstraintDef& c, ConstraintState& st,
                     const std::array<Vec3, kMaxViewerChainLength>& relaxed) {
    const int L = c.chain_length;
    if (L < 2) return;
    const Xform pelvis = wc.get(job.skeleton->pelvis());
    float rms = 0.f;
    const float dt = std::fmax(0.02f, std::fabs(job.time - job.last_update_time));
    for (int k = 1; k < L; ++k) {
        const Vec3 np = rotate(relaxed[k - 1] - pelvis.pos, conjugate(pelvis.rot));
        const Vec3 d = np - st.positions[k];
        rms += dot(d, d) / dt;
        st.positions[k] = np;
    }
    rms *= 1.f / (st.total_length * static_cast<float>(L - 1));
    st.fixup_rms = std::sqrt(rms);
    if (!std::isfinite(st.fixup_rms)) st.fixup_rms = 0.f;
}

/// Chain length ≥ 1: solves toward lerp(source, target, W) with the avatar's solver and writes
/// the chain's new rotations into the motion's joint states. The live chain joints hold the
/// key rotations on entry and on return.
void solve_chain(const ApplyConstraintsJob& job, WorldCache& wc, const ConstraintDef& c, ConstraintState& st,
                 Vec3 source, Vec3 target, float weight, ConstraintReport& rep) {
    const int L = c.chain_length;
    std::array<Vec3, kMaxViewerChainLength> offsets{}, relaxed{};
    std::array<Quat, kMaxViewerChainLength> locals{};
    const ChainPose cp = chain_problem(*job.skeleton, wc, c, job.joints, source, offsets, locals, rep);
    SolveReport sr;
    if (job.settings.solver == Solver::Viewer) {
        solve_viewer(job, wc, c, st, cp, source, target, weight, relaxed, sr);
    } else {
        Target tgt;
        tgt.point = rep.goal;
        SolveSettings ss;
        ss.tolerance = job.settings.tolerance;
        ss.max_iterations = job.settings.max_iterations;
        ss.end_rotation = EndRotation::Keep;
        if (job.settings.solver == Solver::Ccd) {
            CcdJob solve{cp, tgt, ss, &sr};
            solve.run();
        } else {
            FabrikJob solve{cp, tgt, ss, &sr};
            solve.run();
        }
    }
    for (int k = 0; k <= L; ++k)
        if (is_finite(locals[k])) state_rotation(job, c, k) = locals[k];
    // The viewer's live chain after its aim pass: J[1..L] turned, J[0] still at its key.
    for (int k = 1; k <= L; ++k) set_joint_rotation(job, wc, c.joints[k], state_rotation(job, c, k));
    if (job.settings.solver == Solver::Viewer) remember_points(job, wc, c, st, relaxed);
    set_joint_rotation(job, wc, c.joints[0], state_rotation(job, c, 0));
    const Vec3 after = volume_point(wc, job.joints, c.source_volume, c.source_offset);
    rep.error_after = length(target - after);
    rep.goal_error = length(rep.goal - after);
    rep.iterations = sr.iterations;
    rep.reachable = sr.reachable;
}

/// `applyConstraint` for one constraint: the time window, the joint-mask skip, the key
/// rotations put on the live chain, the geometry and weight, the solve, the live chain put
/// back. Returns what happened.
ConstraintOutcome apply_constraint(const ApplyConstraintsJob& job, WorldCache& wc, const ConstraintDef& c,
                                   ConstraintState& st, ConstraintReport& rep) {
    const Skeleton& s = *job.skeleton;
    const LocalPose& joints = job.joints;
    if (!st.initialized) initialize(s, wc, c, joints, st);
    if (job.time < c.ease_in_start) return ConstraintOutcome::BeforeWindow;
    if (job.time > c.ease_out_stop) {
        st.active = false;  // deactivateConstraint
        return ConstraintOutcome::AfterWindow;
    }
    if (!st.active || job.time < c.ease_in_stop) activate(s, wc, c, joints, job.ground, st);

    const int L = c.chain_length;
    const Vec3 root_pos = wc.get(c.joints[L]).pos;  // before the chain takes its keys
    // 0xFF >> (7 − priority); a priority of −1 gives 0, which masks everything (viewer).
    const int prio = job.base_priority;
    const int mask_threshold = prio < 0 ? 0 : (0xFF >> (7 - (prio > 7 ? 7 : prio)));
    std::array<Quat, kMaxViewerChainLength> old_rots{};
    for (int k = 0; k <= L; ++k) {
        const int j = c.joints[k];
        // Joints already given their keys stay so, as in the viewer.
        if (job.joint_mask[static_cast<std::size_t>(j)] >= mask_threshold) return ConstraintOutcome::Masked;
        old_rots[k] = joints.rotations[j];
        set_joint_rotation(job, wc, j, state_rotation(job, c, k));
    }

    const Vec3 source = volume_point(wc, joints, c.source_volume, c.source_offset);
    const Vec3 target = constraint_target(wc, c, st, joints, source);
    const float weight = constraint_weight(job, c, st, root_pos, target);
    rep.weight = weight;
    rep.source = source;
    rep.target = target;
    rep.goal = lerp(source, target, weight);
    rep.error_before = length(target - source);

    if (L == 0) {
        // "Simple positional constraint (pelvis only)": needs a position curve; J[0] keeps its
        // key rotation on the live pose (the viewer puts nothing back here).
        const int track = c.tracks[0];
        if (!(job.clip->tracks()[static_cast<std::size_t>(track)].usage & kUsagePos))
            return ConstraintOutcome::NoPosition;
        const int j0 = c.joints[0];
        const int parent = s.parent(j0);
        const Quat parent_rot = parent >= 0 ? wc.get(parent).rot : Quat::identity();
        const Vec3 delta = rotate((target - source) * weight, conjugate(parent_rot));
        const Vec3 live = joints.positions[j0];
        job.state_positions[static_cast<std::size_t>(track)] = live + delta;
        // The source point with J[0] at its new position (on the live pose, then put back).
        joints.positions[j0] = live + delta;
        wc.forget_below(j0);
        const Vec3 after = volume_point(wc, joints, c.source_volume, c.source_offset);
        joints.positions[j0] = live;
        wc.forget_below(j0);
        rep.error_after = length(target - after);
        rep.goal_error = length(rep.goal - after);
        return ConstraintOutcome::Applied;
    }
    ConstraintOutcome outcome = ConstraintOutcome::Applied;
    if (weight <= 0.f && job.settings.solver != Solver::Viewer) {
        outcome = ConstraintOutcome::ZeroWeight;
    } else {
        const auto t0 = job.time_solves ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
        solve_chain(job, wc, c, st, source, target, weight, rep);
        if (job.time_solves)
            rep.solve_us = std::chrono::duration<float, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
    for (int k = 0; k <= L; ++k) set_joint_rotation(job, wc, c.joints[k], old_rots[k]);
    return outcome;
}

}  // namespace

bool ApplyConstraintsJob::validate() const {
    if (!skeleton || !clip) return false;
    const auto n = static_cast<std::size_t>(skeleton->num_joints());
    const std::size_t tracks = clip->tracks().size();
    if (states.size() != constraints.size()) return false;
    if (!reports.empty() && reports.size() != constraints.size()) return false;
    if (joints.positions.size() < n || joints.rotations.size() < n || joints.scales.size() < n) return false;
    if (state_rotations.size() < tracks || state_positions.size() < tracks) return false;
    if (joint_mask.size() < n) return false;
    if (settings.max_iterations < 1 || !(settings.tolerance >= 0.f)) return false;
    for (const ConstraintDef& c : constraints) {
        if (c.chain_length < 0 || c.chain_length >= kMaxViewerChainLength) return false;
        if (c.source_volume < 0 || c.source_volume >= static_cast<int>(n)) return false;
        if (!c.ground && (c.target_volume < 0 || c.target_volume >= static_cast<int>(n))) return false;
        for (int k = 0; k <= c.chain_length; ++k) {
            if (c.joints[k] < 0 || c.joints[k] >= static_cast<int>(n)) return false;
            if (c.tracks[k] < 0 || c.tracks[k] >= static_cast<int>(tracks)) return false;
        }
    }
    return std::isfinite(time) && std::isfinite(frame_dt);
}

bool ApplyConstraintsJob::run() const {
    if (!validate()) return false;
    WorldCache wc(*skeleton, joints);
    for (std::size_t ci = 0; ci < constraints.size(); ++ci) {
        ConstraintReport rep;
        rep.outcome = apply_constraint(*this, wc, constraints[ci], states[ci], rep);
        if (!reports.empty()) reports[ci] = rep;
    }
    return true;
}

}  // namespace slanim::ik

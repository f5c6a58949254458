// SPDX-License-Identifier: MIT
#include "gfx_setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <numbers>
#include <ostream>
#include <string_view>

#include "appearance_loading.hpp"
#include "loading.hpp"
#include "mesh_export.hpp"
#include "slanim/core/clip.hpp"
#include "slanim/gfx/avatar_scene.hpp"
#include "slanim/gfx/gl_context.hpp"
#include "slanim/gfx/playback.hpp"
#include "slanim/gfx/renderer.hpp"
#include "slanim/runtime/appearance.hpp"
#include "slanim/runtime/demo_motions.hpp"
#include "slanim/net/puppetry_sources.hpp"
#include "slanim/runtime/puppetry.hpp"
#include "slanim/runtime/appearance_feature.hpp"
#include "slanim/runtime/procedural_feature.hpp"

namespace slanim::cli {

namespace {
/// Hands a world a source that outlives it (see the view's world setup): every call goes to the
/// shared source.
class SharedPuppetrySource final : public PuppetrySource {
public:
    explicit SharedPuppetrySource(std::shared_ptr<PuppetrySource> s) : source_(std::move(s)) {}
    void poll(PuppetryRuntime& runtime, World& world, double now_s) override { source_->poll(runtime, world, now_s); }
    [[nodiscard]] std::string describe() const override { return source_->describe(); }
    [[nodiscard]] bool finished() const override { return source_->finished(); }
    [[nodiscard]] std::string counters() const override { return source_->counters(); }

private:
    std::shared_ptr<PuppetrySource> source_;
};
}  // namespace

namespace {
constexpr double kDegToRad = std::numbers::pi / 180.0;
}  // namespace

/// The real avatar mesh drawn by the renderer: the Appearance's skinned meshes (SoA) converted
/// into reusable AoS arrays each frame (no allocation per frame), flat index lists built once,
/// one flat colour per mesh. The skirt is left out: the viewer draws it only with a skirt
/// wearable, and clothing is not implemented.
class AvatarMeshBody {
public:
    explicit AvatarMeshBody(const Appearance& appearance) : snapshot_(appearance) {
        const auto meshes = snapshot_.meshes();
        indices_.resize(meshes.size());
        for (std::size_t k = 0; k < meshes.size(); ++k) {
            const ExportMesh& m = meshes[k];
            if (m.name == "skirtMesh" || m.positions.empty() || m.faces.empty()) continue;
            indices_[k].reserve(3 * m.faces.size());
            for (const auto& f : m.faces) indices_[k].insert(indices_[k].end(), f.begin(), f.end());
            gfx::RenderMesh rm;
            rm.positions = m.positions;
            rm.normals = m.normals;
            rm.indices32 = indices_[k];
            rm.colour = colour_of(m.name);
            render_.push_back(rm);
        }
    }
    /// Copies the appearance's skinned vertices (the spans of meshes() stay valid).
    void update(const Appearance& appearance) { snapshot_.capture(appearance); }
    [[nodiscard]] std::span<const gfx::RenderMesh> meshes() const { return render_; }

private:
    static gfx::Rgba colour_of(std::string_view type) {
        if (type == "hairMesh") return {0.30f, 0.20f, 0.13f, 1.f};
        if (type == "eyelashMesh") return {0.12f, 0.09f, 0.08f, 1.f};
        if (type.starts_with("eyeBall")) return {0.90f, 0.90f, 0.92f, 1.f};
        return {0.80f, 0.60f, 0.48f, 1.f};  // skin
    }
    SkinnedMeshSnapshot snapshot_;
    std::vector<std::vector<std::uint32_t>> indices_;
    std::vector<gfx::RenderMesh> render_;
};

GfxSetup::GfxSetup() = default;
GfxSetup::~GfxSetup() = default;

namespace {

/// What every fresh world of the playback gets (also when scrubbing backwards replays from 0):
/// the procedural motions, the look-at target, a fresh appearance with the wearables applied
/// and a fresh puppetry source (a replay starts over; the previous world, and its socket, is
/// gone by then), so a frame looks the same however it is reached. A live source (udp://,
/// leap:stdin) outlives the worlds: one socket for the whole session, so nothing is lost or
/// reset when playback restarts.
struct WorldSetup {
    std::shared_ptr<const LoadedAppearance> appearance;
    std::shared_ptr<const Skeleton> skeleton;
    std::string spec;  // --puppetry
    std::shared_ptr<std::shared_ptr<PuppetryRuntime>> current;
    std::shared_ptr<std::shared_ptr<PuppetrySource>> live = std::make_shared<std::shared_ptr<PuppetrySource>>();
    ProceduralSet procedural;
    std::optional<Vec3> look_at;

    Result<bool> operator()(World& world, Entity avatar) const {
        // The viewer's procedural motions (older than the clips, which start after this).
        if (procedural != ProceduralSet{} && !ProceduralFeature::of(world).set_motions(avatar, procedural))
            return Error{"--procedural: the skeleton lacks the joints of a requested motion"};
        if (look_at) ProceduralFeature::of(world).set_look_at(avatar, *look_at);
        if (appearance) {
            auto a = appearance->make();
            if (!a) return a.error();
            if (!AppearanceFeature::of(world).set(avatar, std::move(*a))) return Error{"the appearance does not fit the skeleton"};
        }
        if (!spec.empty()) return install_puppetry(world, avatar);
        return true;
    }

    /// Mixed with the motions at priority 7, like `slanim play`.
    Result<bool> install_puppetry(World& world, Entity avatar) const {
        auto runtime = PuppetryRuntime::install(world);
        runtime->set_default_avatar(world, avatar);
        if (spec.starts_with("replay:")) {
            auto src = open_puppetry_source(spec, avatar, *skeleton);
            if (!src) return Error{"--puppetry " + spec + ": " + src.error().describe()};
            runtime->add_source(std::move(*src));
        } else {
            if (!*live) {
                auto src = open_puppetry_source(spec, avatar, *skeleton);
                if (!src) return Error{"--puppetry " + spec + ": " + src.error().describe()};
                *live = std::shared_ptr<PuppetrySource>(std::move(*src));
            }
            runtime->add_source(std::make_unique<SharedPuppetrySource>(*live));
        }
        if (*current) runtime->carry_datagram_counters(**current);  // one running count
        *current = runtime;
        return true;
    }
};

/// The checks that need no file: --puppetry's form (render: a replay only) and --wearable
/// without --character.
std::optional<int> check_sources(const char* cmd, std::ostream& err, const GfxOptions& o) {
    if (!o.puppetry.empty() && !o.puppetry.starts_with("replay:") &&
        (std::string_view(cmd) == "render" || (!o.puppetry.starts_with("udp://") && o.puppetry != "leap:stdin"))) {
        err << fmt::format(
            "slanim {}: --puppetry {}: expected {}\n", cmd, o.puppetry,
            std::string_view(cmd) == "render" ? "replay:FILE[#loop] (a picture at --time T must be reproducible)"
                                              : "udp://HOST:PORT, leap:stdin or replay:FILE[#loop]");
        return 2;
    }
    if (!o.wearables.empty() && o.character.empty()) {
        err << fmt::format(
            "slanim {}: --wearable needs --character DIR: without a character folder there is no "
            "avatar mesh (the generated body has no visual params)\n",
            cmd);
        return 2;
    }
    return std::nullopt;
}

/// The motion files (no FILE: the built-in demo), and the title of their stems.
std::optional<int> load_clips(const char* cmd, std::ostream& err, const GfxOptions& o, GfxSetup& s,
                              std::vector<std::shared_ptr<const MotionClip>>& clips) {
    std::vector<std::string> names;
    if (o.files.empty()) {
        err << fmt::format("slanim {}: no FILE given: playing the built-in demo motion\n", cmd);
        clips.push_back(MotionClip::build(make_demo_motion(*s.skeleton), *s.skeleton, "demo"));
        names.emplace_back("demo");
    }
    for (const auto& f : o.files) {
        auto l = load(f, *s.skeleton);
        if (!l) {
            err << fmt::format("slanim {}: {}\n", cmd, l.error().message);
            return 1;
        }
        const std::string stem = std::filesystem::path(f).stem().string();
        clips.push_back(MotionClip::build(l->motion, *s.skeleton, stem));
        names.push_back(stem);
    }
    for (std::size_t i = 0; i < names.size(); ++i) s.title += (i ? ", " : "") + names[i];
    return std::nullopt;
}

/// --procedural and --look-at into `w`.
std::optional<int> parse_procedural_options(const char* cmd, std::ostream& err, const GfxOptions& o, WorldSetup& w) {
    if (!o.procedural.empty()) {
        auto p = parse_procedural_set(o.procedural);
        if (!p) {
            err << fmt::format("slanim {}: {}\n", cmd, p.error().message);
            return 2;
        }
        w.procedural = *p;
    }
    if (!o.look_at.empty()) {
        auto p = parse_look_at(o.look_at);
        if (!p) {
            err << fmt::format("slanim {}: {}\n", cmd, p.error().message);
            return 2;
        }
        w.look_at = *p;
    }
    return std::nullopt;
}

}  // namespace

std::optional<int> setup_playback(const char* cmd, std::ostream& err, const GfxOptions& o, GfxSetup& s) {
    if (!(o.fps > 0.0) || o.fps > 10000.0) {
        err << fmt::format("slanim {}: --fps must be in (0, 10000]\n", cmd);
        return 2;
    }
    auto skel = pick_skeleton(o.character);
    if (!skel) {
        err << fmt::format("slanim {}: {}\n", cmd, skel.error().describe());
        return 1;
    }
    s.skeleton = *skel;
    if (auto e = check_sources(cmd, err, o)) return e;
    if (!o.character.empty()) {  // the real avatar mesh, skinned on the CPU
        auto la = load_cli_appearance(o.character, s.skeleton, o.wearables);
        if (!la) {
            err << fmt::format("slanim {}: {}\n", cmd, la.error().describe());
            return 1;
        }
        for (const std::string& note : la->notes) err << fmt::format("slanim {}: --wearable {}\n", cmd, note);
        s.appearance = std::make_shared<const LoadedAppearance>(std::move(*la));
    }
    std::vector<std::shared_ptr<const MotionClip>> clips;
    if (auto e = load_clips(cmd, err, o, s, clips)) return e;
    ik::IkSettings ik;
    ik.enabled = o.solver != "none";
    if (ik.enabled) ik.solver = ik::parse_solver(o.solver).value_or(ik::Solver::Ccd);
    WorldSetup world_setup;
    world_setup.appearance = s.appearance;
    world_setup.skeleton = s.skeleton;
    world_setup.spec = o.puppetry;
    world_setup.current = s.puppetry;
    if (auto e = parse_procedural_options(cmd, err, o, world_setup)) return e;
    s.playback = std::make_unique<gfx::Playback>(s.skeleton, std::move(clips), o.fps, ik);
    if (s.appearance || !o.puppetry.empty() || world_setup.procedural != ProceduralSet{} || world_setup.look_at) {
        if (auto r = s.playback->set_world_setup(world_setup); !r) {
            err << fmt::format("slanim {}: {}\n", cmd, r.error().message);
            return 1;
        }
        if (s.appearance)
            s.mesh = std::make_unique<AvatarMeshBody>(*AppearanceFeature::of(s.playback->world()).get(s.playback->avatar()));
    }
    return std::nullopt;
}

gfx::OrbitCamera initial_camera(const GfxOptions& o) {
    gfx::OrbitCamera cam;
    if (o.yaw_deg) cam.yaw = static_cast<float>(*o.yaw_deg * kDegToRad);
    if (o.pitch_deg) cam.pitch = static_cast<float>(*o.pitch_deg * kDegToRad);
    if (o.distance) cam.distance = static_cast<float>(*o.distance);
    return cam;
}

std::optional<int> check_camera(const char* cmd, std::ostream& err, const GfxOptions& o) {
    if (o.pitch_deg && !(std::fabs(*o.pitch_deg) <= 85.0)) {
        err << fmt::format("slanim {}: --pitch must be in [-85, 85] degrees\n", cmd);
        return 2;
    }
    if (o.yaw_deg && !std::isfinite(*o.yaw_deg)) {
        err << fmt::format("slanim {}: --yaw must be a finite number of degrees\n", cmd);
        return 2;
    }
    if (o.distance && !(*o.distance >= 0.1 && *o.distance <= 1000.0)) {
        err << fmt::format("slanim {}: --distance must be in [0.1, 1000] metres\n", cmd);
        return 2;
    }
    return std::nullopt;
}

void build_frame(gfx::Scene& scene, gfx::Playback& pb, gfx::GeneratedBody& body, AvatarMeshBody* mesh,
                 const gfx::OverlayOptions& overlays, gfx::OrbitCamera& cam) {
    World& world = pb.world();
    const ModelPose& pose = world.model_pose(pb.avatar());
    std::span<const gfx::RenderMesh> meshes;
    if (const Appearance* a = AppearanceFeature::of(world).get(pb.avatar()); mesh && a) {
        mesh->update(*a);
        meshes = mesh->meshes();
    } else {
        body.update(pose.positions, pose.rotations);
        meshes = body.meshes();
    }
    scene.clear();
    gfx::build_avatar_scene(scene, world, pb.avatar(), meshes, overlays);
    cam.follow(pose.positions[static_cast<std::size_t>(pb.skeleton().pelvis())]);
}

float label_scale(int height) { return height >= 1000 ? 2.f : height >= 480 ? 1.5f : 1.f; }

}  // namespace slanim::cli

// SPDX-License-Identifier: MIT
// Deterministic playback of motions on one avatar for `view` and `render`: a World
// stepped at a fixed rate from t = 0, like `slanim play` (frame 0 is step(0), then step(1/fps)
// per frame). Seeking backwards replays from 0, so a picture at time T is the same whether it
// was reached by playing, stepping or scrubbing.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "slanim/core/clip.hpp"
#include "slanim/core/result.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/ik/constraints.hpp"
#include "slanim/runtime/world.hpp"

namespace slanim::gfx {

class Playback {
public:
    /// `fps` in (0, 10000]; every clip starts at t = 0. `ik` selects the constraint solver
    /// (ik.enabled = false: constraints off).
    Playback(std::shared_ptr<const Skeleton> skeleton,
             std::vector<std::shared_ptr<const MotionClip>> clips, double fps,
             const ik::IkSettings& ik = {});

    /// Attaches components to a fresh world: called with the world and the avatar after the
    /// avatar is created and before its clips start (so motions the setup starts, e.g. the
    /// procedural ones, are older than the clips, as the viewer's default motions are), before
    /// frame 0's step.
    using WorldSetup = std::function<Result<bool>(World&, Entity)>;
    /// Installs `setup` (e.g. AppearanceFeature::set with a fresh Appearance, a puppetry source)
    /// and restarts, so it applies from frame 0; every later restart() calls it again. Returns
    /// the setup's result for this restart; a failure in a later restart is kept in
    /// setup_error() (the world then plays without what the setup would have attached).
    Result<bool> set_world_setup(WorldSetup setup);
    /// The last failed setup's message, or empty.
    [[nodiscard]] const std::string& setup_error() const { return setup_error_; }

    /// Loop mode: after a step, every clip whose instance is no longer active is started again
    /// (`MotionController::start`), so non-looping motions repeat. Off by default.
    void set_loop(bool on) { loop_ = on; }
    [[nodiscard]] bool loop() const { return loop_; }

    /// Advances one fixed step (1/fps seconds).
    void step();
    /// Moves to the last frame at or before `t` seconds (t < 0 counts as 0): steps forward, or
    /// replays from 0 when `t` is behind the current time.
    void seek(double t);
    /// Accumulates `seconds` of playing time and takes the whole fixed steps it covers (at most
    /// `max_steps` per call, the rest is dropped so a slow frame never snowballs).
    void advance(double seconds, int max_steps = 64);
    /// Restarts from t = 0 (fresh world).
    void restart();

    [[nodiscard]] long long frame() const { return frame_; }
    [[nodiscard]] double time() const { return static_cast<double>(frame_) / fps_; }
    [[nodiscard]] double fps() const { return fps_; }
    /// The longest clip's duration (seconds), 1 when every clip has duration 0.
    [[nodiscard]] double duration() const;
    /// True when none of the clips is active any more (all ended and eased out).
    [[nodiscard]] bool finished() const;

    [[nodiscard]] World& world() { return *world_; }
    [[nodiscard]] Entity avatar() const { return avatar_; }
    [[nodiscard]] const Skeleton& skeleton() const { return *skeleton_; }
    [[nodiscard]] const std::vector<std::shared_ptr<const MotionClip>>& clips() const { return clips_; }

private:
    std::shared_ptr<const Skeleton> skeleton_;
    std::vector<std::shared_ptr<const MotionClip>> clips_;
    double fps_;
    ik::IkSettings ik_;
    std::unique_ptr<World> world_;
    Entity avatar_ = kNullEntity;
    long long frame_ = 0;
    double pending_ = 0.0;
    bool loop_ = false;
    WorldSetup setup_;
    std::string setup_error_;
};

}  // namespace slanim::gfx

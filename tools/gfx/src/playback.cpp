// SPDX-License-Identifier: MIT
#include "slanim/gfx/playback.hpp"
#include "slanim/runtime/ik_feature.hpp"

#include <algorithm>
#include <cmath>

namespace slanim::gfx {

Playback::Playback(std::shared_ptr<const Skeleton> skeleton,
                   std::vector<std::shared_ptr<const MotionClip>> clips, double fps,
                   const ik::IkSettings& ik)
    : skeleton_(std::move(skeleton)), clips_(std::move(clips)),
      fps_(fps > 0.0 && fps <= 10000.0 ? fps : 30.0), ik_(ik) {
    restart();
}

void Playback::restart() {
    world_ = std::make_unique<World>();
    IkFeature::of(*world_).set_default_settings(ik_);
    avatar_ = world_->create_avatar(skeleton_);
    if (setup_) {
        auto r = setup_(*world_, avatar_);
        setup_error_ = r ? std::string() : r.error().message;
    }
    MotionController& ctrl = world_->controller(avatar_);
    for (const auto& clip : clips_) ctrl.start(clip);
    frame_ = 0;
    pending_ = 0.0;
    world_->step(0.f);  // frame 0, like `slanim play`
}

Result<bool> Playback::set_world_setup(WorldSetup setup) {
    setup_ = std::move(setup);
    restart();
    if (!setup_error_.empty()) return Error{setup_error_};
    return true;
}

void Playback::step() {
    world_->step(static_cast<float>(1.0 / fps_));
    ++frame_;
    if (loop_) {
        MotionController& ctrl = world_->controller(avatar_);
        for (const auto& clip : clips_)
            if (!ctrl.is_active(clip.get())) ctrl.start(clip);
    }
}

void Playback::seek(double t) {
    const auto target = static_cast<long long>(std::floor(std::max(t, 0.0) * fps_ + 1e-6));
    if (target < frame_) restart();
    while (frame_ < target) step();
    pending_ = 0.0;
}

void Playback::advance(double seconds, int max_steps) {
    if (!(seconds > 0.0)) return;
    pending_ += seconds;
    const double dt = 1.0 / fps_;
    int steps = 0;
    while (pending_ + 1e-9 >= dt && steps < max_steps) {
        step();
        pending_ -= dt;
        ++steps;
    }
    if (steps == max_steps) pending_ = std::min(pending_, dt);
}

double Playback::duration() const {
    double d = 0.0;
    for (const auto& clip : clips_) d = std::max(d, static_cast<double>(clip->duration()));
    return d > 0.0 ? d : 1.0;
}

bool Playback::finished() const {
    const MotionController& ctrl = world_->controller(avatar_);
    return std::none_of(clips_.begin(), clips_.end(),
                        [&](const auto& c) { return ctrl.is_active(c.get()); });
}

}  // namespace slanim::gfx

// SPDX-License-Identifier: MIT
#include "slanim/core/local_to_model.hpp"

#include "slanim/core/skeleton.hpp"

namespace slanim {

bool LocalToModelJob::validate() const {
    if (!skeleton) return false;
    const auto n = static_cast<std::size_t>(skeleton->num_joints());
    return local_positions.size() >= n && local_rotations.size() >= n && local_scales.size() >= n &&
           model_positions.size() >= n && model_rotations.size() >= n;
}

bool LocalToModelJob::run() const {
    if (!validate()) return false;
    const int n = skeleton->num_joints();
    const auto parents = skeleton->parents();
    for (int i = 0; i < n; ++i) {
        const int p = parents[i];
        const Vec3 ppos = p >= 0 ? model_positions[p] : root_position;
        const Quat prot = p >= 0 ? model_rotations[p] : root_rotation;
        const Vec3 pscale = p >= 0 ? local_scales[p] : Vec3{1.f, 1.f, 1.f};
        model_positions[i] = rotate(scaled(local_positions[i], pscale), prot) + ppos;
        model_rotations[i] = ll_mul(local_rotations[i], prot);
    }
    return true;
}

}  // namespace slanim

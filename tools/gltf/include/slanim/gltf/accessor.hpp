// SPDX-License-Identifier: MIT
// The buffer layout every glTF file slanim writes uses (the animation export, export.hpp, and
// the command's posed-mesh files, tools/slanim/mesh_export.cpp): one buffer, one tightly packed
// view per accessor. For code that builds a tinygltf::Model itself (and links tinygltf).
#pragma once

#include <cstddef>

namespace tinygltf {
class Model;
}  // namespace tinygltf

namespace slanim::gltf {

/// Appends `bytes` of `data` to buffer 0 of `m` (padded with zeros to a multiple of 4 bytes
/// first) as a tightly packed buffer view, and an accessor of `count` elements of glTF `type`
/// (TINYGLTF_TYPE_*) and `component` type (TINYGLTF_COMPONENT_TYPE_*) over it; `target` is the
/// view's target (0: none, for animation data and inverse bind matrices). Returns the
/// accessor's index. Precondition: m.buffers[0] exists. Touches only `m`.
int add_accessor(tinygltf::Model& m, const void* data, std::size_t bytes, std::size_t count, int type,
                 int component, int target);

}  // namespace slanim::gltf

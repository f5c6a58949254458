// SPDX-License-Identifier: MIT
#include "slanim/gltf/accessor.hpp"

#include <tiny_gltf.h>

#include <vector>

namespace slanim::gltf {

int add_accessor(tinygltf::Model& m, const void* data, std::size_t bytes, std::size_t count, int type, int component,
                 int target) {
    std::vector<unsigned char>& buf = m.buffers[0].data;
    while (buf.size() % 4 != 0) buf.push_back(0);
    tinygltf::BufferView view;
    view.buffer = 0;
    view.byteOffset = buf.size();
    view.byteLength = bytes;
    if (target != 0) view.target = target;
    const auto* b = static_cast<const unsigned char*>(data);
    buf.insert(buf.end(), b, b + bytes);
    m.bufferViews.push_back(std::move(view));
    tinygltf::Accessor acc;
    acc.bufferView = static_cast<int>(m.bufferViews.size()) - 1;
    acc.byteOffset = 0;
    acc.componentType = component;
    acc.count = count;
    acc.type = type;
    m.accessors.push_back(std::move(acc));
    return static_cast<int>(m.accessors.size()) - 1;
}

}  // namespace slanim::gltf

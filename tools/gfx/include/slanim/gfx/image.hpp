// SPDX-License-Identifier: MIT
// RGBA8 images and PNG files (stb_image_write / stb_image).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "slanim/core/result.hpp"

namespace slanim::gfx {

/// An 8-bit RGBA image, rows top to bottom, 4 bytes per pixel, no padding.
struct Image {
    int width = 0, height = 0;
    std::vector<std::uint8_t> rgba;  ///< width × height × 4 bytes

    [[nodiscard]] const std::uint8_t* pixel(int x, int y) const {
        return rgba.data() + (static_cast<std::size_t>(y) * static_cast<std::size_t>(width) +
                              static_cast<std::size_t>(x)) * 4u;
    }
};

/// Encodes a PNG in memory. Errors: empty image, size mismatch, encoder failure.
Result<std::vector<std::uint8_t>> encode_png(const Image& image);
/// Encodes and writes a PNG atomically (write_file_atomic: never a partial file). Errors name
/// the path.
Result<bool> write_png(const std::string& path, const Image& image);
/// Reads a PNG (any bit depth / channel count, converted to RGBA8). Errors name the path.
Result<Image> load_png(const std::string& path);

}  // namespace slanim::gfx

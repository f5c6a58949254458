// SPDX-License-Identifier: MIT
#include "slanim/gfx/image.hpp"

#include <fmt/format.h>

#include <limits>

#include "slanim/formats/io.hpp"

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb_image_write.h>
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#include <stb_image.h>

namespace slanim::gfx {

namespace {
void append(void* context, void* data, int size) {
    auto* out = static_cast<std::vector<std::uint8_t>*>(context);
    const auto* p = static_cast<const std::uint8_t*>(data);
    out->insert(out->end(), p, p + size);
}
}  // namespace

Result<std::vector<std::uint8_t>> encode_png(const Image& image) {
    if (image.width <= 0 || image.height <= 0)
        return Error{fmt::format("cannot encode an empty {}x{} image", image.width, image.height)};
    if (image.width > std::numeric_limits<int>::max() / 4 / image.height ||
        image.rgba.size() != static_cast<std::size_t>(image.width) *
                                 static_cast<std::size_t>(image.height) * 4u)
        return Error{fmt::format("image of {}x{} pixels has {} bytes, expected width x height x 4",
                                 image.width, image.height, image.rgba.size())};
    std::vector<std::uint8_t> out;
    if (!stbi_write_png_to_func(append, &out, image.width, image.height, 4, image.rgba.data(),
                                image.width * 4) ||
        out.empty())
        return Error{"the PNG encoder failed"};
    return out;
}

Result<bool> write_png(const std::string& path, const Image& image) {
    auto png = encode_png(image);
    if (!png) return Error{path + ": " + png.error().message};
    return write_file_atomic(path, *png);
}

Result<Image> load_png(const std::string& path) {
    auto bytes = read_file_bytes(path);
    if (!bytes) return bytes.error();
    if (bytes->size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
        return Error{path + ": file too large"};
    int w = 0, h = 0, channels = 0;
    stbi_uc* data = stbi_load_from_memory(bytes->data(), static_cast<int>(bytes->size()), &w, &h,
                                          &channels, 4);
    if (!data) return Error{fmt::format("{}: not a readable PNG ({})", path, stbi_failure_reason())};
    Image img;
    img.width = w;
    img.height = h;
    img.rgba.assign(data, data + static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 4u);
    stbi_image_free(data);
    return img;
}

}  // namespace slanim::gfx

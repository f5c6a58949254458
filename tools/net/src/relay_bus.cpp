// SPDX-License-Identifier: MIT
// Grid files, bus subjects and bus messages. See slanim/net/relay_bus.hpp.
#include "slanim/net/relay_bus.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <set>
#include <utility>

#include "slanim/formats/io.hpp"

namespace slanim {

namespace {

constexpr std::size_t kMaxGridRegions = 4096;

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> split_ws(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
        const std::size_t b = i;
        while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
        if (i > b) out.push_back(s.substr(b, i - b));
    }
    return out;
}

double get_f64(const std::uint8_t* p) {
    std::uint64_t u = 0;
    for (int i = 0; i < 8; ++i) u |= static_cast<std::uint64_t>(p[i]) << (8 * i);
    double d;
    std::memcpy(&d, &u, 8);
    return d;
}

void put_f64(std::vector<std::uint8_t>& out, double d) {
    std::uint64_t u;
    std::memcpy(&u, &d, 8);
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
}

}  // namespace

bool valid_region_name(std::string_view name) {
    if (name.empty() || name.size() > 64) return false;
    for (char c : name)
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return false;
    return true;
}

std::string bus_subject(std::string_view region) {
    return fmt::format("slanim.relay.{}.blocks", region);
}

const GridRegion* Grid::find(std::string_view name) const {
    for (const auto& r : regions)
        if (r.name == name) return &r;
    return nullptr;
}

std::vector<const GridRegion*> Grid::neighbours(std::string_view name) const {
    std::vector<const GridRegion*> out;
    const GridRegion* me = find(name);
    if (!me) return out;
    for (const auto& r : regions)
        if (&r != me && std::abs(r.grid_x - me->grid_x) <= 1 && std::abs(r.grid_y - me->grid_y) <= 1)
            out.push_back(&r);
    return out;
}

Result<Grid> parse_grid(std::string_view text, std::string_view source) {
    Grid g;
    std::set<std::string, std::less<>> names;
    std::set<std::pair<int, int>> places;
    long long line_no = 0;
    std::size_t at = 0;
    while (at <= text.size()) {
        const std::size_t nl = text.find('\n', at);
        const std::string_view raw =
            text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
        at = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
        ++line_no;
        const std::string_view line = trim(raw);
        if (line.empty() || line.front() == '#') continue;
        auto bad = [&](const std::string& why) {
            Error e{fmt::format("{}:{}: {} (expected 'NAME GRID_X GRID_Y', NAME of 1..64 "
                                "[A-Za-z0-9_-], GRID_X and GRID_Y integers in [0, 65535])",
                                source, line_no, why),
                    -1, line_no};
            return e;
        };
        const auto f = split_ws(line);
        if (f.size() != 3) return bad(fmt::format("{} fields", f.size()));
        if (!valid_region_name(f[0]))
            return bad(fmt::format("'{}' is not a region name", f[0].substr(0, 80)));
        int xy[2] = {0, 0};
        for (int k = 0; k < 2; ++k) {
            const std::string_view s = f[1 + k];
            auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), xy[k]);
            if (ec != std::errc() || end != s.data() + s.size() || xy[k] < 0 || xy[k] > 65535)
                return bad(fmt::format("'{}' is not a grid coordinate", s.substr(0, 80)));
        }
        if (names.count(f[0])) return bad(fmt::format("region '{}' listed twice", f[0]));
        if (places.count({xy[0], xy[1]}))
            return bad(fmt::format("two regions at grid position {} {}", xy[0], xy[1]));
        if (g.regions.size() == kMaxGridRegions)
            return bad(fmt::format("more than {} regions", kMaxGridRegions));
        names.emplace(f[0]);
        places.emplace(xy[0], xy[1]);
        g.regions.push_back({std::string(f[0]), xy[0], xy[1]});
    }
    if (g.regions.empty()) return Error{fmt::format("{}: no region listed", source)};
    return g;
}

Result<Grid> load_grid(const std::string& path) {
    auto bytes = read_file_bytes(path);
    if (!bytes) return Error{fmt::format("{}: {}", path, bytes.error().describe())};
    return parse_grid({reinterpret_cast<const char*>(bytes->data()), bytes->size()}, path);
}

const char* bus_fault_name(BusFault f) {
    switch (f) {
        case BusFault::Oversize: return "oversize";
        case BusFault::Short: return "short";
        case BusFault::Magic: return "magic";
        case BusFault::Kind: return "kind";
        case BusFault::Sender: return "sender";
        case BusFault::Flags: return "flags";
        case BusFault::Position: return "position";
        case BusFault::BlockCount: return "block count";
        case BusFault::BlockLength: return "block length";
        case BusFault::Trailing: return "trailing bytes";
    }
    return "unknown";
}

Result<bool> decode_bus_message(std::span<const std::uint8_t> b, BusMessage& out, BusFault* fault) {
    out.blocks.clear();
    auto fail = [&](BusFault f, std::size_t offset, std::string why) -> Result<bool> {
        if (fault) *fault = f;
        return Error{fmt::format("bus message: {}", why), static_cast<long long>(offset)};
    };
    if (b.size() > kBusMaxMessageSize)
        return fail(BusFault::Oversize, kBusMaxMessageSize,
                    fmt::format("{} bytes, more than the {} a message can hold", b.size(),
                                kBusMaxMessageSize));
    if (b.size() < kBusHeaderSize)
        return fail(BusFault::Short, b.size(),
                    fmt::format("{} bytes, shorter than the {}-byte header", b.size(), kBusHeaderSize));
    if (b[0] != kBusMagicVersion)
        return fail(BusFault::Magic, 0, fmt::format("magic/version 0x{:02X}, expected 0xB1", b[0]));
    if (b[1] != 1) return fail(BusFault::Kind, 1, fmt::format("kind {}, expected 1 (blocks)", b[1]));
    std::memcpy(out.sender.bytes.data(), b.data() + 2, 16);
    if (out.sender.is_null()) return fail(BusFault::Sender, 2, "null sender id");
    if (b[18] & ~1u) return fail(BusFault::Flags, 18, fmt::format("unknown flags 0x{:02X}", b[18]));
    out.has_position = (b[18] & 1u) != 0;
    out.x = get_f64(b.data() + 19);
    out.y = get_f64(b.data() + 27);
    out.z = get_f64(b.data() + 35);
    if (!std::isfinite(out.x) || !std::isfinite(out.y) || !std::isfinite(out.z))
        return fail(BusFault::Position, 19, "non-finite position");
    // With the 'known' flag off the 24 coordinate bytes are all zero, as encode_bus_message
    // writes them: a byte test, not `x != 0`, so that -0.0 (which compares equal to 0 but is
    // written as +0.0) is refused and every accepted message re-encodes to its own bytes.
    if (!out.has_position &&
        std::any_of(b.begin() + 19, b.begin() + 43, [](std::uint8_t v) { return v != 0; }))
        return fail(BusFault::Position, 19, "a position with the 'known' flag off");
    const std::size_t n = b[43];
    if (n == 0 || n > kBusMaxBlocks)
        return fail(BusFault::BlockCount, 43,
                    fmt::format("block count {}, expected 1..{}", n, kBusMaxBlocks));
    std::size_t at = kBusHeaderSize;
    for (std::size_t i = 0; i < n; ++i) {
        if (at >= b.size())
            return fail(BusFault::BlockLength, at, fmt::format("block {} of {} missing", i + 1, n));
        const std::size_t len = b[at];
        if (len == 0 || len > kBusMaxBlockSize)
            return fail(BusFault::BlockLength, at,
                        fmt::format("block length {}, expected 1..{}", len, kBusMaxBlockSize));
        if (at + 1 + len > b.size())
            return fail(BusFault::BlockLength, at,
                        fmt::format("block {} of {} bytes runs past the end", i + 1, len));
        out.blocks.emplace_back(b.data() + at + 1, len);
        at += 1 + len;
    }
    if (at != b.size())
        return fail(BusFault::Trailing, at, fmt::format("{} bytes after the last block", b.size() - at));
    return true;
}

Result<std::size_t> encode_bus_message(const Uuid& sender, bool has_position, double x, double y,
                                       double z,
                                       std::span<const std::span<const std::uint8_t>> blocks,
                                       std::vector<std::uint8_t>& out) {
    out.clear();
    if (sender.is_null()) return Error{"bus message: null sender id"};
    if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(z))
        return Error{"bus message: non-finite position"};
    if (blocks.empty() || blocks.size() > kBusMaxBlocks)
        return Error{fmt::format("bus message: {} blocks, expected 1..{}", blocks.size(), kBusMaxBlocks)};
    out.push_back(kBusMagicVersion);
    out.push_back(1);
    out.insert(out.end(), sender.bytes.begin(), sender.bytes.end());
    out.push_back(has_position ? 1 : 0);
    put_f64(out, has_position ? x : 0.0);
    put_f64(out, has_position ? y : 0.0);
    put_f64(out, has_position ? z : 0.0);
    out.push_back(static_cast<std::uint8_t>(blocks.size()));
    for (const auto& bl : blocks) {
        if (bl.empty() || bl.size() > kBusMaxBlockSize) {
            out.clear();
            return Error{fmt::format("bus message: a block of {} bytes, expected 1..{}", bl.size(),
                                     kBusMaxBlockSize)};
        }
        out.push_back(static_cast<std::uint8_t>(bl.size()));
        out.insert(out.end(), bl.begin(), bl.end());
    }
    return out.size();
}

}  // namespace slanim

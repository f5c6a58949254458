// SPDX-License-Identifier: MIT
#include "slanim/puppetry/datagram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

namespace slanim::puppetry {
const char* datagram_fault_name(DatagramFault f) {
    switch (f) {
        case DatagramFault::Short: return "short";
        case DatagramFault::Magic: return "magic";
        case DatagramFault::Kind: return "kind";
        case DatagramFault::BlockCount: return "block count";
        case DatagramFault::BlockLength: return "block length";
        case DatagramFault::Trailing: return "trailing bytes";
        case DatagramFault::PositionReport: return "position report";
        case DatagramFault::Oversize: return "oversize";
        case DatagramFault::CircuitCode: return "circuit code";
    }
    return "?";
}

namespace {

Error fail(std::string message, std::size_t offset) {
    return Error{std::move(message), static_cast<long long>(offset), -1};
}

float read_f32(const std::uint8_t* p) {
    std::uint32_t u = static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
                      (static_cast<std::uint32_t>(p[2]) << 16) |
                      (static_cast<std::uint32_t>(p[3]) << 24);
    return std::bit_cast<float>(u);
}

void write_f32(std::uint8_t* p, float f) {
    const auto u = std::bit_cast<std::uint32_t>(f);
    p[0] = static_cast<std::uint8_t>(u);
    p[1] = static_cast<std::uint8_t>(u >> 8);
    p[2] = static_cast<std::uint8_t>(u >> 16);
    p[3] = static_cast<std::uint8_t>(u >> 24);
}

void write_header(std::uint8_t* p, DatagramKind kind, const AgentId& agent) {
    p[0] = kDatagramMagicVersion;
    p[1] = static_cast<std::uint8_t>(kind);
    std::memcpy(p + 2, agent.bytes.data(), 16);
}

Result<std::size_t> check_blocks(std::span<const std::span<const std::uint8_t>> blocks) {
    if (blocks.empty()) return fail("puppetry datagram: no block to send", 0);
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        if (blocks[i].empty())
            return fail("puppetry datagram: block " + std::to_string(i) + " is empty", 0);
        if (blocks[i].size() > kMaxBlockSize)
            return fail("puppetry datagram: block " + std::to_string(i) + " has " +
                            std::to_string(blocks[i].size()) + " bytes, more than 255",
                        0);
    }
    return blocks.size();
}

void append_datagram(const AgentId& agent, std::span<const std::span<const std::uint8_t>> blocks,
                     std::vector<std::uint8_t>& out) {
    std::size_t size = kDatagramHeaderSize + 1;
    for (const auto& b : blocks) size += 1 + b.size();
    out.resize(size);
    write_header(out.data(), DatagramKind::Blocks, agent);
    out[kDatagramHeaderSize] = static_cast<std::uint8_t>(blocks.size());
    std::size_t at = kDatagramHeaderSize + 1;
    for (const auto& b : blocks) {
        out[at++] = static_cast<std::uint8_t>(b.size());
        std::memcpy(out.data() + at, b.data(), b.size());
        at += b.size();
    }
}

}  // namespace

Result<Datagram> decode_datagram(std::span<const std::uint8_t> bytes, DatagramFault* fault_out) {
    const auto fault = [fault_out](DatagramFault f, Error e) {
        if (fault_out) *fault_out = f;
        return e;
    };
    if (bytes.size() < kDatagramHeaderSize)
        return fault(DatagramFault::Short, fail("puppetry datagram: " + std::to_string(bytes.size()) +
                        " bytes, shorter than the 18-byte header",
                    bytes.size()));
    if (bytes[0] != kDatagramMagicVersion)
        return fault(DatagramFault::Magic, fail("puppetry datagram: magic/version byte is " + std::to_string(bytes[0]) +
                        ", expected 161 (0xA1)",
                    0));
    Datagram d;
    std::memcpy(d.agent.bytes.data(), bytes.data() + 2, 16);
    switch (bytes[1]) {
        case static_cast<std::uint8_t>(DatagramKind::Blocks): {
            d.kind = DatagramKind::Blocks;
            if (bytes.size() < kDatagramHeaderSize + 1)
                return fault(DatagramFault::BlockCount, fail("puppetry datagram: blocks datagram ends before its block count",
                            bytes.size()));
            const std::size_t count = bytes[kDatagramHeaderSize];
            if (count == 0)
                return fault(DatagramFault::BlockCount, fail("puppetry datagram: block count is 0, expected 1..255",
                            kDatagramHeaderSize));
            std::size_t at = kDatagramHeaderSize + 1;
            for (std::size_t i = 0; i < count; ++i) {
                if (at >= bytes.size())
                    return fault(DatagramFault::BlockLength, fail("puppetry datagram: ends before block " + std::to_string(i) +
                                    " of " + std::to_string(count),
                                at));
                const std::size_t len = bytes[at];
                if (len == 0)
                    return fault(DatagramFault::BlockLength, fail("puppetry datagram: block " + std::to_string(i) +
                                    " has length 0, expected 1..255",
                                at));
                if (len > bytes.size() - at - 1)
                    return fault(DatagramFault::BlockLength, fail("puppetry datagram: block " + std::to_string(i) + " of " +
                                    std::to_string(len) + " bytes runs past the end (" +
                                    std::to_string(bytes.size() - at - 1) + " left)",
                                at));
                at += 1 + len;
            }
            if (at != bytes.size())
                return fault(DatagramFault::Trailing, fail("puppetry datagram: " + std::to_string(bytes.size() - at) +
                                " bytes after the last block",
                            at));
            d.blocks = BlockList(bytes.subspan(kDatagramHeaderSize + 1), count);
            return d;
        }
        case static_cast<std::uint8_t>(DatagramKind::PositionReport): {
            d.kind = DatagramKind::PositionReport;
            if (bytes.size() != kPositionReportSize)
                return fault(DatagramFault::PositionReport, fail("puppetry datagram: position report has " +
                                std::to_string(bytes.size()) + " bytes, expected 30",
                            std::min(bytes.size(), kPositionReportSize)));
            const std::uint8_t* p = bytes.data() + kDatagramHeaderSize;
            d.position = {read_f32(p), read_f32(p + 4), read_f32(p + 8)};
            if (!is_finite(d.position))
                return fault(DatagramFault::PositionReport, fail("puppetry datagram: position report holds a non-finite coordinate",
                            kDatagramHeaderSize));
            return d;
        }
        case static_cast<std::uint8_t>(DatagramKind::UseCircuitCode): {
            d.kind = DatagramKind::UseCircuitCode;
            if (bytes.size() != kUseCircuitCodeSize)
                return fault(DatagramFault::CircuitCode, fail("puppetry datagram: use circuit code has " +
                                std::to_string(bytes.size()) + " bytes, expected 22",
                            std::min(bytes.size(), kUseCircuitCodeSize)));
            const std::uint8_t* p = bytes.data() + kDatagramHeaderSize;
            d.circuit_code = static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
                             (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
            return d;
        }
        default:
            return fault(DatagramFault::Kind, fail("puppetry datagram: unknown kind " + std::to_string(bytes[1]) +
                            ", expected 1 (blocks), 2 (position report) or 3 (use circuit code)",
                        1));
    }
}

Result<std::size_t> encode_blocks(const AgentId& agent,
                                  std::span<const std::span<const std::uint8_t>> blocks,
                                  std::vector<std::uint8_t>& out) {
    auto ok = check_blocks(blocks);
    if (!ok) return ok.error();
    if (blocks.size() > kMaxBlocksPerDatagram)
        return fail("puppetry datagram: " + std::to_string(blocks.size()) +
                        " blocks, at most 255 fit in one datagram",
                    0);
    out.clear();
    append_datagram(agent, blocks, out);
    return out.size();
}

Result<std::size_t> encode_blocks_split(const AgentId& agent,
                                        std::span<const std::span<const std::uint8_t>> blocks,
                                        std::vector<std::vector<std::uint8_t>>& out,
                                        std::size_t soft_limit) {
    auto ok = check_blocks(blocks);
    if (!ok) return ok.error();
    std::size_t written = 0;
    std::size_t first = 0;
    while (first < blocks.size()) {
        std::size_t size = kDatagramHeaderSize + 1 + 1 + blocks[first].size();
        std::size_t last = first + 1;
        while (last < blocks.size() && last - first < kMaxBlocksPerDatagram &&
               size + 1 + blocks[last].size() <= soft_limit) {
            size += 1 + blocks[last].size();
            ++last;
        }
        out.emplace_back();
        append_datagram(agent, blocks.subspan(first, last - first), out.back());
        ++written;
        first = last;
    }
    return written;
}

Result<std::array<std::uint8_t, kPositionReportSize>> encode_position_report(const AgentId& agent,
                                                                            Vec3 position_m) {
    if (!is_finite(position_m))
        return fail("puppetry datagram: position report with a non-finite coordinate", 0);
    std::array<std::uint8_t, kPositionReportSize> out{};
    write_header(out.data(), DatagramKind::PositionReport, agent);
    write_f32(out.data() + kDatagramHeaderSize, position_m.x);
    write_f32(out.data() + kDatagramHeaderSize + 4, position_m.y);
    write_f32(out.data() + kDatagramHeaderSize + 8, position_m.z);
    return out;
}

}  // namespace slanim::puppetry

namespace slanim::puppetry {

std::array<std::uint8_t, kUseCircuitCodeSize> encode_use_circuit_code(const AgentId& agent,
                                                                      std::uint32_t circuit_code) {
    std::array<std::uint8_t, kUseCircuitCodeSize> out{};
    write_header(out.data(), DatagramKind::UseCircuitCode, agent);
    for (int i = 0; i < 4; ++i)
        out[kDatagramHeaderSize + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(circuit_code >> (8 * i));
    return out;
}

}  // namespace slanim::puppetry

// SPDX-License-Identifier: MIT
// Puppetry event blocks (llpuppetevent.cpp: LLPuppetEvent::pack/unpack,
// LLPuppetJointEvent::pack/unpack; spec §9.2). See puppetry.hpp for both layouts.
#include "slanim/puppetry/event_block.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "slanim/core/quantize.hpp"

namespace slanim {

namespace {

constexpr float kLo = -kPuppetryQuantRange;
constexpr float kHi = kPuppetryQuantRange;
// |xyz|² above this is not the imaginary part of a unit quaternion (documented layout).
constexpr float kMaxImaginarySq = 1.0001f;

// ---- little-endian primitives -------------------------------------------------------------

void put_u16(std::uint8_t* p, std::uint16_t v) {
    p[0] = static_cast<std::uint8_t>(v & 0xFFu);
    p[1] = static_cast<std::uint8_t>(v >> 8);
}
void put_u32(std::uint8_t* p, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>((v >> (8 * i)) & 0xFFu);
}
void put_f32(std::uint8_t* p, float f) { put_u32(p, std::bit_cast<std::uint32_t>(f)); }

std::uint16_t get_u16(const std::uint8_t* p) {
    return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}
std::uint32_t get_u32(const std::uint8_t* p) {
    return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
           (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}
float get_f32(const std::uint8_t* p) { return std::bit_cast<float>(get_u32(p)); }

// ---- the viewer's quantization (llquantize.h, llquaternion.cpp, llpuppetevent.cpp) ----------

// F32_to_U16_ROUND: clamp, normalize to [0, 1], ll_round(v · 65535) = floor(v · 65535 + 0.5).
std::uint16_t f32_to_u16_round(float val, float lo, float hi) {
    if (std::isnan(val)) return 0;
    val = val < lo ? lo : (val > hi ? hi : val);
    val -= lo;
    val /= (hi - lo);
    const float code = std::floor(val * 65535.f + 0.5f);
    if (!(code >= 0.f)) return 0;
    if (code > 65535.f) return 65535;
    return static_cast<std::uint16_t>(code);
}

// pack_quat: the three codes the viewer writes for `q` (after setRotation's normalize).
void viewer_quat_codes(Quat q, std::uint16_t codes[3]) {
    q = ll_normalize(q);
    if (q.w < 0.f) q = Quat{-q.x, -q.y, -q.z, -q.w};
    // LLQuaternion::quantize16(lower, upper): round-encode and decode all four, normalize.
    q.x = u16_to_f32(f32_to_u16_round(q.x, kLo, kHi), kLo, kHi);
    q.y = u16_to_f32(f32_to_u16_round(q.y, kLo, kHi), kLo, kHi);
    q.z = u16_to_f32(f32_to_u16_round(q.z, kLo, kHi), kLo, kHi);
    q.w = u16_to_f32(f32_to_u16_round(q.w, kLo, kHi), kLo, kHi);
    q = ll_normalize(q);
    codes[0] = f32_to_u16(q.x, kLo, kHi);
    codes[1] = f32_to_u16(q.y, kLo, kHi);
    codes[2] = f32_to_u16(q.z, kLo, kHi);
}

// pack_vec3: LLVector3::quantize16 (floor) then floor-encode.
void viewer_vec_codes(Vec3 v, std::uint16_t codes[3]) {
    v = quantize16(v, kLo, kHi);
    codes[0] = f32_to_u16(v.x, kLo, kHi);
    codes[1] = f32_to_u16(v.y, kLo, kHi);
    codes[2] = f32_to_u16(v.z, kLo, kHi);
}

Vec3 viewer_vec_decode(const std::uint16_t codes[3]) {
    return {u16_to_f32(codes[0], kLo, kHi), u16_to_f32(codes[1], kLo, kHi),
            u16_to_f32(codes[2], kLo, kHi)};
}

// unpack_quat's completion of w from x, y, z (also used for the documented layout).
Quat complete_quat(float x, float y, float z) {
    const float len_sq = x * x + y * y + z * z;
    if (len_sq > 1.f) {
        const float len = std::sqrt(len_sq);
        return {x / len, y / len, z / len, 0.f};
    }
    return {x, y, z, std::sqrt(1.f - len_sq)};
}

Quat viewer_quat_decode(const std::uint16_t codes[3]) {
    const Vec3 v = viewer_vec_decode(codes);
    return complete_quat(v.x, v.y, v.z);
}

// Documented layout: the stored imaginary part (w ≥ 0).
Vec3 doc_quat_xyz(Quat q) {
    q = ll_normalize(q);
    if (q.w < 0.f) q = Quat{-q.x, -q.y, -q.z, -q.w};
    return {q.x, q.y, q.z};
}

// ---- flags ----------------------------------------------------------------------------------

// Model flags → documented mask. Precondition: doc_flags_error(flags) is empty.
std::uint8_t doc_mask_from_flags(std::uint8_t f) {
    std::uint8_t m = 0;
    if (f & kPuppetTargetPos) m |= kDocPosition;
    if (f & kPuppetLocalPos) m |= kDocPosition | kDocPositionParent;
    if (f & kPuppetTargetRot) m |= kDocOrientation;
    if (f & kPuppetLocalRot) m |= kDocOrientation | kDocOrientationParent;
    if (f & kPuppetDisableConstraint) m |= kDocDisableConstraint;
    return m;
}

std::uint8_t flags_from_doc_mask(std::uint8_t m) {
    std::uint8_t f = 0;
    if (m & kDocPosition) f |= (m & kDocPositionParent) ? kPuppetLocalPos : kPuppetTargetPos;
    if (m & kDocOrientation) f |= (m & kDocOrientationParent) ? kPuppetLocalRot : kPuppetTargetRot;
    if (m & kDocDisableConstraint) f |= kPuppetDisableConstraint;
    return f;
}

const char* doc_flags_error(std::uint8_t f) {
    if (f & kPuppetLocalScale) return "scale (LocalScale) is reserved in the documented layout";
    if (f & kPuppetHasDelegated) return "flag HasDelegated (0x40) has no documented-layout bit";
    if (f & kPuppetEnableReporting) return "flag EnableReporting (0x80) has no documented-layout bit";
    if ((f & kPuppetMaskPos) == kPuppetMaskPos)
        return "both LocalPos and TargetPos: the documented layout carries one position frame";
    if ((f & kPuppetMaskRot) == kPuppetMaskRot)
        return "both LocalRot and TargetRot: the documented layout carries one orientation frame";
    return nullptr;
}

int vector_count(std::uint8_t f) {
    return ((f & kPuppetMaskRot) ? 1 : 0) + ((f & kPuppetMaskPos) ? 1 : 0) +
           ((f & kPuppetLocalScale) ? 1 : 0);
}

// ---- decoding -------------------------------------------------------------------------------

class BlockDecoder {
public:
    BlockDecoder(std::span<const std::uint8_t> b, PuppetryLayout layout) : b_(b), layout_(layout) {}

    Result<std::size_t> run(std::vector<PuppetryEvent>& out) {
        const std::size_t old_size = out.size();
        if (b_.size() > kPuppetryMaxBlockBytes) {
            return Error{fmt::format("block of {} bytes exceeds the {}-byte maximum (1-byte length prefix)",
                                     b_.size(), kPuppetryMaxBlockBytes), 0, -1};
        }
        if (b_.empty()) return Error{"empty block: expected a 10-byte event header", 0, -1};
        std::size_t p = 0;
        std::size_t events = 0;
        while (p < b_.size()) {
            if (!read_event(p, out)) {
                out.resize(old_size);
                return err_;
            }
            ++events;
        }
        return events;
    }

private:
    std::span<const std::uint8_t> b_;
    PuppetryLayout layout_;
    Error err_;

    bool fail(std::size_t at, std::string what) {
        err_ = Error{std::move(what), static_cast<long long>(at), -1};
        return false;
    }

    bool read_event(std::size_t& p, std::vector<PuppetryEvent>& out) {
        const std::size_t start = p;
        if (b_.size() - p < kPuppetryHeaderBytes)
            return fail(p, fmt::format("truncated event header: {} bytes left, a header is {}",
                                       b_.size() - p, kPuppetryHeaderBytes));
        const std::uint8_t* h = b_.data() + p;
        PuppetryEvent ev;
        ev.timestamp_ms = static_cast<std::int32_t>(get_u32(h));
        const std::uint16_t count = get_u16(h + 4);
        const auto payload = static_cast<std::int32_t>(get_u32(h + 6));
        if (payload < 0) return fail(start + 6, fmt::format("negative payload length {}", payload));
        if (static_cast<std::size_t>(payload) > kPuppetryMaxPayloadBytes)
            return fail(start + 6, fmt::format("payload length {} exceeds the {} bytes a viewer can receive "
                                               "(PUPPET_MAX_EVENT_BYTES: it would overflow the buffer)",
                                               payload, kPuppetryMaxPayloadBytes));
        const std::size_t body = start + kPuppetryHeaderBytes;
        const std::size_t left = b_.size() - body;
        if (static_cast<std::size_t>(payload) > left)
            return fail(start + 6, fmt::format("payload length {} runs past the end of the block "
                                               "({} bytes left)", payload, left));
        const std::size_t end = body + static_cast<std::size_t>(payload);
        ev.joints.reserve(std::min<std::size_t>(count, static_cast<std::size_t>(payload) / 3 + 1));
        std::size_t q = body;
        for (std::size_t j = 0; j < count; ++j) {
            if (q >= end) {
                return fail(q, fmt::format("the payload ends after {} of {} joint records",
                                           j, count));
            }
            PuppetryJointEvent je;
            if (!read_record(q, end, j, count, je)) return false;
            ev.joints.push_back(je);
        }
        if (q != end)
            return fail(q, fmt::format("{} unread payload bytes after the {} joint records",
                                       end - q, count));
        out.push_back(std::move(ev));
        p = end;
        return true;
    }

    bool read_record(std::size_t& q, std::size_t end, std::size_t j, std::size_t count,
                     PuppetryJointEvent& je) {
        const std::size_t start = q;
        if (end - q < 3)
            return fail(q, fmt::format("joint record {} of {} truncated: {} bytes left, "
                                       "needs at least 3", j + 1, count, end - q));
        const std::uint8_t* r = b_.data() + q;
        je.joint_id = static_cast<std::int16_t>(get_u16(r));
        const std::uint8_t mask = r[2];
        if (layout_ == PuppetryLayout::Documented) {
            if (mask & (kDocScaleReserved | 0x20 | 0x40))
                return fail(start + 2, fmt::format("joint record {} of {}: reserved mask bit(s) "
                                                   "0x{:02x} set", j + 1, count,
                                                   static_cast<unsigned>(mask & 0x70)));
            if ((mask & kDocPositionParent) && !(mask & kDocPosition))
                return fail(start + 2, fmt::format("joint record {} of {}: mask 0x02 (position "
                                                   "in parent frame) without 0x01 (position)",
                                                   j + 1, count));
            if ((mask & kDocOrientationParent) && !(mask & kDocOrientation))
                return fail(start + 2, fmt::format("joint record {} of {}: mask 0x08 (orientation "
                                                   "in parent frame) without 0x04 (orientation)",
                                                   j + 1, count));
            je.flags = flags_from_doc_mask(mask);
        } else {
            je.flags = mask;
        }
        const std::size_t need = puppetry_record_size(je.flags, layout_);
        if (end - q < need)
            return fail(q, fmt::format("joint record {} of {} (joint {}, flags 0x{:02x}) "
                                       "truncated: needs {} bytes, {} left in the payload",
                                       j + 1, count, je.joint_id, static_cast<unsigned>(mask),
                                       need, end - q));
        q += 3;
        if (layout_ == PuppetryLayout::Viewer) {
            std::uint16_t c[3];
            const auto codes = [&](std::size_t at) {
                for (int k = 0; k < 3; ++k) c[k] = get_u16(b_.data() + at + 2 * static_cast<std::size_t>(k));
            };
            if (je.flags & kPuppetMaskRot) { codes(q); je.rotation = viewer_quat_decode(c); q += 6; }
            if (je.flags & kPuppetMaskPos) { codes(q); je.position = viewer_vec_decode(c); q += 6; }
            if (je.flags & kPuppetLocalScale) { codes(q); je.scale = viewer_vec_decode(c); q += 6; }
            return true;
        }
        const auto triple = [&](std::size_t at, Vec3& v) {
            v = {get_f32(b_.data() + at), get_f32(b_.data() + at + 4), get_f32(b_.data() + at + 8)};
            return is_finite(v);
        };
        if (mask & kDocPosition) {
            if (!triple(q, je.position))
                return fail(q, fmt::format("joint record {} of {}: non-finite position", j + 1, count));
            q += 12;
        }
        if (mask & kDocOrientation) {
            Vec3 v;
            if (!triple(q, v))
                return fail(q, fmt::format("joint record {} of {}: non-finite orientation", j + 1, count));
            if (!(v.x * v.x + v.y * v.y + v.z * v.z <= kMaxImaginarySq))
                return fail(q, fmt::format("joint record {} of {}: orientation ({}, {}, {}) is not "
                                           "the imaginary part of a unit quaternion", j + 1, count,
                                           v.x, v.y, v.z));
            je.rotation = complete_quat(v.x, v.y, v.z);
            q += 12;
        }
        return true;
    }
};

// ---- encoding -------------------------------------------------------------------------------

Error encode_error(std::size_t event_index, std::size_t joint_index, const std::string& what) {
    return Error{fmt::format("event {}, joint {}: {}", event_index, joint_index, what), -1, -1};
}

// Checks one joint for `layout`; empty string when it can be encoded.
std::string joint_problem(const PuppetryJointEvent& j, PuppetryLayout layout) {
    if (layout == PuppetryLayout::Documented) {
        if (const char* e = doc_flags_error(j.flags)) return e;
    }
    if (j.has_rotation() && !is_finite(j.rotation)) return "non-finite rotation";
    if (j.has_position() && !is_finite(j.position)) return "non-finite position";
    if (j.has_scale() && !is_finite(j.scale)) return "non-finite scale";
    return {};
}

// Writes one record at p (puppetry_record_size bytes).
void write_record(std::uint8_t* p, const PuppetryJointEvent& j, PuppetryLayout layout) {
    put_u16(p, static_cast<std::uint16_t>(j.joint_id));
    std::size_t q = 3;
    if (layout == PuppetryLayout::Viewer) {
        p[2] = j.flags;
        std::uint16_t c[3];
        const auto put = [&] {
            for (int k = 0; k < 3; ++k) put_u16(p + q + 2 * static_cast<std::size_t>(k), c[k]);
            q += 6;
        };
        if (j.flags & kPuppetMaskRot) { viewer_quat_codes(j.rotation, c); put(); }
        if (j.flags & kPuppetMaskPos) { viewer_vec_codes(j.position, c); put(); }
        if (j.flags & kPuppetLocalScale) { viewer_vec_codes(j.scale, c); put(); }
        return;
    }
    const std::uint8_t mask = doc_mask_from_flags(j.flags);
    p[2] = mask;
    const auto put = [&](Vec3 v) {
        put_f32(p + q, v.x);
        put_f32(p + q + 4, v.y);
        put_f32(p + q + 8, v.z);
        q += 12;
    };
    if (mask & kDocPosition) put(j.position);
    if (mask & kDocOrientation) put(doc_quat_xyz(j.rotation));
}

}  // namespace

bool operator==(const PuppetryJointEvent& a, const PuppetryJointEvent& b) {
    if (a.joint_id != b.joint_id || a.flags != b.flags) return false;
    if (a.has_rotation() && !(a.rotation == b.rotation)) return false;
    if (a.has_position() && !(a.position == b.position)) return false;
    if (a.has_scale() && !(a.scale == b.scale)) return false;
    return true;
}

std::size_t puppetry_record_size(std::uint8_t flags, PuppetryLayout layout) {
    if (layout == PuppetryLayout::Viewer) return 3 + 6 * static_cast<std::size_t>(vector_count(flags));
    const std::uint8_t m = doc_mask_from_flags(flags);
    return 3 + ((m & kDocPosition) ? 12u : 0u) + ((m & kDocOrientation) ? 12u : 0u);
}

Result<std::size_t> PuppetryEncoder::encode(const PuppetryEvent& event, PuppetryBlocks& out) const {
    return encode(std::span<const PuppetryEvent>(&event, 1), out);
}

Result<std::size_t> PuppetryEncoder::encode(std::span<const PuppetryEvent> events,
                                            PuppetryBlocks& out) const {
    if (o_.event_size < kPuppetryMinEventSize)
        return Error{fmt::format("event_size {} is below the minimum of {}", o_.event_size,
                                 kPuppetryMinEventSize), -1, -1};
    // One event per block: its payload stays within what a viewer receives.
    const std::size_t cap = std::min<std::size_t>(static_cast<std::size_t>(o_.event_size),
                                                  kPuppetryMaxEventBlockBytes);
    const bool budget12 = o_.viewer_size_budget && o_.layout == PuppetryLayout::Viewer;
    const std::size_t old_bytes = out.bytes_.size();
    const std::size_t old_blocks = out.ends_.size();
    const auto rollback = [&] {
        out.bytes_.resize(old_bytes);
        out.ends_.resize(old_blocks);
    };

    for (std::size_t e = 0; e < events.size(); ++e) {
        const PuppetryEvent& ev = events[e];
        std::size_t header = 0;  // offset of the current block's header in out.bytes_
        std::size_t count = 0;
        const auto open_block = [&] {
            header = out.bytes_.size();
            out.bytes_.resize(header + kPuppetryHeaderBytes);
            count = 0;
        };
        const auto close_block = [&] {
            std::uint8_t* h = out.bytes_.data() + header;
            const std::size_t payload = out.bytes_.size() - header - kPuppetryHeaderBytes;
            put_u32(h, static_cast<std::uint32_t>(ev.timestamp_ms));
            put_u16(h + 4, static_cast<std::uint16_t>(count));
            put_u32(h + 6, static_cast<std::uint32_t>(payload));
            out.ends_.push_back(out.bytes_.size());
        };
        open_block();
        for (std::size_t j = 0; j < ev.joints.size(); ++j) {
            const PuppetryJointEvent& je = ev.joints[j];
            if (const std::string why = joint_problem(je, o_.layout); !why.empty()) {
                rollback();
                return encode_error(e, j, why);
            }
            const std::size_t size = puppetry_record_size(je.flags, o_.layout);
            const std::size_t budget =
                budget12 ? 3 + 12 * static_cast<std::size_t>(vector_count(je.flags)) : size;
            if (kPuppetryHeaderBytes + budget > cap) {
                rollback();
                return encode_error(e, j, fmt::format("a joint record of {} bytes does not fit a "
                                                      "block of {} bytes", budget, cap));
            }
            const std::size_t used = out.bytes_.size() - header;
            if (used + budget > cap || count == 0xFFFF) {
                close_block();
                open_block();
            }
            const std::size_t at = out.bytes_.size();
            out.bytes_.resize(at + size);
            write_record(out.bytes_.data() + at, je, o_.layout);
            ++count;
        }
        close_block();
    }
    return out.ends_.size() - old_blocks;
}

Result<std::size_t> decode_puppetry_block(std::span<const std::uint8_t> block,
                                          PuppetryLayout layout, std::vector<PuppetryEvent>& out) {
    return BlockDecoder(block, layout).run(out);
}

PuppetryEvent puppetry_quantized(const PuppetryEvent& event, PuppetryLayout layout) {
    PuppetryEvent q = event;
    for (PuppetryJointEvent& j : q.joints) {
        if (layout == PuppetryLayout::Viewer) {
            std::uint16_t c[3];
            if (j.has_rotation()) { viewer_quat_codes(j.rotation, c); j.rotation = viewer_quat_decode(c); }
            if (j.has_position()) { viewer_vec_codes(j.position, c); j.position = viewer_vec_decode(c); }
            if (j.has_scale()) { viewer_vec_codes(j.scale, c); j.scale = viewer_vec_decode(c); }
        } else if (j.has_rotation()) {
            const Vec3 v = doc_quat_xyz(j.rotation);
            j.rotation = complete_quat(v.x, v.y, v.z);
        }
        // Components the flags do not carry are not transmitted: the decoder leaves defaults.
        if (!j.has_rotation()) j.rotation = Quat::identity();
        if (!j.has_position()) j.position = Vec3{};
        if (!j.has_scale()) j.scale = Vec3{};
    }
    return q;
}

}  // namespace slanim

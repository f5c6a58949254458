// SPDX-License-Identifier: MIT
// BVJ (SledjHamr's JSON BVH proposal): reader, writer, conversions.
#include "slanim/formats/bvj.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "json_read.hpp"
#include "slanim/core/quantize.hpp"
#include "slanim/core/skeleton.hpp"
#include "slanim/formats/io.hpp"
#include "slanim/formats/anim_codec.hpp"

namespace slanim {

namespace {

namespace jr = json_read;
using jr::Json;

constexpr float kDefaultEase = 0.3f;  // LLBVHLoader::reset

bool is_rotation(BvhChannel c) { return c >= BvhChannel::Xrotation; }

std::optional<BvhChannel> channel_from_name(std::string_view s) {
    for (int i = 0; i < 6; ++i)
        if (bvh_channel_name(static_cast<BvhChannel>(i)) == s) return static_cast<BvhChannel>(i);
    return std::nullopt;
}

// ---- reading ----

struct Reader {
    BvjMotion m;
    std::map<std::string, int, std::less<>> index;  // joint name → index

    void param(const std::string& k, const Json& v, const std::string& path, bool in_motion,
               std::vector<std::string>& seen) {
        if (std::find(seen.begin(), seen.end(), k) != seen.end())
            throw jr::ReadError{fmt::format("{}: '{}' is given both at the top level and inside "
                                            "MOTION",
                                            path, k)};
        seen.push_back(k);
        if (in_motion) m.params_in_motion = true;
        BvjParameters& p = m.params;
        if (k == "priority") {
            p.priority = jr::number(v, path, "a number (an SL priority is an integer 0..6)");
        } else if (k == "looped") {
            p.looped = jr::boolean(v, path);
        } else if (k == "hand_pose") {
            p.hand_pose = static_cast<std::uint32_t>(jr::integer(v, path, 0, 14, "an integer 0..14"));
        } else if (k == "emote") {
            p.emote = jr::string(v, path);
        } else {
            const float f = jr::real(v, path, 0.0, 3.0e38, "a number of seconds >= 0");
            if (k == "loop_in") p.loop_in = f;
            else if (k == "loop_out") p.loop_out = f;
            else if (k == "ease_in") p.ease_in = f;
            else if (k == "ease_out") p.ease_out = f;
            else p.duration = f;
        }
    }

    static bool is_param(std::string_view k) {
        return k == "priority" || k == "looped" || k == "loop_in" || k == "loop_out" ||
               k == "ease_in" || k == "ease_out" || k == "hand_pose" || k == "emote" ||
               k == "duration";
    }

    void hierarchy(const Json& root) {
        struct Item {
            const Json* v;
            std::string path;
            int parent;
            int depth;
        };
        std::vector<Item> stack{{&root, "$.HIERARCHY", -1, 1}};
        while (!stack.empty()) {
            Item it = std::move(stack.back());
            stack.pop_back();
            const Json& v = *it.v;
            if (!v.is_object()) jr::fail(it.path, "a joint object", v);
            if (it.depth > kBvjMaxDepth)
                throw jr::ReadError{fmt::format("{}: joints nested deeper than {}", it.path, kBvjMaxDepth)};
            if (v.contains("END")) {
                if (it.parent < 0) throw jr::ReadError{fmt::format("{}: the root cannot be an END site", it.path)};
                BvjJoint& owner = m.joints[static_cast<std::size_t>(it.parent)];
                for (auto kv = v.begin(); kv != v.end(); ++kv) {
                    const std::string p = jr::key_path(it.path, kv.key());
                    if (kv.key() == "END") {
                        if (!kv.value().is_boolean() || !kv.value().get<bool>()) jr::fail(p, "true", kv.value());
                    } else if (kv.key() == "OFFSET") {
                        owner.end_site_offset = jr::vec3(kv.value(), p);
                    } else {
                        throw jr::ReadError{fmt::format("{}: unknown key in an END site (expected END, OFFSET)", p)};
                    }
                }
                if (owner.has_end_site)
                    throw jr::ReadError{fmt::format("{}: joint '{}' has a second END site", it.path, owner.name)};
                owner.has_end_site = true;
                continue;
            }
            if (static_cast<int>(m.joints.size()) >= kBvjMaxJoints)
                throw jr::ReadError{fmt::format("{}: more than {} joints", it.path, kBvjMaxJoints)};
            BvjJoint j;
            j.parent = it.parent;
            bool has_name = false, has_channels = false;
            const Json* children = nullptr;
            std::string children_path;
            for (auto kv = v.begin(); kv != v.end(); ++kv) {
                const std::string& k = kv.key();
                const Json& x = kv.value();
                const std::string p = jr::key_path(it.path, k);
                if (k == "NAME") {
                    j.name = jr::string(x, p);
                    if (j.name.empty()) jr::fail(p, "a non-empty name", x);
                    has_name = true;
                } else if (k == "OFFSET") {
                    j.offset = jr::vec3(x, p);
                } else if (k == "CHANNELS") {
                    if (!x.is_array() || x.size() > 6) jr::fail(p, "an array of 0..6 channel names", x);
                    for (std::size_t c = 0; c < x.size(); ++c) {
                        const std::string cp = jr::index_path(p, c);
                        const auto ch = x[c].is_string() ? channel_from_name(x[c].get_ref<const std::string&>())
                                                         : std::nullopt;
                        if (!ch) jr::fail(cp, "a channel name (Xposition … Zrotation)", x[c]);
                        if (std::find(j.channels.begin(), j.channels.end(), *ch) != j.channels.end())
                            throw jr::ReadError{fmt::format("{}: channel {} is repeated", cp, bvh_channel_name(*ch))};
                        j.channels.push_back(*ch);
                    }
                    has_channels = true;
                } else if (k == "JOINTS") {
                    if (!x.is_array()) jr::fail(p, "an array of joint objects", x);
                    children = &x;
                    children_path = p;
                } else if (k == "ATTACH") {
                    if (!x.is_array()) jr::fail(p, "an array of attachment point ids", x);
                    for (std::size_t a = 0; a < x.size(); ++a)
                        j.attach.push_back(jr::integer(x[a], jr::index_path(p, a), -(1LL << 53), 1LL << 53,
                                                       "an integer attachment point id"));
                } else if (k == "PIVOT") {
                    j.pivot = jr::vec3(x, p, -1.0, 1.0, "an array of 3 numbers in -1..1");
                } else if (k == "PRIORITY") {
                    j.priority = static_cast<int>(jr::integer(x, p, -1, 6, "an integer -1..6"));
                } else {
                    throw jr::ReadError{fmt::format("{}: unknown key in a joint (expected NAME, OFFSET, "
                                                    "CHANNELS, JOINTS, ATTACH, PIVOT, PRIORITY)",
                                                    p)};
                }
            }
            if (!has_name) throw jr::ReadError{fmt::format("{}: a joint needs a NAME", it.path)};
            if (!has_channels) throw jr::ReadError{fmt::format("{}: joint '{}' needs CHANNELS", it.path, j.name)};
            if (!index.emplace(j.name, static_cast<int>(m.joints.size())).second)
                throw jr::ReadError{fmt::format("{}.NAME: joint name '{}' is used twice (keyframes "
                                                "name joints, so names must be unique)",
                                                it.path, j.name)};
            const int self = static_cast<int>(m.joints.size());
            m.joints.push_back(std::move(j));
            if (children)
                for (std::size_t c = children->size(); c-- > 0;)
                    stack.push_back({&(*children)[c], jr::index_path(children_path, c), self, it.depth + 1});
        }
    }

    void motion(const Json& v, std::vector<std::string>& seen) {
        const std::string path = "$.MOTION";
        if (!v.is_object()) jr::fail(path, "an object with \"Frame Time\" and \"Frames\"", v);
        const Json* frames = nullptr;
        bool has_time = false;
        for (auto kv = v.begin(); kv != v.end(); ++kv) {
            const std::string p = jr::key_path(path, kv.key());
            if (kv.key() == "Frame Time") {
                m.frame_time = jr::real(kv.value(), p, 0.0, 3.0e38, "a frame time in seconds > 0");
                if (!(m.frame_time > 0.f)) jr::fail(p, "a frame time in seconds > 0", kv.value());
                has_time = true;
            } else if (kv.key() == "Frames") {
                frames = &kv.value();
            } else if (is_param(kv.key())) {
                param(kv.key(), kv.value(), p, true, seen);
            } else {
                throw jr::ReadError{fmt::format("{}: unknown key in MOTION (expected \"Frame Time\", "
                                                "\"Frames\" or an animation parameter)",
                                                p)};
            }
        }
        if (!has_time) throw jr::ReadError{"$.MOTION: \"Frame Time\" is missing"};
        if (!frames) throw jr::ReadError{"$.MOTION: \"Frames\" is missing"};
        const std::string fp = path + "[\"Frames\"]";
        if (!frames->is_array() || frames->empty()) jr::fail(fp, "a non-empty array of frames", *frames);
        const std::size_t n = m.total_channels();
        if (static_cast<double>(frames->size()) * static_cast<double>(n) > static_cast<double>(kBvhMaxValues) ||
            frames->size() > static_cast<std::size_t>(kBvhMaxFrames))
            throw jr::ReadError{fmt::format("{}: {} frames of {} channels exceed the limits", fp, frames->size(), n)};
        m.num_frames = static_cast<int>(frames->size());
        m.frames.reserve(frames->size() * n);
        for (std::size_t f = 0; f < frames->size(); ++f) {
            const Json& row = (*frames)[f];
            const std::string rp = jr::index_path(fp, f);
            if (!row.is_array() || row.size() != n)
                jr::fail(rp, fmt::format("an array of {} numbers (the channel total)", n), row);
            for (std::size_t c = 0; c < n; ++c) m.frames.push_back(jr::real(row[c], jr::index_path(rp, c)));
        }
    }

    void keyframes(const Json& v) {
        const std::string path = "$.KEYFRAMES";
        if (!v.is_array() || v.empty()) jr::fail(path, "a non-empty array of keyframes", v);
        if (v.size() > kBvjMaxKeyframes) throw jr::ReadError{fmt::format("{}: more than {} keyframes", path, kBvjMaxKeyframes)};
        double values = 0;
        for (std::size_t i = 0; i < v.size(); ++i) {
            const Json& k = v[i];
            const std::string kp = jr::index_path(path, i);
            if (!k.is_object()) jr::fail(kp, "a keyframe object with AT", k);
            BvjKeyframe kf;
            const auto at = k.find("AT");
            if (at == k.end()) throw jr::ReadError{fmt::format("{}: AT is missing", kp)};
            kf.at = jr::real(*at, kp + ".AT", 0.0, 3.0e38, "a time in seconds >= 0");
            if (!m.keyframes.empty() && !(kf.at > m.keyframes.back().at))
                throw jr::ReadError{fmt::format("{}.AT: {} is not after the previous keyframe's {}", kp,
                                                kf.at, m.keyframes.back().at)};
            for (auto kv = k.begin(); kv != k.end(); ++kv) {
                if (kv.key() == "AT") continue;
                const std::string p = jr::key_path(kp, kv.key());
                const auto ji = index.find(kv.key());
                if (ji == index.end())
                    throw jr::ReadError{fmt::format("{}: no joint of HIERARCHY is named '{}'", p, kv.key())};
                const BvjJoint& joint = m.joints[static_cast<std::size_t>(ji->second)];
                const Json& a = kv.value();
                if (!a.is_array() || a.size() != joint.channels.size())
                    jr::fail(p, fmt::format("an array of {} values (the joint's channels; null = no key)",
                                            joint.channels.size()),
                             a);
                BvjJointValues jv;
                jv.joint = ji->second;
                int rot_null = 0, rot_total = 0;
                for (std::size_t c = 0; c < a.size(); ++c) {
                    if (a[c].is_null()) {
                        jv.values.emplace_back();
                    } else {
                        jv.values.emplace_back(jr::real(a[c], jr::index_path(p, c), -3.0e38, 3.0e38, "a number or null"));
                    }
                    if (is_rotation(joint.channels[c])) {
                        ++rot_total;
                        rot_null += a[c].is_null() ? 1 : 0;
                    }
                }
                if (rot_null != 0 && rot_null != rot_total)
                    throw jr::ReadError{fmt::format("{}: the rotation values must be all numbers or all "
                                                    "null (three angles make one rotation)",
                                                    p)};
                values += static_cast<double>(a.size());
                kf.joints.push_back(std::move(jv));
            }
            if (values > static_cast<double>(kBvhMaxValues))
                throw jr::ReadError{fmt::format("{}: more than {} keyframe values", kp, kBvhMaxValues)};
            std::sort(kf.joints.begin(), kf.joints.end(),
                      [](const BvjJointValues& x, const BvjJointValues& y) { return x.joint < y.joint; });
            m.keyframes.push_back(std::move(kf));
        }
    }

    void constraints(const Json& v) {
        const std::string path = "$.constraints";
        if (!v.is_array()) jr::fail(path, "an array of constraint objects", v);
        for (std::size_t i = 0; i < v.size(); ++i) {
            const Json& c = v[i];
            const std::string cp = jr::index_path(path, i);
            if (!c.is_object()) jr::fail(cp, "a constraint object", c);
            MotionConstraint mc;
            for (auto kv = c.begin(); kv != c.end(); ++kv) {
                const std::string& k = kv.key();
                const Json& x = kv.value();
                const std::string p = jr::key_path(cp, k);
                if (k == "chain_length") {
                    mc.chain_length = static_cast<int>(jr::integer(x, p, 0, 255, "an integer 0..255"));
                } else if (k == "type") {
                    const std::string& t = jr::string(x, p);
                    if (t == "point") mc.type = ConstraintType::Point;
                    else if (t == "plane") mc.type = ConstraintType::Plane;
                    else jr::fail(p, "\"point\" or \"plane\"", x);
                } else if (k == "source_volume" || k == "target_volume") {
                    const std::string& s = jr::string(x, p);
                    if (s.size() > 15) jr::fail(p, "a volume name of at most 15 bytes", x);
                    if (k == "source_volume") {
                        mc.source_volume = s;
                    } else if (s == "GROUND") {
                        mc.target_ground = true;
                        mc.target_volume.clear();
                    } else {
                        mc.target_volume = s;
                    }
                } else if (k == "source_offset") {
                    mc.source_offset = jr::vec3(x, p);
                } else if (k == "target_offset") {
                    mc.target_offset = jr::vec3(x, p);
                } else if (k == "target_dir") {
                    mc.target_dir = jr::vec3(x, p);
                } else if (k == "ease_in_start") {
                    mc.ease_in_start = jr::real(x, p);
                } else if (k == "ease_in_stop") {
                    mc.ease_in_stop = jr::real(x, p);
                } else if (k == "ease_out_start") {
                    mc.ease_out_start = jr::real(x, p);
                } else if (k == "ease_out_stop") {
                    mc.ease_out_stop = jr::real(x, p);
                } else {
                    throw jr::ReadError{fmt::format("{}: unknown key in a constraint", p)};
                }
            }
            m.constraints.push_back(std::move(mc));
        }
    }
};

// ---- writing ----

// −0 is written as 0: JSON readers take "-0" for the integer 0, so writing the sign would make
// write_bvj(parse_bvj(write_bvj(m))) differ from write_bvj(m) (found by the fuzz campaign: a
// value like -2e-327 underflows to −0).
void put_float(std::string& s, float f) {
    if (f == 0.f) f = 0.f;
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, f);
    s.append(buf, r.ptr);
}
void put_double(std::string& s, double d) {
    if (d == 0.0) d = 0.0;  // as put_float
    char buf[40];
    const auto r = std::to_chars(buf, buf + sizeof buf, d);
    s.append(buf, r.ptr);
}
void put_string(std::string& s, const std::string& v) { s += Json(v).dump(-1, ' ', false, Json::error_handler_t::replace); }
void put_vec3(std::string& s, Vec3 v) {
    s += '[';
    put_float(s, v.x);
    s += ", ";
    put_float(s, v.y);
    s += ", ";
    put_float(s, v.z);
    s += ']';
}

void put_params(std::string& s, const BvjParameters& p, const std::string& indent) {
    const auto key = [&](const char* k) {
        s += indent;
        s += '"';
        s += k;
        s += "\": ";
    };
    const auto real = [&](const char* k, const std::optional<float>& v) {
        if (!v) return;
        key(k);
        put_float(s, *v);
        s += ",\n";
    };
    if (p.priority) { key("priority"); put_double(s, *p.priority); s += ",\n"; }
    if (p.looped) { key("looped"); s += *p.looped ? "true" : "false"; s += ",\n"; }
    real("loop_in", p.loop_in);
    real("loop_out", p.loop_out);
    real("ease_in", p.ease_in);
    real("ease_out", p.ease_out);
    if (p.hand_pose) { key("hand_pose"); s += std::to_string(*p.hand_pose); s += ",\n"; }
    if (p.emote) { key("emote"); put_string(s, *p.emote); s += ",\n"; }
    real("duration", p.duration);
}

void put_hierarchy(std::string& s, const BvjMotion& m) {
    const std::size_t n = m.joints.size();
    std::vector<std::vector<int>> children(n);
    for (std::size_t i = 1; i < n; ++i) {
        const int p = m.joints[i].parent;
        if (p >= 0 && static_cast<std::size_t>(p) < i) children[static_cast<std::size_t>(p)].push_back(static_cast<int>(i));
    }
    // Explicit stack: (joint, next child position, depth); −1 child position = not opened yet.
    struct Frame {
        int joint;
        std::size_t next;
        int depth;
    };
    std::vector<Frame> stack{{0, static_cast<std::size_t>(-1), 1}};
    const auto ind = [](int d) { return std::string(static_cast<std::size_t>(2 * d), ' '); };
    while (!stack.empty()) {
        Frame& f = stack.back();
        const BvjJoint& j = m.joints[static_cast<std::size_t>(f.joint)];
        const std::string in = ind(f.depth);
        if (f.next == static_cast<std::size_t>(-1)) {
            s += "{\n";
            s += in;
            s += "\"NAME\": ";
            put_string(s, j.name);
            if (j.offset) { s += ",\n";
            s += in;
            s += "\"OFFSET\": "; put_vec3(s, *j.offset); }
            s += ",\n";
            s += in;
            s += "\"CHANNELS\": [";
            for (std::size_t c = 0; c < j.channels.size(); ++c) {
                s += c ? ", \"" : "\"";
                s += bvh_channel_name(j.channels[c]);
                s += '"';
            }
            s += "]";
            if (!j.attach.empty()) {
                s += ",\n";
            s += in;
            s += "\"ATTACH\": [";
                for (std::size_t a = 0; a < j.attach.size(); ++a) {
                    s += a ? ", " : "";
                    s += std::to_string(j.attach[a]);
                }
                s += "]";
            }
            if (j.pivot) { s += ",\n";
            s += in;
            s += "\"PIVOT\": "; put_vec3(s, *j.pivot); }
            if (j.priority) {
                s += ",\n";
                s += in;
                s += "\"PRIORITY\": ";
                s += std::to_string(*j.priority);
            }
            f.next = 0;
            if (!children[static_cast<std::size_t>(f.joint)].empty() || j.has_end_site) {
                s += ",\n";
                s += in;
                s += "\"JOINTS\": [\n";
            }
        }
        const auto& ch = children[static_cast<std::size_t>(f.joint)];
        if (f.next < ch.size()) {
            if (f.next > 0) s += ",\n";
            s += ind(f.depth + 1);
            const int child = ch[f.next++];
            const int depth = f.depth + 2;
            stack.push_back({child, static_cast<std::size_t>(-1), depth});
            continue;
        }
        if (!ch.empty() || j.has_end_site) {
            if (j.has_end_site) {
                if (!ch.empty()) s += ",\n";
                s += ind(f.depth + 1);
                s += "{\"END\": true";
                if (j.end_site_offset) { s += ", \"OFFSET\": "; put_vec3(s, *j.end_site_offset); }
                s += "}";
            }
            s += "\n";
            s += in;
            s += "]";
        }
        s += "\n";
        s += ind(f.depth - 1);
        s += "}";
        stack.pop_back();
    }
}

void put_constraints(std::string& s, const std::vector<MotionConstraint>& cs) {
    s += "  \"constraints\": [";
    for (std::size_t i = 0; i < cs.size(); ++i) {
        const MotionConstraint& c = cs[i];
        s += i ? ",\n    {" : "\n    {";
        s += "\"chain_length\": ";
        s += std::to_string(c.chain_length);
        s += ", \"type\": \"";
        s += c.type == ConstraintType::Plane ? "plane" : "point";
        s += '"';
        s += ", \"source_volume\": ";
        put_string(s, c.source_volume);
        s += ", \"source_offset\": ";
        put_vec3(s, c.source_offset);
        s += ", \"target_volume\": ";
        put_string(s, c.target_ground ? std::string("GROUND") : c.target_volume);
        s += ", \"target_offset\": ";
        put_vec3(s, c.target_offset);
        s += ", \"target_dir\": ";
        put_vec3(s, c.target_dir);
        const std::pair<const char*, float> eases[] = {{"ease_in_start", c.ease_in_start},
                                                       {"ease_in_stop", c.ease_in_stop},
                                                       {"ease_out_start", c.ease_out_start},
                                                       {"ease_out_stop", c.ease_out_stop}};
        for (const auto& [k, v] : eases) {
            s += ", \"";
            s += k;
            s += "\": ";
            put_float(s, v);
        }
        s += "}";
    }
    s += cs.empty() ? "]" : "\n  ]";
}

/// The 16-bit code the viewer's serialize reaches first for v (the floor after clamping), and
/// the centre of that code's interval.
float centre(float v, float lo, float hi) {
    const std::uint16_t c = f32_to_u16(v, lo, hi);
    return static_cast<float>(static_cast<double>(lo) +
                              (static_cast<double>(c) + 0.5) * (static_cast<double>(hi) - lo) / 65535.0);
}

}  // namespace

std::size_t BvjMotion::total_channels() const {
    std::size_t n = 0;
    for (const auto& j : joints) n += j.channels.size();
    return n;
}

Result<BvjMotion> parse_bvj(std::string_view text) {
    auto parsed = jr::parse(text);
    if (!parsed) return parsed.error();
    const Json& doc = *parsed;
    Reader r;
    try {
        if (!doc.is_object()) jr::fail("$", "a BVJ object", doc);
        const auto h = doc.find("HIERARCHY");
        if (h == doc.end()) throw jr::ReadError{"$: HIERARCHY is missing"};
        r.hierarchy(*h);
        const bool has_motion = doc.contains("MOTION"), has_keys = doc.contains("KEYFRAMES");
        if (has_motion == has_keys)
            throw jr::ReadError{has_motion ? "$: MOTION and KEYFRAMES are both given (one or the other)"
                                           : "$: neither MOTION nor KEYFRAMES is given"};
        std::vector<std::string> seen;
        for (auto kv = doc.begin(); kv != doc.end(); ++kv) {
            const std::string& k = kv.key();
            const std::string p = jr::key_path("$", k);
            if (k == "HIERARCHY") continue;
            if (k == "MOTION") {
                r.m.form = BvjForm::Motion;
                r.motion(kv.value(), seen);
            } else if (k == "KEYFRAMES") {
                r.m.form = BvjForm::Keyframes;
                r.keyframes(kv.value());
            } else if (k == "constraints") {
                r.constraints(kv.value());
            } else if (Reader::is_param(k)) {
                r.param(k, kv.value(), p, false, seen);
            } else {
                throw jr::ReadError{fmt::format("{}: unknown key (expected HIERARCHY, MOTION, KEYFRAMES, "
                                                "constraints, priority, looped, loop_in, loop_out, "
                                                "ease_in, ease_out, hand_pose, emote, duration)",
                                                p)};
            }
        }
    } catch (const jr::ReadError& e) {
        return Error{e.message};
    }
    return std::move(r.m);
}

std::string write_bvj(const BvjMotion& m) {
    std::string s = "{\n";
    if (!(m.params_in_motion && m.form == BvjForm::Motion)) put_params(s, m.params, "  ");
    s += "  \"HIERARCHY\": ";
    if (m.joints.empty()) s += "{}";
    else put_hierarchy(s, m);
    if (m.form == BvjForm::Motion) {
        s += ",\n  \"MOTION\": {\n";
        if (m.params_in_motion) put_params(s, m.params, "    ");
        s += "    \"Frame Time\": ";
        put_float(s, m.frame_time);
        s += ",\n    \"Frames\": [";
        const std::size_t n = m.total_channels();
        for (int f = 0; f < m.num_frames; ++f) {
            s += f ? ",\n      [" : "\n      [";
            for (std::size_t c = 0; c < n; ++c) {
                const std::size_t i = static_cast<std::size_t>(f) * n + c;
                if (c) s += ", ";
                put_float(s, i < m.frames.size() ? m.frames[i] : 0.f);
            }
            s += "]";
        }
        s += m.num_frames > 0 ? "\n    ]\n  }" : "]\n  }";
    } else {
        s += ",\n  \"KEYFRAMES\": [";
        for (std::size_t k = 0; k < m.keyframes.size(); ++k) {
            const BvjKeyframe& kf = m.keyframes[k];
            s += k ? ",\n    {\"AT\": " : "\n    {\"AT\": ";
            put_float(s, kf.at);
            for (const BvjJointValues& jv : kf.joints) {
                s += ", ";
                put_string(s, jv.joint >= 0 && static_cast<std::size_t>(jv.joint) < m.joints.size()
                                  ? m.joints[static_cast<std::size_t>(jv.joint)].name
                                  : std::string("?"));
                s += ": [";
                for (std::size_t c = 0; c < jv.values.size(); ++c) {
                    if (c) s += ", ";
                    if (jv.values[c]) put_float(s, *jv.values[c]);
                    else s += "null";
                }
                s += "]";
            }
            s += "}";
        }
        s += m.keyframes.empty() ? "]" : "\n  ]";
    }
    if (!m.constraints.empty()) {
        s += ",\n";
        put_constraints(s, m.constraints);
    }
    s += "\n}\n";
    return s;
}

Result<BvjMotion> load_bvj(const std::string& path) {
    auto bytes = read_file_bytes(path);
    if (!bytes) return bytes.error();
    auto m = parse_bvj(std::string_view(reinterpret_cast<const char*>(bytes->data()), bytes->size()));
    if (!m) return Error{fmt::format("{}: {}", path, m.error().message), m.error().offset};
    return m;
}

Result<bool> save_bvj(const std::string& path, const BvjMotion& m) {
    const std::string text = write_bvj(m);
    return write_file_atomic(path, std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

void sample_bvj_keyframes(const BvjMotion& m, int joint, float t, std::vector<float>& out) {
    const std::size_t n = m.joints[static_cast<std::size_t>(joint)].channels.size();
    out.assign(n, 0.f);
    for (std::size_t c = 0; c < n; ++c) {
        // The closest keyframes at or before t and after t that key this channel.
        const BvjKeyframe* before = nullptr;
        const BvjKeyframe* after = nullptr;
        float vb = 0.f, va = 0.f;
        for (const BvjKeyframe& k : m.keyframes) {
            for (const BvjJointValues& jv : k.joints) {
                if (jv.joint != joint || c >= jv.values.size() || !jv.values[c]) continue;
                if (k.at <= t) {
                    before = &k;
                    vb = *jv.values[c];
                } else if (!after) {
                    after = &k;
                    va = *jv.values[c];
                }
            }
            if (after) break;
        }
        if (before && after) {
            const float u = (t - before->at) / (after->at - before->at);
            out[c] = vb + (va - vb) * u;
        } else if (before) {
            out[c] = vb;
        } else if (after) {
            out[c] = va;
        }
    }
}

namespace {

/// Position values of a KEYFRAMES joint at rest (the reference frame of a BVH made from it):
/// the hip at the default pelvis position, other joints 0.
Vec3 rest_position_inches(const BvjMotion& m, int joint, const Skeleton& skeleton) {
    if (joint == 0 && skeleton.find(m.joints[0].name) == skeleton.pelvis())
        return sl_to_bvh_inches(skeleton.default_position(skeleton.pelvis()));
    return {};
}

}  // namespace

Result<BvhMotion> bvj_to_bvh(const BvjMotion& m, const Skeleton& skeleton, float fps) {
    BvhMotion b;
    for (const BvjJoint& j : m.joints) {
        BvhJoint bj;
        bj.name = j.name;
        bj.parent = j.parent;
        bj.offset = j.offset.value_or(Vec3{});
        bj.channels = j.channels;
        bj.has_end_site = j.has_end_site;
        bj.end_site_offset = j.end_site_offset.value_or(Vec3{});
        b.joints.push_back(std::move(bj));
    }
    if (m.form == BvjForm::Motion) {
        b.num_frames = m.num_frames;
        b.frame_time = m.frame_time;
        b.values = m.frames;
        return b;
    }
    if (!(fps > 0.f && fps <= 1000.f)) return Error{fmt::format("fps {} is outside (0, 1000]", fps)};
    if (m.keyframes.empty()) return Error{"the BVJ has no keyframes"};
    const double last = m.keyframes.back().at;
    // Without this bound one AT value of a file of a few hundred bytes could ask for 10^8
    // floats (400 MB); now the frames are at most 60 × fps + 2 and the values follow the
    // file's channels.
    if (!(last <= kBvjMaxSampledSeconds))
        return Error{fmt::format("$.KEYFRAMES[{}].AT: the last keyframe is at {} s; expected at most {} s, the "
                                 "longest SL animation (sampling stops there: at most {:.0f} frames at {} fps)",
                                 m.keyframes.size() - 1, last, kBvjMaxSampledSeconds,
                                 std::round(kBvjMaxSampledSeconds * static_cast<double>(fps)) + 2, fps)};
    const double intervals = std::max(1.0, std::round(last * fps));
    const std::size_t n = b.total_channels();
    if (intervals + 2 > kBvhMaxFrames || (intervals + 2) * static_cast<double>(n) > static_cast<double>(kBvhMaxValues))
        return Error{fmt::format("{:.0f} frames of {} channels exceed the BVH limits", intervals + 2, n)};
    b.num_frames = static_cast<int>(intervals) + 2;
    b.frame_time = last > 0 ? static_cast<float>(last / intervals) : 1.f / fps;
    b.values.assign(static_cast<std::size_t>(b.num_frames) * n, 0.f);
    std::vector<float> v;
    for (int f = 0; f < b.num_frames; ++f) {
        float* row = b.values.data() + static_cast<std::size_t>(f) * n;
        const float t = static_cast<float>(std::min(static_cast<double>(f - 1) * b.frame_time, last));
        for (std::size_t ji = 0; ji < m.joints.size(); ++ji) {
            const BvjJoint& j = m.joints[ji];
            if (f == 0) {
                const Vec3 rest = rest_position_inches(m, static_cast<int>(ji), skeleton);
                v.assign(j.channels.size(), 0.f);
                for (std::size_t c = 0; c < j.channels.size(); ++c)
                    if (!is_rotation(j.channels[c]))
                        v[c] = j.channels[c] == BvhChannel::Xposition ? rest.x
                               : j.channels[c] == BvhChannel::Yposition ? rest.y : rest.z;
            } else {
                sample_bvj_keyframes(m, static_cast<int>(ji), t, v);
            }
            for (float x : v) *row++ = x;
        }
    }
    return b;
}

BvjMotion bvh_to_bvj(const BvhMotion& bvh) {
    BvjMotion m;
    m.form = BvjForm::Motion;
    for (const BvhJoint& bj : bvh.joints) {
        BvjJoint j;
        j.name = bj.name;
        j.parent = bj.parent;
        j.offset = bj.offset;
        j.channels = bj.channels;
        j.has_end_site = bj.has_end_site;
        if (bj.has_end_site) j.end_site_offset = bj.end_site_offset;
        m.joints.push_back(std::move(j));
    }
    m.frame_time = bvh.frame_time;
    m.num_frames = bvh.num_frames;
    m.frames = bvh.values;
    return m;
}

BvhSidecar bvj_parameters_to_sidecar(const BvjMotion& m) {
    BvhSidecar s;
    const BvjParameters& p = m.params;
    if (p.priority && std::floor(*p.priority) == *p.priority && *p.priority >= 0 && *p.priority <= 6)
        s.priority = static_cast<int>(*p.priority);
    s.loop = p.looped;
    s.loop_in = p.loop_in;
    s.loop_out = p.loop_out;
    s.ease_in = p.ease_in;
    s.ease_out = p.ease_out;
    s.hand_pose = p.hand_pose;
    s.emote = p.emote;
    s.duration = p.duration;
    for (const BvjJoint& j : m.joints)
        if (j.priority) s.joint_priorities.emplace_back(j.name, *j.priority);
    return s;
}

void sidecar_to_bvj_parameters(const BvhSidecar& s, BvjMotion& m) {
    BvjParameters& p = m.params;
    if (s.priority) p.priority = *s.priority;
    p.looped = s.loop;
    p.loop_in = s.loop_in;
    p.loop_out = s.loop_out;
    p.ease_in = s.ease_in;
    p.ease_out = s.ease_out;
    p.hand_pose = s.hand_pose;
    p.emote = s.emote;
    p.duration = s.duration;
    for (const auto& [name, prio] : s.joint_priorities)
        for (BvjJoint& j : m.joints)
            if (j.name == name) j.priority = prio;
}

namespace {

/// Applies the BVJ header on top of the importer's defaults, then the explicit options.
Result<bool> apply_header(const BvjMotion& b, const Skeleton& skeleton, const BvhImportOptions& o,
                          Motion& m, bool keyframes) {
    const BvjParameters& p = b.params;
    int priority = m.base_priority;
    if (p.priority) {
        if (!(std::floor(*p.priority) == *p.priority && *p.priority >= 0 && *p.priority <= 6))
            return Error{fmt::format("priority {} is not an SL priority (an integer 0..6)", *p.priority)};
        priority = static_cast<int>(*p.priority);
    }
    if (o.priority) priority = *o.priority;
    if (priority < 0 || priority > 6) return Error{fmt::format("priority {} is outside 0..6", priority)};
    if (keyframes) {
        // No importer ran: the viewer's importer defaults, the ease scaled like optimize().
        m.base_priority = priority;
        m.loop = false;
        m.loop_in = 0.f;
        m.loop_out = m.duration;
        m.ease_in = m.ease_out = kDefaultEase;
        if (!p.looped.value_or(false) && m.ease_in + m.ease_out > m.duration && m.duration != 0.f) {
            const float factor = m.duration / (m.ease_in + m.ease_out);
            m.ease_in *= factor;
            m.ease_out *= factor;
        }
        m.hand_pose = 1;
        for (MotionJoint& j : m.joints) j.priority = priority;
    } else {
        const int delta = priority - m.base_priority;
        m.base_priority = priority;
        for (MotionJoint& j : m.joints) j.priority = std::clamp(j.priority + delta, 0, 6);
    }
    // Per-joint PRIORITY.
    for (const BvjJoint& bj : b.joints) {
        if (!bj.priority) continue;
        const int sj = skeleton.find(bj.name);
        for (MotionJoint& j : m.joints)
            if (j.joint == sj && sj >= 0) j.priority = *bj.priority;
    }
    const auto pick = [](const auto& opt, const auto& file, auto cur) { return opt ? *opt : (file ? *file : cur); };
    // Loop points from the file are clamped to the duration (a MOTION form's duration comes
    // from its frames and may differ from the written one by float rounding).
    const auto clamped = [&](const std::optional<float>& t) {
        return t ? std::optional<float>(std::clamp(*t, 0.f, m.duration)) : std::nullopt;
    };
    m.loop = pick(o.loop, p.looped, m.loop);
    m.loop_in = pick(o.loop_in, clamped(p.loop_in), m.loop_in);
    m.loop_out = pick(o.loop_out, clamped(p.loop_out), m.loop_out);
    m.ease_in = pick(o.ease_in, p.ease_in, m.ease_in);
    m.ease_out = pick(o.ease_out, p.ease_out, m.ease_out);
    m.hand_pose = pick(o.hand_pose, p.hand_pose, m.hand_pose);
    m.emote_name = pick(o.emote, p.emote, m.emote_name);
    if (m.hand_pose > 14) return Error{fmt::format("hand pose {} is outside 0..14", m.hand_pose)};
    if (!(m.loop_in >= 0.f && m.loop_in <= m.loop_out && m.loop_out <= m.duration))
        return Error{fmt::format("loop points {}..{} s must satisfy 0 <= in <= out <= duration ({} s)",
                                 m.loop_in, m.loop_out, m.duration)};
    if (!(m.ease_in >= 0.f && m.ease_out >= 0.f)) return Error{"ease durations must be >= 0 s"};
    m.constraints = b.constraints;
    m.max_priority = m.base_priority;
    for (const MotionJoint& j : m.joints) m.max_priority = std::max(m.max_priority, j.priority);
    return true;
}

}  // namespace

Result<BvhImportResult> import_bvj(const BvjMotion& b, const Skeleton& skeleton,
                                   const BvhImportOptions& options) {
    if (b.joints.empty()) return Error{"the BVJ has no joints"};
    if (b.form == BvjForm::Motion) {
        // BVH in JSON: the viewer's importer, the file's parameters below the explicit options.
        auto bvh = bvj_to_bvh(b, skeleton);
        if (!bvh) return bvh.error();
        BvhImportOptions o = options;
        auto imported = import_bvh(*bvh, skeleton, o);
        if (!imported) return imported.error();
        // The file's parameters apply where the options did not set a value.
        Motion& m = imported->motion;
        auto h = apply_header(b, skeleton, options, m, false);
        if (!h) return h.error();
        return imported;
    }

    // KEYFRAMES: one key per keyframe that keys the joint, converted like the importer does.
    const int pelvis = skeleton.pelvis();
    if (skeleton.find(b.joints[0].name) != pelvis)
        return Error{fmt::format("the root joint '{}' is not hip or another name of mPelvis (the "
                                 "viewer refuses it: \"Illegal ROOT joint\")",
                                 b.joints[0].name)};
    BvhImportResult out;
    Motion& m = out.motion;
    const Vec3 rest = skeleton.default_position(pelvis);
    for (std::size_t ji = 0; ji < b.joints.size(); ++ji) {
        const BvjJoint& bj = b.joints[ji];
        if (std::find(options.ignore_joints.begin(), options.ignore_joints.end(), bj.name) !=
            options.ignore_joints.end())
            continue;
        const int sj = skeleton.find(bj.name);
        if (sj < 0) {
            if (!options.skip_unknown_joints)
                return Error{fmt::format("joint '{}' is not an SL joint (use skip_unknown_joints / "
                                         "--skip-unknown to drop it)",
                                         bj.name)};
            out.warnings.push_back(fmt::format("joint '{}' is not an SL joint: dropped", bj.name));
            continue;
        }
        const auto order = bvh_rotation_order_of(bj.channels);
        int rot_count = 0, pos[3] = {-1, -1, -1};
        for (std::size_t c = 0; c < bj.channels.size(); ++c) {
            if (is_rotation(bj.channels[c])) ++rot_count;
            else pos[static_cast<int>(bj.channels[c])] = static_cast<int>(c);
        }
        if (rot_count != 0 && !order)
            return Error{fmt::format("joint '{}' has {} rotation channel(s); a rotation needs three",
                                     bj.name, rot_count)};
        const bool has_pos = pos[0] >= 0 || pos[1] >= 0 || pos[2] >= 0;
        if (has_pos && (pos[0] < 0 || pos[1] < 0 || pos[2] < 0))
            return Error{fmt::format("joint '{}' has some but not all three position channels", bj.name)};
        MotionJoint mj;
        mj.name = skeleton.name(sj);
        mj.joint = sj;
        for (const BvjKeyframe& k : b.keyframes) {
            for (const BvjJointValues& jv : k.joints) {
                if (jv.joint != static_cast<int>(ji)) continue;
                Vec3 deg;
                bool rot = order.has_value();
                for (std::size_t c = 0; c < jv.values.size(); ++c) {
                    if (!is_rotation(bj.channels[c])) continue;
                    if (!jv.values[c]) { rot = false; continue; }
                    const int a = static_cast<int>(bj.channels[c]) - static_cast<int>(BvhChannel::Xrotation);
                    (a == 0 ? deg.x : a == 1 ? deg.y : deg.z) = *jv.values[c];
                }
                if (rot) mj.rot_keys.push_back({k.at, bvh_rotation_to_sl(deg, *order)});
                if (has_pos && jv.values[static_cast<std::size_t>(pos[0])] &&
                    jv.values[static_cast<std::size_t>(pos[1])] && jv.values[static_cast<std::size_t>(pos[2])]) {
                    const Vec3 v{*jv.values[static_cast<std::size_t>(pos[0])],
                                 *jv.values[static_cast<std::size_t>(pos[1])],
                                 *jv.values[static_cast<std::size_t>(pos[2])]};
                    Vec3 p = bvh_inches_to_sl(v);
                    if (sj == pelvis) p = p - rest;
                    const Vec3 c{std::clamp(p.x, -kMaxPelvisOffset, kMaxPelvisOffset),
                                 std::clamp(p.y, -kMaxPelvisOffset, kMaxPelvisOffset),
                                 std::clamp(p.z, -kMaxPelvisOffset, kMaxPelvisOffset)};
                    if (!(c == p))
                        out.warnings.push_back(fmt::format("joint '{}' at {} s: position clamped to ±5 m", bj.name, k.at));
                    mj.pos_keys.push_back({k.at, c});
                }
            }
        }
        if (!mj.rot_keys.empty() || !mj.pos_keys.empty()) m.joints.push_back(std::move(mj));
    }
    if (m.joints.empty()) return Error{"no keyframe keys an SL joint: nothing to import"};
    m.duration = b.params.duration.value_or(b.keyframes.back().at);
    if (b.keyframes.back().at > m.duration)
        return Error{fmt::format("keyframe AT {} s is beyond the duration {} s", b.keyframes.back().at, m.duration)};
    auto h = apply_header(b, skeleton, options, m, true);
    if (!h) return h.error();
    // The viewer's quantization (what it holds after loading the written file).
    m = decode_motion(encode_motion(m), skeleton);
    return out;
}

Result<BvjMotion> export_bvj(const Motion& motion, const Skeleton& skeleton,
                             const BvjExportOptions& options) {
    BvjMotion b;
    if (options.form == BvjForm::Motion) {
        auto bvh = export_bvh(motion, skeleton, options.bvh);
        if (!bvh) return bvh.error();
        b = bvh_to_bvj(*bvh);
    } else {
        auto h = bvh_export_hierarchy(motion, skeleton, options.bvh);
        if (!h) return h.error();
        std::vector<int> of_joint(static_cast<std::size_t>(skeleton.num_joints()), -1);
        for (const BvhExportJoint& e : *h) {
            BvjJoint j;
            j.name = e.name;
            j.parent = e.parent;
            j.offset = e.offset;
            if (e.positions) j.channels = {BvhChannel::Xposition, BvhChannel::Yposition, BvhChannel::Zposition};
            for (BvhChannel c : bvh_rotation_channels(e.order)) j.channels.push_back(c);
            j.has_end_site = e.end_site;
            if (e.end_site) j.end_site_offset = e.end_offset;
            of_joint[static_cast<std::size_t>(e.skeleton_joint)] = static_cast<int>(b.joints.size());
            b.joints.push_back(std::move(j));
        }
        b.form = BvjForm::Keyframes;
        const float d = motion.duration;
        // Key times at the centre of their U16 interval over the duration.
        const auto t_of = [&](float t) { return d > 0.f ? std::min(centre(t, 0.f, d), d) : 0.f; };
        std::map<float, BvjKeyframe> frames;
        const int pelvis = skeleton.pelvis();
        const Vec3 rest = skeleton.default_position(pelvis);
        for (const MotionJoint& mj : motion.joints) {
            if (mj.joint < 0 || (mj.rot_keys.empty() && mj.pos_keys.empty())) continue;
            const int ji = of_joint[static_cast<std::size_t>(mj.joint)];
            const BvjJoint& bj = b.joints[static_cast<std::size_t>(ji)];
            const auto order = *bvh_rotation_order_of(bj.channels);
            const auto slot = [&](float t) -> std::vector<std::optional<float>>& {
                BvjKeyframe& k = frames[t_of(t)];
                k.at = t_of(t);
                for (BvjJointValues& jv : k.joints)
                    if (jv.joint == ji) return jv.values;
                k.joints.push_back({ji, std::vector<std::optional<float>>(bj.channels.size())});
                return k.joints.back().values;
            };
            for (const RotKey& k : mj.rot_keys) {
                // The centre of the interval of each packed component (serialize's first floor).
                const Vec3 v = pack_to_vector3(k.value);
                const Vec3 c{centre(v.x, kRotMin, kRotMax), centre(v.y, kRotMin, kRotMax),
                             centre(v.z, kRotMin, kRotMax)};
                const double w2 = 1.0 - (static_cast<double>(c.x) * c.x + static_cast<double>(c.y) * c.y +
                                         static_cast<double>(c.z) * c.z);
                const Quat q{c.x, c.y, c.z, static_cast<float>(w2 > 0 ? std::sqrt(w2) : 0.0)};
                const Vec3 e = bvh_euler_degrees(sl_to_bvh_rotation(q), order);
                auto& vals = slot(k.time);
                const std::size_t r = bj.channels.size() - 3;
                for (std::size_t ci = r; ci < bj.channels.size(); ++ci) {
                    const int a = static_cast<int>(bj.channels[ci]) - static_cast<int>(BvhChannel::Xrotation);
                    vals[ci] = a == 0 ? e.x : a == 1 ? e.y : e.z;
                }
            }
            for (const PosKey& k : mj.pos_keys) {
                const Vec3 c{centre(k.value.x, -kMaxPelvisOffset, kMaxPelvisOffset),
                             centre(k.value.y, -kMaxPelvisOffset, kMaxPelvisOffset),
                             centre(k.value.z, -kMaxPelvisOffset, kMaxPelvisOffset)};
                const Vec3 in = sl_to_bvh_inches(mj.joint == pelvis ? rest + c : c);
                auto& vals = slot(k.time);
                vals[0] = in.x;
                vals[1] = in.y;
                vals[2] = in.z;
            }
        }
        for (auto& [t, k] : frames) {
            std::sort(k.joints.begin(), k.joints.end(),
                      [](const BvjJointValues& x, const BvjJointValues& y) { return x.joint < y.joint; });
            b.keyframes.push_back(std::move(k));
        }
        if (b.keyframes.empty()) return Error{"the motion has no keys: nothing to export"};
        // A motion with per-joint priorities keeps them; PRIORITY −1 means "the base".
        for (const MotionJoint& mj : motion.joints) {
            if (mj.joint < 0) continue;
            const int ji = of_joint[static_cast<std::size_t>(mj.joint)];
            if (ji >= 0 && mj.priority != motion.base_priority) b.joints[static_cast<std::size_t>(ji)].priority = mj.priority;
        }
    }
    BvjParameters& p = b.params;
    p.priority = motion.base_priority;
    p.looped = motion.loop;
    p.loop_in = motion.loop_in;
    p.loop_out = motion.loop_out;
    p.ease_in = motion.ease_in;
    p.ease_out = motion.ease_out;
    p.hand_pose = motion.hand_pose;
    p.emote = motion.emote_name;
    p.duration = motion.duration;
    b.constraints = motion.constraints;
    if (options.form == BvjForm::Motion) {
        // The importer decides the duration from the frames; joint priorities travel as PRIORITY.
        p.duration.reset();
        for (const MotionJoint& mj : motion.joints) {
            if (mj.joint < 0 || mj.priority == motion.base_priority) continue;
            for (BvjJoint& j : b.joints)
                if (skeleton.find(j.name) == mj.joint) j.priority = mj.priority;
        }
    }
    return b;
}

}  // namespace slanim

// SPDX-License-Identifier: MIT
// The viewer's side of a LEAP puppetry conversation (leap_host.hpp): LLLeap's envelope,
// LLLeapListener's operations, LLPuppetModule's commands, the puppetry.controller pump.
#include "slanim/net/leap_host.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "slanim/net/leap_stream.hpp"
#include "slanim/net/puppetry_sources.hpp"

namespace slanim {

namespace {

constexpr const char* kPuppetryPump = "puppetry";
constexpr const char* kControllerPump = "puppetry.controller";
constexpr int kMaxPostDepth = 8;
constexpr std::size_t kMaxDistinctWarnings = 64;

const Llsd* find_first(const Llsd& m, std::initializer_list<std::string_view> keys) {
    for (std::string_view k : keys)
        if (const Llsd* v = m.find(k)) return v;
    return nullptr;
}

std::string text_of(const Llsd* v) {
    if (v == nullptr) return {};
    if (const std::string* s = v->if_string()) return *s;
    if (const std::int32_t* i = v->if_integer()) return std::to_string(*i);
    if (v->is_uuid()) return v->as_uuid().str();
    return {};
}

/// LEAP carries no timestamp: the sender time of a LEAP event is its arrival time, in ms
/// wrapped into the S32 range like the viewer's uptime stamp.
std::int32_t arrival_ms(double now_s) {
    return static_cast<std::int32_t>(std::llround(std::fmod(now_s * 1000.0, 2147483647.0)));
}

struct OpInfo {
    const char* name;
    const char* desc;
};

constexpr OpInfo kCommandOps[] = {
    {"listen", "Forward the events of pump [\"source\"] to the plug-in (or to pump [\"dest\"]) "
               "under listener name [\"listener\"]; replies [\"status\"]."},
    {"stoplistening", "Undo a listen of [\"source\"] by [\"listener\"]; replies [\"status\"]."},
    {"newpump", "Make a pump named like [\"name\"] whose events go to the plug-in; replies [\"name\"]."},
    {"killpump", "Remove a pump made by newpump; replies [\"status\"]."},
    {"ping", "Replies with the request's reqid."},
    {"getAPIs", "Replies a map of the event APIs by name, each with [\"desc\"]."},
    {"getAPI", "Replies name, desc, key and ops of API [\"api\"]."},
    {"getFeatures", "Replies the LEAP protocol features (none beyond the baseline)."},
    {"getFeature", "Replies [\"feature\"] when the protocol has feature [\"feature\"]."},
};

constexpr OpInfo kPuppetryOps[] = {
    {"set", "Joint data: data|d (or set|s) holding inverse_kinematics|i and joint_state|j maps of "
            "joint -> {rotation|r, position|p, scale|s, disable_constraint|d}, and camera|c."},
    {"move", "Joint data, flat: joint -> {local_rot, rot, pos, scale, no_constraint}."},
    {"get", "data|d (or get|g): 'camera' replies {camera_id}; 'skeleton' sends set_skeleton to "
            "puppetry.controller."},
    {"send_skeleton", "Sends set_skeleton to puppetry.controller."},
    {"get_camera", "Replies {camera_id}."},
    {"set_camera", "Sets the camera number from [\"camera_id\"]."},
};

}  // namespace

std::string random_uuid_text() {
    std::random_device rd;
    std::array<std::uint8_t, 16> b{};
    for (std::size_t i = 0; i < b.size(); i += 4) {
        const std::uint32_t r = rd();
        for (std::size_t k = 0; k < 4; ++k) b[i + k] = static_cast<std::uint8_t>(r >> (8 * k));
    }
    b[6] = static_cast<std::uint8_t>((b[6] & 0x0F) | 0x40);
    b[8] = static_cast<std::uint8_t>((b[8] & 0x3F) | 0x80);
    std::string s;
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
        s += fmt::format("{:02x}", b[i]);
    }
    return s;
}

LeapHost::LeapHost(Entity avatar, Writer write, Warn warn, std::string reply_pump, std::string command_pump)
    : avatar_(avatar),
      write_(std::move(write)),
      warn_(std::move(warn)),
      reply_pump_(reply_pump.empty() ? random_uuid_text() : std::move(reply_pump)),
      command_pump_(command_pump.empty() ? random_uuid_text() : std::move(command_pump)) {}

void LeapHost::start() {
    if (started_) return;
    started_ = true;
    Llsd data = Llsd::empty_map();
    data.set("command", command_pump_);
    data.set("features", Llsd::empty_map());
    deliver(reply_pump_, data);
}

std::size_t LeapHost::listeners(const std::string& pump) const {
    const auto it = listeners_.find(pump);
    return it == listeners_.end() ? 0 : it->second.size();
}

std::string LeapHost::describe_counters() const {
    const LeapHostCounters& c = counters_;
    return fmt::format("{} LEAP messages read ({} rejected), {} keys skipped, {} unknown joints, "
                       "{} events queued, {} messages written, {} posts nobody listened to",
                       c.messages, c.rejected, c.skipped_keys, c.unknown_joints, c.events, c.written,
                       c.dropped_posts);
}

void LeapHost::warn_once(const std::string& key, const std::string& text) {
    if (warned_.count(key)) return;
    if (warned_.size() >= kMaxDistinctWarnings) {
        if (warned_.insert("\x01overflow").second)
            warn_("leap: further kinds of warnings are counted but not shown");
        return;
    }
    warned_.insert(key);
    warn_(text);
}

void LeapHost::reject(const std::string& key, const std::string& text) {
    ++counters_.rejected;
    warn_once(key, fmt::format("leap: message {}: {}", number_, text));
}

void LeapHost::framing_fault(std::uint64_t number, const std::string& what) {
    number_ = number;
    reject("framing", what);
}

void LeapHost::message(std::uint64_t number, std::string_view text, PuppetryRuntime& runtime, double now_s) {
    ++counters_.messages;
    number_ = number;
    runtime_ = &runtime;
    now_s_ = now_s;
    auto v = parse_llsd_notation(text);
    if (!v) {
        reject("malformed LLSD", "malformed LLSD notation: " + v.error().describe() + "; skipped");
        return;
    }
    const Llsd* pump = v->find("pump");
    const Llsd* data = v->find("data");
    if (pump && pump->is_string() && data) {
        post(pump->as_string(), *data, 0);
    } else if (v->find("command")) {
        post(kPuppetryPump, *v, 0);  // slanim's shorthand: a bare puppetry command
    } else {
        reject("envelope", "expected a map with 'pump' (a string) and 'data' (LEAP's envelope); skipped");
    }
    runtime_ = nullptr;
}

void LeapHost::deliver(const std::string& pump, const Llsd& event) {
    Llsd packet = Llsd::empty_map();
    packet.set("pump", pump);
    packet.set("data", event);
    write_(leap_frame(format_llsd_notation(packet)));
    ++counters_.written;
}

void LeapHost::post(const std::string& pump, const Llsd& event, int depth) {
    if (depth > kMaxPostDepth) {
        warn_once("loop:" + pump, fmt::format("leap: message {}: pump '{}': forwarding deeper than {} "
                                              "pumps (a listen loop): dropped", number_, pump, kMaxPostDepth));
        return;
    }
    bool handled = false;
    if (pump == reply_pump_) {
        deliver(pump, event);
        handled = true;
    } else if (pump == command_pump_) {
        command_op(event);
        handled = true;
    } else if (pump == kPuppetryPump) {
        puppetry_op(event);
        handled = true;
    }
    if (const auto it = listeners_.find(pump); it != listeners_.end() && !it->second.empty()) {
        const std::vector<Listener> copy = it->second;  // a listener may change the table
        for (const Listener& l : copy) {
            if (l.dest.empty()) deliver(pump, event);
            else post(l.dest, event, depth + 1);
        }
        handled = true;
    }
    if (!handled) {
        ++counters_.dropped_posts;
        warn_once("pump:" + pump, fmt::format("leap: message {}: nothing listens on pump '{}': the event "
                                              "is dropped", number_, pump));
    }
}

void LeapHost::respond(const Llsd& request, Llsd reply) {
    const std::string to = text_of(request.find("reply"));
    if (to.empty()) return;  // LLEventAPI::Response sends nothing without a reply pump
    if (reply.is_undefined() || reply.is_map()) {
        const Llsd* id = request.find("reqid");
        reply.set("reqid", id ? *id : Llsd());
    }
    post(to, reply, 1);
}

Llsd LeapHost::api_list() const {
    Llsd out = Llsd::empty_map();
    Llsd p = Llsd::empty_map();
    p.set("desc", "Puppetry: joint data from a plug-in, skeleton and camera requests (LLPuppetModule)");
    out.set(kPuppetryPump, std::move(p));
    Llsd c = Llsd::empty_map();
    c.set("desc", "Operations of the LEAP protocol itself (LLLeapListener)");
    out.set(command_pump_, std::move(c));
    return out;
}

Llsd LeapHost::api_info(const std::string& name) const {
    Llsd out = Llsd::empty_map();
    const bool puppetry = name == kPuppetryPump;
    if (!puppetry && name != command_pump_) return out;
    out.set("name", name);
    out.set("desc", *api_list().find(name)->find("desc"));
    out.set("key", puppetry ? "command" : "op");
    Llsd ops = Llsd::empty_array();
    const auto add = [&ops](const OpInfo& o) {
        Llsd e = Llsd::empty_map();
        e.set("name", o.name);
        e.set("desc", o.desc);
        ops.append(std::move(e));
    };
    if (puppetry) for (const OpInfo& o : kPuppetryOps) add(o);
    else for (const OpInfo& o : kCommandOps) add(o);
    out.set("ops", std::move(ops));
    return out;
}

void LeapHost::command_op(const Llsd& request) {
    const std::string op = request.is_map() ? text_of(request.find("op")) : std::string();
    const auto fail = [&](const std::string& what) {
        reject("op:" + op, "command pump: " + what);
        Llsd e = Llsd::empty_map();
        e.set("error", what);
        if (request.is_map()) respond(request, std::move(e));
    };
    if (!request.is_map()) return fail("expected a map with 'op'");
    const auto need = [&](std::initializer_list<const char*> keys) {
        for (const char* k : keys)
            if (!request.find(k)) {
                fail(fmt::format("operation '{}' needs '{}'", op, k));
                return false;
            }
        return true;
    };
    Llsd reply;
    if (op == "listen" || op == "stoplistening") {
        if (!need({"source", "listener"})) return;
        const std::string source = text_of(request.find("source")), name = text_of(request.find("listener"));
        std::vector<Listener>& ls = listeners_[source];
        const auto it = std::find_if(ls.begin(), ls.end(), [&](const Listener& l) { return l.name == name; });
        const bool listen = op == "listen";
        const bool status = listen ? it == ls.end() : it != ls.end();
        if (status && listen) ls.push_back({name, text_of(request.find("dest"))});
        if (status && !listen) ls.erase(it);
        reply.set("status", status);
    } else if (op == "newpump") {
        if (!need({"name"})) return;
        std::string name = text_of(request.find("name"));
        for (int k = 1; own_pumps_.count(name) || listeners_.count(name) || name == kPuppetryPump ||
                        name == reply_pump_ || name == command_pump_;
             ++k)
            name = text_of(request.find("name")) + "_" + std::to_string(k);
        own_pumps_.insert(name);
        listeners_[name].push_back({"llleap", ""});
        reply.set("name", name);
    } else if (op == "killpump") {
        if (!need({"name"})) return;
        const std::string name = text_of(request.find("name"));
        const bool existed = own_pumps_.erase(name) > 0;
        if (existed) listeners_.erase(name);
        reply.set("status", existed);
    } else if (op == "ping") {
    } else if (op == "getAPIs") {
        reply = api_list();
    } else if (op == "getAPI") {
        if (!need({"api"})) return;
        reply = api_info(text_of(request.find("api")));
    } else if (op == "getFeatures") {
        reply = Llsd::empty_map();
    } else if (op == "getFeature") {
        if (!need({"feature"})) return;
        reply = Llsd::empty_map();  // no feature beyond the baseline protocol
    } else {
        return fail(op.empty() ? std::string("no 'op'") : "unknown operation '" + op + "'");
    }
    respond(request, std::move(reply));
}

void LeapHost::send_controller(const std::string& command, Llsd args, const Llsd* reqid) {
    Llsd data = Llsd::empty_map();
    data.set("command", command);
    if (!args.is_undefined()) data.set("args", std::move(args));
    if (reqid) data.set("reqid", *reqid);
    if (listeners(kControllerPump) == 0) {
        ++counters_.dropped_posts;
        warn_once("controller", fmt::format("leap: message {}: '{}' is not sent: no listener on "
                                            "puppetry.controller (a plug-in registers with "
                                            "{{op:'listen', source:'puppetry.controller'}})",
                                            number_, command));
        return;
    }
    post(kControllerPump, data, 1);
}

void LeapHost::issues(const std::vector<LeapJointIssue>& list) {
    for (const LeapJointIssue& i : list) {
        if (i.skipped) ++counters_.skipped_keys;
        warn_once("key:" + i.key, fmt::format("leap: message {}: {}: {}{}", number_, i.path, i.reason,
                                              i.skipped ? "; skipped, the rest applied" : ""));
    }
}

void LeapHost::apply_joint_data(const std::vector<PuppetryJointTarget>& targets) {
    PuppetryPlayback* pb = runtime_ ? runtime_->playback(avatar_) : nullptr;
    if (pb == nullptr) {
        warn_once("no playback", fmt::format("leap: message {}: the avatar has no puppetry playback: "
                                             "joint data dropped", number_));
        return;
    }
    const Skeleton& sk = pb->skeleton();
    PuppetryFrame frame;
    frame.time = now_s_;
    for (const PuppetryJointTarget& t : targets) {
        if (puppetry_joint_index(sk, t.joint) < 0) {
            ++counters_.unknown_joints;
            warn_once("joint:" + t.joint, fmt::format("leap: message {}: unknown joint '{}' (not a bone "
                                                      "of the skeleton): skipped, the rest applied",
                                                      number_, t.joint));
            continue;
        }
        frame.joints.push_back(t);
    }
    std::stable_sort(frame.joints.begin(), frame.joints.end(),
                     [](const PuppetryJointTarget& a, const PuppetryJointTarget& b) {
                         return a.joint != b.joint ? a.joint < b.joint : a.frame < b.frame;
                     });
    std::vector<PuppetryJointSample> samples;
    if (!puppetry_frame_samples(frame, sk, samples)) return;  // every joint was resolved above
    if (samples.empty()) return;
    runtime_->receive_event(avatar_, arrival_ms(now_s_), samples);
    ++counters_.events;
}

void LeapHost::puppetry_op(const Llsd& request) {
    const std::string command = request.is_map() ? text_of(request.find("command")) : std::string();
    const auto fail = [&](const std::string& what) {
        reject("command:" + command, "puppetry: " + what);
        Llsd e = Llsd::empty_map();
        e.set("error", what);
        if (request.is_map()) respond(request, std::move(e));
    };
    if (!request.is_map()) return fail("expected a map with 'command'");
    std::vector<PuppetryJointTarget> targets;
    std::vector<LeapJointIssue> found;
    if (command == "set") {
        const Llsd* payload = find_first(request, {"d", "data", "s", "set"});
        const std::string base = payload == request.find("d") ? "d" : payload == request.find("data") ? "data"
                                 : payload == request.find("s") ? "s" : "set";
        if (payload == nullptr || !payload->is_map())
            return fail("'set' needs a map under data|d (or set|s)");
        for (const auto& [key, value] : payload->as_map()) {
            if (key == "c" || key == "camera") {
                if (!value.to_number()) {
                    found.push_back({base + "." + key, "expected a camera number", true, key});
                    continue;
                }
                camera_ = static_cast<int>(*value.to_number());
                Llsd args = Llsd::empty_map();
                args.set("camera_id", static_cast<std::int32_t>(camera_));
                send_controller("set_camera", std::move(args));
            } else if (key == "i" || key == "inverse_kinematics") {
                read_leap_joint_map(value, LeapJointForm::InverseKinematics, base + "." + key, targets, found);
            } else if (key == "j" || key == "joint_state") {
                read_leap_joint_map(value, LeapJointForm::JointState, base + "." + key, targets, found);
            } else {
                found.push_back({base + "." + key, "unknown key (expected inverse_kinematics|i, joint_state|j "
                                 "or camera|c)", true, key});
            }
        }
    } else if (command == "move") {
        read_leap_joint_map(request, LeapJointForm::Move, "", targets, found);
    } else if (command == "get") {
        const Llsd* payload = find_first(request, {"d", "data", "g", "get"});
        if (payload == nullptr || !(payload->is_array() || payload->is_string()))
            return fail("'get' needs an array under data|d (or get|g)");
        const Llsd::Array items = payload->is_array() ? payload->as_array() : Llsd::Array{*payload};
        for (const Llsd& item : items) {
            const std::string what = text_of(&item);
            if (what == "c" || what == "camera") {
                get_camera(request);
            } else if (what == "s" || what == "skeleton") {
                send_skeleton(request);
            } else {
                found.push_back({"get", "unknown item '" + what + "' (expected camera|c or skeleton|s)", true,
                                 "get:" + what});
            }
        }
    } else if (command == "send_skeleton") {
        send_skeleton(request);
    } else if (command == "get_camera") {
        get_camera(request);
    } else if (command == "set_camera") {
        const Llsd* id = request.find("camera_id");
        if (id == nullptr || !id->to_number()) return fail("'set_camera' needs a number 'camera_id'");
        camera_ = static_cast<int>(*id->to_number());
    } else {
        return fail(command.empty() ? std::string("no 'command'") : "unknown command '" + command + "'");
    }
    issues(found);
    if (!targets.empty()) apply_joint_data(targets);
}

void LeapHost::get_camera(const Llsd& request) {
    Llsd reply = Llsd::empty_map();
    reply.set("camera_id", static_cast<std::int32_t>(camera_));
    respond(request, std::move(reply));
}

void LeapHost::send_skeleton(const Llsd& request) {
    PuppetryPlayback* pb = runtime_ ? runtime_->playback(avatar_) : nullptr;
    if (pb == nullptr) return;
    send_controller("set_skeleton", puppetry_skeleton_llsd(pb->skeleton(), pb->arm_span()), request.find("reqid"));
}

void LeapHost::stop() {
    if (stopped_) return;
    stopped_ = true;
    if (listeners(kControllerPump) == 0) return;
    Llsd data = Llsd::empty_map();
    data.set("command", "stop");
    post(kControllerPump, data, 1);
}

}  // namespace slanim

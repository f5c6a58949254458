// SPDX-License-Identifier: MIT
// The viewer's side of a LEAP puppetry plug-in conversation (docs/puppetry-runtime.md has it
// message by message): what the viewer's LLLeap, LLLeapListener and LLPuppetModule answer.
//
// Every message a plug-in writes is `{pump: NAME, data: EVENT}`: EVENT is posted to the event
// pump NAME. The host keeps the viewer's pumps:
//  * the reply pump (a UUID): events posted to it are written to the plug-in as
//    `{pump: REPLY, data: EVENT}`;
//  * the command pump (a UUID; LLLeapListener): operations `listen`, `stoplistening`,
//    `newpump`, `killpump`, `ping`, `getAPIs`, `getAPI`, `getFeatures`, `getFeature`, keyed by
//    `op`; each answers on the request's `reply` pump with the request's `reqid` (none without
//    `reply`, as LLEventAPI::Response does);
//  * `puppetry` (LLPuppetModule), keyed by `command`: `set` (data|d, or set|s of the 2022-11
//    branches: inverse_kinematics|i, joint_state|j, camera|c), `move` (the flat joint map of
//    2022-08), `get` (data|d or get|g: camera|c → {camera_id} on the reply pump, skeleton|s →
//    `set_skeleton`), `send_skeleton`, `get_camera`, `set_camera`;
//  * `puppetry.controller`: what the viewer sends the plug-in — `{command:'set_skeleton',
//    args:SKELETON}`, `{command:'set_camera', args:{camera_id}}`, `{command:'stop'}` — reaches
//    every listener a plug-in registered with `listen`, as `{pump:'puppetry.controller',
//    data:...}`;
//  * any other pump: delivered to its listeners (a `listen` with `dest` forwards to that pump).
// The first message the host writes is the viewer's initial message
// `{pump: REPLY, data: {command: COMMAND, features: {}}}`.
//
// Bad input never stops the host: a message that does not parse, lacks `pump`/`data`, names an
// unknown operation, or carries keys or joints slanim does not know is counted and warned about
// once per key (naming the message number and the key path) and the rest is applied. A bare
// `{command: ...}` map without the envelope is taken as posted to `puppetry` (slanim's
// shorthand for scripts; the viewer would drop the plug-in).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "slanim/core/result.hpp"
#include "slanim/formats/llsd.hpp"
#include "slanim/puppetry/leap_joint_data.hpp"
#include "slanim/runtime/puppetry.hpp"

namespace slanim {

/// Counters of one LEAP conversation (monotonic).
struct LeapHostCounters {
    std::uint64_t messages = 0;       ///< framed messages read (faults excluded)
    std::uint64_t rejected = 0;       ///< messages not applied at all (framing, LLSD, envelope, op)
    std::uint64_t skipped_keys = 0;   ///< parameters and values skipped inside applied messages
    std::uint64_t unknown_joints = 0; ///< joint keys naming no bone of the skeleton
    std::uint64_t events = 0;         ///< puppetry events queued (set / move with joint data)
    std::uint64_t written = 0;        ///< messages written to the plug-in
    std::uint64_t dropped_posts = 0;  ///< events posted to a pump nobody listens on
};

/// The host side of the LEAP conversation for one avatar. Output goes through `write` (whole
/// frames, `N:` + notation), warnings through `warn` (one line each, no newline). Not
/// thread-safe; never throws.
class LeapHost {
public:
    using Writer = std::function<void(std::string_view frame)>;
    using Warn = std::function<void(const std::string& line)>;

    /// `reply_pump` and `command_pump` name the two pumps of the initial message (empty: random
    /// UUIDs, like the viewer).
    LeapHost(Entity avatar, Writer write, Warn warn, std::string reply_pump = {},
             std::string command_pump = {});

    /// Writes the initial message (once; later calls do nothing).
    void start();
    /// Handles the text of framed message `number` (LLSD notation) at runtime time `now_s`.
    void message(std::uint64_t number, std::string_view text, PuppetryRuntime& runtime, double now_s);
    /// Counts and reports a framing fault of message `number`.
    void framing_fault(std::uint64_t number, const std::string& what);
    /// Sends `{command:'stop'}` to the puppetry.controller listeners (the viewer's
    /// clearLeapModule), once; later calls do nothing.
    void stop();
    [[nodiscard]] bool stopped() const { return stopped_; }

    [[nodiscard]] const std::string& reply_pump() const { return reply_pump_; }
    [[nodiscard]] const std::string& command_pump() const { return command_pump_; }
    [[nodiscard]] const LeapHostCounters& counters() const { return counters_; }
    /// The camera number a plug-in set (set camera / set_camera), 0 by default.
    [[nodiscard]] int camera() const { return camera_; }
    /// Listeners on `pump` (listen minus stoplistening).
    [[nodiscard]] std::size_t listeners(const std::string& pump) const;
    /// "N messages, M rejected, K keys skipped, J unknown joints, E events, W written".
    [[nodiscard]] std::string describe_counters() const;

private:
    struct Listener {
        std::string name;
        std::string dest;  // empty: to the plug-in
    };
    void post(const std::string& pump, const Llsd& event, int depth);
    void deliver(const std::string& pump, const Llsd& event);
    void respond(const Llsd& request, Llsd reply);
    void command_op(const Llsd& request);
    void puppetry_op(const Llsd& request);
    void apply_joint_data(const std::vector<PuppetryJointTarget>& targets);
    void get_camera(const Llsd& request);
    void send_skeleton(const Llsd& request);
    void send_controller(const std::string& command, Llsd args, const Llsd* reqid = nullptr);
    void warn_once(const std::string& key, const std::string& text);
    void reject(const std::string& key, const std::string& text);
    void issues(const std::vector<LeapJointIssue>& list);
    Llsd api_list() const;
    Llsd api_info(const std::string& name) const;

    Entity avatar_;
    Writer write_;
    Warn warn_;
    std::string reply_pump_, command_pump_;
    std::map<std::string, std::vector<Listener>> listeners_;
    std::set<std::string> own_pumps_;  // made by newpump
    std::set<std::string> warned_;
    LeapHostCounters counters_;
    bool started_ = false, stopped_ = false;
    int camera_ = 0;
    // The message being handled (for warnings) and its context.
    std::uint64_t number_ = 0;
    PuppetryRuntime* runtime_ = nullptr;
    double now_s_ = 0.0;
};

/// A random UUID in canonical text form (version 4), like LLUUID::generateNewID().
std::string random_uuid_text();

}  // namespace slanim

// SPDX-License-Identifier: MIT
// Joining a running relay as an agent (docs/relay.md "Security"): credentials from the admin
// endpoint, then the circuit opened from the agent's own socket with its circuit code.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdint>
#include <string>

#include "loopback_udp.hpp"
#include "slanim/formats/llsd.hpp"
#include "slanim/puppetry/datagram.hpp"

namespace slanim::test {

struct RelayJoin {
    std::string capability;  ///< the capability path, /cap/<token>
    std::uint32_t circuit_code = 0;
};

/// POSTs /agent/<id> to the admin port; empty capability (and a test failure) on error.
inline RelayJoin issue_agent(int admin_port, const Uuid& id) {
    httplib::Client admin("127.0.0.1", admin_port);
    auto r = admin.Post(("/agent/" + id.str()).c_str(), "", "application/llsd+xml");
    RelayJoin j;
    EXPECT_TRUE(r && r->status == 200) << (r ? r->body : std::string("no answer"));
    if (!r || r->status != 200) return j;
    auto m = parse_llsd_xml(r->body);
    EXPECT_TRUE(m) << r->body;
    if (!m) return j;
    j.capability = m->find("capability")->as_string();
    j.circuit_code = static_cast<std::uint32_t>(m->find("circuit_code")->as_integer());
    return j;
}

/// issue_agent, then the use-circuit-code datagram from `udp` to the relay's UDP port.
inline RelayJoin join_relay(int admin_port, int relay_udp, const Uuid& id, const LoopbackUdp& udp) {
    RelayJoin j = issue_agent(admin_port, id);
    udp.send_to(relay_udp, puppetry::encode_use_circuit_code(id, j.circuit_code));
    return j;
}

}  // namespace slanim::test

// SPDX-License-Identifier: MIT
// The agents of the relay fuzz targets (relay_fuzzer.cpp, relay_bus_fuzzer.cpp): fixed ids and
// deterministic credentials (the command issues random ones), so that every run is repeatable.
#pragma once

#include <cstdint>
#include <string>

#include "slanim/formats/llsd.hpp"
#include "slanim/net/relay.hpp"

namespace slanim::fuzz {

/// Agent k: 42 00 … 00 (k + 1).
inline Uuid relay_agent(unsigned k) {
    Uuid u;
    u.bytes[0] = 0x42;
    u.bytes[15] = static_cast<std::uint8_t>(k + 1);
    return u;
}

/// Agent k's credentials: token = its id with the first byte ^ 0xC3, circuit code 0x5EED0000 + k.
inline RelayCredentials relay_credentials(unsigned k) {
    RelayCredentials c;
    c.token = relay_agent(k).bytes;
    c.token[0] ^= 0xC3;
    c.circuit_code = 0x5EED0000u + k;
    return c;
}

}  // namespace slanim::fuzz

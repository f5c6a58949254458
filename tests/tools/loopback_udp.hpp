// SPDX-License-Identifier: MIT
// A non-blocking UDP socket bound on 127.0.0.1 (ephemeral port) for the relay tests.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <span>

namespace slanim::test {

struct LoopbackUdp {
    int fd = -1;
    /// `receive_buffer`: SO_RCVBUF in bytes (0 keeps the system default).
    explicit LoopbackUdp(int receive_buffer = 0) {
        fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa);
        if (receive_buffer > 0)
            ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    }
    ~LoopbackUdp() { ::close(fd); }
    LoopbackUdp(const LoopbackUdp&) = delete;
    LoopbackUdp& operator=(const LoopbackUdp&) = delete;

    /// Sends one datagram to 127.0.0.1:`port` (errors ignored: UDP may drop anyway).
    void send_to(int port, std::span<const std::uint8_t> bytes) const {
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        sa.sin_port = htons(static_cast<std::uint16_t>(port));
        ::sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&sa), sizeof sa);
    }
};

}  // namespace slanim::test

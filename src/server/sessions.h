// Internal to the server: the two transports' sessions, made by the listeners.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <memory>

#include "server/server_core.h"

namespace lockstep::server {

// Starts serving an accepted Unix socket connection: its caller is its peer (SO_PEERCRED, or
// the options' test hook); a peer that cannot be read is refused.
void ServeUnixConnection(std::shared_ptr<ServerCore> core,
                         boost::asio::local::stream_protocol::socket socket);

// Starts serving an accepted TCP connection with TLS; each request's caller comes from its
// bearer token through the core's Authenticator.
void ServeTlsConnection(std::shared_ptr<ServerCore> core, boost::asio::ip::tcp::socket socket);

}  // namespace lockstep::server

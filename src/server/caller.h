// Who sent a request, as the server established it before any handler runs.
#pragma once

#include <cstdint>
#include <string>

namespace lockstep::server {

// How a connection reached the server.
enum class Transport {
  kUnixSocket,  // the local socket: the kernel vouches for the peer's uid and gid (SO_PEERCRED)
  kTls,         // TCP with TLS: the caller is the user of the request's bearer token
};

// The authenticated caller of one request. A plain value: copy it freely.
struct Caller {
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  // The user's name when the transport knows it (a token's user). Empty for Unix socket peers:
  // a handler that needs the name looks it up (a user database lookup may block).
  std::string user;
  Transport transport = Transport::kUnixSocket;
};

}  // namespace lockstep::server

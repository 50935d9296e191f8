// Everything the API server can be told, with its defaults (after leveldb's options.h). Every
// limit is here; nothing is read from the environment or from flags deep inside the server.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "common/status.h"
#include "server/caller.h"

namespace lockstep::server {

struct ServerOptions {
  // --- Where to listen ---
  // The Unix socket's path. A stale socket file there is replaced; the socket is made
  // world-connectable (every local user talks to the server, told apart by uid). Required.
  std::string socket_path;
  // "HOST:PORT" (HOST a name, an IPv4 address or a bracketed IPv6 one; PORT 0 picks a free
  // port, see Server::tcp_port): HTTPS with bearer tokens there too. Empty: Unix socket only.
  std::string listen;
  // PEM certificate chain and private key for `listen`; both required with it, neither without:
  // the server never speaks plain HTTP on TCP, where tokens would travel in the clear.
  std::string tls_cert;
  std::string tls_key;
  // GET paths answered on TCP without a token, each with its HTML: a page that then asks the
  // user for a token and sends it with every request it makes (lockstepd's web view, "/web").
  // Nothing else is reachable without one.
  std::map<std::string, std::string> public_pages;

  // --- Threads ---
  // Threads running the I/O (accepts, TLS, parsing, writing) and calling handlers.
  int io_threads = 2;

  // --- Connections ---
  // Open connections at most, both transports together. Keep it below the process's
  // RLIMIT_NOFILE. At the cap, a new connection closes the least valuable idle one (see
  // ConnectionTable); when every connection has a request in progress, it is refused.
  std::size_t max_connections = 1024;
  // Of those, TCP connections at most: the rest is kept for the Unix socket (agents, local
  // users), which a flood from the network cannot take.
  std::size_t max_tcp_connections = 768;

  // --- Deadlines (a connection that misses one is closed without an answer) ---
  // From accept to the end of the TLS handshake.
  std::chrono::milliseconds tls_handshake_timeout{10'000};
  // For a request's headers: from the connection's start (after the handshake), or from the
  // first byte of a later request on a kept-alive connection, to the end of its headers.
  std::chrono::milliseconds header_timeout{10'000};
  // For a request's body, from the end of its headers.
  std::chrono::milliseconds body_timeout{60'000};
  // A kept-alive connection waiting for its next request.
  std::chrono::milliseconds idle_timeout{120'000};
  // For writing a response (a client that does not read it).
  std::chrono::milliseconds write_timeout{60'000};
  // After a refusal (413, 401, a malformed request), how long the server keeps reading and
  // discarding what the client still sends, so that the client reads the answer before the
  // connection closes.
  std::chrono::milliseconds linger_timeout{2'000};

  // --- Sizes ---
  // A request body larger than this is answered 413 {"error": "... limit of N bytes ..."}.
  // Large enough for a batch script with its environment, or an agent's 512 KiB output batch.
  std::uint64_t max_body_bytes = 16ull << 20;
  // A request line and headers larger than this are answered 431.
  std::uint32_t max_header_bytes = 16u << 10;

  // --- Test hooks ---
  // Reads the Unix peer's uid and gid from a connected socket's descriptor instead of
  // SO_PEERCRED (peer_credentials.h), to test a peer that cannot be read. Empty: SO_PEERCRED.
  std::function<Result<Caller>(int fd)> read_peer_credentials_for_test;
};

// InvalidArgument naming the option when options are inconsistent (no socket path, TLS files
// without `listen` or `listen` without them, zero threads, a TCP share above the cap, ...).
Status ValidateServerOptions(const ServerOptions& options);

}  // namespace lockstep::server

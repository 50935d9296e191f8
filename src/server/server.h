// lockstep's asynchronous HTTP/1.1 API server (Boost.Asio and Beast): a Unix socket, where the
// kernel names the caller (SO_PEERCRED), and optionally TCP with TLS, where a bearer token does
// (through the Authenticator it is given). A few I/O threads serve every connection; requests
// go to a Handler (handler.h), which answers now or later without holding a thread.
//
// Every request is bounded (server_options.h): connections (a cap, and a smaller one for TCP;
// under pressure idle connections are closed, unauthenticated TCP ones first), deadlines for
// the TLS handshake, the headers, the body, a kept-alive connection's idleness and the writing
// of an answer, and the sizes of headers (431) and body (413, naming the limit). Over TCP a
// request without a valid token is answered 401 before its body is read and before any handler
// runs. docs/api.md, "Limits", lists the defaults.
#pragma once

#include <cstddef>
#include <memory>

#include "common/status.h"
#include "server/handler.h"
#include "server/server_options.h"

namespace lockstep::server {

struct ServerCore;

// Ownership: borrows the handler and the authenticator, which must outlive the server (the
// authenticator may be null without `listen`). Owns its threads, sockets and connections.
// Thread-safety: tcp_port and the counts may be called from any thread; destroy the server
// from a thread that is not one of its own (not from a handler or a Responder's caller).
class Server {
 public:
  // Listens (TCP first, so that a bad certificate leaves no socket file behind; then the Unix
  // socket, replacing a stale file, mode 0777) and starts the I/O threads.
  static Result<std::unique_ptr<Server>> Start(const ServerOptions& options, Handler& handler,
                                               Authenticator* authenticator);
  // Stops accepting, closes every connection (answers still pending are dropped), joins the
  // I/O threads and removes the socket file. Handlers are not called any more once it returns.
  ~Server();

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The TCP port listened on (useful with port 0), or 0 without `listen`.
  int tcp_port() const;
  // Open connections: all of them, and those on TCP.
  std::size_t connection_count() const;
  std::size_t tcp_connection_count() const;

  struct Runtime;  // server.cc: the accept loops and the I/O threads

 private:
  Server(std::shared_ptr<ServerCore> core, std::unique_ptr<Runtime> runtime);

  std::shared_ptr<ServerCore> core_;
  std::unique_ptr<Runtime> runtime_;
};

}  // namespace lockstep::server

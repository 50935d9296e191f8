// The REST API of docs/api.md over HTTP/1.1, on a Unix socket and optionally on TCP with TLS.
// On the Unix socket the caller's uid comes from SO_PEERCRED, so nothing on the wire can claim
// to be someone else; on TCP the caller is known only by a bearer token (tokens.h), and a
// request without a valid one is answered 401 and does nothing. One thread per connection
// (agents hold long polls; CLI calls are short).
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "controller/api_routes.h"
#include "controller/controller.h"

namespace lockstep::controller {

struct ApiServerOptions {
  // Listens here (replacing a stale socket file), world-connectable: every local user talks to
  // lockstepd, and each is told apart by uid. Required.
  std::string socket_path;
  // "HOST:PORT" (HOST a name, an IPv4 address or a bracketed IPv6 one; PORT 0 picks a free one):
  // HTTPS with bearer tokens there too. Empty: the Unix socket only.
  std::string listen;
  // PEM certificate chain and private key for TCP; both required with `listen`: lockstepd never
  // serves plain HTTP on TCP, where tokens would travel in the clear.
  std::string tls_cert;
  std::string tls_key;
  // The agents' endpoints (api_routes.h); null: none. Not owned; outlives the server.
  AgentEndpoints* agents = nullptr;
};

// Ownership: borrows the controller, which must outlive the server.
class ApiServer {
 public:
  static Result<std::unique_ptr<ApiServer>> Start(Controller& controller,
                                                  const ApiServerOptions& options);
  // The Unix socket only.
  static Result<std::unique_ptr<ApiServer>> Start(Controller& controller,
                                                  const std::string& socket_path);
  ~ApiServer();  // stops accepting, closes every connection, joins their threads

  // The TCP port listened on (useful with port 0), or 0 without `listen`.
  int tcp_port() const;

  struct Impl;

 private:
  explicit ApiServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep::controller

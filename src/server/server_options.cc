#include "server/server_options.h"

namespace lockstep::server {

Status ValidateServerOptions(const ServerOptions& o) {
  if (o.socket_path.empty()) return InvalidArgument("server: socket_path is required");
  if (o.listen.empty() && (!o.tls_cert.empty() || !o.tls_key.empty()))
    return InvalidArgument("--tls-cert and --tls-key are for --listen HOST:PORT");
  if (!o.listen.empty() && (o.tls_cert.empty() || o.tls_key.empty()))
    return InvalidArgument(
        "--listen needs --tls-cert and --tls-key: lockstepd does not serve plain HTTP on TCP, "
        "where bearer tokens would travel in the clear");
  if (o.io_threads < 1) return InvalidArgument("server: io_threads must be at least 1");
  if (o.max_connections < 1) return InvalidArgument("server: max_connections must be at least 1");
  if (o.max_tcp_connections > o.max_connections)
    return InvalidArgument("server: max_tcp_connections must not exceed max_connections");
  if (!o.listen.empty() && o.max_tcp_connections < 1)
    return InvalidArgument("server: max_tcp_connections must be at least 1 with --listen");
  using std::chrono::milliseconds;
  for (auto [name, value] :
       {std::pair<const char*, milliseconds>{"tls_handshake_timeout", o.tls_handshake_timeout},
        {"header_timeout", o.header_timeout},
        {"body_timeout", o.body_timeout},
        {"idle_timeout", o.idle_timeout},
        {"write_timeout", o.write_timeout},
        {"linger_timeout", o.linger_timeout}})
    if (value.count() <= 0)
      return InvalidArgument(std::string("server: ") + name + " must be positive");
  if (o.max_header_bytes < 256)
    return InvalidArgument("server: max_header_bytes must be at least 256");
  return Status::Ok();
}

}  // namespace lockstep::server

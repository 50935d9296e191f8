// A client of lockstepd's REST API, for the CLI and the agents: over its Unix socket, or over
// HTTPS with a bearer token when given "https://HOST:PORT" ($LOCKSTEP_SERVER; docs/api.md).
// One connection, kept alive across calls. Not thread-safe: one client per thread.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace lockstep::client {

// $LOCKSTEP_STATE_DIR, else ~/.local/state/lockstep (as `lockstep up` uses).
std::string DefaultStateDir();
// $LOCKSTEP_SOCKET, else DefaultStateDir()/lockstepd.sock.
std::string DefaultSocketPath();
// $LOCKSTEP_SERVER (https://HOST:PORT) when set, else DefaultSocketPath().
std::string DefaultServer();

class ApiClient {
 public:
  // `server`: a Unix socket's path, or "https://HOST[:PORT]" (port 443 by default). Over HTTPS
  // every request carries $LOCKSTEP_TOKEN (else the first line of the file $LOCKSTEP_TOKEN_FILE)
  // as its bearer token, and the server's certificate is verified, with its host name, against $LOCKSTEP_CA_CERT (a PEM file) or the system's CAs.
  explicit ApiClient(std::string server = DefaultServer());
  ~ApiClient();
  ApiClient(ApiClient&&) noexcept;
  ApiClient& operator=(ApiClient&&) noexcept;

  // The answer's JSON, or the server's {"error": ...} as a Status (PermissionDenied for 403
  // and for 401, "authentication failed: ...", NotFound for 404, ...), or Unavailable when
  // lockstepd cannot be reached or its certificate fails verification.
  Result<nlohmann::json> Get(const std::string& target);
  Result<nlohmann::json> Post(const std::string& target, const nlohmann::json& body);
  Result<nlohmann::json> Patch(const std::string& target, const nlohmann::json& body);
  // GET of an answer that is not JSON (the metrics' text); errors as Get's.
  Result<std::string> GetText(const std::string& target);
  // GET with the answer as it came: its status code and body (lockstep web's proxy).
  Result<std::pair<unsigned, std::string>> GetRaw(const std::string& target);

  // The socket path or https:// URL this client talks to.
  const std::string& socket_path() const { return path_; }

  struct Connection;  // the open connection (api_client.cc): no Asio in this header

 private:
  Result<nlohmann::json> Call(int method, const std::string& target, const std::string& body);
  // The exchange itself: the status code and body of the answer.
  Result<std::pair<unsigned, std::string>> Exchange(int method, const std::string& target,
                                                    const std::string& body);
  std::string path_;
  std::unique_ptr<Connection> conn_;
};

// Percent-encodes a query value.
std::string UrlEncode(const std::string& s);

}  // namespace lockstep::client

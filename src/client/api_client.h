// A client of lockstepd's REST API over its Unix socket, for the CLI and the agents.
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

class ApiClient {
 public:
  explicit ApiClient(std::string socket_path = DefaultSocketPath());
  ~ApiClient();
  ApiClient(ApiClient&&) noexcept;
  ApiClient& operator=(ApiClient&&) noexcept;

  // The answer's JSON, or the server's {"error": ...} as a Status (PermissionDenied for 403,
  // NotFound for 404, ...), or Unavailable when lockstepd cannot be reached.
  Result<nlohmann::json> Get(const std::string& target);
  Result<nlohmann::json> Post(const std::string& target, const nlohmann::json& body);
  Result<nlohmann::json> Patch(const std::string& target, const nlohmann::json& body);

  const std::string& socket_path() const { return path_; }

 private:
  Result<nlohmann::json> Call(int method, const std::string& target, const std::string& body);
  struct Connection;
  std::string path_;
  std::unique_ptr<Connection> conn_;
};

// Percent-encodes a query value.
std::string UrlEncode(const std::string& s);

}  // namespace lockstep::client

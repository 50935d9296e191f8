// The REST API of docs/api.md over HTTP/1.1 on a Unix socket. The caller's uid comes from
// SO_PEERCRED, so nothing on the wire can claim to be someone else. One thread per connection
// (agents hold long polls; CLI calls are short).
#pragma once

#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"
#include "controller/controller.h"

namespace lockstep::controller {

class ApiServer {
 public:
  // Listens on `socket_path` (replacing a stale socket file), world-connectable: every local
  // user talks to lockstepd, and each is told apart by uid.
  static Result<std::unique_ptr<ApiServer>> Start(Controller& controller,
                                                  const std::string& socket_path);
  ~ApiServer();  // stops accepting, closes every connection, joins their threads

  struct Impl;

 private:
  explicit ApiServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep::controller

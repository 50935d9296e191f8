// The metrics-only listener (lockstepd --metrics-listen HOST:PORT): plain HTTP on TCP that
// answers GET requests through one function and nothing else, for a Prometheus that scrapes
// without a token. Operators bind it to a local or monitoring-network address; the API (jobs,
// tokens, agents) is never reachable through it. Bounded: a few connections at once, one
// request each (Connection: close), a small request size and a deadline.
//
// Ownership: owns its thread and sockets; the function must outlive the listener.
// Thread-safety: `port` from any thread; the function is called on the listener's thread.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "server/http_types.h"

namespace lockstep::server {

class MetricsListener {
 public:
  // Answers a request (its method and target are what the function may look at).
  using Serve = std::function<Response(const Request&)>;
  struct Options {
    std::string listen;  // HOST:PORT, port 0 picks one
    std::size_t max_connections = 8;
    std::chrono::milliseconds deadline{10'000};  // to read the request and write the answer
  };
  static Result<std::unique_ptr<MetricsListener>> Start(const Options& options, Serve serve);
  ~MetricsListener();  // stops accepting, closes connections, joins the thread

  int port() const;

  struct Impl;

 private:
  explicit MetricsListener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep::server

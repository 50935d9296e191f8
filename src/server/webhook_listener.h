// The admission webhook's listener (docs/policy.md, "Kubernetes"): HTTPS on its own port, where
// the Kubernetes API server POSTs AdmissionReviews without a bearer token. Only POST to the
// paths the function answers; nothing of the API (jobs, tokens, agents) is reachable here.
// Connections are kept alive (the API server reuses them, which keeps a review to a round
// trip), bounded in number, and each request has a deadline.
//
// Ownership: owns its threads and sockets; the function must outlive the listener.
// Thread-safety: `port` from any thread; the function is called on the listener's threads, at
// once from several: it must be thread-safe and quick (no waiting on other requests).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "server/http_types.h"

namespace lockstep::server {

class WebhookListener {
 public:
  using Serve = std::function<Response(const Request&)>;
  struct Options {
    std::string listen;              // HOST:PORT, port 0 picks one
    std::string tls_cert, tls_key;  // PEM files
    std::size_t max_connections = 64;
    std::size_t max_body_bytes = 3u << 20;  // the API server's own request limit is 3 MiB
    std::chrono::milliseconds deadline{10'000};  // per request: read, answer, write
    std::chrono::milliseconds idle_timeout{90'000};
    int threads = 2;
  };
  static Result<std::unique_ptr<WebhookListener>> Start(const Options& options, Serve serve);
  ~WebhookListener();  // stops accepting, closes connections, joins the threads

  int port() const;

  struct Impl;

 private:
  explicit WebhookListener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep::server

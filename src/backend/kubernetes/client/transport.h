// HTTPS to one Kubernetes API server: TLS (Boost.Beast over OpenSSL) with the kubeconfig's CA,
// client certificate and bearer token, a small pool of keep-alive connections for requests, and
// dedicated connections for streamed responses (watches), so a long watch never holds up a
// request. Every network step has a timeout.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "backend/kubernetes/client/kubeconfig.h"
#include "common/status.h"

namespace lockstep::kube {

struct TransportOptions {
  std::chrono::milliseconds connect_timeout{10'000};  // TCP connect plus TLS handshake
  std::chrono::milliseconds request_timeout{60'000};  // one request: write and whole response
  size_t max_idle_connections = 8;                    // kept open for reuse
  std::string user_agent = "lockstep/0.1";
  // Sent with every request, e.g. {"Impersonate-User", "system:serviceaccount:ns:sa"} to act as
  // another user (the caller needs the `impersonate` verb; tests check RBAC this way).
  std::vector<std::pair<std::string, std::string>> extra_headers;
};

struct HttpRequest {
  std::string method = "GET";  // GET, POST, PUT, PATCH, DELETE
  std::string target;          // path and query, e.g. "/api/v1/nodes?limit=500"
  std::string body;
  std::string content_type;  // set when there is a body
  std::string accept = "application/json";
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::string retry_after;  // the Retry-After header, "" when absent
};

// The outcome of one exchange. `sent` is false when the request surely never reached the server
// (it failed to connect), which makes any request safe to retry.
struct Exchange {
  Status error;  // ok: `response` holds the server's answer (whatever its HTTP code)
  bool sent = false;
  HttpResponse response;
};

// A response whose body is read as it arrives (a watch). Owned by the caller; one thread reads
// while any thread may Cancel().
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  virtual int status() const = 0;
  // The next bytes of the body; "" at its end. Fails on a network error, on `idle_timeout`
  // without a byte, or once cancelled.
  virtual Result<std::string> ReadSome(std::chrono::milliseconds idle_timeout) = 0;
  // Thread-safe: makes a blocked or later ReadSome return an error promptly.
  virtual void Cancel() = 0;
};

// Thread-safe; holds the TLS context and the idle connections.
class Transport {
 public:
  static Result<std::unique_ptr<Transport>> Create(const KubeConfig& config,
                                                   TransportOptions options = {});
  virtual ~Transport() = default;

  // One request on a pooled connection (reused when the server keeps it alive). A connection
  // the server closed while idle is replaced transparently.
  virtual Exchange RoundTrip(const HttpRequest& request) = 0;

  // Sends `request` on a new connection and returns once the response header is in.
  virtual Result<std::unique_ptr<ResponseStream>> OpenStream(const HttpRequest& request) = 0;

  // Connections currently idle in the pool (for tests).
  virtual size_t IdleConnectionsForTest() = 0;
};

// Splits "https://host:port/prefix" into its parts (port 443 by default; IPv6 in brackets).
struct ServerUrl {
  std::string host;
  std::string port;
  std::string path_prefix;  // "" or "/prefix" without a trailing slash
};
Result<ServerUrl> ParseServerUrl(const std::string& server);

// Percent-encodes a query value.
std::string QueryEscape(const std::string& value);

}  // namespace lockstep::kube

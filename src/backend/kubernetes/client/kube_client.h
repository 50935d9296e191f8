// A client of the Kubernetes REST API: JSON in and out, errors as Statuses built from the
// apiserver's Status objects (api_error.h), a client-side rate limit, retries with backoff for
// 429, 5xx and connection failures (honouring Retry-After), and watches as event streams.
//
//   auto cfg = LoadKubeConfigFile(path);
//   auto client = KubeClient::Create(*cfg);
//   auto node = (*client)->Get("/api/v1/nodes/n1");
//   Status st = RetryOnConflict([&] { ...Get, change, Update... });
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/kubernetes/client/api_json.h"
#include "backend/kubernetes/client/kubeconfig.h"
#include "backend/kubernetes/client/proto_codec.h"
#include "backend/kubernetes/client/rate_limit.h"
#include "backend/kubernetes/client/transport.h"
#include "backend/kubernetes/client/watch_event.h"
#include "common/status.h"

namespace lockstep::kube {

using Json = nlohmann::json;
using Query = std::vector<std::pair<std::string, std::string>>;

// Documented defaults; client-go's are 5 QPS and burst 10, far too low for a scheduler that binds
// thousands of pods.
struct ClientOptions {
  double qps = 200;  // <= 0: no client-side rate limit
  int burst = 400;
  int max_retries = 5;  // for 429, 5xx and connection failures; 0: no retry
  BackoffOptions backoff{std::chrono::milliseconds(100), std::chrono::milliseconds(5'000), 2.0,
                         0.2};
  std::chrono::milliseconds max_retry_after{30'000};  // longest Retry-After honoured
  TransportOptions transport;
};

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  int limit = 0;  // page size; 0: everything in one response
  std::string continue_token;
  std::string resource_version;      // "" : the latest (a quorum read)
  std::optional<int> max_retries;    // overrides ClientOptions::max_retries
  bool drop_managed_fields = false;  // ListEach only: items come without metadata.managedFields
  // ListEach and ListAll only: when set, the list is asked for in protobuf (built-in kinds
  // only) and its items decoded with this into their JSON form (proto_codec.h).
  ProtoObjectDecoder protobuf = nullptr;
};

enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386)
  kStrategicMerge,  // application/strategic-merge-patch+json (built-in kinds only)
  kJsonPatch,       // application/json-patch+json (RFC 6902); the patch is an array
};

struct DeleteOptions {
  std::optional<int64_t> grace_period_seconds;  // 0: at once (pods bound to nodes without kubelet)
  std::string precondition_uid;
  std::string precondition_resource_version;
  std::string propagation_policy;  // Orphan, Background, Foreground, or "" for the default
};

struct WatchOptions {
  std::string resource_version;  // start after this version ("" : from now, with synthetic ADDs)
  std::string label_selector;
  std::string field_selector;
  bool allow_bookmarks = true;
  int timeout_seconds = 300;         // the server ends the watch after this long
  bool drop_managed_fields = false;  // events' objects come without metadata.managedFields
  // When set, the watch is asked for in protobuf (built-in kinds only) and its objects decoded
  // with this into their JSON form (proto_codec.h).
  ProtoObjectDecoder protobuf = nullptr;
};

// A running watch. Next() is called by one thread; Stop() may be called by any.
class Watch {
 public:
  Watch(std::unique_ptr<ResponseStream> stream, std::string what,
        std::chrono::milliseconds idle_timeout, std::unique_ptr<WatchStreamParser> parser);
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  // Blocks until the next event. std::nullopt: the stream ended normally (server timeout, or
  // Stop()). An error: the connection failed or the stream was malformed; restart the watch from
  // the last resourceVersion seen.
  Result<std::optional<WatchEvent>> Next();
  // Thread-safe and prompt: a blocked Next() returns std::nullopt.
  void Stop();
  bool stopped() const { return stopped_.load(); }

 private:
  std::unique_ptr<ResponseStream> stream_;
  std::string what_;
  std::chrono::milliseconds idle_timeout_;
  std::unique_ptr<WatchStreamParser> parser_;
  std::vector<WatchEvent> ready_;
  size_t next_ = 0;
  bool ended_ = false;
  std::atomic<bool> stopped_{false};
};

// Thread-safe; owns its connections.
class KubeClient {
 public:
  static Result<std::unique_ptr<KubeClient>> Create(const KubeConfig& config,
                                                    ClientOptions options = {});
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  // `path` is an API path such as "/api/v1/namespaces/ns/pods/p" (see the helpers below).
  Result<Json> Get(const std::string& path, const Query& query = {});
  // One page; the result is the List object (items, metadata.resourceVersion, metadata.continue).
  Result<Json> List(const std::string& path, const ListOptions& options = {});
  // Every page (following continue tokens) in one List object whose resourceVersion is the first
  // page's, which is the snapshot all pages share. In protobuf (ListOptions::protobuf) each page
  // is read as ListEach reads it, without retries.
  Result<Json> ListAll(const std::string& path, ListOptions options = {});
  // One page, read as it arrives: each item goes to `on_item` (on this thread) as soon as it is
  // parsed (api_json.h), and the result is the List without them. On an error some items may
  // have been handed over already. Not retried: for informers, which back off themselves.
  Result<Json> ListEach(const std::string& path, const ListOptions& options,
                        const ListItemHandler& on_item);
  Result<Json> Create(const std::string& path, const Json& object);  // POST to the collection
  // PUT; `object` carries metadata.resourceVersion for optimistic concurrency (409 Conflict when
  // it is stale).
  Result<Json> Update(const std::string& path, const Json& object);
  Result<Json> Patch(const std::string& path, PatchType type, const Json& patch);
  Result<Json> Delete(const std::string& path, const DeleteOptions& options = {});
  // Any verb with a JSON body, for subresources (POST pods/NAME/binding, PUT pods/NAME/status).
  Result<Json> Call(const std::string& method, const std::string& path, const Json* body,
                    const Query& query = {});
  // A text subresource such as pods/NAME/log (query: container, tailLines, ...).
  Result<std::string> GetText(const std::string& path, const Query& query = {});

  // POST /api/v1/namespaces/NS/pods/POD/binding with target Node `node`.
  Status Bind(const std::string& ns, const std::string& pod, const std::string& node);

  // GET ?watch=1 on a collection path; returns once the server has answered. A 410 here (or
  // later as an ERROR event) means the resourceVersion is too old: list again.
  Result<std::unique_ptr<Watch>> StartWatch(const std::string& path, const WatchOptions& options);

  const KubeConfig& config() const { return config_; }
  const ClientOptions& options() const { return options_; }
  // Requests answered with 429 or 5xx, or failed to connect, and retried (for tests and metrics).
  int64_t retries() const { return retries_.load(); }

 private:
  KubeClient(KubeConfig config, ClientOptions options, std::unique_ptr<Transport> transport);

  // Rate limit, send, retry; returns the final response (any HTTP code) or a connection error.
  Result<HttpResponse> Send(const HttpRequest& request, int max_retries);
  Result<Json> SendJson(HttpRequest request, std::optional<int> max_retries = std::nullopt);
  static Query ListQuery(const ListOptions& options);
  // One page of ListAll: List's, or in protobuf ListEach's items gathered.
  Result<Json> ListPage(const std::string& path, const ListOptions& options);
  // The Status of a non-200 answer to a streamed request (a watch, a streamed list).
  Status ErrorAnswer(ResponseStream& stream, const std::string& what);

  const KubeConfig config_;
  const ClientOptions options_;
  std::unique_ptr<Transport> transport_;
  RateLimiter limiter_;
  std::atomic<int64_t> retries_{0};
};

// Runs a read-modify-write until it does not fail with 409 Conflict, at most `attempts` times,
// with a short backoff between tries (client-go's retry.RetryOnConflict with DefaultRetry).
Status RetryOnConflict(const std::function<Status()>& fn, int attempts = 5);

// Paths. Core group only; other groups are "/apis/GROUP/VERSION/...".
std::string NodesPath();
std::string NodePath(const std::string& name);
std::string PodsPath(const std::string& ns);  // ns "" : pods of all namespaces
std::string PodPath(const std::string& ns, const std::string& name);
std::string NamespacesPath();

// The query string ("?a=b&c=d", or "" for none), values escaped.
std::string EncodeQuery(const Query& query);

}  // namespace lockstep::kube

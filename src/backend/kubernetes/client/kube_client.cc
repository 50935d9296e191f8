#include "backend/kubernetes/client/kube_client.h"

#include <thread>

#include "backend/kubernetes/client/api_error.h"

namespace lockstep::kube {
namespace {

const char* PatchContentType(PatchType t) {
  switch (t) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kJsonPatch:
      return "application/json-patch+json";
  }
  return "application/merge-patch+json";
}

// Retry-After is seconds (the apiserver never sends an HTTP date).
std::optional<std::chrono::milliseconds> ParseRetryAfter(const std::string& v) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 6) {
    return std::nullopt;
  }
  return std::chrono::milliseconds(std::stoll(v) * 1000);
}

// Whether a request may be sent again after it may have reached the server.
bool Idempotent(const std::string& method) {
  return method == "GET" || method == "PUT" || method == "DELETE";
}

void AddListQuery(Query* q, const std::string& label, const std::string& field) {
  if (!label.empty()) q->emplace_back("labelSelector", label);
  if (!field.empty()) q->emplace_back("fieldSelector", field);
}

HttpRequest Request(std::string method, std::string target) {
  HttpRequest r;
  r.method = std::move(method);
  r.target = std::move(target);
  return r;
}

}  // namespace

std::string EncodeQuery(const Query& query) {
  std::string out;
  for (const auto& [k, v] : query) {
    out += out.empty() ? '?' : '&';
    out += QueryEscape(k) + "=" + QueryEscape(v);
  }
  return out;
}

std::string NodesPath() {
  return "/api/v1/nodes";
}
std::string NodePath(const std::string& name) {
  return "/api/v1/nodes/" + name;
}
std::string PodsPath(const std::string& ns) {
  return ns.empty() ? "/api/v1/pods" : "/api/v1/namespaces/" + ns + "/pods";
}
std::string PodPath(const std::string& ns, const std::string& name) {
  return PodsPath(ns) + "/" + name;
}
std::string NamespacesPath() {
  return "/api/v1/namespaces";
}

// ---- Watch ----

Watch::Watch(std::unique_ptr<ResponseStream> stream, std::string what,
             std::chrono::milliseconds idle_timeout, std::unique_ptr<WatchStreamParser> parser)
    : stream_(std::move(stream)),
      what_(std::move(what)),
      idle_timeout_(idle_timeout),
      parser_(std::move(parser)) {}

void Watch::Stop() {
  stopped_.store(true);
  stream_->Cancel();
}

Result<std::optional<WatchEvent>> Watch::Next() {
  while (true) {
    if (stopped_.load()) return std::optional<WatchEvent>();
    if (next_ < ready_.size()) return std::optional<WatchEvent>(std::move(ready_[next_++]));
    ready_.clear();
    next_ = 0;
    if (ended_) return std::optional<WatchEvent>();
    Result<std::string> bytes = stream_->ReadSome(idle_timeout_);
    if (stopped_.load()) return std::optional<WatchEvent>();
    if (!bytes.ok()) return ConnectionError("watch: " + bytes.status().message(), what_);
    if (bytes->empty()) {
      ended_ = true;
      LOCKSTEP_RETURN_IF_ERROR(parser_->Finish());
      continue;
    }
    Result<std::vector<WatchEvent>> events = parser_->Feed(*bytes);
    if (!events.ok())
      return Status(events.status().code(), events.status().message() + " (" + what_ + ")");
    ready_ = std::move(*events);
  }
}

// ---- KubeClient ----

KubeClient::KubeClient(KubeConfig config, ClientOptions options,
                       std::unique_ptr<Transport> transport)
    : config_(std::move(config)),
      options_(std::move(options)),
      transport_(std::move(transport)),
      limiter_(options_.qps, options_.burst) {}

Result<std::unique_ptr<KubeClient>> KubeClient::Create(const KubeConfig& config,
                                                       ClientOptions options) {
  Result<std::unique_ptr<Transport>> t = Transport::Create(config, options.transport);
  if (!t.ok()) return t.status();
  return std::unique_ptr<KubeClient>(new KubeClient(config, std::move(options), std::move(*t)));
}

Result<HttpResponse> KubeClient::Send(const HttpRequest& request, int max_retries) {
  Backoff backoff(options_.backoff);
  for (int attempt = 0;; ++attempt) {
    limiter_.Acquire();
    Exchange ex = transport_->RoundTrip(request);
    std::optional<std::chrono::milliseconds> wait;  // the server's Retry-After, else backoff's
    bool retry = false;
    if (!ex.error.ok()) {
      retry = !ex.sent || Idempotent(request.method);
      if (!retry || attempt >= max_retries) return ex.error;
    } else {
      const int code = ex.response.status;
      // 429 is always safe to retry (the request was not served); 5xx only when idempotent, or
      // when the server says when to come back.
      const auto retry_after = ParseRetryAfter(ex.response.retry_after);
      retry = code == 429 || (code >= 500 && code != 501 &&
                              (Idempotent(request.method) || retry_after.has_value()));
      if (!retry || attempt >= max_retries) return std::move(ex.response);
      if (retry_after) wait = std::min(*retry_after, options_.max_retry_after);
    }
    retries_.fetch_add(1);
    std::this_thread::sleep_for(wait ? *wait : backoff.Next());
  }
}

Result<Json> KubeClient::SendJson(HttpRequest request, std::optional<int> max_retries) {
  Result<HttpResponse> res = Send(request, max_retries.value_or(options_.max_retries));
  if (!res.ok()) return res.status();
  const std::string what = request.method + " " + request.target;
  if (res->status < 200 || res->status >= 300)
    return StatusFromResponse(res->status, res->body, what);
  if (res->body.empty()) return Json::object();
  Json j = Json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Internal("malformed JSON in the response to " + what + ": " + res->body.substr(0, 80));
  }
  return j;
}

Result<Json> KubeClient::Get(const std::string& path, const Query& query) {
  return SendJson(Request("GET", path + EncodeQuery(query)));
}

Result<Json> KubeClient::List(const std::string& path, const ListOptions& o) {
  return SendJson(Request("GET", path + EncodeQuery(ListQuery(o))), o.max_retries);
}

Result<Json> KubeClient::ListEach(const std::string& path, const ListOptions& o,
                                  const ListItemHandler& on_item) {
  HttpRequest r = Request("GET", path + EncodeQuery(ListQuery(o)));
  if (o.protobuf != nullptr) r.accept = kProtobufMediaType;
  const std::string what = "GET " + r.target;
  limiter_.Acquire();
  Result<std::unique_ptr<ResponseStream>> stream = transport_->OpenStream(r);
  if (!stream.ok()) return stream.status();
  if ((*stream)->status() != 200) return ErrorAnswer(**stream, what);
  ResponseStreamBuf body(stream->get(), options_.transport.request_timeout);
  std::istream in(&body);
  ListStreamOptions parse;
  parse.drop_managed_fields = o.drop_managed_fields;
  Result<Json> list = o.protobuf != nullptr ? ParseProtoListStream(in, o.protobuf, on_item)
                                            : ParseListStream(in, on_item, parse);
  if (!body.error().ok())
    return Status(body.error().code(), body.error().message() + " (" + what + ")");
  if (!list.ok()) return Internal(list.status().message() + " in the response to " + what);
  return list;
}

Query KubeClient::ListQuery(const ListOptions& o) {
  Query q;
  AddListQuery(&q, o.label_selector, o.field_selector);
  if (o.limit > 0) q.emplace_back("limit", std::to_string(o.limit));
  if (!o.continue_token.empty()) q.emplace_back("continue", o.continue_token);
  if (!o.resource_version.empty()) q.emplace_back("resourceVersion", o.resource_version);
  return q;
}

Status KubeClient::ErrorAnswer(ResponseStream& stream, const std::string& what) {
  // An error answer is short: read it whole for the Status object.
  std::string body;
  for (int i = 0; i < 64; ++i) {
    Result<std::string> part = stream.ReadSome(options_.transport.request_timeout);
    if (!part.ok() || part->empty()) break;
    body += *part;
  }
  // Asked for protobuf, the apiserver answers errors in it too.
  if (Result<Json> st = DecodeProtoObject(body, nullptr); st.ok()) body = st->dump();
  return StatusFromResponse(stream.status(), body, what);
}

Result<Json> KubeClient::ListPage(const std::string& path, const ListOptions& options) {
  if (options.protobuf == nullptr) return List(path, options);
  Json items = Json::array();
  Result<Json> page = ListEach(path, options, [&](Json item) { items.push_back(std::move(item)); });
  if (page.ok()) (*page)["items"] = std::move(items);
  return page;
}

Result<Json> KubeClient::ListAll(const std::string& path, ListOptions options) {
  Result<Json> first = ListPage(path, options);
  if (!first.ok()) return first;
  Json all = std::move(*first);
  if (!all.contains("items") || all["items"].is_null()) all["items"] = Json::array();
  std::string cont = all["metadata"].value("continue", "");
  options.resource_version.clear();  // the continue token carries the snapshot
  while (!cont.empty()) {
    options.continue_token = cont;
    Result<Json> page = ListPage(path, options);
    if (!page.ok()) return page;
    if (page->contains("items") && (*page)["items"].is_array()) {
      for (auto& item : (*page)["items"]) all["items"].push_back(std::move(item));
    }
    cont = (*page)["metadata"].value("continue", "");
  }
  all["metadata"].erase("continue");
  all["metadata"].erase("remainingItemCount");
  return all;
}

Result<Json> KubeClient::Create(const std::string& path, const Json& object) {
  return Call("POST", path, &object);
}

Result<Json> KubeClient::Update(const std::string& path, const Json& object) {
  return Call("PUT", path, &object);
}

Result<Json> KubeClient::Patch(const std::string& path, PatchType type, const Json& patch) {
  HttpRequest r{"PATCH", path, patch.dump(), PatchContentType(type)};
  return SendJson(std::move(r));
}

Result<Json> KubeClient::Delete(const std::string& path, const DeleteOptions& o) {
  Json body = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (o.grace_period_seconds) body["gracePeriodSeconds"] = *o.grace_period_seconds;
  if (!o.precondition_uid.empty()) body["preconditions"]["uid"] = o.precondition_uid;
  if (!o.precondition_resource_version.empty()) {
    body["preconditions"]["resourceVersion"] = o.precondition_resource_version;
  }
  if (!o.propagation_policy.empty()) body["propagationPolicy"] = o.propagation_policy;
  return Call("DELETE", path, &body);
}

Result<Json> KubeClient::Call(const std::string& method, const std::string& path, const Json* body,
                              const Query& query) {
  HttpRequest r = Request(method, path + EncodeQuery(query));
  if (body) {
    r.body = body->dump();
    r.content_type = "application/json";
  }
  return SendJson(std::move(r));
}

Result<std::string> KubeClient::GetText(const std::string& path, const Query& query) {
  HttpRequest r = Request("GET", path + EncodeQuery(query));
  r.accept = "*/*";
  Result<HttpResponse> res = Send(r, options_.max_retries);
  if (!res.ok()) return res.status();
  if (res->status < 200 || res->status >= 300) {
    return StatusFromResponse(res->status, res->body, "GET " + r.target);
  }
  return std::move(res->body);
}

Status KubeClient::Bind(const std::string& ns, const std::string& pod, const std::string& node) {
  const Json binding = {{"apiVersion", "v1"},
                        {"kind", "Binding"},
                        {"metadata", {{"name", pod}, {"namespace", ns}}},
                        {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  Result<Json> r = Create(PodPath(ns, pod) + "/binding", binding);
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::unique_ptr<Watch>> KubeClient::StartWatch(const std::string& path,
                                                      const WatchOptions& o) {
  Query q{{"watch", "1"}};
  if (!o.resource_version.empty()) q.emplace_back("resourceVersion", o.resource_version);
  if (o.allow_bookmarks) q.emplace_back("allowWatchBookmarks", "true");
  if (o.timeout_seconds > 0) q.emplace_back("timeoutSeconds", std::to_string(o.timeout_seconds));
  AddListQuery(&q, o.label_selector, o.field_selector);
  HttpRequest r = Request("GET", path + EncodeQuery(q));
  if (o.protobuf != nullptr) r.accept = kProtobufWatchMediaType;
  const std::string what = "GET " + r.target;
  limiter_.Acquire();
  Result<std::unique_ptr<ResponseStream>> stream = transport_->OpenStream(r);
  if (!stream.ok()) return stream.status();
  if ((*stream)->status() != 200) return ErrorAnswer(**stream, what);
  std::unique_ptr<WatchStreamParser> parser;
  if (o.protobuf != nullptr) {
    parser = std::make_unique<ProtoWatchEventParser>(o.protobuf);
  } else {
    parser = std::make_unique<WatchEventParser>(o.drop_managed_fields);
  }
  // The server sends nothing while nothing changes; allow its own timeout plus a margin.
  const auto idle = o.timeout_seconds > 0
                        ? std::chrono::milliseconds(o.timeout_seconds * 1000 + 30'000)
                        : std::chrono::milliseconds(3'600'000);
  return std::make_unique<Watch>(std::move(*stream), what, idle, std::move(parser));
}

Status RetryOnConflict(const std::function<Status()>& fn, int attempts) {
  // client-go's retry.DefaultRetry: 10 ms, factor 1, jitter 0.1, 5 steps.
  Backoff backoff({std::chrono::milliseconds(10), std::chrono::milliseconds(10), 1.0, 0.1});
  Status st;
  for (int i = 0; i < attempts; ++i) {
    st = fn();
    if (!IsConflict(st)) return st;
    if (i + 1 < attempts) std::this_thread::sleep_for(backoff.Next());
  }
  return st;
}

}  // namespace lockstep::kube

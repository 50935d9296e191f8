// An informer for one kind of object (client-go's Reflector + Indexer + SharedInformer handlers,
// for one consumer): list, then watch from the list's resourceVersion; keep the last version
// seen (bookmarks advance it) and reconnect from it when a watch ends; on 410 Gone ("too old
// resource version") list again and deliver the differences as adds, updates and deletes, so
// handlers converge on the server's state; back off on errors.
//
//   Informer pods(client, {.path = PodsPath("")}, {.on_add = ..., .on_delete = ...});
//   pods.Start();
//   pods.WaitForSync(std::chrono::seconds(30));
//   std::optional<Json> p = pods.Get("default/p1");
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backend/kubernetes/client/kube_client.h"
#include "backend/kubernetes/client/rate_limit.h"

namespace lockstep::kube {

struct InformerOptions {
  std::string path;  // a collection: "/api/v1/nodes", "/api/v1/namespaces/NS/pods", ...
  std::string label_selector;
  std::string field_selector;
  // The first list is served from the apiserver's watch cache (resourceVersion "0", as
  // client-go's reflector asks), filtered there in memory, much cheaper for the apiserver than
  // reading every object from etcd, and each object is handed to on_add as it arrives. When
  // that fails, or with false, and for re-lists (410 Gone), the list is a quorum read of etcd in
  // pages of `page_size`, and the differences are delivered.
  bool list_from_watch_cache = true;
  // Drop metadata.managedFields (server-side apply's bookkeeping, often a third of a pod's JSON,
  // read by nobody here) before caching and delivering, as client-go's transform functions do;
  // the streamed first list and the watches never build them (api_json.h).
  bool drop_managed_fields = true;
  // When set (built-in kinds only), lists and watches are asked for in protobuf, which the
  // apiserver encodes about twice as fast, and objects are decoded with this into their JSON
  // form (proto_codec.h): handlers see only the fields the decoder knows.
  ProtoObjectDecoder protobuf = nullptr;
  // False: the cache keeps only what identifies each object and its version (apiVersion, kind,
  // metadata.name, namespace, uid and resourceVersion), which is what Get(), List(), a
  // re-list's on_delete and on_update's old object then give, for consumers that keep the
  // objects themselves (InformerHandlers::on_upsert) and find them by key: there is no second
  // copy of every object, and a watch event does not copy its object's metadata.
  bool keep_objects = true;
  int page_size = 500;  // list in pages of this many (limit/continue), when reading etcd
  int watch_timeout_seconds = 300;  // each watch ends after this; the informer resumes from its RV
  BackoffOptions backoff{std::chrono::milliseconds(200), std::chrono::milliseconds(10'000), 2.0,
                         0.2};
};

// Called on the informer's thread, in the order of the server's changes, never concurrently,
// and never with the cache locked (handlers may read the informer). Any may be empty.
struct InformerHandlers {
  std::function<void(const Json& object)> on_add;
  std::function<void(const Json& old_object, const Json& new_object)> on_update;
  // The last state known; after a re-list it is the cached object, as client-go's
  // DeletedFinalStateUnknown.
  std::function<void(const Json& object)> on_delete;
  // When set, called instead of on_add and on_update with the added or changed object itself,
  // for the handler to keep (move from) without a copy.
  std::function<void(Json object)> on_upsert;
};

// "namespace/name", or "name" for cluster-scoped objects.
std::string ObjectKey(const Json& object);

// Counters for tests and metrics.
struct InformerStats {
  int64_t lists = 0;            // complete lists (the first one included)
  int64_t relists_on_gone = 0;  // lists caused by 410 Gone / Expired
  int64_t watches = 0;          // watches started
  int64_t events = 0;           // ADDED/MODIFIED/DELETED received
  int64_t bookmarks = 0;
  int64_t errors = 0;                // failed lists and watches
  int64_t cache_list_fallbacks = 0;  // first lists from the watch cache that failed
};

// Owns its thread. The KubeClient must outlive it. Cache reads are thread-safe.
class Informer {
 public:
  Informer(KubeClient* client, InformerOptions options, InformerHandlers handlers);
  ~Informer();  // Stop()s
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void Start();
  // Prompt: interrupts a watch or a backoff wait, and joins the thread. Idempotent.
  void Stop();

  // True once the first list has been delivered to the handlers.
  bool HasSynced() const { return synced_.load(); }
  bool WaitForSync(std::chrono::milliseconds timeout);

  std::optional<Json> Get(const std::string& key) const;
  std::vector<Json> List() const;
  size_t Size() const;
  // The resourceVersion the next watch starts from.
  std::string LastResourceVersion() const;
  InformerStats stats() const;

  // Test hooks: ends the current watch and holds the informer disconnected (no list, no watch)
  // until ResumeForTest(), as a network partition would.
  void PauseForTest();
  void ResumeForTest();

 private:
  void Run();
  // Lists every page and replaces the cache, delivering the differences. Returns false on error.
  bool Relist();
  // The first list, from the watch cache, each object cached and handed to on_add as it is
  // parsed (ListEach); false, with what came cached and delivered, on an error.
  bool StreamFirstList();
  ListOptions WatchCacheList() const;
  Result<Json> ListFromEtcd();
  // Watches from last_rv_ until the stream ends (true), or a 410 demands a re-list (false, with
  // need_relist_ set), or an error (false).
  bool WatchOnce();
  void Apply(WatchEvent& event);  // takes the event's object
  // Whether on_add and on_update get the cached object itself (no on_upsert, whole objects
  // kept), rather than the object the informer hands over.
  bool HandlersShareCache() const;
  // What the cache keeps of `object` (all of it, or what identifies it: keep_objects).
  Json CacheEntryOf(const Json& object) const;
  // Hands an added or changed object to the handlers: on_upsert takes it, else on_add or
  // on_update see it.
  void DeliverUpsert(Json object, const Json* old_object);
  // What options_ drop from an object of a (non-streamed) list before it is cached.
  void Trim(Json& object) const;
  // Sleeps `d` unless stopped or paused first.
  void Sleep(std::chrono::milliseconds d);
  void WaitWhilePaused();

  KubeClient* const client_;
  const InformerOptions options_;
  const InformerHandlers handlers_;

  mutable std::mutex mu_;
  std::condition_variable cv_;         // stop_, paused_, synced_
  std::map<std::string, Json> cache_;  // guarded by mu_
  std::string last_rv_;                // guarded by mu_
  InformerStats stats_;                // guarded by mu_
  Watch* current_watch_ = nullptr;     // guarded by mu_; owned by Run()'s stack
  bool paused_ = false;                // guarded by mu_
  bool stop_ = false;                  // guarded by mu_
  std::atomic<bool> synced_{false};
  bool need_relist_ = true;  // informer thread only
  std::thread thread_;
};

}  // namespace lockstep::kube

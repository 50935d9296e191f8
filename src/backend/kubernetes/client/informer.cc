#include "backend/kubernetes/client/informer.h"

#include <utility>

#include "backend/kubernetes/client/api_error.h"

namespace lockstep::kube {
namespace {

std::string ResourceVersionOf(const Json& object) {
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return "";
  return md->value("resourceVersion", "");
}

// One change of a re-list to hand to the handlers once the cache lock is released.
struct Delivery {
  enum Kind { kAdd, kUpdate, kDelete } kind;
  const Json* old_object;
  const Json* new_object;
};

}  // namespace

std::string ObjectKey(const Json& object) {
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return "";
  const std::string name = md->value("name", "");
  const std::string ns = md->value("namespace", "");
  return ns.empty() ? name : ns + "/" + name;
}

Informer::Informer(KubeClient* client, InformerOptions options, InformerHandlers handlers)
    : client_(client), options_(std::move(options)), handlers_(std::move(handlers)) {}

Informer::~Informer() {
  Stop();
}

void Informer::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || stop_) return;
  thread_ = std::thread([this] { Run(); });
}

void Informer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    if (current_watch_) current_watch_->Stop();
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

bool Informer::WaitForSync(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return synced_.load() || stop_; });
  return synced_.load();
}

std::optional<Json> Informer::Get(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cache_.find(key);
  if (it == cache_.end()) return std::nullopt;
  return it->second;
}

std::vector<Json> Informer::List() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Json> out;
  out.reserve(cache_.size());
  for (const auto& [key, obj] : cache_) out.push_back(obj);
  return out;
}

size_t Informer::Size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

std::string Informer::LastResourceVersion() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_rv_;
}

InformerStats Informer::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void Informer::PauseForTest() {
  std::lock_guard<std::mutex> lock(mu_);
  paused_ = true;
  if (current_watch_) current_watch_->Stop();
  cv_.notify_all();
}

void Informer::ResumeForTest() {
  std::lock_guard<std::mutex> lock(mu_);
  paused_ = false;
  cv_.notify_all();
}

void Informer::Sleep(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, d, [&] { return stop_ || paused_; });
}

void Informer::WaitWhilePaused() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return stop_ || !paused_; });
}

void Informer::Run() {
  Backoff backoff(options_.backoff);
  auto stopping = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    return stop_;
  };
  while (!stopping()) {
    WaitWhilePaused();
    if (stopping()) break;
    if (need_relist_) {
      if (!Relist()) {
        Sleep(backoff.Next());
        continue;
      }
      need_relist_ = false;
      backoff.Reset();
    }
    const bool ended_normally = WatchOnce();
    if (stopping()) break;
    if (need_relist_) continue;  // 410: list again at once, as client-go's Reflector does
    if (ended_normally) {
      backoff.Reset();
    } else {
      Sleep(backoff.Next());
    }
  }
}

ListOptions Informer::WatchCacheList() const {
  // resourceVersion "0": whatever the watch cache holds, at once, filtered there in memory, as
  // client-go's reflector lists first. (A list with a limit would bypass the cache; a quorum
  // version could make it wait for a revision it never sees: its version moves only with its own
  // resource's changes.) The watch from the list's version catches up on what it missed.
  ListOptions lo;
  lo.label_selector = options_.label_selector;
  lo.field_selector = options_.field_selector;
  lo.resource_version = std::string(1, '0');  // not = "0": GCC 12 warns falsely (-Wrestrict)
  lo.max_retries = 0;
  lo.drop_managed_fields = options_.drop_managed_fields;
  lo.protobuf = options_.protobuf;
  return lo;
}

bool Informer::StreamFirstList() {
  Result<Json> list = client_->ListEach(options_.path, WatchCacheList(), [&](Json item) {
    std::string key = ObjectKey(item);
    if (!HandlersShareCache()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        cache_.insert_or_assign(std::move(key), CacheEntryOf(item));
      }
      DeliverUpsert(std::move(item), nullptr);
      return;
    }
    const Json* cached = nullptr;  // stays valid: only this thread writes the cache
    {
      std::lock_guard<std::mutex> lock(mu_);
      cached = &cache_.insert_or_assign(std::move(key), std::move(item)).first->second;
    }
    if (handlers_.on_add) handlers_.on_add(*cached);
  });
  std::lock_guard<std::mutex> lock(mu_);
  if (!list.ok()) {
    ++stats_.cache_list_fallbacks;
    return false;
  }
  last_rv_ = (*list)["metadata"].value("resourceVersion", "");
  ++stats_.lists;
  synced_.store(true);
  cv_.notify_all();
  return true;
}

Result<Json> Informer::ListFromEtcd() {
  ListOptions lo;
  lo.label_selector = options_.label_selector;
  lo.field_selector = options_.field_selector;
  lo.limit = options_.page_size;
  lo.max_retries = 0;  // the informer backs off itself, and stays stoppable meanwhile
  lo.protobuf = options_.protobuf;
  return client_->ListAll(options_.path, lo);
}

bool Informer::Relist() {
  // The first list hands each object to the handlers as it arrives: there is nothing to compare
  // it with. Should it fail midway, the list below delivers the differences from what came.
  if (options_.list_from_watch_cache && !synced_.load() && Size() == 0 && StreamFirstList())
    return true;
  Result<Json> list = ListFromEtcd();
  if (!list.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.errors;
    return false;
  }
  std::map<std::string, Json> fresh;
  if ((*list)["items"].is_array()) {
    for (auto& item : (*list)["items"]) {
      Trim(item);
      std::string key = ObjectKey(item);
      fresh.emplace(std::move(key), std::move(item));
    }
  }
  // The old cache lives until the handlers have seen the deletes and updates; pointers into
  // the new one stay valid, unlocked, since only this thread writes it (a map's move keeps its
  // nodes).
  std::map<std::string, Json> old_cache;
  std::vector<Delivery> deliveries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    old_cache = std::move(cache_);
    cache_ = std::move(fresh);
    for (const auto& [key, old_obj] : old_cache)
      if (!cache_.count(key)) deliveries.push_back({Delivery::kDelete, &old_obj, nullptr});
    for (const auto& [key, obj] : cache_) {
      auto it = old_cache.find(key);
      if (it == old_cache.end()) {
        deliveries.push_back({Delivery::kAdd, nullptr, &obj});
      } else if (ResourceVersionOf(it->second) != ResourceVersionOf(obj)) {
        deliveries.push_back({Delivery::kUpdate, &it->second, &obj});
      }
    }
    last_rv_ = (*list)["metadata"].value("resourceVersion", "");
    ++stats_.lists;
  }
  for (const Delivery& d : deliveries) {
    if (d.kind != Delivery::kDelete && handlers_.on_upsert) {
      handlers_.on_upsert(*d.new_object);
      continue;
    }
    if (d.kind == Delivery::kAdd && handlers_.on_add) handlers_.on_add(*d.new_object);
    if (d.kind == Delivery::kUpdate && handlers_.on_update)
      handlers_.on_update(*d.old_object, *d.new_object);
    if (d.kind == Delivery::kDelete && handlers_.on_delete) handlers_.on_delete(*d.old_object);
  }
  if (!options_.keep_objects) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, obj] : cache_) obj = CacheEntryOf(obj);
  }
  if (!synced_.load()) {
    std::lock_guard<std::mutex> lock(mu_);
    synced_.store(true);
    cv_.notify_all();
  }
  return true;
}

bool Informer::WatchOnce() {
  WatchOptions wo;
  wo.resource_version = LastResourceVersion();
  wo.label_selector = options_.label_selector;
  wo.field_selector = options_.field_selector;
  wo.allow_bookmarks = true;
  wo.drop_managed_fields = options_.drop_managed_fields;
  wo.protobuf = options_.protobuf;
  wo.timeout_seconds = options_.watch_timeout_seconds;
  Result<std::unique_ptr<Watch>> started = client_->StartWatch(options_.path, wo);
  if (!started.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (IsGone(started.status())) {
      need_relist_ = true;
      ++stats_.relists_on_gone;
    } else {
      ++stats_.errors;
    }
    return false;
  }
  std::unique_ptr<Watch> watch = std::move(*started);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ || paused_) return true;
    current_watch_ = watch.get();
    ++stats_.watches;
  }
  bool ok = true;
  while (true) {
    Result<std::optional<WatchEvent>> ev = watch->Next();
    if (!ev.ok() || !ev->has_value()) {
      ok = ev.ok();
      break;
    }
    WatchEvent& event = **ev;
    if (event.type == WatchEventType::kError) {
      const Status st = StatusFromStatusObject(event.object.dump(), "watch " + options_.path);
      std::lock_guard<std::mutex> lock(mu_);
      if (IsGone(st)) {
        need_relist_ = true;
        ++stats_.relists_on_gone;
      }
      ok = false;
      break;
    }
    Apply(event);
  }
  std::lock_guard<std::mutex> lock(mu_);
  current_watch_ = nullptr;
  if (!ok && !need_relist_) ++stats_.errors;
  return ok;
}

void Informer::Apply(WatchEvent& event) {
  const std::string rv = event.ResourceVersion();
  Delivery::Kind kind = Delivery::kAdd;
  Json old_object;
  // Only this thread writes the cache, so the entry it has just written stays valid, unlocked,
  // while the handlers read it: one copy of each object, not three.
  const Json* cached = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!rv.empty()) last_rv_ = rv;
    if (event.type == WatchEventType::kBookmark) {
      ++stats_.bookmarks;
      return;
    }
    ++stats_.events;
    std::string key = ObjectKey(event.object);
    auto it = cache_.find(key);
    if (event.type == WatchEventType::kDeleted) {
      kind = Delivery::kDelete;
      old_object = std::move(event.object);
      if (it != cache_.end()) cache_.erase(it);
    } else if (!HandlersShareCache()) {
      // The handlers get the event's object; the cache keeps its own entry of it.
      Json entry = CacheEntryOf(event.object);
      if (it != cache_.end()) {
        kind = Delivery::kUpdate;
        old_object = std::exchange(it->second, std::move(entry));
      } else {
        cache_.emplace(std::move(key), std::move(entry));
      }
    } else if (it != cache_.end()) {
      kind = Delivery::kUpdate;
      old_object = std::exchange(it->second, std::move(event.object));
      cached = &it->second;
    } else {
      cached = &cache_.emplace(std::move(key), std::move(event.object)).first->second;
    }
  }
  if (kind == Delivery::kDelete) {
    if (handlers_.on_delete) handlers_.on_delete(old_object);
  } else if (!HandlersShareCache()) {
    DeliverUpsert(std::move(event.object), kind == Delivery::kUpdate ? &old_object : nullptr);
  } else if (kind == Delivery::kAdd) {
    if (handlers_.on_add) handlers_.on_add(*cached);
  } else if (handlers_.on_update) {
    handlers_.on_update(old_object, *cached);
  }
}

bool Informer::HandlersShareCache() const {
  return options_.keep_objects && !handlers_.on_upsert;
}

Json Informer::CacheEntryOf(const Json& object) const {
  if (options_.keep_objects) return object;
  Json entry = Json::object();
  for (const char* k : {"apiVersion", "kind"})
    if (auto it = object.find(k); it != object.end()) entry[k] = *it;
  Json identity = Json::object();
  if (auto md = object.find("metadata"); md != object.end() && md->is_object())
    for (const char* k : {"name", "namespace", "uid", "resourceVersion"})
      if (auto it = md->find(k); it != md->end()) identity[k] = *it;
  entry["metadata"] = std::move(identity);
  return entry;
}

void Informer::DeliverUpsert(Json object, const Json* old_object) {
  if (handlers_.on_upsert) {
    handlers_.on_upsert(std::move(object));
  } else if (old_object == nullptr) {
    if (handlers_.on_add) handlers_.on_add(object);
  } else if (handlers_.on_update) {
    handlers_.on_update(*old_object, object);
  }
}

void Informer::Trim(Json& object) const {
  if (!options_.drop_managed_fields) return;
  auto md = object.find("metadata");
  if (md != object.end() && md->is_object()) md->erase("managedFields");
}

}  // namespace lockstep::kube

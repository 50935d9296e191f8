#include "backend/kubernetes/client/informer.h"

#include "backend/kubernetes/client/api_error.h"

namespace lockstep::kube {
namespace {

std::string ResourceVersionOf(const Json& object) {
  auto md = object.find("metadata");
  if (md == object.end() || !md->is_object()) return "";
  return md->value("resourceVersion", "");
}

// One change to hand to the handlers once the cache lock is released.
struct Delivery {
  enum Kind { kAdd, kUpdate, kDelete } kind;
  Json old_object;
  Json new_object;
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

bool Informer::Relist() {
  ListOptions lo;
  lo.label_selector = options_.label_selector;
  lo.field_selector = options_.field_selector;
  lo.limit = options_.page_size;
  lo.max_retries = 0;  // the informer backs off itself, and stays stoppable meanwhile
  Result<Json> list = client_->ListAll(options_.path, lo);
  if (!list.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.errors;
    return false;
  }
  std::map<std::string, Json> fresh;
  if ((*list)["items"].is_array()) {
    for (auto& item : (*list)["items"]) {
      std::string key = ObjectKey(item);
      fresh.emplace(std::move(key), std::move(item));
    }
  }
  std::vector<Delivery> deliveries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, old_obj] : cache_) {
      if (!fresh.count(key)) deliveries.push_back({Delivery::kDelete, old_obj, Json()});
    }
    for (const auto& [key, obj] : fresh) {
      auto it = cache_.find(key);
      if (it == cache_.end()) {
        deliveries.push_back({Delivery::kAdd, Json(), obj});
      } else if (ResourceVersionOf(it->second) != ResourceVersionOf(obj)) {
        deliveries.push_back({Delivery::kUpdate, it->second, obj});
      }
    }
    cache_ = std::move(fresh);
    last_rv_ = (*list)["metadata"].value("resourceVersion", "");
    ++stats_.lists;
  }
  for (const Delivery& d : deliveries) {
    if (d.kind == Delivery::kAdd && handlers_.on_add) handlers_.on_add(d.new_object);
    if (d.kind == Delivery::kUpdate && handlers_.on_update) {
      handlers_.on_update(d.old_object, d.new_object);
    }
    if (d.kind == Delivery::kDelete && handlers_.on_delete) handlers_.on_delete(d.old_object);
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
    const WatchEvent& event = **ev;
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

void Informer::Apply(const WatchEvent& event) {
  const std::string rv = event.ResourceVersion();
  Delivery d{Delivery::kAdd, Json(), Json()};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!rv.empty()) last_rv_ = rv;
    if (event.type == WatchEventType::kBookmark) {
      ++stats_.bookmarks;
      return;
    }
    ++stats_.events;
    const std::string key = ObjectKey(event.object);
    auto it = cache_.find(key);
    if (event.type == WatchEventType::kDeleted) {
      d.kind = Delivery::kDelete;
      d.old_object = event.object;
      if (it != cache_.end()) cache_.erase(it);
    } else {
      if (it != cache_.end()) {
        d.kind = Delivery::kUpdate;
        d.old_object = std::move(it->second);
        it->second = event.object;
      } else {
        cache_.emplace(key, event.object);
      }
      d.new_object = event.object;
    }
  }
  if (d.kind == Delivery::kAdd && handlers_.on_add) handlers_.on_add(d.new_object);
  if (d.kind == Delivery::kUpdate && handlers_.on_update) {
    handlers_.on_update(d.old_object, d.new_object);
  }
  if (d.kind == Delivery::kDelete && handlers_.on_delete) handlers_.on_delete(d.old_object);
}

}  // namespace lockstep::kube

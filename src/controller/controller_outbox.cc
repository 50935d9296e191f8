// What the controller does after its lock: store writes queued under mu_ and waited for
// outside it, and backend commands carried out in order by the dispatcher thread.
#include <cstdio>
#include <cstdlib>

#include "common/log.h"
#include "controller/controller.h"
#include "controller/controller_internal.h"
#include "controller/job_env.h"

namespace lockstep::controller {
store::PendingWrite Controller::PersistLocked(const std::vector<const JobEntry*>& jobs) {
  std::vector<store::Record> records;
  records.reserve(jobs.size());
  for (const JobEntry* e : jobs) records.push_back({"jobs", JobKey(e->id), RecordOfLocked(*e)});
  store::PendingWrite write = store_->PutAsync(std::move(records));
  outbox_.push_back({write, std::nullopt});
  ++outbox_queued_;
  outbox_changed_.notify_all();
  return write;
}

std::string Controller::RecordOfLocked(const JobEntry& e) {
  if (e.is_array_task()) {
    auto array = array_specs_.find(e.array_job_id);
    if (array != array_specs_.end() && array->second == e.spec) return EntryToJson(e, "");
  }
  return EntryToJson(e, *specs_.JsonOf(e.spec));
}

store::PendingWrite Controller::PersistNodeLocked(std::uint32_t n) {
  const NodeInfo& info = nodes_[n];
  nlohmann::json record = {{"admin", static_cast<int>(info.admin)},
                           {"reason", info.reason},
                           {"reason_user", info.reason_user},
                           {"reason_time", info.reason_time},
                           {"health_drain", info.health_drain},
                           {"health_event", info.health_event}};
  store::PendingWrite write =
      store_->PutAsync({{"nodes", cluster_.base.nodes[n].name, record.dump()}});
  outbox_.push_back({write, std::nullopt});
  ++outbox_queued_;
  outbox_changed_.notify_all();
  return write;
}

void Controller::SendLocked(Command command) {
  outbox_.push_back({std::nullopt, std::move(command)});
  ++outbox_queued_;
  outbox_changed_.notify_all();
}

Status Controller::Durable(store::PendingWrite write) {
  Status s = write.Wait();
  if (!s.ok()) StoreFailed(s);
  return s;
}

void Controller::StoreFailed(const Status& status) {
  if (options_.on_store_failure) return options_.on_store_failure(status);
  log::Error("store write failed: {}", status.ToString());
  log::Error("stopping: memory and disk would differ; start lockstepd again to recover from the "
             "store");
  std::abort();
}

void Controller::DispatchLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    outbox_changed_.wait(lock, [this] { return stopping_ || !outbox_.empty(); });
    if (outbox_.empty()) return;  // stopping, and everything decided has been carried out
    OutboxEntry entry = std::move(outbox_.front());
    outbox_.pop_front();
    lock.unlock();
    if (entry.write) {
      // In order: a command is sent only once every write queued before it is durable.
      Status s = entry.write->Wait();
      if (!s.ok()) StoreFailed(s);
    }
    if (entry.command) Dispatch(*entry.command);
    lock.lock();
    ++outbox_done_;
    outbox_changed_.notify_all();
  }
}

template <typename F>
auto Controller::WithBackend(F&& f) -> decltype(f(std::declval<backend::Backend&>())) {
  backend::Backend* b = nullptr;
  {
    std::lock_guard<std::mutex> lock(backend_mu_);
    b = backend_;
    if (b) ++backend_calls_;
  }
  if (!b) return Status(StatusCode::kUnavailable, "no backend is attached");
  auto result = f(*b);
  {
    std::lock_guard<std::mutex> lock(backend_mu_);
    if (--backend_calls_ == 0) backend_idle_.notify_all();
  }
  return result;
}

namespace {

// The submitted environment beneath the job's own variables (which BatchEnvironment set).
void MergeSubmitEnvironment(LaunchOrder& order, std::map<std::string, std::string> submitted) {
  for (auto& [k, v] : order.env) submitted[k] = std::move(v);
  order.env = std::move(submitted);
}

}  // namespace

void Controller::Dispatch(Command& command) {
  Status s;
  if (auto* launch = std::get_if<Command::Launch>(&command.what)) {
    // The script is read here, off the lock, once the job's RUNNING record is durable.
    Result<std::optional<std::string>> blob =
        store_->Get("scripts", std::to_string(launch->script_id));
    nlohmann::json b = blob.ok() && blob->has_value()
                           ? nlohmann::json::parse(**blob, nullptr, false)
                           : nlohmann::json();
    if (!b.is_object() || !b.contains("script") || !b["script"].is_string()) {
      const backend::RunId run = launch->order.id();
      QueueEvent([this, run](Time now) {
        LaunchFailedLocked(run, "its script is missing from the store", false, now);
      });
      return;
    }
    launch->order.script = b["script"].get<std::string>();
    if (b.contains("args") && b["args"].is_array())
      for (const auto& a : b["args"])
        if (a.is_string()) launch->order.script_args.push_back(a.get<std::string>());
    std::map<std::string, std::string> submitted;
    if (b.contains("env") && b["env"].is_object())
      for (const auto& [k, v] : b["env"].items())
        if (v.is_string()) submitted[k] = v.get<std::string>();
    MergeSubmitEnvironment(launch->order, std::move(submitted));
    const backend::RunId run = launch->order.id();
    s = WithBackend([&](backend::Backend& b) { return b.Launch(std::move(launch->order)); });
    if (!s.ok())
      QueueEvent([this, run, why = s.message()](Time now) {
        LaunchFailedLocked(run, why, true, now);
      });
    return;
  }
  if (auto* t = std::get_if<Command::Terminate>(&command.what))
    s = WithBackend([&](backend::Backend& b) { return b.Terminate(t->run, t->grace); });
  else if (auto* sig = std::get_if<Command::Signal>(&command.what))
    s = WithBackend([&](backend::Backend& b) {
      return sig->batch_only ? b.SignalBatch(sig->run, sig->signo) : b.Signal(sig->run, sig->signo);
    });
  else if (auto* step = std::get_if<Command::LaunchStep>(&command.what))
    s = WithBackend([&](backend::Backend& b) { return b.LaunchStep(std::move(step->step)); });
  else if (auto* ss = std::get_if<Command::SignalStep>(&command.what))
    s = WithBackend(
        [&](backend::Backend& b) { return b.SignalStep(ss->job, ss->step, ss->signo, ss->grace); });
  else if (auto* sr = std::get_if<Command::Suspend>(&command.what))
    s = WithBackend([&](backend::Backend& b) { return b.Suspend(sr->run, sr->stop); });
  if (!s.ok()) log::Error("backend: {}", s.ToString());
}

Result<std::string> Controller::BackendLogs(const backend::LogsRequest& request) {
  return WithBackend([&](backend::Backend& b) { return b.Logs(request); });
}

Result<std::vector<backend::BroadcastResult>> Controller::BackendBroadcast(
    const backend::BroadcastOrder& order) {
  return WithBackend([&](backend::Backend& b) { return b.Broadcast(order); });
}

void Controller::AttachBackend(backend::Backend* backend) {
  bool steps = false, suspend = false, images = false, mpi = false;
  {
    std::lock_guard<std::mutex> lock(backend_mu_);
    backend_ = backend;
    steps = backend && backend->SupportsSteps();
    suspend = backend && backend->SupportsSuspend();
    images = backend && backend->RunsJobsInImages();
    mpi = backend && backend->SupportsMpi();
  }
  HeldLock lock(*this);
  supports_steps_ = steps;
  supports_suspend_ = suspend;
  jobs_in_images_ = images;
  supports_mpi_ = mpi;
}

void Controller::DetachBackend() {
  std::unique_lock<std::mutex> lock(backend_mu_);
  backend_ = nullptr;
  backend_idle_.wait(lock, [this] { return backend_calls_ == 0; });
}

void Controller::SettleForTest() {
  // Events may queue commands, and commands (a failed launch) may queue events: settle both.
  for (int round = 0; round < 8; ++round) {
    std::uint64_t events_target = 0;
    {
      std::unique_lock<std::mutex> lock(events_mu_);
      events_target = events_queued_;
      events_changed_.wait(lock, [&] { return events_applied_ >= events_target; });
    }
    std::unique_lock<std::mutex> lock(mu_);
    const std::uint64_t target = outbox_queued_;
    outbox_changed_.wait(lock, [&] { return outbox_done_ >= target || stopping_; });
    lock.unlock();
    std::lock_guard<std::mutex> events_lock(events_mu_);
    if (events_queued_ == events_target) return;
  }
}

}  // namespace lockstep::controller

#include "backend/kubernetes/leader/leader_election.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <utility>

#include "backend/kubernetes/client/api_error.h"
#include "common/log.h"

namespace lockstep::kube {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr double kJitterFactor = 1.2;  // client-go's JitterFactor for the candidate's retries

int64_t SteadyNs(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

Status ValidateLeaderElectionOptions(const LeaderElectionOptions& o) {
  if (o.ns.empty() || o.name.empty()) {
    return InvalidArgument("leader election: the lease's namespace and name must be set");
  }
  if (o.retry_period <= milliseconds(0)) {
    return InvalidArgument("leader election: retry_period must be positive");
  }
  if (o.lease_duration < std::chrono::seconds(1) ||
      o.lease_duration % std::chrono::seconds(1) != milliseconds(0)) {
    return InvalidArgument("leader election: lease_duration must be a whole number of seconds");
  }
  if (o.lease_duration <= o.renew_deadline) {
    return InvalidArgument("leader election: lease_duration (" +
                           std::to_string(o.lease_duration.count()) +
                           " ms) must be greater than renew_deadline (" +
                           std::to_string(o.renew_deadline.count()) + " ms)");
  }
  if (o.renew_deadline.count() <= kJitterFactor * o.retry_period.count()) {
    return InvalidArgument("leader election: renew_deadline (" +
                           std::to_string(o.renew_deadline.count()) +
                           " ms) must be greater than 1.2 * retry_period (" +
                           std::to_string(o.retry_period.count()) + " ms)");
  }
  return Status::Ok();
}

std::string DefaultLeaderIdentity() {
  // Replicas with hostNetwork share the node's host name, and in containers both are pid 1:
  // the pod's name (POD_NAME, from the downward API) tells them apart.
  if (const char* pod = std::getenv("POD_NAME"); pod != nullptr && *pod != '\0')
    return std::string(pod) + "_" + std::to_string(getpid());
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') {
    std::snprintf(host, sizeof host, "unknown-host");
  }
  return std::string(host) + "_" + std::to_string(getpid());
}

ClientOptions LeaderElectionClientOptions(const LeaderElectionOptions& o) {
  ClientOptions c;
  c.max_retries = 1;
  c.backoff.initial = std::min(milliseconds(100), o.retry_period);
  c.max_retry_after = o.retry_period;
  c.transport.connect_timeout = o.renew_deadline / 2;
  c.transport.request_timeout = o.renew_deadline / 2;
  c.transport.max_idle_connections = 2;
  return c;
}

LeaderElector::LeaderElector(KubeClient* client, LeaderElectionOptions o,
                             std::function<void()> on_started_leading,
                             std::function<void()> on_stopped_leading)
    : client_(client),
      options_(std::move(o)),
      on_started_leading_(std::move(on_started_leading)),
      on_stopped_leading_(std::move(on_stopped_leading)) {
  LOCKSTEP_CHECK(client_ != nullptr);
  if (options_.identity.empty()) options_.identity = DefaultLeaderIdentity();
  if (Status st = ValidateLeaderElectionOptions(options_); !st.ok()) {
    log::Error("{}", st.message());
    LOCKSTEP_CHECK(st.ok());
  }
}

LeaderElector::~LeaderElector() {
  Stop();
}

void LeaderElector::Start() {
  LOCKSTEP_CHECK(!thread_.joinable());
  thread_ = std::thread([this] { Run(); });
}

void LeaderElector::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool LeaderElector::IsLeader() const {
  if (!leading_.load()) return false;
  const auto since = SteadyNs(options_.clock->MonotonicNow()) - renewed_at_ns_.load();
  return since <
         std::chrono::duration_cast<std::chrono::nanoseconds>(options_.renew_deadline).count();
}

bool LeaderElector::Sleep(Clock::duration d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, d, [this] { return stop_; });
}

bool LeaderElector::stopping() {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_;
}

std::string LeaderElector::LeasePath() const {
  return "/apis/coordination.k8s.io/v1/namespaces/" + options_.ns + "/leases/" + options_.name;
}

void LeaderElector::Log(log::Level level, const std::string& message) {
  if (message == last_log_) return;  // a standby says "held by X" once, not every retry
  last_log_ = message;
  if (!log::Enabled(level)) return;
  log::Write(level, "leader election " + options_.ns + "/" + options_.name + " (" +
                        options_.identity + "): " + message);
}

void LeaderElector::Run() {
  std::minstd_rand rng(
      static_cast<unsigned>(std::hash<std::string>{}(options_.identity) ^ SteadyNs(Clock::now())));
  std::uniform_real_distribution<double> jitter(0.0, kJitterFactor);
  while (!stopping()) {
    if (!TryAcquireOrRenew()) {
      (void)Sleep(
          std::chrono::duration_cast<Clock::duration>(options_.retry_period * (1.0 + jitter(rng))));
      continue;
    }
    leading_.store(true);
    Log(log::Level::kInfo, "leading");
    if (on_started_leading_) on_started_leading_();
    bool stop_requested = false;
    std::string why;
    while (true) {
      if (!Sleep(options_.retry_period)) {
        stop_requested = true;
        break;
      }
      if (TryAcquireOrRenew()) continue;
      if (observed_.record && observed_.record->holder_identity != options_.identity) {
        why = "the lease is now held by " + observed_.record->holder_identity;
        break;
      }
      const auto since =
          options_.clock->MonotonicNow() -
          Clock::time_point(std::chrono::nanoseconds(renewed_at_ns_.load()));
      if (since >= options_.renew_deadline) {
        why = "not renewed within the renew deadline";
        break;
      }
    }
    leading_.store(false);
    if (options_.fence != nullptr) options_.fence->Close();
    if (stop_requested) {
      if (on_stopped_leading_) on_stopped_leading_();
      Release();
      return;
    }
    Log(log::Level::kInfo, "stopped leading: " + why);
    if (on_stopped_leading_) on_stopped_leading_();
  }
}

bool LeaderElector::TryAcquireOrRenew() {
  const bool ok = TryAcquireOrRenewOnce();
  tries_.fetch_add(1);
  return ok;
}

bool LeaderElector::TryAcquireOrRenewOnce() {
  const Clock::time_point start = options_.clock->MonotonicNow();
  if (unreachable_.load()) {
    Log(log::Level::kWarning, "cannot reach the apiserver (SetUnreachableForTest)");
    return false;
  }
  Result<Json> got = client_->Get(LeasePath());
  std::optional<LeaseRecord> current;
  if (got.ok()) {
    current = LeaseRecordFromObject(*got);
  } else if (!IsNotFound(got.status())) {
    Log(log::Level::kWarning, "cannot read the lease: " + got.status().message());
    return false;
  }
  const LeaseDecision d =
      DecideLeaseAction(current, observed_, options_.identity,
                        std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration),
                        start, std::chrono::system_clock::now());
  observed_ = d.observation;
  Result<Json> written = Status::Ok();
  switch (d.action) {
    case LeaseAction::kBackOff:
      Log(log::Level::kInfo, "standby: the lease is held by " + current->holder_identity);
      return false;
    case LeaseAction::kCreate:
      written =
          client_->Create("/apis/coordination.k8s.io/v1/namespaces/" + options_.ns + "/leases",
                          LeaseObject(options_.ns, options_.name, d.desired));
      break;
    case LeaseAction::kAcquire:
    case LeaseAction::kRenew: {
      Json lease = *got;  // its metadata.resourceVersion makes the write conditional
      lease["spec"] = LeaseSpecJson(d.desired);
      written = client_->Update(LeasePath(), lease);
      break;
    }
  }
  if (!written.ok()) {
    if (IsAlreadyExists(written.status()) || IsConflict(written.status())) {
      Log(log::Level::kInfo,
          std::string("lost the race to ") + LeaseActionName(d.action) + " the lease");
    } else {
      Log(log::Level::kWarning, std::string("cannot ") + LeaseActionName(d.action) +
                                    " the lease: " + written.status().message());
    }
    return false;
  }
  lease_ = *written;
  observed_ = {LeaseRecordFromObject(lease_), options_.clock->MonotonicNow()};
  renewed_at_ns_.store(SteadyNs(start));
  // From the write's start: the others measure the lease from when they see it, later still.
  if (options_.fence != nullptr) options_.fence->Extend(start + options_.renew_deadline);
  if (d.action != LeaseAction::kRenew) {
    Log(log::Level::kInfo, std::string(d.action == LeaseAction::kCreate ? "created" : "acquired") +
                               " the lease (transitions " +
                               std::to_string(d.desired.lease_transitions) + ")");
  }
  return true;
}

void LeaderElector::Release() {
  if (lease_.is_null() || unreachable_.load()) return;
  const LeaseRecord held = LeaseRecordFromObject(lease_);
  if (held.holder_identity != options_.identity) return;
  Json lease = lease_;
  lease["spec"] = LeaseSpecJson(ReleasedRecord(held, std::chrono::system_clock::now()));
  Result<Json> r = client_->Update(LeasePath(), lease);
  if (!r.ok()) {
    Log(log::Level::kWarning, "cannot release the lease: " + r.status().message());
    return;
  }
  lease_ = *r;
  Log(log::Level::kInfo, "released the lease");
}

}  // namespace lockstep::kube

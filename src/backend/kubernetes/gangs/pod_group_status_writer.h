// Writes PodGroups' status (pod_group_status.h) through the status subresource, off the
// scheduler's threads: a burst of pod events becomes one merge patch per PodGroup, at most one
// per `interval`, and only when the status changed. A failing write is logged and tried again.
//
//   PodGroupStatusWriter writer(client, [&](const std::string& key) { return ...; }, {});
//   writer.Start();
//   writer.MarkDirty("research/llm");   // from any thread, cheap
//   writer.Stop();
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "common/clock.h"
#include "backend/kubernetes/client/kube_client.h"

namespace lockstep::kube {

// What to write for one PodGroup.
struct PodGroupStatusPatch {
  std::string
      path;  // the PodGroup's, e.g. /apis/scheduling.x-k8s.io/v1alpha1/namespaces/N/podgroups/G
  std::string uid;  // the PodGroup's metadata.uid: a recreated one is written afresh
  nlohmann::json status;
};

struct PodGroupStatusWriterOptions {
  // A PodGroup marked dirty is written this long later, so the rest of a burst joins it.
  std::chrono::milliseconds delay{100};
  // ...and no sooner than this after its previous write.
  std::chrono::milliseconds interval{1000};
  // What "due" is measured by (waits stay real time); must outlive the writer.
  lockstep::Clock* clock = &SystemClock();
};

// Owns its thread. `compute` runs on it, without the writer's lock held, and returns the status
// to write for a PodGroup key ("<namespace>/<name>"), or nullopt when there is nothing to write
// (gone, or unchanged). The client is not owned and must outlive the writer. Thread-safe.
class PodGroupStatusWriter {
 public:
  using Compute = std::function<std::optional<PodGroupStatusPatch>(const std::string& key)>;

  PodGroupStatusWriter(KubeClient* client, Compute compute, PodGroupStatusWriterOptions options);
  ~PodGroupStatusWriter();  // Stop()s
  PodGroupStatusWriter(const PodGroupStatusWriter&) = delete;
  PodGroupStatusWriter& operator=(const PodGroupStatusWriter&) = delete;

  void Start();
  // Prompt; idempotent. Pending writes are dropped (a restarted scheduler writes them again).
  void Stop();
  void MarkDirty(const std::string& key);
  // The PodGroup was deleted: forget what was written to it.
  void Forget(const std::string& key);
  // Status patches that the apiserver accepted.
  std::int64_t writes() const;
  // A barrier instead of a sleep: waits until nothing is due and no write is under way, every
  // PodGroup marked so far written or found unchanged. A key is due `delay` after its mark, and
  // no sooner than `interval` after its last write, by the injected clock: with a ManualClock the
  // test advances it. False when `timeout` passes first.
  bool SettleForTest(std::chrono::milliseconds timeout);
  // Runs before each patch, without locks held (set before Start()).
  void SetBeforeWriteForTest(std::function<void(const std::string& key)> hook) {
    before_write_for_test_ = std::move(hook);
  }

 private:
  void Run();
  void Write(const std::string& key);

  KubeClient* const client_;
  const Compute compute_;
  const PodGroupStatusWriterOptions options_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;                // guarded by mu_
  bool writing_ = false;             // guarded by mu_: keys taken from due_ are being written
  std::condition_variable settled_;  // due_ empty and !writing_
  using Clock = std::chrono::steady_clock;
  std::map<std::string, Clock::time_point> due_;         // guarded by mu_: dirty keys
  std::map<std::string, Clock::time_point> last_write_;  // guarded by mu_
  std::int64_t writes_ = 0;                              // guarded by mu_
  // guarded by mu_: what was last written per key, against a lagging informer cache.
  std::map<std::string, PodGroupStatusPatch> written_;
  std::function<void(const std::string&)> before_write_for_test_;
  std::thread thread_;
};

}  // namespace lockstep::kube

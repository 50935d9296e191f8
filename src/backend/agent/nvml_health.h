// GPU health checks through NVML (docs/health.md, "GPU checks"): the library is loaded with
// dlopen by its soname, libnvidia-ml.so.1, so an operator or a test may put another first with
// LD_LIBRARY_PATH. The checks observe; lockstepd classifies what they report.
//
// Thread-safety: CheckRound and Inventory may run on one thread while WaitXids blocks on
// another (NVML is thread-safe); each method on one thread at a time.
// Ownership: Open returns the only owner; the library is unloaded when it goes.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "backend/health.h"

namespace lockstep::agent {

class NvmlHealth {
 public:
  // The library loaded and initialised with every GPU registered for XID events; nullptr when
  // there is no NVML on this host (no driver: no GPU checks, not an error).
  static std::unique_ptr<NvmlHealth> Open();
  ~NvmlHealth();
  NvmlHealth(const NvmlHealth&) = delete;
  NvmlHealth& operator=(const NvmlHealth&) = delete;

  // Every GPU NVML sees now: index, UUID and serial.
  std::vector<backend::GpuIdentity> Inventory();
  // The conditions of every GPU now: volatile double-bit ECC errors, remapped rows pending or
  // failed, retired pages pending, a recovery action other than none, and fewer GPUs than
  // `configured` (a GPU fallen off the bus; 0: not checked).
  std::vector<backend::HealthFinding> CheckRound(int configured);
  bool SupportsXids() const { return event_set_ != nullptr; }
  // The XIDs that come within `wait` (after the first, only those already queued).
  std::vector<backend::HealthFinding> WaitXids(std::chrono::milliseconds wait);

  struct Api;  // NVML's entry points, resolved by name

 private:
  NvmlHealth() = default;
  // The device index of `device` (NVML's handle), -1 when it has none.
  int IndexOf(void* device);
  std::unique_ptr<Api> api_;
  void* event_set_ = nullptr;
};

}  // namespace lockstep::agent

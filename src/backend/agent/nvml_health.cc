#include "backend/agent/nvml_health.h"

#include <dlfcn.h>

#include <string>

#include "common/log.h"

namespace lockstep::agent {
namespace {

// NVML's C types, as nvml.h declares them (nvml.h is not needed to build).
using Device = void*;
using EventSet = void*;
struct FieldValue {
  unsigned int field_id;
  unsigned int scope_id;
  long long timestamp;
  long long latency_usec;
  int value_type;
  int nvml_return;
  union {
    double d;
    unsigned int ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    int si;
  } value;
};
struct EventData {
  Device device;
  unsigned long long event_type;
  unsigned long long event_data;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

constexpr int kSuccess = 0;
constexpr int kMemoryErrorUncorrected = 1;  // nvmlMemoryErrorType_t
constexpr int kVolatileEcc = 0;             // nvmlEccCounterType_t
constexpr unsigned long long kXidCriticalError = 0x8ULL;
constexpr unsigned int kRecoveryActionField = 230;  // NVML_FI_DEV_GET_GPU_RECOVERY_ACTION
constexpr unsigned int kMaxGpus = 64;

template <typename F>
bool Resolve(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(::dlsym(lib, name));
  return out != nullptr;
}

}  // namespace

struct NvmlHealth::Api {
  void* lib = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*count)(unsigned int*) = nullptr;
  int (*handle)(unsigned int, Device*) = nullptr;
  int (*index)(Device, unsigned int*) = nullptr;
  int (*uuid)(Device, char*, unsigned int) = nullptr;
  int (*serial)(Device, char*, unsigned int) = nullptr;
  int (*ecc)(Device, int, int, unsigned long long*) = nullptr;
  int (*remapped)(Device, unsigned int*, unsigned int*, unsigned int*, unsigned int*) = nullptr;
  int (*retired_pending)(Device, int*) = nullptr;
  int (*fields)(Device, int, FieldValue*) = nullptr;
  int (*set_create)(EventSet*) = nullptr;
  int (*set_free)(EventSet) = nullptr;
  int (*register_events)(Device, unsigned long long, EventSet) = nullptr;
  int (*wait)(EventSet, EventData*, unsigned int) = nullptr;
};

std::unique_ptr<NvmlHealth> NvmlHealth::Open() {
  void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return nullptr;
  auto api = std::make_unique<Api>();
  api->lib = lib;
  const bool core = Resolve(lib, "nvmlInit_v2", api->init) &&
                    Resolve(lib, "nvmlShutdown", api->shutdown) &&
                    Resolve(lib, "nvmlDeviceGetCount_v2", api->count) &&
                    Resolve(lib, "nvmlDeviceGetHandleByIndex_v2", api->handle) &&
                    Resolve(lib, "nvmlDeviceGetUUID", api->uuid);
  if (!core || api->init() != kSuccess) {
    log::Warning("NVML: libnvidia-ml.so.1 loaded but not usable: no GPU health checks");
    ::dlclose(lib);
    return nullptr;
  }
  // Optional entry points: an older driver lacks some; their checks are skipped.
  Resolve(lib, "nvmlDeviceGetIndex", api->index);
  Resolve(lib, "nvmlDeviceGetSerial", api->serial);
  Resolve(lib, "nvmlDeviceGetTotalEccErrors", api->ecc);
  Resolve(lib, "nvmlDeviceGetRemappedRows", api->remapped);
  Resolve(lib, "nvmlDeviceGetRetiredPagesPendingStatus", api->retired_pending);
  Resolve(lib, "nvmlDeviceGetFieldValues", api->fields);
  Resolve(lib, "nvmlEventSetCreate", api->set_create);
  Resolve(lib, "nvmlEventSetFree", api->set_free);
  Resolve(lib, "nvmlDeviceRegisterEvents", api->register_events);
  Resolve(lib, "nvmlEventSetWait_v2", api->wait);
  std::unique_ptr<NvmlHealth> h(new NvmlHealth);
  h->api_ = std::move(api);
  Api& a = *h->api_;
  if (a.set_create && a.register_events && a.wait && a.set_create(&h->event_set_) == kSuccess) {
    unsigned int n = 0;
    if (a.count(&n) == kSuccess)
      for (unsigned int i = 0; i < n && i < kMaxGpus; ++i) {
        Device d = nullptr;
        if (a.handle(i, &d) == kSuccess &&
            a.register_events(d, kXidCriticalError, h->event_set_) != kSuccess)
          log::Warning("NVML: GPU {}: XID events cannot be registered", i);
      }
  }
  return h;
}

NvmlHealth::~NvmlHealth() {
  if (!api_) return;
  if (event_set_ && api_->set_free) api_->set_free(event_set_);
  api_->shutdown();
  ::dlclose(api_->lib);
}

int NvmlHealth::IndexOf(void* device) {
  unsigned int i = 0;
  if (api_->index && api_->index(device, &i) == kSuccess) return static_cast<int>(i);
  unsigned int n = 0;
  if (api_->count(&n) != kSuccess) return -1;
  for (unsigned int k = 0; k < n && k < kMaxGpus; ++k) {
    Device d = nullptr;
    if (api_->handle(k, &d) == kSuccess && d == device) return static_cast<int>(k);
  }
  return -1;
}

std::vector<backend::GpuIdentity> NvmlHealth::Inventory() {
  std::vector<backend::GpuIdentity> gpus;
  unsigned int n = 0;
  if (api_->count(&n) != kSuccess) return gpus;
  for (unsigned int i = 0; i < n && i < kMaxGpus; ++i) {
    Device d = nullptr;
    if (api_->handle(i, &d) != kSuccess) continue;
    char uuid[96] = {}, serial[64] = {};
    api_->uuid(d, uuid, sizeof uuid);
    if (api_->serial) api_->serial(d, serial, sizeof serial);
    gpus.push_back({static_cast<std::int32_t>(i), uuid, serial});
  }
  return gpus;
}

std::vector<backend::HealthFinding> NvmlHealth::CheckRound(int configured) {
  std::vector<backend::HealthFinding> found;
  unsigned int n = 0;
  if (api_->count(&n) != kSuccess) n = 0;
  if (configured > 0 && static_cast<int>(n) < configured)
    found.push_back({"gpu_count", -1, static_cast<std::int64_t>(n),
                     "NVML sees " + std::to_string(n) + " of " + std::to_string(configured) +
                         " GPUs"});
  for (unsigned int i = 0; i < n && i < kMaxGpus; ++i) {
    Device d = nullptr;
    if (api_->handle(i, &d) != kSuccess) continue;
    const auto gpu = static_cast<std::int32_t>(i);
    unsigned long long dbe = 0;
    if (api_->ecc && api_->ecc(d, kMemoryErrorUncorrected, kVolatileEcc, &dbe) == kSuccess &&
        dbe > 0)
      found.push_back({"ecc_dbe", gpu, static_cast<std::int64_t>(dbe), ""});
    unsigned int corrected = 0, uncorrected = 0, pending = 0, failure = 0;
    if (api_->remapped &&
        api_->remapped(d, &corrected, &uncorrected, &pending, &failure) == kSuccess) {
      if (failure) found.push_back({"remap_failed", gpu, uncorrected, ""});
      if (pending) found.push_back({"remap_pending", gpu, uncorrected, ""});
    }
    int retired = 0;
    if (api_->retired_pending && api_->retired_pending(d, &retired) == kSuccess && retired)
      found.push_back({"retired_pages_pending", gpu, 1, ""});
    FieldValue field{};
    field.field_id = kRecoveryActionField;
    if (api_->fields && api_->fields(d, 1, &field) == kSuccess && field.nvml_return == kSuccess &&
        field.value.ui != 0)
      found.push_back({"recovery_action", gpu, field.value.ui, ""});
  }
  return found;
}

std::vector<backend::HealthFinding> NvmlHealth::WaitXids(std::chrono::milliseconds wait) {
  std::vector<backend::HealthFinding> xids;
  if (!event_set_) return xids;
  EventData data{};
  auto ms = static_cast<unsigned int>(wait.count());
  // After the first event, only those already queued: the report goes out at once.
  while (api_->wait(event_set_, &data, ms) == kSuccess) {
    if (data.event_type & kXidCriticalError)
      xids.push_back({"xid", IndexOf(data.device), static_cast<std::int64_t>(data.event_data), ""});
    ms = 0;
  }
  return xids;
}

}  // namespace lockstep::agent

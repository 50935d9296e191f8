// A fake of NVIDIA's management library for the tests: built as libnvidia-ml.so.1 with NVML's
// function names and C signatures, so that lockstep-agent loads it through LD_LIBRARY_PATH as it
// would load the driver's. Its state is a JSON file named by $LOCKSTEP_FAKE_NVML, read again on
// every call, so a test changes what the "GPUs" report by rewriting the file (atomically, with a
// rename):
//
//   {"gpus": [{"uuid": "GPU-0", "serial": "1650000000000", "name": "NVIDIA H100 80GB HBM3",
//              "present": true, "ecc_dbe": 0, "remap_pending": false, "remap_failed": false,
//              "retired_pending": false, "recovery_action": 0}, ...],
//    "xids": [{"gpu": 3, "xid": 79}, ...]}
//
// A GPU with "mig": [{"uuid": "MIG-...", "profile": "1g.10gb"}, ...] is in MIG mode with those MIG
// devices, in NVML's order; their handles answer nvmlDeviceGetUUID and nvmlDeviceGetName
// ("<the GPU's name> MIG 1g.10gb").
//
// A GPU with "present": false has fallen off the bus: it is not counted. "xids" only grows: each
// entry is delivered once per process, to the event sets that registered its GPU.
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kSuccess = 0;
constexpr int kUninitialized = 1;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
constexpr int kNotFound = 6;
constexpr int kInsufficientSize = 7;
constexpr int kTimeout = 10;
constexpr unsigned long long kXidCriticalError = 0x8ULL;  // nvmlEventTypeXidCriticalError
constexpr unsigned int kRecoveryActionField = 230;        // NVML_FI_DEV_GET_GPU_RECOVERY_ACTION

// The driver blocks in the kernel until an event comes; the fake blocks until its state file is
// replaced (the tests write it by rename), watched with inotify from the set's creation on, so a
// change between reading the file and waiting is not missed.
struct EventSet {
  std::set<int> gpus;  // physical indexes registered
  int watch_fd = -1;   // inotify on the state file's directory, or -1 without a state file
  ~EventSet() {
    if (watch_fd >= 0) close(watch_fd);
  }
};

// An inotify descriptor told of files renamed into, or written in, $LOCKSTEP_FAKE_NVML's
// directory; -1 when there is no state file to watch.
int WatchStateFile() {
  const char* path = std::getenv("LOCKSTEP_FAKE_NVML");
  if (!path) return -1;
  std::string dir = path;
  const std::size_t slash = dir.rfind('/');
  dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : dir.substr(0, slash));
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return -1;
  if (inotify_add_watch(fd, dir.c_str(), IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Waits until the state file's directory changes or `ms` pass (only the latter without a watch:
// a driver with no events blocks for its whole timeout).
void WaitForChange(int watch_fd, int ms) {
  pollfd p{watch_fd, POLLIN, 0};
  if (poll(&p, watch_fd >= 0 ? 1 : 0, ms) <= 0) return;
  char buf[4096];
  while (read(watch_fd, buf, sizeof buf) > 0) {
  }
}

struct State {
  std::mutex mu;
  bool initialized = false;
  std::size_t xids_delivered = 0;
};

State& Global() {
  static State s;
  return s;
}

nlohmann::json Read() {
  const char* path = std::getenv("LOCKSTEP_FAKE_NVML");
  if (!path) return nlohmann::json::object();
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

// The physical indexes of the GPUs on the bus.
std::vector<int> Present(const nlohmann::json& state) {
  std::vector<int> out;
  const nlohmann::json gpus = state.value("gpus", nlohmann::json::array());
  for (std::size_t i = 0; i < gpus.size(); ++i)
    if (gpus[i].value("present", true)) out.push_back(static_cast<int>(i));
  return out;
}

// A device handle is its physical index + 1 (never null); a MIG device's has its position + 1
// in the bits above.
int IndexOf(void* device) {
  return static_cast<int>(reinterpret_cast<std::uintptr_t>(device) & 0xff) - 1;
}
int MigOf(void* device) {
  return static_cast<int>(reinterpret_cast<std::uintptr_t>(device) >> 8) - 1;
}
void* MigHandle(int gpu, int mig) {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>((gpu + 1) | ((mig + 1) << 8)));
}

nlohmann::json Gpu(void* device) {
  const nlohmann::json state = Read();
  const nlohmann::json gpus = state.value("gpus", nlohmann::json::array());
  const int i = IndexOf(device);
  if (i < 0 || static_cast<std::size_t>(i) >= gpus.size()) return nlohmann::json();
  return gpus[i];
}

// The MIG devices of the GPU of `device`.
nlohmann::json MigsOf(void* device) {
  const nlohmann::json g = Gpu(device);
  return g.is_object() ? g.value("mig", nlohmann::json::array()) : nlohmann::json::array();
}

int CopyString(const std::string& s, char* out, unsigned int length) {
  if (!out) return kInvalidArgument;
  if (s.size() + 1 > length) return kInsufficientSize;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return kSuccess;
}

}  // namespace

extern "C" {

struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  int nvmlReturn;
  union {
    double dVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    long long sllVal;
    int siVal;
  } value;
};

struct nvmlEventData_t {
  void* device;
  unsigned long long eventType;
  unsigned long long eventData;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

int nvmlInit_v2() {
  std::lock_guard<std::mutex> lock(Global().mu);
  Global().initialized = true;
  return kSuccess;
}

int nvmlShutdown() {
  return kSuccess;
}

int nvmlDeviceGetCount_v2(unsigned int* count) {
  if (!count) return kInvalidArgument;
  *count = static_cast<unsigned int>(Present(Read()).size());
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  if (!device) return kInvalidArgument;
  const std::vector<int> present = Present(Read());
  if (index >= present.size()) return kInvalidArgument;
  *device = reinterpret_cast<void*>(static_cast<std::uintptr_t>(present[index] + 1));
  return kSuccess;
}

int nvmlDeviceGetIndex(void* device, unsigned int* index) {
  if (!index) return kInvalidArgument;
  const std::vector<int> present = Present(Read());
  for (std::size_t i = 0; i < present.size(); ++i)
    if (present[i] == IndexOf(device)) {
      *index = static_cast<unsigned int>(i);
      return kSuccess;
    }
  return kInvalidArgument;
}

int nvmlDeviceGetUUID(void* device, char* uuid, unsigned int length) {
  const nlohmann::json g = Gpu(device);
  if (!g.is_object()) return kInvalidArgument;
  if (const int m = MigOf(device); m >= 0) {
    const nlohmann::json migs = MigsOf(device);
    if (static_cast<std::size_t>(m) >= migs.size()) return kInvalidArgument;
    return CopyString(migs[m].value("uuid", ""), uuid, length);
  }
  return CopyString(g.value("uuid", ""), uuid, length);
}

int nvmlDeviceGetName(void* device, char* name, unsigned int length) {
  const nlohmann::json g = Gpu(device);
  if (!g.is_object()) return kInvalidArgument;
  std::string text = g.value("name", "NVIDIA H100 80GB HBM3");
  if (const int m = MigOf(device); m >= 0) {
    const nlohmann::json migs = MigsOf(device);
    if (static_cast<std::size_t>(m) >= migs.size()) return kInvalidArgument;
    text += " MIG " + migs[m].value("profile", "");
  }
  return CopyString(text, name, length);
}

// nvmlEnableState_t: 1 enabled.
int nvmlDeviceGetMigMode(void* device, unsigned int* current, unsigned int* pending) {
  if (!Gpu(device).is_object() || !current || !pending) return kInvalidArgument;
  *current = *pending = MigsOf(device).empty() ? 0 : 1;
  return kSuccess;
}

int nvmlDeviceGetMaxMigDeviceCount(void* device, unsigned int* count) {
  if (!Gpu(device).is_object() || !count) return kInvalidArgument;
  *count = static_cast<unsigned int>(MigsOf(device).size());
  return kSuccess;
}

int nvmlDeviceGetMigDeviceHandleByIndex(void* device, unsigned int index, void** mig) {
  if (!Gpu(device).is_object() || !mig || MigOf(device) >= 0) return kInvalidArgument;
  if (index >= MigsOf(device).size()) return kNotFound;
  *mig = MigHandle(IndexOf(device), static_cast<int>(index));
  return kSuccess;
}

int nvmlDeviceGetSerial(void* device, char* serial, unsigned int length) {
  const nlohmann::json g = Gpu(device);
  if (!g.is_object()) return kInvalidArgument;
  return CopyString(g.value("serial", ""), serial, length);
}

// errorType 1: uncorrected (double-bit); counterType 0: volatile.
int nvmlDeviceGetTotalEccErrors(void* device, int error_type, int counter_type,
                                unsigned long long* count) {
  const nlohmann::json g = Gpu(device);
  if (!g.is_object() || !count) return kInvalidArgument;
  *count = error_type == 1 && counter_type == 0 ? g.value("ecc_dbe", 0ULL) : 0ULL;
  return kSuccess;
}

int nvmlDeviceGetRemappedRows(void* device, unsigned int* corrected, unsigned int* uncorrected,
                              unsigned int* pending, unsigned int* failure) {
  const nlohmann::json g = Gpu(device);
  if (!g.is_object() || !corrected || !uncorrected || !pending || !failure)
    return kInvalidArgument;
  *corrected = 0;
  *uncorrected = g.value("remap_pending", false) || g.value("remap_failed", false) ? 1 : 0;
  *pending = g.value("remap_pending", false) ? 1 : 0;
  *failure = g.value("remap_failed", false) ? 1 : 0;
  return kSuccess;
}

// nvmlEnableState_t: 1 enabled.
int nvmlDeviceGetRetiredPagesPendingStatus(void* device, int* pending) {
  const nlohmann::json g = Gpu(device);
  if (!g.is_object() || !pending) return kInvalidArgument;
  *pending = g.value("retired_pending", false) ? 1 : 0;
  return kSuccess;
}

int nvmlDeviceGetFieldValues(void* device, int count, nvmlFieldValue_t* values) {
  const nlohmann::json g = Gpu(device);
  if (!g.is_object() || !values || count < 0) return kInvalidArgument;
  for (int i = 0; i < count; ++i) {
    if (values[i].fieldId != kRecoveryActionField) {
      values[i].nvmlReturn = kNotSupported;
      continue;
    }
    values[i].nvmlReturn = kSuccess;
    values[i].valueType = 1;  // NVML_VALUE_TYPE_UNSIGNED_INT
    values[i].value.uiVal = g.value("recovery_action", 0U);
  }
  return kSuccess;
}

int nvmlEventSetCreate(void** set) {
  if (!set) return kInvalidArgument;
  auto* events = new EventSet;
  events->watch_fd = WatchStateFile();
  *set = events;
  return kSuccess;
}

int nvmlDeviceRegisterEvents(void* device, unsigned long long types, void* set) {
  if (!set) return kInvalidArgument;
  if (types & kXidCriticalError) static_cast<EventSet*>(set)->gpus.insert(IndexOf(device));
  return kSuccess;
}

int nvmlEventSetFree(void* set) {
  delete static_cast<EventSet*>(set);
  return kSuccess;
}

// Waits up to `timeout_ms` for an XID not yet delivered on a GPU of the set.
int nvmlEventSetWait_v2(void* set, nvmlEventData_t* data, unsigned int timeout_ms) {
  if (!set || !data) return kInvalidArgument;
  if (!Global().initialized) return kUninitialized;
  auto* events = static_cast<EventSet*>(set);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const nlohmann::json xids = Read().value("xids", nlohmann::json::array());
    {
      std::lock_guard<std::mutex> lock(Global().mu);
      while (Global().xids_delivered < xids.size()) {
        const nlohmann::json& x = xids[Global().xids_delivered++];
        const int gpu = x.value("gpu", 0);
        if (!events->gpus.count(gpu)) continue;
        data->device = reinterpret_cast<void*>(static_cast<std::uintptr_t>(gpu + 1));
        data->eventType = kXidCriticalError;
        data->eventData = x.value("xid", 0ULL);
        data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFFu;
        return kSuccess;
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return kTimeout;
    WaitForChange(events->watch_fd, static_cast<int>(left.count()));
  }
}

const char* nvmlErrorString(int result) {
  return result == kSuccess ? "Success" : "fake NVML error";
}

}  // extern "C"

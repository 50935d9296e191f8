#include "backend/agent/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace lockstep::agent {
namespace {

// The few NVML entry points used, with NVML's C signatures (nvml.h is not needed to build).
using NvmlInit = int (*)();
using NvmlShutdown = int (*)();
using NvmlCount = int (*)(unsigned int*);
using NvmlHandle = int (*)(unsigned int, void**);
using NvmlString = int (*)(void*, char*, unsigned int);
using NvmlMigMode = int (*)(void*, unsigned int*, unsigned int*);
using NvmlMigCount = int (*)(void*, unsigned int*);
using NvmlMigHandle = int (*)(void*, unsigned int, void**);

// The MIG profile at the end of a MIG device's name: "NVIDIA A100-SXM4-40GB MIG 1g.5gb" ->
// "1g.5gb"; "" when the name has none.
std::string ProfileFromName(const std::string& name) {
  const std::size_t at = name.rfind("MIG ");
  return at == std::string::npos ? "" : name.substr(at + 4);
}

// The MIG devices of `dev` when it is in MIG mode (NVML from R470), else none.
std::vector<AgentNode::Gpu::Mig> MigDevices(void* lib, void* dev, NvmlString uuid,
                                             NvmlString name) {
  std::vector<AgentNode::Gpu::Mig> out;
  auto mode = reinterpret_cast<NvmlMigMode>(::dlsym(lib, "nvmlDeviceGetMigMode"));
  auto count = reinterpret_cast<NvmlMigCount>(::dlsym(lib, "nvmlDeviceGetMaxMigDeviceCount"));
  auto handle =
      reinterpret_cast<NvmlMigHandle>(::dlsym(lib, "nvmlDeviceGetMigDeviceHandleByIndex"));
  unsigned int current = 0, pending = 0, max = 0;
  if (!mode || !count || !handle || mode(dev, &current, &pending) != 0 || current != 1 ||
      count(dev, &max) != 0)
    return out;
  for (unsigned int i = 0; i < max && i < 64; ++i) {
    void* mig = nullptr;
    if (handle(dev, i, &mig) != 0) continue;  // a slot without a MIG device
    char u[96] = {}, product[128] = {};
    if (uuid(mig, u, sizeof u) != 0 || name(mig, product, sizeof product) != 0) continue;
    out.push_back({u, ProfileFromName(product)});
  }
  return out;
}

std::string TypeFromProduct(const std::string& product) {
  std::istringstream words(product);
  std::string w;
  while (words >> w) {
    std::string lower = w;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (lower == "nvidia" || lower == "tesla" || lower == "geforce") continue;
    return lower;
  }
  return "gpu";
}

}  // namespace

std::vector<AgentNode::Gpu> DetectNvidiaGpus() {
  std::vector<AgentNode::Gpu> gpus;
  void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return gpus;
  auto init = reinterpret_cast<NvmlInit>(::dlsym(lib, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<NvmlShutdown>(::dlsym(lib, "nvmlShutdown"));
  auto count = reinterpret_cast<NvmlCount>(::dlsym(lib, "nvmlDeviceGetCount_v2"));
  auto handle = reinterpret_cast<NvmlHandle>(::dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  auto uuid = reinterpret_cast<NvmlString>(::dlsym(lib, "nvmlDeviceGetUUID"));
  auto name = reinterpret_cast<NvmlString>(::dlsym(lib, "nvmlDeviceGetName"));
  auto serial = reinterpret_cast<NvmlString>(::dlsym(lib, "nvmlDeviceGetSerial"));  // optional
  unsigned int n = 0;
  if (init && shutdown && count && handle && uuid && name && init() == 0) {
    if (count(&n) == 0) {
      for (unsigned int i = 0; i < n && i < 64; ++i) {
        void* dev = nullptr;
        if (handle(i, &dev) != 0) continue;
        char u[96] = {}, product[96] = {}, sn[64] = {};
        uuid(dev, u, sizeof u);
        name(dev, product, sizeof product);
        if (serial) serial(dev, sn, sizeof sn);
        gpus.push_back(
            {static_cast<int>(i), u, TypeFromProduct(product), sn, MigDevices(lib, dev, uuid, name)});
      }
    }
    shutdown();
  }
  ::dlclose(lib);
  return gpus;
}

}  // namespace lockstep::agent

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
        gpus.push_back({static_cast<int>(i), u, TypeFromProduct(product), sn});
      }
    }
    shutdown();
  }
  ::dlclose(lib);
  return gpus;
}

}  // namespace lockstep::agent

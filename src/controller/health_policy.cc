#include "controller/health_policy.h"

#include <string>

namespace lockstep::controller {

const char* XidName(std::int64_t xid) {
  switch (xid) {
    case 13: return "graphics engine exception";
    case 31: return "GPU memory page fault";
    case 43: return "GPU stopped processing";
    case 45: return "preemptive cleanup";
    case 48: return "double-bit ECC error";
    case 61: case 62: return "internal micro-controller error";
    case 63: return "ECC page retirement or row remap recorded";
    case 64: return "row remap failure";
    case 68: return "video processor exception";
    case 74: return "NVLink error";
    case 79: return "fell off the bus";
    case 92: return "high single-bit ECC error rate";
    case 94: return "contained ECC error";
    case 95: return "uncontained ECC error";
    case 119: case 120: return "GSP error";
    case 123: return "SPI PMU RPC failure";
    case 140: return "unrecovered ECC error";
    default: return "";
  }
}

namespace {

ClassifiedFinding Xid(std::int64_t xid, const config::HealthConfig& c) {
  ClassifiedFinding out;
  out.event = true;
  const std::string name = XidName(xid);
  out.what = "XID " + std::to_string(xid) + (name.empty() ? "" : " (" + name + ")");
  if (c.xid_application.count(xid))
    out.severity = HealthSeverity::kApplication;
  else if (c.xid_critical.count(xid))
    out.severity = HealthSeverity::kCritical;
  else
    out.severity = HealthSeverity::kWarning;  // listed as a warning, or not listed at all
  return out;
}

// NVML's GPU recovery actions (nvmlDeviceGpuRecoveryAction_t).
ClassifiedFinding RecoveryAction(std::int64_t action) {
  switch (action) {
    case 1: return {HealthSeverity::kCritical, false, "recovery action: GPU reset"};
    case 2: return {HealthSeverity::kCritical, false, "recovery action: node reboot"};
    case 3: return {HealthSeverity::kWarning, false, "recovery action: drain peer-to-peer"};
    case 4: return {HealthSeverity::kCritical, false, "recovery action: drain and reset"};
    default:
      return {HealthSeverity::kWarning, false, "recovery action " + std::to_string(action)};
  }
}

}  // namespace

ClassifiedFinding Classify(const backend::HealthFinding& f, const config::HealthConfig& c) {
  using S = HealthSeverity;
  if (f.check == "xid") return Xid(f.value, c);
  if (f.check == "ecc_dbe")
    return {S::kCritical, false, std::to_string(f.value) + " volatile double-bit ECC errors"};
  if (f.check == "remap_failed") return {S::kCritical, false, "row remapping failed"};
  if (f.check == "remap_pending") return {S::kCritical, false, "row remapping pending a reset"};
  if (f.check == "retired_pages_pending")
    return {S::kCritical, false, "retired pages pending a reset"};
  if (f.check == "recovery_action") return RecoveryAction(f.value);
  // A shared file system missing or hung (detail: "storage datasets/imagenet: not mounted"):
  // a condition, so the node resumes once the mount is back.
  if (f.check == "gpu_count" || f.check == "k8s_condition" || f.check == "storage")
    return {S::kCritical, false, f.detail};
  if (f.check == "program") {
    const std::string line = f.detail.empty() ? "health program" : f.detail;
    switch (f.value) {
      case 0: return {S::kOk, false, line};
      case 1: return {S::kWarning, false, line};
      case 2: return {S::kCritical, false, line};
      default: return {S::kUnknown, false, line};
    }
  }
  return {S::kUnknown, false, f.check};
}

std::string GpuWhere(const backend::NodeHealthReport& r, std::int32_t gpu) {
  if (gpu < 0) return "";
  std::string out = "GPU " + std::to_string(gpu) + " ";
  for (const backend::GpuIdentity& g : r.gpus)
    if (g.index == gpu && !g.serial.empty()) out += "serial " + g.serial + " ";
  return out;
}

}  // namespace lockstep::controller

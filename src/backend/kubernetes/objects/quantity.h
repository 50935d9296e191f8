// Kubernetes resource quantities ("3500m", "16Gi", "1e3", "129e6") to the integers lockstep
// counts in (milli-CPUs, bytes, MiB, devices), and back for the requests of the pods lockstep
// creates. Pure functions; safe to call from any thread.
//
// The grammar is the apiserver's (k8s.io/apimachinery/pkg/api/resource):
//   quantity  = [sign] number suffix
//   number    = digits | digits "." [digits] | "." digits
//   suffix    = "" | "m" | "k" | "M" | "G" | "T" | "P" | "E"   (powers of 1000)
//             | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"          (powers of 1024)
//             | ("e" | "E") [sign] digits                        (a power of ten)
// Conversions are exact and round up to the next integer, as the apiserver's MilliValue() and
// Value() do ("0.5m" is 1 milli-CPU, "1.5" bytes are 2). Negative quantities and values that do
// not fit in 64 bits are errors: resource amounts are never negative.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace lockstep::kube {

// The quantity in thousandths of its unit, rounded up: "3500m" -> 3500, "4" -> 4000,
// "0.5" -> 500, "1e3" -> 1000000. For cpu.
Result<std::int64_t> ParseQuantityMilli(std::string_view text);

// The quantity in its unit, rounded up: "16Gi" -> 17179869184, "1G" -> 1000000000,
// "129e6" -> 129000000, "8" -> 8. For memory (bytes) and device counts.
Result<std::int64_t> ParseQuantity(std::string_view text);

// The same for a JSON value as the apiserver writes it (a string), also accepting a JSON
// integer. Errors name the value.
Result<std::int64_t> QuantityMilliFromJson(const nlohmann::json& value);
Result<std::int64_t> QuantityFromJson(const nlohmann::json& value);

// Bytes to MiB: rounded down (what a node offers) or up (what a pod uses).
inline std::int64_t BytesToMiBFloor(std::int64_t bytes) {
  return bytes / (1024 * 1024);
}
inline std::int64_t BytesToMiBCeil(std::int64_t bytes) {
  return (bytes + 1024 * 1024 - 1) / (1024 * 1024);
}

// Formatting for pod requests and limits.
// Milli-CPUs: whole CPUs as "4", anything else as "3500m". Negative values abort (a bug).
std::string FormatCpuMilli(std::int64_t milli);
// MiB as "<n>Mi": 16384 -> "16384Mi".
std::string FormatMemoryMiB(std::int64_t mib);

}  // namespace lockstep::kube

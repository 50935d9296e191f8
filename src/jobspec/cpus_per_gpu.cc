#include "jobspec/cpus_per_gpu.h"

#include <algorithm>
#include <limits>

namespace lockstep::jobspec {
namespace {

std::int64_t CeilDiv(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

std::int32_t Clamp(std::int64_t v) {
  return static_cast<std::int32_t>(
      std::min<std::int64_t>(v, std::numeric_limits<std::int32_t>::max()));
}

}  // namespace

std::optional<GpuBoundCpus> CpusForGpus(const JobSpec& spec, std::int32_t nodes,
                                        std::int32_t ntasks) {
  if (spec.cpus_per_gpu <= 0) return std::nullopt;
  const std::int64_t n = std::max(1, nodes);
  // The engine's figures (engine::ShapeOf): tasks spread evenly, rounded up.
  const std::int64_t tasks_per_node =
      spec.ntasks_per_node > 0 ? spec.ntasks_per_node : CeilDiv(std::max(1, ntasks), n);
  std::int64_t gpus = 0;
  if (spec.gpus_per_node > 0) {
    gpus = spec.gpus_per_node;
  } else if (spec.gpus_per_task > 0) {
    gpus = std::int64_t{spec.gpus_per_task} * tasks_per_node;
  } else if (spec.gpus > 0) {
    gpus = CeilDiv(spec.gpus, n);
  }
  if (gpus == 0) return std::nullopt;
  // Every task still needs a CPU: --cpus-per-task is never given with --cpus-per-gpu.
  const std::int64_t cpus = std::max(tasks_per_node, gpus * spec.cpus_per_gpu);
  return GpuBoundCpus{Clamp(gpus), Clamp(cpus)};
}

}  // namespace lockstep::jobspec

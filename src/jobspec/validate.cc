// Validate: single values first, then the products the engine forms from them (engine/request.cc
// ShapeOf and the controller's RequestOf), computed here the same way in checked arithmetic.
#include "jobspec/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

#include "common/utf8.h"
#include "jobspec/container_mounts.h"

namespace lockstep::jobspec {
namespace {

Status Invalid(std::string message) {
  return InvalidArgument(std::move(message));
}

// a * b, or nothing when it does not fit an int64 or is above max. a and b are non-negative.
std::optional<std::int64_t> ProductAtMost(std::int64_t a, std::int64_t b, std::int64_t max) {
  std::int64_t p = 0;
  if (__builtin_mul_overflow(a, b, &p) || p > max) return std::nullopt;
  return p;
}

Status CheckCount(std::string_view option, std::int64_t value) {
  if (value < 0) return Invalid(fmt::format("{}={}: must not be negative", option, value));
  if (value > kMaxResourceCount) {
    return Invalid(fmt::format("{}={}: above the maximum {}", option, value, kMaxResourceCount));
  }
  return Status::Ok();
}

Status CheckMemory(std::string_view option, std::int64_t mb) {
  if (mb < 0) return Invalid(fmt::format("{}={}M: must not be negative", option, mb));
  if (mb > kMaxMemoryMb) {
    return Invalid(fmt::format("{}={}M: above the maximum {}M", option, mb, kMaxMemoryMb));
  }
  return Status::Ok();
}

Status CheckDuration(std::string_view option, Seconds s, bool unlimited_allowed) {
  if (s < 0) return Invalid(fmt::format("{}: {} seconds is negative", option, s));
  if (s > kMaxTimeLimit && !(unlimited_allowed && s == kUnlimited)) {
    return Invalid(fmt::format("{}: {} seconds is above the maximum {} ({} minutes)", option, s,
                               kMaxTimeLimit, kMaxTimeLimit / 60));
  }
  return Status::Ok();
}

Status CheckSingleValues(const JobSpec& s) {
  LOCKSTEP_RETURN_IF_ERROR(CheckCount("--nodes", s.min_nodes));
  LOCKSTEP_RETURN_IF_ERROR(CheckCount("--nodes (maximum)", s.max_nodes));
  if (s.max_nodes > 0 && s.max_nodes < s.min_nodes) {
    return Invalid(
        fmt::format("--nodes={}-{}: the minimum is above the maximum", s.min_nodes, s.max_nodes));
  }
  LOCKSTEP_RETURN_IF_ERROR(CheckCount("--ntasks", s.ntasks));
  LOCKSTEP_RETURN_IF_ERROR(CheckCount("--ntasks-per-node", s.ntasks_per_node));
  LOCKSTEP_RETURN_IF_ERROR(CheckCount("--cpus-per-task", s.cpus_per_task));
  LOCKSTEP_RETURN_IF_ERROR(CheckCount("--cpus-per-gpu", s.cpus_per_gpu));
  LOCKSTEP_RETURN_IF_ERROR(CheckCount("--gpus", s.gpus));
  LOCKSTEP_RETURN_IF_ERROR(CheckCount("--gpus-per-node", s.gpus_per_node));
  LOCKSTEP_RETURN_IF_ERROR(CheckCount("--gpus-per-task", s.gpus_per_task));
  LOCKSTEP_RETURN_IF_ERROR(CheckCount("--switches", s.max_switches));
  LOCKSTEP_RETURN_IF_ERROR(CheckMemory("--mem", s.mem_mb));
  if (s.mem_whole_node && (s.mem_mb != 0 || s.mem_per_cpu_mb != 0 || s.mem_per_gpu_mb != 0))
    return Invalid("--mem=0 (all of each node's memory) with another memory size");
  LOCKSTEP_RETURN_IF_ERROR(CheckMemory("--mem-per-cpu", s.mem_per_cpu_mb));
  LOCKSTEP_RETURN_IF_ERROR(CheckMemory("--mem-per-gpu", s.mem_per_gpu_mb));
  LOCKSTEP_RETURN_IF_ERROR(CheckDuration("--time", s.time_limit, /*unlimited_allowed=*/true));
  LOCKSTEP_RETURN_IF_ERROR(CheckDuration("--switches (wait)", s.switches_wait, false));
  if (s.signal_number < 0 || s.signal_number > 64 || s.signal_time < 0 ||
      s.signal_time > 65535) {
    return Invalid(fmt::format("--signal: signal {} at {} s is out of range (1-64, 0-65535 s)",
                               s.signal_number, s.signal_time));
  }
  if (s.begin_time < 0 || s.begin_time > kInfiniteTime) {
    return Invalid(fmt::format("--begin: {} is not a time", s.begin_time));
  }
  return Status::Ok();
}

Status CheckNice(const JobSpec& s, const Limits& limits) {
  if (s.nice < -kMaxNice || s.nice > kMaxNice) {
    return Invalid(fmt::format("--nice={}: invalid nice value, must be between -{} and {}", s.nice,
                               kMaxNice, kMaxNice));
  }
  if (s.nice < 0 && !limits.caller_is_operator) {
    return PermissionDenied(
        fmt::format("--nice={}: only an operator may give a negative nice", s.nice));
  }
  return Status::Ok();
}

Status CheckArray(const JobSpec& s) {
  if (!s.array) return Status::Ok();
  const std::vector<std::uint32_t>& idx = s.array->indices;
  const std::string text = s.array->text.empty() ? std::string("(no text)") : s.array->text;
  if (idx.empty()) {
    return Invalid(fmt::format("--array={}: invalid job array specification: no index", text));
  }
  if (idx.size() > kMaxArrayTasks) {
    return Invalid(fmt::format(
        "--array={}: invalid job array specification: {} tasks, more than the maximum {}", text,
        idx.size(), kMaxArrayTasks));
  }
  for (std::size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] > kMaxArrayIndex) {
      return Invalid(fmt::format(
          "--array={}: invalid job array specification: index {} is above the maximum {}", text,
          idx[i], kMaxArrayIndex));
    }
    if (i > 0 && idx[i] <= idx[i - 1]) {
      return Invalid(fmt::format(
          "--array={}: invalid job array specification: indices must be ascending and unique",
          text));
    }
  }
  return Status::Ok();
}

Status CheckDependencies(const JobSpec& s) {
  for (const DependencySpec& d : s.dependencies) {
    if (d.type != DependencyType::kSingleton && d.job == 0) {
      return Invalid("--dependency: job dependency problem: job id 0 is not a job");
    }
    if (d.delay_minutes < 0 || (d.delay_minutes > 0 && d.type != DependencyType::kAfter)) {
      return Invalid(fmt::format(
          "--dependency: job dependency problem: a delay of {} minutes (only 'after' takes one, "
          "of 0 or more)",
          d.delay_minutes));
    }
    if (d.type == DependencyType::kAfterCorr && d.has_task) {
      return Invalid("--dependency: job dependency problem: aftercorr names a whole array");
    }
    if (d.has_task && d.array_task > kMaxArrayIndex) {
      return Invalid(
          fmt::format("--dependency: job dependency problem: array task {} is above the maximum {}",
                      d.array_task, kMaxArrayIndex));
    }
  }
  return Status::Ok();
}

// The sizes the engine derives from the options (engine::ShapeOf over the controller's
// RequestOf), each checked as it is formed.
struct DerivedSizes {
  std::int64_t nodes_min = 1;
  std::int64_t nodes_max = 1;
  std::int64_t tasks = 1;           // of the job
  std::int64_t tasks_per_node = 1;  // the engine's per-node figure
  std::int64_t cpus_per_node = 1;
  std::int64_t gpus_per_node = 0;
};

std::string Opt(std::string_view name, std::int64_t value) {
  return fmt::format("{}={}", name, value);
}

// "<what> more than <max>" ("--mem-per-cpu=... with 8 CPUs on a node asks for more than ...M").
// Their syntax only: whether each source lies on a declared file system is the controller's
// check (it knows the cluster's storage).
Status CheckContainerMounts(const JobSpec& s) {
  Result<std::vector<ContainerMount>> mounts = ParseContainerMounts(s.container_mounts);
  if (!mounts.ok()) return Invalid("--container-mounts: " + mounts.status().message());
  return Status::Ok();
}

Status TooMuchMemory(const std::string& what) {
  return Invalid(fmt::format("{} asks for more than {}M", what, kMaxMemoryMb));
}

Result<DerivedSizes> DeriveTasks(const JobSpec& s) {
  DerivedSizes d;
  d.nodes_min = std::max<std::int64_t>(1, s.min_nodes);
  d.nodes_max = std::max<std::int64_t>(d.nodes_min, s.max_nodes);
  if (s.ntasks > 0) {
    d.tasks = s.ntasks;
  } else {
    const std::int64_t per_node = std::max<std::int64_t>(1, s.ntasks_per_node);
    if (!ProductAtMost(d.nodes_max, per_node, kMaxResourceCount)) {
      return Invalid(fmt::format("{} with {} asks for {} tasks, more than {}",
                                 Opt("--nodes", d.nodes_max), Opt("--ntasks-per-node", per_node),
                                 d.nodes_max * per_node, kMaxResourceCount));
    }
    d.tasks = d.nodes_min * per_node;
  }
  // engine::ShapeOf rounds tasks per node up as (tasks + nodes - 1) / nodes in int32: that sum
  // must fit as well.
  if (s.ntasks_per_node == 0 && d.tasks + d.nodes_min - 1 > kMaxResourceCount) {
    return Invalid(fmt::format("{} with {} asks for more than {} tasks and nodes together",
                               Opt("--ntasks", d.tasks), Opt("--nodes", d.nodes_min),
                               kMaxResourceCount));
  }
  d.tasks_per_node =
      s.ntasks_per_node > 0 ? s.ntasks_per_node : (d.tasks + d.nodes_min - 1) / d.nodes_min;
  return d;
}

// Counts are at most 2^31 - 1 here (CheckSingleValues), so a product of two fits an int64 and
// can be printed; only its bound is checked.
Status CheckCpus(const JobSpec& s, DerivedSizes& d) {
  const std::int64_t cpt = std::max<std::int64_t>(1, s.cpus_per_task);
  const std::string per_task = Opt("--cpus-per-task", cpt);
  if (!ProductAtMost(d.tasks, cpt, kMaxResourceCount)) {
    return Invalid(fmt::format("{} with {} asks for {} CPUs, more than {}",
                               Opt("--ntasks", d.tasks), per_task, d.tasks * cpt,
                               kMaxResourceCount));
  }
  std::optional<std::int64_t> node = ProductAtMost(d.tasks_per_node, cpt, kMaxResourceCount);
  if (!node) {
    return Invalid(fmt::format("{} with {} asks for {} CPUs on a node, more than {}",
                               Opt("--ntasks-per-node", d.tasks_per_node), per_task,
                               d.tasks_per_node * cpt, kMaxResourceCount));
  }
  d.cpus_per_node = *node;
  return Status::Ok();
}

Status CheckGpus(const JobSpec& s, DerivedSizes& d) {
  if (s.gpus_per_task > 0) {
    const std::string per_task = Opt("--gpus-per-task", s.gpus_per_task);
    if (!ProductAtMost(d.tasks, s.gpus_per_task, kMaxResourceCount)) {
      return Invalid(fmt::format("{} with {} asks for {} GPUs, more than {}", per_task,
                                 Opt("--ntasks", d.tasks), d.tasks * s.gpus_per_task,
                                 kMaxResourceCount));
    }
    std::optional<std::int64_t> node =
        ProductAtMost(d.tasks_per_node, s.gpus_per_task, kMaxResourceCount);
    if (!node) {
      return Invalid(fmt::format("{} with {} asks for {} GPUs on a node, more than {}", per_task,
                                 Opt("--ntasks-per-node", d.tasks_per_node),
                                 d.tasks_per_node * s.gpus_per_task, kMaxResourceCount));
    }
    if (s.gpus_per_node == 0) d.gpus_per_node = *node;
  }
  if (s.gpus_per_node > 0) {
    if (!ProductAtMost(s.gpus_per_node, d.nodes_max, kMaxResourceCount)) {
      return Invalid(fmt::format(
          "{} with {} asks for {} GPUs, more than {}", Opt("--gpus-per-node", s.gpus_per_node),
          Opt("--nodes", d.nodes_max), s.gpus_per_node * d.nodes_max, kMaxResourceCount));
    }
    d.gpus_per_node = s.gpus_per_node;
  } else if (s.gpus > 0 && s.gpus_per_task == 0) {
    // Rounded up per node as the engine does, in int32: (gpus + nodes - 1) / nodes.
    if (s.gpus + d.nodes_min - 1 > kMaxResourceCount) {
      return Invalid(fmt::format("{} with {} asks for more than {} GPUs and nodes together",
                                 Opt("--gpus", s.gpus), Opt("--nodes", d.nodes_min),
                                 kMaxResourceCount));
    }
    d.gpus_per_node = (s.gpus + d.nodes_min - 1) / d.nodes_min;
  }
  return Status::Ok();
}

// --cpus-per-gpu times a node's GPUs is the node's CPU count (cpus_per_gpu.h).
Status CheckCpusPerGpu(const JobSpec& s, DerivedSizes& d) {
  if (s.cpus_per_gpu > 0 && s.cpus_per_task > 0) {
    return Invalid(fmt::format("{} is mutually exclusive with {}",
                               Opt("--cpus-per-gpu", s.cpus_per_gpu),
                               Opt("--cpus-per-task", s.cpus_per_task)));
  }
  if (s.cpus_per_gpu == 0 || d.gpus_per_node == 0) return Status::Ok();
  std::optional<std::int64_t> node =
      ProductAtMost(s.cpus_per_gpu, d.gpus_per_node, kMaxResourceCount);
  if (!node) {
    return Invalid(fmt::format("{} with {} GPUs on a node asks for {} CPUs on a node, more than {}",
                               Opt("--cpus-per-gpu", s.cpus_per_gpu), d.gpus_per_node,
                               s.cpus_per_gpu * d.gpus_per_node, kMaxResourceCount));
  }
  d.cpus_per_node = std::max(d.cpus_per_node, *node);
  return Status::Ok();
}

// Memory of a node (--mem, or per CPU or GPU times the node's CPUs or GPUs), and of the job.
Status CheckMemoryProducts(const JobSpec& s, const DerivedSizes& d) {
  std::int64_t node_mb = s.mem_mb;
  std::string node_what = Opt("--mem", s.mem_mb) + "M";
  if (s.mem_mb == 0 && s.mem_per_cpu_mb > 0) {
    node_what =
        fmt::format("--mem-per-cpu={}M with {} CPUs on a node", s.mem_per_cpu_mb, d.cpus_per_node);
    std::optional<std::int64_t> m = ProductAtMost(s.mem_per_cpu_mb, d.cpus_per_node, kMaxMemoryMb);
    if (!m) return TooMuchMemory(node_what);
    node_mb = *m;
  } else if (s.mem_mb == 0 && s.mem_per_gpu_mb > 0) {
    node_what =
        fmt::format("--mem-per-gpu={}M with {} GPUs on a node", s.mem_per_gpu_mb, d.gpus_per_node);
    std::optional<std::int64_t> m = ProductAtMost(s.mem_per_gpu_mb, d.gpus_per_node, kMaxMemoryMb);
    if (!m) return TooMuchMemory(node_what);
    node_mb = *m;
  }
  if (!ProductAtMost(node_mb, d.nodes_max, kMaxMemoryMb)) {
    return TooMuchMemory(fmt::format("{} on {} nodes", node_what, d.nodes_max));
  }
  return Status::Ok();
}

Status CheckProducts(const JobSpec& s) {
  Result<DerivedSizes> d = DeriveTasks(s);
  if (!d.ok()) return d.status();
  LOCKSTEP_RETURN_IF_ERROR(CheckCpus(s, *d));
  LOCKSTEP_RETURN_IF_ERROR(CheckGpus(s, *d));
  LOCKSTEP_RETURN_IF_ERROR(CheckCpusPerGpu(s, *d));
  return CheckMemoryProducts(s, *d);
}

Status CheckUtf8(std::string_view what, std::string_view text) {
  if (!FirstNonUtf8Byte(text)) return Status::Ok();
  return Invalid(fmt::format("{} is not UTF-8 ({})", what, DescribeNonUtf8(text)));
}

// What decides what a job runs, and where, must reach its node byte for byte, and the API, the
// store and the agents carry it in JSON, whose strings are UTF-8: anything else would arrive
// with U+FFFD in place of its bytes. So it is refused here, where the user can still fix it.
// (The environment is not: --export=ALL copies every variable of the submitter's, which are not
// the job's to refuse; one that is not UTF-8 arrives with U+FFFD.)
Status CheckText(const JobSpec& s) {
  if (const std::optional<std::size_t> at = FirstNonUtf8Byte(s.script)) {
    const auto line = 1 + std::count(s.script.begin(), s.script.begin() + *at, '\n');
    return Invalid(fmt::format("the batch script is not UTF-8 (line {}: {})", line,
                               DescribeNonUtf8(s.script)));
  }
  for (std::size_t i = 0; i < s.script_args.size(); ++i)
    LOCKSTEP_RETURN_IF_ERROR(
        CheckUtf8(fmt::format("the script's argument {}", i + 1), s.script_args[i]));
  LOCKSTEP_RETURN_IF_ERROR(
      CheckUtf8(fmt::format("--nodelist={}", CoercedToUtf8(s.nodelist)), s.nodelist));
  LOCKSTEP_RETURN_IF_ERROR(
      CheckUtf8(fmt::format("--exclude={}", CoercedToUtf8(s.exclude)), s.exclude));
  LOCKSTEP_RETURN_IF_ERROR(
      CheckUtf8(fmt::format("--chdir={}", CoercedToUtf8(s.work_dir)), s.work_dir));
  LOCKSTEP_RETURN_IF_ERROR(
      CheckUtf8(fmt::format("--output={}", CoercedToUtf8(s.output)), s.output));
  return CheckUtf8(fmt::format("--error={}", CoercedToUtf8(s.error)), s.error);
}

// Sizes first: nothing else reads a 15 MB name. The cluster's limits, then Slurm's fixed ones.
Status CheckSizes(const JobSpec& s, const Limits& limits) {
  LOCKSTEP_RETURN_IF_ERROR(
      CheckSize("the job name", s.name.size(), "max_name_length", limits.max_name_length));
  LOCKSTEP_RETURN_IF_ERROR(
      CheckSize("the batch script", s.script.size(), "max_script_size", limits.max_script_size));
  std::uint64_t args = 0;
  for (const std::string& a : s.script_args) args += a.size() + 1;
  LOCKSTEP_RETURN_IF_ERROR(
      CheckSize("the script's arguments", args, "max_script_size", limits.max_script_size));
  LOCKSTEP_RETURN_IF_ERROR(CheckSize("the job's environment", EnvironmentSize(s.environment),
                                     "max_env_size", limits.max_env_size));
  LOCKSTEP_RETURN_IF_ERROR(
      CheckSize("--export", s.export_mode.size(), "max_env_size", limits.max_env_size));
  struct Fixed {
    std::string_view what;
    const std::string& text;
    std::uint64_t limit;
  };
  const std::string array_text = s.array ? s.array->text : std::string();
  for (const Fixed& f : {Fixed{"--account", s.account, kMaxShortText},
                         Fixed{"--partition", s.partition, kMaxShortText},
                         Fixed{"--qos", s.qos, kMaxShortText},
                         Fixed{"--constraint", s.constraint, kMaxShortText},
                         Fixed{"--gres type", s.gpu_type, kMaxShortText},
                         Fixed{"--nodelist", s.nodelist, kMaxHostlistText},
                         Fixed{"--exclude", s.exclude, kMaxHostlistText},
                         Fixed{"--chdir", s.work_dir, kMaxPathText},
                         Fixed{"--output", s.output, kMaxPathText},
                         Fixed{"--error", s.error, kMaxPathText},
                         Fixed{"--container-image", s.container_image, kMaxPathText},
                         Fixed{"--container-mounts", s.container_mounts,
                               kMaxPathText * kMaxContainerMounts},
                         Fixed{"--array", array_text, kMaxArrayText}}) {
    LOCKSTEP_RETURN_IF_ERROR(CheckSize(f.what, f.text.size(), "", f.limit));
  }
  return Status::Ok();
}

}  // namespace

// Slurm's words for text too long: ESLURM_PATHNAME_TOO_LONG.
Status CheckSize(std::string_view what, std::uint64_t size, std::string_view limit_name,
                 std::uint64_t limit) {
  if (size <= limit) return Status::Ok();
  return Invalid(fmt::format(
      "Pathname of a file, directory or other parameter too long: {} is {} bytes, more than {}{}",
      what, size, limit_name.empty() ? "" : fmt::format("{}=", limit_name), limit));
}

std::uint64_t EnvironmentSize(const std::map<std::string, std::string>& env) {
  std::uint64_t bytes = 0;
  for (const auto& [name, value] : env) bytes += name.size() + value.size() + 2;  // '=' and NUL
  return bytes;
}

Status Validate(const JobSpec& spec, const Limits& limits) {
  LOCKSTEP_RETURN_IF_ERROR(CheckSizes(spec, limits));
  LOCKSTEP_RETURN_IF_ERROR(CheckText(spec));
  LOCKSTEP_RETURN_IF_ERROR(CheckSingleValues(spec));
  LOCKSTEP_RETURN_IF_ERROR(CheckNice(spec, limits));
  LOCKSTEP_RETURN_IF_ERROR(CheckArray(spec));
  LOCKSTEP_RETURN_IF_ERROR(CheckDependencies(spec));
  LOCKSTEP_RETURN_IF_ERROR(CheckContainerMounts(spec));
  return CheckProducts(spec);
}

}  // namespace lockstep::jobspec

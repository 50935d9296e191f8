// SpecBuilder: options applied to a JobSpec in precedence order, and the checks across options.
#include <fmt/format.h>

#include "common/duration.h"
#include "jobspec/container_mounts.h"
#include "jobspec/sbatch_internal.h"

namespace lockstep::jobspec::sbatch_internal {
namespace {

bool TakesText(Opt id) {
  switch (id) {
    case Opt::kJobName:
    case Opt::kPartition:
    case Opt::kAccount:
    case Opt::kQos:
    case Opt::kReservation:
    case Opt::kConstraint:
    case Opt::kNodelist:
    case Opt::kExclude:
    case Opt::kNodefile:
    case Opt::kExportFile:
    case Opt::kContainerImage:
    case Opt::kContainerMounts:
    case Opt::kOutput:
    case Opt::kError:
    case Opt::kWrap:
    case Opt::kChdir:
      return true;
    default:
      return false;
  }
}

}  // namespace

SpecBuilder::SpecBuilder(std::string_view prog, const std::map<std::string, std::string>& env,
                         Time now)
    : prog_(prog), env_(env), now_(now) {}

const Occurrence* SpecBuilder::Last(Opt id) const {
  auto it = last_.find(id);
  return it == last_.end() ? nullptr : &it->second;
}

Status SpecBuilder::Apply(const Occurrence& occ) {
  const Opt id = occ.def->id;
  if (id == Opt::kUnsupported) return UndefinedName(occ);
  if (id == Opt::kSrunOnly) return Status::Ok();  // srun acts on it (SrunParse::srun_options)
  if (id == Opt::kIgnored) {
    spec_.warnings.push_back(fmt::format("{}{} has no effect in lockstep and is ignored",
                                         Prefix(prog_, occ.place), Label(occ)));
    return Status::Ok();
  }
  if (id == Opt::kWrap && occ.place.source != Source::kCommandLine) {
    return OptionError(prog_, occ, "is only allowed on the command line");
  }
  Status st = occ.value ? ApplyValue(occ, *occ.value) : ApplyFlag(occ);
  if (st.ok()) last_[id] = occ;
  return st;
}

// --licenses: lockstep defines no license, so any name is one the cluster does not have,
// refused with the words and the exit code of Slurm's refusal.
Status SpecBuilder::UndefinedName(const Occurrence& occ) const {
  const std::string_view why = "Invalid license specification";
  const std::string_view failed =
      prog_ == "sbatch" ? "Batch job submission failed" : "Unable to allocate resources";
  if (occ.place.source == Source::kCommandLine)
    return InvalidArgument(fmt::format("{}: {}: {}", prog_, failed, why));
  return InvalidArgument(
      fmt::format("{}{}: {}: {}", Prefix(prog_, occ.place), Label(occ), failed, why));
}

Status SpecBuilder::ApplyFlag(const Occurrence& occ) {
  switch (occ.def->id) {
    case Opt::kRequeue:
      spec_.requeue = true;
      break;
    case Opt::kNoRequeue:
      spec_.requeue = false;
      break;
    case Opt::kExclusive:
      spec_.exclusive = true;
      spec_.exclusive_user = false;
      break;
    case Opt::kHold:
      spec_.hold = true;
      break;
    case Opt::kParsable:
      spec_.parsable = true;
      break;
    case Opt::kNice:
      spec_.nice = 100;
      break;  // Slurm's --nice without a value
    case Opt::kWait:
      spec_.wait = true;
      break;
    case Opt::kTestOnly:
      spec_.test_only = true;
      break;
    default:
      return OptionError(prog_, occ, "requires an argument");
  }
  return Status::Ok();
}

Status SpecBuilder::ApplyValue(const Occurrence& occ, const std::string& v) {
  const Opt id = occ.def->id;
  if (TakesText(id) && v.empty()) return OptionError(prog_, occ, "the value is empty");
  // Runs a value parser; its error becomes "<place><option>: '<value>' <fragment>".
  auto parse = [&](auto result, auto&& use) -> Status {
    if (!result.ok()) return ValueError(prog_, occ, result.status().message());
    use(*result);
    return Status::Ok();
  };
  switch (id) {
    case Opt::kJobName:
      spec_.name = v;
      return Status::Ok();
    case Opt::kPartition:
      spec_.partition = v;
      return Status::Ok();
    case Opt::kAccount:
      spec_.account = v;
      return Status::Ok();
    case Opt::kQos:
      spec_.qos = v;
      return Status::Ok();
    case Opt::kReservation:
      spec_.reservation = v;
      return Status::Ok();
    case Opt::kConstraint:
      spec_.constraint = v;
      return Status::Ok();
    case Opt::kNodelist:
    case Opt::kExclude:
    case Opt::kNodefile:
      return ApplyNodes(occ, v);
    case Opt::kExportFile:
      return ApplyExportFile(occ, v);
    case Opt::kContainerImage:
      spec_.container_image = v;
      return Status::Ok();
    case Opt::kContainerMounts: {
      Result<std::vector<ContainerMount>> mounts = ParseContainerMounts(v);
      if (!mounts.ok()) return OptionError(prog_, occ, mounts.status().message());
      spec_.container_mounts = v;
      return Status::Ok();
    }
    case Opt::kOutput:
      spec_.output = v;
      return Status::Ok();
    case Opt::kError:
      spec_.error = v;
      return Status::Ok();
    case Opt::kChdir:
      spec_.work_dir = v;
      return Status::Ok();  // resolved against cwd later
    case Opt::kWrap:
      spec_.script = "#!/bin/sh\n" + v + "\n";
      return Status::Ok();
    case Opt::kNodes:
      return parse(ParseNodeRange(v), [&](NodeRange r) {
        spec_.min_nodes = r.min;
        spec_.max_nodes = r.max;
      });
    case Opt::kNtasks:
      return parse(ParsePositiveCount(v), [&](std::int32_t n) { spec_.ntasks = n; });
    case Opt::kNtasksPerNode:
      return parse(ParsePositiveCount(v), [&](std::int32_t n) { spec_.ntasks_per_node = n; });
    case Opt::kCpusPerTask:
      return parse(ParsePositiveCount(v), [&](std::int32_t n) { spec_.cpus_per_task = n; });
    case Opt::kCpusPerGpu:
      return parse(ParsePositiveCount(v), [&](std::int32_t n) { spec_.cpus_per_gpu = n; });
    case Opt::kMem:
    case Opt::kMemPerCpu:
    case Opt::kMemPerGpu:
      return ApplyMemory(occ, v);
    case Opt::kGpus:
    case Opt::kGpusPerNode:
    case Opt::kGpusPerTask:
    case Opt::kGres:
      return ApplyGpu(occ, v);
    case Opt::kTime:
      return parse(ParseTimeLimit(v), [&](Seconds s) { spec_.time_limit = s; });
    case Opt::kArray:
      return parse(ParseArray(v), [&](ArraySpec a) { spec_.array = std::move(a); });
    case Opt::kDependency:
      return parse(ParseDependencies(v), [&](Dependencies d) {
        spec_.dependencies = std::move(d.list);
        spec_.dependencies_any = d.any;
      });
    case Opt::kBegin:
      return parse(ParseBeginTime(v, now_), [&](Time t) { spec_.begin_time = t; });
    case Opt::kExport:
      return parse(ExportEnvironment(v, env_), [&](std::map<std::string, std::string> e) {
        spec_.environment = std::move(e);
        spec_.export_mode = v;
      });
    case Opt::kSwitches:
      return parse(ParseSwitches(v), [&](Switches s) {
        spec_.max_switches = s.count;
        if (v.find('@') != std::string::npos) spec_.switches_wait = s.wait;
      });
    case Opt::kSwitchesWait: {
      Result<Seconds> wait = ParseSlurmDuration(v);
      if (!wait.ok()) return ValueError(prog_, occ, "is not a time");
      spec_.switches_wait = *wait;
      return Status::Ok();
    }
    case Opt::kNice:
      return parse(ParseNice(v), [&](std::int32_t n) { spec_.nice = n; });
    case Opt::kSignal:
      return parse(ParseSignal(v), [&](const WarnSignal& s) {
        spec_.signal_number = s.number;
        spec_.signal_time = s.time;
        spec_.signal_batch_only = s.batch_only;
      });
    case Opt::kExclusive:
      // --exclusive=user: nodes shared with the user's own jobs only, not whole nodes.
      if (v == "user") {
        spec_.exclusive = false;
        spec_.exclusive_user = true;
        return Status::Ok();
      }
      if (v == "mcs") return ValueError(prog_, occ, "is not supported: lockstep has no MCS labels");
      return ValueError(prog_, occ, "is not a valid --exclusive specification (user or mcs)");
    default:
      return OptionError(prog_, occ, "takes no value");
  }
}

Status SpecBuilder::ApplyMemory(const Occurrence& occ, const std::string& v) {
  Result<std::int64_t> mb = ParseMemorySize(v);
  if (!mb.ok()) return ValueError(prog_, occ, mb.status().message());
  // Only --mem has a 0 (all of each node's memory); per CPU or GPU it would be no memory.
  if (*mb == 0 && occ.def->id != Opt::kMem)
    return ValueError(prog_, occ, "is not a memory size: it must be above 0");
  LOCKSTEP_RETURN_IF_ERROR(EnterGroup({Opt::kMem, Opt::kMemPerCpu, Opt::kMemPerGpu}, occ));
  switch (occ.def->id) {
    case Opt::kMem:
      spec_.mem_mb = *mb;
      spec_.mem_whole_node = *mb == 0;  // Slurm's --mem=0: all the memory of each node
      break;
    case Opt::kMemPerCpu:
      spec_.mem_per_cpu_mb = *mb;
      break;
    default:
      spec_.mem_per_gpu_mb = *mb;
      break;
  }
  return Status::Ok();
}

Status SpecBuilder::ApplyGpu(const Occurrence& occ, const std::string& v) {
  const Opt id = occ.def->id;
  Result<GpuRequest> r = id == Opt::kGres ? ParseGres(v) : ParseGpuCount(v);
  if (!r.ok()) return ValueError(prog_, occ, r.status().message());
  switch (id) {
    case Opt::kGpus:
      spec_.gpus = r->count;
      break;
    case Opt::kGpusPerTask:
      spec_.gpus_per_task = r->count;
      break;
    default:
      LOCKSTEP_RETURN_IF_ERROR(EnterGroup({Opt::kGpusPerNode, Opt::kGres}, occ));
      spec_.gpus_per_node = r->count;
      break;
  }
  if (r->type.empty()) {
    gpu_types_.erase(id);
  } else {
    gpu_types_[id] = r->type;
  }
  return Status::Ok();
}

Status SpecBuilder::EnterGroup(std::initializer_list<Opt> group, const Occurrence& occ) {
  for (Opt other : group) {
    if (other == occ.def->id) continue;
    auto it = last_.find(other);
    if (it == last_.end()) continue;
    if (it->second.place.source == occ.place.source) {
      return InvalidArgument(fmt::format("{}: {} and {} are mutually exclusive", prog_,
                                         Describe(it->second), Describe(occ)));
    }
    // Set in a place of lower precedence: this place replaces the whole group.
    Clear(other);
    last_.erase(it);
  }
  return Status::Ok();
}

void SpecBuilder::Clear(Opt id) {
  switch (id) {
    case Opt::kMem:
      spec_.mem_mb = 0;
      break;
    case Opt::kMemPerCpu:
      spec_.mem_per_cpu_mb = 0;
      break;
    case Opt::kMemPerGpu:
      spec_.mem_per_gpu_mb = 0;
      break;
    case Opt::kGpusPerNode:
    case Opt::kGres:
      spec_.gpus_per_node = 0;
      break;
    default:
      break;
  }
  gpu_types_.erase(id);
}

Status SpecBuilder::CheckGpuTypes() {
  const Occurrence* first = nullptr;
  std::string type;
  for (const auto& [id, t] : gpu_types_) {
    const Occurrence* occ = Last(id);
    LOCKSTEP_CHECK(occ != nullptr);
    if (first == nullptr) {
      first = occ;
      type = t;
    } else if (t != type) {
      return InvalidArgument(
          fmt::format("{}: {} and {} ask for different GPU types; a job uses one GPU type", prog_,
                      Describe(*first), Describe(*occ)));
    }
  }
  spec_.gpu_type = type;
  return Status::Ok();
}

Status SpecBuilder::Check() {
  LOCKSTEP_RETURN_IF_ERROR(CheckGpuTypes());
  // Slurm 22.05 refuses the pair from any places (a -c in the script, SBATCH_CPUS_PER_GPU).
  if (spec_.cpus_per_gpu > 0 && spec_.cpus_per_task > 0) {
    return InvalidArgument(fmt::format("{}: {} is mutually exclusive with {}", prog_,
                                       Describe(*Last(Opt::kCpusPerGpu)),
                                       Describe(*Last(Opt::kCpusPerTask))));
  }
  if (spec_.gpus_per_task > 0 && spec_.ntasks == 0 && spec_.ntasks_per_node == 0) {
    return OptionError(prog_, *Last(Opt::kGpusPerTask),
                       "needs a task count: give -n/--ntasks (or --ntasks-per-node)");
  }
  if (spec_.gpus > 0 && spec_.min_nodes > spec_.gpus) {
    return InvalidArgument(fmt::format(
        "{}: {} asks for fewer GPUs than {} asks for nodes; every node of a job needs a GPU", prog_,
        Describe(*Last(Opt::kGpus)), Describe(*Last(Opt::kNodes))));
  }
  return Status::Ok();
}

}  // namespace lockstep::jobspec::sbatch_internal

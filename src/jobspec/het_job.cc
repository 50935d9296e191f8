// The options a heterogeneous job's component takes from the one before it (sbatch.h).
#include "jobspec/sbatch.h"

#include <fmt/format.h>

#include <algorithm>

namespace lockstep::jobspec {
namespace {

// Copies `from` into `to` when `to` still has its default value (not given for this component).
template <typename T>
void TakeUnlessGiven(const T& from, T& to) {
  if (to == T{}) to = from;
}

}  // namespace

void PropagateHetOptions(const JobSpec& previous, JobSpec& next) {
  TakeUnlessGiven(previous.name, next.name);
  TakeUnlessGiven(previous.account, next.account);
  TakeUnlessGiven(previous.qos, next.qos);
  TakeUnlessGiven(previous.reservation, next.reservation);
  TakeUnlessGiven(previous.begin_time, next.begin_time);
  TakeUnlessGiven(previous.time_limit, next.time_limit);
  TakeUnlessGiven(previous.exclude, next.exclude);
  TakeUnlessGiven(previous.nice, next.nice);
  TakeUnlessGiven(previous.requeue, next.requeue);
  TakeUnlessGiven(previous.output, next.output);
  TakeUnlessGiven(previous.error, next.error);
  if (next.dependencies.empty()) {
    next.dependencies = previous.dependencies;
    next.dependencies_any = previous.dependencies_any;
  }
  if (next.signal_number == 0) {
    next.signal_number = previous.signal_number;
    next.signal_time = previous.signal_time;
    next.signal_batch_only = previous.signal_batch_only;
  }
  // --mem, unless the component sizes its memory otherwise.
  if (next.mem_mb == 0 && !next.mem_whole_node && next.mem_per_cpu_mb == 0 &&
      next.mem_per_gpu_mb == 0) {
    next.mem_mb = previous.mem_mb;
    next.mem_whole_node = previous.mem_whole_node;
  }
  next.hold = next.hold || previous.hold;
  next.parsable = next.parsable || previous.parsable;
  next.wait = next.wait || previous.wait;
  next.test_only = next.test_only || previous.test_only;
  if (next.export_mode == "ALL" && previous.export_mode != "ALL") {
    next.export_mode = previous.export_mode;
    next.environment = previous.environment;
  }
}

Result<std::vector<SrunParse>> ParseSrunComponents(
    const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
    const std::string& cwd, Time now,
    const std::function<Result<std::string>(const std::string&)>& read_file) {
  std::vector<SrunParse> parts;
  std::vector<std::string> rest = args;
  while (true) {
    Result<SrunParse> p = ParseSrunArgs(rest, env, cwd, now, read_file);
    if (!p.ok()) return p.status();
    const auto colon = std::find(p->command.begin(), p->command.end(), ":");
    if (colon == p->command.end()) {
      parts.push_back(std::move(*p));
      break;
    }
    if (parts.size() + 1 == kMaxHetComponents)
      return InvalidArgument(
          fmt::format("srun: a heterogeneous job has at most {} components", kMaxHetComponents));
    rest.assign(colon + 1, p->command.end());
    p->command.erase(colon, p->command.end());
    if (p->command.empty()) p->spec.name.clear();  // the default from a command it has not
    parts.push_back(std::move(*p));
  }
  // A component without a command runs the next one given (Slurm's srun), and is named so.
  for (std::size_t i = parts.size() - 1; i-- > 0;) {
    if (!parts[i].command.empty()) continue;
    parts[i].command = parts[i + 1].command;
    if (parts[i].spec.name.empty()) parts[i].spec.name = parts[i + 1].spec.name;
  }
  for (std::size_t i = 1; i < parts.size(); ++i)
    PropagateHetOptions(parts[i - 1].spec, parts[i].spec);
  return parts;
}

}  // namespace lockstep::jobspec

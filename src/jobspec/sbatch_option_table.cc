// The option table: every option lockstep knows in Slurm's spelling, and the messages that
// name an option and its place.
#include <fmt/format.h>

#include <string>

#include "jobspec/sbatch_internal.h"

namespace lockstep::jobspec::sbatch_internal {
namespace {

constexpr ArgKind kNone = ArgKind::kNone;
constexpr ArgKind kReq = ArgKind::kRequired;
constexpr ArgKind kOpt = ArgKind::kOptional;

std::vector<OptionDef> BuildTable() {
  return {
      {"job-name", 'J', kReq, Opt::kJobName},
      {"partition", 'p', kReq, Opt::kPartition},
      {"nodes", 'N', kReq, Opt::kNodes},
      {"ntasks", 'n', kReq, Opt::kNtasks},
      {"ntasks-per-node", 0, kReq, Opt::kNtasksPerNode},
      {"cpus-per-task", 'c', kReq, Opt::kCpusPerTask},
      {"cpus-per-gpu", 0, kReq, Opt::kCpusPerGpu},
      {"mem", 0, kReq, Opt::kMem},
      {"mem-per-cpu", 0, kReq, Opt::kMemPerCpu},
      {"mem-per-gpu", 0, kReq, Opt::kMemPerGpu},
      {"gpus", 'G', kReq, Opt::kGpus},
      {"gpus-per-node", 0, kReq, Opt::kGpusPerNode},
      {"gpus-per-task", 0, kReq, Opt::kGpusPerTask},
      {"gres", 0, kReq, Opt::kGres},
      {"time", 't', kReq, Opt::kTime},
      {"output", 'o', kReq, Opt::kOutput},
      {"error", 'e', kReq, Opt::kError},
      {"array", 'a', kReq, Opt::kArray, true},
      {"dependency", 'd', kReq, Opt::kDependency},
      {"requeue", 0, kNone, Opt::kRequeue},
      {"no-requeue", 0, kNone, Opt::kNoRequeue},
      {"qos", 'q', kReq, Opt::kQos},
      {"reservation", 0, kReq, Opt::kReservation},
      {"account", 'A', kReq, Opt::kAccount},
      {"exclusive", 0, kOpt, Opt::kExclusive},
      {"hold", 'H', kNone, Opt::kHold},
      {"begin", 'b', kReq, Opt::kBegin},
      {"wrap", 0, kReq, Opt::kWrap, true},
      {"parsable", 0, kNone, Opt::kParsable, true},
      {"chdir", 'D', kReq, Opt::kChdir},
      {"export", 0, kReq, Opt::kExport},
      {"switches", 0, kReq, Opt::kSwitches},
      {"", 0, kReq, Opt::kSwitchesWait},  // SBATCH_WAIT4SWITCH only
      {"constraint", 'C', kReq, Opt::kConstraint},
      {"nice", 0, kOpt, Opt::kNice},
      {"container-image", 0, kReq, Opt::kContainerImage},
      {"container-mounts", 0, kReq, Opt::kContainerMounts},
      // srun's own options, which srun carries out (docs/commands.md, "srun").
      {"jobid", 0, kReq, Opt::kSrunOnly, false, true},
      {"overlap", 0, kNone, Opt::kSrunOnly, false, true},
      {"exact", 0, kNone, Opt::kSrunOnly, false, true},
      {"label", 'l', kNone, Opt::kSrunOnly, false, true},
      {"unbuffered", 'u', kNone, Opt::kSrunOnly, false, true},
      {"cpu-bind", 0, kReq, Opt::kSrunOnly, false, true},
      {"cpu_bind", 0, kReq, Opt::kSrunOnly, false, true},  // srun's older spelling, still taken
      {"mpi", 0, kReq, Opt::kSrunOnly, false, true},
      {"multi-prog", 0, kNone, Opt::kSrunOnly, false, true},
      {"pty", 0, kNone, Opt::kSrunOnly, false, true},
      {"input", 'i', kReq, Opt::kSrunOnly, false, true},
      {"kill-on-bad-exit", 'K', kOpt, Opt::kSrunOnly, false, true},
      {"wait", 'W', kReq, Opt::kSrunOnly, false, true},
      {"relative", 'r', kReq, Opt::kSrunOnly, false, true},
      {"disable-status", 'X', kNone, Opt::kSrunOnly, false, true},
      {"quit-on-interrupt", 0, kNone, Opt::kSrunOnly, false, true},
      {"accel-bind", 0, kReq, Opt::kSrunOnly, false, true},
      {"resv-ports", 0, kOpt, Opt::kSrunOnly, false, true},
      {"slurmd-debug", 0, kReq, Opt::kSrunOnly, false, true},
      {"task-prolog", 0, kReq, Opt::kSrunOnly, false, true},
      {"task-epilog", 0, kReq, Opt::kSrunOnly, false, true},
      {"prolog", 0, kReq, Opt::kSrunOnly, false, true},
      {"epilog", 0, kReq, Opt::kSrunOnly, false, true},
      {"send-libs", 0, kOpt, Opt::kSrunOnly, false, true},
      {"het-group", 0, kReq, Opt::kSrunOnly, false, true},
      {"launch-cmd", 0, kNone, Opt::kSrunOnly, false, true},
      {"launcher-opts", 0, kReq, Opt::kSrunOnly, false, true},
      {"compress", 0, kOpt, Opt::kSrunOnly, false, true},
      {"debugger-test", 0, kNone, Opt::kSrunOnly, false, true},
      {"no-allocate", 'Z', kNone, Opt::kSrunOnly, false, true},
      // salloc's own (it reads srun's options; srun refuses these as unrecognized).
      {"no-shell", 0, kNone, Opt::kSrunOnly, false, true},
      {"bell", 0, kNone, Opt::kSrunOnly, false, true},
      {"no-bell", 0, kNone, Opt::kSrunOnly, false, true},
      {"kill-command", 0, kOpt, Opt::kSrunOnly, false, true},
      // Accepted without effect (a warning): mail, accounting and binding hints.
      {"mail-type", 0, kReq, Opt::kIgnored},
      {"mail-user", 0, kReq, Opt::kIgnored},
      {"comment", 0, kReq, Opt::kIgnored},
      {"open-mode", 0, kReq, Opt::kIgnored},
      {"acctg-freq", 0, kReq, Opt::kIgnored},
      {"profile", 0, kReq, Opt::kIgnored},
      {"hint", 0, kReq, Opt::kIgnored},
      {"mem-bind", 0, kReq, Opt::kIgnored},
      {"cpu-freq", 0, kReq, Opt::kIgnored},
      {"distribution", 'm', kReq, Opt::kIgnored},
      {"wckey", 0, kReq, Opt::kIgnored},
      {"get-user-env", 0, kOpt, Opt::kIgnored},
      {"propagate", 0, kOpt, Opt::kIgnored},
      {"signal", 0, kReq, Opt::kSignal},
      {"kill-on-invalid-dep", 0, kReq, Opt::kIgnored},
      {"no-kill", 'k', kOpt, Opt::kIgnored},
      {"verbose", 'v', kNone, Opt::kIgnored},
      {"quiet", 'Q', kNone, Opt::kIgnored},
      {"nodelist", 'w', kReq, Opt::kNodelist},
      {"exclude", 'x', kReq, Opt::kExclude},
      {"nodefile", 'F', kReq, Opt::kNodefile},
      {"export-file", 0, kReq, Opt::kExportFile, true},
      {"test-only", 0, kNone, Opt::kTestOnly},
      {"wait", 'W', kNone, Opt::kWait, true},
      // Names that lockstep defines none of: refused as Slurm refuses an undefined one.
      {"licenses", 'L', kReq, Opt::kUnsupported},
      // Accepted without effect (a warning), docs/commands.md says why for each: placement and
      // binding hints lockstep's placement does not take, limits it does not apply, and
      // options of Slurm features lockstep has no counterpart for.
      {"time-min", 0, kReq, Opt::kIgnored},
      {"tmp", 0, kReq, Opt::kIgnored},
      {"gpus-per-socket", 0, kReq, Opt::kIgnored},
      {"ntasks-per-gpu", 0, kReq, Opt::kIgnored},
      {"ntasks-per-socket", 0, kReq, Opt::kIgnored},
      {"ntasks-per-core", 0, kReq, Opt::kIgnored},
      {"gpu-bind", 0, kReq, Opt::kIgnored},
      {"gpu-freq", 0, kReq, Opt::kIgnored},
      {"tres-per-task", 0, kReq, Opt::kIgnored},
      {"tres-bind", 0, kReq, Opt::kIgnored},
      {"gres-flags", 0, kReq, Opt::kIgnored},
      {"mincpus", 0, kReq, Opt::kIgnored},
      {"sockets-per-node", 0, kReq, Opt::kIgnored},
      {"cores-per-socket", 0, kReq, Opt::kIgnored},
      {"threads-per-core", 0, kReq, Opt::kIgnored},
      {"extra-node-info", 'B', kReq, Opt::kIgnored},
      {"core-spec", 'S', kReq, Opt::kIgnored},
      {"thread-spec", 0, kReq, Opt::kIgnored},
      {"overcommit", 'O', kNone, Opt::kIgnored},
      {"oversubscribe", 's', kNone, Opt::kIgnored},
      {"contiguous", 0, kNone, Opt::kIgnored},
      {"input", 'i', kReq, Opt::kIgnored, true},
      {"immediate", 'I', kOpt, Opt::kIgnored},
      {"wait-all-nodes", 0, kReq, Opt::kIgnored},
      {"deadline", 0, kReq, Opt::kIgnored},
      {"delay-boot", 0, kReq, Opt::kIgnored},
      {"segment", 0, kReq, Opt::kIgnored},
      {"priority", 0, kReq, Opt::kIgnored},
      {"prefer", 0, kReq, Opt::kIgnored},
      {"clusters", 'M', kReq, Opt::kIgnored},
      {"cluster-constraint", 0, kReq, Opt::kIgnored},
      {"bb", 0, kReq, Opt::kIgnored},
      {"bbf", 0, kReq, Opt::kIgnored},
      {"uid", 0, kReq, Opt::kIgnored},
      {"gid", 0, kReq, Opt::kIgnored},
      {"network", 0, kReq, Opt::kIgnored},
      {"mcs-label", 0, kReq, Opt::kIgnored},
      {"use-min-nodes", 0, kNone, Opt::kIgnored},
      {"spread-job", 0, kNone, Opt::kIgnored},
      {"container", 0, kReq, Opt::kIgnored},
      {"container-id", 0, kReq, Opt::kIgnored},
      {"reboot", 0, kNone, Opt::kIgnored},
      {"power", 0, kReq, Opt::kIgnored},
      {"batch", 0, kReq, Opt::kIgnored, true},
      {"ignore-pbs", 0, kNone, Opt::kIgnored, true},
      {"x11", 0, kOpt, Opt::kIgnored, false, true},
      {"bcast", 0, kOpt, Opt::kSrunOnly, false, true},  // cmd_srun.cc copies the program
      {"bcast-exclude", 0, kReq, Opt::kIgnored, false, true},
      {"msg-timeout", 0, kReq, Opt::kIgnored, false, true},
      {"threads", 'T', kReq, Opt::kIgnored, false, true},
      {"preserve-env", 'E', kNone, Opt::kIgnored, false, true},
  };
}

}  // namespace

const std::vector<OptionDef>& OptionTable() {
  static const std::vector<OptionDef> table = BuildTable();
  return table;
}

const OptionDef& DefFor(Opt id) {
  for (const OptionDef& d : OptionTable()) {
    if (d.id == id) return d;
  }
  LOCKSTEP_CHECK(false && "every Opt has a table entry");
  return OptionTable().front();
}

}  // namespace lockstep::jobspec::sbatch_internal

namespace lockstep::jobspec::sbatch_internal {

std::string Prefix(std::string_view prog, const Place& place) {
  if (place.source == Source::kScript) {
    return fmt::format("{}: {} line {}: ", prog, place.file, place.line);
  }
  return fmt::format("{}: ", prog);
}

std::string Label(const Occurrence& occ) {
  if (occ.place.source == Source::kScript) return "#SBATCH " + occ.spelled;
  return occ.spelled;
}

std::string Describe(const Occurrence& occ) {
  std::string s = Label(occ);
  if (occ.value) {
    // "-N 4" for a short option, "--mem=4G" for a long one, "SBATCH_GPUS=2" for a variable.
    const bool short_option = occ.place.source != Source::kEnv && occ.spelled.size() == 2;
    s += (short_option ? " " : "=") + *occ.value;
  }
  if (occ.place.source == Source::kScript) {
    s += fmt::format(" ({} line {})", occ.place.file, occ.place.line);
  }
  return s;
}

Status OptionError(std::string_view prog, const Occurrence& occ, std::string_view message) {
  return InvalidArgument(fmt::format("{}{}: {}", Prefix(prog, occ.place), Label(occ), message));
}

Status ValueError(std::string_view prog, const Occurrence& occ, std::string_view detail) {
  return InvalidArgument(fmt::format("{}{}: '{}' {}", Prefix(prog, occ.place), Label(occ),
                                     occ.value.value_or(""), detail));
}

}  // namespace lockstep::jobspec::sbatch_internal

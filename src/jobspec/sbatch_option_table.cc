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
      // srun's own options, which srun carries out (docs/commands.md, "srun").
      {"jobid", 0, kReq, Opt::kSrunOnly, false, true},
      {"overlap", 0, kNone, Opt::kSrunOnly, false, true},
      {"exact", 0, kNone, Opt::kSrunOnly, false, true},
      {"label", 'l', kNone, Opt::kSrunOnly, false, true},
      {"unbuffered", 'u', kNone, Opt::kSrunOnly, false, true},
      {"cpu-bind", 0, kReq, Opt::kSrunOnly, false, true},
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
      // Slurm options lockstep does not offer: named in an error rather than "unrecognized",
      // and kept here so that a prefix such as "--exc" stays as ambiguous as in Slurm.
      {"nodelist", 'w', kReq, Opt::kNodelist},
      {"exclude", 'x', kReq, Opt::kExclude},
      {"reservation", 0, kReq, Opt::kUnsupported},
      {"licenses", 'L', kReq, Opt::kUnsupported},
      {"time-min", 0, kReq, Opt::kUnsupported},
      {"tmp", 0, kReq, Opt::kUnsupported},
      {"cpus-per-gpu", 0, kReq, Opt::kUnsupported},
      {"gpus-per-socket", 0, kReq, Opt::kUnsupported},
      {"ntasks-per-gpu", 0, kReq, Opt::kUnsupported},
      {"ntasks-per-socket", 0, kReq, Opt::kUnsupported},
      {"ntasks-per-core", 0, kReq, Opt::kUnsupported},
      {"gpu-bind", 0, kReq, Opt::kUnsupported},
      {"gpu-freq", 0, kReq, Opt::kUnsupported},
      {"tres-per-task", 0, kReq, Opt::kUnsupported},
      {"tres-bind", 0, kReq, Opt::kUnsupported},
      {"gres-flags", 0, kReq, Opt::kUnsupported},
      {"mincpus", 0, kReq, Opt::kUnsupported},
      {"sockets-per-node", 0, kReq, Opt::kUnsupported},
      {"cores-per-socket", 0, kReq, Opt::kUnsupported},
      {"threads-per-core", 0, kReq, Opt::kUnsupported},
      {"extra-node-info", 'B', kReq, Opt::kUnsupported},
      {"core-spec", 'S', kReq, Opt::kUnsupported},
      {"thread-spec", 0, kReq, Opt::kUnsupported},
      {"overcommit", 'O', kNone, Opt::kUnsupported},
      {"oversubscribe", 's', kNone, Opt::kUnsupported},
      {"contiguous", 0, kNone, Opt::kUnsupported},
      {"input", 'i', kReq, Opt::kUnsupported, true},
      {"immediate", 'I', kOpt, Opt::kUnsupported},
      {"wait", 'W', kNone, Opt::kWait, true},
      {"wait-all-nodes", 0, kReq, Opt::kUnsupported},
      {"deadline", 0, kReq, Opt::kUnsupported},
      {"delay-boot", 0, kReq, Opt::kUnsupported},
      {"segment", 0, kReq, Opt::kUnsupported},
      {"priority", 0, kReq, Opt::kUnsupported},
      {"prefer", 0, kReq, Opt::kUnsupported},
      {"clusters", 'M', kReq, Opt::kUnsupported},
      {"cluster-constraint", 0, kReq, Opt::kUnsupported},
      {"bb", 0, kReq, Opt::kUnsupported},
      {"bbf", 0, kReq, Opt::kUnsupported},
      {"test-only", 0, kNone, Opt::kTestOnly},
      {"uid", 0, kReq, Opt::kUnsupported},
      {"gid", 0, kReq, Opt::kUnsupported},
      {"network", 0, kReq, Opt::kUnsupported},
      {"export-file", 0, kReq, Opt::kUnsupported},
      {"mcs-label", 0, kReq, Opt::kUnsupported},
      {"use-min-nodes", 0, kNone, Opt::kUnsupported},
      {"spread-job", 0, kNone, Opt::kUnsupported},
      {"container", 0, kReq, Opt::kUnsupported},
      {"container-id", 0, kReq, Opt::kUnsupported},
      {"reboot", 0, kNone, Opt::kUnsupported},
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

namespace lockstep::jobspec {
namespace {

using sbatch_internal::ArgKind;
using sbatch_internal::Opt;
using sbatch_internal::OptionDef;

bool Offered(const OptionDef& d, bool srun) {
  return !d.long_name.empty() && (srun ? !d.sbatch_only : !d.srun_only);
}

std::string Spelling(const OptionDef& d) {
  std::string s = d.short_name != 0 ? fmt::format("-{}, ", d.short_name) : "    ";
  s += fmt::format("--{}", d.long_name);
  if (d.arg == ArgKind::kRequired) s += "=value";
  if (d.arg == ArgKind::kOptional) s += "[=value]";
  return s;
}

}  // namespace

std::string SbatchHelpText(bool srun) {
  std::string out = srun ? "Usage: srun [OPTIONS...] executable [args...]\n\n"
                         : "Usage: sbatch [OPTIONS...] script [args...]\n\n";
  for (const OptionDef& d : sbatch_internal::OptionTable()) {
    if (!Offered(d, srun)) continue;
    const char* what = d.id == Opt::kUnsupported ? "not supported by lockstep (an error)"
                       : d.id == Opt::kIgnored   ? "accepted, no effect (a warning)"
                       : d.id == Opt::kSrunOnly  ? "srun's own (docs/commands.md)"
                                                 : "";
    out += *what ? fmt::format("  {:<34}{}\n", Spelling(d), what)
                 : fmt::format("  {}\n", Spelling(d));
  }
  out += "\nHelp options:\n  -h, --help                        show this help message\n"
         "      --usage                       display brief usage message\n";
  return out;
}

std::string SbatchUsageText(bool srun) {
  return srun ? "Usage: srun [OPTIONS(0)...] executable(0) [args(0)...]\n"
              : "Usage: sbatch [OPTIONS...] executable [args...]\n";
}

}  // namespace lockstep::jobspec

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

// sbatch's, srun's and salloc's --help and --usage: every option of the table (sbatch_option_
// table.cc) that the command takes, with its value and what lockstep does with it. The golden
// texts are tests/golden/help/{sbatch,srun,salloc}.txt (slurm_options_test).
#include <fmt/format.h>

#include <map>
#include <string>
#include <string_view>

#include "jobspec/sbatch.h"
#include "jobspec/sbatch_internal.h"

namespace lockstep::jobspec {
namespace {

using sbatch_internal::ArgKind;
using sbatch_internal::Opt;
using sbatch_internal::OptionDef;

struct OptionHelp {
  const char* value;  // the value's name in the spelling
  const char* text;
};

// By long name; "name@srun" for srun's own meaning of a name sbatch also has.
const std::map<std::string_view, OptionHelp>& HelpTexts() {
  static const std::map<std::string_view, OptionHelp> kTexts = {
      {"job-name", {"jobname", "name of the job"}},
      {"partition", {"partition", "partition to run in"}},
      {"nodes", {"N", "number of nodes (min[-max])"}},
      {"ntasks", {"ntasks", "number of tasks"}},
      {"ntasks-per-node", {"n", "tasks on each node"}},
      {"cpus-per-task", {"ncpus", "CPUs for each task"}},
      {"cpus-per-gpu", {"n", "CPUs for each GPU the job gets on a node (not with -c)"}},
      {"mem", {"size", "memory per node (M, G, T suffixes)"}},
      {"mem-per-cpu", {"size", "memory per allocated CPU"}},
      {"mem-per-gpu", {"size", "memory per allocated GPU"}},
      {"gpus", {"[type:]n", "GPUs for the whole job"}},
      {"gpus-per-node", {"[type:]n", "GPUs on each node"}},
      {"gpus-per-task", {"[type:]n", "GPUs for each task"}},
      {"gres", {"list", "generic resources: gpu[:type]:n per node"}},
      {"time", {"time", "time limit (minutes, MM:SS, [D-]HH:MM:SS, UNLIMITED)"}},
      {"output", {"pattern", "file for standard output (%j, %A, %a, %x, %u, %N, %%)"}},
      {"error", {"pattern", "file for standard error"}},
      {"array", {"indexes", "job array: 0-15, 1,3,5, 0-15:4, %N at most N at once"}},
      {"dependency", {"type:jobid[:jobid...]", "after[+min], afterany, afterok, afternotok, aftercorr, singleton"}},
      {"requeue", {"", "the job may be requeued"}},
      {"no-requeue", {"", "the job is never requeued"}},
      {"qos", {"qos", "quality of service"}},
      {"account", {"name", "account charged for the job"}},
      {"exclusive", {"user|mcs", "whole nodes for the job"}},
      {"hold", {"", "submit the job held (scontrol release starts it)"}},
      {"begin", {"time", "start no sooner than: now+1hour, 16:00, 2026-12-01T10:00"}},
      {"wrap", {"command", "run this command in a generated sh script"}},
      {"parsable", {"", "print only the job id"}},
      {"chdir", {"directory", "working directory of the job"}},
      {"export", {"ALL|NONE|vars", "environment variables the job starts with"}},
      {"switches", {"max[@wait]", "at most this many leaf switches, waiting so long for them"}},
      {"constraint", {"list", "node features required (& joins them)"}},
      {"nice", {"value", "lower the job's priority by value"}},
      {"container-image", {"image", "container image (Kubernetes backend)"}},
      {"container-mounts", {"SRC[:DST[:ro]],...", "bind directories of declared storage into the pods (Kubernetes)"}},
      {"signal", {"[B:]sig[@time]", "send sig this many seconds before the time limit"}},
      {"nodelist", {"hosts|file", "nodes the allocation must include (with a '/': a file)"}},
      {"nodefile", {"file", "nodes the allocation must include, read from a file"}},
      {"export-file", {"file|fd", "NAME=value variables from a file, applied with --export"}},
      {"exclude", {"hosts", "nodes the allocation must not use"}},
      {"test-only", {"", "say when the job would start; submit nothing"}},
      {"wait", {"", "wait for the job to end; exit with its exit code"}},
      {"reservation", {"name", "run in this reservation"}},
      {"licenses", {"names", "licenses the job needs"}},
      // srun's (and salloc's) own.
      {"jobid", {"id", "run the step in this running job"}},
      {"overlap", {"", "share the job's resources with its other steps (steps always do here)"}},
      {"exact", {"", "the step uses only what it asks for (steps share the allocation here)"}},
      {"label", {"", "prefix each output line with its task number"}},
      {"unbuffered", {"", "do not line-buffer output (never buffered here)"}},
      {"cpu-bind", {"type", "CPU binding of tasks (no effect here)"}},
      {"mpi", {"type", "type of MPI being used: none, pmix, pmi2 (--mpi=list)"}},
      {"multi-prog", {"", "the command is a --multi-prog configuration file"}},
      {"pty", {"", "task 0 in a pseudo-terminal (interactive)"}},
      {"input@srun", {"file|none", "standard input of the tasks"}},
      {"kill-on-bad-exit", {"0|1", "end the step when a task fails (no effect here)"}},
      {"wait@srun",
       {"seconds", "end the step this long after its first task ends (no effect here)"}},
      {"relative", {"n", "start the step on node n of the allocation (no effect here)"}},
      {"disable-status", {"", "Ctrl-C is not a status request (no effect here)"}},
      {"quit-on-interrupt", {"", "one Ctrl-C ends the step (no effect here)"}},
      {"accel-bind", {"options", "accelerator binding (no effect here)"}},
      {"resv-ports", {"count", "reserve communication ports (no effect here)"}},
      {"slurmd-debug", {"level", "node daemon's debug level (no effect here)"}},
      {"task-prolog", {"program", "run before each task (no effect here)"}},
      {"task-epilog", {"program", "run after each task (no effect here)"}},
      {"prolog", {"program", "run before the step (no effect here)"}},
      {"epilog", {"program", "run after the step (no effect here)"}},
      {"send-libs", {"yes|no", "broadcast shared libraries (no effect here)"}},
      {"het-group", {"list", "the heterogeneous job's components the step runs on"}},
      {"launch-cmd", {"", "print the launch command (no effect here)"}},
      {"launcher-opts", {"options", "options of an external launcher (no effect here)"}},
      {"compress", {"library", "compression for --bcast (no effect here)"}},
      {"debugger-test", {"", "debugger test mode (no effect here)"}},
      {"no-allocate", {"", "run on nodes without an allocation (no effect here)"}},
      {"no-shell", {"", "grant the allocation and exit; scancel releases it"}},
      {"bell", {"", "ring the terminal bell when granted (no effect here)"}},
      {"no-bell", {"", "do not ring the terminal bell"}},
      {"kill-command", {"signal", "signal the command at the time limit (no effect here)"}},
      // Accepted with no effect: what Slurm does with them.
      {"mail-type", {"type", "mail on state changes: BEGIN, END, FAIL, ALL"}},
      {"mail-user", {"user", "who gets the mail"}},
      {"comment", {"text", "a comment"}},
      {"open-mode", {"append|truncate", "how output files are opened"}},
      {"acctg-freq", {"type=seconds", "accounting sampling interval"}},
      {"profile", {"types", "detailed profiling"}},
      {"hint", {"type", "task binding hints: compute_bound, nomultithread, ..."}},
      {"mem-bind", {"type", "memory binding of tasks"}},
      {"cpu-freq", {"min[-max[:gov]]", "CPU frequency"}},
      {"distribution", {"type", "task distribution: block, cyclic, ..."}},
      {"wckey", {"wckey", "workload characterization key"}},
      {"get-user-env", {"timeout", "load the user's login environment"}},
      {"propagate", {"rlimits", "propagate resource limits"}},
      {"kill-on-invalid-dep", {"yes|no", "end a job whose dependency can never be met"}},
      {"no-kill", {"off", "keep the job when one of its nodes fails"}},
      {"verbose", {"", "more messages"}},
      {"quiet", {"", "fewer messages"}},
      {"time-min", {"time", "shortest acceptable time limit"}},
      {"tmp", {"size", "temporary disk per node"}},
      {"gpus-per-socket", {"n", "GPUs per socket"}},
      {"ntasks-per-gpu", {"n", "tasks per GPU"}},
      {"ntasks-per-socket", {"n", "tasks per socket"}},
      {"ntasks-per-core", {"n", "tasks per core"}},
      {"gpu-bind", {"type", "GPU binding of tasks"}},
      {"gpu-freq", {"spec", "GPU frequency"}},
      {"tres-per-task", {"list", "trackable resources per task"}},
      {"tres-bind", {"list", "trackable resource binding"}},
      {"gres-flags", {"flags", "GRES placement flags"}},
      {"mincpus", {"n", "minimum CPUs per node"}},
      {"sockets-per-node", {"S", "sockets per node"}},
      {"cores-per-socket", {"C", "cores per socket"}},
      {"threads-per-core", {"T", "threads per core"}},
      {"extra-node-info", {"S[:C[:T]]", "sockets, cores and threads per node"}},
      {"core-spec", {"cores", "cores reserved for the system"}},
      {"thread-spec", {"threads", "threads reserved for the system"}},
      {"overcommit", {"", "more tasks than CPUs"}},
      {"oversubscribe", {"", "share nodes with other jobs"}},
      {"contiguous", {"", "contiguous nodes"}},
      {"input", {"file", "standard input of the batch script"}},
      {"immediate", {"seconds", "give up if not started within this time"}},
      {"wait-all-nodes", {"0|1", "wait for every node to boot"}},
      {"deadline", {"time", "remove the job if it cannot end before this time"}},
      {"delay-boot", {"minutes", "delay node reboots for features"}},
      {"segment", {"size", "segment size of a block topology"}},
      {"priority", {"value", "the job's priority (operators)"}},
      {"prefer", {"list", "preferred node features"}},
      {"clusters", {"names", "clusters to submit to (this one)"}},
      {"cluster-constraint", {"list", "federation cluster features"}},
      {"bb", {"spec", "burst buffer"}},
      {"bbf", {"file", "burst buffer specification file"}},
      {"uid", {"user", "run as this user (root): the job runs as its submitter"}},
      {"gid", {"group", "run as this group (root)"}},
      {"network", {"type", "network options"}},
      {"mcs-label", {"label", "MCS label"}},
      {"use-min-nodes", {"", "prefer the smaller node count of a range"}},
      {"spread-job", {"", "spread the job over as many nodes as possible"}},
      {"container", {"path", "OCI container bundle"}},
      {"container-id", {"id", "OCI container id"}},
      {"reboot", {"", "reboot the nodes first"}},
      {"power", {"flags", "power management"}},
      {"batch", {"list", "features of the node the batch script runs on"}},
      {"ignore-pbs", {"", "ignore #PBS and #BSUB lines (never read)"}},
      {"x11", {"all|first|last", "X11 forwarding"}},
      {"bcast", {"path", "copy the executable to the nodes"}},
      {"bcast-exclude", {"paths", "directories --bcast leaves out"}},
      {"msg-timeout", {"seconds", "message timeout"}},
      {"threads", {"n", "launch fan-out"}},
      {"preserve-env", {"", "node and task counts from the environment"}},
  };
  return kTexts;
}

bool Offered(const OptionDef& d, std::string_view prog) {
  if (d.long_name.empty()) return false;
  const bool salloc_own = d.long_name == "no-shell" || d.long_name == "bell" ||
                          d.long_name == "no-bell" || d.long_name == "kill-command";
  if (prog == "sbatch") return !d.srun_only;
  if (d.sbatch_only) return false;
  if (prog == "salloc") return !d.srun_only || salloc_own;
  return !salloc_own;  // srun
}

OptionHelp HelpFor(const OptionDef& d) {
  const auto& texts = HelpTexts();
  if (d.srun_only) {
    auto own = texts.find(std::string(d.long_name) + "@srun");
    if (own != texts.end()) return own->second;
  }
  auto it = texts.find(d.long_name);
  return it != texts.end() ? it->second : OptionHelp{"value", ""};
}

std::string Spelling(const OptionDef& d, const OptionHelp& h) {
  std::string s = d.short_name != 0 ? fmt::format("-{}, ", d.short_name) : "    ";
  s += fmt::format("--{}", d.long_name);
  if (d.arg == ArgKind::kRequired) s += fmt::format("={}", h.value);
  if (d.arg == ArgKind::kOptional) s += fmt::format("[={}]", h.value);
  return s;
}

// What follows the options: sbatch's script, srun's executable, salloc's optional command.
std::string_view Operands(std::string_view prog) {
  return prog == "sbatch" ? "script [args...]"
         : prog == "srun" ? "executable [args...]"
                          : "[command [args...]]";
}

}  // namespace

std::string SbatchHelpText(std::string_view prog) {
  std::string out = fmt::format("Usage: {} [OPTIONS...] {}\n\n", prog, Operands(prog));
  for (const OptionDef& d : sbatch_internal::OptionTable()) {
    if (!Offered(d, prog)) continue;
    if (d.long_name.find('_') != std::string_view::npos) continue;  // old spellings
    const OptionHelp h = HelpFor(d);
    std::string text = h.text;
    if (d.id == Opt::kIgnored) text += " (accepted, no effect here)";
    if (d.id == Opt::kUnsupported) text += " (lockstep defines none: refused)";
    std::string left = "  " + Spelling(d, h);
    left = left.size() < 36 ? left + std::string(36 - left.size(), ' ')
                            : left + "\n" + std::string(36, ' ');
    out += left + text + "\n";
  }
  out +=
      "\nHelp options:\n"
      "  -h, --help                        show this help message\n"
      "      --usage                       display brief usage message\n"
      "\nOther options:\n"
      "  -V, --version                     output version information and exit\n"
      "\ndocs/commands.md says what lockstep does with each option.\n";
  return out;
}

std::string SbatchUsageText(std::string_view prog) {
  return fmt::format("Usage: {} [OPTIONS...] {}\n", prog, Operands(prog));
}

}  // namespace lockstep::jobspec

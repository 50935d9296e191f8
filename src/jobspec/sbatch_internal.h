// Internal to the sbatch parser (sbatch.h): the option table, where an option was found, the
// tokenizer for command lines and #SBATCH lines, the value parsers and the builder that applies
// options to a JobSpec in precedence order. Not part of the spec API.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/types.h"
#include "jobspec/job_spec.h"
#include "jobspec/validate.h"

namespace lockstep::jobspec::sbatch_internal {

// The three places an option can come from, in increasing precedence.
enum class Source : std::uint8_t { kScript = 0, kEnv = 1, kCommandLine = 2 };

struct Place {
  Source source = Source::kCommandLine;
  std::string file;  // kScript: the script as named on the command line, or "stdin"
  int line = 0;      // kScript: 1-based line number
};

enum class Opt : std::uint8_t {
  kJobName,
  kPartition,
  kNodes,
  kNtasks,
  kNtasksPerNode,
  kCpusPerTask,
  kCpusPerGpu,
  kMem,
  kMemPerCpu,
  kMemPerGpu,
  kGpus,
  kGpusPerNode,
  kGpusPerTask,
  kGres,
  kTime,
  kOutput,
  kError,
  kArray,
  kDependency,
  kRequeue,
  kNoRequeue,
  kQos,
  kAccount,
  kReservation,  // --reservation: a name lockstepd checks at submission
  kExclusive,
  kHold,
  kBegin,
  kWrap,
  kParsable,
  kChdir,
  kExport,
  kExportFile,  // --export-file: variables from a file, applied with --export
  kSwitches,
  kSwitchesWait,
  kConstraint,
  kNodelist,  // -w
  kNodefile,  // -F: the -w list from a file
  kExclude,   // -x
  kNice,
  kContainerImage,
  kContainerMounts,
  kSignal,
  kWait,  // sbatch -W/--wait
  kTestOnly,  // sbatch/srun --test-only
  kSrunOnly,     // srun's own (--pty, --jobid, --cpu-bind, ...): handed to srun (SrunParse)
  kIgnored,      // a Slurm option accepted without effect: a warning
  kUnsupported,  // --licenses: names lockstep defines none of, refused as Slurm does
};

enum class ArgKind : std::uint8_t { kNone, kRequired, kOptional };

struct OptionDef {
  std::string_view long_name;  // empty for the environment-only kSwitchesWait
  char short_name = 0;         // 0: none
  ArgKind arg = ArgKind::kRequired;
  Opt id = Opt::kIgnored;
  bool sbatch_only = false;  // not an srun/salloc option
  bool srun_only = false;    // not an sbatch option
};

// Every option lockstep knows, Slurm's spelling.
const std::vector<OptionDef>& OptionTable();
const OptionDef& DefFor(Opt id);  // the first entry with this id

enum class Mode : std::uint8_t { kSbatch, kSrun };

// One option as found.
struct Occurrence {
  const OptionDef* def = nullptr;
  std::string spelled;  // "--time" (long options canonical), "-t", "SBATCH_TIMELIMIT"
  std::optional<std::string> value;
  Place place;
};

// --- Messages. prog is "sbatch" or "srun".
// "sbatch: " or "sbatch: train.sbatch line 4: ".
std::string Prefix(std::string_view prog, const Place& place);
// "--time", "#SBATCH --time", "SBATCH_TIMELIMIT".
std::string Label(const Occurrence& occ);
// For messages about two options: "--mem=4G", "#SBATCH --mem=4G (train.sbatch line 3)".
std::string Describe(const Occurrence& occ);
// "<prefix><label>: <message>".
Status OptionError(std::string_view prog, const Occurrence& occ, std::string_view message);
// "<prefix><label>: '<value>' <detail>".
Status ValueError(std::string_view prog, const Occurrence& occ, std::string_view detail);

// --- Tokenizing (sbatch_tokens.cc).
struct Tokens {
  std::vector<Occurrence> options;
  std::vector<std::string> rest;  // from the first non-option on ("--" itself dropped)
};
// Reads options from words as getopt_long does (with "+": stops at the first non-option):
// --opt=value, --opt value, unique prefixes of long names, -J name, -Jname, grouped flags (-Hv).
Result<Tokens> ReadOptions(const std::vector<std::string>& words, Mode mode, std::string_view prog,
                           const Place& place);
// Splits the text after "#SBATCH" into words like a shell without expansion: blanks separate,
// '...' and "..." group, a backslash escapes, and '#' at the start of a word begins a comment.
Result<std::vector<std::string>> SplitDirectiveWords(std::string_view text);
// The #SBATCH options of a script: read until the first line that is neither blank nor a
// comment. file names the script in messages.
// One list per component of a heterogeneous job: a line "#SBATCH hetjob" (or "packjob") begins
// the next; a script without one has one list.
Result<std::vector<std::vector<Occurrence>>> ReadDirectives(std::string_view script,
                                                            std::string_view file,
                                                            std::string_view prog);
// The options set by environment variables (SBATCH_* for sbatch, a few SLURM_* for srun), in a
// fixed order. Empty values are skipped, except for flags, which any value sets.
std::vector<Occurrence> ReadEnvOptions(const std::map<std::string, std::string>& env, Mode mode);

// --- Values (sbatch_values.cc). Error messages are fragments that follow "'<value>' ", such as
// "is not a GPU count".
struct GpuRequest {
  std::int32_t count = 0;
  std::string type;  // empty: any type
};
struct NodeRange {
  std::int32_t min = 0;
  std::int32_t max = 0;
};
struct Dependencies {
  std::vector<DependencySpec> list;
  bool any = false;  // joined by '?'
};
struct Switches {
  std::int32_t count = 0;
  Seconds wait = 0;
};
using jobspec::kMaxArrayIndex;  // MaxArraySize's ceiling, 4,000,001 (validate.h)

Result<std::int32_t> ParsePositiveCount(std::string_view text);
Result<NodeRange> ParseNodeRange(std::string_view text);
Result<std::int64_t> ParseMemorySize(std::string_view text);
Result<GpuRequest> ParseGpuCount(std::string_view text);  // [type:]N
Result<GpuRequest> ParseGres(std::string_view text);      // gpu[:type][:N][,gpu...]
Result<Seconds> ParseTimeLimit(std::string_view text);    // 0 -> kUnlimited, as in Slurm
Result<ArraySpec> ParseArray(std::string_view text);
Result<Dependencies> ParseDependencies(std::string_view text);
Result<Time> ParseBeginTime(std::string_view text, Time now);  // local time
Result<Switches> ParseSwitches(std::string_view text);
Result<std::int32_t> ParseNice(std::string_view text);
struct WarnSignal {
  std::int32_t number = 0;
  Seconds time = 60;  // Slurm's default when "@TIME" is left out
  bool batch_only = false;
};
Result<WarnSignal> ParseSignal(std::string_view text);  // [{R|B}:]SIG[@TIME]
// A shell variable name: a letter or '_', then letters, digits and '_'.
bool IsVarName(std::string_view s);
// The job's environment for an --export value, from the submitter's environment and the
// variables of --export-file (added unless the list says NONE; its explicit NAME=value win).
Result<std::map<std::string, std::string>> ExportEnvironment(
    std::string_view text, const std::map<std::string, std::string>& env,
    const std::map<std::string, std::string>& file_vars = {});

// --- Files named by options (sbatch_files.cc). Messages are fragments, as above.
using FileReader = std::function<Result<std::string>(const std::string& path)>;
// path if absolute, else base/path; lexically normalized, without a trailing '/'.
std::string ResolvePath(const std::string& base, const std::string& path);
// A node file (-F, or -w with a '/'), as Slurm's slurm_read_hostfile: names or hostlist
// expressions separated by blanks, commas or newlines, '#' to the end of a line a comment.
// The hosts, compressed ("node[1-2]"); an error when it names none or an expression is bad.
Result<std::string> ParseNodeFile(std::string_view text);
// An --export-file: NAME=value entries separated by NUL bytes (when the file has any) or else
// by newlines; empty entries are skipped. An error names the first entry that is not NAME=value.
Result<std::map<std::string, std::string>> ParseExportFile(std::string_view text);

// --- Applying options (sbatch_apply.cc).
// Builds a JobSpec from occurrences applied in precedence order (script, environment, command
// line); a later value replaces an earlier one. --mem, --mem-per-cpu and --mem-per-gpu are one
// group, as are --gpus-per-node and --gres=gpu: a higher place replaces the whole group, and two
// members from one place are an error. Not thread-safe; env must outlive the builder.
class SpecBuilder {
 public:
  SpecBuilder(std::string_view prog, const std::map<std::string, std::string>& env, Time now);

  Status Apply(const Occurrence& occ);
  // Checks across options (GPU types, --gpus-per-task needs tasks, ...); call after the last
  // Apply. Sets gpu_type.
  Status Check();

  JobSpec& spec() { return spec_; }
  // The occurrence that last set an option, if any.
  const Occurrence* Last(Opt id) const;
  bool export_given() const { return last_.count(Opt::kExport) > 0; }
  // Where -F, -w FILE and --export-file are read from: relative paths from cwd. Without a
  // reader, those options are errors.
  void SetFileReader(std::string cwd, FileReader read_file);
  // The variables of --export-file, if given: FinishSpec applies them with --export.
  const std::optional<std::map<std::string, std::string>>& export_file_vars() const {
    return export_file_vars_;
  }

 private:
  Status ApplyValue(const Occurrence& occ, const std::string& v);
  Status ApplyGpu(const Occurrence& occ, const std::string& v);
  Status ApplyMemory(const Occurrence& occ, const std::string& v);
  Status ApplyFlag(const Occurrence& occ);
  Status ApplyNodes(const Occurrence& occ, const std::string& v);  // -w, -x, -F
  Status ApplyExportFile(const Occurrence& occ, const std::string& v);
  Result<std::string> ReadNamedFile(const Occurrence& occ, const std::string& path) const;
  Status UndefinedName(const Occurrence& occ) const;
  Status EnterGroup(std::initializer_list<Opt> group, const Occurrence& occ);
  void Clear(Opt id);
  Status CheckGpuTypes();

  std::string prog_;
  const std::map<std::string, std::string>& env_;
  Time now_;
  JobSpec spec_;
  std::map<Opt, Occurrence> last_;
  std::map<Opt, std::string> gpu_types_;  // type given with each GPU option
  std::string cwd_;
  FileReader read_file_;
  std::optional<std::map<std::string, std::string>> export_file_vars_;
};

}  // namespace lockstep::jobspec::sbatch_internal

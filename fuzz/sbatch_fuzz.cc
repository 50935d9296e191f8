// Fuzzes sbatch's option parser and #SBATCH script reader, and srun's option parser over the same
// words. The input is three parts, one line each and then the rest:
//   line 1: the command line after "sbatch", words split on spaces ("-N 2 --gpus=h100:8 job.sh")
//   line 2: the environment, K=V words split on spaces ("SBATCH_TIMELIMIT=1:00 HOME=/home/a")
//   rest:   the script, which every path the command line names reads (and stdin gives)
// Properties: nothing crashes; every error starts "sbatch: " or "srun: "; a spec that parses
// passes through the range check, and through the REST API's JSON unchanged when its text is
// UTF-8 (JobSpecToJson replaces bytes that are not by U+FFFD, a documented loss: a Latin-1
// script arrives altered).
#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.h"
#include "jobspec/job_spec.h"
#include "jobspec/sbatch.h"
#include "jobspec/validate.h"

namespace {

using lockstep::jobspec::JobSpec;

std::string_view TakeLine(std::string_view& text) {
  const std::size_t end = text.find('\n');
  const std::string_view line = text.substr(0, end);
  text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  return line;
}

std::vector<std::string> Words(std::string_view line) {
  std::vector<std::string> words;
  std::size_t start = 0;
  while (start <= line.size()) {
    const std::size_t end = std::min(line.find(' ', start), line.size());
    if (end > start) words.emplace_back(line.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

std::map<std::string, std::string> Environment(std::string_view line) {
  std::map<std::string, std::string> env;
  for (const std::string& word : Words(line)) {
    const std::size_t eq = word.find('=');
    if (eq != std::string::npos) env[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return env;
}

void CheckError(const lockstep::Status& status, std::string_view prefix) {
  FUZZ_CHECK(status.message().rfind(prefix, 0) == 0);
}

// Whether every string of the spec is UTF-8, so that its JSON carries it unchanged.
bool AllTextIsUtf8(const JobSpec& s) {
  nlohmann::json strings = {s.name,   s.partition,   s.account,     s.qos,
                            s.gpu_type, s.constraint, s.nodelist,   s.exclude, s.work_dir,   s.output,
                            s.error,  s.export_mode, s.script,      s.container_image,
                            s.external, s.environment, s.script_args, s.warnings};
  if (s.array) strings.push_back(s.array->text);
  try {
    (void)strings.dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

// What the CLI does with a parsed spec before it sends it to lockstepd.
void CheckParsedSpec(const JobSpec& spec) {
  (void)lockstep::jobspec::Validate(spec, {.caller_is_operator = true});
  lockstep::Result<JobSpec> sent =
      lockstep::jobspec::JobSpecFromJson(lockstep::jobspec::JobSpecToJson(spec));
  FUZZ_CHECK(sent.ok());
  // -W/--wait and --test-only stay with the CLI: the JSON leaves them out (job_spec.h).
  JobSpec received = *sent;
  received.wait = spec.wait;
  received.test_only = spec.test_only;
  if (AllTextIsUtf8(spec)) FUZZ_CHECK(received == spec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> args = Words(TakeLine(text));
  const std::map<std::string, std::string> env = Environment(TakeLine(text));
  const std::string script(text);
  constexpr lockstep::Time kNow = 1'700'000'000;

  lockstep::jobspec::SbatchInput in;
  in.args = args;
  in.env = env;
  in.cwd = "/home/alice/run";
  in.now = kNow;
  in.read_file = [&script](const std::string&) -> lockstep::Result<std::string> { return script; };
  in.stdin_script = script;
  lockstep::Result<JobSpec> sbatch = lockstep::jobspec::ParseSbatch(in);
  if (sbatch.ok()) {
    CheckParsedSpec(*sbatch);
  } else {
    CheckError(sbatch.status(), "sbatch: ");
  }

  lockstep::Result<lockstep::jobspec::SrunParse> srun =
      lockstep::jobspec::ParseSrunArgs(args, env, in.cwd, kNow);
  if (srun.ok()) {
    CheckParsedSpec(srun->spec);
  } else {
    CheckError(srun.status(), "srun: ");
  }
  return 0;
}

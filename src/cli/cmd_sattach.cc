// sattach JOBID.STEP: attach to a running srun step (docs/commands.md "sattach"). It reads the
// step's output buffer in lockstepd as srun does (GET .../steps/{s}/output), as a second reader
// (attach=1): what the buffer still holds first, then what the tasks print from now on, until
// the step ends; it exits with the step's exit code. Its stdin goes to the tasks that read the
// step's input, appended after what the step's srun sends (srun_input.h, StdinForwarder).
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/srun_input.h"
#include "cli/slurm/slurm_options.h"
#include "cli/step_output_writer.h"
#include "common/base64.h"

namespace lockstep::cli {
namespace {

constexpr int kOutputWaitMs = 500;

// "42.0" -> (42, 0); the batch step has no streamed output to attach to.
Status ParseStepId(const std::string& text, unsigned long long* job, int* step) {
  const std::size_t dot = text.find('.');
  const auto digits = [](const std::string& t) {
    return !t.empty() && t.size() <= 9 && t.find_first_not_of("0123456789") == std::string::npos;
  };
  if (dot == std::string::npos)
    return InvalidArgument("Invalid job step id " + text + ": expected JOBID.STEPID");
  const std::string j = text.substr(0, dot), s = text.substr(dot + 1);
  if (s == "batch" || s == "extern")
    return InvalidArgument(
        "StepId=" + text +
        ": its output goes to the job's output file, not to a stream sattach can attach to");
  if (j.empty() || j.find_first_not_of("0123456789") != std::string::npos || j.size() > 18 ||
      !digits(s))
    return InvalidArgument("Invalid job step id " + text);
  *job = std::stoull(j);
  *step = std::stoi(s);
  return Status::Ok();
}

Status ParseTaskFilter(const std::string& value, std::optional<int>& to) {
  if (value.empty() || value.size() > 9 ||
      value.find_first_not_of("0123456789") != std::string::npos)
    return InvalidArgument("Invalid task id: " + value);
  to = std::stoi(value);
  return Status::Ok();
}

}  // namespace

int RunSattach(int argc, char** argv) {
  bool label = false, quiet = false, layout = false;
  std::optional<int> output_filter, error_filter, input_filter;
  auto flag = [](bool& b) {
    return [&b](const std::string&) {
      b = true;
      return Status::Ok();
    };
  };
  auto ignore = [](const std::string&) { return Status::Ok(); };
  const std::vector<SlurmOption> table = {
      {"input-filter", 0, OptArg::kRequired,
       [&](const std::string& v) { return ParseTaskFilter(v, input_filter); },
       "send stdin to only the specified task", "taskid"},
      {"output-filter", 0, OptArg::kRequired,
       [&](const std::string& v) { return ParseTaskFilter(v, output_filter); },
       "only print stdout from the specified task", "taskid"},
      {"error-filter", 0, OptArg::kRequired,
       [&](const std::string& v) { return ParseTaskFilter(v, error_filter); },
       "only print stderr from the specified task", "taskid"},
      {"label", 'l', OptArg::kNone, flag(label), "prepend task number to lines of stdout & stderr"},
      {"layout", 0, OptArg::kNone, flag(layout),
       "print task layout info and exit (does not attach to tasks)"},
      {"pty", 0, OptArg::kNone, ignore, nullptr},
      {"quiet", 'Q', OptArg::kNone, flag(quiet), "quiet mode (suppress informational messages)"},
      {"verbose", 'v', OptArg::kNone, ignore, "verbose mode (multiple -v's increase verbosity)"},
      {"version", 'V', OptArg::kNone, ignore, "print the Slurm version and exit"},
  };
  ParsedCommandLine cl =
      ParseSlurmCommandLine("sattach", argc, argv, table, "[options] <jobid.stepid>");
  if (cl.exit_code) return *cl.exit_code;
  if (cl.operands.size() != 1) return Fail("sattach", "Missing jobid.stepid argument");
  unsigned long long job = 0;
  int step = 0;
  if (Status s = ParseStepId(cl.operands[0], &job, &step); !s.ok()) return Fail("sattach", s);
  // The tasks that read the step's input were chosen by its srun (--input) at launch.
  if (input_filter)
    return Fail("sattach",
                "--input-filter: the tasks that read a step's input are chosen by its srun's "
                "--input (docs/commands.md, sattach)");
  const std::string where =
      "/api/v1/jobs/" + std::to_string(job) + "/steps/" + std::to_string(step);
  const std::string name = std::to_string(job) + "." + std::to_string(step);
  client::ApiClient api;
  Result<nlohmann::json> info = api.Get(where);
  if (!info.ok()) return Fail("sattach", "StepId=" + name + ": " + info.status().message());
  if (info->value("state", "") != "RUNNING")
    return Fail("sattach", "StepId=" + name + " is not running (" + info->value("state", "") + ")");
  const int ntasks = info->value("ntasks", 1);
  if (layout) {
    std::printf("Job step layout:\n\t%d tasks, StepId=%s\n", ntasks, name.c_str());
    return 0;
  }
  std::optional<StdinForwarder> input;
  if (!StdinIsEmpty()) {
    if (info->value("input", false)) {
      input.emplace(job, step, /*pty=*/false, StdinForwarder::Writer::kAttached);
    } else if (!quiet) {
      std::fprintf(stderr,
                   "sattach: warning: StepId=%s reads no input (its srun had no stdin, or "
                   "--input=none): stdin is not forwarded\n",
                   name.c_str());
    }
  }
  StepOutputWriter writer(label, ntasks);
  unsigned long long offset = 0;
  bool warned = false;
  for (;;) {
    Result<nlohmann::json> r = api.Get(where + "/output?attach=1&offset=" + std::to_string(offset) +
                                       "&wait_ms=" + std::to_string(kOutputWaitMs));
    if (!r.ok()) return Fail("sattach", r.status());
    // Output older than what lockstepd keeps (4 MiB per step) was dropped before we came.
    if (r->value("dropped", 0ULL) > 0 && offset > 0 && !quiet && !warned) {
      std::fprintf(stderr,
                   "sattach: error: %llu bytes of the step's output were lost: read too slowly\n",
                   r->value("dropped", 0ULL));
      warned = true;
    }
    for (const auto& c : (*r)["chunks"]) {
      const int rank = c.value("rank", 0);
      const bool is_stderr = c.value("stream", "") == "stderr";
      const std::optional<int>& filter = is_stderr ? error_filter : output_filter;
      if (filter && *filter != rank) continue;
      Result<std::string> data = Base64Decode(c.value("data", ""));
      if (data.ok()) writer.Write(rank, is_stderr, *data);
    }
    std::fflush(stdout);
    std::fflush(stderr);
    offset = r->value("offset", offset);
    if (r->value("done", false)) break;
  }
  Result<nlohmann::json> s = api.Get(where);
  if (!s.ok()) return Fail("sattach", s.status());
  const int code = s->value("exit_code", 0), sig = s->value("signal", 0);
  return sig != 0 ? 128 + sig : code;
}

}  // namespace lockstep::cli

// sstat: a running job's usage, sampled by the agents from the tasks' cgroups and /proc
// (GET /api/v1/jobs/{id}/usage; docs/commands.md "sstat").
#include <cstdio>
#include <sstream>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/format/field_format.h"
#include "cli/format/sstat.h"
#include "cli/slurm/slurm_options.h"

namespace lockstep::cli {
namespace {

struct Selected {
  std::string job;   // digits
  std::string step;  // "" (sstat's default step), "batch", "extern" or digits
};

// "42", "42.0", "42.batch", comma separated: sstat's -j list.
Status AddSteps(const std::string& list, std::vector<Selected>& to) {
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const std::size_t dot = item.find('.');
    Selected s{item.substr(0, dot), dot == std::string::npos ? "" : item.substr(dot + 1)};
    const auto digits = [](const std::string& t) {
      return !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
    };
    if (!digits(s.job) ||
        (dot != std::string::npos && !digits(s.step) && s.step != "batch" && s.step != "extern"))
      return InvalidArgument("Invalid job id: " + item);
    to.push_back(s);
  }
  return Status::Ok();
}

std::string StepName(const nlohmann::json& step) {
  const nlohmann::json id = step.value("step_id", nlohmann::json());
  return id.is_string() ? id.get<std::string>() : id.dump();
}

// The steps of one job that `sel` names, as Slurm picks them: a named step; with -a every
// running step; else the job's first srun step (the batch step only when named).
std::vector<nlohmann::json> Pick(const nlohmann::json& usage, const Selected& sel, bool all) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& step : usage.value("steps", nlohmann::json::array())) {
    const std::string name = StepName(step);
    if (!sel.step.empty() ? name == sel.step : (all || (name != "batch" && name != "extern")))
      out.push_back(step);
    if (sel.step.empty() && !all && !out.empty()) break;
  }
  return out;
}

}  // namespace

int RunSstat(int argc, char** argv) {
  SstatOptions o;
  bool all = false, helpformat = false;
  std::vector<Selected> selected;
  auto flag = [](bool& b) {
    return [&b](const std::string&) {
      b = true;
      return Status::Ok();
    };
  };
  auto ignore = [](const std::string&) { return Status::Ok(); };
  const std::vector<SlurmOption> table = {
      {"allsteps", 'a', OptArg::kNone, flag(all), "print all steps for the given job(s)"},
      {"helpformat", 'e', OptArg::kNone, flag(helpformat),
       "print a list of fields that can be specified with the '--format' option"},
      {"fields", 'o', OptArg::kRequired,
       [&o](const std::string& v) {
         o.format += (o.format.empty() ? "" : ",") + v;
         return Status::Ok();
       },
       nullptr, "field,..."},
      {"format", 'o', OptArg::kRequired,
       [&o](const std::string& v) {
         o.format += (o.format.empty() ? "" : ",") + v;
         return Status::Ok();
       },
       "comma separated list of fields", "field,..."},
      {"pidformat", 'i', OptArg::kNone,
       [&o](const std::string&) {
         o.format = kSstatPidFields;
         return Status::Ok();
       },
       "predefined format to list the pids running for each job step (JobId,Nodes,Pids)"},
      {"jobs", 'j', OptArg::kRequired,
       [&selected](const std::string& v) { return AddSteps(v, selected); },
       "format is <job(.step)>; comma separated list", "job(.step)"},
      {"noconvert", 0, OptArg::kNone, flag(o.noconvert),
       "don't convert units from their original type (e.g. 2048M won't be converted to 2G)"},
      {"noheader", 'n', OptArg::kNone, flag(o.noheader),
       "no header will be added to the beginning of output"},
      {"parsable", 'p', OptArg::kNone,
       [&o](const std::string&) {
         o.parsable = 1;
         return Status::Ok();
       },
       "output will be '|' delimited with a '|' at the end"},
      {"parsable2", 'P', OptArg::kNone,
       [&o](const std::string&) {
         o.parsable = 2;
         return Status::Ok();
       },
       "output will be '|' delimited without a '|' at the end"},
      {"verbose", 'v', OptArg::kNone, ignore, "verbose mode"},
      {"version", 'V', OptArg::kNone, ignore, "print version"},
  };
  ParsedCommandLine cl =
      ParseSlurmCommandLine("sstat", argc, argv, table, "[OPTIONS] -j <job(.stepid)>");
  if (cl.exit_code) return *cl.exit_code;
  if (helpformat) {
    std::fputs(SstatFieldNames().c_str(), stdout);
    return 0;
  }
  for (const std::string& operand : cl.operands)  // sstat takes job ids after the options too
    if (Status s = AddSteps(operand, selected); !s.ok()) return Fail("sstat", s);
  if (selected.empty()) return Fail("sstat", "You didn't give me any jobs to stat.");
  Result<std::string> header = FormatSstatHeader(o);
  if (!header.ok()) return Fail("sstat", header.status());
  std::fputs(header->c_str(), stdout);
  client::ApiClient api;
  int rc = 0;
  for (const Selected& sel : selected) {
    Result<nlohmann::json> usage = api.Get("/api/v1/jobs/" + sel.job + "/usage");
    if (!usage.ok()) {
      rc = Fail("sstat", "couldn't get steps for job " + sel.job + ": " + usage.status().message());
      continue;
    }
    std::vector<nlohmann::json> steps = Pick(*usage, sel, all);
    if (steps.empty()) {  // Slurm's words
      rc = Fail("sstat", sel.step.empty()
                             ? "No steps running for job " + sel.job
                             : "StepId=" + sel.job + "." + sel.step + " not found running.");
      continue;
    }
    const std::int64_t job = std::stoll(sel.job);
    for (const nlohmann::json& step : steps) {
      Result<std::string> line = FormatSstatStep(job, step, o);
      if (line.ok()) {
        std::fputs(line->c_str(), stdout);
        continue;
      }
      // A running step without samples: none came yet, or the host has none to give.
      std::string why = JStr(*usage, "no_data");
      rc = Fail("sstat", line.status().message() + " (" +
                             (why.empty() ? "no sample from its nodes yet; the agents sample every "
                                            "--acct-gather-frequency seconds"
                                          : why) +
                             ")");
    }
  }
  return rc;
}

}  // namespace lockstep::cli

#include "cli/scontrol_update.h"

#include <cctype>
#include <cstdio>
#include <ctime>
#include <sstream>

#include "cli/cli_util.h"
#include "cli/format/field_format.h"
#include "common/duration.h"
#include "jobspec/sbatch_internal.h"

namespace lockstep::cli {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Word {
  std::string key;    // lower case: Slurm's keys are case-insensitive
  std::string value;
  std::string text;   // as written, for messages
};

// The KEY=VALUE words; false (and `bad` set) at the first word without '='.
bool SplitWords(const std::vector<std::string>& words, std::vector<Word>& out, std::string& bad) {
  for (const std::string& w : words) {
    const std::size_t eq = w.find('=');
    if (eq == std::string::npos) {
      bad = w;
      return false;
    }
    out.push_back({Lower(w.substr(0, eq)), w.substr(eq + 1), w});
  }
  return true;
}

// Slurm's line for a refusal of one job: "<why> for job <id>", both escaped.
void JobRefusal(const std::string& why, const std::string& id) {
  std::fprintf(stderr, "%s for job %s\n", EscapeControl(why).c_str(), EscapeControl(id).c_str());
}

// What a refusal says: an unknown job in Slurm's words, scripts look for them.
std::string WhyOf(const Status& s) {
  return s.code() == StatusCode::kNotFound ? "Invalid job id specified" : s.message();
}

// "1,2 3" -> {"1", "2", "3"}.
std::vector<std::string> JobIds(const std::vector<std::string>& words) {
  std::vector<std::string> ids;
  for (const std::string& w : words) {
    std::stringstream in(w);
    std::string id;
    while (std::getline(in, id, ','))
      if (!id.empty()) ids.push_back(id);
  }
  return ids;
}

// TimeLimit=[+|-]T: the new limit, or the current one moved ("+5": five minutes more).
Status AddTimeLimit(const std::string& v, nlohmann::json& changes) {
  const int sign = !v.empty() && v[0] == '+' ? 1 : !v.empty() && v[0] == '-' ? -1 : 0;
  const std::string amount = sign != 0 ? v.substr(1) : v;
  Result<Seconds> t = ParseSlurmDuration(amount);
  // A bare number is minutes for scontrol too.
  if (!amount.empty() && amount.size() < 12 &&
      amount.find_first_not_of("0123456789") == std::string::npos)
    t = std::stoll(amount) * 60;
  if (!t.ok()) return InvalidArgument("update: TimeLimit: " + t.status().message());
  // +N/-N moves each job's own limit in lockstepd, so on an array each task's (Slurm's
  // scontrol refuses it for arrays), in the one request.
  if (sign != 0)
    changes["time_limit_add"] = sign * *t;
  else
    changes["time_limit"] = *t;
  return Status::Ok();
}

// One KEY=VALUE of a job update into `changes` (docs/api.md's PATCH body); false when the key
// is not one scontrol may change here.
Result<bool> AddJobChange(const Word& w, nlohmann::json& changes) {
  const std::string& k = w.key;
  const std::string& v = w.value;
  // A value read by one of sbatch's parsers, whose messages follow the value.
  auto bad = [&](const Status& s) {
    return InvalidArgument("update: " + w.text + ": '" + v + "' " + s.message());
  };
  auto number = [&](const char* field, std::int64_t max) -> Result<bool> {
    if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos ||
        std::stoll(v) > max)
      return InvalidArgument("update: " + w.text + ": not a number from 0 to " +
                             std::to_string(max));
    changes[field] = std::stoll(v);
    return true;
  };
  if (k == "timelimit") {
    LOCKSTEP_RETURN_IF_ERROR(AddTimeLimit(v, changes));
  } else if (k == "priority") {
    return number("priority", 0xFFFFFFFEll);
  } else if (k == "nice") {
    const std::size_t digits = !v.empty() && (v[0] == '-' || v[0] == '+') ? 1 : 0;
    if (v.size() == digits || v.size() - digits > 10 ||
        v.find_first_not_of("0123456789", digits) != std::string::npos)
      return InvalidArgument("update: " + w.text + ": not a nice value");
    changes["nice"] = std::stoll(v);  // its range is lockstepd's check
  } else if (k == "jobname" || k == "name") {
    changes["name"] = v;
  } else if (k == "account" || k == "partition" || k == "qos" || k == "comment") {
    changes[k] = v;
  } else if (k == "numnodes" || k == "reqnodes") {
    Result<jobspec::sbatch_internal::NodeRange> n = jobspec::sbatch_internal::ParseNodeRange(v);
    if (!n.ok()) return bad(n.status());
    changes["min_nodes"] = n->min;
    changes["max_nodes"] = n->max;
  } else if (k == "numcpus" || k == "reqcpus") {
    Result<std::int32_t> n = jobspec::sbatch_internal::ParsePositiveCount(v);
    if (!n.ok()) return bad(n.status());
    changes["num_cpus"] = *n;
  } else if (k == "minmemorynode" || k == "minmemorycpu") {
    Result<std::int64_t> mb = jobspec::sbatch_internal::ParseMemorySize(v);
    if (!mb.ok()) return bad(mb.status());
    changes[k == "minmemorynode" ? "mem_per_node_mb" : "mem_per_cpu_mb"] = *mb;
  } else if (k == "gres" || k == "trespernode") {
    changes["gres"] = v;  // lockstepd reads it as sbatch's --gres
  } else if (k == "reqnodelist" || k == "nodelist") {
    changes["nodelist"] = v;
  } else if (k == "excnodelist") {
    changes["exclude"] = v;
  } else if (k == "dependency") {
    changes["dependency"] = v;  // lockstepd reads it as sbatch's --dependency
  } else if (k == "starttime" || k == "begintime" || k == "eligibletime") {
    // As sbatch --begin reads it, on this host's clock ("now+1hour", "16:00", a date).
    Result<Time> t = jobspec::sbatch_internal::ParseBeginTime(v, std::time(nullptr));
    if (!t.ok()) return bad(t.status());
    changes["begin_time"] = *t;
  } else if (k == "arraytaskthrottle") {
    return number("array_throttle", 4000001);
  } else {
    return false;
  }
  return true;
}

}  // namespace

int UpdateJobs(client::ApiClient& api, const std::vector<std::string>& words) {
  std::vector<Word> kv;
  std::string bad;
  if (!SplitWords(words, kv, bad)) return Fail("scontrol", "update: '" + bad + "' is not Key=Value");
  std::vector<std::string> ids;
  nlohmann::json changes = nlohmann::json::object();
  for (const Word& w : kv) {
    if (w.key == "jobid" || w.key == "job") {
      ids = JobIds({w.value});
      continue;
    }
    Result<bool> added = AddJobChange(w, changes);
    if (!added.ok()) return Fail("scontrol", added.status());
    if (!*added) {  // Slurm's words
      std::fprintf(stderr, "Update of this parameter is not supported: %s\nRequest aborted\n",
                   EscapeControl(w.text).c_str());
      return 1;
    }
  }
  if (ids.empty()) return Fail("scontrol", "update: name a JobId=");
  if (changes.empty()) {
    std::fputs("No changes specified\n", stderr);  // Slurm's words
    return 1;
  }
  int rc = 0;
  for (const std::string& id : ids) {
    Result<nlohmann::json> r = api.Patch("/api/v1/jobs/" + id, changes);
    if (r.ok()) continue;
    JobRefusal(WhyOf(r.status()), id);
    rc = 1;
  }
  return rc;
}

int UpdatePartition(client::ApiClient& api, const std::vector<std::string>& words) {
  std::vector<Word> kv;
  std::string bad;
  if (!SplitWords(words, kv, bad)) return Fail("scontrol", "update: '" + bad + "' is not Key=Value");
  std::string name;
  nlohmann::json changes = nlohmann::json::object();
  for (const Word& w : kv) {
    const std::string value = Lower(w.value);
    if (w.key == "partitionname") {
      name = w.value;
    } else if (w.key == "state") {
      if (value != "up" && value != "down" && value != "drain" && value != "inactive") {
        Fail("scontrol", "Invalid input: " + w.text);  // Slurm's words
        return Fail("scontrol", "Acceptable State values are UP, DOWN, DRAIN and INACTIVE");
      }
      changes["state"] = value;
    } else if (w.key == "maxtime") {
      Result<Seconds> t = ParseSlurmDuration(w.value);
      if (!w.value.empty() && w.value.size() < 12 &&
          w.value.find_first_not_of("0123456789") == std::string::npos)
        t = std::stoll(w.value) * 60;  // minutes
      if (!t.ok() || *t < 0) return Fail("scontrol", "Invalid input " + w.text);
      changes["max_time"] = *t >= kUnlimited ? nlohmann::json() : nlohmann::json(*t);
    } else if (w.key == "default") {
      if (value != "yes" && value != "no") {
        Fail("scontrol", "Invalid input: " + w.text);
        return Fail("scontrol", "Acceptable Default values are YES and NO");
      }
      changes["default"] = value == "yes";
    } else {
      Fail("scontrol", "Update of this parameter is not supported: " + w.text);
      return Fail("scontrol", "Request aborted");
    }
  }
  if (changes.empty()) {
    std::fputs("No changes specified\n", stderr);
    return 1;
  }
  Result<nlohmann::json> r = api.Patch("/api/v1/partitions/" + name, changes);
  if (r.ok()) return 0;
  // Slurm's line: "slurm_update error: Invalid partition name specified".
  std::fprintf(stderr, "slurm_update error: %s\n", EscapeControl(r.status().message()).c_str());
  return 1;
}

int JobActions(client::ApiClient& api, const std::string& action,
               const std::vector<std::string>& words) {
  // uhold: a hold its owner may release, even when an operator puts it (Slurm's).
  const std::string route = action == "uhold" ? "hold" : action;
  const nlohmann::json body =
      action == "uhold" ? nlohmann::json{{"user_hold", true}} : nlohmann::json::object();
  std::string last_why;
  for (const std::string& id : JobIds(words)) {
    Status s = api.Post("/api/v1/jobs/" + id + "/" + route, body).status();
    // An array's id holds or releases its tasks lockstepd keeps in one record too (none left
    // is no error), whatever its first task said.
    if ((route == "hold" || route == "release") && id.find('_') == std::string::npos) {
      nlohmann::json rest_body = body;
      rest_body["array_rest"] = true;
      Status rest = api.Post("/api/v1/jobs/" + id + "/" + route, rest_body).status();
      if (s.ok() && !rest.ok() && rest.code() != StatusCode::kNotFound) s = rest;
    }
    if (s.ok()) continue;
    last_why = WhyOf(s);
    JobRefusal(last_why, id);
  }
  if (last_why.empty()) return 0;
  // Slurm 22.05's scontrol ends a hold or release that failed so (its slurm_perror).
  if (route == "hold" || route == "release")
    std::fprintf(stderr, "slurm_suspend error: %s\n", EscapeControl(last_why).c_str());
  return 1;
}

int Notify(client::ApiClient& api, const std::vector<std::string>& words) {
  if (words.size() < 2) {
    std::fputs("too few arguments for keyword:notify\n", stderr);  // Slurm's words
    return 1;
  }
  std::string message;
  for (std::size_t i = 1; i < words.size(); ++i) message += (i > 1 ? " " : "") + words[i];
  Result<nlohmann::json> r =
      api.Post("/api/v1/jobs/" + words[0] + "/notify", {{"message", message}});
  if (r.ok()) return 0;
  std::fprintf(stderr, "job notify failure: %s\n", EscapeControl(WhyOf(r.status())).c_str());
  return 1;
}

}  // namespace lockstep::cli

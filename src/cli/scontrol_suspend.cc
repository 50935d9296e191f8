#include "cli/scontrol_suspend.h"

#include <cctype>
#include <cstdio>
#include <sstream>

#include "cli/cli_util.h"
#include "cli/format/field_format.h"

namespace lockstep::cli {
namespace {

// What Slurm's scontrol accepts as a job id here: digits, or an array task "ID_N".
bool LooksLikeJobId(const std::string& id) {
  if (id.empty()) return false;
  for (char c : id)
    if ((c < '0' || c > '9') && c != '_') return false;
  return id.front() != '_' && id.back() != '_';
}

bool StartsWithIgnoreCase(const std::string& text, const std::string& prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  return true;
}

}  // namespace

int SuspendJobs(client::ApiClient& api, const std::string& op, const std::string& ids, bool quiet) {
  std::string list = ids;
  // Slurm takes "JobId=42" and "Job=42" too.
  for (const char* prefix : {"jobid=", "job="}) {
    const std::string p = prefix;
    if (StartsWithIgnoreCase(list, p)) {
      list = list.substr(p.size());
      break;
    }
  }
  int rc = 0;
  std::stringstream in(list);
  std::string id;
  while (std::getline(in, id, ',')) {
    Status s = LooksLikeJobId(id)
                   ? api.Post("/api/v1/jobs/" + id + "/" + op, nlohmann::json::object()).status()
                   : Status(StatusCode::kInvalidArgument, "Invalid job id specified");
    if (s.ok()) continue;
    rc = 1;
    if (!quiet)
      std::fprintf(stderr, "%s for job %s\n", EscapeControl(s.message()).c_str(),
                   EscapeControl(id).c_str());
  }
  return rc;
}

}  // namespace lockstep::cli

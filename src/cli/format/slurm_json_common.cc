// What squeue's, sinfo's and sacct's Slurm JSON share: the meta block, nested keys, TRES strings.
#include "cli/format/slurm_json.h"

namespace lockstep::cli::slurm_json {

Result<const nlohmann::json*> JobList(const nlohmann::json& jobs, const char* command) {
  const nlohmann::json& list = jobs.is_object() && jobs.contains("jobs") ? jobs["jobs"] : jobs;
  if (!list.is_array())
    return InvalidArgument(std::string(command) + " --json: the jobs are not a list");
  for (const nlohmann::json& job : list)
    if (!job.is_object())
      return InvalidArgument(std::string(command) + " --json: a job is not an object");
  return &list;
}

void WriteJobsDocument(const nlohmann::ordered_json& meta, const nlohmann::json& list,
                       const std::function<nlohmann::ordered_json(const nlohmann::json&)>& job,
                       const TextSink& write) {
  nlohmann::ordered_json head;
  head["meta"] = meta;
  head["errors"] = nlohmann::ordered_json::array();
  head["jobs"] = nlohmann::ordered_json::array();
  std::string text = head.dump(2);  // ends in `"jobs": []\n}`
  if (list.empty()) {
    write(text + '\n');
    return;
  }
  text.resize(text.size() - std::string_view("]\n}").size());  // up to and with '['
  write(text);
  bool first = true;
  for (const nlohmann::json& j : list) {
    // The job at depth 2 of the document: each of its lines four spaces further in.
    std::string item = first ? "\n    " : ",\n    ";
    first = false;
    for (char c : job(j).dump(2)) {
      item += c;
      if (c == '\n') item += "    ";
    }
    write(item);
  }
  write("\n  ]\n}\n");
}

nlohmann::ordered_json Meta(const std::string& plugin_type, const std::string& plugin_name) {
  // The schema followed is Slurm 22.05's: a parser that picks its reader by version reads it so.
  nlohmann::ordered_json meta;
  meta["plugin"] = {{"type", plugin_type}, {"name", plugin_name}};
  meta["Slurm"]["version"] = {{"major", 22}, {"micro", 8}, {"minor", 5}};
  meta["Slurm"]["release"] = "22.05.8";
  return meta;
}

void SetPath(nlohmann::ordered_json& obj, const std::string& path, nlohmann::ordered_json value) {
  nlohmann::ordered_json* at = &obj;
  std::size_t from = 0;
  for (std::size_t slash = path.find('/'); slash != std::string::npos;
       from = slash + 1, slash = path.find('/', from)) {
    nlohmann::ordered_json& next = (*at)[path.substr(from, slash - from)];
    if (!next.is_object()) next = nlohmann::ordered_json::object();
    at = &next;
  }
  (*at)[path.substr(from)] = std::move(value);
}

std::string MemoryText(std::int64_t mb) {
  static const char kUnits[] = {'M', 'G', 'T', 'P'};
  int unit = 0;
  while (mb > 0 && mb % 1024 == 0 && unit < 3) mb /= 1024, ++unit;
  return std::to_string(mb) + kUnits[unit];
}

std::string TresText(std::int64_t cpus, std::int64_t mem_mb, std::int64_t nodes,
                     std::int64_t gpus) {
  std::string out;
  auto add = [&out](const std::string& item) { out += (out.empty() ? "" : ",") + item; };
  if (cpus > 0) add("cpu=" + std::to_string(cpus));
  if (mem_mb > 0) add("mem=" + MemoryText(mem_mb));
  if (nodes > 0) add("node=" + std::to_string(nodes));
  if (cpus > 0) add("billing=" + std::to_string(cpus));  // TRESBillingWeights: CPUs only
  if (gpus > 0) add("gres/gpu=" + std::to_string(gpus));
  return out;
}

std::int64_t Int(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return 0;
  return it->get<std::int64_t>();
}

std::string Str(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

std::string ArrayTaskString(const nlohmann::json& job) {
  std::string s = Str(job, "array_task_str");
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') s = s.substr(1, s.size() - 2);
  return s;
}

std::int64_t ArrayMaxTasks(const nlohmann::json& job) {
  if (std::int64_t n = Int(job, "array_max_running"); n > 0) return n;
  std::string s = ArrayTaskString(job);
  std::size_t pct = s.find('%');
  if (pct == std::string::npos) return 0;
  try {
    return std::stoll(s.substr(pct + 1));
  } catch (...) {
    return 0;
  }
}

std::string StateReason(const nlohmann::json& job) {
  std::string state = Str(job, "state");
  if (state == "FAILED") return Int(job, "exit_code") != 0 ? "NonZeroExitCode" : "None";
  if (state == "TIMEOUT") return "TimeLimit";
  if (state == "NODE_FAIL") return "NodeDown";
  if (state == "OUT_OF_MEMORY") return "OutOfMemory";
  std::string reason = Str(job, "reason");
  return reason.empty() ? "None" : reason;
}

}  // namespace lockstep::cli::slurm_json

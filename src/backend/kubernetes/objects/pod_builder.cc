#include "backend/kubernetes/objects/pod_builder.h"

#include <cctype>

#include "backend/kubernetes/objects/pod_usage.h"
#include "backend/kubernetes/objects/quantity.h"

namespace lockstep::kube {
namespace {

using Json = nlohmann::json;

constexpr const char* kScriptDir = "/var/run/lockstep";
constexpr const char* kScriptVolume = "lockstep-script";
// The fixed launcher of batch scripts: no user text in it. $0 is "lockstep-script"; "$@" are the
// script's arguments.
// With LOCKSTEP_STDOUT (and LOCKSTEP_STDERR) set, the output goes to those files, opened as the
// job's user: `>` truncates as the agents do, `>>` appends for a requeued run (LOCKSTEP_APPEND).
constexpr const char* kLauncher =
    "f=/var/run/lockstep/script && printf '%s' \"$LOCKSTEP_SCRIPT\" > \"$f\" && "
    "chmod 0700 \"$f\" && unset LOCKSTEP_SCRIPT && "
    "if [ -n \"$LOCKSTEP_STDOUT\" ]; then "
    "if [ -n \"$LOCKSTEP_APPEND\" ]; then exec >>\"$LOCKSTEP_STDOUT\"; "
    "else exec >\"$LOCKSTEP_STDOUT\"; fi || exit 127; "
    "if [ -z \"$LOCKSTEP_STDERR\" ]; then exec 2>&1; "
    "elif [ -n \"$LOCKSTEP_APPEND\" ]; then exec 2>>\"$LOCKSTEP_STDERR\"; "
    "else exec 2>\"$LOCKSTEP_STDERR\"; fi || exit 127; fi && "
    "unset LOCKSTEP_STDOUT LOCKSTEP_STDERR LOCKSTEP_APPEND && exec \"$f\" \"$@\"";
constexpr const char* kStorageVolume = "lockstep-storage-";

bool Alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t dot = s.find('.', start);
    if (dot == std::string_view::npos) dot = s.size();
    if (!IsDns1123Label(s.substr(start, dot - start))) return false;
    start = dot + 1;
  }
  return true;
}

// Kubernetes 1.20's env var names: [-._a-zA-Z][-._a-zA-Z0-9]*.
bool IsEnvName(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!Alnum(c) && c != '-' && c != '.' && c != '_') return false;
  return true;
}

// One pod's place in the job.
struct PodSlot {
  std::int32_t rank = 0, node_index = 0, local_rank = 0;
  std::int32_t tasks_on_node = 1;  // the node's share is divided by this
};

Result<Json> Resources(const PodNodeAllocation& a, std::int32_t share, const std::string& job) {
  Json list = Json::object();
  std::int64_t milli = std::int64_t{a.cpus} * 1000 / share;
  std::int64_t mib = a.mem_mb / share;
  std::string where = "job " + job + ": node " + a.node + ": ";
  if (milli <= 0)
    return InvalidArgument(where + "no CPU for each of its " + std::to_string(share) + " tasks");
  if (a.mem_mb > 0 && mib <= 0)
    return InvalidArgument(where + "less than 1 MiB of memory for each of its tasks");
  list["cpu"] = FormatCpuMilli(milli);
  if (mib > 0) list["memory"] = FormatMemoryMiB(mib);
  std::map<std::string, std::int64_t> devices;
  for (const GpuGroup& g : a.gpus) {
    if (g.resource.empty())
      return InvalidArgument(where + "GPU type " + g.type + " without a resource name");
    devices[g.resource] += g.count;
  }
  for (const auto& [resource, count] : devices) {
    if (count % share != 0) {
      return InvalidArgument(where + std::to_string(count) + " " + resource +
                             " cannot be split evenly among " + std::to_string(share) + " tasks");
    }
    if (count > 0) list[resource] = std::to_string(count / share);
  }
  return Json{{"requests", list}, {"limits", list}};
}

Json EnvList(const JobPodsSpec& spec, const PodSlot& slot, const std::string& node,
             const std::string& master_addr) {
  std::map<std::string, std::string> env = spec.env;
  env.erase("CUDA_VISIBLE_DEVICES");
  env["SLURM_NODEID"] = std::to_string(slot.node_index);
  env["SLURM_PROCID"] = std::to_string(slot.rank);
  env["SLURM_LOCALID"] = std::to_string(slot.local_rank);
  env["RANK"] = std::to_string(slot.rank);
  env["LOCAL_RANK"] = std::to_string(slot.local_rank);
  // One pod per task: the pods of its node (a pod per node starts its local ranks itself).
  if (spec.mode == PodMode::kPerTask) env["LOCAL_WORLD_SIZE"] = std::to_string(slot.tasks_on_node);
  env["SLURMD_NODENAME"] = node;
  env["MASTER_ADDR"] = master_addr;
  if (!spec.script.empty()) env["LOCKSTEP_SCRIPT"] = spec.script;
  if (!spec.script.empty() && slot.rank == 0 && !spec.stdout_path.empty()) {
    env["LOCKSTEP_STDOUT"] = spec.stdout_path;
    if (!spec.stderr_path.empty() && spec.stderr_path != spec.stdout_path)
      env["LOCKSTEP_STDERR"] = spec.stderr_path;
    if (spec.append_output) env["LOCKSTEP_APPEND"] = "1";
  }
  Json list = Json::array();
  for (const auto& [name, value] : env)
    list.push_back({{"name", name}, {"value", EscapeDollars(value)}});
  return list;
}

Json Escaped(const std::vector<std::string>& words) {
  Json list = Json::array();
  for (const std::string& w : words) list.push_back(EscapeDollars(w));
  return list;
}

Status Validate(const JobPodsSpec& spec) {
  const std::string job = std::to_string(spec.job_id);
  if (spec.job_id == 0) return InvalidArgument("job pods: no job id");
  if (spec.image.empty()) return InvalidArgument("job " + job + ": no image");
  if (spec.allocation.empty()) return InvalidArgument("job " + job + ": empty allocation");
  if (spec.script.empty() && spec.command.empty())
    return InvalidArgument("job " + job + ": neither a script nor a command");
  if (!IsDns1123Label(spec.ns))
    return InvalidArgument("job " + job + ": namespace \"" + spec.ns +
                           "\" is not a DNS-1123 label");
  if (spec.name_prefix.empty() || !std::isalpha(static_cast<unsigned char>(spec.name_prefix[0])) ||
      !IsDns1123Label(spec.name_prefix)) {
    return InvalidArgument("job " + job + ": name prefix \"" + spec.name_prefix +
                           "\" is not a DNS-1123 label starting with a letter");
  }
  for (const auto& [k, v] : spec.labels) {
    if (!IsQualifiedName(k) || !IsLabelValue(v))
      return InvalidArgument("job " + job + ": label " + k + "=" + v + " is not a valid label");
    if (k.rfind("lockstep.dev/", 0) == 0)
      return InvalidArgument("job " + job + ": label " + k + " is lockstep's own");
  }
  for (const auto& [k, v] : spec.annotations)
    if (!IsQualifiedName(k))
      return InvalidArgument("job " + job + ": annotation key " + k + " is not valid");
  for (const auto& [k, v] : spec.env)
    if (!IsEnvName(k))
      return InvalidArgument("job " + job + ": environment variable name \"" + k +
                             "\" is not valid");
  for (const HostMount& m : spec.host_mounts) {
    const std::string& target = m.target.empty() ? m.path : m.target;
    if (m.path.size() < 2 || m.path[0] != '/' || target.size() < 2 || target[0] != '/' ||
        target == kScriptDir || target.rfind(std::string(kScriptDir) + "/", 0) == 0)
      return InvalidArgument("job " + job + ": storage path \"" + m.path + "\" at \"" + target +
                             "\" is not usable");
  }
  if (!spec.tolerations.is_array())
    return InvalidArgument("job " + job + ": tolerations must be a JSON array");
  for (const PodNodeAllocation& a : spec.allocation) {
    if (a.node.empty()) return InvalidArgument("job " + job + ": an allocated node without a name");
    if (spec.mode == PodMode::kPerTask && a.tasks <= 0)
      return InvalidArgument("job " + job + ": node " + a.node + ": no tasks");
  }
  return Status::Ok();
}

Json PodObject(const JobPodsSpec& spec, const PodSlot& slot, const PodNodeAllocation& a,
               const Json& resources, const std::string& service, const std::string& master) {
  const std::string name = JobPodName(spec.name_prefix, spec.job_id, slot.rank);
  Json labels = Json::object();
  for (const auto& [k, v] : spec.labels) labels[k] = v;
  labels[kJobIdLabel] = std::to_string(spec.job_id);
  labels[kRankLabel] = std::to_string(slot.rank);
  labels["app.kubernetes.io/managed-by"] = "lockstep";
  Json annotations = Json::object();
  for (const auto& [k, v] : spec.annotations) annotations[k] = v;
  annotations["lockstep.dev/job-name"] = spec.job_name;
  annotations["lockstep.dev/user"] = spec.user;
  annotations["lockstep.dev/partition"] = spec.partition;

  Json container = {{"name", "job"},
                    {"image", spec.image},
                    {"env", EnvList(spec, slot, a.node, master)},
                    {"resources", resources}};
  Json mounts = Json::array();
  if (!spec.script.empty()) {
    container["command"] = Escaped({"/bin/sh", "-c", kLauncher, "lockstep-script"});
    mounts.push_back({{"name", kScriptVolume}, {"mountPath", kScriptDir}});
  } else {
    container["command"] = Escaped(spec.command);
  }
  if (!spec.args.empty()) {
    if (spec.script.empty())
      container["args"] = Escaped(spec.args);
    else  // after the launcher's $0
      for (const Json& arg : Escaped(spec.args)) container["command"].push_back(arg);
  }
  if (!spec.work_dir.empty()) container["workingDir"] = spec.work_dir;
  // An ordinary user's container never becomes root (a setuid binary in the image), which
  // would own every user's files on the storage mounted into it.
  if (spec.uid != 0)
    container["securityContext"] = {{"allowPrivilegeEscalation", false},
                                    {"capabilities", {{"drop", Json::array({"ALL"})}}}};
  Json volumes = Json::array();
  if (!spec.script.empty()) volumes.push_back({{"name", kScriptVolume}, {"emptyDir", Json::object()}});
  for (std::size_t i = 0; i < spec.host_mounts.size(); ++i) {
    const HostMount& m = spec.host_mounts[i];
    const std::string volume = kStorageVolume + std::to_string(i);
    volumes.push_back({{"name", volume}, {"hostPath", {{"path", m.path}, {"type", "Directory"}}}});
    Json mount = {{"name", volume},
                  {"mountPath", m.target.empty() ? m.path : m.target},
                  {"mountPropagation", "HostToContainer"}};
    if (m.read_only) mount["readOnly"] = true;
    mounts.push_back(std::move(mount));
  }
  if (!mounts.empty()) container["volumeMounts"] = std::move(mounts);

  Json pod_spec = {
      {"nodeName", a.node},
      {"schedulerName", spec.scheduler_name},
      {"restartPolicy", "Never"},
      {"hostname", name},
      {"subdomain", service},
      {"terminationGracePeriodSeconds", spec.termination_grace},
      {"enableServiceLinks", false},
      {"automountServiceAccountToken", false},
      {"securityContext", {{"runAsUser", spec.uid}, {"runAsGroup", spec.gid}}},
      {"containers", Json::array({container})},
  };
  if (!spec.groups.empty()) pod_spec["securityContext"]["supplementalGroups"] = spec.groups;
  if (spec.time_limit > 0 && spec.time_limit < kUnlimited)
    pod_spec["activeDeadlineSeconds"] = spec.time_limit + kDeadlineSlack;
  if (!spec.tolerations.empty()) pod_spec["tolerations"] = spec.tolerations;
  if (!volumes.empty()) pod_spec["volumes"] = std::move(volumes);
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name}, {"namespace", spec.ns}, {"labels", labels}, {"annotations", annotations}}},
      {"spec", pod_spec}};
}

}  // namespace

bool IsDns1123Label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s)
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-'))
      return false;
  return s.front() != '-' && s.back() != '-';
}

bool IsLabelValue(std::string_view s) {
  if (s.empty()) return true;
  if (s.size() > 63 || !Alnum(s.front()) || !Alnum(s.back())) return false;
  for (char c : s)
    if (!Alnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

bool IsQualifiedName(std::string_view s) {
  std::size_t slash = s.find('/');
  std::string_view name = s;
  if (slash != std::string_view::npos) {
    if (!IsDns1123Subdomain(s.substr(0, slash))) return false;
    name = s.substr(slash + 1);
  }
  return !name.empty() && IsLabelValue(name);
}

std::string EscapeDollars(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    out += c;
    if (c == '$') out += '$';
  }
  return out;
}

std::string JobPodName(std::string_view prefix, JobId job, std::int32_t rank) {
  return std::string(prefix) + "-" + std::to_string(job) + "-" + std::to_string(rank);
}

std::string JobServiceName(std::string_view prefix, JobId job) {
  return std::string(prefix) + "-" + std::to_string(job);
}

Result<JobPods> BuildJobPods(const JobPodsSpec& spec) {
  LOCKSTEP_RETURN_IF_ERROR(Validate(spec));
  const std::string job = std::to_string(spec.job_id);
  JobPods out;
  out.service_name = JobServiceName(spec.name_prefix, spec.job_id);
  out.master_addr = JobPodName(spec.name_prefix, spec.job_id, 0) + "." + out.service_name;

  std::vector<std::pair<PodSlot, std::size_t>> slots;  // slot, allocation index
  std::int32_t rank = 0;
  for (std::size_t n = 0; n < spec.allocation.size(); ++n) {
    const PodNodeAllocation& a = spec.allocation[n];
    std::int32_t tasks = spec.mode == PodMode::kPerTask ? a.tasks : 1;
    for (std::int32_t local = 0; local < tasks; ++local)
      slots.push_back({{rank++, static_cast<std::int32_t>(n), local, tasks}, n});
  }
  const std::string last = JobPodName(spec.name_prefix, spec.job_id, rank - 1);
  if (!IsDns1123Label(last))
    return InvalidArgument("job " + job + ": pod name \"" + last +
                           "\" is longer than 63 characters");

  for (const auto& [slot, n] : slots) {
    const PodNodeAllocation& a = spec.allocation[n];
    Result<Json> resources = Resources(a, slot.tasks_on_node, job);
    if (!resources.ok()) return resources.status();
    out.pods.push_back(PodObject(spec, slot, a, *resources, out.service_name, out.master_addr));
  }

  Json service_spec = {{"clusterIP", "None"},
                       {"selector", {{kJobIdLabel, job}}},
                       {"publishNotReadyAddresses", true}};
  if (spec.master_port > 0) {
    service_spec["ports"] = Json::array({{{"name", "master"},
                                          {"port", spec.master_port},
                                          {"targetPort", spec.master_port},
                                          {"protocol", "TCP"}}});
  }
  out.service = {{"apiVersion", "v1"},
                 {"kind", "Service"},
                 {"metadata",
                  {{"name", out.service_name},
                   {"namespace", spec.ns},
                   {"labels", {{kJobIdLabel, job}, {"app.kubernetes.io/managed-by", "lockstep"}}}}},
                 {"spec", service_spec}};
  return out;
}

}  // namespace lockstep::kube

// JobSpec as JSON: the REST API's submit body. Keys are the field names of job_spec.h, in
// declaration order; enum values are Slurm's words ("afterok"). See docs/api.md.
#include <fmt/format.h>

#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "jobspec/job_spec.h"
#include "jobspec/sbatch_internal.h"

namespace lockstep::jobspec {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

struct DependencyName {
  DependencyType type;
  std::string_view name;
};
constexpr DependencyName kDependencyNames[] = {
    {DependencyType::kAfter, "after"},         {DependencyType::kAfterAny, "afterany"},
    {DependencyType::kAfterOk, "afterok"},     {DependencyType::kAfterNotOk, "afternotok"},
    {DependencyType::kSingleton, "singleton"}, {DependencyType::kAfterCorr, "aftercorr"},
};

std::string_view DependencyTypeName(DependencyType t) {
  for (const DependencyName& d : kDependencyNames) {
    if (d.type == t) return d.name;
  }
  return "afterany";
}

Status TypeError(const std::string& path, std::string_view what) {
  return InvalidArgument(fmt::format("job spec: '{}' must be {}", path, what));
}

template <typename T>
Status ReadInt(const Json& v, const std::string& path, T& out) {
  if (!v.is_number_integer()) return TypeError(path, "an integer");
  constexpr auto kMin = std::numeric_limits<T>::min();
  constexpr auto kMax = std::numeric_limits<T>::max();
  bool fits = false;
  if (v.is_number_unsigned()) {
    fits = v.get<std::uint64_t>() <= static_cast<std::uint64_t>(kMax);
  } else {
    const std::int64_t i = v.get<std::int64_t>();
    fits = i >= 0 ? static_cast<std::uint64_t>(i) <= static_cast<std::uint64_t>(kMax)
                  : std::is_signed_v<T> && i >= static_cast<std::int64_t>(kMin);
  }
  if (!fits) return TypeError(path, fmt::format("an integer from {} to {}", kMin, kMax));
  out = v.get<T>();
  return Status::Ok();
}

Status ReadBool(const Json& v, const std::string& path, bool& out) {
  if (!v.is_boolean()) return TypeError(path, "true or false");
  out = v.get<bool>();
  return Status::Ok();
}

Status ReadString(const Json& v, const std::string& path, std::string& out) {
  if (!v.is_string()) return TypeError(path, "a string");
  out = v.get<std::string>();
  return Status::Ok();
}

Status ReadStringList(const Json& v, const std::string& path, std::vector<std::string>& out) {
  if (!v.is_array()) return TypeError(path, "an array of strings");
  out.clear();
  for (std::size_t i = 0; i < v.size(); ++i) {
    LOCKSTEP_RETURN_IF_ERROR(ReadString(v[i], fmt::format("{}[{}]", path, i), out.emplace_back()));
  }
  return Status::Ok();
}

Status ReadStringMap(const Json& v, const std::string& path,
                     std::map<std::string, std::string>& out) {
  if (!v.is_object()) return TypeError(path, "an object of strings");
  out.clear();
  for (const auto& [k, val] : v.items()) {
    LOCKSTEP_RETURN_IF_ERROR(ReadString(val, path + "." + k, out[k]));
  }
  return Status::Ok();
}

using FieldReader = std::function<Status(const Json&, const std::string&)>;

// Reads an object whose keys must all be in fields.
Status ReadObject(const Json& v, const std::string& path,
                  const std::map<std::string_view, FieldReader>& fields) {
  if (!v.is_object()) return TypeError(path.empty() ? "job spec" : path, "an object");
  for (const auto& [key, val] : v.items()) {
    const std::string p = path.empty() ? key : path + "." + key;
    auto it = fields.find(key);
    if (it == fields.end()) return InvalidArgument(fmt::format("job spec: unknown key '{}'", p));
    LOCKSTEP_RETURN_IF_ERROR(it->second(val, p));
  }
  return Status::Ok();
}

Status ReadArraySpec(const Json& v, const std::string& path, std::optional<ArraySpec>& out) {
  if (v.is_null()) {
    out.reset();
    return Status::Ok();
  }
  ArraySpec a;
  LOCKSTEP_RETURN_IF_ERROR(ReadObject(
      v, path,
      {
          {"indices",
           [&](const Json& x, const std::string& p) -> Status {
             if (!x.is_array()) return TypeError(p, "an array of integers");
             for (std::size_t i = 0; i < x.size(); ++i) {
               LOCKSTEP_RETURN_IF_ERROR(
                   ReadInt(x[i], fmt::format("{}[{}]", p, i), a.indices.emplace_back()));
             }
             return Status::Ok();
           }},
          {"max_running",
           [&](const Json& x, const std::string& p) { return ReadInt(x, p, a.max_running); }},
          {"text", [&](const Json& x, const std::string& p) { return ReadString(x, p, a.text); }},
      }));
  // The text is what is written back (JobSpecToJson), so indices given with a text must be the
  // text's own: otherwise the job would change its tasks when its record is read again.
  if (!a.text.empty()) {
    Result<ArraySpec> expanded = sbatch_internal::ParseArray(a.text);
    if (!expanded.ok()) {
      return InvalidArgument("job spec: '" + path + ".text': " + a.text + " " +
                             expanded.status().message());
    }
    if (!a.indices.empty() && a.indices != expanded->indices) {
      return InvalidArgument("job spec: '" + path + ".indices' are not those of '" + path +
                             ".text' (" + a.text + ")");
    }
    a.indices = std::move(expanded->indices);
    if (a.max_running == 0) a.max_running = expanded->max_running;
  }
  out = std::move(a);
  return Status::Ok();
}

Status ReadDependency(const Json& v, const std::string& path, DependencySpec& d) {
  return ReadObject(
      v, path,
      {
          {"type",
           [&](const Json& x, const std::string& p) -> Status {
             if (x.is_string()) {
               for (const DependencyName& n : kDependencyNames) {
                 if (x.get<std::string>() == n.name) {
                   d.type = n.type;
                   return Status::Ok();
                 }
               }
             }
             return TypeError(
                 p, "one of after, afterany, afterok, afternotok, singleton, aftercorr");
           }},
          {"job", [&](const Json& x, const std::string& p) { return ReadInt(x, p, d.job); }},
          {"array_task",
           [&](const Json& x, const std::string& p) { return ReadInt(x, p, d.array_task); }},
          {"has_task",
           [&](const Json& x, const std::string& p) { return ReadBool(x, p, d.has_task); }},
          {"delay_minutes",
           [&](const Json& x, const std::string& p) { return ReadInt(x, p, d.delay_minutes); }},
      });
}

Status ReadDependencies(const Json& v, const std::string& path, std::vector<DependencySpec>& out) {
  if (!v.is_array()) return TypeError(path, "an array of dependencies");
  out.clear();
  for (std::size_t i = 0; i < v.size(); ++i) {
    LOCKSTEP_RETURN_IF_ERROR(
        ReadDependency(v[i], fmt::format("{}[{}]", path, i), out.emplace_back()));
  }
  return Status::Ok();
}

Status ReadOptionalBool(const Json& v, const std::string& path, std::optional<bool>& out) {
  if (v.is_null()) {
    out.reset();
    return Status::Ok();
  }
  if (!v.is_boolean()) return TypeError(path, "true, false or null");
  out = v.get<bool>();
  return Status::Ok();
}

Status ReadHetComponents(const Json& v, const std::string& path, std::vector<JobSpec>& out);

// The readers of every JobSpec field, by key.
std::map<std::string_view, FieldReader> SpecFields(JobSpec& s) {
  auto str = [](std::string& f) {
    return [&f](const Json& x, const std::string& p) { return ReadString(x, p, f); };
  };
  auto num = [](auto& f) {
    return [&f](const Json& x, const std::string& p) { return ReadInt(x, p, f); };
  };
  auto flag = [](bool& f) {
    return [&f](const Json& x, const std::string& p) { return ReadBool(x, p, f); };
  };
  return {
      {"name", str(s.name)},
      {"partition", str(s.partition)},
      {"account", str(s.account)},
      {"qos", str(s.qos)},
      {"reservation", str(s.reservation)},
      {"min_nodes", num(s.min_nodes)},
      {"max_nodes", num(s.max_nodes)},
      {"ntasks", num(s.ntasks)},
      {"ntasks_per_node", num(s.ntasks_per_node)},
      {"cpus_per_task", num(s.cpus_per_task)},
      {"cpus_per_gpu", num(s.cpus_per_gpu)},
      {"mem_mb", num(s.mem_mb)},
      {"mem_whole_node", flag(s.mem_whole_node)},
      {"mem_per_cpu_mb", num(s.mem_per_cpu_mb)},
      {"mem_per_gpu_mb", num(s.mem_per_gpu_mb)},
      {"gpus", num(s.gpus)},
      {"gpus_per_node", num(s.gpus_per_node)},
      {"gpus_per_task", num(s.gpus_per_task)},
      {"gpu_type", str(s.gpu_type)},
      {"exclusive", flag(s.exclusive)},
      {"exclusive_user", flag(s.exclusive_user)},
      {"constraint", str(s.constraint)},
      {"nodelist", str(s.nodelist)},
      {"exclude", str(s.exclude)},
      {"max_switches", num(s.max_switches)},
      {"switches_wait", num(s.switches_wait)},
      {"time_limit", num(s.time_limit)},
      {"begin_time", num(s.begin_time)},
      {"signal_number", num(s.signal_number)},
      {"signal_time", num(s.signal_time)},
      {"signal_batch_only", flag(s.signal_batch_only)},
      {"array", [&s](const Json& x, const std::string& p) { return ReadArraySpec(x, p, s.array); }},
      {"dependencies",
       [&s](const Json& x, const std::string& p) {
         return ReadDependencies(x, p, s.dependencies);
       }},
      {"dependencies_any", flag(s.dependencies_any)},
      {"requeue",
       [&s](const Json& x, const std::string& p) { return ReadOptionalBool(x, p, s.requeue); }},
      {"hold", flag(s.hold)},
      {"nice", num(s.nice)},
      {"work_dir", str(s.work_dir)},
      {"output", str(s.output)},
      {"error", str(s.error)},
      {"export_mode", str(s.export_mode)},
      {"environment",
       [&s](const Json& x, const std::string& p) { return ReadStringMap(x, p, s.environment); }},
      {"script", str(s.script)},
      {"script_args",
       [&s](const Json& x, const std::string& p) { return ReadStringList(x, p, s.script_args); }},
      {"container_image", str(s.container_image)},
      {"container_mounts", str(s.container_mounts)},
      {"external", str(s.external)},
      {"submit_line", str(s.submit_line)},
      {"parsable", flag(s.parsable)},
      {"warnings",
       [&s](const Json& x, const std::string& p) { return ReadStringList(x, p, s.warnings); }},
      {"het_components",
       [&s](const Json& x, const std::string& p) {
         return ReadHetComponents(x, p, s.het_components);
       }},
  };
}

// A heterogeneous job's further components: objects of the same keys, none with components.
Status ReadHetComponents(const Json& v, const std::string& path, std::vector<JobSpec>& out) {
  if (!v.is_array()) return TypeError(path, "an array of job specs");
  if (v.size() + 1 > kMaxHetComponents)
    return InvalidArgument(fmt::format("job spec: '{}' has {} components; at most {} are allowed",
                                       path, v.size() + 1, kMaxHetComponents));
  out.clear();
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", path, i);
    if (!v[i].is_object()) return TypeError(at, "a job spec object");
    if (v[i].contains("het_components"))
      return InvalidArgument(
          fmt::format("job spec: '{}' has components of its own; components are not nested", at));
    LOCKSTEP_RETURN_IF_ERROR(ReadObject(v[i], at, SpecFields(out.emplace_back())));
  }
  return Status::Ok();
}

}  // namespace

namespace {

OrderedJson SpecToOrderedJson(const JobSpec& s) {
  OrderedJson j;
  j["name"] = s.name;
  j["partition"] = s.partition;
  j["account"] = s.account;
  j["qos"] = s.qos;
  if (!s.reservation.empty()) j["reservation"] = s.reservation;
  j["min_nodes"] = s.min_nodes;
  j["max_nodes"] = s.max_nodes;
  j["ntasks"] = s.ntasks;
  j["ntasks_per_node"] = s.ntasks_per_node;
  j["cpus_per_task"] = s.cpus_per_task;
  if (s.cpus_per_gpu > 0) j["cpus_per_gpu"] = s.cpus_per_gpu;
  j["mem_mb"] = s.mem_mb;
  if (s.mem_whole_node) j["mem_whole_node"] = true;
  j["mem_per_cpu_mb"] = s.mem_per_cpu_mb;
  j["mem_per_gpu_mb"] = s.mem_per_gpu_mb;
  j["gpus"] = s.gpus;
  j["gpus_per_node"] = s.gpus_per_node;
  j["gpus_per_task"] = s.gpus_per_task;
  j["gpu_type"] = s.gpu_type;
  j["exclusive"] = s.exclusive;
  if (s.exclusive_user) j["exclusive_user"] = true;
  j["constraint"] = s.constraint;
  j["nodelist"] = s.nodelist;
  j["exclude"] = s.exclude;
  j["max_switches"] = s.max_switches;
  j["switches_wait"] = s.switches_wait;
  j["time_limit"] = s.time_limit;
  j["begin_time"] = s.begin_time;
  if (s.signal_number != 0) {
    j["signal_number"] = s.signal_number;
    j["signal_time"] = s.signal_time;
    j["signal_batch_only"] = s.signal_batch_only;
  }
  if (s.array) {
    // An array is written as its text ("0-3999999%10"), which the reader expands: a list of
    // every index would make each task's record as long as the array (quadratic in the store)
    // and a large array's request longer than the API's body limit. Indices without a text
    // (built by hand) are written out.
    j["array"] = {{"max_running", s.array->max_running}, {"text", s.array->text}};
    if (s.array->text.empty()) j["array"]["indices"] = s.array->indices;
  } else {
    j["array"] = nullptr;
  }
  j["dependencies"] = OrderedJson::array();
  for (const DependencySpec& d : s.dependencies) {
    OrderedJson dep = {{"type", DependencyTypeName(d.type)},
                       {"job", d.job},
                       {"array_task", d.array_task},
                       {"has_task", d.has_task}};
    if (d.delay_minutes != 0) dep["delay_minutes"] = d.delay_minutes;
    j["dependencies"].push_back(std::move(dep));
  }
  j["dependencies_any"] = s.dependencies_any;
  j["requeue"] = s.requeue ? OrderedJson(*s.requeue) : OrderedJson(nullptr);
  j["hold"] = s.hold;
  j["nice"] = s.nice;
  j["work_dir"] = s.work_dir;
  j["output"] = s.output;
  j["error"] = s.error;
  j["export_mode"] = s.export_mode;
  j["environment"] = s.environment;
  j["script"] = s.script;
  j["script_args"] = s.script_args;
  j["container_image"] = s.container_image;
  if (!s.container_mounts.empty()) j["container_mounts"] = s.container_mounts;
  if (!s.external.empty()) j["external"] = s.external;
  if (!s.submit_line.empty()) j["submit_line"] = s.submit_line;
  j["parsable"] = s.parsable;
  j["warnings"] = s.warnings;
  if (!s.het_components.empty()) {
    j["het_components"] = OrderedJson::array();
    for (const JobSpec& c : s.het_components) j["het_components"].push_back(SpecToOrderedJson(c));
  }
  return j;
}

}  // namespace

std::string JobSpecToJson(const JobSpec& s) {
  const OrderedJson j = SpecToOrderedJson(s);
  // Bytes that are not UTF-8 become U+FFFD rather than an exception. Validate (validate.h)
  // refuses them where they would change what runs (the script...); the environment may have
  // some.
  return j.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

namespace {

// Where in `text` a number too large for a double stands ("ntasks", "dependencies[0].job"):
// `text` parsed again with a callback that follows the keys and array positions, up to the
// number, whose parse throws again. Only called once a parse failed so.
std::string PathOfOverflow(std::string_view text) {
  struct Frame {
    bool array = false;
    std::size_t elements = 0;  // an array's completed elements
    std::string key;           // an object's current key
  };
  std::vector<Frame> frames;
  auto element_done = [&frames] {
    if (!frames.empty() && frames.back().array) ++frames.back().elements;
  };
  Json::parser_callback_t follow = [&](int, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
        frames.push_back({false, 0, ""});
        break;
      case Json::parse_event_t::array_start:
        frames.push_back({true, 0, ""});
        break;
      case Json::parse_event_t::key:
        if (!frames.empty() && parsed.is_string()) frames.back().key = parsed.get<std::string>();
        break;
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!frames.empty()) frames.pop_back();
        element_done();
        break;
      case Json::parse_event_t::value:
        element_done();
        break;
    }
    return true;
  };
  try {
    (void)Json::parse(text, follow);
  } catch (const Json::exception&) {
  }
  std::string path;
  for (const Frame& f : frames) {
    if (f.array)
      path += "[" + std::to_string(f.elements) + "]";
    else
      path += (path.empty() ? "" : ".") + f.key;
  }
  return path;
}

}  // namespace

Result<JobSpec> JobSpecFromJson(std::string_view text) {
  try {
    Json j;
    try {
      j = Json::parse(text);
    } catch (const Json::out_of_range&) {  // 406: a number beyond a double's range (1e999)
      const std::string path = PathOfOverflow(text);
      if (path.empty()) return InvalidArgument("job spec: a number out of range");
      return InvalidArgument(fmt::format("job spec: '{}' is a number out of range", path));
    } catch (const Json::parse_error& e) {
      std::string what = e.what();
      if (const std::size_t close = what.find("] "); close != std::string::npos) {
        what = what.substr(close + 2);
      }
      return InvalidArgument("job spec: invalid JSON: " + what);
    }
    if (!j.is_object()) return InvalidArgument("job spec: must be a JSON object");
    JobSpec spec;
    LOCKSTEP_RETURN_IF_ERROR(ReadObject(j, "", SpecFields(spec)));
    return spec;
  } catch (const Json::exception& e) {  // a bug above; never let it cross the boundary
    return Internal(fmt::format("job spec: {}", e.what()));
  }
}

}  // namespace lockstep::jobspec

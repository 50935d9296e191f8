#include "controller/health_book.h"

namespace lockstep::controller {

std::string HealthBook::KeyOf(const std::string& serial, const std::string& uuid) {
  return !serial.empty() ? serial : uuid;
}

nlohmann::json FailureJson(const HealthFailure& f) {
  nlohmann::json j = {{"time", f.time}, {"host", f.host}, {"what", f.what}};
  if (f.gpu >= 0) j["gpu"] = f.gpu;
  if (f.job != 0) j["job_id"] = f.job;
  return j;
}

nlohmann::json GpuRecordJson(const GpuRecord& g) {
  nlohmann::json failures = nlohmann::json::array();
  for (const HealthFailure& f : g.failures) failures.push_back(FailureJson(f));
  return {{"serial", g.serial},     {"uuid", g.uuid},         {"host", g.host},
          {"index", g.index},       {"hosts", g.hosts},       {"failures", failures},
          {"excluded", g.excluded}, {"cleared_at", g.cleared_at}};
}

nlohmann::json NodeRecordJson(const NodeRecord& n) {
  nlohmann::json failures = nlohmann::json::array();
  for (const HealthFailure& f : n.failures) failures.push_back(FailureJson(f));
  return {{"name", n.name}, {"failures", failures}};
}

namespace {

std::vector<HealthFailure> FailuresFrom(const nlohmann::json& list) {
  std::vector<HealthFailure> out;
  for (const auto& f : list)
    out.push_back({f.at("time").get<Time>(), f.at("host").get<std::string>(), f.value("gpu", -1),
                   f.at("what").get<std::string>(), f.value("job_id", JobId{0})});
  return out;
}

}  // namespace

Result<GpuRecord> GpuRecordFromJson(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    GpuRecord g;
    g.serial = j.at("serial").get<std::string>();
    g.uuid = j.at("uuid").get<std::string>();
    g.host = j.at("host").get<std::string>();
    g.index = j.at("index").get<std::int32_t>();
    g.hosts = j.at("hosts").get<std::set<std::string>>();
    g.failures = FailuresFrom(j.at("failures"));
    g.excluded = j.at("excluded").get<bool>();
    g.cleared_at = j.at("cleared_at").get<Time>();
    return g;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("health_gpus record: ") + e.what());
  }
}

Result<NodeRecord> NodeRecordFromJson(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    NodeRecord n;
    n.name = j.at("name").get<std::string>();
    n.failures = FailuresFrom(j.at("failures"));
    return n;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("health_nodes record: ") + e.what());
  }
}

}  // namespace lockstep::controller

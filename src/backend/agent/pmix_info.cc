#include "backend/agent/pmix_info.h"

#include <pmix.h>
#include <pmix_server.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

namespace lockstep::agent {

InfoList::~InfoList() {
  for (pmix_info_t& info : infos_) PMIX_INFO_DESTRUCT(&info);
}

InfoList::InfoList(InfoList&& other) noexcept : infos_(std::move(other.infos_)) {
  other.infos_.clear();
}

pmix_info_t& InfoList::Next(const char* key) {
  infos_.emplace_back();
  pmix_info_t& info = infos_.back();
  PMIX_INFO_CONSTRUCT(&info);
  PMIX_LOAD_KEY(info.key, key);
  return info;
}

void InfoList::String(const char* key, const std::string& value) {
  (void)PMIx_Info_load(&Next(key), key, value.c_str(), PMIX_STRING);
}

void InfoList::Uint32(const char* key, std::uint32_t value) {
  (void)PMIx_Info_load(&Next(key), key, &value, PMIX_UINT32);
}

void InfoList::Uint16(const char* key, std::uint16_t value) {
  (void)PMIx_Info_load(&Next(key), key, &value, PMIX_UINT16);
}

void InfoList::Rank(const char* key, std::uint32_t value) {
  pmix_rank_t rank = value;
  (void)PMIx_Info_load(&Next(key), key, &rank, PMIX_PROC_RANK);
}

void InfoList::Bool(const char* key, bool value) {
  (void)PMIx_Info_load(&Next(key), key, &value, PMIX_BOOL);
}

void InfoList::Regex(const char* key, char* regex) {
  (void)PMIx_Info_load(&Next(key), key, regex, PMIX_REGEX);
}

void InfoList::Array(const char* key, InfoList& items) {
  // The value takes the infos themselves: a data array that owns them.
  pmix_data_array_t* array = nullptr;
  PMIX_DATA_ARRAY_CREATE(array, items.size(), PMIX_INFO);
  auto* dest = static_cast<pmix_info_t*>(array->array);
  for (std::size_t i = 0; i < items.size(); ++i) PMIX_INFO_XFER(&dest[i], &items.infos_[i]);
  pmix_info_t& info = Next(key);
  info.value.type = PMIX_DATA_ARRAY;
  info.value.data.darray = array;
}

namespace {

std::string Join(const std::vector<int>& ranks, const char* sep) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : sep) + std::to_string(r);
  return out;
}

// PMIx_generate_regex / PMIx_generate_ppn: the result is the library's to free with free().
Result<char*> Generate(pmix_status_t (*fn)(const char*, char**), const std::string& input) {
  char* out = nullptr;
  const pmix_status_t rc = fn(input.c_str(), &out);
  if (rc != PMIX_SUCCESS || out == nullptr)
    return Internal("PMIx cannot encode the step's layout (" + input + "): " +
                    PMIx_Error_string(rc));
  return out;
}

}  // namespace

std::vector<MpiHost> MpiHostsOf(const MpiStepLayout& layout, const std::set<std::string>& local) {
  std::vector<MpiHost> hosts;
  std::map<std::string, std::size_t> by_agent;
  for (const MpiNode& n : layout.nodes) {
    auto [it, fresh] = by_agent.emplace(n.agent.empty() ? "node:" + n.node : n.agent, hosts.size());
    if (fresh) hosts.push_back({n.node, {}, false});
    MpiHost& h = hosts[it->second];
    h.ranks.insert(h.ranks.end(), n.ranks.begin(), n.ranks.end());
    h.local |= local.count(n.node) > 0;
  }
  for (MpiHost& h : hosts) std::sort(h.ranks.begin(), h.ranks.end());
  return hosts;
}

Result<InfoList> NamespaceInfo(const MpiStepLayout& layout,
                               const std::set<std::string>& local_nodes) {
  const std::vector<MpiHost> hosts = MpiHostsOf(layout, local_nodes);
  const auto self =
      std::find_if(hosts.begin(), hosts.end(), [](const MpiHost& h) { return h.local; });
  if (self == hosts.end())
    return InvalidArgument("step " + layout.nspace() + " has no task on this agent's nodes");
  const auto size = static_cast<std::uint32_t>(layout.size());
  std::string names, ppn;
  for (const MpiHost& h : hosts) {
    names += (names.empty() ? "" : ",") + h.name;
    ppn += (ppn.empty() ? "" : ";") + Join(h.ranks, ",");
  }
  LOCKSTEP_ASSIGN_OR_RETURN(node_map, Generate(PMIx_generate_regex, names));
  LOCKSTEP_ASSIGN_OR_RETURN(proc_map, Generate(PMIx_generate_ppn, ppn));
  InfoList info;
  info.Uint32(PMIX_UNIV_SIZE, size);
  info.Uint32(PMIX_JOB_SIZE, size);
  info.Uint32(PMIX_MAX_PROCS, size);
  info.String(PMIX_JOBID, std::to_string(layout.job) + "." + std::to_string(layout.step));
  info.Uint32(PMIX_APPNUM, 0);
  info.Uint32(PMIX_APP_SIZE, size);
  info.Rank(PMIX_APPLDR, 0);
  info.Uint32(PMIX_NUM_NODES, static_cast<std::uint32_t>(hosts.size()));
  info.Regex(PMIX_NODE_MAP, node_map);
  info.Regex(PMIX_PROC_MAP, proc_map);
  std::free(node_map);
  std::free(proc_map);
  // This host's.
  info.String(PMIX_HOSTNAME, self->name);
  info.Uint32(PMIX_NODEID, static_cast<std::uint32_t>(self - hosts.begin()));
  info.String(PMIX_LOCAL_PEERS, Join(self->ranks, ","));
  info.Uint32(PMIX_LOCAL_SIZE, static_cast<std::uint32_t>(self->ranks.size()));
  info.Uint32(PMIX_NODE_SIZE, static_cast<std::uint32_t>(self->ranks.size()));
  info.Rank(PMIX_LOCALLDR, static_cast<std::uint32_t>(self->ranks.front()));
  // Each rank's.
  for (std::size_t id = 0; id < hosts.size(); ++id) {
    const MpiHost& h = hosts[id];
    for (std::size_t local = 0; local < h.ranks.size(); ++local) {
      InfoList proc;
      proc.Rank(PMIX_RANK, static_cast<std::uint32_t>(h.ranks[local]));
      proc.Uint32(PMIX_APPNUM, 0);
      proc.Rank(PMIX_GLOBAL_RANK, static_cast<std::uint32_t>(h.ranks[local]));
      proc.Rank(PMIX_APP_RANK, static_cast<std::uint32_t>(h.ranks[local]));
      proc.Uint16(PMIX_LOCAL_RANK, static_cast<std::uint16_t>(local));
      proc.Uint16(PMIX_NODE_RANK, static_cast<std::uint16_t>(local));
      proc.Uint32(PMIX_NODEID, static_cast<std::uint32_t>(id));
      proc.String(PMIX_HOSTNAME, h.name);
      info.Array(PMIX_PROC_DATA, proc);
    }
  }
  return info;
}

}  // namespace lockstep::agent

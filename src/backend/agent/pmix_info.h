// The PMIx values of a step's namespace (pmix_server.h): what every task of the step reads
// through PMIx_Get (its size, ranks, nodes, local peers), built from the step's layout.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "backend/agent/pmix_server.h"
#include "common/status.h"

namespace lockstep::agent {

// An array of pmix_info_t that owns its values (PMIx_Info_load copies them in).
// Not thread-safe; movable, not copyable.
class InfoList {
 public:
  InfoList() = default;
  ~InfoList();
  InfoList(InfoList&& other) noexcept;
  InfoList& operator=(InfoList&&) = delete;
  InfoList(const InfoList&) = delete;

  void String(const char* key, const std::string& value);
  void Uint32(const char* key, std::uint32_t value);
  void Uint16(const char* key, std::uint16_t value);
  void Rank(const char* key, std::uint32_t value);
  void Bool(const char* key, bool value);
  // A regex of PMIx_generate_regex or PMIx_generate_ppn (which may be binary).
  void Regex(const char* key, char* regex);
  // An array of infos under `key` (PMIX_PROC_DATA); `items` is moved from.
  void Array(const char* key, InfoList& items);

  pmix_info_t* data() { return infos_.data(); }
  std::size_t size() const { return infos_.size(); }

 private:
  pmix_info_t& Next(const char* key);
  std::vector<pmix_info_t> infos_;
};

// The namespace's values: the job's (sizes, node and proc maps), this host's (local peers,
// size, leader, node id) and each rank's (local and node rank, node id, host name).
// `local_nodes`: the nodes this agent serves.
Result<InfoList> NamespaceInfo(const MpiStepLayout& layout,
                               const std::set<std::string>& local_nodes);

}  // namespace lockstep::agent

// Fuzzes hostlist expansion, and checks that compressing what was expanded and expanding again
// gives the same set of hosts.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/hostlist.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  lockstep::Result<std::vector<std::string>> hosts = lockstep::ExpandHostlist(text);
  if (!hosts.ok()) {
    FUZZ_CHECK(hosts.status().message().find("invalid hostlist") == 0);
    return 0;
  }
  FUZZ_CHECK(!hosts->empty() && hosts->size() <= lockstep::kMaxHostlistHosts);
  if (hosts->size() > 100000) return 0;  // keep iterations fast; the size check is done
  const std::string compressed = lockstep::CompressHostlist(*hosts);
  lockstep::Result<std::vector<std::string>> again = lockstep::ExpandHostlist(compressed);
  FUZZ_CHECK(again.ok());
  const std::set<std::string> want(hosts->begin(), hosts->end());
  const std::set<std::string> got(again->begin(), again->end());
  FUZZ_CHECK(want == got);
  FUZZ_CHECK(got.size() == again->size());  // compression drops duplicates
  return 0;
}

// `lockstep storage`: the cluster's shared file systems, where nodes and jobs see them, and who
// gets them (docs/storage.md).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/format/field_format.h"
#include "client/api_client.h"

namespace lockstep::cli {

int RunStorage(int argc, char** argv) {
  CLI::App app{"The cluster's shared file systems", "lockstep storage"};
  bool json = false;
  app.add_flag("--json", json, "the API's JSON");
  CLI11_PARSE(app, argc, argv);
  client::ApiClient api;
  Result<nlohmann::json> r = api.Get("/api/v1/storage");
  if (!r.ok()) return Fail("lockstep storage", r.status());
  if (json) {
    std::cout << r->dump(2) << "\n";
    return 0;
  }
  std::printf("%-24s %-34s %-9s %-3s %-28s %s\n", "NAME", "PATH", "KIND", "RW", "SOURCE",
              "NODES");
  for (const nlohmann::json& fs : (*r)["storage"]) {
    const std::string source = JStr(fs, "kind") == "host_path" ? "-" : JStr(fs, "source");
    std::printf("%-24s %-34s %-9s %-3s %-28s %s\n", JStr(fs, "display_name").c_str(),
                JStr(fs, "path").c_str(), JStr(fs, "kind").c_str(),
                fs.value("read_only", false) ? "ro" : "rw", source.c_str(),
                JStr(fs, "nodes").c_str());
  }
  return 0;
}

}  // namespace lockstep::cli

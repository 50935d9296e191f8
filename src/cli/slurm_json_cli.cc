#include "cli/slurm_json_cli.h"

#include <cstdio>
#include <ctime>

#include "cli/cli_util.h"
#include "cli/format/slurm_yaml.h"

namespace lockstep::cli {

SlurmJsonContext CliSlurmJsonContext() {
  SlurmJsonContext ctx;
  ctx.now = std::time(nullptr);
  ctx.group_name = [](std::int64_t gid) { return GroupName(static_cast<unsigned>(gid)); };
  return ctx;
}

int PrintSlurmJson(const char* command, const Result<nlohmann::ordered_json>& doc, bool yaml) {
  if (!doc.ok()) return Fail(command, doc.status());
  std::string text = yaml ? SlurmYaml(*doc) : doc->dump(2) + '\n';
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return 0;
}

int StreamSlurmJson(const char* command,
                    const std::function<Status(const TextSink&)>& write_document) {
  Status s = write_document(
      [](std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); });
  if (!s.ok()) return Fail(command, s);
  std::fflush(stdout);
  return 0;
}

}  // namespace lockstep::cli

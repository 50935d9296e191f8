// The cluster YAML's `prolog:` and `epilog:` (JobHooksConfig): a path, or a map with `program`
// and `timeout`.
#include "config/cluster_config_parser.h"

namespace lockstep::config {

void ClusterConfigParser::ReadJobHook(const YAML::Node& node, const std::string& key,
                                      JobHook& hook) {
  if (reader_.failed() || !node.IsDefined() || node.IsNull()) return;
  if (node.IsScalar()) {
    hook.program = node.as<std::string>();
    if (hook.program.empty() || hook.program[0] != '/')
      reader_.Fail(node.Mark(), key, "must be an absolute path (or a map: program, timeout)");
    return;
  }
  MapView m(reader_, node, key);
  hook.program = m.RequiredString("program");
  if (!reader_.failed() && hook.program[0] != '/') m.Fail("program", "must be an absolute path");
  hook.timeout = m.DurationSeconds("timeout", hook.timeout);
  if (hook.timeout < 1 || hook.timeout > 86400) m.Fail("timeout", "must be from 1 s to 1 day");
  m.Finish();
}

}  // namespace lockstep::config

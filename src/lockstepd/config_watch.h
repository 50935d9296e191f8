// lockstepd's watch on its cluster YAML: the parts that may change while it runs (the storage
// list, docs/storage.md) are applied without a restart. The file is read again every period;
// when its text changed and it parses, `changed` gets the new configuration; when it does not
// parse, the error (file, line, key) is logged and nothing changes. On Kubernetes the file is a
// ConfigMap's volume, which the kubelet replaces by a symbolic link swap: reading the text,
// rather than watching an inode, sees it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "config/cluster_config.h"

namespace lockstep::lockstepd {

class ConfigWatch {
 public:
  using Changed = std::function<void(const config::ClusterConfig&)>;
  // Starts watching `path` (parsed with `backend` as LoadClusterConfig does). `changed` runs on
  // the watch's own thread.
  ConfigWatch(std::string path, std::string backend, std::chrono::milliseconds period,
              Changed changed);
  ~ConfigWatch();  // stops and joins the thread
  ConfigWatch(const ConfigWatch&) = delete;
  ConfigWatch& operator=(const ConfigWatch&) = delete;

 private:
  void Loop();
  const std::string path_, backend_;
  const std::chrono::milliseconds period_;
  const Changed changed_;
  std::string text_;  // the text last applied (only the thread)
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace lockstep::lockstepd

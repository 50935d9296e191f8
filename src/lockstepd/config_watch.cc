#include "lockstepd/config_watch.h"

#include <fstream>
#include <sstream>

#include "common/log.h"

namespace lockstep::lockstepd {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return in ? text.str() : std::string();
}

}  // namespace

ConfigWatch::ConfigWatch(std::string path, std::string backend, std::chrono::milliseconds period,
                         Changed changed)
    : path_(std::move(path)),
      backend_(std::move(backend)),
      period_(period),
      changed_(std::move(changed)),
      text_(ReadText(path_)),
      thread_([this] { Loop(); }) {}

ConfigWatch::~ConfigWatch() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ConfigWatch::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, period_, [this] { return stopping_; })) {
    lock.unlock();
    const std::string text = ReadText(path_);
    if (!text.empty() && text != text_) {
      text_ = text;
      Result<config::ClusterConfig> c = config::ParseClusterConfig(text, path_, backend_);
      if (c.ok())
        changed_(*c);
      else
        log::Error("{} changed but is not applied: {}", path_, c.status().message());
    }
    lock.lock();
  }
}

}  // namespace lockstep::lockstepd

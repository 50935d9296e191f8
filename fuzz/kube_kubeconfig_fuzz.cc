// Fuzzes kubeconfig parsing (client/kubeconfig.h: ParseKubeConfig, which LoadKubeConfigFile
// calls on the file's text). The kubeconfig sits in a temporary directory that holds the files
// the seeds name relatively (ca.crt, token.txt), so that file references are followed too.
// Properties: nothing crashes or throws (yaml-cpp throws; nothing of it may leave the call);
// every error names the file; a config that parses has an https:// server, and a client
// certificate only with its key.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "backend/kubernetes/client/kubeconfig.h"
#include "fuzz_check.h"

namespace {

// The kubeconfig's path in a directory made once per process, with the files seeds refer to.
const std::string& ConfigPath() {
  static const std::string path = [] {
    char dir[] = "/tmp/kube_kubeconfig_fuzz.XXXXXX";
    FUZZ_CHECK(mkdtemp(dir) != nullptr);
    std::ofstream(std::string(dir) + "/ca.crt") << "-----BEGIN CERTIFICATE-----\nCA\n";
    std::ofstream(std::string(dir) + "/token.txt") << "file-token\n";
    return std::string(dir) + "/config";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const std::string context : {"", "remote"}) {
    lockstep::Result<lockstep::kube::KubeConfig> config =
        lockstep::kube::ParseKubeConfig(text, ConfigPath(), context);
    if (!config.ok()) {
      FUZZ_CHECK(config.status().message().rfind(ConfigPath(), 0) == 0);
      continue;
    }
    FUZZ_CHECK(config->server.rfind("https://", 0) == 0);
    FUZZ_CHECK(config->client_cert_pem.empty() == config->client_key_pem.empty());
    FUZZ_CHECK(!config->context.empty());
  }
  return 0;
}

// Fuzzes lockstepd's REST routes (controller/api_routes.h: HandleRequest) over a real Controller
// and the real agents' backend, as lockstepd composes them, on a store in a temporary directory
// and a fixed four-node cluster. The input is a request:
//   line 1: METHOD TARGET [root]   ("POST /api/v1/jobs"; "root" makes the caller root, else
//                                   the caller is the ordinary user alice)
//   rest:   the body
// Properties: no route crashes or lets an exception out; every request is answered before
// HandleRequest returns; every answer is a JSON body; no request ends in 500 (an internal
// error: an exception the route did not expect).
// Long polls answer at once: every "wait_ms" in the target becomes "wait_0s" (an unknown key, so
// no wait), and a target that spells it percent-encoded is skipped. A waiting poll would answer
// later, from another thread, after this input.
// State: the controller keeps every job submitted; it is started again on a fresh directory every
// kRequestsPerController inputs so that long runs stay bounded.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "backend/agent/agent_backend.h"
#include "common/log.h"
#include "controller/api_routes.h"
#include "controller/controller.h"
#include "fuzz_check.h"
#include "lockstepd/agent_endpoints.h"

namespace {

namespace http = boost::beast::http;

constexpr int kRequestsPerController = 2000;

constexpr const char* kClusterYaml = R"(nodes:
  - names: gpu[1-2]
    cpus: 16
    memory: 64G
    gpus: 4
    gpu_type: h100
    features: [ib]
  - names: cpu[1-2]
    cpus: 8
    memory: 16G
partitions:
  - {name: gpu, nodes: "gpu[1-2]", default: true, max_time: "1-00:00:00"}
  - {name: cpu, nodes: ALL}
qos:
  - {name: normal}
  - {name: high, priority: 100}
)";

// A controller with the agents' backend attached, on a directory of its own that it removes.
class FuzzedDaemon {
 public:
  FuzzedDaemon() {
    char dir[] = "/tmp/api_routes_fuzz.XXXXXX";
    FUZZ_CHECK(mkdtemp(dir) != nullptr);
    dir_ = dir;
    std::ofstream(dir_ + "/cluster.yaml") << kClusterYaml;
    lockstep::controller::ControllerOptions o;
    o.state_dir = dir_ + "/state";
    o.cluster_config = dir_ + "/cluster.yaml";
    o.operators = {4242};
    lockstep::Result<std::unique_ptr<lockstep::controller::Controller>> c =
        lockstep::controller::Controller::Start(o);
    if (!c.ok()) std::fprintf(stderr, "cannot start: %s\n", c.status().ToString().c_str());
    FUZZ_CHECK(c.ok());
    controller_ = std::move(*c);
    lockstep::agent::AgentBackendOptions ao;
    ao.nodes = {"gpu1", "gpu2", "cpu1", "cpu2"};
    agents_ = std::make_unique<lockstep::agent::AgentBackend>(controller_->events(), ao);
    endpoints_ = std::make_unique<lockstep::lockstepd::AgentEndpointsOf>(*agents_);
    controller_->AttachBackend(agents_.get());
  }
  ~FuzzedDaemon() {
    controller_->DetachBackend();
    endpoints_.reset();
    agents_.reset();
    controller_.reset();
    std::filesystem::remove_all(dir_);
  }

  // The answer, if it came before HandleRequest returned.
  std::optional<lockstep::controller::ApiResponse> Handle(
      const lockstep::Caller& caller, const http::request<http::string_body>& request) {
    std::optional<lockstep::controller::ApiResponse> answer;
    lockstep::controller::HandleRequest(
        *controller_, endpoints_.get(), caller, request,
        [&answer](lockstep::controller::ApiResponse r) { answer = std::move(r); });
    return answer;
  }

 private:
  std::string dir_;
  std::unique_ptr<lockstep::controller::Controller> controller_;
  std::unique_ptr<lockstep::agent::AgentBackend> agents_;
  std::unique_ptr<lockstep::lockstepd::AgentEndpointsOf> endpoints_;
};

std::string_view NextWord(std::string_view& line) {
  const std::size_t end = std::min(line.find(' '), line.size());
  const std::string_view word = line.substr(0, end);
  line.remove_prefix(std::min(end + 1, line.size()));
  return word;
}

// Percent-decoding as the routes read a query's keys (api_routes.cc's Unescape).
std::string PercentDecoded(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      int v = 0;
      std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
      out += static_cast<char>(v);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The log's registry first: statics die in reverse order, so it outlives the daemon alive when
  // libFuzzer exits, whose threads may still log (CI's fuzz run found that use after free).
  static const bool log_first = lockstep::log::Enabled(lockstep::log::Level::kError);
  (void)log_first;
  static std::unique_ptr<FuzzedDaemon> daemon;
  static int requests = 0;
  if (!daemon || ++requests % kRequestsPerController == 0) {
    daemon.reset();
    daemon = std::make_unique<FuzzedDaemon>();
  }

  std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t newline = std::min(text.find('\n'), text.size());
  std::string_view line = text.substr(0, newline);
  const std::string_view body = text.substr(std::min(newline + 1, text.size()));
  const std::string_view method = NextWord(line);
  const std::string_view target = NextWord(line);
  const bool as_root = NextWord(line) == "root";

  std::string target_without_waits(target);
  for (std::size_t at = 0; (at = target_without_waits.find("wait_ms", at)) != std::string::npos;) {
    target_without_waits.replace(at, 7, "wait_0s");
  }
  if (PercentDecoded(target_without_waits).find("wait_ms") != std::string::npos) return 0;

  http::request<http::string_body> request;
  request.method_string(boost::beast::string_view(method.data(), method.size()));
  request.target(target_without_waits);
  request.version(11);
  request.body() = std::string(body);
  request.prepare_payload();
  const lockstep::Caller caller =
      as_root ? lockstep::Caller{0, 0, "root"} : lockstep::Caller{1000, 1000, "alice"};

  const std::optional<lockstep::controller::ApiResponse> response = daemon->Handle(caller, request);
  FUZZ_CHECK(response.has_value());
  if (response->result() == http::status::internal_server_error) {
    std::fprintf(stderr, "500: %s\n", response->body().c_str());
  }
  FUZZ_CHECK(response->result() != http::status::internal_server_error);
  FUZZ_CHECK(nlohmann::json::accept(response->body()));
  return 0;
}

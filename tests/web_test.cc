// The web view end to end: a real cluster, two `lockstep web` proxies (root, an operator, and
// nobody), and tests/web/web_test.js driving Debian's chromium through puppeteer-core (both
// installed by scripts/install-deps.sh) to check what a person sees. Skipped where they are
// missing, failed under CI ($CI set). LOCKSTEP_UPDATE_SCREENSHOTS=1 writes docs/web-*.png.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/cluster_harness.h"

namespace lockstep::testing {
namespace {

const std::string kSource = LOCKSTEP_SOURCE_DIR_FOR_TEST;

// `lockstep web --port PORT` as `uid`, its output in `log`; stopped by its PID at the end.
class WebProxy {
 public:
  WebProxy(const Cluster& c, int uid, int port, std::string log) : log_(std::move(log)) {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      int fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
      ::dup2(fd, 1), ::dup2(fd, 2);
      if (uid != 0 && (::setgid(uid) != 0 || ::setuid(uid) != 0)) ::_exit(125);
      ::setenv("LOCKSTEP_STATE_DIR", c.dir().c_str(), 1);
      const std::string bin = std::string(LOCKSTEP_BIN_DIR) + "/lockstep";
      const std::string p = std::to_string(port);
      ::execl(bin.c_str(), bin.c_str(), "web", "--port", p.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~WebProxy() {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  // The URL it printed (with its key), once printed.
  std::string Url() {
    std::string url;
    WaitFor(
        [&] {
          std::ifstream in(log_);
          std::string text((std::istreambuf_iterator<char>(in)), {});
          std::size_t at = text.find("http://");
          if (at == std::string::npos) return false;
          url = text.substr(at, text.find('\n', at) - at);
          return true;
        },
        std::chrono::seconds(20));
    return url;
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
};

bool Have(const std::string& path) {
  return std::filesystem::exists(path);
}

TEST(Web, WhatAPersonSeesInAHeadlessBrowser) {
  if (!Have(kSource + "/tests/web/node_modules/puppeteer-core") || !Have("/usr/bin/chromium")) {
    if (std::getenv("CI"))
      FAIL() << "chromium or puppeteer-core missing: run scripts/install-deps.sh";
    GTEST_SKIP() << "chromium or tests/web/node_modules missing (scripts/install-deps.sh)";
  }
  if (::getuid() != 0) GTEST_SKIP() << "needs root to run a proxy as another user";
  Cluster c;
  ASSERT_TRUE(c.Start());
  const unsigned long long running =
      Submit(c, {"--gpus=4", "-t", "10", "-J", "train", "--wrap", "echo epoch 1; sleep 300"});
  CommandResult r =
      c.Run({"sbatch", "--parsable", "--gpus=2", "-t", "10", "--wrap", "sleep 300"}, "/tmp", 65534);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string nobody_job = r.out.substr(0, r.out.find_first_of(";\n"));
  const unsigned long long pending = Submit(c, {"--gpus=4", "-t", "5", "--wrap", "true"});
  ASSERT_TRUE(WaitFor([&] { return c.Job(running).value("state", "") == "RUNNING"; },
                      std::chrono::seconds(20)));
  ASSERT_TRUE(WaitFor([&] { return c.Job(pending).value("reason", "") == "Resources"; },
                      std::chrono::seconds(20)));
  const std::string running_node = c.Job(running).value("nodes", "");
  const std::string other_node = running_node == "node1" ? "node2" : "node1";

  const int root_port = 20000 + ::getpid() % 20000;
  WebProxy root(c, 0, root_port, c.dir() + "/web-root.log");
  WebProxy nobody(c, 65534, root_port + 1, c.dir() + "/web-nobody.log");
  const std::string root_url = root.Url(), nobody_url = nobody.Url();
  ASSERT_FALSE(root_url.empty()) << c.ReadFile(c.dir() + "/web-root.log");
  ASSERT_FALSE(nobody_url.empty()) << c.ReadFile(c.dir() + "/web-nobody.log");

  const std::string shots =
      std::getenv("LOCKSTEP_UPDATE_SCREENSHOTS") ? kSource + "/docs" : c.dir();
  const std::string command =
      "cd " + kSource + "/tests/web && WEB_ROOT_URL='" + root_url + "' WEB_NOBODY_URL='" +
      nobody_url + "' WEB_PENDING_JOB=" + std::to_string(pending) +
      " WEB_RUNNING_JOB=" + std::to_string(running) + " WEB_RUNNING_NODE=" + running_node +
      " WEB_NOBODY_JOB=" + nobody_job + " WEB_DRAIN_NODE=" + other_node +
      " WEB_SCREENSHOTS=" + shots + " LOCKSTEP=" + LOCKSTEP_BIN_DIR +
      "/lockstep STATE_DIR=" + c.dir() + " node web_test.js 2>&1";
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(::pclose(p), 0) << out;
  EXPECT_NE(out.find("all checks held"), std::string::npos) << out;
  // The proxy answers nobody without the key.
  FILE* q = ::popen(("curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:" +
                     std::to_string(root_port) + "/api/v1/jobs")
                        .c_str(),
                    "r");
  std::string code(8, '\0');
  code.resize(std::fread(code.data(), 1, code.size(), q));
  ::pclose(q);
  EXPECT_EQ(code, "403");
}

}  // namespace
}  // namespace lockstep::testing

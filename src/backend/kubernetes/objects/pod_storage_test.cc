// Job pods and shared storage (docs/storage.md): the storage's host directories in every pod,
// with HostToContainer propagation, and the batch script's output files written by the pod's
// launcher itself (run here with /bin/sh, as the container runs it).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "backend/kubernetes/objects/pod_builder.h"

namespace lockstep::kube {
namespace {

using nlohmann::json;

JobPodsSpec JobOnStorage() {
  JobPodsSpec s;
  s.job_id = 42;
  s.image = "busybox";
  s.script = "#!/bin/sh\necho out; echo err >&2\n";
  s.work_dir = "/mnt/home/ada/project";
  s.host_mounts = {{"/mnt/datasets", "", true}, {"/mnt/home", "", false}};
  s.stdout_path = "/mnt/home/ada/project/slurm-42.out";
  s.allocation = {{"n1", 1, 1024, {}, 1}, {"n2", 1, 1024, {}, 1}};
  return s;
}

std::map<std::string, std::string> EnvOf(const json& pod) {
  std::map<std::string, std::string> env;
  for (const json& e : pod["spec"]["containers"][0]["env"]) env[e["name"]] = e["value"];
  return env;
}

TEST(PodStorage, EveryPodSeesTheStorageWithHostToContainerPropagation) {
  Result<JobPods> r = BuildJobPods(JobOnStorage());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const json& pod : r->pods) {
    const json& volumes = pod["spec"]["volumes"];
    ASSERT_EQ(volumes.size(), 3u);  // the script's emptyDir, then the storage
    EXPECT_EQ(volumes[1], (json{{"name", "lockstep-storage-0"},
                                {"hostPath", {{"path", "/mnt/datasets"}, {"type", "Directory"}}}}));
    const json& mounts = pod["spec"]["containers"][0]["volumeMounts"];
    ASSERT_EQ(mounts.size(), 3u);
    EXPECT_EQ(mounts[1], (json{{"name", "lockstep-storage-0"},
                               {"mountPath", "/mnt/datasets"},
                               {"mountPropagation", "HostToContainer"},
                               {"readOnly", true}}));
    EXPECT_EQ(mounts[2]["mountPath"], "/mnt/home");
    EXPECT_FALSE(mounts[2].contains("readOnly"));
    EXPECT_EQ(pod["spec"]["containers"][0]["workingDir"], "/mnt/home/ada/project");
  }
  // Rank 0 runs the batch script's output into the file; the others log.
  EXPECT_EQ(EnvOf(r->pods[0])["LOCKSTEP_STDOUT"], "/mnt/home/ada/project/slurm-42.out");
  EXPECT_EQ(EnvOf(r->pods[1]).count("LOCKSTEP_STDOUT"), 0u);
  JobPodsSpec bad = JobOnStorage();
  bad.host_mounts.push_back({"relative", "", false});
  EXPECT_FALSE(BuildJobPods(bad).ok());
}

TEST(PodStorage, AContainerMountIsItsSourceAtItsTarget) {
  JobPodsSpec s = JobOnStorage();
  s.host_mounts.push_back({"/mnt/datasets/imagenet", "/data", true});
  Result<JobPods> r = BuildJobPods(s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const json& pod = r->pods[0];
  EXPECT_EQ(pod["spec"]["volumes"][3],
            (json{{"name", "lockstep-storage-2"},
                  {"hostPath", {{"path", "/mnt/datasets/imagenet"}, {"type", "Directory"}}}}));
  EXPECT_EQ(pod["spec"]["containers"][0]["volumeMounts"][3],
            (json{{"name", "lockstep-storage-2"},
                  {"mountPath", "/data"},
                  {"mountPropagation", "HostToContainer"},
                  {"readOnly", true}}));
  // Over the pod's own script directory, or a relative target: refused, nothing built.
  for (const char* target : {"/var/run/lockstep", "/var/run/lockstep/x", "data"}) {
    JobPodsSpec bad = JobOnStorage();
    bad.host_mounts.push_back({"/mnt/datasets/imagenet", target, false});
    EXPECT_FALSE(BuildJobPods(bad).ok()) << target;
  }
}

TEST(PodStorage, AnOrdinaryUsersContainerCannotGainPrivileges) {
  // Root in a job's container would own every user's files on the storage it mounts: a setuid
  // binary in the image must not get it there (no_new_privs, no capabilities).
  JobPodsSpec s = JobOnStorage();
  s.uid = 1000;
  s.gid = 1000;
  Result<JobPods> r = BuildJobPods(s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (const json& pod : r->pods) {
    const json& sc = pod["spec"]["containers"][0]["securityContext"];
    EXPECT_EQ(sc["allowPrivilegeEscalation"], false);
    EXPECT_EQ(sc["capabilities"]["drop"], json::array({"ALL"}));
    EXPECT_EQ(pod["spec"]["securityContext"]["runAsUser"], 1000);
  }
}

// Runs rank 0's container command with its environment, in `dir` (as the kubelet would).
int RunLauncher(const json& pod, const std::string& dir) {
  auto unescape = [](std::string value) {  // the kubelet turns $$ back into $
    for (std::size_t at = 0; (at = value.find("$$", at)) != std::string::npos; ++at)
      value.erase(at, 1);
    return value;
  };
  const json& c = pod["spec"]["containers"][0];
  std::vector<std::string> argv;
  for (const json& a : c["command"]) argv.push_back(unescape(a));
  std::vector<std::string> env;
  for (const auto& [k, v] : EnvOf(pod)) env.push_back(k + "=" + unescape(v));
  env.push_back("PATH=/usr/bin:/bin");
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    std::vector<char*> a, e;
    for (std::string& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    for (std::string& s : env) e.push_back(s.data());
    e.push_back(nullptr);
    ::execve("/bin/sh", a.data(), e.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(PodStorage, TheLauncherWritesTheOutputFilesAsTheAgentsDo) {
  // The launcher writes its script to /var/run/lockstep (the pod's emptyDir): only where it can.
  if (::access("/var/run", W_OK) != 0) GTEST_SKIP() << "/var/run is not writable here";
  std::filesystem::create_directories("/var/run/lockstep");
  char tmpl[] = "/tmp/lockstep-pod-out-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  JobPodsSpec s = JobOnStorage();
  s.work_dir = dir;
  s.stdout_path = dir + "/slurm-42.out";
  std::ofstream(s.stdout_path) << "an earlier run\n";
  Result<JobPods> r = BuildJobPods(s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(RunLauncher(r->pods[0], dir), 0);
  EXPECT_EQ(Slurp(s.stdout_path), "out\nerr\n");  // truncated, stderr shared
  s.append_output = true;  // a requeued run
  s.stderr_path = dir + "/slurm-42.err";
  r = BuildJobPods(s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(RunLauncher(r->pods[0], dir), 0);
  EXPECT_EQ(Slurp(s.stdout_path), "out\nerr\nout\n");
  EXPECT_EQ(Slurp(dir + "/slurm-42.err"), "err\n");
  // A file that cannot be opened fails the pod (exit 127) instead of running without output.
  s.stdout_path = dir + "/missing/slurm-42.out";
  r = BuildJobPods(s);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(RunLauncher(r->pods[0], dir), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lockstep::kube

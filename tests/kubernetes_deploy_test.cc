// deploy/kubernetes installed in one command on the real node (fixture: kubernetes_node_fixture.h):
// `kubectl apply -k` of an overlay that only adapts it to this one-machine cluster brings up two
// lockstepd replicas with leader election on their state volume; a user's sbatch through the
// Service (TLS, a token) runs a 2-pod job; the leader pod deleted, another replica leads with
// every job and adopts the running pods. Prints the time from apply to the first job running.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "tests/kubernetes_daemonset_fixture.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;

const char* kNs = "lockstep";

// The overlay: what this cluster lacks, nothing else. No kube-scheduler (nodeName), no kube-proxy
// and an apiserver on 127.0.0.1 (hostNetwork, the API's address given as in-cluster config
// would find it, and the replicas' port not declared, so the kubelet does not refuse the second
// for a host port), no ServiceAccount admission (the token volume it would add, written out),
// CPUs (this node has 2: lockstepd requests none, the job's pods need both), a node-local
// volume for the ReadWriteMany claim, and a job image the node has.
void WriteOverlay(const std::string& dir, const std::string& base, const std::string& node,
                  int api_port, int port, const std::string& state) {
  fs::create_directories(dir);
  std::ofstream(dir + "/kustomization.yaml")
      << "bases:\n  - " << fs::relative(base, dir).string() << "\n"
      << "resources:\n  - state-volume.yaml\n"
      << "patchesStrategicMerge:\n  - node.yaml\n";
  std::ofstream(dir + "/state-volume.yaml")
      << "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: lockstep-state-node-local}\n"
      << "spec:\n  capacity: {storage: 10Gi}\n  accessModes: [ReadWriteMany]\n"
      << "  storageClassName: node-local\n  persistentVolumeReclaimPolicy: Retain\n"
      << "  hostPath: {path: " << state << ", type: Directory}\n";
  const std::string p = std::to_string(port);
  std::ofstream(dir + "/node.yaml")
      << "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: lockstepd, namespace: lockstep}\n"
      << "spec:\n  template:\n    spec:\n"
      << "      nodeName: " << node << "\n"
      << "      hostNetwork: true\n      dnsPolicy: ClusterFirstWithHostNet\n"
      << "      automountServiceAccountToken: false\n"
      << "      containers:\n        - name: lockstepd\n"
      << "          args: [--config, /etc/lockstep/cluster.yaml, --state-dir, /var/lib/lockstep,"
      << " --listen, \"0.0.0.0:" << p << "\", --tls-cert, /etc/lockstep/tls/tls.crt,"
      << " --tls-key, /etc/lockstep/tls/tls.key]\n"
      << "          env:\n            - {name: KUBERNETES_SERVICE_HOST, value: 127.0.0.1}\n"
      << "            - {name: KUBERNETES_SERVICE_PORT, value: \"" << api_port << "\"}\n"
      << "          ports:\n            - {containerPort: 6820, $patch: delete}\n"
      << "          readinessProbe: {tcpSocket: {port: " << p << "}}\n"
      << "          resources: {requests: {cpu: \"0\", memory: 128Mi}}\n"
      << "          volumeMounts:\n            - {name: kube-api-access, mountPath: "
      << "/var/run/secrets/kubernetes.io/serviceaccount, readOnly: true}\n"
      << "      volumes:\n        - name: kube-api-access\n          projected:\n"
      << "            sources:\n"
      << "              - serviceAccountToken: {path: token, expirationSeconds: 3600}\n"
      << "              - configMap: {name: kube-root-ca.crt, items: [{key: ca.crt, path: "
         "ca.crt}]}\n"
      << "              - downwardAPI: {items: [{path: namespace, fieldRef: {fieldPath: "
      << "metadata.namespace}}]}\n"
      << "---\napiVersion: v1\nkind: PersistentVolumeClaim\n"
      << "metadata: {name: lockstep-state, namespace: lockstep}\n"
      << "spec: {storageClassName: node-local}\n"
      << "---\napiVersion: v1\nkind: Service\nmetadata: {name: lockstepd, namespace: lockstep}\n"
      << "spec:\n  ports:\n    - {name: https, port: 6820, targetPort: " << p << "}\n"
      << "---\napiVersion: v1\nkind: ConfigMap\n"
      << "metadata: {name: lockstep-config, namespace: lockstep}\n"
      << "data:\n  cluster.yaml: |\n    backend: kubernetes\n    kubernetes:\n"
      << "      namespace: lockstep\n      image: docker.io/local/busybox:1\n"
      << "      leader_elect: true\n      lease_name: lockstepd\n      pods: per-task\n"
      << "    partitions:\n      - name: gpu\n        nodes: ALL\n        default: true\n";
}

}  // namespace

// The DaemonSet fixture for its kubectl and its check that the controllers are built.
class DeployTest : public DaemonSetTest {
 protected:
  static std::string NodeAddress() {
    Result<Json> n = kc().Get(kube::NodePath(node_));
    if (!n.ok()) return "";
    for (const Json& a : (*n)["status"]["addresses"])
      if (a.value("type", "") == "InternalIP") return a.value("address", "");
    return "";
  }

  // The Service's ready endpoint, "IP:PORT", or "".
  static std::string Endpoint() {
    Result<Json> e = kc().Get("/api/v1/namespaces/lockstep/endpoints/lockstepd");
    if (!e.ok() || !e->contains("subsets") || (*e)["subsets"].empty()) return "";
    const Json& s = (*e)["subsets"][0];
    if (!s.contains("addresses") || s["addresses"].empty()) return "";
    return s["addresses"][0].value("ip", "") + ":" + std::to_string(s["ports"][0].value("port", 0));
  }

  static std::string LeaseHolder() {
    Result<Json> l = kc().Get("/apis/coordination.k8s.io/v1/namespaces/lockstep/leases/lockstepd");
    return l.ok() ? (*l)["spec"].value("holderIdentity", "") : "";
  }

  static bool AllRunning(unsigned long long job, std::size_t pods) {
    std::map<std::string, Json> p = JobPods(kNs, job);
    if (p.size() != pods) return false;
    for (const auto& [name, pod] : p)
      if (pod["status"].value("phase", "") != "Running") return false;
    return true;
  }
};

TEST_F(DeployTest, ApplyKRunsTwoReplicasThatServeJobsAndFailOver) {
  ASSERT_EQ(NodeScript("controllers"), 0);
  ASSERT_TRUE(ImportLockstepImage());
  const std::string dir = run_dir_ + "/deploy";
  const std::string state = dir + "/state";
  fs::create_directories(state);
  ASSERT_EQ(::chown(state.c_str(), 10001, 10001), 0);  // the image's user
  ::chmod(state.c_str(), 0700);
  const std::string ip = NodeAddress();
  ASSERT_FALSE(ip.empty());
  const std::string tls =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=lockstepd"
      " -addext subjectAltName=IP:127.0.0.1,IP:" +
      ip + ",DNS:lockstepd.lockstep.svc -keyout " + dir + "/tls.key -out " + dir +
      "/tls.crt 2>/dev/null";
  ASSERT_EQ(std::system(tls.c_str()), 0);
  const int port = kube::testing::FreePort();
  WriteOverlay(dir + "/overlay", kube::testing::SourceDir() + "/deploy/kubernetes", node_,
               std::stoi(Output("sed -n 's/^API_PORT=//p' " + run_dir_ + "/env")), port, state);
  // The README's step before the one command: the namespace, and the API's certificate in it.
  ASSERT_EQ(Kubectl("apply -f " + kube::testing::SourceDir() + "/deploy/kubernetes/namespace.yaml"),
            0);
  ASSERT_EQ(Kubectl("-n lockstep create secret tls lockstepd-tls --cert=" + dir +
                    "/tls.crt --key=" + dir + "/tls.key"),
            0);

  const auto applied = std::chrono::steady_clock::now();
  ASSERT_EQ(Kubectl("apply -k " + dir + "/overlay"), 0);
  Cluster user;  // the CLI only: the user's side
  std::string token;
  ASSERT_TRUE(WaitFor(
      [&] {  // an operator on the leader's host makes the user a token
        CommandResult r = user.Run({"token"}, "", -1, "", {{"LOCKSTEP_STATE_DIR", state}});
        token = r.exit_code == 0 ? r.out.substr(0, r.out.find('\n')) : "";
        return Contains(token, "LOCKSTEP_TOKEN=");
      },
      seconds(90)))
      << Output(KubectlLine("-n lockstep get pods,events 2>&1"));
  std::string endpoint;
  ASSERT_TRUE(WaitFor([&] { return !(endpoint = Endpoint()).empty(); }, seconds(60)));
  const std::map<std::string, std::string> remote = {
      {"LOCKSTEP_SERVER", "https://" + endpoint},
      {"LOCKSTEP_TOKEN", token.substr(token.find('=') + 1)},
      {"LOCKSTEP_CA_CERT", dir + "/tls.crt"}};
  CommandResult r =
      user.Run({"sbatch", "--parsable", "-n", "2", "--wrap",
                "trap 'exit 0' TERM; echo rank $RANK of $WORLD_SIZE; sleep 300 & wait"},
               "", -1, "", remote);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const unsigned long long id = std::stoull(r.out);
  ASSERT_TRUE(WaitFor([&] { return AllRunning(id, 2); }, seconds(60)));
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - applied).count();
  std::fprintf(stderr, "kubectl apply -k to the first job's 2 pods Running: %.1f s\n", took);
  std::map<std::string, Json> pods = JobPods(kNs, id);

  // A second job, acknowledged; then the leader's pod goes (kubectl delete pod).
  r = user.Run({"sbatch", "--parsable", "--wrap", "trap 'exit 0' TERM; sleep 300 & wait"}, "", -1,
               "", remote);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const unsigned long long second = std::stoull(r.out);
  const std::string leader = LeaseHolder();
  ASSERT_FALSE(leader.empty());
  const auto deleted = std::chrono::steady_clock::now();
  ASSERT_TRUE(kc().Delete(kube::PodPath(kNs, leader.substr(0, leader.rfind('_')))).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        const std::string now = LeaseHolder();
        return !now.empty() && now != leader &&
               user.Run({"squeue", "-h"}, "", -1, "", remote).exit_code == 0;
      },
      seconds(60)));
  std::fprintf(stderr, "leader pod deleted to another replica serving: %.1f s\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - deleted).count());
  r = user.Run({"squeue", "-h", "-o", "%i %T"}, "", -1, "", remote);
  EXPECT_TRUE(Contains(r.out, std::to_string(id) + " RUNNING")) << r.out;
  EXPECT_TRUE(Contains(r.out, std::to_string(second) + " ")) << r.out;  // not lost
  std::map<std::string, Json> after = JobPods(kNs, id);  // adopted: the same pods, running
  ASSERT_EQ(after.size(), 2u);
  for (const auto& [name, pod] : after)
    EXPECT_EQ(pod["metadata"]["uid"], pods[name]["metadata"]["uid"]) << name;
  EXPECT_TRUE(AllRunning(id, 2));
  r = user.Run({"logs", std::to_string(id)}, "", -1, "", remote);
  EXPECT_TRUE(Contains(r.out, "rank 1 of 2")) << r.out << r.err;

  EXPECT_EQ(user.Run({"scancel", std::to_string(id), std::to_string(second)}, "", -1, "", remote)
                .exit_code,
            0);
  EXPECT_TRUE(WaitFor([&] { return JobPods(kNs, id).empty(); }, seconds(60)));
  // Leave the node to the other tests: no replicas (there is no garbage collector to follow a
  // deleted Deployment to its pods).
  EXPECT_EQ(Kubectl("-n lockstep scale deployment lockstepd --replicas=0"), 0);
  EXPECT_TRUE(WaitFor(
      [&] {
        Result<Json> l = kc().List(kube::PodsPath(kNs));
        return l.ok() && (*l)["items"].empty();
      },
      seconds(60)));
}

}  // namespace lockstep::testing

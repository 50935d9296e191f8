// The client layer against a real kube-apiserver v1.20.2 (over etcd) that this test starts with
// scripts/kube-apiserver.sh on free ports, in its own state directory, and stops at the end.
// Without a built apiserver (`scripts/kube-apiserver.sh build`) the tests skip, or fail when the
// CI environment variable is set.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "backend/kubernetes/client/api_error.h"
#include "backend/kubernetes/client/informer.h"
#include "backend/kubernetes/client/kube_client.h"
#include "backend/kubernetes/client/kubeconfig.h"
#include "backend/kubernetes/client/test_apiserver.h"

namespace lockstep::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::WaitFor;

uint64_t Rv(const std::string& rv) {
  return rv.empty() ? 0 : std::stoull(rv);
}

// One apiserver for the whole suite.
class KubeApiTest : public testing::ApiServerTest {
 protected:
  // Nodes without the watch cache: their watches read etcd, whose compaction then answers an
  // old resourceVersion with 410 at once.
  static void SetUpTestSuite() { StartApiServer("--watch-cache-sizes=nodes#0"); }

  static KubeClient& client() { return *client_; }

  static Json NodeObject(const std::string& name, const Json& labels = Json::object()) {
    return {{"apiVersion", "v1"},
            {"kind", "Node"},
            {"metadata", {{"name", name}, {"labels", labels}}},
            {"status", {{"capacity", {{"cpu", "8"}, {"memory", "32Gi"}, {"pods", "110"}}}}}};
  }

  static Json PodObject(const std::string& ns, const std::string& name,
                        const Json& labels = Json::object()) {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}},
            {"spec",
             {{"schedulerName", "lockstep"},
              {"containers", {{{"name", "main"}, {"image", "busybox"}}}}}}};
  }

  // The server's objects under `path` as key -> resourceVersion.
  static std::map<std::string, std::string> ServerState(const std::string& path,
                                                        const std::string& label_selector = "") {
    ListOptions o;
    o.label_selector = label_selector;
    Result<Json> list = client_->ListAll(path, o);
    EXPECT_TRUE(list.ok()) << list.status().ToString();
    std::map<std::string, std::string> out;
    if (!list.ok()) return out;
    for (const Json& item : (*list)["items"]) {
      out[ObjectKey(item)] = item["metadata"]["resourceVersion"].get<std::string>();
    }
    return out;
  }
};

// What the handlers were told, as key -> resourceVersion, plus a log of the calls.
class HandlerView {
 public:
  InformerHandlers Handlers() {
    InformerHandlers h;
    h.on_add = [this](const Json& o) { Record("add", o, true); };
    h.on_update = [this](const Json&, const Json& o) { Record("update", o, true); };
    h.on_delete = [this](const Json& o) { Record("delete", o, false); };
    return h;
  }
  std::map<std::string, std::string> State() {
    std::lock_guard<std::mutex> lock(mu_);
    return state_;
  }
  bool Saw(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    return log_.count(what) > 0;
  }

 private:
  void Record(const std::string& kind, const Json& o, bool present) {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string key = ObjectKey(o);
    if (present) {
      state_[key] = o["metadata"]["resourceVersion"].get<std::string>();
    } else {
      state_.erase(key);
    }
    log_.insert(kind + " " + key);
  }

  std::mutex mu_;
  std::map<std::string, std::string> state_;
  std::set<std::string> log_;
};

std::map<std::string, std::string> CacheState(const Informer& inf) {
  std::map<std::string, std::string> out;
  for (const Json& o : inf.List()) {
    out[ObjectKey(o)] = o["metadata"]["resourceVersion"].get<std::string>();
  }
  return out;
}

InformerOptions FastInformer(const std::string& path) {
  InformerOptions o;
  o.path = path;
  o.page_size = 2;  // exercise limit/continue
  o.backoff = {milliseconds(100), milliseconds(1000), 2.0, 0.2};
  return o;
}

TEST_F(KubeApiTest, NodesCreateGetListPatchDelete) {
  Result<Json> created = client().Create(NodesPath(), NodeObject("crud-1", {{"pool", "crud"}}));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ((*created)["metadata"]["name"], "crud-1");
  ASSERT_TRUE(client().Create(NodesPath(), NodeObject("crud-2", {{"pool", "crud"}})).ok());

  Result<Json> again = client().Create(NodesPath(), NodeObject("crud-1"));
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(IsAlreadyExists(again.status())) << again.status().ToString();
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);

  Result<Json> got = client().Get(NodePath("crud-1"));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)["metadata"]["labels"]["pool"], "crud");

  ListOptions lo;
  lo.label_selector = "pool=crud";
  lo.limit = 1;
  Result<Json> page = client().List(NodesPath(), lo);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ((*page)["items"].size(), 1u);
  EXPECT_FALSE((*page)["metadata"].value("continue", "").empty());
  Result<Json> all = client().ListAll(NodesPath(), lo);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)["items"].size(), 2u);

  Result<Json> merged = client().Patch(NodePath("crud-1"), PatchType::kMerge,
                                       {{"metadata", {{"labels", {{"a", "1"}}}}}});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ((*merged)["metadata"]["labels"]["a"], "1");
  Result<Json> strategic = client().Patch(NodePath("crud-1"), PatchType::kStrategicMerge,
                                          {{"spec", {{"unschedulable", true}}}});
  ASSERT_TRUE(strategic.ok()) << strategic.status().ToString();
  EXPECT_EQ((*strategic)["spec"]["unschedulable"], true);
  Result<Json> jp = client().Patch(
      NodePath("crud-1"), PatchType::kJsonPatch,
      Json::array({{{"op", "replace"}, {"path", "/metadata/labels/a"}, {"value", "2"}}}));
  ASSERT_TRUE(jp.ok()) << jp.status().ToString();
  EXPECT_EQ((*jp)["metadata"]["labels"]["a"], "2");

  // nodes/status: the kubelet's part.
  Json status_patch = {
      {"status",
       {{"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}}}}}};
  Result<Json> st =
      client().Patch(NodePath("crud-1") + "/status", PatchType::kStrategicMerge, status_patch);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ((*st)["status"]["conditions"][0]["type"], "Ready");

  Result<Json> bad = client().Patch(
      NodePath("crud-1"), PatchType::kJsonPatch,
      Json::array({{{"op", "test"}, {"path", "/metadata/labels/a"}, {"value", "nope"}}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(ApiErrorOf(bad.status()).http_code, 0);

  ASSERT_TRUE(client().Delete(NodePath("crud-1")).ok());
  ASSERT_TRUE(client().Delete(NodePath("crud-2")).ok());
  Result<Json> gone = client().Get(NodePath("crud-1"));
  ASSERT_FALSE(gone.ok());
  EXPECT_TRUE(IsNotFound(gone.status())) << gone.status().ToString();
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(IsNotFound(client().Delete(NodePath("crud-1")).status()));
}

TEST_F(KubeApiTest, PodsBindingStatusLogAndDelete) {
  CreateNamespace("bind");
  ASSERT_TRUE(client().Create(NodesPath(), NodeObject("bind-node")).ok());
  Result<Json> pod = client().Create(PodsPath("bind"), PodObject("bind", "p1"));
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  EXPECT_EQ((*pod)["spec"]["schedulerName"], "lockstep");

  ASSERT_TRUE(client().Bind("bind", "p1", "bind-node").ok());
  Result<Json> bound = client().Get(PodPath("bind", "p1"));
  ASSERT_TRUE(bound.ok());
  EXPECT_EQ((*bound)["spec"]["nodeName"], "bind-node");
  // A pod is bound once.
  Status twice = client().Bind("bind", "p1", "bind-node");
  ASSERT_FALSE(twice.ok());
  EXPECT_TRUE(IsConflict(twice)) << twice.ToString();

  // pods/status: the kubelet's part, played by the test.
  Json status = *bound;
  status["status"]["phase"] = "Running";
  Result<Json> updated = client().Update(PodPath("bind", "p1") + "/status", status);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ((*updated)["status"]["phase"], "Running");

  // pods/log goes to the node's kubelet, which does not exist: a clear API error, not a hang.
  Result<std::string> log =
      client().GetText(PodPath("bind", "p1") + "/log", {{"container", "main"}});
  ASSERT_FALSE(log.ok());
  EXPECT_NE(ApiErrorOf(log.status()).http_code, 0) << log.status().ToString();

  // Preconditions: a wrong uid is refused.
  DeleteOptions wrong;
  wrong.grace_period_seconds = 0;
  wrong.precondition_uid = "not-the-uid";
  Result<Json> refused = client().Delete(PodPath("bind", "p1"), wrong);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(IsConflict(refused.status())) << refused.status().ToString();

  DeleteOptions now;
  now.grace_period_seconds = 0;  // no kubelet to finish a graceful deletion
  now.precondition_uid = (*bound)["metadata"]["uid"];
  ASSERT_TRUE(client().Delete(PodPath("bind", "p1"), now).ok());
  EXPECT_TRUE(IsNotFound(client().Get(PodPath("bind", "p1")).status()));
  ASSERT_TRUE(client().Delete(NodePath("bind-node")).ok());
}

TEST_F(KubeApiTest, ConflictOnStaleUpdateAndRetryOnConflict) {
  ASSERT_TRUE(client().Create(NodesPath(), NodeObject("occ-1")).ok());
  Result<Json> a = client().Get(NodePath("occ-1"));
  ASSERT_TRUE(a.ok());
  Json stale = *a;
  Json fresh = *a;
  fresh["metadata"]["labels"]["writer"] = "first";
  ASSERT_TRUE(client().Update(NodePath("occ-1"), fresh).ok());
  stale["metadata"]["labels"]["writer"] = "second";
  Result<Json> lost = client().Update(NodePath("occ-1"), stale);
  ASSERT_FALSE(lost.ok());
  EXPECT_TRUE(IsConflict(lost.status())) << lost.status().ToString();
  EXPECT_EQ(lost.status().code(), StatusCode::kFailedPrecondition);

  // Ten writers increment one counter with read-modify-write: every increment lands.
  std::atomic<int> conflicts{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 10; ++w) {
    writers.emplace_back([&] {
      Status st = RetryOnConflict(
          [&]() -> Status {
            Result<Json> cur = client().Get(NodePath("occ-1"));
            if (!cur.ok()) return cur.status();
            Json next = *cur;
            const int n = std::stoi(next["metadata"]["labels"].value("count", "0"));
            next["metadata"]["labels"]["count"] = std::to_string(n + 1);
            Result<Json> r = client().Update(NodePath("occ-1"), next);
            if (!r.ok() && IsConflict(r.status())) conflicts.fetch_add(1);
            return r.ok() ? Status::Ok() : r.status();
          },
          /*attempts=*/50);
      EXPECT_TRUE(st.ok()) << st.ToString();
    });
  }
  for (auto& t : writers) t.join();
  Result<Json> final_node = client().Get(NodePath("occ-1"));
  ASSERT_TRUE(final_node.ok());
  EXPECT_EQ((*final_node)["metadata"]["labels"]["count"], "10");
  EXPECT_GT(conflicts.load(), 0);
  std::fprintf(stderr, "10 writers converged after %d conflicts\n", conflicts.load());
  ASSERT_TRUE(client().Delete(NodePath("occ-1")).ok());
}

TEST_F(KubeApiTest, InformerSyncsThenSeesAddsUpdatesDeletes) {
  CreateNamespace("inf");
  for (const char* n : {"a", "b", "c"}) {
    ASSERT_TRUE(client().Create(PodsPath("inf"), PodObject("inf", n)).ok());
  }
  HandlerView view;
  Informer inf(&client(), FastInformer(PodsPath("inf")), view.Handlers());
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(seconds(20)));
  EXPECT_TRUE(inf.HasSynced());
  EXPECT_EQ(inf.Size(), 3u);
  EXPECT_TRUE(inf.Get("inf/a").has_value());
  EXPECT_EQ(view.State().size(), 3u);

  ASSERT_TRUE(client().Create(PodsPath("inf"), PodObject("inf", "d")).ok());
  ASSERT_TRUE(client()
                  .Patch(PodPath("inf", "a"), PatchType::kMerge,
                         {{"metadata", {{"labels", {{"changed", "yes"}}}}}})
                  .ok());
  DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(client().Delete(PodPath("inf", "b"), now).ok());

  ASSERT_TRUE(WaitFor([&] { return view.Saw("delete inf/b") && inf.Size() == 3; }, seconds(10)));
  EXPECT_TRUE(view.Saw("add inf/d"));
  EXPECT_TRUE(view.Saw("update inf/a"));
  EXPECT_EQ((*inf.Get("inf/a"))["metadata"]["labels"]["changed"], "yes");
  EXPECT_FALSE(inf.Get("inf/b").has_value());
  EXPECT_EQ(CacheState(inf), ServerState(PodsPath("inf")));
  EXPECT_EQ(view.State(), ServerState(PodsPath("inf")));

  const auto t0 = std::chrono::steady_clock::now();
  inf.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(1000)) << "Stop() is prompt";
}

TEST_F(KubeApiTest, BookmarksAdvanceTheResourceVersion) {
  CreateNamespace("bm");
  CreateNamespace("bm-other");
  InformerOptions o = FastInformer(PodsPath("bm"));
  o.watch_timeout_seconds = 4;  // v1.20 sends a bookmark shortly before a watch's timeout
  Informer inf(&client(), o, {});
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(seconds(20)));
  const uint64_t synced_rv = Rv(inf.LastResourceVersion());
  // Changes the informer does not watch still move the pods' resourceVersion on. v1.20 sends a
  // watcher a bookmark only for a change made after its watch began (the cacher starts each
  // watcher at the newest pod event of any namespace), so keep changing while waiting.
  int other = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        if (other < 60) {
          EXPECT_TRUE(client()
                          .Create(PodsPath("bm-other"),
                                  PodObject("bm-other", "x" + std::to_string(other++)))
                          .ok());
        }
        return inf.stats().bookmarks > 0;
      },
      seconds(20)))
      << "no bookmark within 20 s: watches " << inf.stats().watches << ", errors "
      << inf.stats().errors << ", rv " << inf.LastResourceVersion() << " (synced at " << synced_rv
      << ")";
  EXPECT_GT(Rv(inf.LastResourceVersion()), synced_rv);
  EXPECT_EQ(inf.stats().events, 0);
  EXPECT_EQ(inf.Size(), 0u);
}

TEST_F(KubeApiTest, ApiserverRestartMidWatchLosesNoEvent) {
  CreateNamespace("rs");
  for (const char* n : {"keep", "change", "remove"}) {
    ASSERT_TRUE(client().Create(PodsPath("rs"), PodObject("rs", n)).ok());
  }
  HandlerView view;
  Informer inf(&client(), FastInformer(PodsPath("rs")), view.Handlers());
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(seconds(20)));
  // Changes right before the apiserver goes away: the watch may or may not have delivered them.
  ASSERT_TRUE(client().Create(PodsPath("rs"), PodObject("rs", "before-stop")).ok());
  ASSERT_TRUE(client().Create(NodesPath(), NodeObject("rs-node")).ok());  // moves etcd's revision
  const auto t0 = std::chrono::steady_clock::now();
  const std::int64_t errors_before = inf.stats().errors;
  ASSERT_EQ(Script("stop-apiserver"), 0);
  // The informer has retried against the dead server (and failed) before it comes back.
  EXPECT_TRUE(WaitFor([&] { return inf.stats().errors >= errors_before + 2; }, seconds(30)));
  ASSERT_EQ(Script("start-apiserver"), 0);
  std::fprintf(stderr, "apiserver down and back in %.1f s\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  Result<Json> after = client().Create(PodsPath("rs"), PodObject("rs", "after-start"));
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  ASSERT_TRUE(client()
                  .Patch(PodPath("rs", "change"), PatchType::kMerge,
                         {{"metadata", {{"labels", {{"v", "2"}}}}}})
                  .ok());
  DeleteOptions now;
  now.grace_period_seconds = 0;
  ASSERT_TRUE(client().Delete(PodPath("rs", "remove"), now).ok());

  const bool converged = WaitFor(
      [&] {
        const auto server = ServerState(PodsPath("rs"));
        return CacheState(inf) == server && view.State() == server;
      },
      seconds(30));
  EXPECT_TRUE(converged);
  EXPECT_TRUE(view.Saw("add rs/before-stop"));
  EXPECT_TRUE(view.Saw("add rs/after-start"));
  EXPECT_TRUE(view.Saw("update rs/change"));
  EXPECT_TRUE(view.Saw("delete rs/remove"));
  const InformerStats s = inf.stats();
  EXPECT_GT(s.errors, 0);
  EXPECT_GE(s.watches, 2);
  std::fprintf(stderr, "restart: lists %lld, relists on 410 %lld, watches %lld, errors %lld\n",
               static_cast<long long>(s.lists), static_cast<long long>(s.relists_on_gone),
               static_cast<long long>(s.watches), static_cast<long long>(s.errors));
  ASSERT_TRUE(client().Delete(NodePath("rs-node")).ok());
}

TEST_F(KubeApiTest, CompactionForcesRelistThatConverges) {
  for (const char* n : {"cmp-1", "cmp-2", "cmp-3"}) {
    ASSERT_TRUE(client().Create(NodesPath(), NodeObject(n, {{"suite", "compact"}})).ok());
  }
  HandlerView view;
  InformerOptions o = FastInformer(NodesPath());
  o.label_selector = "suite=compact";
  Informer inf(&client(), o, view.Handlers());
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(seconds(20)));
  ASSERT_EQ(inf.Size(), 3u);

  inf.PauseForTest();  // disconnected, as in a network partition
  ASSERT_TRUE(client().Delete(NodePath("cmp-1")).ok());
  ASSERT_TRUE(
      client()
          .Patch(NodePath("cmp-2"), PatchType::kMerge, {{"metadata", {{"labels", {{"v", "2"}}}}}})
          .ok());
  ASSERT_TRUE(client().Create(NodesPath(), NodeObject("cmp-4", {{"suite", "compact"}})).ok());
  ASSERT_EQ(Script("compact"), 0);
  const int64_t gone_before = inf.stats().relists_on_gone;
  inf.ResumeForTest();

  const bool converged = WaitFor(
      [&] {
        const auto server = ServerState(NodesPath(), "suite=compact");
        return CacheState(inf) == server && view.State() == server;
      },
      seconds(30));
  EXPECT_TRUE(converged);
  EXPECT_GT(inf.stats().relists_on_gone, gone_before) << "the watch from the old version got 410";
  EXPECT_TRUE(view.Saw("delete cmp-1"));
  EXPECT_TRUE(view.Saw("update cmp-2"));
  EXPECT_TRUE(view.Saw("add cmp-4"));
  EXPECT_FALSE(inf.Get("cmp-1").has_value());
  for (const char* n : {"cmp-2", "cmp-3", "cmp-4"}) {
    ASSERT_TRUE(client().Delete(NodePath(n)).ok());
  }
}

TEST_F(KubeApiTest, AnInformerCanLeaveTheObjectsToItsHandler) {
  for (const char* n : {"own-a", "own-b"}) {
    ASSERT_TRUE(client().Create(NodesPath(), NodeObject(n, {{"suite", "own"}})).ok());
  }
  // The handler keeps the objects; the informer only their metadata.
  std::mutex mu;
  std::map<std::string, Json> kept;
  InformerHandlers h;
  h.on_upsert = [&](Json o) {
    const std::string key = ObjectKey(o);
    std::lock_guard<std::mutex> lock(mu);
    kept[key] = std::move(o);
  };
  h.on_delete = [&](const Json& o) {
    std::lock_guard<std::mutex> lock(mu);
    kept.erase(ObjectKey(o));
  };
  auto kept_state = [&] {
    std::lock_guard<std::mutex> lock(mu);
    std::map<std::string, std::string> out;
    for (const auto& [key, o] : kept) {
      if (!o.contains("status")) return std::map<std::string, std::string>{};  // not whole
      out[key] = o["metadata"]["resourceVersion"];
    }
    return out;
  };
  auto server = [&] { return ServerState(NodesPath(), "suite=own"); };
  InformerOptions o = FastInformer(NodesPath());
  o.label_selector = "suite=own";
  o.keep_objects = false;
  Informer inf(&client(), o, h);
  inf.Start();
  ASSERT_TRUE(inf.WaitForSync(seconds(20)));
  EXPECT_EQ(kept_state(), server());
  ASSERT_TRUE(inf.Get("own-a").has_value());
  EXPECT_FALSE(inf.Get("own-a")->contains("status"));
  EXPECT_EQ((*inf.Get("own-a"))["metadata"]["name"], "own-a");

  ASSERT_TRUE(client().Create(NodesPath(), NodeObject("own-c", {{"suite", "own"}})).ok());
  ASSERT_TRUE(client()
                  .Patch(NodePath("own-a"), PatchType::kMerge,
                         {{"metadata", {{"labels", {{"changed", "yes"}}}}}})
                  .ok());
  ASSERT_TRUE(client().Delete(NodePath("own-b")).ok());
  EXPECT_TRUE(WaitFor([&] { return kept_state() == server(); }, seconds(10)));
  EXPECT_EQ(CacheState(inf), server());

  // A re-list after 410 (this suite's apiserver has no watch cache of nodes) hands the changes
  // over the same way.
  inf.PauseForTest();
  ASSERT_TRUE(client().Delete(NodePath("own-c")).ok());
  ASSERT_TRUE(client().Create(NodesPath(), NodeObject("own-d", {{"suite", "own"}})).ok());
  ASSERT_TRUE(client()
                  .Patch(NodePath("own-a"), PatchType::kMerge,
                         {{"metadata", {{"labels", {{"changed", "again"}}}}}})
                  .ok());
  ASSERT_EQ(Script("compact"), 0);
  const int64_t gone_before = inf.stats().relists_on_gone;
  inf.ResumeForTest();
  EXPECT_TRUE(WaitFor([&] { return kept_state() == server() && CacheState(inf) == server(); },
                      seconds(30)));
  EXPECT_GT(inf.stats().relists_on_gone, gone_before);
  EXPECT_FALSE(inf.Get("own-d")->contains("status"));
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(kept["own-a"]["metadata"]["labels"]["changed"], "again");
  }
  inf.Stop();
  for (const char* n : {"own-a", "own-d"}) ASSERT_TRUE(client().Delete(NodePath(n)).ok());
}

TEST_F(KubeApiTest, ClientCertificateContextAndConcurrentRequestsDuringWatch) {
  Result<KubeConfig> cert_cfg = LoadKubeConfigFile(run_dir_ + "/kubeconfig", "local-cert");
  ASSERT_TRUE(cert_cfg.ok()) << cert_cfg.status().ToString();
  EXPECT_TRUE(cert_cfg->token.empty());
  Result<std::unique_ptr<KubeClient>> c = KubeClient::Create(*cert_cfg);
  ASSERT_TRUE(c.ok());
  Result<Json> ns = (*c)->Get(NamespacesPath() + "/default");
  ASSERT_TRUE(ns.ok()) << ns.status().ToString();

  // A watch holds its own connection: requests meanwhile go through the pool.
  WatchOptions wo;
  wo.timeout_seconds = 30;
  Result<std::unique_ptr<Watch>> w = (*c)->StartWatch(NamespacesPath(), wo);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  std::atomic<int> seen{0};
  std::thread reader([&] {
    while (true) {
      Result<std::optional<WatchEvent>> ev = (*w)->Next();
      if (!ev.ok() || !ev->has_value()) break;
      seen.fetch_add(1);
    }
  });
  for (int i = 0; i < 20; ++i) ASSERT_TRUE((*c)->Get(NamespacesPath() + "/default").ok());
  ASSERT_TRUE(WaitFor([&] { return seen.load() > 0; }, seconds(5)));  // synthetic ADDEDs
  const auto t0 = std::chrono::steady_clock::now();
  (*w)->Stop();
  reader.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(500)) << "Watch::Stop is prompt";

  // A bad token is refused with 401.
  KubeConfig bad = *config_;
  bad.token = "wrong";
  Result<std::unique_ptr<KubeClient>> anon = KubeClient::Create(bad);
  ASSERT_TRUE(anon.ok());
  Result<Json> denied = (*anon)->Get(NodesPath());
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(ApiErrorOf(denied.status()).http_code, 401) << denied.status().ToString();
  EXPECT_EQ(denied.status().code(), StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace lockstep::kube

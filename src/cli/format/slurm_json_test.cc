// squeue/sinfo/sacct --json against Slurm 22.05's own output: the key sets, their order and
// their value types recorded from a real Slurm 22.05.8 (tests/data/slurm_json/), and the values
// lockstep fills in.
#include "cli/format/slurm_json.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace lockstep::cli {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

std::string DataPath(const std::string& name) {
  const char* src = std::getenv("LOCKSTEP_SOURCE_DIR");
  return std::string(src ? src : ".") + "/tests/data/slurm_json/" + name;
}

ordered_json ReadJson(const std::string& name) {
  std::ifstream in(DataPath(name));
  EXPECT_TRUE(in) << DataPath(name);
  return ordered_json::parse(in);
}

// The key list files: one leaf path a line, '#' comments.
std::vector<std::string> ReadKeys(const std::string& name) {
  std::ifstream in(DataPath(name));
  EXPECT_TRUE(in) << DataPath(name);
  std::vector<std::string> keys;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') keys.push_back(line);
  return keys;
}

std::vector<std::string> Keys(const ordered_json& o) {
  std::vector<std::string> keys;
  for (auto it = o.begin(); it != o.end(); ++it) keys.push_back(it.key());
  return keys;
}

// Leaf paths in print order; lists are leaves.
void Flatten(const ordered_json& o, const std::string& prefix, std::vector<std::string>& out) {
  for (auto it = o.begin(); it != o.end(); ++it) {
    std::string path = prefix.empty() ? it.key() : prefix + "/" + it.key();
    if (it->is_object() && !it->empty())
      Flatten(*it, path, out);
    else
      out.push_back(path);
  }
}

std::vector<std::string> Flat(const ordered_json& o) {
  std::vector<std::string> out;
  Flatten(o, "", out);
  return out;
}

// Slurm's type of each key against ours: the same JSON type, where Slurm's value is not null
// (a null in the recording says only that the peer had it unset).
void ExpectSameTypes(const ordered_json& slurm, const ordered_json& ours, const std::string& what) {
  for (auto it = slurm.begin(); it != slurm.end(); ++it) {
    if (it->is_null() || !ours.contains(it.key())) continue;
    const ordered_json& mine = ours[it.key()];
    if (mine.is_null()) continue;
    EXPECT_EQ(std::string(it->type_name()), std::string(mine.type_name()))
        << what << " key " << it.key();
    if (it->is_number_float()) {
      EXPECT_TRUE(mine.is_number_float()) << what << " key " << it.key();
    }
  }
}

json Job(const std::string& state) {
  json j = {{"job_id", 42},
            {"name", "train"},
            {"user", "alice"},
            {"uid", 1000},
            {"gid", 1000},
            {"account", "llm"},
            {"partition", "gpu"},
            {"qos", "normal"},
            {"state", state},
            {"reason", "None"},
            {"nodes", ""},
            {"node_count", 2},
            {"cpus", 16},
            {"gpus", 4},
            {"mem_mb", 2048},
            {"tasks", 8},
            {"tres_per_node", "gres/gpu:2"},
            {"time_limit", 3600},
            {"submit_time", 1000},
            {"eligible_time", 1000},
            {"start_time", 0},
            {"end_time", 0},
            {"expected_start", 0},
            {"priority", 77},
            {"exit_code", 0},
            {"signal", 0},
            {"work_dir", "/home/alice"},
            {"dependency", ""},
            {"restart_count", 0},
            {"requeue", true},
            {"nice", 0},
            {"features", ""},
            {"req_nodes", ""},
            {"exc_nodes", ""},
            {"batch_host", ""},
            {"command", "train.sh"},
            {"stdout", "/home/alice/slurm-42.out"},
            {"stderr", "/home/alice/slurm-42.out"},
            {"steps", json::array()}};
  if (state == "PENDING") {
    j["reason"] = "Resources";
    j["expected_start"] = 5000;
  } else {
    j["nodes"] = "gpu[001-002]";
    j["batch_host"] = "gpu001";
    j["start_time"] = 2000;
    j["steps"] = json::array({{{"step_id", "batch"},
                               {"name", "batch"},
                               {"state", state},
                               {"exit_code", 0},
                               {"signal", 0},
                               {"start_time", 2000},
                               {"end_time", 0},
                               {"nodes", "gpu001"}},
                              {{"step_id", 0},
                               {"name", "python"},
                               {"state", "RUNNING"},
                               {"exit_code", 0},
                               {"signal", 0},
                               {"start_time", 2010},
                               {"end_time", 0},
                               {"nodes", "gpu[001-002]"},
                               {"ntasks", 8}}});
  }
  if (state == "FAILED") {
    j["exit_code"] = 3;
    j["end_time"] = 2600;
  }
  return j;
}

SlurmJsonContext Ctx() {
  SlurmJsonContext c;
  c.now = 3000;
  c.group_name = [](std::int64_t gid) { return gid == 1000 ? std::string("alice") : ""; };
  return c;
}

ordered_json PeerJob(const std::string& file, const std::string& state) {
  ordered_json peer = ReadJson(file);
  for (const ordered_json& j : peer["jobs"])
    if (j["job_state"] == state) return j;
  ADD_FAILURE() << "no " << state << " job in " << file;
  return {};
}

TEST(SqueueJson, EnvelopeAsSlurms) {
  Result<ordered_json> ours = SqueueJson(json::array({Job("RUNNING")}), Ctx());
  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  ordered_json peer = ReadJson("squeue_running_pending_array.json");
  EXPECT_EQ(Keys(peer), Keys(*ours));
  EXPECT_EQ(Flat(peer["meta"]), Flat((*ours)["meta"]));
  EXPECT_EQ((*ours)["meta"]["plugin"]["type"], "openapi/v0.0.38");
  EXPECT_EQ((*ours)["meta"]["Slurm"]["version"]["major"], 22);
  EXPECT_TRUE((*ours)["errors"].is_array());
}

TEST(SqueueJson, RunningJobHasSlurmsKeysInOrder) {
  ordered_json peer = PeerJob("squeue_running_pending_array.json", "RUNNING");
  ordered_json ours = (*SqueueJson(json::array({Job("RUNNING")}), Ctx()))["jobs"][0];
  EXPECT_EQ(peer.size(), 111u);
  EXPECT_EQ(Keys(peer), Keys(ours));
  EXPECT_EQ(Keys(peer["job_resources"]), Keys(ours["job_resources"]));
  EXPECT_EQ(Keys(peer["job_resources"]["allocated_nodes"][0]),
            Keys(ours["job_resources"]["allocated_nodes"][0]));
  ExpectSameTypes(peer, ours, "running");
}

TEST(SqueueJson, PendingJobHasSlurmsKeysInOrder) {
  ordered_json peer = PeerJob("squeue_running_pending_array.json", "PENDING");
  ordered_json ours = (*SqueueJson(json::array({Job("PENDING")}), Ctx()))["jobs"][0];
  EXPECT_EQ(peer.size(), 110u);  // no job_resources before it has nodes
  EXPECT_EQ(Keys(peer), Keys(ours));
  ExpectSameTypes(peer, ours, "pending");
}

TEST(SqueueJson, FinishedJobHasSlurmsKeysInOrder) {
  ordered_json peer = PeerJob("squeue_finished.json", "COMPLETED");
  json done = Job("COMPLETED");
  done["end_time"] = 2500;
  ordered_json ours = (*SqueueJson(json::array({done}), Ctx()))["jobs"][0];
  EXPECT_EQ(Keys(peer), Keys(ours));
  ExpectSameTypes(peer, ours, "completed");
}

TEST(SqueueJson, ValuesFromLockstepsJob) {
  ordered_json r = (*SqueueJson(json{{"jobs", json::array({Job("RUNNING")})}}, Ctx()))["jobs"][0];
  EXPECT_EQ(r["job_id"], 42);
  EXPECT_EQ(r["job_state"], "RUNNING");
  EXPECT_EQ(r["partition"], "gpu");
  EXPECT_EQ(r["user_name"], "alice");
  EXPECT_EQ(r["group_name"], "alice");
  EXPECT_EQ(r["node_count"], 2);
  EXPECT_EQ(r["nodes"], "gpu[001-002]");
  EXPECT_EQ(r["time_limit"], 60);               // minutes
  EXPECT_EQ(r["end_time"], 2000 + 3600);        // a running job's end: start + limit
  EXPECT_EQ(r["tres_per_node"], "gres:gpu:2");  // 22.05's spelling
  EXPECT_EQ(r["tres_req_str"], "cpu=16,mem=2G,node=2,billing=16,gres/gpu=4");
  EXPECT_EQ(r["gres_detail"], ordered_json::array({"gpu(CNT:2)", "gpu(CNT:2)"}));
  EXPECT_EQ(r["job_resources"]["allocated_hosts"], 2);
  EXPECT_EQ(r["job_resources"]["allocated_nodes"][1]["nodename"], "gpu002");
  EXPECT_EQ(r["flags"], ordered_json::array({"JOB_WAS_RUNNING"}));
  EXPECT_EQ(r["array_task_id"], nullptr);

  ordered_json p = (*SqueueJson(json::array({Job("PENDING")}), Ctx()))["jobs"][0];
  EXPECT_EQ(p["state_reason"], "Resources");
  EXPECT_EQ(p["start_time"], 5000);  // the expected start, as Slurm's backfill sets it
  EXPECT_EQ(p["tres_alloc_str"], "");
  EXPECT_FALSE(p.contains("job_resources"));

  ordered_json f = (*SqueueJson(json::array({Job("FAILED")}), Ctx()))["jobs"][0];
  EXPECT_EQ(f["exit_code"], 3 << 8);  // a wait status, as Slurm's 768 for `exit 3`
  EXPECT_EQ(f["state_reason"], "NonZeroExitCode");
}

TEST(SqueueJson, PendingArrayAsSlurms) {
  json a = Job("PENDING");
  a["array_job_id"] = 40;
  a["array_task_str"] = "[1-4%2]";
  ordered_json r = (*SqueueJson(json::array({a}), Ctx()))["jobs"][0];
  ordered_json peer = ReadJson("squeue_running_pending_array.json");
  ordered_json peer_array;
  for (const ordered_json& j : peer["jobs"])
    if (j["array_task_string"] != "") peer_array = j;
  EXPECT_EQ(peer_array["array_task_string"], r["array_task_string"]);
  EXPECT_EQ(peer_array["array_max_tasks"], r["array_max_tasks"]);
  EXPECT_EQ(r["array_job_id"], 40);
  // Held, as the peer's array was (--hold): no eligibility and priority 0, as Slurm shows it.
  a["reason"] = "JobHeldUser";
  r = (*SqueueJson(json::array({a}), Ctx()))["jobs"][0];
  EXPECT_EQ(peer_array["priority"], r["priority"]);
  EXPECT_EQ(peer_array["eligible_time"], r["eligible_time"]);
  EXPECT_EQ(peer_array["accrue_time"], r["accrue_time"]);
  EXPECT_EQ(peer_array["billable_tres"], r["billable_tres"]);  // null until it runs
  EXPECT_EQ(r["minimum_cpus_per_node"], 2);                    // 16 CPUs for 8 tasks: 2 a task
}

// squeue --json and sacct --json print their document a job at a time: the same bytes as the
// whole document's dump(2), for no job, one, and several of different states.
TEST(SqueueJson, WrittenJobByJobIsTheWholeDocumentsText) {
  json array = Job("RUNNING");
  array["array_job_id"] = 40;
  array["array_task_str"] = "[3-8%2]";
  for (const json& jobs : {json::array(), json::array({Job("PENDING")}),
                           json{{"jobs", json::array({Job("RUNNING"), Job("FAILED"), array})}}}) {
    std::string squeue, sacct;
    ASSERT_TRUE(WriteSqueueJson(jobs, Ctx(), [&](std::string_view t) { squeue += t; }).ok());
    EXPECT_EQ(squeue, SqueueJson(jobs, Ctx())->dump(2) + "\n") << jobs.dump();
    ASSERT_TRUE(WriteSacctJson(jobs, Ctx(), [&](std::string_view t) { sacct += t; }).ok());
    EXPECT_EQ(sacct, SacctJson(jobs, Ctx())->dump(2) + "\n") << jobs.dump();
  }
  std::string written;
  EXPECT_FALSE(WriteSqueueJson(json::array({Job("PENDING"), 1}), Ctx(),
                               [&](std::string_view t) { written += t; })
                   .ok());
  EXPECT_EQ(written, "") << "nothing is written before the jobs are checked";
}

TEST(SqueueJson, BadInputIsAnError) {
  EXPECT_FALSE(SqueueJson(json::object({{"jobs", 3}}), Ctx()).ok());
  EXPECT_FALSE(SqueueJson(json::array({1}), Ctx()).ok());
  EXPECT_FALSE(SinfoJson(json("x"), Ctx()).ok());
  EXPECT_FALSE(SacctJson(json::array({"x"}), Ctx()).ok());
}

json Node(const std::string& state, int cpus_alloc) {
  return {{"name", "gpu001"},
          {"state", state},
          {"reason", ""},
          {"reason_user", ""},
          {"reason_time", 0},
          {"cpus", 64},
          {"cpus_alloc", cpus_alloc},
          {"mem_mb", 512000},
          {"mem_alloc_mb", 0},
          {"gpus", 8},
          {"gpus_alloc", 2},
          {"gpu_type", "h100"},
          {"gres", "gpu:h100:8"},
          {"gres_used", "gpu:h100:2(IDX:0-1)"},
          {"features", "ib"},
          {"partitions", {"gpu"}},
          {"weight", 1}};
}

TEST(SinfoJson, NodeHasSlurmsKeysInOrder) {
  ordered_json peer = ReadJson("sinfo.json");
  Result<ordered_json> ours = SinfoJson(json{{"nodes", json::array({Node("mixed", 4)})}}, Ctx());
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(Keys(peer), Keys(*ours));
  EXPECT_EQ(Keys(peer["nodes"][0]), Keys((*ours)["nodes"][0]));
  ExpectSameTypes(peer["nodes"][0], (*ours)["nodes"][0], "node");
  const ordered_json& n = (*ours)["nodes"][0];
  EXPECT_EQ(n["state"], "mixed");
  EXPECT_EQ(n["alloc_cpus"], 4);
  EXPECT_EQ(n["idle_cpus"], 60);
  EXPECT_EQ(n["tres"], "cpu=64,mem=500G,billing=64,gres/gpu=8");
  EXPECT_EQ(n["tres_used"], "cpu=4,gres/gpu=2");
  EXPECT_EQ(n["partitions"], ordered_json::array({"gpu"}));
}

TEST(SinfoJson, StatesAsBaseAndFlags) {
  json drained = Node("drained", 0);
  drained["gpus_alloc"] = 0;
  drained["reason"] = "bad GPU";
  drained["reason_user"] = "root";
  ordered_json d = (*SinfoJson(json::array({drained}), Ctx()))["nodes"][0];
  EXPECT_EQ(d["state"], "idle");
  EXPECT_EQ(d["state_flags"], ordered_json::array({"DRAIN"}));
  EXPECT_EQ(d["reason_set_by_user"], "root");
  ordered_json lost = (*SinfoJson(json::array({Node("down*", 0)}), Ctx()))["nodes"][0];
  EXPECT_EQ(lost["state"], "down");
  EXPECT_EQ(lost["state_flags"], ordered_json::array({"NOT_RESPONDING"}));
}

TEST(SacctJson, JobAndStepKeysAsDbv0038) {
  Result<ordered_json> ours = SacctJson(json::array({Job("FAILED")}), Ctx());
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ((*ours)["meta"]["plugin"]["type"], "openapi/dbv0.0.38");
  const ordered_json& job = (*ours)["jobs"][0];
  EXPECT_EQ(ReadKeys("sacct_job_keys.txt"), Flat(job));
  ASSERT_EQ(job["steps"].size(), 2u);
  EXPECT_EQ(ReadKeys("sacct_step_keys.txt"), Flat(job["steps"][0]));
  EXPECT_EQ(ReadKeys("sacct_step_keys.txt"), Flat(job["steps"][1]));
}

TEST(SacctJson, ValuesFromLockstepsJob) {
  const ordered_json job = (*SacctJson(json::array({Job("FAILED")}), Ctx()))["jobs"][0];
  EXPECT_EQ(job["job_id"], 42);
  EXPECT_EQ(job["state"]["current"], "FAILED");
  EXPECT_EQ(job["state"]["reason"], "NonZeroExitCode");
  EXPECT_EQ(job["exit_code"]["status"], "FAILED");
  EXPECT_EQ(job["exit_code"]["return_code"], 3);
  EXPECT_EQ(job["time"]["elapsed"], 600);
  EXPECT_EQ(job["time"]["limit"], 60);
  EXPECT_EQ(job["time"]["start"], 2000);
  EXPECT_EQ(job["group"], "alice");
  EXPECT_EQ(job["association"]["account"], "llm");
  ordered_json cpu = job["tres"]["allocated"][0];
  EXPECT_EQ(cpu["type"], "cpu");
  EXPECT_EQ(cpu["count"], 16);
  EXPECT_EQ(job["tres"]["allocated"].back()["name"], "gpu");
  const ordered_json& batch = job["steps"][0];
  EXPECT_EQ(batch["step"]["id"], "batch");
  EXPECT_EQ(batch["nodes"]["count"], 1);
  const ordered_json& step0 = job["steps"][1];
  EXPECT_EQ(step0["step"]["id"], 0);
  EXPECT_EQ(step0["nodes"]["count"], 2);
  EXPECT_EQ(step0["tasks"]["count"], 8);
  EXPECT_EQ(step0["time"]["elapsed"], 3000 - 2010);  // still running: until now

  json killed = Job("CANCELLED");
  killed["signal"] = 9;
  EXPECT_EQ((*SacctJson(json::array({killed}), Ctx()))["jobs"][0]["exit_code"]["signal"]["name"],
            "KILL");
}

}  // namespace
}  // namespace lockstep::cli

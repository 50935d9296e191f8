// A small cluster and workload, as the REST API returns them (docs/api.md), shared by the
// formatter tests. Times are fixed; the tests run in UTC (see field_format_test.cc).
#pragma once

#include <nlohmann/json.hpp>

#include "common/types.h"

namespace lockstep::cli::testdata {

// 2025-11-29T08:06:40Z: the "now" of every test.
inline constexpr Time kNow = 1764403600;

// Four jobs in two partitions: a running and a pending job in gpu (squeue(1)'s example), and in
// cpu a pending array with a task limit plus one of its tasks running for over a day.
inline nlohmann::json Jobs() {
  return nlohmann::json::parse(R"([
    {"job_id": 1234, "name": "train", "user": "alice", "uid": 1000, "gid": 1000,
     "account": "llm", "partition": "gpu", "qos": "normal", "state": "RUNNING",
     "reason": "None", "nodes": "gpu-node[001-064]", "node_count": 64, "cpus": 4096,
     "gpus": 512, "tasks": 512, "mem_mb": 0, "tres_per_node": "gres/gpu:8",
     "time_limit": 86400, "submit_time": 1764396400, "eligible_time": 1764396400,
     "start_time": 1764399877, "end_time": 0, "expected_start": 0, "priority": 5000,
     "exit_code": 0, "signal": 0, "work_dir": "/home/alice", "dependency": "",
     "restart_count": 0, "requeue": true, "nice": 0, "features": "",
     "batch_host": "gpu-node001"},
    {"job_id": 1235, "name": "train", "user": "alice", "uid": 1000, "gid": 1000,
     "account": "llm", "partition": "gpu", "qos": "normal", "state": "PENDING",
     "reason": "Resources", "nodes": "", "node_count": 64, "cpus": 4096, "gpus": 512,
     "tasks": 512, "mem_mb": 0, "tres_per_node": "gres/gpu:8", "time_limit": 3600,
     "submit_time": 1764403540, "eligible_time": 1764403540, "start_time": 0, "end_time": 0,
     "expected_start": 1764405400, "priority": 4000, "exit_code": 0, "signal": 0,
     "work_dir": "/home/alice", "dependency": "afterok:1234", "restart_count": 0,
     "requeue": true, "nice": 0, "features": "", "batch_host": ""},
    {"job_id": 40, "array_job_id": 40, "array_task_str": "[3-10%2]",
     "name": "preprocess-data", "user": "verylongusername", "uid": 1001, "gid": 1001,
     "account": "data", "partition": "cpu", "qos": "normal", "state": "PENDING",
     "reason": "JobArrayTaskLimit", "nodes": "", "node_count": 1, "cpus": 2, "gpus": 0,
     "tasks": 1, "mem_mb": 4096, "tres_per_node": "", "time_limit": null,
     "submit_time": 1764310000, "eligible_time": 1764310000, "start_time": 0, "end_time": 0,
     "expected_start": 0, "priority": 100, "exit_code": 0, "signal": 0,
     "work_dir": "/data", "dependency": "", "restart_count": 0, "requeue": false,
     "nice": 0, "features": "", "batch_host": ""},
    {"job_id": 42, "array_job_id": 40, "array_task_id": 2, "array_task_str": "",
     "name": "preprocess-data", "user": "verylongusername", "uid": 1001, "gid": 1001,
     "account": "data", "partition": "cpu", "qos": "normal", "state": "RUNNING",
     "reason": "None", "nodes": "cpu07", "node_count": 1, "cpus": 2, "gpus": 0, "tasks": 1,
     "mem_mb": 4096, "tres_per_node": "", "time_limit": null, "submit_time": 1764310000,
     "eligible_time": 1764310000, "start_time": 1764313539, "end_time": 0,
     "expected_start": 0, "priority": 100, "exit_code": 0, "signal": 0, "work_dir": "/data",
     "dependency": "", "restart_count": 0, "requeue": false, "nice": 0, "features": "",
     "batch_host": "cpu07"}
  ])");
}

// Three partitions (debug is the default and has a 30-minute limit, as in sinfo(1)'s example)
// and their nodes.
inline nlohmann::json Partitions() {
  return nlohmann::json::parse(R"([
    {"name": "batch", "default": false, "state": "up", "max_time": null, "default_time": null,
     "max_nodes": null, "nodes": "adev[8-15]", "node_count": 8, "priority_tier": 1},
    {"name": "debug", "default": true, "state": "up", "max_time": 1800, "default_time": 600,
     "max_nodes": 8, "nodes": "adev[0-7]", "node_count": 8, "priority_tier": 1},
    {"name": "empty", "default": false, "state": "down", "max_time": 172800,
     "default_time": 3600, "max_nodes": 4, "nodes": "", "node_count": 0, "priority_tier": 1}
  ])");
}

inline nlohmann::json Node(const char* name, const char* state, const char* partition,
                           int cpus_alloc = 0) {
  return nlohmann::json{{"name", name},
                        {"state", state},
                        {"reason", ""},
                        {"reason_user", ""},
                        {"reason_time", 0},
                        {"cpus", 2},
                        {"cpus_alloc", cpus_alloc},
                        {"mem_mb", 3448},
                        {"mem_alloc_mb", 0},
                        {"gpus", 0},
                        {"gpus_alloc", 0},
                        {"gpu_type", ""},
                        {"gres", ""},
                        {"gres_used", ""},
                        {"features", ""},
                        {"partitions", {partition}},
                        {"weight", 16}};
}

// sinfo(1)'s example cluster: adev[0-7] idle in debug, adev[8-9] allocated and adev[10-15]
// idle in batch; adev[6-7] drained by root for memory errors.
inline nlohmann::json Nodes() {
  nlohmann::json nodes = nlohmann::json::array();
  const char* names[] = {"adev0",  "adev1",  "adev2",  "adev3", "adev4",  "adev5",
                         "adev6",  "adev7",  "adev8",  "adev9", "adev10", "adev11",
                         "adev12", "adev13", "adev14", "adev15"};
  for (int i = 0; i < 16; ++i) {
    bool batch = i >= 8;
    const char* state = (i == 8 || i == 9) ? "allocated" : "idle";
    nodes.push_back(Node(names[i], state, batch ? "batch" : "debug", (i == 8 || i == 9) ? 2 : 0));
  }
  for (int i : {6, 7}) {
    nodes[i]["state"] = "drained";
    nodes[i]["reason"] = "Memory errors";
    nodes[i]["reason_user"] = "root";
    nodes[i]["reason_time"] = 1764390000;
  }
  return nodes;
}

}  // namespace lockstep::cli::testdata

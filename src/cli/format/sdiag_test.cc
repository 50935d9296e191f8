// sdiag's report from GET /api/v1/sdiag's JSON, line for line as Slurm 22.05 prints it.
#include "cli/format/sdiag.h"

#include <gtest/gtest.h>

#include "cli/format/event_line.h"

namespace lockstep::cli {
namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(Sdiag, PrintsSlurmsLinesFromTheCounters) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "time": 1796221379, "since": 1796221000,
    "jobs_submitted": 7, "jobs_started": 5, "jobs_completed": 3, "jobs_canceled": 1,
    "jobs_failed": 1, "jobs_pending": 2, "jobs_running": 1,
    "main": {"cycles": 4, "last_us": 120, "max_us": 300, "total_us": 800, "total_depth": 12,
             "last_queue_len": 2},
    "backfill": {"cycles": 2, "last_us": 900, "max_us": 1000, "total_us": 1800, "last_depth": 3,
                 "total_depth": 6, "last_queue_len": 2, "total_queue_len": 4, "backfilled": 1,
                 "last_when": 1796221370},
    "rpc_by_type": [{"type": "GET /api/v1/jobs", "id": 2, "count": 3, "total_us": 300},
                    {"type": "POST /api/v1/jobs", "id": 1, "count": 7, "total_us": 7000}],
    "rpc_by_user": [{"user": "alice", "id": 1000, "count": 10, "total_us": 7300}]})");
  const std::string out = FormatSdiag(j);
  for (const char* line :
       {"Jobs submitted: 7\n", "Jobs started:   5\n", "Jobs completed: 3\n", "Jobs canceled:  1\n",
        "Jobs failed:    1\n\n", "Jobs pending:   2\n", "Jobs running:   1\n",
        "\nMain schedule statistics (microseconds):\n\tLast cycle:   120\n\tMax cycle:    300\n"
        "\tTotal cycles: 4\n\tMean cycle:   200\n\tMean depth cycle:  3\n",
        "\tCycles per minute: 0\n", "\tLast queue length: 2\n",
        "\nMain scheduler exit:\n\tEnd of job queue: 4\n\tHit default_queue_depth: 0\n",
        "\nBackfilling stats\n\tTotal backfilled jobs (since last slurm start): 1\n",
        "\tTotal cycles: 2\n", "\tLast cycle: 900\n\tMax cycle:  1000\n\tMean cycle: 900\n",
        "\tDepth Mean: 3\n", "\tQueue length mean: 2\n",
        "\tPOST /api/v1/jobs                       (    1) count:7      ave_time:1000   "
        "total_time:7000\n\tGET /api/v1/jobs",
        "\talice           (    1000) count:10     ave_time:730    total_time:7300\n",
        "\nPending RPC statistics\n\tNo pending RPCs\n"})
    EXPECT_TRUE(Contains(out, line)) << line << "\n---\n" << out;
}

TEST(EventLine, NamesTheJobOrNodeAndEscapesWhatUsersWrote) {
  nlohmann::json e = {{"time", 0},         {"kind", "ended"}, {"job", "42"},
                      {"state", "FAILED"}, {"exit_code", 3},  {"name", "a\x1b[31mb"}};
  const std::string line = FormatEventLine(e);
  EXPECT_TRUE(Contains(line, " job 42 ended state=FAILED exit_code=3 name=")) << line;
  EXPECT_FALSE(Contains(line, "\x1b")) << line;
  nlohmann::json n = {{"time", 0}, {"kind", "node_drained"}, {"node", "gpu7"}, {"reason", "fan"}};
  EXPECT_TRUE(Contains(FormatEventLine(n), " node gpu7 drained reason=fan"));
}

}  // namespace
}  // namespace lockstep::cli

// Loading the SWF logs of ../shared/data/swf, the part of `lockstep sim` before the replay:
// BM_ReadSwf reads a log as the sim does (decompressing and parsing in one go), BM_Decompress
// only gunzips it (ReadFileMaybeGzip), BM_ParseSwf only parses the text already in memory.
// Process CPU time, so that neighbours on a shared machine count less than in wall time.
//
//   build/bin/trace_read_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// A log that is absent is skipped with a message.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "trace/trace.h"

namespace lockstep::bench {
namespace {

const char* const kLogs[] = {"HPC2N-2002-2.1-cln.swf.gz", "KTH-SP2-1996-2.1-cln.swf.gz",
                             "lublin_256.swf"};

std::string LogPath(const char* name) {
  const char* shared = std::getenv("LOCKSTEP_SHARED_DIR");
  std::filesystem::path dir = shared != nullptr ? std::filesystem::path(shared)
                                                : std::filesystem::path(LOCKSTEP_SOURCE_DIR_FOR_BENCH) /
                                                      ".." / "shared";
  return (dir / "data" / "swf" / name).string();
}

void BM_ReadSwf(benchmark::State& state, const char* name) {
  const std::string path = LogPath(name);
  if (!std::filesystem::exists(path)) return state.SkipWithError(("absent: " + path).c_str());
  std::size_t jobs = 0;
  for (auto _ : state) {
    Result<trace::Trace> t = trace::ReadSwf(path);
    if (!t.ok()) return state.SkipWithError(t.status().message().c_str());
    jobs = t->jobs.size();
  }
  state.counters["jobs"] = static_cast<double>(jobs);
}

void BM_Decompress(benchmark::State& state, const char* name) {
  const std::string path = LogPath(name);
  if (!std::filesystem::exists(path)) return state.SkipWithError(("absent: " + path).c_str());
  std::size_t bytes = 0;
  for (auto _ : state) {
    Result<std::string> text = trace::ReadFileMaybeGzip(path);
    if (!text.ok()) return state.SkipWithError(text.status().message().c_str());
    bytes = text->size();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void BM_ParseSwf(benchmark::State& state, const char* name) {
  const std::string path = LogPath(name);
  if (!std::filesystem::exists(path)) return state.SkipWithError(("absent: " + path).c_str());
  const std::string text = *trace::ReadFileMaybeGzip(path);
  for (auto _ : state) {
    Result<trace::Trace> t = trace::ParseSwf(text, path);
    if (!t.ok()) return state.SkipWithError(t.status().message().c_str());
    benchmark::DoNotOptimize(t->jobs.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}

void RegisterAll() {
  for (const char* name : kLogs) {
    benchmark::RegisterBenchmark((std::string("BM_ReadSwf/") + name).c_str(), BM_ReadSwf, name)
        ->MeasureProcessCPUTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("BM_Decompress/") + name).c_str(), BM_Decompress,
                                 name)
        ->MeasureProcessCPUTime()
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("BM_ParseSwf/") + name).c_str(), BM_ParseSwf, name)
        ->MeasureProcessCPUTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace lockstep::bench

int main(int argc, char** argv) {
  lockstep::bench::RegisterAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

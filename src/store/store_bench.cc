// Durable Puts per second from concurrent clients: each client thread Puts one record (a
// 200-byte value under the next job id) and waits for it to be durable, as lockstepd's submit
// handlers do.
//
//   store_bench --benchmark_filter=BM_Put
//
// The store lives in $TMPDIR (default /tmp); point TMPDIR at the disk to measure. With sync=true
// every commit is an fsync, so the rate is about min(clients, max_batch) / (fsync latency), and
// records_per_commit shows how many clients shared each fsync. BM_Put/exclusive and
// BM_Put/truncate are the modes for network file systems (store_mode.h), fsync'd as BM_Put/sync
// (WAL with shared memory) is.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>

#include "store/store.h"

namespace lockstep::store {
namespace {

// The store of the benchmark being run: opened by Setup before the threads start, closed by
// Teardown after they end (Google Benchmark offers no other way to share one object among the
// threads of a run).
struct BenchStore {
  std::filesystem::path dir;
  std::unique_ptr<Store> store;
  std::atomic<std::uint64_t> next_job{1};  // keys are job ids, as the controller's are
};

BenchStore& Shared() {
  static BenchStore shared;
  return shared;
}

void OpenStore(bool sync,
               std::chrono::microseconds max_batch_delay = StoreOptions().max_batch_delay,
               StoreMode mode = StoreMode::kWal) {
  BenchStore& shared = Shared();
  std::string pattern = (std::filesystem::temp_directory_path() / "store_bench.XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) std::abort();
  shared.dir = pattern;
  StoreOptions options;
  options.path = (shared.dir / "lockstep.db").string();
  options.sync = sync;
  options.max_batch_delay = max_batch_delay;
  options.mode = mode;
  Result<std::unique_ptr<Store>> store = Store::Open(options);
  if (!store.ok()) {
    std::fprintf(stderr, "store_bench: %s\n", store.status().ToString().c_str());
    std::abort();
  }
  shared.store = std::move(*store);
  shared.next_job = 1;
}

void CloseStore(const benchmark::State&) {
  BenchStore& shared = Shared();
  shared.store.reset();
  std::filesystem::remove_all(shared.dir);
}

void BM_Put(benchmark::State& state) {
  Store& store = *Shared().store;
  std::atomic<std::uint64_t>& next_job = Shared().next_job;
  const std::string value(200, 'x');
  for (auto _ : state) {
    // Nearly sequential keys, like job ids: a commit dirties few B-tree pages.
    Status status = store.Put({{"jobs", fmt::format("{:012}", next_job++), value}});
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  const Store::Stats stats = store.stats();
  state.counters["records_per_commit"] = benchmark::Counter(
      stats.commits == 0 ? 0.0 : static_cast<double>(stats.records) / stats.commits,
      benchmark::Counter::kAvgThreads);
}

// The disk's floor: overwrite 4 KiB and fdatasync it, in the directory the store would use. One
// durable commit costs at least this, so BM_Put/sync/threads:N is at most N / this latency.
void BM_Fdatasync(benchmark::State& state) {
  OpenStore(/*sync=*/false);  // for the temporary directory
  const std::string path = (Shared().dir / "fsync.probe").string();
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  const std::string block(4096, 'x');
  for (auto _ : state) {
    if (::pwrite(fd, block.data(), block.size(), 0) != 4096 || ::fdatasync(fd) != 0) {
      state.SkipWithError("pwrite/fdatasync failed");
      break;
    }
  }
  ::close(fd);
  CloseStore(state);
}
BENCHMARK(BM_Fdatasync)->MinTime(1.0)->UseRealTime();

BENCHMARK(BM_Put)
    ->Name("BM_Put/sync")
    ->Setup([](const benchmark::State&) { OpenStore(/*sync=*/true); })
    ->Teardown(CloseStore)
    ->Threads(1)
    ->Threads(8)
    ->Threads(32)
    ->Threads(64)
    ->Threads(128)
    ->MinTime(2.0)
    ->UseRealTime();

BENCHMARK(BM_Put)
    ->Name("BM_Put/sync_nodelay")
    ->Setup([](const benchmark::State&) { OpenStore(/*sync=*/true, std::chrono::microseconds(0)); })
    ->Teardown(CloseStore)
    ->Threads(8)
    ->Threads(32)
    ->MinTime(2.0)
    ->UseRealTime();

// The modes without shared memory, for state on NFS, CephFS, EFS...
BENCHMARK(BM_Put)
    ->Name("BM_Put/exclusive")
    ->Setup([](const benchmark::State&) {
      OpenStore(/*sync=*/true, StoreOptions().max_batch_delay, StoreMode::kExclusive);
    })
    ->Teardown(CloseStore)
    ->Threads(1)
    ->Threads(32)
    ->MinTime(2.0)
    ->UseRealTime();

BENCHMARK(BM_Put)
    ->Name("BM_Put/truncate")
    ->Setup([](const benchmark::State&) {
      OpenStore(/*sync=*/true, StoreOptions().max_batch_delay, StoreMode::kTruncate);
    })
    ->Teardown(CloseStore)
    ->Threads(1)
    ->Threads(32)
    ->MinTime(2.0)
    ->UseRealTime();

// For comparison: no fsync, so this measures the commit path without the disk.
BENCHMARK(BM_Put)
    ->Name("BM_Put/nosync")
    ->Setup([](const benchmark::State&) { OpenStore(/*sync=*/false); })
    ->Teardown(CloseStore)
    ->Threads(1)
    ->Threads(32)
    ->MinTime(1.0)
    ->UseRealTime();

}  // namespace
}  // namespace lockstep::store

BENCHMARK_MAIN();

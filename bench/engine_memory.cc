// Memory of the engine's model and of one pass: bytes per pending job and per node in the
// Snapshot as built, and the extra heap one plan() takes at its peak (and keeps, in the Plan).
//
// Heap is counted by replacing the global operator new/delete in this program only, with
// malloc_usable_size, so every byte the allocator hands out is counted.
//
//   build-bench/bin/engine_memory [nodes pending]     (default 10000 100000)
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

#include "bench/bench_workload.h"
#include "engine/model.h"
#include "engine/scheduler.h"

namespace {

std::size_t g_current = 0;
std::size_t g_peak = 0;
std::size_t g_blocks = 0;

void* Count(void* p) {
  if (p == nullptr) throw std::bad_alloc();
  g_current += malloc_usable_size(p);
  ++g_blocks;
  if (g_current > g_peak) g_peak = g_current;
  return p;
}
void Uncount(void* p) {
  if (p == nullptr) return;
  g_current -= malloc_usable_size(p);
  std::free(p);
}

}  // namespace

void* operator new(std::size_t n) {
  return Count(std::malloc(n == 0 ? 1 : n));
}
void* operator new[](std::size_t n) {
  return Count(std::malloc(n == 0 ? 1 : n));
}
void* operator new(std::size_t n, std::align_val_t a) {
  std::size_t al = static_cast<std::size_t>(a);
  return Count(std::aligned_alloc(al, (n + al - 1) / al * al));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return operator new(n, a);
}
void operator delete(void* p) noexcept {
  Uncount(p);
}
void operator delete[](void* p) noexcept {
  Uncount(p);
}
void operator delete(void* p, std::size_t) noexcept {
  Uncount(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  Uncount(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  Uncount(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  Uncount(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  Uncount(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  Uncount(p);
}

namespace {

using namespace lockstep;
using namespace lockstep::engine;

// Heap owned by a string, as the allocator counts it: nothing while it fits the small-string
// buffer, else the usable size of its block.
std::size_t HeapOf(const std::string& s) {
  const char* inline_buffer = reinterpret_cast<const char*>(&s) + 2 * sizeof(void*);
  return s.data() == inline_buffer ? 0 : malloc_usable_size(const_cast<char*>(s.data()));
}
template <typename T>
std::size_t VectorHeap(const std::vector<T>& v) {
  return v.capacity() == 0 ? 0 : malloc_usable_size(const_cast<T*>(v.data()));
}

std::size_t JobHeap(const Job& j) {
  std::size_t b = HeapOf(j.name) + VectorHeap(j.dependencies) + VectorHeap(j.allocation.nodes);
  return b;
}
std::size_t NodeHeap(const Node& n) {
  std::size_t b = HeapOf(n.name) + HeapOf(n.reason) + VectorHeap(n.gpus);
  for (const GpuDevice& g : n.gpus) b += HeapOf(g.uuid);
  return b;
}

double Mib(std::size_t b) {
  return static_cast<double>(b) / (1024.0 * 1024.0);
}

// The stateful Scheduler keeps its own copy of the Snapshot and, beside it, what a pass reads
// (shapes, queue, priorities, planner, indexes): the heap it holds once built and after one
// pass, with the Snapshot's own share (as counted above) subtracted.
void PrintSchedulerHeap(const Snapshot& s) {
  std::size_t base = g_current;
  auto sched = std::make_unique<Scheduler>(s, PolicyOptions{});
  std::size_t built = g_current - base;
  Plan p = sched->Plan(s.now, PlanDetail::kDecisions);
  std::size_t after_pass = g_current - base;
  { Plan gone = std::move(p); }
  std::size_t held = g_current - base;
  // The Snapshot copy as built by MakeBenchSnapshot, minus growth slack a copy does not have.
  std::size_t snapshot = 0;
  for (const Job& j : s.pending) snapshot += sizeof(Job) + JobHeap(j);
  for (const Job& j : s.running) snapshot += sizeof(Job) + JobHeap(j);
  for (const Node& n : s.nodes) snapshot += sizeof(Node) + NodeHeap(n);
  const double extra = static_cast<double>(held) - static_cast<double>(snapshot);
  std::printf("\n| Scheduler (EASY) | MiB |\n|---|---:|\n");
  std::printf("| held once built | %.1f |\n| held after one pass (plan freed) | %.1f |\n",
              Mib(built), Mib(held));
  std::printf("| of which jobs and nodes as in the Snapshot | %.1f |\n", Mib(snapshot));
  std::printf(
      "| the rest, per pending job (shape, queue entry, priority, memos, slot) | %.1f B |\n",
      extra / static_cast<double>(s.pending.size()));
  // Then one submission and a pass: what the containers that grow do with it.
  Job one = s.pending.front();
  one.id = 999'999'999;
  sched->SetPending(std::move(one));
  { Plan gone = sched->Plan(s.now, PlanDetail::kDecisions); }
  std::printf("| held after one submission and a second pass | %.1f |\n",
              Mib(g_current - base));
  (void)after_pass;
}

}  // namespace

int main(int argc, char** argv) {
  bench::BenchWorkload w;
  if (argc >= 3) {
    w.nodes = std::atoi(argv[1]);
    w.pending = std::atoi(argv[2]);
  }
  std::size_t before_build = g_current;
  Snapshot s = bench::MakeBenchSnapshot(w);
  std::size_t snapshot_heap = g_current - before_build;

  std::size_t pending_heap = 0, node_heap = 0, running_heap = 0;
  for (const Job& j : s.pending) pending_heap += JobHeap(j);
  for (const Job& j : s.running) running_heap += JobHeap(j);
  for (const Node& n : s.nodes) node_heap += NodeHeap(n);
  const double np = static_cast<double>(s.pending.size());
  const double nn = static_cast<double>(s.nodes.size());
  const double nr = static_cast<double>(s.running.size());

  std::printf("engine_memory: %zu nodes x %zu GPUs, %zu running, %zu pending\n\n", s.nodes.size(),
              s.nodes.empty() ? std::size_t{0} : s.nodes[0].gpus.size(), s.running.size(),
              s.pending.size());
  std::printf(
      "| what | sizeof | heap per item (malloc_usable_size) | bytes per item | total MiB |\n");
  std::printf("|---|---:|---:|---:|---:|\n");
  std::printf("| pending Job | %zu | %.1f | %.1f | %.1f |\n", sizeof(Job), pending_heap / np,
              sizeof(Job) + pending_heap / np, Mib(sizeof(Job) * s.pending.size() + pending_heap));
  std::printf("| running Job | %zu | %.1f | %.1f | %.1f |\n", sizeof(Job), running_heap / nr,
              sizeof(Job) + running_heap / nr, Mib(sizeof(Job) * s.running.size() + running_heap));
  std::printf("| Node (8 GpuDevice) | %zu | %.1f | %.1f | %.1f |\n", sizeof(Node), node_heap / nn,
              sizeof(Node) + node_heap / nn, Mib(sizeof(Node) * s.nodes.size() + node_heap));
  std::printf("| whole Snapshot (malloc_usable_size) | | | | %.1f |\n\n", Mib(snapshot_heap));
  std::printf(
      "sizeof: Job %zu (JobRequest %zu, Allocation %zu), Node %zu, GpuDevice %zu, NodeAllocation "
      "%zu\n\n",
      sizeof(Job), sizeof(JobRequest), sizeof(Allocation), sizeof(Node), sizeof(GpuDevice),
      sizeof(NodeAllocation));

  std::printf(
      "| plan() of this Snapshot | policy | peak extra heap MiB | kept in Plan MiB | allocations | "
      "wall ms |\n");
  std::printf("|---|---|---:|---:|---:|---:|\n");
  struct Variant {
    const char* name;
    int depth;
    bool estimate;
  } variants[] = {{"fifo", 0, false},
                  {"easy", 1, false},
                  {"easy + estimate_starts", 1, true},
                  {"conservative(1000)", 1000, false}};
  for (const Variant& v : variants) {
    PolicyOptions o;
    o.reservation_depth = v.depth;
    o.estimate_starts = v.estimate;
    std::size_t base = g_current;
    g_peak = g_current;
    std::size_t blocks = g_blocks;
    auto t0 = std::chrono::steady_clock::now();
    Plan p = plan(s, o);
    auto t1 = std::chrono::steady_clock::now();
    std::size_t kept = g_current - base;
    std::size_t peak = g_peak - base;
    std::printf("| %zu pending / %zu nodes | %s | %.1f | %.1f | %zu | %.0f |\n", s.pending.size(),
                s.nodes.size(), v.name, Mib(peak), Mib(kept), g_blocks - blocks,
                std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  PrintSchedulerHeap(s);
  return 0;
}

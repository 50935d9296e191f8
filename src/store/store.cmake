# The controller's durable store: key-value tables and id counters over SQLite in WAL mode with
# group commit. Format, guarantees and design: docs/store-format.md.
lockstep_cc_library(NAME lockstep_store
  SRCS store.cc store_range.cc store_mode.cc schema.cc sqlite_util.cc private_files.cc
  DEPS lockstep_common SQLite::SQLite3 Threads::Threads)

# fault_vfs.cc is test-only: a VFS that drops unsynced writes on a simulated power cut.
lockstep_cc_test(NAME store_test
  SRCS store_test.cc store_range_test.cc store_crash_test.cc store_mode_test.cc
       private_files_test.cc fault_vfs.cc
  DEPS lockstep_store)

if(LOCKSTEP_BUILD_BENCHMARKS)
  add_executable(store_bench store_bench.cc)
  target_link_libraries(store_bench PRIVATE lockstep_store benchmark::benchmark)
endif()

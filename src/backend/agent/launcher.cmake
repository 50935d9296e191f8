# The agent's process launcher (included by CMakeLists.txt of this folder).
lockstep_cc_library(NAME lockstep_launcher
  SRCS launcher.cc launcher_suspend.cc launcher_usage.cc task_usage.cc exec_plan.cc cgroup.cc cgroup_tree.cc cgroup_setup.cc cgroup_v1.cc output_pump.cc
  DEPS lockstep_common Threads::Threads)

lockstep_cc_test(NAME launcher_test
  SRCS launcher_test.cc launcher_signal_test.cc cgroup_test.cc launcher_test_util.cc
       output_pump_test.cc task_usage_test.cc launcher_suspend_test.cc
       launcher_blocking_test.cc
  DEPS lockstep_launcher)

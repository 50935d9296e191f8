// The commands of the lockstep binary. Each takes its own argv (argv[0] is the command's name)
// and returns the process exit code: 0 ok, 1 failure, 2 bad usage.
#pragma once

namespace lockstep::cli {

int RunSim(int argc, char** argv);
int RunSbatch(int argc, char** argv);
int RunSrun(int argc, char** argv);
int RunScancel(int argc, char** argv);
int RunSqueue(int argc, char** argv);
int RunSinfo(int argc, char** argv);
int RunSacct(int argc, char** argv);
int RunSprio(int argc, char** argv);
int RunScontrol(int argc, char** argv);
int RunWhy(int argc, char** argv);
int RunUp(int argc, char** argv);
int RunDown(int argc, char** argv);
int RunInstallAliases(int argc, char** argv);

}  // namespace lockstep::cli

// TEMPORARY while the formatters land
#include "cli/commands.h"
namespace lockstep::cli {
int RunSqueue(int, char**) { return 1; }
int RunSinfo(int, char**) { return 1; }
int RunSacct(int, char**) { return 1; }
int RunSprio(int, char**) { return 1; }
int RunScontrol(int, char**) { return 1; }
int RunWhy(int, char**) { return 1; }
}  // namespace lockstep::cli

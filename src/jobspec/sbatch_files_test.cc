// -F/--nodefile, -w FILE and --export-file: what the files say becomes the node list and the
// job's environment, as Slurm 22.05 reads them (the peer's ReqNodeList and the job's `env` for
// the same files); a file that cannot be read or makes no sense is an error naming it.
#include <gtest/gtest.h>

#include "jobspec/sbatch_internal.h"
#include "jobspec/sbatch_test_util.h"

namespace lockstep::jobspec {
namespace {

using sbatch_internal::ParseExportFile;
using sbatch_internal::ParseNodeFile;
using testing::kNow;
using testing::SbatchFixture;

constexpr char kPlain[] = "#!/bin/sh\ntrue\n";

TEST(NodeFile, NamesSeparatedByBlanksCommasAndNewlinesWithHostlists) {
  EXPECT_EQ(*ParseNodeFile("node1\n"), "node1");
  EXPECT_EQ(*ParseNodeFile("node2 node1\n"), "node[1-2]");
  EXPECT_EQ(*ParseNodeFile("node1,node2"), "node[1-2]");
  EXPECT_EQ(*ParseNodeFile("node[001-002]\n\nnode004\tnode[003,005]\n"), "node[001-005]");
  EXPECT_EQ(*ParseNodeFile("# the big ones\nnode1 # first\nnode1\n"), "node1");
}

TEST(NodeFile, EmptyOrMalformedFilesAreErrors) {
  EXPECT_EQ(ParseNodeFile("").status().message(), "names no node");
  EXPECT_EQ(ParseNodeFile("# only a comment\n\n").status().message(), "names no node");
  EXPECT_FALSE(ParseNodeFile("node[1-\n").ok());
}

TEST(ExportFile, NewlineOrNulSeparatedEntries) {
  auto vars = ParseExportFile("FOO=file\nBAR=b=c\n\nEMPTY=\n");
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  EXPECT_EQ(*vars,
            (std::map<std::string, std::string>{{"FOO", "file"}, {"BAR", "b=c"}, {"EMPTY", ""}}));
  // NUL-separated (env -0), so values may hold newlines.
  vars = ParseExportFile(std::string("FOO=a\nb\0BAR=x\0", 14));
  ASSERT_TRUE(vars.ok()) << vars.status().message();
  EXPECT_EQ(vars->at("FOO"), "a\nb");
  EXPECT_EQ(vars->at("BAR"), "x");
}

TEST(ExportFile, AnEntryThatIsNotAnAssignmentIsNamed) {
  EXPECT_EQ(ParseExportFile("FOO=1\ngarbage\n").status().message(), "line 2 is not NAME=value");
  const std::string nul_separated("A=1\0001X=2\0", 9);
  EXPECT_EQ(ParseExportFile(nul_separated).status().message(), "entry 2 is not NAME=value");
}

class SbatchFilesTest : public SbatchFixture {
 protected:
  SbatchFilesTest() { in.env = {{"FOO", "fromenv"}, {"HOME", "/home/alice"}}; }
};

TEST_F(SbatchFilesTest, NodefileSetsTheNodeListAndTheLastOfItAndWWins) {
  files["/home/alice/run/nodes"] = "gpu02\ngpu01\n";
  EXPECT_EQ(Ok({"-F", "nodes", Script(kPlain)}).nodelist, "gpu[01-02]");
  EXPECT_EQ(Ok({"--nodefile=/home/alice/run/nodes", Script(kPlain)}).nodelist, "gpu[01-02]");
  EXPECT_EQ(Ok({"-F", "nodes", "-w", "gpu07", Script(kPlain)}).nodelist, "gpu07");
  EXPECT_EQ(Ok({"-w", "gpu07", "-F", "nodes", Script(kPlain)}).nodelist, "gpu[01-02]");
  EXPECT_EQ(Ok({Script("#!/bin/sh\n#SBATCH -F nodes\ntrue\n")}).nodelist, "gpu[01-02]");
}

// Slurm: "If a filename is specified (i.e. the string contains a '/')" for -w.
TEST_F(SbatchFilesTest, AWValueWithASlashIsANodeFile) {
  files["/home/alice/run/nodes"] = "gpu03\n";
  EXPECT_EQ(Ok({"-w", "./nodes", Script(kPlain)}).nodelist, "gpu03");
  EXPECT_EQ(Ok({"-w", "/home/alice/run/nodes", Script(kPlain)}).nodelist, "gpu03");
}

TEST_F(SbatchFilesTest, BadNodeFilesAreErrorsNamingThem) {
  EXPECT_EQ(Error({"-F", "missing", Script(kPlain)}),
            "sbatch: -F: /home/alice/run/missing: No such file or directory");
  EXPECT_EQ(Error({"-w", "/no/such", Script(kPlain)}),
            "sbatch: -w: /no/such: No such file or directory");
  files["/home/alice/run/empty"] = "\n";
  EXPECT_EQ(Error({"--nodefile=empty", Script(kPlain)}),
            "sbatch: --nodefile: 'empty' names no node");
  EXPECT_EQ(Error({Script("#!/bin/sh\n#SBATCH --nodefile=empty\ntrue\n")}),
            "sbatch: train.sbatch line 2: #SBATCH --nodefile: 'empty' names no node");
}

TEST_F(SbatchFilesTest, ExportFileVariablesWinOverTheSubmittersUnderAll) {
  files["/home/alice/run/env"] = "FOO=file\nBAR=b\n";
  JobSpec s = Ok({"--export-file=env", Script(kPlain)});
  EXPECT_EQ(s.environment.at("FOO"), "file");
  EXPECT_EQ(s.environment.at("BAR"), "b");
  EXPECT_EQ(s.environment.at("HOME"), "/home/alice");
}

TEST_F(SbatchFilesTest, ExportFileIsAppliedAsExportSaysWhereverItComes) {
  files["/home/alice/run/env"] = "FOO=file\nBAR=b\n";
  // A list without ALL: the file's variables and the list's, not the submitter's.
  JobSpec list = Ok({"--export-file=env", "--export=BAZ=1", Script(kPlain)});
  EXPECT_EQ(list.environment,
            (std::map<std::string, std::string>{{"BAR", "b"}, {"BAZ", "1"}, {"FOO", "file"}}));
  // An explicit value on --export wins over the file's.
  JobSpec both = Ok({"--export=ALL,BAR=cmd", "--export-file=env", Script(kPlain)});
  EXPECT_EQ(both.environment.at("BAR"), "cmd");
  EXPECT_EQ(both.environment.at("FOO"), "file");
  // NONE: Slurm 22.05 starts the job without the file's variables too.
  JobSpec none = Ok({"--export-file=env", "--export=NONE", Script(kPlain)});
  EXPECT_EQ(none.environment.count("FOO"), 0u);
  EXPECT_EQ(none.environment.count("BAR"), 0u);
}

TEST_F(SbatchFilesTest, ExportFileFromADescriptorNumber) {
  files["/dev/fd/5"] = "FROMFD=1\n";
  EXPECT_EQ(Ok({"--export-file=5", Script(kPlain)}).environment.at("FROMFD"), "1");
}

TEST_F(SbatchFilesTest, BadExportFilesAreErrorsNamingThem) {
  EXPECT_EQ(Error({"--export-file=missing", Script(kPlain)}),
            "sbatch: --export-file: /home/alice/run/missing: No such file or directory");
  files["/home/alice/run/env"] = "FOO=1\nnot an assignment\n";
  EXPECT_EQ(Error({"--export-file=env", Script(kPlain)}),
            "sbatch: --export-file: 'env' line 2 is not NAME=value");
}

// srun and salloc read -F and -w FILE too; --export-file is sbatch's only, as in Slurm.
TEST(SrunFiles, NodefileThroughTheReaderAndNoExportFile) {
  auto read = [](const std::string& path) -> Result<std::string> {
    if (path == "/w/nodes") return std::string("node[1-2]\n");
    return NotFound(path + ": No such file or directory");
  };
  Result<SrunParse> p = ParseSrunArgs({"-F", "nodes", "true"}, {}, "/w", kNow, read);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->spec.nodelist, "node[1-2]");
  EXPECT_EQ(ParseSrunArgs({"-F", "other", "true"}, {}, "/w", kNow, read).status().message(),
            "srun: -F: /w/other: No such file or directory");
  EXPECT_EQ(ParseSrunArgs({"--export-file=x", "true"}, {}, "/w", kNow, read).status().message(),
            "srun: unrecognized option '--export-file'");
}

}  // namespace
}  // namespace lockstep::jobspec

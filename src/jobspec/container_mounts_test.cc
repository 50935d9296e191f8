// sbatch --container-mounts: pyxis's syntax parsed, and every malformed entry refused with its
// text, from the command line, a script and a JSON submission alike.
#include "jobspec/container_mounts.h"

#include <gtest/gtest.h>

#include "jobspec/sbatch_test_util.h"
#include "jobspec/validate.h"

namespace lockstep::jobspec {
namespace {

using testing::SbatchFixture;

constexpr char kPlain[] = "#!/bin/sh\ntrue\n";

std::vector<ContainerMount> Mounts(std::string_view text) {
  Result<std::vector<ContainerMount>> m = ParseContainerMounts(text);
  EXPECT_TRUE(m.ok()) << text << ": " << m.status().message();
  return m.ok() ? *m : std::vector<ContainerMount>{};
}

std::string Refusal(std::string_view text) {
  Result<std::vector<ContainerMount>> m = ParseContainerMounts(text);
  EXPECT_FALSE(m.ok()) << text;
  return m.ok() ? "" : m.status().message();
}

TEST(ContainerMounts, PyxisSyntaxWithTheTargetAndFlagOptional) {
  EXPECT_TRUE(Mounts("").empty());
  const std::vector<ContainerMount> want = {
      {"/mnt/datasets/imagenet", "/data", true},
      {"/mnt/checkpoints/me", "/mnt/checkpoints/me", false},
      {"/shared/x", "/x", false},
  };
  EXPECT_EQ(Mounts("/mnt/datasets/imagenet:/data:ro,/mnt/checkpoints/me,/shared/x:/x:rw"), want);
  // Repeated and trailing slashes go; the path stays the same directory.
  EXPECT_EQ(Mounts("//mnt/datasets//imagenet/:/data/"),
            (std::vector<ContainerMount>{{"/mnt/datasets/imagenet", "/data", false}}));
}

TEST(ContainerMounts, MalformedEntriesAreRefusedByName) {
  EXPECT_EQ(Refusal("data:/data"),
            "\"data:/data\": the source must be an absolute path without . or .. components");
  EXPECT_EQ(Refusal("/mnt/datasets/../../etc:/e"),
            "\"/mnt/datasets/../../etc:/e\": the source must be an absolute path without . or .. "
            "components");
  EXPECT_EQ(Refusal("/mnt/a:rel"),
            "\"/mnt/a:rel\": the target must be an absolute path without . or .. components");
  EXPECT_EQ(Refusal("/mnt/a:/"), "\"/mnt/a:/\": the target cannot be /");
  EXPECT_EQ(Refusal("/mnt/a:/a:rx"), "\"/mnt/a:/a:rx\": unknown flag \"rx\" (ro or rw)");
  EXPECT_EQ(Refusal("/mnt/a:/a:ro:x"), "\"/mnt/a:/a:ro:x\": expected SRC[:DST[:ro|rw]]");
  EXPECT_EQ(Refusal("/mnt/a:/a,/mnt/b:/a"), "\"/mnt/b:/a\": /a is the target of another mount");
  // An empty entry is named by the whole value, which shows where it is.
  EXPECT_EQ(Refusal("/mnt/a,,/mnt/b"), "\"/mnt/a,,/mnt/b\": an empty entry");
  EXPECT_EQ(Refusal("/mnt/a,"), "\"/mnt/a,\": an empty entry");
  EXPECT_EQ(Refusal(std::string("/mnt/a\n:/a")),
            "\"/mnt/a\n:/a\": the source must be an absolute path without . or .. components");
  std::string many;
  for (int i = 0; i <= 64; ++i) many += (i ? "," : "") + std::string("/m/") + std::to_string(i);
  EXPECT_EQ(Refusal(many), "\"/m/64\": more than 64 mounts");
}

TEST(ContainerMounts, PathWithinMeansTheDirectoryOrBelowIt) {
  EXPECT_TRUE(PathWithin("/mnt/datasets", "/mnt/datasets"));
  EXPECT_TRUE(PathWithin("/mnt/datasets/x", "/mnt/datasets"));
  EXPECT_FALSE(PathWithin("/mnt/datasets2", "/mnt/datasets"));
  EXPECT_FALSE(PathWithin("/mnt", "/mnt/datasets"));
  EXPECT_TRUE(PathWithin("/anything", "/"));
}

class ContainerMountsOption : public SbatchFixture {};

TEST_F(ContainerMountsOption, KeptAsGivenFromTheCommandLineOrTheScript) {
  EXPECT_EQ(Ok({"--container-mounts=/mnt/d:/data:ro", Script(kPlain)}).container_mounts,
            "/mnt/d:/data:ro");
  EXPECT_EQ(Ok({Script("#!/bin/sh\n#SBATCH --container-mounts /mnt/c\ntrue\n")}).container_mounts,
            "/mnt/c");
}

TEST_F(ContainerMountsOption, ABadValueIsRefusedWithTheOptionAndPlace) {
  EXPECT_EQ(Error({"--container-mounts=/mnt/d:/data:rx", Script(kPlain)}),
            "sbatch: --container-mounts: \"/mnt/d:/data:rx\": unknown flag \"rx\" (ro or rw)");
}

TEST(ContainerMountsValidate, AJsonSubmissionIsCheckedToo) {
  JobSpec s;
  s.script = kPlain;
  s.container_mounts = "/mnt/d:relative";
  Status st = Validate(s, Limits{});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            "--container-mounts: \"/mnt/d:relative\": the target must be an absolute path without "
            ". or .. components");
}

}  // namespace
}  // namespace lockstep::jobspec

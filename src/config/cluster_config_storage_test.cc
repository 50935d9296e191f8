// The `storage:` section of the cluster YAML (docs/storage.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/cluster_config_test_util.h"

namespace lockstep::config {
namespace {

using test::ErrorOf;
using test::Parse;
using test::WithNodes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view kPartitions = R"(
partitions:
  - {name: gpu, nodes: "n[1-2]", default: true}
  - {name: cpu, nodes: "n[3-4]"}
)";

std::string WithStorage(std::string_view storage) {
  std::string rest(kPartitions);
  return WithNodes(rest.substr(1) + std::string(storage));
}

TEST(StorageConfig, EachKindWithWhereItIsSeenAndWhoGetsIt) {
  Result<ClusterConfig> c = Parse(WithStorage(R"(storage:
  - name: imagenet
    category: /mnt/datasets
    nfs: "fileserver:/export/imagenet"
    options: vers=4.2,hard
    read_only: true
    partitions: [gpu]
  - name: ckpt
    category: /mnt/checkpoints
    bind: /srv/ckpt
    nodes: "n[3-4]"
    timeout: 30
  - name: home
    host_path: /home
)"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->storage.size(), 3u);
  const FileSystem& data = c->storage[0];
  EXPECT_EQ(data.kind, FileSystem::Kind::kNfs);
  EXPECT_EQ(data.source, "fileserver:/export/imagenet");
  EXPECT_EQ(data.options, "vers=4.2,hard");
  EXPECT_TRUE(data.read_only);
  EXPECT_EQ(data.MountPoint(), "/mnt/datasets/imagenet");
  EXPECT_EQ(data.DisplayName(), "datasets/imagenet");
  EXPECT_EQ(data.timeout, 10);
  EXPECT_EQ(c->storage[1].kind, FileSystem::Kind::kBind);
  EXPECT_EQ(c->storage[1].MountPoint(), "/mnt/checkpoints/ckpt");
  EXPECT_EQ(c->storage[1].timeout, 30);
  EXPECT_EQ(c->storage[2].MountPoint(), "/home");
  EXPECT_EQ(c->storage[2].DisplayName(), "home");
  EXPECT_THAT(c->StorageOfNode(c->NodeIndex("n1")), ElementsAre(0, 2));
  EXPECT_THAT(c->StorageOfNode(c->NodeIndex("n3")), ElementsAre(1, 2));
}

TEST(StorageConfig, MistakesNameTheirPlace) {
  EXPECT_THAT(ErrorOf(WithStorage("storage:\n  - {name: a, category: /mnt/d}\n")),
              HasSubstr("give exactly one of nfs, bind or host_path"));
  EXPECT_THAT(ErrorOf(WithStorage("storage:\n  - {name: a, bind: /x, host_path: /y}\n")),
              HasSubstr("give exactly one of nfs, bind or host_path"));
  EXPECT_THAT(ErrorOf(WithStorage("storage:\n  - {name: a, category: /mnt/d, nfs: /export}\n")),
              HasSubstr("storage[0].nfs: '/export' is not server:/export"));
  EXPECT_THAT(ErrorOf(WithStorage("storage:\n  - {name: a, category: /mnt/../etc, bind: /x}\n")),
              HasSubstr("storage[0].category: must be the absolute path"));
  EXPECT_THAT(ErrorOf(WithStorage("storage:\n  - {name: a, category: /mnt/d, bind: x/y}\n")),
              HasSubstr("storage[0].bind: 'x/y' is not a plain absolute path"));
  EXPECT_THAT(ErrorOf(WithStorage("storage:\n  - {name: a, host_path: /h, category: /mnt}\n")),
              HasSubstr("a host_path is seen at its own path"));
  EXPECT_THAT(ErrorOf(WithStorage("storage:\n  - {name: a, host_path: /h, options: ro}\n")),
              HasSubstr("mount options are for nfs only"));
  EXPECT_THAT(ErrorOf(WithStorage("storage:\n  - {name: a, host_path: /h, partitions: [nope]}\n")),
              HasSubstr("unknown partition 'nope'"));
  EXPECT_THAT(ErrorOf(WithStorage("storage:\n  - {name: a, host_path: /h, nodes: n9}\n")),
              HasSubstr("n9"));
  EXPECT_THAT(ErrorOf(WithStorage("storage:\n  - {name: a, host_path: /h}\n"
                                  "  - {name: a, host_path: /g}\n")),
              HasSubstr("file system 'a' is declared twice"));
  EXPECT_THAT(ErrorOf(WithStorage("storage:\n  - {name: a, host_path: /h}\n"
                                  "  - {name: b, host_path: /h}\n")),
              HasSubstr("another file system is mounted at /h"));
  EXPECT_THAT(ErrorOf(WithStorage("storage:\n  - {name: a, host_path: /h, colour: red}\n")),
              HasSubstr("colour"));
  EXPECT_THAT(ErrorOf(WithStorage("storage: /mnt\n")), HasSubstr("must be a list"));
}

}  // namespace
}  // namespace lockstep::config

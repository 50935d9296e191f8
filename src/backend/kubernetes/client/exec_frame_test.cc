#include "backend/kubernetes/client/exec_frame.h"

#include <gtest/gtest.h>

namespace lockstep::kube {
namespace {

TEST(ExecFrame, StdinAndResizeCarryTheirChannelByteFirst) {
  EXPECT_EQ(EncodeExecFrame(ExecChannel::kStdin, "ls\n"), std::string("\x00ls\n", 4));
  EXPECT_EQ(EncodeExecFrame(ExecChannel::kStdin, std::string("\x03", 1)),
            std::string("\x00\x03", 2));  // Ctrl-C is a byte like any other on a terminal
  EXPECT_EQ(EncodeExecFrame(ExecChannel::kResize, EncodeTerminalSize(24, 80)),
            "\x04{\"Height\":24,\"Width\":80}");
}

TEST(ExecFrame, ServerMessagesDecodeByChannelBinaryIntact) {
  Result<ExecFrame> out = DecodeExecFrame(std::string("\x01hi\n", 4));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->channel, ExecChannel::kStdout);
  EXPECT_EQ(out->data, "hi\n");
  const std::string binary("\x02\x00\xff\n", 4);
  Result<ExecFrame> err = DecodeExecFrame(binary);
  ASSERT_TRUE(err.ok());
  EXPECT_EQ(err->channel, ExecChannel::kStderr);
  EXPECT_EQ(err->data, std::string("\x00\xff\n", 3));
  Result<ExecFrame> empty_data = DecodeExecFrame(std::string("\x01", 1));  // the first, empty one
  ASSERT_TRUE(empty_data.ok());
  EXPECT_EQ(empty_data->data, "");
}

TEST(ExecFrame, EmptyMessageAndUnknownChannelAreErrors) {
  Result<ExecFrame> none = DecodeExecFrame("");
  EXPECT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no channel byte"), std::string::npos);
  Result<ExecFrame> bad = DecodeExecFrame("\x09x");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown channel 9"), std::string::npos);
}

TEST(ExecFrame, ExitCodeComesFromTheStatusOfTheErrorChannel) {
  EXPECT_EQ(*ExitCodeOfExecStatus(R"({"metadata":{},"status":"Success"})"), 0);
  // What the kubelet writes for `exit 3` (remotecommand's v4 error stream).
  const char* three = R"({"metadata":{},"status":"Failure",
      "message":"command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3",
      "reason":"NonZeroExitCode",
      "details":{"causes":[{"reason":"ExitCode","message":"3"}]}})";
  Result<int> code = ExitCodeOfExecStatus(three);
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(*code, 3);
  // The command could not run at all: an error with the kubelet's words, not an exit code.
  Result<int> missing = ExitCodeOfExecStatus(
      R"({"status":"Failure","message":"OCI runtime exec failed: exec: \"nope\": executable file not found in $PATH"})");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("executable file not found"), std::string::npos);
  EXPECT_FALSE(ExitCodeOfExecStatus("not json").ok());
  EXPECT_FALSE(
      ExitCodeOfExecStatus(
          R"({"status":"Failure","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"x"}]}})")
          .ok());
}

TEST(ExecFrame, TargetNamesTheCommandAndTheStreams) {
  EXPECT_EQ(ExecTarget("ns", "lockstep-7-0", "job", {"bash", "-c", "echo a&b"}, true, true),
            "/api/v1/namespaces/ns/pods/lockstep-7-0/exec?container=job&command=bash&command=-c"
            "&command=echo%20a%26b&stdout=true&stdin=true&tty=true");
  EXPECT_EQ(ExecTarget("ns", "p", "job", {"hostname"}, false, false),
            "/api/v1/namespaces/ns/pods/p/exec?container=job&command=hostname&stdout=true"
            "&stderr=true");
}

}  // namespace
}  // namespace lockstep::kube

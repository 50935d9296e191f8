#include "backend/kubernetes/client/api_error.h"

#include <gtest/gtest.h>

#include "backend/kubernetes/client/kube_client.h"
#include "backend/kubernetes/client/transport.h"

namespace lockstep::kube {
namespace {

TEST(ApiError, FromStatusObject) {
  const std::string body =
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"Operation cannot be fulfilled on nodes \"n1\": the object has been modified","reason":"Conflict","code":409})";
  Status s = StatusFromResponse(409, body, "PUT /api/v1/nodes/n1");
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(IsConflict(s));
  EXPECT_FALSE(IsAlreadyExists(s));
  ApiError e = ApiErrorOf(s);
  EXPECT_EQ(e.http_code, 409);
  EXPECT_EQ(e.reason, "Conflict");
  EXPECT_EQ(s.message(),
            "409 Conflict: Operation cannot be fulfilled on nodes \"n1\": the object has been "
            "modified (PUT /api/v1/nodes/n1)");
}

TEST(ApiError, Codes) {
  EXPECT_EQ(StatusFromResponse(404, R"({"kind":"Status","reason":"NotFound"})", "").code(),
            StatusCode::kNotFound);
  Status exists =
      StatusFromResponse(409, R"({"kind":"Status","reason":"AlreadyExists","message":"m"})", "");
  EXPECT_EQ(exists.code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(IsAlreadyExists(exists));
  EXPECT_TRUE(IsGone(StatusFromResponse(410, R"({"kind":"Status","reason":"Expired"})", "")));
  EXPECT_TRUE(IsGone(StatusFromStatusObject(
      R"({"kind":"Status","code":410,"reason":"Expired","message":"too old resource version"})",
      "watch")));
  EXPECT_TRUE(IsRetryable(StatusFromResponse(503, "service unavailable\n", "")));
  EXPECT_TRUE(IsRetryable(StatusFromResponse(429, "", "")));
  EXPECT_TRUE(IsRetryable(ConnectionError("refused", "GET /")));
  EXPECT_FALSE(IsRetryable(StatusFromResponse(404, "", "")));
  EXPECT_EQ(StatusFromResponse(403, "", "").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(StatusFromResponse(422, "", "").code(), StatusCode::kInvalidArgument);
  // Other Statuses are not taken for API errors.
  EXPECT_EQ(ApiErrorOf(InvalidArgument("x: 12 y")).http_code, 0);
  EXPECT_FALSE(IsNotFound(NotFound("404 is not here")));
}

TEST(ServerUrl, Parses) {
  Result<ServerUrl> u = ParseServerUrl("https://127.0.0.1:6443");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, "6443");
  EXPECT_EQ(u->path_prefix, "");
  u = ParseServerUrl("https://[::1]:8443/k8s/");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, "8443");
  EXPECT_EQ(u->path_prefix, "/k8s");
  u = ParseServerUrl("https://api.example.com");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->port, "443");
  EXPECT_FALSE(ParseServerUrl("http://x").ok());
  EXPECT_FALSE(ParseServerUrl("https://x:port").ok());
}

TEST(Query, Escapes) {
  EXPECT_EQ(EncodeQuery({}), "");
  EXPECT_EQ(EncodeQuery({{"labelSelector", "app=a,tier in (x,y)"}, {"limit", "5"}}),
            "?labelSelector=app%3Da%2Ctier%20in%20%28x%2Cy%29&limit=5");
}

}  // namespace
}  // namespace lockstep::kube

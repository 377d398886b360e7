/* Container credentials (ECS, EKS Pod Identity): AWS_CONTAINER_CREDENTIALS_RELATIVE_URI on
 * 169.254.170.2 or _FULL_URI (https, or http to loopback and the container agents only), with
 * AWS_CONTAINER_AUTHORIZATION_TOKEN or _TOKEN_FILE (read again every time). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "aws/creds_int.h"
#include "io/file.h"
#include "net/url.h"

static void container_answer(struct bt_aws_job *j, const struct bt_http_resp *r);

/* The SDKs only send the container token over http to these hosts (or anywhere over https). */
static bool container_host_allowed(const char *url)
{
    struct bt_url u;
    char err[128];
    if (!bt_url_parse(url, &u, err, sizeof err)) /* the one parser: what curl will send */
        return false;
    const char *host = u.host;
    bool ok = strcmp(u.scheme, "https") == 0 || strncmp(host, "127.", 4) == 0 ||
              strcmp(host, "localhost") == 0 || strcmp(host, "[::1]") == 0 ||
              strcmp(host, "169.254.170.2") == 0 || strcmp(host, "169.254.170.23") == 0 ||
              strcmp(host, "[fd00:ec2::23]") == 0;
    bt_url_free(&u);
    return ok;
}

static void container_start(struct bt_aws_job *j)
{
    const char *full = bt_aws_env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
    const char *rel = bt_aws_env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
    char url[2048];
    if (rel)
        snprintf(url, sizeof url, "http://169.254.170.2%s%s", rel[0] == '/' ? "" : "/", rel);
    else
        snprintf(url, sizeof url, "%s", full ? full : "");
    char safe_url[256];
    bt_aws_safe_copy(safe_url, sizeof safe_url, url, 200);
    if (!rel && !container_host_allowed(url)) {
        bt_aws_job_fail(j, "container credentials: AWS_CONTAINER_CREDENTIALS_FULL_URI %s is not https and not a loopback "
                 "or container-agent address; refusing to send credentials there", safe_url);
        return;
    }
    char *token = NULL;
    const char *tfile = bt_aws_env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
    if (tfile) {
        /* re-read every time: EKS Pod Identity rotates it */
        token = bt_read_file(tfile, MAX_VALUE, NULL);
        if (!token) {
            bt_aws_job_fail(j, "container credentials: cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE %s: %s", tfile,
                     strerror(errno));
            return;
        }
        token[strcspn(token, "\r\n")] = '\0';
    } else if (bt_aws_env("AWS_CONTAINER_AUTHORIZATION_TOKEN")) {
        token = bt_xstrdup(getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN"));
    }
    if (token && !bt_aws_valid_token(token)) {
        OPENSSL_cleanse(token, strlen(token));
        free(token);
        bt_aws_job_fail(j, "container credentials: authorization token has control characters");
        return;
    }
    struct bt_header hdr = {.name = "Authorization", .value = token ? token : ""};
    struct bt_http_req req = {
        .policy = &bt_aws_policy,
        .method = "GET", .url = url, .headers = token ? &hdr : NULL, .nheaders = token ? 1 : 0,
        .label = "container credentials", .timeout = 2, .max_attempts = 2,
    };
    bt_aws_job_submit(j, container_answer, &req);
    if (token) {
        OPENSSL_cleanse(token, strlen(token));
        free(token);
    }
}

/* The container endpoint's and IMDS's JSON answer {AccessKeyId, SecretAccessKey, Token, Expiration}. */
static void container_answer(struct bt_aws_job *j, const struct bt_http_resp *r)
{
    char what[320], safe_url[256];
    bt_aws_safe_copy(safe_url, sizeof safe_url, r->url ? r->url : "", 200);
    snprintf(what, sizeof what, "container credentials (%s)", safe_url);
    bt_aws_job_json_creds(j, r, what, what);
}

const struct bt_aws_provider bt_aws_provider_container = {.name = "container credentials", .start = container_start};

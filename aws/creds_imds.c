/* IMDSv2: a session token (PUT), the instance role's name, then its credentials; skipped
 * when AWS_EC2_METADATA_DISABLED=true, endpoint from AWS_EC2_METADATA_SERVICE_ENDPOINT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "aws/creds_int.h"

static void imds_answer(struct bt_aws_job *j, const struct bt_http_resp *r);

static void imds_request(struct bt_aws_job *j, const char *method, const char *path)
{
    char url[1024];
    snprintf(url, sizeof url, "%s%s", j->imds_base, path);
    struct bt_header hdr[1];
    size_t nh = 0;
    if (j->imds_token)
        hdr[nh++] = (struct bt_header){.name = "X-aws-ec2-metadata-token", .value = j->imds_token};
    else
        hdr[nh++] = (struct bt_header){.name = "X-aws-ec2-metadata-token-ttl-seconds", .value = "21600"};
    struct bt_http_req req = {
        .policy = &bt_aws_policy,
        .method = method, .url = url, .headers = hdr, .nheaders = nh, .label = "IMDSv2",
        .timeout = 1, .max_attempts = 1,
    };
    bt_aws_job_submit(j, imds_answer, &req);
}

static void imds_start(struct bt_aws_job *j)
{
    const char *ep = bt_aws_env("AWS_EC2_METADATA_SERVICE_ENDPOINT");
    bt_strlcpy(j->imds_base, ep ? ep : "http://169.254.169.254", sizeof j->imds_base);
    size_t bl = strlen(j->imds_base);
    while (bl && j->imds_base[bl - 1] == '/')
        j->imds_base[--bl] = '\0';
    j->imds_stage = 0;
    imds_request(j, "PUT", "/latest/api/token");
}

static void imds_answer(struct bt_aws_job *j, const struct bt_http_resp *r)
{
    char safe_base[200];
    bt_aws_safe_copy(safe_base, sizeof safe_base, j->imds_base, 160);
    int stage = j->imds_stage;
    if (stage == 0) {
        if (r->status == 0) {
            if (j->pl.tried[0] && strncmp(j->pl.tried, "credential_source", 17) != 0)
                bt_aws_job_fail(j, "no AWS credentials: tried %s, IMDSv2 (%s: %s)", j->pl.tried, safe_base, r->transport_error);
            else
                bt_aws_job_fail(j, "IMDSv2 (%s): %s", safe_base, r->transport_error);
            return;
        }
        char tok[1024];
        bt_strlcpy(tok, r->body, sizeof tok);
        if (r->status != 200 || !r->body_len || r->body_len >= sizeof tok || !bt_aws_valid_token(bt_trim(tok))) {
            bt_aws_job_fail(j, "IMDSv2 (%s): token request got HTTP %ld", safe_base, r->status);
            return;
        }
        j->imds_token = bt_xstrdup(bt_trim(tok));
        OPENSSL_cleanse(tok, sizeof tok);
        j->imds_stage = 1;
        imds_request(j, "GET", "/latest/meta-data/iam/security-credentials/");
        return;
    }
    if (stage == 1) {
        if (r->status != 200 || !r->body_len) {
            if (r->status == 0)
                bt_aws_job_fail(j, "IMDSv2 (%s): role list: %s", safe_base, r->transport_error);
            else
                bt_aws_job_fail(j, "IMDSv2 (%s): no instance role (HTTP %ld)", safe_base, r->status);
            return;
        }
        char role[256];
        bt_strlcpy(role, r->body, sizeof role);
        role[strcspn(role, "\r\n")] = '\0';
        bt_aws_safe_copy(j->imds_role, sizeof j->imds_role, bt_trim(role), 128);
        if (!j->imds_role[0] || strpbrk(j->imds_role, "/?#%")) {
            bt_aws_job_fail(j, "IMDSv2 (%s): unusable role name", safe_base);
            return;
        }
        j->imds_stage = 2;
        char path[300];
        snprintf(path, sizeof path, "/latest/meta-data/iam/security-credentials/%s", j->imds_role);
        imds_request(j, "GET", path);
        return;
    }
    char what[512];
    snprintf(what, sizeof what, "IMDSv2 (%s) role %s", safe_base, j->imds_role);
    char source[200];
    snprintf(source, sizeof source, "IMDSv2 role %s", j->imds_role);
    bt_aws_job_json_creds(j, r, what, source);
}

static void imds_release(struct bt_aws_job *j)
{
    if (j->imds_token) {
        OPENSSL_cleanse(j->imds_token, strlen(j->imds_token));
        free(j->imds_token);
        j->imds_token = NULL;
    }
}

const struct bt_aws_provider bt_aws_provider_imds = {.name = "IMDSv2", .start = imds_start, .release = imds_release};

/* Web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN (+AWS_ROLE_SESSION_NAME), or the
 * profile's web_identity_token_file + role_arn; STS AssumeRoleWithWebIdentity, unsigned, with
 * the token file read again on every refresh. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "aws/creds_int.h"
#include "aws/sts.h"
#include "io/file.h"

int bt_aws_plan_web(struct plan *pl, const char *file, const char *role, const char *session, const char *who,
                    char *err, size_t errlen)
{
    if (strlen(file) >= sizeof pl->token_file || strlen(role) >= sizeof pl->web_role_arn ||
        (session && strlen(session) >= sizeof pl->web_session)) {
        bt_aws_seterr(err, errlen, "%s: web identity token file, role_arn or role_session_name is too long", who);
        return -1;
    }
    pl->kind = S_WEB;
    bt_strlcpy(pl->token_file, file, sizeof pl->token_file);
    bt_strlcpy(pl->web_role_arn, role, sizeof pl->web_role_arn);
    if (session)
        bt_strlcpy(pl->web_session, session, sizeof pl->web_session);
    else
        snprintf(pl->web_session, sizeof pl->web_session, "botocore-session-%lld", (long long)time(NULL));
    return 0;
}

static void web_answer(struct bt_aws_job *j, const struct bt_http_resp *r)
{
    char what[512]; /* profile (127) + role ARN (255) + the words */
    snprintf(what, sizeof what, "%s%s%s: AssumeRoleWithWebIdentity %s",
             j->pl.src_profile[0] ? "profile \"" : "web identity (AWS_WEB_IDENTITY_TOKEN_FILE)",
             j->pl.src_profile, j->pl.src_profile[0] ? "\"" : "", j->pl.web_role_arn);
    bt_aws_sts_answer(j, r, what, j->pl.src_profile[0] ? j->pl.src_profile : "environment");
}

static void web_start(struct bt_aws_job *j)
{
    /* re-read on every refresh: Kubernetes rotates the projected token */
    size_t len = 0;
    char *tok = bt_read_file(j->pl.token_file, 64 * 1024, &len);
    if (!tok) {
        bt_aws_job_fail(j, "web identity: cannot read token file %s: %s", j->pl.token_file, strerror(errno));
        return;
    }
    bt_trim(tok);
    if (!tok[0]) {
        free(tok);
        bt_aws_job_fail(j, "web identity: token file %s is empty", j->pl.token_file);
        return;
    }
    struct bt_buf body = {0};
    bt_form_add(&body, "Action", "AssumeRoleWithWebIdentity");
    bt_form_add(&body, "Version", "2011-06-15");
    bt_form_add(&body, "RoleArn", j->pl.web_role_arn);
    bt_form_add(&body, "RoleSessionName", j->pl.web_session);
    bt_form_add(&body, "WebIdentityToken", tok);
    OPENSSL_cleanse(tok, strlen(tok));
    free(tok);
    char label[200];
    snprintf(label, sizeof label, "sts %s AssumeRoleWithWebIdentity", j->pl.sts_region);
    /* unsigned, as the real service expects (the token is the proof) */
    struct bt_http_req req = {
        .policy = &bt_aws_policy,
        .method = "POST", .url = j->pl.sts_url, .content_type = "application/x-www-form-urlencoded; charset=utf-8",
        .body = body.buf ? body.buf : "", .body_len = body.len, .label = label, .timeout = 10,
    };
    bt_aws_job_submit(j, web_answer, &req);
    bt_aws_wipe_buf(&body);
}

const struct bt_aws_provider bt_aws_provider_web = {.name = "web identity", .start = web_start};

/* Assume role: the profile's role_arn with source_profile (a chain of any length, loops
 * refused) or credential_source (Environment, Ec2InstanceMetadata, EcsContainer);
 * role_session_name, external_id, duration_seconds, mfa_serial (codes from the prompt, the
 * credentials they bought kept for the session); STS AssumeRole, SigV4-signed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "aws/creds_int.h"
#include "aws/sts.h"

/* credential_source = Environment | Ec2InstanceMetadata | EcsContainer */
static int plan_credential_source(struct plan *pl, const struct profile *p, const char *cs, char *err, size_t errlen)
{
    if (strcmp(cs, "Environment") == 0) {
        if (!bt_aws_env_static_present()) {
            bt_aws_seterr(err, errlen, "profile \"%s\": credential_source Environment but AWS_ACCESS_KEY_ID and "
                   "AWS_SECRET_ACCESS_KEY are not set", p->name);
            return -1;
        }
        return bt_aws_plan_env(pl, err, errlen);
    }
    if (strcmp(cs, "EcsContainer") == 0) {
        if (!bt_aws_env("AWS_CONTAINER_CREDENTIALS_FULL_URI") && !bt_aws_env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")) {
            bt_aws_seterr(err, errlen, "profile \"%s\": credential_source EcsContainer but neither "
                   "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI nor _FULL_URI is set", p->name);
            return -1;
        }
        pl->kind = S_CONTAINER;
        return 0;
    }
    if (strcmp(cs, "Ec2InstanceMetadata") == 0) {
        if (bt_aws_env_true("AWS_EC2_METADATA_DISABLED")) {
            bt_aws_seterr(err, errlen, "profile \"%s\": credential_source Ec2InstanceMetadata but "
                   "AWS_EC2_METADATA_DISABLED=true", p->name);
            return -1;
        }
        pl->kind = S_IMDS;
        snprintf(pl->tried, sizeof pl->tried, "credential_source of profile \"%s\"", p->name);
        return 0;
    }
    char safe[64];
    bt_aws_safe_copy(safe, sizeof safe, cs, 60);
    bt_aws_seterr(err, errlen, "profile \"%s\": credential_source \"%s\" is not one of Environment, "
           "Ec2InstanceMetadata, EcsContainer", p->name, safe);
    return -1;
}

static int add_hop(struct plan *pl, const struct profile *p, char *err, size_t errlen)
{
    if (pl->nhops >= MAX_HOPS) {
        bt_aws_seterr(err, errlen, "profile \"%s\": role chain longer than %d hops", pl->top, MAX_HOPS);
        return -1;
    }
    /* hops are found from the top down; they run from the source up: shift later */
    struct hop *h = &pl->hops[pl->nhops++];
    memset(h, 0, sizeof *h);
    bt_strlcpy(h->profile, p->name, sizeof h->profile);
    const char *arn = bt_aws_pget(p, K_ROLE_ARN), *sess = bt_aws_pget(p, K_SESSION_NAME);
    const char *ext = bt_aws_pget(p, K_EXTERNAL_ID), *mfa = bt_aws_pget(p, K_MFA_SERIAL), *dur = bt_aws_pget(p, K_DURATION);
    if (strlen(arn) >= sizeof h->role_arn || (sess && strlen(sess) >= sizeof h->session_name) ||
        (ext && strlen(ext) >= sizeof h->external_id) || (mfa && strlen(mfa) >= sizeof h->mfa_serial)) {
        bt_aws_seterr(err, errlen, "profile \"%s\": role_arn, role_session_name, external_id or mfa_serial is too long",
               p->name);
        return -1;
    }
    bt_strlcpy(h->role_arn, arn, sizeof h->role_arn);
    if (sess)
        bt_strlcpy(h->session_name, sess, sizeof h->session_name);
    else
        snprintf(h->session_name, sizeof h->session_name, "botocore-session-%lld", (long long)time(NULL));
    if (ext)
        bt_strlcpy(h->external_id, ext, sizeof h->external_id);
    if (mfa)
        bt_strlcpy(h->mfa_serial, mfa, sizeof h->mfa_serial);
    if (dur) {
        char *end;
        long v = strtol(dur, &end, 10);
        if (*end || v < 900 || v > 43200) {
            bt_aws_seterr(err, errlen, "profile \"%s\": duration_seconds must be 900 to 43200", p->name);
            return -1;
        }
        h->duration = (int)v;
    }
    return 0;
}

/* The assume-role chain from profile p (which has role_arn + source_profile/credential_source),
 * as botocore's AssumeRoleProvider walks it, with its loop rule: a profile may name itself as
 * source only when it has static keys. */
int bt_aws_plan_assume(struct plan *pl, const struct profile *p, char visited[][128], int nvisited,
                       char *err, size_t errlen)
{
    if (add_hop(pl, p, err, errlen) != 0)
        return -1;
    const char *cs = bt_aws_pget(p, K_CRED_SOURCE), *sp = bt_aws_pget(p, K_SOURCE_PROFILE);
    if (cs && sp) {
        bt_aws_seterr(err, errlen, "profile \"%s\" has both source_profile and credential_source; use one", p->name);
        return -1;
    }
    if (cs)
        return plan_credential_source(pl, p, cs, err, errlen);
    for (int i = 0; i < nvisited; i++) {
        if (strcmp(visited[i], sp) == 0 && !(strcmp(sp, p->name) == 0 && bt_aws_has_static(p))) {
            bt_aws_seterr(err, errlen, "profile \"%s\": source_profile chain loops back to \"%s\"", pl->top, sp);
            return -1;
        }
    }
    if (nvisited >= MAX_HOPS) {
        bt_aws_seterr(err, errlen, "profile \"%s\": role chain longer than %d hops", pl->top, MAX_HOPS);
        return -1;
    }
    if (strcmp(sp, p->name) == 0)
        return bt_aws_plan_static(pl, p, err, errlen) == 0 ? 0 : -1;
    bt_strlcpy(visited[nvisited++], sp, 128);
    struct profile src;
    int rc = bt_aws_profile_load(&src, sp, err, errlen);
    if (rc == 0 && !src.section_found[SRC_CREDS] && !src.section_found[SRC_CONFIG]) {
        bt_aws_seterr(err, errlen, "profile \"%s\": source_profile \"%s\" not found in %s or %s", p->name, sp,
               src.path[SRC_CREDS], src.path[SRC_CONFIG]);
        rc = -1;
    }
    if (rc == 0) {
        if (bt_aws_has_static(&src))
            rc = bt_aws_plan_static(pl, &src, err, errlen);
        else if (!bt_aws_has_assume_role(&src)) {
            rc = bt_aws_plan_profile(pl, &src, false, err, errlen);
            if (rc > 0) {
                bt_aws_seterr(err, errlen, "the source profile \"%s\" (of \"%s\") must have credentials", sp, p->name);
                rc = -1;
            }
        } else {
            rc = bt_aws_plan_assume(pl, &src, visited, nvisited, err, errlen);
        }
    }
    bt_aws_profile_free(&src);
    return rc;
}
static bt_aws_mfa_prompt_fn mfa_prompt;
static void *mfa_prompt_arg;

void bt_aws_set_mfa_prompt(bt_aws_mfa_prompt_fn fn, void *arg)
{
    mfa_prompt = fn;
    mfa_prompt_arg = arg;
}

/* Credentials of profiles that needed an MFA code, kept so the code is asked once per session
 * (the CLI caches them the same way) and every collector shares them. */
#define MAX_MFA_CACHE 8
static struct { char profile[128]; struct bt_creds creds; } mfa_cache[MAX_MFA_CACHE];

bool bt_aws_plan_needs_mfa(const struct plan *pl)
{
    for (int i = 0; i < pl->nhops; i++)
        if (pl->hops[i].mfa_serial[0])
            return true;
    return false;
}

const struct bt_creds *bt_aws_mfa_cached(const char *profile)
{
    int64_t now = (int64_t)time(NULL);
    for (int i = 0; i < MAX_MFA_CACHE; i++)
        if (!strcmp(mfa_cache[i].profile, profile) && mfa_cache[i].creds.access_key[0] &&
            (!mfa_cache[i].creds.expiration || mfa_cache[i].creds.expiration - now > 300))
            return &mfa_cache[i].creds;
    return NULL;
}

void bt_aws_mfa_store(const char *profile, const struct bt_creds *c)
{
    int slot = 0;
    for (int i = 0; i < MAX_MFA_CACHE; i++) {
        if (!strcmp(mfa_cache[i].profile, profile) || !mfa_cache[i].profile[0]) {
            slot = i;
            break;
        }
    }
    bt_strlcpy(mfa_cache[slot].profile, profile, sizeof mfa_cache[slot].profile);
    bt_creds_copy(&mfa_cache[slot].creds, c);
}

void bt_aws_forget_cached(void)
{
    for (int i = 0; i < MAX_MFA_CACHE; i++) {
        bt_creds_clear(&mfa_cache[i].creds);
        mfa_cache[i].profile[0] = '\0';
    }
}

static void hop_what(const struct hop *h, char *out, size_t n)
{
    snprintf(out, n, "profile \"%s\": AssumeRole %s", h->profile, h->role_arn);
}

/* A job has one request in flight at a time; its kind says who reads the answer. */
void bt_aws_sts_answer(struct bt_aws_job *j, const struct bt_http_resp *r, const char *what, const char *prof)
{
    struct bt_sts_result res;
    if (r->status == 0) {
        bt_aws_job_fail(j, "%s: %s (%s)", what, r->transport_error, r->url ? r->url : "");
        return;
    }
    int prc = bt_sts_parse(r->body, r->body_len, &res);
    if (prc == 1 || r->status >= 300) {
        char msg[200];
        bt_aws_safe_copy(msg, sizeof msg, res.message[0] ? res.message : r->error_message, 160);
        const char *code = res.code[0] ? res.code : r->error_code[0] ? r->error_code : "error";
        /* the known codes get what to do instead of AWS's longer sentence */
        const char *hint = !strcmp(code, "ExpiredToken") || !strcmp(code, "ExpiredTokenException")
                               ? "the source credentials have expired; renew them"
                         : !strcmp(code, "RegionDisabledException")
                               ? "activate STS in this Region (IAM console) or set another region"
                         : !strcmp(code, "AccessDenied") ? "check the role's trust policy and external_id"
                         : !strcmp(code, "InvalidIdentityToken") ? "the web identity token was refused" : "";
        if (hint[0])
            bt_aws_job_fail(j, "%s: %s; %s", what, code, hint);
        else
            bt_aws_job_fail(j, "%s: %s%s%s", what, code, msg[0] ? ": " : "", msg);
        bt_sts_result_clear(&res);
        return;
    }
    if (prc < 0 || !res.creds.access_key[0]) {
        bt_aws_job_fail(j, "%s: unreadable STS answer: %s", what, res.message);
        bt_sts_result_clear(&res);
        return;
    }
    char account[16] = "?", role[128] = "?";
    bt_arn_identity(res.arn, account, sizeof account, role, sizeof role);
    if (strcmp(prof, "environment") == 0)
        bt_aws_creds_source(&res.creds, "account %s role %s (web identity, AWS_WEB_IDENTITY_TOKEN_FILE)",
                            account, role);
    else
        bt_aws_creds_source(&res.creds, "account %s role %s (%s, profile %s)", account, role,
                            j->hop > 0 || j->pl.kind != S_WEB ? "assume role" : "web identity", prof);
    bt_aws_job_got(j, &res.creds);
    bt_sts_result_clear(&res);
}

static void assume_answer(struct bt_aws_job *j, const struct bt_http_resp *r)
{
    char what[512]; /* profile (127) + role ARN (255) + the words */
    hop_what(&j->pl.hops[j->hop - 1], what, sizeof what);
    bt_aws_sts_answer(j, r, what, j->pl.hops[j->hop - 1].profile);
}

static void assume_start(struct bt_aws_job *j)
{
    const struct hop *h = &j->pl.hops[j->hop - 1];
    struct bt_buf body = {0};
    bt_form_add(&body, "Action", "AssumeRole");
    bt_form_add(&body, "Version", "2011-06-15");
    bt_form_add(&body, "RoleArn", h->role_arn);
    bt_form_add(&body, "RoleSessionName", h->session_name);
    if (h->external_id[0])
        bt_form_add(&body, "ExternalId", h->external_id);
    if (h->duration) {
        char d[16];
        snprintf(d, sizeof d, "%d", h->duration);
        bt_form_add(&body, "DurationSeconds", d);
    }
    if (h->mfa_serial[0]) {
        char code[16] = "";
        char what[512]; /* profile (127) + role ARN (255) + the words */
        hop_what(h, what, sizeof what);
        if (!mfa_prompt || mfa_prompt(h->mfa_serial, code, sizeof code, mfa_prompt_arg) != 0 || !code[0]) {
            bt_buf_free(&body);
            bt_aws_job_fail(j, "%s needs a new MFA code (mfa_serial %s), which bedtop asks for only at start-up; "
                     "restart it from a terminal", what, h->mfa_serial);
            return;
        }
        bt_form_add(&body, "SerialNumber", h->mfa_serial);
        bt_form_add(&body, "TokenCode", code);
        OPENSSL_cleanse(code, sizeof code);
    }
    bt_creds_copy(&j->signer.creds, &j->cur);
    j->signer.valid = true;
    char label[320];
    snprintf(label, sizeof label, "sts %s AssumeRole (profile %s)", j->pl.sts_region, h->profile);
    struct bt_http_req req = {
        .policy = &bt_aws_policy,
        .method = "POST", .url = j->pl.sts_url, .service = "sts", .region = j->pl.sts_region,
        .creds = &j->signer, .content_type = "application/x-www-form-urlencoded; charset=utf-8",
        .body = body.buf ? body.buf : "", .body_len = body.len, .label = label, .timeout = 10,
    };
    bt_aws_job_submit(j, assume_answer, &req);
    bt_aws_wipe_buf(&body);
}

/* An AssumeRole hop: runs j->pl.hops[j->hop - 1] with the credentials the step before got. */
const struct bt_aws_provider bt_aws_provider_assume = {.name = "assume role", .start = assume_start};

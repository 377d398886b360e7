/* IAM Identity Center (SSO): the token `aws sso login` cached in ~/.aws/sso/cache/,
 * refreshed through SSO OIDC CreateToken within 15 minutes of expiry and written back (0600),
 * then the portal's GetRoleCredentials. sso_session + [sso-session NAME], or the legacy
 * sso_start_url/sso_region/sso_account_id/sso_role_name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "aws/creds_int.h"
#include "aws/sts.h"
#include "io/file.h"

static void portal_answer(struct bt_aws_job *j, const struct bt_http_resp *r);

int bt_aws_plan_sso(struct plan *pl, const struct profile *p, char *err, size_t errlen)
{
    const char *sess = bt_aws_pget(p, K_SSO_SESSION);
    const char *start = bt_aws_pget(p, K_SSO_START_URL), *region = bt_aws_pget(p, K_SSO_REGION);
    if (sess) {
        if (!p->sso_section_found) {
            bt_aws_seterr(err, errlen, "profile \"%s\" names sso_session \"%s\" but %s has no [sso-session %s] "
                   "section", p->name, sess, p->path[SRC_CONFIG], sess);
            return -1;
        }
        const char *s_start = p->sso_kv[K_SSO_START_URL], *s_region = p->sso_kv[K_SSO_REGION];
        if ((start && s_start && strcmp(start, s_start) != 0) ||
            (region && s_region && strcmp(region, s_region) != 0)) {
            bt_aws_seterr(err, errlen, "profile \"%s\": sso_start_url/sso_region differ between the profile and "
                   "[sso-session %s]", p->name, sess);
            return -1;
        }
        start = s_start;
        region = s_region;
    }
    const char *account = bt_aws_pget(p, K_SSO_ACCOUNT), *role = bt_aws_pget(p, K_SSO_ROLE);
    const char *missing = !start ? "sso_start_url" : !region ? "sso_region" : !account ? "sso_account_id"
                        : !role ? "sso_role_name" : NULL;
    if (missing) {
        bt_aws_seterr(err, errlen, "profile \"%s\" uses IAM Identity Center but has no %s%s", p->name, missing,
               sess ? " (in the profile or its sso-session)" : "");
        return -1;
    }
    if (!bt_aws_valid_region(region) || strlen(account) >= sizeof pl->sso_account || strlen(role) >= sizeof pl->sso_role ||
        strlen(start) >= sizeof pl->sso_start_url || (sess && strlen(sess) >= sizeof pl->sso_session)) {
        bt_aws_seterr(err, errlen, "profile \"%s\": sso_region, sso_account_id, sso_role_name or sso_start_url is "
               "malformed or too long", p->name);
        return -1;
    }
    pl->kind = S_SSO;
    bt_strlcpy(pl->src_profile, p->name, sizeof pl->src_profile);
    bt_strlcpy(pl->sso_session, sess ? sess : "", sizeof pl->sso_session);
    bt_strlcpy(pl->sso_start_url, start, sizeof pl->sso_start_url);
    bt_strlcpy(pl->sso_region, region, sizeof pl->sso_region);
    bt_strlcpy(pl->sso_account, account, sizeof pl->sso_account);
    bt_strlcpy(pl->sso_role, role, sizeof pl->sso_role);
    struct bt_aws_profile_opts so = {.profile = p->name};
    if (bt_aws_endpoint(&so, "portal.sso", region, pl->sso_url, sizeof pl->sso_url) != 0 ||
        bt_aws_endpoint(&so, "oidc", region, pl->oidc_url, sizeof pl->oidc_url) != 0) {
        bt_aws_seterr(err, errlen, "profile \"%s\": no IAM Identity Center endpoint for Region %s", p->name, region);
        return -1;
    }
    return 0;
}
static const char *json_s(const cJSON *o, const char *k)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(it) && it->valuestring && *it->valuestring ? it->valuestring : NULL;
}

/* expiresAt as the CLIs wrote it: "2026-12-01T10:00:00Z" (botocore, CLI v2 today) or
 * "2020-06-17T10:18:08UTC" (early CLI v2); botocore reads both with dateutil. */
static bool sso_time(const char *s, int64_t *out)
{
    if (!s)
        return false;
    if (bt_parse_iso(s, out))
        return true;
    char tmp[64];
    size_t n = strlen(s);
    if (n < 4 || n >= sizeof tmp || strcmp(s + n - 3, "UTC") != 0)
        return false;
    memcpy(tmp, s, n - 3);
    tmp[n - 3] = 'Z';
    tmp[n - 2] = '\0';
    return bt_parse_iso(tmp, out);
}

static void sso_login_hint(const struct bt_aws_job *j, char *out, size_t n)
{
    if (j->pl.sso_session[0] && strcmp(j->pl.src_profile, j->pl.top) != 0)
        snprintf(out, n, "run: aws sso login --sso-session %s", j->pl.sso_session);
    else
        snprintf(out, n, "run: aws sso login --profile %s", j->pl.src_profile);
}

static void start_portal(struct bt_aws_job *j, const char *access_token)
{
    if (!bt_aws_valid_token(access_token)) {
        bt_aws_job_fail(j, "profile \"%s\": the cached IAM Identity Center token has control characters", j->pl.src_profile);
        return;
    }
    char url[1024];
    char *acct = curl_easy_escape(NULL, j->pl.sso_account, 0), *role = curl_easy_escape(NULL, j->pl.sso_role, 0);
    snprintf(url, sizeof url, "%s/federation/credentials?account_id=%s&role_name=%s", j->pl.sso_url,
             acct ? acct : "", role ? role : "");
    curl_free(acct);
    curl_free(role);
    struct bt_header hdr = {.name = "x-amz-sso_bearer_token", .value = access_token};
    char label[200];
    snprintf(label, sizeof label, "sso %s GetRoleCredentials", j->pl.sso_region);
    struct bt_http_req req = {
        .policy = &bt_aws_policy,
        .method = "GET", .url = url, .headers = &hdr, .nheaders = 1, .label = label, .timeout = 10,
    };
    bt_aws_job_submit(j, portal_answer, &req);
}

static void portal_answer(struct bt_aws_job *j, const struct bt_http_resp *r)
{
    char hint[200];
    sso_login_hint(j, hint, sizeof hint);
    if (r->status == 0) {
        bt_aws_job_fail(j, "profile \"%s\": IAM Identity Center: %s (%s)", j->pl.src_profile, r->transport_error,
                 r->url ? r->url : "");
        return;
    }
    if (r->status == 401 || (r->status == 403 && !strcmp(r->error_code, "UnauthorizedException"))) {
        bt_aws_job_fail(j, "profile \"%s\": the IAM Identity Center session has expired or is invalid; %s",
                 j->pl.src_profile, hint);
        return;
    }
    if (r->status != 200) {
        char msg[160];
        bt_aws_safe_copy(msg, sizeof msg, r->error_message, 120);
        bt_aws_job_fail(j, "profile \"%s\": IAM Identity Center GetRoleCredentials for account %s role %s: %s (HTTP %ld)%s%s",
                 j->pl.src_profile, j->pl.sso_account, j->pl.sso_role,
                 r->error_code[0] ? r->error_code : "error", r->status, msg[0] ? ": " : "", msg);
        return;
    }
    cJSON *root = cJSON_ParseWithLength(r->body, r->body_len);
    const cJSON *rc = cJSON_GetObjectItemCaseSensitive(root, "roleCredentials");
    const char *akid = json_s(rc, "accessKeyId"), *secret = json_s(rc, "secretAccessKey");
    const char *token = json_s(rc, "sessionToken");
    const cJSON *exp = cJSON_GetObjectItemCaseSensitive(rc, "expiration");
    struct bt_creds c = {0};
    char what[200], err[300];
    snprintf(what, sizeof what, "profile \"%s\": IAM Identity Center", j->pl.src_profile);
    if (!akid || !secret || !cJSON_IsNumber(exp) || !(exp->valuedouble > 0 && exp->valuedouble < 1e15)) {
        bt_aws_wipe_json(root);
        cJSON_Delete(root);
        bt_aws_job_fail(j, "%s: GetRoleCredentials answer lacks roleCredentials", what);
        return;
    }
    int src = bt_aws_creds_set(&c, akid, secret, token, what, err, sizeof err);
    c.expiration = (int64_t)(exp->valuedouble / 1000.0);
    bt_aws_wipe_json(root);
    cJSON_Delete(root);
    if (src != 0) {
        bt_aws_job_fail(j, "%s", err);
        return;
    }
    bt_aws_creds_source(&c, "account %s role %s (IAM Identity Center, profile %s)", j->pl.sso_account,
                        j->pl.sso_role, j->pl.src_profile);
    bt_aws_job_got(j, &c);
    bt_creds_clear(&c);
}

/* Whether a refreshed token could be written where `path` is: the temp file of
 * sso_cache_write can be created in its directory. A refresh token is single-use:
 * it is never spent without a place to keep its successor (issue 26 break 10). */
static bool sso_cache_writable(const char *path)
{
    char tmp[PATH_LEN + 16];
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return false;
    close(fd);
    unlink(tmp);
    return true;
}

/* Writes the refreshed token back as botocore's JSONFileCache does: a 0600 temp file in the
 * cache directory (mkstemp: O_EXCL, never through a planted link), then rename over the
 * old one. */
static int sso_cache_write(const char *path, const cJSON *obj)
{
    char *text = cJSON_PrintUnformatted(obj);
    if (!text)
        return -1;
    int rc = bt_write_private_file(path, text, strlen(text), true) ? 0 : -1;
    OPENSSL_cleanse(text, strlen(text));
    cJSON_free(text);
    return rc;
}

static void oidc_answer(struct bt_aws_job *j, const struct bt_http_resp *r)
{
    char hint[200];
    sso_login_hint(j, hint, sizeof hint);
    cJSON *root = r->status == 200 ? cJSON_ParseWithLength(r->body, r->body_len) : NULL;
    const char *at = json_s(root, "accessToken");
    const cJSON *ein = cJSON_GetObjectItemCaseSensitive(root, "expiresIn");
    if (!at || !cJSON_IsNumber(ein) || !(ein->valuedouble > 0 && ein->valuedouble < 1e9)) {
        if (root) {
            bt_aws_wipe_json(root);
            cJSON_Delete(root);
        }
        /* botocore: a failed refresh leaves the old token; it is expired or about to be */
        const char *old = json_s(j->cache, "accessToken");
        int64_t exp = 0;
        const char *e = json_s(j->cache, "expiresAt");
        if (old && e && sso_time(e, &exp) && exp > (int64_t)time(NULL)) {
            start_portal(j, old);
            return;
        }
        bt_aws_job_fail(j, "profile \"%s\": the IAM Identity Center token has expired and its refresh failed (%s); %s",
                 j->pl.src_profile, r->status ? (r->error_code[0] ? r->error_code : "bad answer") : r->transport_error,
                 hint);
        return;
    }
    /* the new cache entry: botocore's SSOTokenProvider._attempt_create_token fields */
    char expires[32];
    int64_t exp = (int64_t)time(NULL) + (int64_t)ein->valuedouble;
    bt_fmt_iso(exp, expires, sizeof expires);
    cJSON *nt = cJSON_CreateObject();
    cJSON_AddStringToObject(nt, "startUrl", j->pl.sso_start_url);
    cJSON_AddStringToObject(nt, "region", j->pl.sso_region);
    cJSON_AddStringToObject(nt, "accessToken", at);
    cJSON_AddStringToObject(nt, "expiresAt", expires);
    static const char *const keep_keys[] = {"clientId", "clientSecret", "registrationExpiresAt"};
    for (size_t i = 0; i < BT_ARRAY_LEN(keep_keys); i++)
        if (json_s(j->cache, keep_keys[i]))
            cJSON_AddStringToObject(nt, keep_keys[i], json_s(j->cache, keep_keys[i]));
    const char *rt = json_s(root, "refreshToken");
    if (rt)
        cJSON_AddStringToObject(nt, "refreshToken", rt);
    else if (json_s(j->cache, "refreshToken"))
        cJSON_AddStringToObject(nt, "refreshToken", json_s(j->cache, "refreshToken"));
    bt_aws_wipe_json(root);
    cJSON_Delete(root);
    if (sso_cache_write(j->cache_path, nt) != 0) /* the old refresh token is spent: said always */
        bt_err("warning: profile \"%s\": the refreshed IAM Identity Center token cannot be written "
               "to %s (%s); it is used until it expires, then run: aws sso login --profile %s",
               j->pl.src_profile, j->cache_path, strerror(errno), j->pl.src_profile);
    bt_aws_wipe_json(j->cache);
    cJSON_Delete(j->cache);
    j->cache = nt;
    start_portal(j, json_s(nt, "accessToken"));
}

static void sso_start(struct bt_aws_job *j)
{
    char name[64];
    bt_sso_cache_name(j->pl.sso_session[0] ? j->pl.sso_session : j->pl.sso_start_url, name, sizeof name);
    snprintf(j->cache_path, sizeof j->cache_path, "%s/.aws/sso/cache/%s", bt_aws_home_dir(), name);
    char hint[200];
    sso_login_hint(j, hint, sizeof hint);
    size_t len = 0;
    char *text = bt_read_file(j->cache_path, 256 * 1024, &len);
    if (!text) {
        bt_aws_job_fail(j, "profile \"%s\": no IAM Identity Center token cached (%s: %s); %s", j->pl.src_profile,
                 j->cache_path, strerror(errno), hint);
        return;
    }
    j->cache = cJSON_ParseWithLength(text, len);
    OPENSSL_cleanse(text, len);
    free(text);
    const char *at = json_s(j->cache, "accessToken"), *e = json_s(j->cache, "expiresAt");
    int64_t exp = 0;
    if (!at || !e || !sso_time(e, &exp)) {
        bt_aws_job_fail(j, "profile \"%s\": the cached IAM Identity Center token %s is not valid; %s", j->pl.src_profile,
                 j->cache_path, hint);
        return;
    }
    int64_t now = (int64_t)time(NULL);
    if (!j->pl.sso_session[0]) {
        /* legacy form: no refresh (botocore raises UnauthorizedSSOTokenError) */
        if (exp <= now) {
            bt_aws_job_fail(j, "profile \"%s\": the IAM Identity Center token has expired; %s", j->pl.src_profile, hint);
            return;
        }
        start_portal(j, at);
        return;
    }
    if (exp - now >= 15 * 60) {
        start_portal(j, at);
        return;
    }
    /* within botocore's 15-minute refresh window: CreateToken with the refresh token */
    const char *rt = json_s(j->cache, "refreshToken"), *cid = json_s(j->cache, "clientId");
    const char *cs = json_s(j->cache, "clientSecret"), *rexp = json_s(j->cache, "registrationExpiresAt");
    int64_t reg = 0;
    bool can_keep = rt && sso_cache_writable(j->cache_path);
    if (rt && !can_keep) {
        char dir[PATH_LEN], when[32];
        bt_strlcpy(dir, j->cache_path, sizeof dir);
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        bt_fmt_hhmm(exp, when, sizeof when);
        if (exp > now) {
            bt_err("warning: profile \"%s\": %s is not writable, so the IAM Identity Center token "
                   "(expires %s UTC) is not refreshed: its single-use refresh token would be spent "
                   "with nowhere to keep the next; make it writable or run: aws sso login --profile %s",
                   j->pl.src_profile, dir, when, j->pl.src_profile);
            start_portal(j, at);
            return;
        }
        /* short: the message is one line of a route's status */
        bt_aws_job_fail(j, "profile \"%s\": SSO token expired; not refreshed, %s is not writable; "
                        "fix, then: aws sso login --profile %s", j->pl.src_profile, dir,
                        j->pl.src_profile);
        return;
    }
    if (!rt || !cid || !cs || !rexp || !sso_time(rexp, &reg) || reg <= now) {
        if (exp > now) {
            start_portal(j, at);
            return;
        }
        bt_aws_job_fail(j, "profile \"%s\": the IAM Identity Center token has expired and cannot be refreshed; %s",
                 j->pl.src_profile, hint);
        return;
    }
    cJSON *body = cJSON_CreateObject();
    cJSON_AddStringToObject(body, "clientId", cid);
    cJSON_AddStringToObject(body, "clientSecret", cs);
    cJSON_AddStringToObject(body, "grantType", "refresh_token");
    cJSON_AddStringToObject(body, "refreshToken", rt);
    char *text2 = cJSON_PrintUnformatted(body);
    bt_aws_wipe_json(body);
    cJSON_Delete(body);
    if (!text2) {
        bt_aws_job_fail(j, "profile \"%s\": out of memory", j->pl.src_profile);
        return;
    }
    char url[600], label[200];
    snprintf(url, sizeof url, "%s/token", j->pl.oidc_url);
    snprintf(label, sizeof label, "sso-oidc %s CreateToken", j->pl.sso_region);
    struct bt_http_req req = {
        .policy = &bt_aws_policy,
        .method = "POST", .url = url, .content_type = "application/json", .body = text2,
        .body_len = strlen(text2), .label = label, .timeout = 10,
    };
    bt_aws_job_submit(j, oidc_answer, &req);
    OPENSSL_cleanse(text2, strlen(text2));
    cJSON_free(text2);
}

static void sso_release(struct bt_aws_job *j)
{
    if (j->cache) {
        bt_aws_wipe_json(j->cache);
        cJSON_Delete(j->cache);
        j->cache = NULL;
    }
}

const struct bt_aws_provider bt_aws_provider_sso = {.name = "IAM Identity Center", .start = sso_start, .release = sso_release};

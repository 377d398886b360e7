/* What every credential provider shares: messages without secrets, the checks on access
 * keys and tokens, and the JSON credential document of credential_process, the container
 * endpoint and IMDS, and the calls that end a provider's step (through the job's ops). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "aws/creds_int.h"

void bt_aws_seterr(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

const char *bt_aws_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

bool bt_aws_env_true(const char *name)
{
    const char *v = getenv(name);
    return v && bt_streq_nocase(v, "true");
}

void bt_aws_safe_copy(char *dst, size_t n, const char *s, size_t maxlen)
{
    size_t j = 0;
    for (size_t i = 0; s && s[i] && i < maxlen && j + 1 < n; i++) {
        unsigned char c = (unsigned char)s[i];
        dst[j++] = (c >= 32 && c < 127) ? (char)c : '?';
    }
    if (n)
        dst[j] = '\0';
}
static bool valid_akid(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof ((struct bt_creds *)0)->access_key)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= 32 || c >= 127 || c == '/' || c == ',')
            return false;
    }
    return true;
}

bool bt_aws_valid_token(const char *s)
{
    size_t n = strlen(s);
    if (n > MAX_VALUE)
        return false;
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)s[i] < 32 || s[i] == 127)
            return false;
    }
    return true;
}

int bt_aws_creds_set(struct bt_creds *c, const char *akid, const char *secret, const char *token,
                     const char *what, char *err, size_t errlen)
{
    if (!valid_akid(akid)) {
        bt_aws_seterr(err, errlen, "%s: access key id is empty, too long or has invalid characters", what);
        return -1;
    }
    if (!*secret || strlen(secret) >= sizeof c->secret_key) {
        bt_aws_seterr(err, errlen, "%s: secret access key is empty or too long", what);
        return -1;
    }
    if (token && *token && !bt_aws_valid_token(token)) {
        bt_aws_seterr(err, errlen, "%s: session token is too long or has control characters", what);
        return -1;
    }
    bt_creds_clear(c);
    bt_strlcpy(c->access_key, akid, sizeof c->access_key);
    bt_strlcpy(c->secret_key, secret, sizeof c->secret_key);
    c->session_token = token && *token ? bt_xstrdup(token) : NULL;
    return 0;
}

void bt_aws_wipe_json(cJSON *node)
{
    for (; node; node = node->next) {
        if (node->valuestring)
            OPENSSL_cleanse(node->valuestring, strlen(node->valuestring));
        bt_aws_wipe_json(node->child);
    }
}

/* Shared by credential_process (token key SessionToken) and container/IMDS (Token). */
int bt_aws_creds_from_json(const char *json, size_t len, bool process, struct bt_creds *out,
                           const char *what, char *err, size_t errlen)
{
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        bt_aws_seterr(err, errlen, "%s: output is not a JSON object", what);
        return -1;
    }
    int rc = -1;
    if (process) {
        const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "Version");
        if (!cJSON_IsNumber(ver)) {
            bt_aws_seterr(err, errlen, "%s: output has no numeric \"Version\" (must be 1)", what);
            goto out;
        }
        if (ver->valuedouble != 1) {
            bt_aws_seterr(err, errlen, "%s: output has Version %g; only Version 1 is supported", what, ver->valuedouble);
            goto out;
        }
    } else {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(root, "Code");
        if (cJSON_IsString(code) && strcmp(code->valuestring, "Success") != 0) {
            char safe[64];
            bt_aws_safe_copy(safe, sizeof safe, code->valuestring, 60);
            bt_aws_seterr(err, errlen, "%s: credentials not available (Code %s)", what, safe);
            goto out;
        }
    }
    const cJSON *akid = cJSON_GetObjectItemCaseSensitive(root, "AccessKeyId");
    const cJSON *secret = cJSON_GetObjectItemCaseSensitive(root, "SecretAccessKey");
    const cJSON *token = cJSON_GetObjectItemCaseSensitive(root, process ? "SessionToken" : "Token");
    const cJSON *exp = cJSON_GetObjectItemCaseSensitive(root, "Expiration");
    if (!cJSON_IsString(akid) || !cJSON_IsString(secret)) {
        bt_aws_seterr(err, errlen, "%s: output lacks string AccessKeyId and SecretAccessKey", what);
        goto out;
    }
    if (token && !cJSON_IsString(token) && !cJSON_IsNull(token)) {
        bt_aws_seterr(err, errlen, "%s: %s is not a string", what, process ? "SessionToken" : "Token");
        goto out;
    }
    int64_t expiration = 0;
    if (exp && !cJSON_IsNull(exp) &&
        (!cJSON_IsString(exp) || !bt_parse_iso(exp->valuestring, &expiration))) {
        bt_aws_seterr(err, errlen, "%s: Expiration is not an ISO 8601 time", what);
        goto out;
    }
    struct bt_creds got = {0};
    if (bt_aws_creds_set(&got, akid->valuestring, secret->valuestring,
                  cJSON_IsString(token) ? token->valuestring : NULL, what, err, errlen) == 0) {
        got.expiration = expiration;
        bt_strlcpy(got.source, out->source, sizeof got.source);
        bt_creds_copy(out, &got);
        rc = 0;
    }
    bt_creds_clear(&got);
out:
    bt_aws_wipe_json(root);
    cJSON_Delete(root);
    return rc;
}

int bt_aws_parse_process_output(const char *json, size_t len, struct bt_creds *out, char *err, size_t errlen)
{
    if (!json || !out)
        return -1;
    return bt_aws_creds_from_json(json, len, true, out, "credential_process", err, errlen);
}
bool bt_creds_need_refresh(const struct bt_creds *c, int64_t now, int margin)
{
    return c && c->expiration != 0 && now + margin >= c->expiration;
}


void bt_aws_creds_source(struct bt_creds *c, const char *fmt, ...)
{
    struct bt_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    bt_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    const char *s = bt_buf_str(&b);
    size_t n = sizeof c->source;
    if (b.len < n) {
        memcpy(c->source, s, b.len + 1);
    } else {
        size_t keep = n - 4;
        while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
            keep--;
        memcpy(c->source, s, keep);
        memcpy(c->source + keep, "...", 4);
    }
    bt_buf_free(&b);
}

void bt_aws_wipe_buf(struct bt_buf *b)
{
    if (b->buf)
        OPENSSL_cleanse(b->buf, b->len);
    bt_buf_free(b);
}

/* ---- how a provider's step ends: through the job's ops (awsauth.c's), never by name ---- */

void bt_aws_job_got(struct bt_aws_job *j, const struct bt_creds *c)
{
    j->ops->got(j, c);
}

void bt_aws_job_fail(struct bt_aws_job *j, const char *fmt, ...)
{
    char err[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, sizeof err, fmt, ap);
    va_end(ap);
    j->ops->fail(j, err);
}

int bt_aws_job_submit(struct bt_aws_job *j, bt_aws_answer_fn answer, struct bt_http_req *req)
{
    return j->ops->submit(j, answer, req);
}

void bt_aws_job_json_creds(struct bt_aws_job *j, const struct bt_http_resp *r, const char *what,
                           const char *source)
{
    if (r->status != 200) {
        if (r->status == 0)
            bt_aws_job_fail(j, "%s: %s", what, r->transport_error);
        else
            bt_aws_job_fail(j, "%s: HTTP %ld", what, r->status);
        return;
    }
    struct bt_creds c = {0};
    char err[700];
    bt_strlcpy(c.source, source, sizeof c.source);
    if (bt_aws_creds_from_json(r->body, r->body_len, false, &c, what, err, sizeof err) != 0) {
        bt_creds_clear(&c);
        bt_aws_job_fail(j, "%s", err);
        return;
    }
    bt_aws_job_got(j, &c);
    bt_creds_clear(&c);
}

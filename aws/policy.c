/* The AWS SDKs' rules for requests to AWS, as the HTTP client's policy: SigV4 on each
 * attempt (dated by the server's clock when ours is off), error codes from the header or
 * body, standard-mode retry classes, and credentials refreshed before they are needed or
 * when the service calls them expired. */
#include "aws/policy.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"

#define EXPIRY_MARGIN 300        /* refresh credentials this close to expiry (s) */
#define SKEW_MIN 240             /* SignatureDoesNotMatch counts as skew beyond this (s) */
#define FIX_SKEW 1u              /* bits of a request's fixes word: corrections tried */
#define FIX_REFRESH 2u

static const char *const throttle_codes[] = {
    "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException",
    "TooManyRequestsException", "ProvisionedThroughputExceededException",
    "TransactionInProgressException", "RequestLimitExceeded", "BandwidthLimitExceeded",
    "LimitExceededException", "RequestThrottled", "SlowDown", "PriorRequestNotComplete",
    "EC2ThrottledException",
};
static const char *const transient_codes[] = {
    "RequestTimeout", "RequestTimeoutException", "InternalError",
};
static const char *const expired_token_codes[] = {
    "ExpiredToken", "ExpiredTokenException", "InvalidClientTokenId",
};

static bool in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, list[i]) == 0)
            return true;
    return false;
}

bool bt_aws_is_throttle_code(const char *code)
{
    return code && in_list(code, throttle_codes, BT_ARRAY_LEN(throttle_codes));
}

/* "com.amazonaws.cloudwatch#ThrottlingException:http://..." -> "ThrottlingException" */
static void normalize_code(const char *src, size_t n, char *code, size_t codelen)
{
    size_t start = 0, end = n;
    for (size_t i = 0; i < n; i++) {
        if (src[i] == ':' || src[i] == ';') {
            end = i;
            break;
        }
    }
    for (size_t i = 0; i < end; i++)
        if (src[i] == '#')
            start = i + 1;
    while (start < end && (src[start] == ' ' || src[start] == '\t'))
        start++;
    while (end > start && (src[end - 1] == ' ' || src[end - 1] == '\t' || src[end - 1] == '\r' ||
                           src[end - 1] == '\n'))
        end--;
    size_t o = 0;
    for (size_t i = start; i < end && o + 1 < codelen; i++) {
        unsigned char c = (unsigned char)src[i];
        code[o++] = (c > 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (codelen)
        code[o] = '\0';
}

static void copy_message(const char *src, size_t n, char *msg, size_t msglen)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < msglen; i++) {
        unsigned char c = (unsigned char)src[i];
        msg[o++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
    }
    if (msglen)
        msg[o] = '\0';
}

static const char *json_str(const cJSON *obj, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, names[i]);
        if (cJSON_IsString(it) && it->valuestring)
            return it->valuestring;
    }
    return NULL;
}

/* <Code>X</Code> of a query-protocol (XML) error body, bounded by len. */
static bool xml_elem(const char *body, size_t len, const char *tag, const char **val, size_t *vlen)
{
    char open_tag[32], close_tag[32];
    snprintf(open_tag, sizeof open_tag, "<%s>", tag);
    snprintf(close_tag, sizeof close_tag, "</%s>", tag);
    size_t ol = strlen(open_tag), cl = strlen(close_tag);
    for (size_t i = 0; i + ol <= len; i++) {
        if (memcmp(body + i, open_tag, ol) != 0)
            continue;
        size_t s = i + ol;
        for (size_t j = s; j + cl <= len; j++) {
            if (memcmp(body + j, close_tag, cl) == 0) {
                *val = body + s;
                *vlen = j - s;
                return true;
            }
        }
        return false;
    }
    return false;
}

int bt_aws_error_code(const char *body, size_t len, const char *query_error_header,
                      char *code, size_t codelen, char *msg, size_t msglen)
{
    static const char *const code_keys[] = { "__type", "code", "Code" };
    static const char *const msg_keys[] = { "message", "Message", "errorMessage" };
    if (codelen)
        code[0] = '\0';
    if (msglen)
        msg[0] = '\0';
    if (query_error_header && *query_error_header)
        normalize_code(query_error_header, strlen(query_error_header), code, codelen);
    if (!body || len == 0)
        return codelen && code[0] ? 0 : -1;
    cJSON *root = cJSON_ParseWithLength(body, len);
    if (cJSON_IsObject(root)) {
        const char *c = json_str(root, code_keys, BT_ARRAY_LEN(code_keys));
        const char *m = json_str(root, msg_keys, BT_ARRAY_LEN(msg_keys));
        if (c && codelen && !code[0])
            normalize_code(c, strlen(c), code, codelen);
        if (m)
            copy_message(m, strlen(m), msg, msglen);
    } else if (!root) {
        const char *v;
        size_t vl;
        if (codelen && !code[0] && xml_elem(body, len, "Code", &v, &vl))
            normalize_code(v, vl, code, codelen);
        if (xml_elem(body, len, "Message", &v, &vl))
            copy_message(v, vl, msg, msglen);
    }
    cJSON_Delete(root);
    return codelen && code[0] ? 0 : -1;
}

void bt_creds_provider_done(struct bt_creds_provider *p, const struct bt_creds *c, const char *err)
{
    p->pending = false;
    p->gen++;
    if (c) {
        bt_creds_copy(&p->creds, c);
        p->valid = true;
        p->error[0] = '\0';
        p->next_try = 0;
    } else {
        bt_strlcpy(p->error, err && *err ? err : "refresh failed", sizeof p->error);
        p->next_try = (int64_t)time(NULL) + 30;
    }
}


/* ---- the clock of each host ---- */

static int64_t skew_for(const struct bt_creds_provider *p, const char *host)
{
    for (int i = 0; i < p->nskew; i++)
        if (strcmp(p->skew[i].host, host) == 0)
            return p->skew[i].offset;
    return 0;
}

static void skew_set(struct bt_creds_provider *p, const char *host, int64_t offset)
{
    for (int i = 0; i < p->nskew; i++) {
        if (strcmp(p->skew[i].host, host) == 0) {
            p->skew[i].offset = offset;
            return;
        }
    }
    int slot = p->nskew < BT_AWS_SKEW_HOSTS ? p->nskew++ : p->skew_next++ % BT_AWS_SKEW_HOSTS;
    bt_strlcpy(p->skew[slot].host, host, sizeof p->skew[slot].host);
    p->skew[slot].offset = offset;
}

static bool is_skew_error(const char *code, const char *msg, int64_t offset)
{
    if (strcmp(code, "RequestTimeTooSkewed") == 0 || strcmp(code, "RequestExpired") == 0)
        return true;
    if (strcmp(code, "InvalidSignatureException") == 0)
        return strstr(msg, "Signature expired") != NULL;
    if (strcmp(code, "SignatureDoesNotMatch") == 0)
        return offset > SKEW_MIN || offset < -SKEW_MIN;
    return false;
}

/* ---- the policy's hooks ---- */

/* Starts a refresh when the credentials are missing or close to expiry; while it runs,
 * requests use the old ones if they have not expired yet, so a refresh never stalls polling. */
static int aws_ready(struct bt_creds_provider *p, struct bt_http *h, bool waited_before, unsigned *gen,
                     char *fail, size_t n)
{
    int64_t now = (int64_t)time(NULL);
    bool waited = waited_before && *gen != p->gen; /* a refresh ended since the wait began */
    bool expired = p->valid && p->creds.expiration && p->creds.expiration <= now;
    bool expiring = p->valid && p->creds.expiration && p->creds.expiration - now < EXPIRY_MARGIN;
    if (!p->pending && !waited && p->refresh &&
        (!p->valid || expired || (expiring && now >= p->next_try))) {
        char err[1024] = "";
        int rc = p->refresh(p, h, err, sizeof err);
        if (rc == 1) {
            p->pending = true;
        } else {
            p->gen++;
            if (rc == 0) {
                p->valid = true;
                p->error[0] = '\0';
            } else {
                bt_strlcpy(p->error, err[0] ? err : "refresh failed", sizeof p->error);
                p->next_try = now + 30;
            }
        }
        expired = p->valid && p->creds.expiration && p->creds.expiration <= now;
    }
    if (p->pending && !(p->valid && !expired)) {
        *gen = p->gen;
        return 0;
    }
    if (!p->valid) {
        snprintf(fail, n, "credentials: %s", p->error[0] ? p->error : "none available");
        return -1;
    }
    if (expired) {
        snprintf(fail, n, "credentials: expired (%s)", p->error[0] ? p->error : "no refresh");
        return -1;
    }
    return 1;
}

static bool aws_sign(struct bt_creds_provider *p, const struct bt_http_msg *m,
                     void (*add)(void *ctx, const char *name, const char *value), void *ctx,
                     char *fail, size_t n)
{
    if (!p->valid) {
        snprintf(fail, n, "credentials: none available");
        return false;
    }
    struct bt_sigv4_req sr = {
        .method = m->method, .path = m->path, .query = m->query,
        .headers = m->headers, .nheaders = m->nheaders, .body = m->body, .body_len = m->body_len,
        .region = m->region, .service = m->service,
        .now = (int64_t)time(NULL) + skew_for(p, m->host), .normalize_path = true,
    };
    struct bt_sigv4_out out;
    memset(&out, 0, sizeof out);
    if (bt_sigv4_sign(&sr, &p->creds, &out) != 0) {
        snprintf(fail, n, "signing failed (bad request or credentials)");
        return false;
    }
    add(ctx, "X-Amz-Date", out.amz_date);
    if (p->creds.session_token)
        add(ctx, "X-Amz-Security-Token", p->creds.session_token);
    add(ctx, "Authorization", out.authorization);
    bt_sigv4_out_free(&out);
    memset(&out, 0, sizeof out);
    return true;
}

/* Codes that say the credentials themselves are missing, malformed, expired or not
 * recognised (as opposed to lacking permission). */
static const char *const credential_codes[] = {
    "ExpiredToken", "ExpiredTokenException", "InvalidClientTokenId", "UnrecognizedClientException",
    "IncompleteSignature", "IncompleteSignatureException", "InvalidSignatureException",
    "SignatureDoesNotMatch", "MissingAuthenticationToken", "MissingAuthenticationTokenException",
    "AuthFailure", "UnauthorizedException",
};
static const char *const access_codes[] = {
    "AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "NotAuthorized",
    "OptInRequired", "SubscriptionRequiredException",
};

static enum bt_errkind aws_describe(const struct bt_http_answer *a, char *code, size_t codelen, char *msg,
                                    size_t msglen)
{
    bt_aws_error_code(a->body, a->body_len, a->error_header, code, codelen, msg, msglen);
    if (a->status == 429 || bt_aws_is_throttle_code(code))
        return BT_ERR_THROTTLED;
    if (in_list(code, credential_codes, BT_ARRAY_LEN(credential_codes)))
        return BT_ERR_CREDENTIALS;
    if (in_list(code, access_codes, BT_ARRAY_LEN(access_codes)) || a->status == 401 || a->status == 403)
        return BT_ERR_ACCESS;
    return a->status >= 500 || in_list(code, transient_codes, BT_ARRAY_LEN(transient_codes)) ? BT_ERR_SERVICE
                                                                                            : BT_ERR_REQUEST;
}

static enum bt_http_next aws_judge(struct bt_creds_provider *p, const struct bt_http_answer *a, const char *code,
                                   const char *msg, unsigned *fixes, bool *throttled)
{
    int64_t offset = a->server_date ? a->server_date - (int64_t)time(NULL) : 0;
    *throttled = bt_aws_is_throttle_code(code);
    if (!(*fixes & FIX_SKEW) && a->server_date && p && is_skew_error(code, msg, offset)) {
        skew_set(p, a->host, offset);
        *fixes |= FIX_SKEW;
        return BT_HTTP_RETRY_NOW;
    }
    if (!(*fixes & FIX_REFRESH) && p && p->refresh &&
        in_list(code, expired_token_codes, BT_ARRAY_LEN(expired_token_codes))) {
        *fixes |= FIX_REFRESH;
        p->valid = false;
        return BT_HTTP_RETRY_NOW;
    }
    if (*throttled || in_list(code, transient_codes, BT_ARRAY_LEN(transient_codes)))
        return BT_HTTP_RETRY;
    return BT_HTTP_FINAL;
}

const struct bt_http_policy bt_aws_policy = {
    .ready = aws_ready,
    .sign = aws_sign,
    .describe = aws_describe,
    .judge = aws_judge,
};

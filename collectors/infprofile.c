#include "collectors/infprofile.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collectors/keycache.h"
#include "core/util.h"
#include "io/file.h"

#define ARN_MARK ":application-inference-profile/"

bool bt_infprofile_is_arn(const char *id)
{
    /* arn:PARTITION:bedrock:REGION:ACCOUNT:application-inference-profile/ID */
    if (strncmp(id, "arn:", 4) != 0)
        return false;
    const char *p = strchr(id + 4, ':');
    if (!p || strncmp(p, ":bedrock:", 9) != 0)
        return false;
    const char *m = strstr(p, ARN_MARK);
    return m && m[strlen(ARN_MARK)] != '\0';
}

void bt_infprofile_arn_region(const char *arn, char *out, size_t n)
{
    out[0] = '\0';
    const char *p = strstr(arn, ":bedrock:");
    if (!p)
        return;
    p += 9;
    const char *e = strchr(p, ':');
    if (!e || (size_t)(e - p) >= n)
        return;
    memcpy(out, p, (size_t)(e - p));
    out[e - p] = '\0';
}

void bt_infprofile_path(const char *arn, char *out, size_t n)
{
    size_t o = (size_t)snprintf(out, n, "/inference-profiles/");
    if (o < n)
        bt_infprofile_encode(arn, out + o, n - o);
}

void bt_infprofile_encode(const char *text, char *out, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *s = (const unsigned char *)text; *s && o + 4 < n; s++) {
        bool plain = (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
                     (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.' || *s == '~';
        if (plain) {
            out[o++] = (char)*s;
        } else {
            out[o++] = '%';
            out[o++] = hex[*s >> 4];
            out[o++] = hex[*s & 15];
        }
    }
    out[o < n ? o : n - 1] = '\0';
}

/* "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-..." -> Region and model ID. */
static bool model_arn(const char *arn, char *region, size_t rn, char *model, size_t mn)
{
    const char *slash = strstr(arn, ":foundation-model/");
    bt_infprofile_arn_region(arn, region, rn);
    if (!slash || !region[0])
        return false;
    const char *id = slash + strlen(":foundation-model/");
    if (!*id || strlen(id) >= mn)
        return false;
    bt_strlcpy(model, id, mn);
    return true;
}

bool bt_infprofile_parse(const char *body, size_t len, struct bt_infprofile *out, char *err,
                         size_t errlen)
{
    memset(out, 0, sizeof *out);
    cJSON *root = body && len ? cJSON_ParseWithLength(body, len) : NULL;
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "malformed GetInferenceProfile response (%zu bytes)", len);
        cJSON_Delete(root);
        return false;
    }
    const cJSON *models = cJSON_GetObjectItemCaseSensitive(root, "models");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(root, "status");
    const cJSON *ty = cJSON_GetObjectItemCaseSensitive(root, "type");
    if (cJSON_IsString(st))
        bt_strlcpy(out->status, st->valuestring, sizeof out->status);
    if (cJSON_IsString(ty))
        bt_strlcpy(out->type, ty->valuestring, sizeof out->type);
    char regions[8][32];
    bool ok = cJSON_IsArray(models) && cJSON_GetArraySize(models) > 0;
    if (!ok)
        snprintf(err, errlen, "GetInferenceProfile lists no models");
    const cJSON *m;
    const cJSON *list = ok ? models : NULL;
    cJSON_ArrayForEach(m, list) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(m, "modelArn");
        char region[32], model[192];
        if (!cJSON_IsString(a) ||
            !model_arn(a->valuestring, region, sizeof region, model, sizeof model)) {
            snprintf(err, errlen, "GetInferenceProfile: a model is not a foundation-model ARN");
            ok = false;
            break;
        }
        if (!out->base_model[0]) {
            bt_strlcpy(out->base_model, model, sizeof out->base_model);
        } else if (strcmp(out->base_model, model) != 0) {
            snprintf(err, errlen, "the profile routes to several models (%.60s, %.60s): set base_model",
                     out->base_model, model);
            ok = false;
            break;
        }
        bool seen = false;
        for (int i = 0; i < out->nregions && i < 8; i++)
            seen = seen || !strcmp(regions[i], region);
        if (!seen && out->nregions < 8)
            bt_strlcpy(regions[out->nregions++], region, sizeof regions[0]);
    }
    out->inference = out->nregions > 1 ? BT_INF_CROSS_REGION : BT_INF_ON_DEMAND;
    cJSON_Delete(root);
    if (!ok)
        out->base_model[0] = '\0';
    return ok;
}

/* ---- the cache between runs (collectors/keycache.h) ---------------------- */

#define CACHE_NAME "inference-profiles.json"
#define CACHE_MAX 1000       /* entries kept */

/* One entry, validated: the file is ours but may be damaged or edited. */
static bool cache_entry(const cJSON *e, void *arg, int64_t *at)
{
    struct bt_infprofile *out = arg;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "base_model");
    const cJSON *inf = cJSON_GetObjectItemCaseSensitive(e, "inference");
    const cJSON *nr = cJSON_GetObjectItemCaseSensitive(e, "regions");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "at");
    if (!cJSON_IsString(m) || !m->valuestring[0] || strlen(m->valuestring) >= sizeof out->base_model ||
        !cJSON_IsString(inf) || !cJSON_IsNumber(nr) || !cJSON_IsNumber(t) ||
        !bt_time_from_double(t->valuedouble, at) || nr->valuedouble < 1 || nr->valuedouble > 64)
        return false; /* "at": 1e300 was an undefined conversion, and never expired */
    memset(out, 0, sizeof *out);
    if (!strcmp(inf->valuestring, "cross-region"))
        out->inference = BT_INF_CROSS_REGION;
    else if (strcmp(inf->valuestring, "on-demand") != 0)
        return false;
    bt_strlcpy(out->base_model, m->valuestring, sizeof out->base_model);
    out->nregions = (int)nr->valuedouble;
    return true;
}

bool bt_infprofile_cache_get(const char *arn, int64_t now, struct bt_infprofile *out, int64_t *at)
{
    return bt_keycache_get(CACHE_NAME, arn, now, BT_INFPROFILE_REFRESH, cache_entry, out, at);
}

void bt_infprofile_cache_put(const char *arn, const struct bt_infprofile *ip, int64_t at)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "base_model", ip->base_model);
    cJSON_AddStringToObject(o, "inference", bt_inference_name(ip->inference));
    cJSON_AddNumberToObject(o, "regions", ip->nregions);
    cJSON_AddNumberToObject(o, "at", (double)at);
    struct bt_infprofile x; /* the entries kept are read into it, and forgotten */
    bt_keycache_put(CACHE_NAME, arn, o, at, BT_INFPROFILE_REFRESH, CACHE_MAX, cache_entry, &x);
}

bool bt_infprofile_parse_list(const char *body, size_t len,
                              void (*fn)(void *arg, const char *profile_id), void *arg,
                              char **next_token, char *err, size_t errlen)
{
    *next_token = NULL;
    cJSON *root = body && len ? cJSON_ParseWithLength(body, len) : NULL;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "inferenceProfileSummaries");
    const cJSON *nt = cJSON_GetObjectItemCaseSensitive(root, "nextToken");
    if (!cJSON_IsObject(root) || (list && !cJSON_IsArray(list)) ||
        (nt && !cJSON_IsNull(nt) && !cJSON_IsString(nt)) ||
        (cJSON_IsString(nt) && strlen(nt->valuestring) > 2048)) {
        snprintf(err, errlen, "unexpected ListInferenceProfiles answer (%zu bytes)", len);
        cJSON_Delete(root);
        return false;
    }
    const cJSON *p;
    cJSON_ArrayForEach(p, list) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(p, "inferenceProfileId");
        if (cJSON_IsString(id) && strlen(id->valuestring) < 192)
            fn(arg, id->valuestring);
    }
    if (cJSON_IsString(nt) && nt->valuestring[0])
        *next_token = bt_xstrdup(nt->valuestring);
    cJSON_Delete(root);
    return true;
}

/* Application inference profiles' tags (collectors/tags.h): one ListTagsForResource
 * per profile route at start and every BT_TAGS_REFRESH, cached between runs. */
#include "collectors/tags.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "collectors/awsgroup.h"
#include "collectors/infprofile.h"
#include "collectors/keycache.h"
#include "collectors/skeleton.h"
#include "core/sanitize.h"
#include "core/util.h"
#include "io/file.h"
#include "net/http.h"

#define CACHE_MAX 512

bool bt_tags_parse(const char *body, size_t len, const char *key, bool *found, char *value,
                   size_t n, char *err, size_t errlen)
{
    *found = false;
    cJSON *root = body && len ? cJSON_ParseWithLength(body, len) : NULL;
    const cJSON *tags = cJSON_GetObjectItemCaseSensitive(root, "tags");
    if (!cJSON_IsObject(root) || (tags && !cJSON_IsArray(tags))) {
        snprintf(err, errlen, "unexpected ListTagsForResource answer (%zu bytes)", len);
        cJSON_Delete(root);
        return false;
    }
    const cJSON *t;
    bool ok = true;
    cJSON_ArrayForEach(t, tags) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(t, "key");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, "value");
        if (!cJSON_IsString(k) || strcmp(k->valuestring, key) != 0)
            continue;
        /* a tag value names a holder on screens, in JSON and in Prometheus labels:
         * printable text that fits, nothing else (AWS allows 256 characters) */
        if (!cJSON_IsString(v) || strlen(v->valuestring) >= n || !bt_san_term_clean(v->valuestring)) {
            snprintf(err, errlen, "ListTagsForResource: the value of tag %.64s is not short printable text",
                     key);
            ok = false;
            break;
        }
        bt_strlcpy(value, v->valuestring, n);
        *found = true;
        break;
    }
    cJSON_Delete(root);
    return ok;
}

/* ---- the cache between runs (collectors/keycache.h) ---- */

#define CACHE_NAME "tags.json"

/* An entry: {"key": KEY, "value": V | null, "at": T}, validated (the file may be
 * damaged or edited): under the tag key asked (any key: NULL), its value fitting n. */
struct entry_want {
    const char *key;
    bool found;
    char *value; /* NULL: not wanted */
    size_t n;
};

static bool cache_entry(const cJSON *e, void *arg, int64_t *at)
{
    struct entry_want *w = arg;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "key");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "value");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "at");
    if (!cJSON_IsString(k) || (w->key && strcmp(k->valuestring, w->key) != 0) ||
        !cJSON_IsNumber(t) || !bt_time_from_double(t->valuedouble, at) ||
        !(cJSON_IsNull(v) || (cJSON_IsString(v) && strlen(v->valuestring) < w->n &&
                              bt_san_term_clean(v->valuestring))))
        return false;
    w->found = cJSON_IsString(v);
    if (w->value)
        bt_strlcpy(w->value, w->found ? v->valuestring : "", w->n);
    return true;
}

static bool cache_get(const char *arn, const char *key, int64_t now, bool *found, char *value,
                      size_t n)
{
    struct entry_want w = {key, false, value, n};
    int64_t at;
    bool ok = bt_keycache_get(CACHE_NAME, arn, now, BT_TAGS_REFRESH, cache_entry, &w, &at);
    *found = w.found;
    return ok;
}

static void cache_put(const char *arn, const char *key, bool found, const char *value, int64_t at)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "key", key);
    if (found)
        cJSON_AddStringToObject(o, "value", value);
    else
        cJSON_AddNullToObject(o, "value");
    cJSON_AddNumberToObject(o, "at", (double)at);
    struct entry_want any = {NULL, false, NULL, 256}; /* which entries are kept */
    bt_keycache_put(CACHE_NAME, arn, o, at, BT_TAGS_REFRESH, CACHE_MAX, cache_entry, &any);
}

/* ---- the collector ---- */

struct tg;
struct tg_route {
    struct tg *t;
    int route, group;
    bool out;
    char said[224 + 8];      /* the last finding told the store */
};

struct tg {
    struct bt_collector_base b; /* first: the skeleton's (next, started, the routes grouped) */
    struct bt_ctx *ctx;
    struct tg_route *r;      /* per route */
    int out;
};

static void say(struct tg *t, int r, bool found, const char *text)
{
    struct tg_route *tr = &t->r[r];
    char key[sizeof tr->said];
    snprintf(key, sizeof key, "%c%s", found ? '+' : '-', text);
    if (!strcmp(tr->said, key))
        return; /* said already: the finding stands */
    bt_strlcpy(tr->said, key, sizeof tr->said);
    struct bt_event ev = {.t = (int64_t)time(NULL), .type = BT_EV_INFO, .route = r,
                          .source = BT_SRC_QUOTAS};
    bt_strlcpy(ev.code, found ? BT_EVCODE_TAG : BT_EVCODE_TAG_UNKNOWN, sizeof ev.code);
    bt_strlcpy(ev.text, text, sizeof ev.text);
    bt_store_apply(t->ctx->store, &ev);
}

static void say_absent(struct tg *t, int r)
{
    char why[224];
    snprintf(why, sizeof why, "the profile has no tag %.128s", t->ctx->cfg->attribute_tag);
    say(t, r, false, why);
}

static void tg_done(void *arg, const struct bt_http_resp *resp)
{
    struct tg_route *tr = arg;
    struct tg *t = tr->t;
    const struct bt_config *cfg = t->ctx->cfg;
    const char *arn = cfg->routes[tr->route].model;
    tr->out = false;
    t->out--;
    char why[200], value[128], err[160];
    bool found;
    if (resp->status != 200) {
        /* refused or failed: the shares say "unattributed" with this, never an error */
        bt_awsgroup_describe(resp, why, sizeof why);
        char text[224];
        /* the remedy before AWS's message, which may be long */
        bt_fmt_cut(text, sizeof text, "ListTagsForResource %s: %s",
                   resp->kind == BT_ERR_ACCESS ? "refused (allow bedrock:ListTagsForResource)" : "failed",
                   why);
        say(t, tr->route, false, text);
        return;
    }
    if (!bt_tags_parse(resp->body, resp->body_len, cfg->attribute_tag, &found, value, sizeof value,
                       err, sizeof err)) {
        say(t, tr->route, false, err);
        return;
    }
    cache_put(arn, cfg->attribute_tag, found, value, (int64_t)time(NULL));
    if (found)
        say(t, tr->route, true, value);
    else
        say_absent(t, tr->route);
}

static void tg_submit(struct tg *t, struct tg_route *tr)
{
    const struct bt_awsgroup *g = &t->b.ag.g[tr->group];
    const char *arn = t->ctx->cfg->routes[tr->route].model;
    char url[sizeof g->url + 32], label[160];
    snprintf(url, sizeof url, "%s/listTagsForResource", g->url);
    snprintf(label, sizeof label, "bedrock %s ListTagsForResource", g->region);
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "resourceARN", arn);
    char *body = cJSON_PrintUnformatted(b);
    cJSON_Delete(b);
    struct bt_http_req req = {
        .policy = &bt_aws_policy,
        .method = "POST", .url = url, .service = "bedrock", .region = g->region,
        .creds = &t->b.ag.prov[g->provider].p, .label = label, .timeout = bt_awsgroup_timeout(),
        .content_type = "application/json", .body = body, .body_len = body ? strlen(body) : 0,
    };
    tr->out = true;
    t->out++;
    if (bt_http_submit(t->ctx->http, &req, tg_done, tr) < 0) {
        tr->out = false;
        t->out--;
        say(t, tr->route, false, "ListTagsForResource: the request could not be sent");
    }
    cJSON_free(body);
}

/* Work is out while a route's request is; the routes are grouped by Region for bedrock's
 * endpoint, with no struct per group. */
static bool tg_busy(void *self)
{
    return ((struct tg *)self)->out > 0;
}

static void tg_free(void *self)
{
    free(((struct tg *)self)->r);
}

static const struct bt_collector_kind tg_kind = {
    .service = "bedrock", .label = "tags", .free_self = tg_free, .busy = tg_busy,
};

static void *tg_create(struct bt_ctx *ctx)
{
    if (!ctx->http || ctx->cfg->nroutes == 0 || !ctx->cfg->attribute_tag[0] || ctx->source_url ||
        ctx->window_from)
        return NULL;
    bool any = false;
    for (int r = 0; r < ctx->cfg->nroutes && !any; r++)
        any = bt_infprofile_is_arn(ctx->cfg->routes[r].model);
    if (!any)
        return NULL; /* only application inference profiles carry tags bedtop reads */
    struct tg *t = bt_xcalloc(1, sizeof *t);
    t->ctx = ctx;
    bt_collector_base_init(&t->b, &tg_kind, ctx);
    t->r = bt_xcalloc((size_t)ctx->cfg->nroutes, sizeof *t->r);
    for (int r = 0; r < ctx->cfg->nroutes; r++) {
        t->r[r].t = t;
        t->r[r].route = r;
        t->r[r].group = -1;
    }
    for (int i = 0; i < t->b.ag.n; i++)
        for (int k = 0; k < t->b.ag.g[i].nroutes; k++)
            t->r[t->b.ag.g[i].routes[k]].group = i;
    return t;
}

static void tg_tick(void *self, int64_t now)
{
    struct tg *t = self;
    if (!bt_collector_round_due(&t->b, now, BT_TAGS_REFRESH))
        return;
    const struct bt_config *cfg = t->ctx->cfg;
    for (int r = 0; r < cfg->nroutes; r++) {
        struct tg_route *tr = &t->r[r];
        const char *arn = cfg->routes[r].model;
        if (!bt_infprofile_is_arn(arn) || tr->out)
            continue;
        if (tr->group < 0 || !t->b.ag.g[tr->group].url[0]) {
            say(t, r, false, "ListTagsForResource: no bedrock endpoint for the route's Region");
            continue;
        }
        bool found;
        char value[128];
        if (cache_get(arn, cfg->attribute_tag, now, &found, value, sizeof value)) {
            if (found)
                say(t, r, true, value);
            else
                say_absent(t, r);
            continue;
        }
        tg_submit(t, tr);
    }
}

static const struct bt_iam_need tg_iam[] = {
    {"bedrock:ListTagsForResource", "attribute_by = tag:KEY", false},
    {NULL, NULL, false},
};
const struct bt_collector_ops bt_tags_collector =
    BT_COLLECTOR_SKELETON("tags", tg_create, tg_tick, tg_iam);

/* The model catalogue (collectors/catalogue.h): per (profile, Region) group,
 * ListInferenceProfiles (pages) then ListFoundationModels, at start and daily; one
 * BT_SET_PROFILE and one BT_SET_LIFECYCLE setting per route whose finding changed. */
#include "collectors/catalogue.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collectors/awsgroup.h"
#include "collectors/infprofile.h"
#include "collectors/paginate.h"
#include "collectors/skeleton.h"
#include "core/format.h"
#include "core/sanitize.h"
#include "net/http.h"

#define MAX_CAT_PAGES 50      /* 100 profiles a page */
#define MAX_PROFILES 2000
#define MAX_FMODELS 2000

/* ---- parsing ---- */

static bool lifecycle_time(const cJSON *o, const char *key, int64_t *out)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = 0;
    if (!t || cJSON_IsNull(t))
        return true;
    if (cJSON_IsString(t))
        return bt_parse_iso(t->valuestring, out);
    return cJSON_IsNumber(t) && bt_time_from_double(t->valuedouble, out) && *out > 0;
}

bool bt_fmodels_parse(const char *body, size_t len, void (*fn)(void *arg, const struct bt_fmodel *m),
                      void *arg, char *err, size_t errlen)
{
    cJSON *root = body && len ? cJSON_ParseWithLength(body, len) : NULL;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "modelSummaries");
    if (!cJSON_IsObject(root) || (list && !cJSON_IsArray(list))) {
        snprintf(err, errlen, "unexpected ListFoundationModels answer (%zu bytes)", len);
        cJSON_Delete(root);
        return false;
    }
    const cJSON *m;
    cJSON_ArrayForEach(m, list) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "modelId");
        const cJSON *lc = cJSON_GetObjectItemCaseSensitive(m, "modelLifecycle");
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(lc, "status");
        struct bt_fmodel fm;
        memset(&fm, 0, sizeof fm);
        /* a model ID is short and printable; a status is one of the two AWS names */
        if (!cJSON_IsString(id) || !id->valuestring[0] || strlen(id->valuestring) >= sizeof fm.id ||
            !bt_san_term_clean(id->valuestring) || strpbrk(id->valuestring, " \"\\") ||
            !cJSON_IsString(st) || (strcmp(st->valuestring, "ACTIVE") && strcmp(st->valuestring, "LEGACY")))
            continue;
        bt_strlcpy(fm.id, id->valuestring, sizeof fm.id);
        bt_strlcpy(fm.status, st->valuestring, sizeof fm.status);
        if (!lifecycle_time(lc, "legacyTime", &fm.legacy_at) ||
            !lifecycle_time(lc, "publicExtendedAccessTime", &fm.extended_at) ||
            !lifecycle_time(lc, "endOfLifeTime", &fm.eol_at))
            fm.legacy_at = fm.extended_at = fm.eol_at = 0; /* a bad date: none shown, status kept */
        fn(arg, &fm);
    }
    cJSON_Delete(root);
    return true;
}

static void add_date(char *out, size_t n, const char *what, int64_t t)
{
    if (!t)
        return;
    char d[32];
    bt_fmt_iso(t, d, sizeof d);
    d[10] = '\0'; /* the day: AWS publishes dates, not instants */
    size_t l = strlen(out);
    snprintf(out + l, n - l, "%s%s %s", l ? ", " : "", what, d);
}

void bt_fmodel_dates(const struct bt_fmodel *m, char *out, size_t n)
{
    out[0] = '\0';
    add_date(out, n, "legacy since", m->legacy_at);
    add_date(out, n, "public extended access (higher prices) from", m->extended_at);
    add_date(out, n, "end of life", m->eol_at);
}

/* ---- the collector ---- */

struct cat_profile {
    char id[192];
    int nregions;
};

struct cat;
struct cat_group {
    struct cat *c;
    struct bt_awsgroup *ag;
    char label[96];          /* "bedrock us-east-1" */
    bool running;
    int step;                /* 0: ListInferenceProfiles, 1: ListFoundationModels */
    struct bt_pages pages;   /* the step's pages (ListFoundationModels has one) */
    struct cat_profile *p;
    int np, capp;
    struct bt_fmodel *m;
    int nm, capm;
    char why[2][224];        /* per step: why it could not be read ("" it was) */
};

struct cat {
    struct bt_collector_base b; /* first: the skeleton's (next, started, the groups) */
    struct bt_ctx *ctx;
    struct cat_group *g;
    int ng;
    char (*said)[2][224 + 16]; /* per route and setting: the last finding said */
};

static void on_profile(void *arg, const char *profile_id)
{
    struct cat_group *g = arg;
    if (g->np >= MAX_PROFILES)
        return;
    if (g->np == g->capp) {
        g->capp = g->capp ? 2 * g->capp : 64;
        g->p = bt_xrealloc(g->p, (size_t)g->capp * sizeof *g->p);
    }
    struct cat_profile *p = &g->p[g->np++];
    memset(p, 0, sizeof *p);
    bt_strlcpy(p->id, profile_id, sizeof p->id);
}

static void on_fmodel(void *arg, const struct bt_fmodel *m)
{
    struct cat_group *g = arg;
    if (g->nm >= MAX_FMODELS)
        return;
    if (g->nm == g->capm) {
        g->capm = g->capm ? 2 * g->capm : 64;
        g->m = bt_xrealloc(g->m, (size_t)g->capm * sizeof *g->m);
    }
    g->m[g->nm++] = *m;
}

/* A setting for route r, applied by the model (and recorded), when it changed. */
static void say(struct cat *c, int r, enum bt_setting k, const char *str, const char *text)
{
    char both[224 + 16];
    snprintf(both, sizeof both, "%.15s|%.223s", str, text);
    int i = k == BT_SET_PROFILE ? 0 : 1;
    if (!strcmp(c->said[r][i], both))
        return;
    bt_strlcpy(c->said[r][i], both, sizeof c->said[r][i]);
    if (!c->ctx->store)
        return;
    struct bt_event ev = {.t = (int64_t)time(NULL), .type = BT_EV_SETTING, .route = r,
                          .source = BT_SRC_QUOTAS, .setting = k};
    bt_strlcpy(ev.str, str, sizeof ev.str);
    bt_strlcpy(ev.text, text, sizeof ev.text);
    bt_store_apply(c->ctx->store, &ev);
}

/* The model a route's lifecycle is looked up by: its base model, else its ID without
 * the profile prefix; "" for a provisioned or application-profile ARN not resolved. */
static const char *lookup_id(const struct bt_route *rt)
{
    if (rt->base_model[0])
        return rt->base_model;
    if (!strncmp(rt->model, "arn:", 4))
        return "";
    static char id[192];
    bt_strlcpy(id, bt_profile_strip(rt->model), sizeof id);
    char *plus = strchr(id, '+'); /* "+latency-optimized" */
    if (plus)
        *plus = '\0';
    return id;
}

static void finish(struct cat_group *g)
{
    struct cat *c = g->c;
    const struct bt_config *cfg = c->ctx->cfg;
    g->running = false;
    for (int k = 0; k < g->ag->nroutes; k++) {
        int r = g->ag->routes[k];
        const struct bt_route *rt = &cfg->routes[r];
        char text[224];
        /* the profile prefix: only a route whose ID carries one */
        if (rt->endpoint == BT_EP_RUNTIME && bt_profile_prefix_len(rt->model)) {
            if (g->why[0][0]) {
                snprintf(text, sizeof text, "%.160s: the prefix is read by pattern, unconfirmed",
                         g->why[0]);
                say(c, r, BT_SET_PROFILE, "unknown", text);
            } else {
                bool listed = false;
                for (int i = 0; i < g->np && !listed; i++)
                    listed = !strcmp(g->p[i].id, rt->model);
                snprintf(text, sizeof text,
                         listed ? "ListInferenceProfiles in %s lists it"
                                : "ListInferenceProfiles in %s does not list it: the prefix is read "
                                  "by pattern, unconfirmed (a profile of another Region, or not offered here)",
                         rt->region);
                say(c, r, BT_SET_PROFILE, listed ? "confirmed" : "unlisted", text);
            }
        }
        const char *id = lookup_id(rt);
        if (!id[0])
            continue;
        if (g->why[1][0]) {
            snprintf(text, sizeof text, "%.180s: lifecycle unknown", g->why[1]);
            say(c, r, BT_SET_LIFECYCLE, "unknown", text);
            continue;
        }
        const struct bt_fmodel *m = NULL;
        for (int i = 0; i < g->nm && !m; i++)
            if (!strcmp(g->m[i].id, id))
                m = &g->m[i];
        if (!m) {
            snprintf(text, sizeof text, "ListFoundationModels in %s does not list %.150s", rt->region, id);
            say(c, r, BT_SET_LIFECYCLE, "", text);
            continue;
        }
        bt_fmodel_dates(m, text, sizeof text);
        say(c, r, BT_SET_LIFECYCLE, m->status, text);
    }
}

static void cat_step(struct cat_group *g);

static const char *cat_op(const struct cat_group *g)
{
    return g->step == 0 ? "ListInferenceProfiles" : "ListFoundationModels";
}

static void next_step(struct cat_group *g)
{
    if (++g->step > 1) {
        finish(g);
        return;
    }
    cat_step(g);
}

static bool cat_page(void *arg, const struct bt_http_resp *resp, char **next, char *err,
                     size_t errlen)
{
    struct cat_group *g = arg;
    return g->step == 0 ? bt_infprofile_parse_list(resp->body, resp->body_len, on_profile, g, next,
                                                   err, errlen)
                        : bt_fmodels_parse(resp->body, resp->body_len, on_fmodel, g, err, errlen);
}

/* A step that could not be read says why (the settings it feeds become unknown); one
 * that pages past its bound keeps what its pages listed. */
static void cat_end(void *arg, enum bt_pages_end how, const struct bt_http_resp *resp,
                    const char *err)
{
    struct cat_group *g = arg;
    const char *op = cat_op(g);
    char why[200];
    if (how == BT_PAGES_HTTP) {
        bt_awsgroup_describe(resp, why, sizeof why);
        snprintf(g->why[g->step], sizeof g->why[0], "%s refused or failed (%.120s)%s", op, why,
                 resp->kind == BT_ERR_ACCESS ? g->step == 0 ? "; allow bedrock:ListInferenceProfiles"
                                                            : "; allow bedrock:ListFoundationModels"
                                             : "");
        if (g->c->ctx->verbose)
            fprintf(stderr, "bedtop: %s %s: %s\n", g->label, op, why);
    } else if (how == BT_PAGES_PARSE) {
        snprintf(g->why[g->step], sizeof g->why[0], "%s: %.160s", op, err);
    }
    next_step(g);
}

static void cat_submit(void *arg, const char *token, bt_http_cb done, void *done_arg)
{
    struct cat_group *g = arg;
    struct cat *c = g->c;
    char url[8192], label[160];
    if (g->step == 0) {
        char tok[6400] = ""; /* a 2,048-byte token, every byte encoded */
        if (token)
            bt_infprofile_encode(token, tok, sizeof tok);
        snprintf(url, sizeof url, "%s/inference-profiles?maxResults=100%s%s&type=SYSTEM_DEFINED",
                 g->ag->url, tok[0] ? "&nextToken=" : "", tok);
    } else {
        snprintf(url, sizeof url, "%s/foundation-models", g->ag->url);
    }
    snprintf(label, sizeof label, "%s %s", g->label, cat_op(g));
    struct bt_http_req req = {
        .policy = &bt_aws_policy,
        .method = "GET", .url = url, .service = "bedrock", .region = g->ag->region,
        .creds = &c->b.ag.prov[g->ag->provider].p, .label = label, .timeout = bt_awsgroup_timeout(),
    };
    if (bt_http_submit(c->ctx->http, &req, done, done_arg) < 0) {
        snprintf(g->why[g->step], sizeof g->why[0], "%.160s: the request could not be sent", label);
        bt_pages_free(&g->pages);
        next_step(g);
    }
}

static const struct bt_pages_ops cat_pages = {cat_submit, cat_page, cat_end};

/* The step's call, from its first page */
static void cat_step(struct cat_group *g)
{
    bt_pages_start(&g->pages, &cat_pages, g, MAX_CAT_PAGES);
}

static void cat_free_group(void *group)
{
    struct cat_group *g = group;
    bt_pages_free(&g->pages);
    free(g->p);
    free(g->m);
}

static void cat_free(void *self)
{
    struct cat *c = self;
    free(c->said);
}

static const struct bt_collector_kind cat_kind = {
    .service = "bedrock", .label = "bedrock",
    BT_COLLECTOR_GROUPS(struct cat_group, ag, label, running),
    .free_group = cat_free_group, .free_self = cat_free,
};

static void *cat_create(struct bt_ctx *ctx)
{
    /* AWS only: not --source, nor a backfill window (its minutes are the record) */
    if (!ctx->http || ctx->cfg->nroutes == 0 || ctx->source_url || ctx->window_from)
        return NULL;
    struct cat *c = bt_xcalloc(1, sizeof *c);
    c->ctx = ctx;
    c->g = bt_collector_base_init(&c->b, &cat_kind, ctx);
    c->ng = c->b.ngroups;
    c->said = bt_xcalloc((size_t)ctx->cfg->nroutes, sizeof *c->said);
    for (int i = 0; i < c->ng; i++)
        c->g[i].c = c;
    return c;
}

static void cat_tick(void *self, int64_t now)
{
    struct cat *c = self;
    if (!bt_collector_round_due(&c->b, now, BT_CATALOGUE_EVERY))
        return;
    for (int i = 0; i < c->ng; i++) {
        struct cat_group *g = &c->g[i];
        if (g->running || !g->ag->url[0] || g->ag->nroutes == 0)
            continue; /* still out, or no endpoint (the other collectors say why) */
        g->running = true;
        g->step = 0;
        g->np = g->nm = 0;
        g->why[0][0] = g->why[1][0] = '\0';
        cat_step(g);
    }
}

static const struct bt_iam_need cat_iam[] = {
    {"bedrock:ListInferenceProfiles", "the model catalogue (else prefixes by pattern)", false},
    {"bedrock:ListFoundationModels", "the model catalogue (else lifecycle unknown)", false},
    {NULL, NULL, false},
};
const struct bt_collector_ops bt_catalogue_collector =
    BT_COLLECTOR_SKELETON("catalogue", cat_create, cat_tick, cat_iam);

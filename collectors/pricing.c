/* The Price List API collector (collectors/pricing.h). */
#include "collectors/pricing.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "aws/awsauth.h"
#include "collectors/awsgroup.h"
#include "collectors/paginate.h"
#include "collectors/skeleton.h"
#include "core/format.h"
#include "io/file.h"
#include "net/http.h"

#define PL_TARGET "AWSPriceListService.GetProducts"
#define PL_CTYPE "application/x-amz-json-1.1"
#define PL_REGION "us-east-1"    /* the Price List API's endpoint Region */
#define PL_MAX_PAGES 100         /* 100 products a page: 10,000 Bedrock products */
#define PL_MAX_ROWS 20000
#define PL_MAX_TOKEN 4096
#define PL_MAX_PRICE 1000.0      /* USD per 1,000 tokens: past this, not a price */
#define PL_RETRY 3600            /* a failed refresh is tried again after an hour */

/* ---- the wire ---- */

void bt_pricing_request_json(struct bt_buf *out, const char *region, const char *token)
{
    bt_buf_puts(out, "{\"ServiceCode\":\"" BT_PRICING_SERVICE_CODE "\",\"Filters\":[{\"Type\":"
                     "\"TERM_MATCH\",\"Field\":\"regionCode\",\"Value\":");
    bt_buf_json_str(out, region);
    bt_buf_puts(out, "}],\"FormatVersion\":\"aws_v1\",\"MaxResults\":100");
    if (token && *token) {
        bt_buf_puts(out, ",\"NextToken\":");
        bt_buf_json_str(out, token);
    }
    bt_buf_puts(out, "}");
}

static const char *attr(const cJSON *attrs, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(attrs, name);
    return cJSON_IsString(v) && strlen(v->valuestring) < 128 ? v->valuestring : NULL;
}

static bool has(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; *s; s++)
        if (!strncasecmp(s, needle, n))
            return true;
    return false;
}

/* "Anthropic" + "Claude Sonnet 4.5" -> "anthropic.claude-sonnet-4-5*": the provider and
 * the model's name as Bedrock model IDs spell them (lower case, blanks and dots as '-').
 * false when either holds nothing a model ID could (the product is skipped). */
static bool model_pattern(const char *provider, const char *model, char *out, size_t n)
{
    size_t k = 0;
    bool any = false;
    for (const char *p = provider; *p && k + 2 < n; p++)
        if (isalnum((unsigned char)*p)) {
            out[k++] = (char)tolower((unsigned char)*p);
            any = true;
        }
    if (!any || k + 2 >= n)
        return false;
    out[k++] = '.';
    size_t start = k;
    for (const char *p = model; *p && k + 2 < n; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c))
            out[k++] = (char)tolower(c);
        else if (k > start && out[k - 1] != '-')
            out[k++] = '-';
    }
    while (k > start && out[k - 1] == '-')
        k--;
    if (k == start || k + 2 > n)
        return false;
    out[k++] = '*';
    out[k] = '\0';
    return true;
}

static bool valid_region(const char *r)
{
    size_t n = strlen(r);
    if (n < 4 || n > 31)
        return false;
    for (; *r; r++)
        if (!islower((unsigned char)*r) && !isdigit((unsigned char)*r) && *r != '-')
            return false;
    return true;
}

/* The first on-demand price dimension: USD per million tokens, or NAN. */
static double per_million(const cJSON *root)
{
    const cJSON *od = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "terms"), "OnDemand");
    const cJSON *term = cJSON_IsObject(od) ? od->child : NULL;
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(term, "priceDimensions");
    const cJSON *dim = cJSON_IsObject(dims) ? dims->child : NULL;
    const cJSON *unit = cJSON_GetObjectItemCaseSensitive(dim, "unit");
    const cJSON *usd = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(dim, "pricePerUnit"), "USD");
    if (!cJSON_IsString(unit) || !cJSON_IsString(usd))
        return NAN;
    char *end;
    errno = 0;
    double v = strtod(usd->valuestring, &end);
    /* 0 is no price bedtop can trust (a placeholder prices a route at nothing): unknown */
    if (errno || end == usd->valuestring || *end || !isfinite(v) || v <= 0)
        return NAN;
    const char *u = unit->valuestring;
    double scale = !strcasecmp(u, "1K tokens") ? 1000.0
                   : !strcasecmp(u, "1M tokens") ? 1.0
                   : !strcasecmp(u, "tokens") || !strcasecmp(u, "token") ? 1e6
                                                                         : NAN;
    /* scale: units in a million tokens; the bound is per 1,000 */
    if (isnan(scale) || v * scale / 1000.0 > PL_MAX_PRICE)
        return NAN;
    return v * scale;
}

static struct bt_pl_row *row_for(struct bt_pl_rows *l, const struct bt_pl_row *key)
{
    for (int i = 0; i < l->n; i++) {
        struct bt_pl_row *r = &l->r[i];
        if (!strcmp(r->pattern, key->pattern) && !strcmp(r->region, key->region) &&
            r->global == key->global && !strcmp(r->tier, key->tier))
            return r;
    }
    if (l->n >= PL_MAX_ROWS)
        return NULL;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 32;
        l->r = bt_xrealloc(l->r, (size_t)l->cap * sizeof *l->r);
    }
    struct bt_pl_row *r = &l->r[l->n++];
    *r = *key;
    r->in = r->out = r->cache_read = r->cache_write = NAN;
    return r;
}

bool bt_pricing_parse_product(const char *doc, size_t len, struct bt_pl_rows *l)
{
    cJSON *root = doc && len ? cJSON_ParseWithLength(doc, len) : NULL;
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "product"), "attributes");
    const char *region = attr(attrs, "regionCode"), *usage = attr(attrs, "usagetype");
    const char *model = attr(attrs, "model"), *provider = attr(attrs, "provider");
    const char *service = attr(attrs, "servicecode");
    struct bt_pl_row key = {0};
    bool ok = cJSON_IsObject(root) && region && usage && model && provider && service &&
              !strcmp(service, BT_PRICING_SERVICE_CODE) && valid_region(region) &&
              model_pattern(provider, model, key.pattern, sizeof key.pattern);
    /* the token kind from the usage type's end: "...-cache-read-input-tokens" */
    double *slot = NULL;
    double v = ok ? per_million(root) : NAN;
    ok = ok && !isnan(v);
    if (ok) {
        bt_strlcpy(key.region, region, sizeof key.region);
        key.global = has(usage, "global");
        bt_strlcpy(key.tier, has(usage, "batch") ? "batch" : has(usage, "flex") ? "flex"
                             : has(usage, "priority") ? "priority" : "", sizeof key.tier);
        struct bt_pl_row *r = row_for(l, &key);
        slot = !r ? NULL
               : has(usage, "cache-read") ? &r->cache_read
               : has(usage, "cache-write") ? &r->cache_write
               : has(usage, "output-token") ? &r->out
               : has(usage, "input-token") ? &r->in
                                           : NULL;
    }
    if (slot)
        *slot = v;
    cJSON_Delete(root);
    return slot != NULL;
}

bool bt_pricing_parse_page(const char *body, size_t len, struct bt_pl_rows *l, int *skipped,
                           char **next_token, char *err, size_t errlen)
{
    *next_token = NULL;
    cJSON *root = body && len ? cJSON_ParseWithLength(body, len) : NULL;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "PriceList");
    const cJSON *nt = cJSON_GetObjectItemCaseSensitive(root, "NextToken");
    if (!cJSON_IsObject(root) || (list && !cJSON_IsArray(list)) ||
        (nt && !cJSON_IsNull(nt) && !cJSON_IsString(nt)) ||
        (cJSON_IsString(nt) && strlen(nt->valuestring) > PL_MAX_TOKEN)) {
        snprintf(err, errlen, "unexpected GetProducts answer (%zu bytes)", len);
        cJSON_Delete(root);
        return false;
    }
    const cJSON *p;
    cJSON_ArrayForEach(p, list) {
        /* each item is a product document as a JSON string (jsonvalue in the model) */
        if (!cJSON_IsString(p) ||
            !bt_pricing_parse_product(p->valuestring, strlen(p->valuestring), l))
            (*skipped)++;
    }
    if (cJSON_IsString(nt) && nt->valuestring[0])
        *next_token = bt_xstrdup(nt->valuestring);
    cJSON_Delete(root);
    return true;
}

static void put_price(struct bt_buf *out, const char *name, double v)
{
    if (!isnan(v))
        bt_buf_printf(out, " %s=%.6g", name, v);
}

int bt_pricing_rows_text(const struct bt_pl_rows *l, const char *date, struct bt_buf *out)
{
    bt_buf_printf(out, "# bedtop price cache: Amazon Bedrock list prices read from the AWS Price "
                       "List API (GetProducts) on %s.\n# Written by bedtop; rows win over "
                       "data/prices.conf, the config's [prices] win over them.\n", date);
    int n = 0;
    for (int i = 0; i < l->n; i++) {
        const struct bt_pl_row *r = &l->r[i];
        if (isnan(r->in) || isnan(r->out))
            continue; /* the table's syntax needs both */
        bt_buf_printf(out, "%s =", r->pattern);
        put_price(out, "in", r->in);
        put_price(out, "out", r->out);
        put_price(out, "cache_read", r->cache_read);
        put_price(out, "cache_write", r->cache_write);
        bt_buf_printf(out, " region=%s%s%s%s source=price-list-api date=%s\n", r->region,
                      r->global ? " inference=global" : "", r->tier[0] ? " tier=" : "", r->tier,
                      date);
        n++;
    }
    return n;
}

void bt_pl_rows_free(struct bt_pl_rows *l)
{
    free(l->r);
    memset(l, 0, sizeof *l);
}

/* ---- the collector ---------------------------------------------------------
 * Per (profile, Region) group: GetProducts of that Region's Bedrock products, page by
 * page (collectors/paginate.c); when every group is in, the rows are written to the
 * cache at once (temporary file, renamed; 0600). The table bedtop prices with is read
 * at start (io/conffile.c): a refresh is used from the next start or reload. */

struct pr;
struct pr_group {
    struct pr *p;
    struct bt_awsgroup *ag;
    char label[96];          /* "pricing us-east-1" */
    bool running, due;       /* its listing is out; it was started by this round */
    bool ok;                 /* its listing came whole */
    struct bt_pages pages;
};

struct pr {
    struct bt_collector_base b; /* first: the skeleton's (next, started, the groups) */
    struct bt_ctx *ctx;
    struct pr_group *g;
    int ng;
    struct bt_pl_rows rows;
    int skipped;
    char note[256];          /* the last refresh's note ("" none yet) */
};

static bool cache_path(char *out, size_t n, bool make_dir)
{
    return bt_cache_file("prices.conf", make_dir, out, n);
}

/* A note for the log of events (every route's, as the table prices them all): never an
 * error, the prices stay those of the table. */
static void pr_note(struct pr *p, const char *text)
{
    bt_strlcpy(p->note, text, sizeof p->note);
    if (p->ctx->verbose)
        fprintf(stderr, "bedtop: %s\n", text);
    if (!p->ctx->store)
        return;
    struct bt_event ev = {.t = (int64_t)time(NULL), .type = BT_EV_INFO, .route = -1,
                          .source = BT_SRC_QUOTAS};
    bt_strlcpy(ev.code, "PRICE_LIST", sizeof ev.code);
    bt_strlcpy(ev.text, text, sizeof ev.text);
    bt_store_apply(p->ctx->store, &ev);
}

static void pr_write(struct pr *p)
{
    char path[1024], date[16], err[256], text[256];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%Y-%m-%d", &tm);
    struct bt_buf body = {0};
    int n = bt_pricing_rows_text(&p->rows, date, &body);
    if (n == 0) {
        /* nothing bedtop reads (a Region without Bedrock prices): the table, as before */
        if (p->ctx->verbose)
            fprintf(stderr, "bedtop: Price List API: GetProducts listed no Bedrock token prices "
                            "bedtop reads; prices from the table\n");
    } else if (!cache_path(path, sizeof path, true)) {
        pr_note(p, "Price List API: no cache directory (XDG_CACHE_HOME, HOME); prices from the table");
    } else {
        char dir[1024];
        bt_strlcpy(dir, path, sizeof dir);
        *strrchr(dir, '/') = '\0';
        struct bt_outset s;
        bt_outset_init(&s, dir);
        bool ok = bt_outset_add(&s, "prices.conf", body.buf, body.len, err, sizeof err) &&
                  bt_outset_commit(&s, err, sizeof err);
        bt_outset_free(&s);
        if (ok)
            snprintf(text, sizeof text, "Price List API: %d price rows cached (%s), used from the "
                     "next start or reload", n, date);
        else
            bt_fmt_cut(text, sizeof text, "Price List API: the cache was not written: %s", err);
        pr_note(p, text);
    }
    bt_buf_free(&body);
}

static void pr_group_done(struct pr_group *g)
{
    struct pr *p = g->p;
    g->running = false;
    for (int i = 0; i < p->ng; i++)
        if (p->g[i].running)
            return;
    bool all = true;
    for (int i = 0; i < p->ng; i++)
        all = all && (p->g[i].ok || !p->g[i].ag->nroutes);
    p->b.failed = !all;
    if (all)
        pr_write(p);
    bt_pl_rows_free(&p->rows);
}

static bool pr_page(void *arg, const struct bt_http_resp *resp, char **next, char *err,
                    size_t errlen)
{
    struct pr_group *g = arg;
    return bt_pricing_parse_page(resp->body, resp->body_len, &g->p->rows, &g->p->skipped, next,
                                 err, errlen);
}

static void pr_end(void *arg, enum bt_pages_end how, const struct bt_http_resp *resp,
                   const char *err)
{
    struct pr_group *g = arg;
    char why[224], text[256];
    g->ok = how == BT_PAGES_DONE;
    if (how == BT_PAGES_HTTP) {
        bt_awsgroup_describe(resp, why, sizeof why);
        /* the remedy before AWS's words, which may be long */
        bt_fmt_cut(text, sizeof text, "%s GetProducts %s: prices from the table%s (%s)", g->label,
                   resp->kind == BT_ERR_ACCESS ? "refused" : "failed",
                   resp->kind == BT_ERR_ACCESS ? "; allow pricing:GetProducts, or set "
                                                 "price_list = off" : "", why);
        pr_note(g->p, text);
    } else if (how == BT_PAGES_PARSE) {
        bt_fmt_cut(text, sizeof text, "%s GetProducts: %s; prices from the table", g->label, err);
        pr_note(g->p, text);
    } else if (how == BT_PAGES_RUNAWAY) {
        bt_fmt_cut(text, sizeof text, "%s GetProducts pagination does not end; prices from the table",
                   g->label);
        pr_note(g->p, text);
    }
    pr_group_done(g);
}

static void pr_submit(void *arg, const char *token, bt_http_cb done, void *done_arg)
{
    struct pr_group *g = arg;
    struct pr *p = g->p;
    const struct bt_awsgroup_provider *prov = &p->b.ag.prov[g->ag->provider];
    char url[512], label[128];
    struct bt_buf body = {0};
    if (bt_aws_endpoint(&prov->opts, "api.pricing", PL_REGION, url, sizeof url) != 0) {
        snprintf(url, sizeof url, "https://api.pricing." PL_REGION ".amazonaws.com");
    }
    bt_pricing_request_json(&body, g->ag->region, token);
    snprintf(label, sizeof label, "%s GetProducts", g->label);
    struct bt_http_req req = {
        .policy = &bt_aws_policy,
        .method = "POST", .url = url, .service = "pricing", .region = PL_REGION,
        .creds = &p->b.ag.prov[g->ag->provider].p, .target = PL_TARGET, .content_type = PL_CTYPE,
        .body = body.buf ? body.buf : "", .body_len = body.len, .label = label,
        .timeout = bt_awsgroup_timeout(),
    };
    bt_http_submit(p->ctx->http, &req, done, done_arg);
    bt_buf_free(&body);
}

static const struct bt_pages_ops pr_pages = {pr_submit, pr_page, pr_end};

static void pr_free_group(void *group)
{
    bt_pages_free(&((struct pr_group *)group)->pages);
}

static void pr_free(void *self)
{
    bt_pl_rows_free(&((struct pr *)self)->rows);
}

static const struct bt_collector_kind pr_kind = {
    .service = "pricing", .label = "pricing",
    BT_COLLECTOR_GROUPS(struct pr_group, ag, label, running),
    .free_group = pr_free_group, .free_self = pr_free,
};

static void *pr_create(struct bt_ctx *ctx)
{
    /* live AWS only: not `check` (one poll), --source, a backfill, nor price_list = off */
    if (!ctx->http || ctx->cfg->nroutes == 0 || ctx->mode == BT_MODE_ONCE || ctx->source_url ||
        ctx->window_from || !ctx->cfg->price_list)
        return NULL;
    struct pr *p = bt_xcalloc(1, sizeof *p);
    p->ctx = ctx;
    p->g = bt_collector_base_init(&p->b, &pr_kind, ctx);
    p->ng = p->b.ngroups;
    for (int i = 0; i < p->ng; i++)
        p->g[i].p = p;
    /* a cache of the last day stands: read again a day after it was written */
    char path[1024];
    struct stat sb;
    if (cache_path(path, sizeof path, false) && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
        sb.st_mtime <= time(NULL) && time(NULL) - sb.st_mtime < BT_PRICING_EVERY)
        p->b.next = (int64_t)sb.st_mtime + BT_PRICING_EVERY;
    return p;
}

static void pr_tick(void *self, int64_t now)
{
    struct pr *p = self;
    if (now < p->b.next)
        return;
    p->b.started = true;
    p->b.next = now + BT_PRICING_EVERY;
    p->b.retry_at = now + PL_RETRY;
    p->b.failed = false;
    p->skipped = 0;
    /* every group of the round is marked before any is asked: one that ends at once
     * does not take the round for over */
    for (int i = 0; i < p->ng; i++) {
        struct pr_group *g = &p->g[i];
        g->due = !g->running && g->ag->nroutes > 0;
        g->running = g->running || g->due;
        g->ok = g->ok && !g->due;
    }
    for (int i = 0; i < p->ng; i++)
        if (p->g[i].due)
            bt_pages_start(&p->g[i].pages, &pr_pages, &p->g[i], PL_MAX_PAGES);
}

static const struct bt_iam_need pr_iam[] = {
    {"pricing:GetProducts", "list prices (else the shipped table)", .live_only = true},
    {NULL, NULL, false},
};
const struct bt_collector_ops bt_pricing_collector =
    BT_COLLECTOR_SKELETON("pricing", pr_create, pr_tick, pr_iam);

/* CloudWatch, the collector: per (profile, Region) group of routes, ListMetrics and
 * GetMetricData polls into the store. */
#include "collectors/cloudwatch.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collectors/awsgroup.h"
#include "collectors/cw_int.h"
#include "core/sanitize.h"
#include "net/http.h"

/* ---- the collector -------------------------------------------------------
 * Per (profile, Region) group: ListMetrics first (cache-metric spelling,
 * again every 6 hours), then each poll sends ceil(queries / 500)
 * GetMetricData requests concurrently, follows NextToken pages from the
 * callbacks, and when every request of the group is done marks per route
 * either OK (and the newest settled minute fetched) or the first error. */


static void cw_event(struct cw *cw, int route, enum bt_event_type type, const char *text)
{
    if (!cw->ctx->store)
        return;
    struct bt_event ev = {.t = (int64_t)time(NULL), .type = type, .route = route,
                          .source = BT_SRC_CLOUDWATCH};
    bt_strlcpy(ev.text, text ? text : "", sizeof ev.text);
    bt_store_apply(cw->ctx->store, &ev);
}

static void route_fail(struct cw *cw, int r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void route_fail(struct cw *cw, int r, const char *fmt, ...)
{
    if (r < 0 || r >= cw->nroutes || cw->err[r][0])
        return; /* the first failure says the most */
    struct bt_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    bt_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    bt_strlcpy_cut(cw->err[r], bt_buf_str(&b), sizeof cw->err[r]);
    bt_buf_free(&b);
}

/* Fails every route a wire query answers. */
static void wire_fail(struct cw_group *g, int w, const char *fmt, const char *a, const char *b)
{
    for (int k = g->mfirst[w]; k < g->mfirst[w] + g->mcount[w]; k++)
        route_fail(g->cw, g->q[g->member[k]].route, fmt, a, b);
}

static int wire_slot(int route, int sig, bool alt)
{
    return (route * BT_SIG_COUNT + sig) * 2 + (alt ? 1 : 0);
}

bool bt_cloudwatch_signal_detail(enum bt_signal s)
{
    return s == BT_SIG_LATENCY_P50 || s == BT_SIG_LATENCY_P90 || s == BT_SIG_LATENCY_P99 ||
           s == BT_SIG_CLIENT_ERRORS || s == BT_SIG_SERVER_ERRORS || s == BT_SIG_TTFT_AVG;
}

/* qsort context: the routes the compared queries belong to */
static const struct bt_route *key_routes;

static int key_cmp(const struct bt_cw_query *x, const struct bt_cw_query *y)
{
    const struct bt_route *rx = &key_routes[x->route], *ry = &key_routes[y->route];
    /* the first field that differs orders them */
    int c = strcmp(x->ns, y->ns);
    if (!c)
        c = strcmp(x->metric, y->metric);
    if (!c)
        c = strcmp(x->stat, y->stat);
    if (!c)
        c = x->period - y->period;
    if (!c)
        c = strcmp(rx->model, ry->model);
    if (!c)
        c = strcmp(rx->account, ry->account);
    if (!c)
        c = strcmp(x->sumkey ? x->sumkey : "", y->sumkey ? y->sumkey : "");
    return c;
}

static const struct bt_cw_query *sort_q;
static int idx_cmp(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    int c = key_cmp(&sort_q[i], &sort_q[j]);
    return c ? c : (i > j) - (i < j);
}

int bt_cloudwatch_dedup(const struct bt_route *routes, const struct bt_cw_query *q,
                        const int *idx, int n, int *rep)
{
    int *ord = bt_xcalloc((size_t)(n ? n : 1), sizeof *ord);
    memcpy(ord, idx, (size_t)n * sizeof *ord);
    key_routes = routes;
    sort_q = q;
    qsort(ord, (size_t)n, sizeof *ord, idx_cmp);
    int distinct = 0;
    for (int i = 0; i < n; i++) {
        if (i == 0 || key_cmp(&q[ord[i]], &q[ord[i - 1]]) != 0) {
            distinct++;
            rep[ord[i]] = ord[i]; /* the lowest index of its kind (ties sort by index) */
        } else {
            rep[ord[i]] = rep[ord[i - 1]];
        }
    }
    free(ord);
    return distinct;
}

/* The wire queries of q[from, to) that are due, appended to the group's poll. */
static void add_wire(struct cw_group *g, int from, int to, bool detail, int *rep, int *pos)
{
    const struct bt_route *routes = g->cw->ctx->cfg->routes;
    int *idx = bt_xcalloc((size_t)(to - from + 1), sizeof *idx);
    int n = 0;
    for (int i = from; i < to; i++)
        if (detail || !bt_cloudwatch_signal_detail(g->q[i].signal))
            idx[n++] = i;
    bt_cloudwatch_dedup(routes, g->q, idx, n, rep);
    int w0 = g->nwire;
    for (int k = 0; k < n; k++) {
        int i = idx[k];
        if (rep[i] != i)
            continue;
        pos[i] = g->nwire;
        g->wire[g->nwire] = i;
        g->wq[g->nwire] = g->q[i];
        g->mcount[g->nwire] = 0;
        g->nwire++;
    }
    for (int k = 0; k < n; k++)
        g->mcount[pos[rep[idx[k]]]]++;
    int at = g->nwire > w0 ? g->mfirst[w0] : 0;
    for (int w = w0; w < g->nwire; w++) {
        g->mfirst[w] = at;
        at += g->mcount[w];
        g->mcount[w] = 0;
    }
    for (int k = 0; k < n; k++) {
        int w = pos[rep[idx[k]]];
        g->member[g->mfirst[w] + g->mcount[w]++] = idx[k];
    }
    /* the next range's members start after these */
    if (g->nwire > w0)
        g->mfirst[g->nwire] = g->mfirst[g->nwire - 1] + g->mcount[g->nwire - 1];
    free(idx);
}

/* This poll's distinct queries: every per-minute one (the detail ones only when
 * due), then the one-day sums. */
static void build_wire(struct cw_group *g, bool detail)
{
    struct cw *cw = g->cw;
    int *rep = bt_xcalloc((size_t)g->nq + 1, sizeof *rep);
    int *pos = bt_xcalloc((size_t)g->nq + 1, sizeof *pos);
    g->nwire = 0;
    g->mfirst[0] = 0;
    g->detail_now = detail;
    add_wire(g, 0, g->nq_min, detail, rep, pos);
    g->nwire_min = g->nwire;
    add_wire(g, g->nq_min, g->nq, true, rep, pos);
    for (int w = 0; w < g->nwire; w++) {
        const struct bt_cw_query *x = &g->q[g->wire[w]];
        cw->wire_of[wire_slot(x->route, x->signal, x->alt)] = w;
    }
    free(rep);
    free(pos);
}

void cw_build_queries(struct cw_group *g)
{
    struct cw *cw = g->cw;
    const struct bt_route *routes = cw->ctx->cfg->routes;
    size_t cap = (size_t)g->ag->nroutes * (BT_SIG_COUNT + 4) + 1;
    free(g->q);
    g->q = bt_xcalloc(cap, sizeof *g->q);
    g->nq = 0;
    for (int i = 0; i < g->ag->nroutes; i++) {
        int r = g->ag->routes[i];
        int n = bt_cloudwatch_route_queries(&routes[r], r, &cw->spell[r], g->q + g->nq,
                                            BT_SIG_COUNT);
        /* the series as ListMetrics lists them; none listed: unknown, not idle */
        if (cw_sets_apply(&cw->sets[r], &routes[r], g->q + g->nq, n, cw->nodata[r],
                          sizeof cw->nodata[r])) {
            cw->nodata[r][0] = '\0';
            g->nq += n;
            /* the reserved tier, where ListMetrics lists it for the ModelId */
            g->nq += cw_sets_tier_queries(&cw->sets[r], &routes[r], r, g->q + g->nq, 3);
        }
    }
    g->nq_min = g->nq;
    /* the day's token sums in one datapoint each, where the minutes since midnight
     * are not all fetched and kept (check; live with a short history) */
    if (bt_cloudwatch_day_sums(cw->ctx->mode, cw->ctx->cfg->history_minutes,
                               cw->ctx->window_to != 0)) {
        for (int i = 0; i < g->ag->nroutes; i++) {
            int r = g->ag->routes[i];
            int n = bt_cloudwatch_day_queries(&routes[r], r, &cw->spell[r], g->q + g->nq, 4);
            for (int k = 0; k < n; k++) {
                g->q[g->nq + k].sum = cw->sets[r].nset ? cw->sets[r].set : NULL;
                g->q[g->nq + k].nsum = cw->sets[r].nset;
                g->q[g->nq + k].sumkey = cw->sets[r].key;
            }
            g->nq += cw->nodata[r][0] ? 0 : n;
        }
    }
    free(g->wq);
    free(g->wire);
    free(g->mfirst);
    free(g->mcount);
    free(g->member);
    g->wq = bt_xcalloc(cap, sizeof *g->wq);
    g->wire = bt_xcalloc(cap, sizeof *g->wire);
    g->mfirst = bt_xcalloc(cap + 1, sizeof *g->mfirst);
    g->mcount = bt_xcalloc(cap, sizeof *g->mcount);
    g->member = bt_xcalloc(cap, sizeof *g->member);
    /* the cost of each cadence, counted once per distinct query */
    build_wire(g, false);
    g->nfast = g->nwire_min;
    build_wire(g, true);
    g->ndetail = g->nwire_min - g->nfast;
    g->nday = g->nwire - g->nwire_min;
}

void cw_submit(struct cw_group *g, const char *op, const struct bt_buf *body, bt_http_cb cb,
               void *arg)
{
    struct cw *cw = g->cw;
    cw->requests++;
    bt_awsgroup_submit(&cw->ag, g->ag, cw->ctx->http, "monitoring", CW_TARGET, CW_CTYPE, g->label,
                       op, body, cb, arg);
}

/* --- polling --- */

static void finish_poll(struct cw_group *g)
{
    struct cw *cw = g->cw;
    for (int i = 0; i < g->ag->nroutes; i++) {
        int r = g->ag->routes[i];
        if (cw->err[r][0]) {
            cw_event(cw, r, BT_EV_ERROR, cw->err[r]);
        } else {
            cw->settled[r] = bt_cloudwatch_settle(g->poll_now, cw->ctx->cfg->cw_lag, g->poll_end,
                                                  cw->settled[r]);
            if (g->detail_now)
                cw->settled_detail[r] = bt_cloudwatch_settle(g->poll_now, cw->ctx->cfg->cw_lag,
                                                             g->poll_end, cw->settled_detail[r]);
            cw_event(cw, r, BT_EV_OK, NULL);
            /* who it polled as (never a key), a setting event when it changes */
            const char *who = cw->ag.prov[g->ag->provider].p.creds.source;
            if (cw->ctx->store && strcmp(cw->ctx->cfg->routes[r].identity, who) != 0) {
                struct bt_event ev = {.t = (int64_t)time(NULL), .type = BT_EV_SETTING, .route = r,
                                      .source = BT_SRC_CLOUDWATCH, .setting = BT_SET_IDENTITY};
                bt_strlcpy(ev.str, who, sizeof ev.str);
                bt_store_apply(cw->ctx->store, &ev);
            }
        }
    }
    g->polling = false;
}

static void chunk_done(struct cw_chunk *c)
{
    free(c->token);
    c->token = NULL;
    if (--c->g->outstanding == 0)
        finish_poll(c->g);
}

static void chunk_fail(struct cw_chunk *c, const char *why)
{
    struct cw_group *g = c->g;
    for (int w = c->first; w < c->first + c->count; w++)
        wire_fail(g, w, "%s: %s", g->label, why);
    chunk_done(c);
}

/* The wire query an Id names in this group's poll, or -1. */
static int wire_of_id(const struct cw_group *g, const char *id, int *sig)
{
    const struct cw *cw = g->cw;
    int r;
    if (!bt_cloudwatch_parse_id(id, &r, sig) || r >= cw->nroutes ||
        cw->group_of[r] != (int)(g - cw->g))
        return -1;
    size_t l = strlen(id);
    bool alt = l > 2 && !strcmp(id + l - 2, "_a");
    int w = cw->wire_of[wire_slot(r, *sig, alt)];
    const struct bt_cw_query *x = w >= 0 && w < g->nwire ? &g->q[g->wire[w]] : NULL;
    if (!x || x->route != r || (int)x->signal != *sig || x->alt != alt)
        return -1;
    return w;
}

static void on_sample(void *arg, const char *id, int64_t t, double v)
{
    struct cw_chunk *c = arg;
    struct cw_group *g = c->g;
    struct cw *cw = g->cw;
    int s;
    int w = wire_of_id(g, id, &s);
    /* only what this group asked for, inside the window asked for */
    if (w < 0 || w < c->first || w >= c->first + c->count || t < c->start || t >= g->poll_end ||
        bt_signal_info[s].source != BT_SRC_CLOUDWATCH || !cw->ctx->store)
        return;
    for (int k = g->mfirst[w]; k < g->mfirst[w] + g->mcount[w]; k++)
        bt_store_add(cw->ctx->store,
                     &(struct bt_sample){.t = bt_minute_floor(t), .route = g->q[g->member[k]].route,
                                         .signal = (enum bt_signal)s, .value = v},
                     (int64_t)time(NULL));
}

static void on_status(void *arg, const char *id, const char *code, const char *detail)
{
    struct cw_chunk *c = arg;
    int s;
    int w = wire_of_id(c->g, id, &s);
    if (strcmp(code, "PartialData") == 0 || w < 0)
        return; /* PartialData: the rest comes with NextToken */
    const struct bt_cw_query *x = &c->g->q[c->g->wire[w]];
    char d[128];
    bt_strlcpy_cut(d, detail, sizeof d);
    struct bt_buf what = {0};
    bt_buf_printf(&what, "%s: %s for %s %s (%s)%s", c->g->label, code, x->metric, x->stat,
                  c->g->cw->ctx->cfg->routes[x->route].model, d[0] ? ": " : "");
    wire_fail(c->g, w, "%s%s", bt_buf_str(&what), d);
    bt_buf_free(&what);
}

static void on_message(void *arg, const char *code, const char *value)
{
    struct cw_chunk *c = arg;
    if (c->g->cw->ctx->verbose) {
        /* the server's words: no escape sequence or forged line reaches the terminal */
        char sc[64], sv[512];
        fprintf(stderr, "bedtop: %s GetMetricData: %s: %s\n", c->g->label,
                bt_san_term(sc, sizeof sc, code), bt_san_term(sv, sizeof sv, value));
    }
}

static void submit_page(struct cw_chunk *c);

static void page_done(void *arg, const struct bt_http_resp *resp)
{
    struct cw_chunk *c = arg;
    char why[224];
    if (resp->status != 200) {
        bt_awsgroup_describe(resp, why, sizeof why);
        chunk_fail(c, why);
        return;
    }
    struct bt_cw_sink sink = {on_sample, on_status, on_message, c};
    char *token = NULL;
    char err[160];
    if (!bt_cloudwatch_parse_page(resp->body, resp->body_len, &sink, &token, err, sizeof err)) {
        snprintf(why, sizeof why, "GetMetricData: %s (%s)", err, resp->url ? resp->url : "");
        chunk_fail(c, why);
        return;
    }
    if (!token) {
        chunk_done(c);
        return;
    }
    if (++c->pages >= MAX_PAGES || (c->token && strcmp(c->token, token) == 0)) {
        free(token);
        chunk_fail(c, "GetMetricData pagination does not end (NextToken repeats)");
        return;
    }
    free(c->token);
    c->token = token;
    submit_page(c);
}

static void submit_page(struct cw_chunk *c)
{
    struct cw_group *g = c->g;
    struct bt_buf body = {0};
    bt_cloudwatch_request_json(&body, g->cw->ctx->cfg->routes, g->wq + c->first, c->count,
                               c->start, g->poll_end, c->token);
    /* billed per metric requested: a summed figure costs each series it sums */
    unsigned metrics = 0;
    for (int w = c->first; w < c->first + c->count; w++)
        metrics += g->wq[w].nsum > 1 ? (unsigned)g->wq[w].nsum : 1;
    bt_api_cost_metrics(g->cw->ctx->api_cost, (int64_t)time(NULL), metrics);
    cw_submit(g, "GetMetricData", &body, page_done, c);
    bt_buf_free(&body);
}

/* Are the detail queries (latency percentiles, errors, time to first token) due?
 * Every detail_interval; every poll in check mode and backfills. */
static bool detail_due(const struct cw_group *g, int64_t now)
{
    const struct cw *cw = g->cw;
    double iv = cw->ctx->cfg->detail_interval;
    if (cw->ctx->mode == BT_MODE_ONCE || iv <= 0 || !g->detail_at)
        return true;
    /* polls run a little late or early on the interval grid: a few seconds' slack */
    return now - g->detail_at >= (int64_t)iv - 5;
}

/* Requests for wire queries [base, end): consecutive runs whose entries (a summed
 * query counts its series and its expression) stay within the 500 a request takes. */
static int chunk_ranges(const struct cw_group *g, int base, int end, int *first, int *count)
{
    int n = 0, weight = 0;
    for (int w = base; w < end; w++) {
        int x = bt_cloudwatch_query_weight(&g->wq[w]);
        if (n == 0 || weight + x > BT_CW_MAX_QUERIES) {
            first[n] = w;
            count[n++] = 0;
            weight = 0;
        }
        count[n - 1]++;
        weight += x;
    }
    return n;
}

void cw_start_poll(struct cw_group *g, int64_t now)
{
    struct cw *cw = g->cw;
    const struct bt_config *cfg = cw->ctx->cfg;
    int back = bt_cloudwatch_backfill_minutes(now, cw->ctx->mode, cfg->history_minutes);
    for (int i = 0; i < g->ag->nroutes; i++) {
        int r = g->ag->routes[i];
        bt_strlcpy(cw->err[r], cw->nodata[r], sizeof cw->err[r]);
    }
    g->poll_now = now;
    g->poll_end = cw->ctx->window_to ? cw->ctx->window_to : bt_cloudwatch_end(now);
    build_wire(g, detail_due(g, now));
    if (g->detail_now)
        g->detail_at = now;
    /* per-minute queries and one-day sums go in separate requests: one StartTime each */
    int *first = bt_xcalloc((size_t)g->nwire + 2, sizeof *first);
    int *count = bt_xcalloc((size_t)g->nwire + 2, sizeof *count);
    int nmin = chunk_ranges(g, 0, g->nwire_min, first, count);
    /* in the first minute of the day there is no whole minute to sum yet */
    int nday = now % 86400 >= 60 ? chunk_ranges(g, g->nwire_min, g->nwire, first + nmin, count + nmin)
                                 : 0;
    g->nchunks = nmin + nday;
    free(g->chunks);
    g->chunks = bt_xcalloc((size_t)(g->nchunks ? g->nchunks : 1), sizeof *g->chunks);
    for (int k = 0; k < g->nchunks; k++) {
        struct cw_chunk *c = &g->chunks[k];
        bool day = k >= nmin;
        c->g = g;
        c->first = first[k];
        c->count = count[k];
        if (day) {
            c->start = now - (now % 86400); /* UTC midnight: one datapoint per query */
            continue;
        }
        /* one StartTime per request: the oldest unsettled minute of what it asks;
         * detail queries reach back to their own last settled minute (backfill) */
        c->start = g->poll_end;
        for (int w = c->first; w < c->first + c->count; w++) {
            for (int m = g->mfirst[w]; m < g->mfirst[w] + g->mcount[w]; m++) {
                const struct bt_cw_query *x = &g->q[g->member[m]];
                int64_t settled = bt_cloudwatch_signal_detail(x->signal)
                                      ? cw->settled_detail[x->route]
                                      : cw->settled[x->route];
                int64_t st = cw->ctx->window_from ? cw->ctx->window_from
                                                  : bt_cloudwatch_route_start(now, settled, back);
                if (st < c->start)
                    c->start = st;
            }
        }
    }
    free(first);
    free(count);
    if (g->nchunks == 0) {
        finish_poll(g); /* nothing to ask: every route says why */
        return;
    }
    g->polling = true;
    g->outstanding = g->nchunks;
    for (int k = 0; k < g->nchunks; k++)
        submit_page(&g->chunks[k]);
}

/* --- the interface --- */

static int64_t next_poll(const struct cw *cw, int64_t now)
{
    int64_t iv = (int64_t)cw->ctx->cfg->interval;
    if (iv < 10)
        iv = 10;
    /* on the interval grid, a little after the minute so the new minute is there */
    int64_t t = ((now - POLL_OFFSET) / iv + 1) * iv + POLL_OFFSET;
    return t > now ? t : now + iv;
}

static void *cw_create(struct bt_ctx *ctx)
{
    if (!ctx->http || ctx->cfg->nroutes == 0)
        return NULL;
    struct cw *cw = bt_xcalloc(1, sizeof *cw);
    cw->ctx = ctx;
    cw->nroutes = ctx->cfg->nroutes;
    bt_awsgroups_build(&cw->ag, ctx, "monitoring", false);
    cw->settled = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->settled);
    cw->settled_detail = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->settled_detail);
    cw->wire_of = bt_xcalloc((size_t)cw->nroutes * BT_SIG_COUNT * 2, sizeof *cw->wire_of);
    for (int i = 0; i < cw->nroutes * BT_SIG_COUNT * 2; i++)
        cw->wire_of[i] = -1;
    cw->spell = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->spell);
    cw->seen = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->seen);
    cw->sets = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->sets);
    cw->listing = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->listing);
    cw->nodata = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->nodata);
    cw->err = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->err);
    cw->group_of = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->group_of);
    for (int r = 0; r < cw->nroutes; r++)
        cw->group_of[r] = -1;
    cw->ng = cw->ag.n;
    cw->g = bt_xcalloc((size_t)(cw->ng ? cw->ng : 1), sizeof *cw->g);
    for (int i = 0; i < cw->ng; i++) {
        struct cw_group *g = &cw->g[i];
        g->cw = cw;
        g->ag = &cw->ag.g[i];
        snprintf(g->label, sizeof g->label, "cloudwatch %s", g->ag->region[0] ? g->ag->region : "(no region)");
        for (int k = 0; k < g->ag->nroutes; k++) {
            cw->group_of[g->ag->routes[k]] = i;
            g->has_mantle = g->has_mantle || ctx->cfg->routes[g->ag->routes[k]].endpoint == BT_EP_MANTLE;
        }
        cw_build_queries(g);
    }
    return cw;
}

static void cw_tick(void *self, int64_t now)
{
    struct cw *cw = self;
    if (cw->ctx->mode == BT_MODE_ONCE && cw->started)
        return;
    cw->started = true;
    for (int i = 0; i < cw->ng; i++) {
        struct cw_group *g = &cw->g[i];
        if (g->polling || g->listing)
            continue; /* the previous poll is still out: never pile up */
        if (!g->ag->url[0]) {
            for (int k = 0; k < g->ag->nroutes; k++) {
                char text[224];
                bt_fmt_cut(text, sizeof text, "%s: %s", g->label, g->ag->error);
                cw_event(cw, g->ag->routes[k], BT_EV_ERROR, text);
            }
            continue;
        }
        if (cw->ctx->mode == BT_MODE_ONCE) {
            /* both cache spellings asked at once; ListMetrics only where it decides
             * what is asked: the reserved tier's series (runtime routes) and mantle's
             * dimension sets */
            bool runtime = false;
            for (int k = 0; k < g->ag->nroutes; k++) {
                cw->spell[g->ag->routes[k]].both = true;
                runtime = runtime || cw->ctx->cfg->routes[g->ag->routes[k]].endpoint == BT_EP_RUNTIME;
            }
            cw_start_list(g, now, runtime ? 0 : 1);
        } else if (!g->listed || now - g->listed_at >= LIST_EVERY) {
            cw_start_list(g, now, 0);
        } else {
            cw_start_poll(g, now);
        }
    }
    cw->next = next_poll(cw, now);
}

static int64_t cw_next_due(void *self)
{
    struct cw *cw = self;
    if (cw->ctx->mode == BT_MODE_ONCE)
        return cw->started ? INT64_MAX : 0;
    return cw->next;
}

static bool cw_busy(void *self)
{
    struct cw *cw = self;
    if (cw->ctx->mode == BT_MODE_ONCE && !cw->started)
        return true;
    for (int i = 0; i < cw->ng; i++)
        if (cw->g[i].polling || cw->g[i].listing)
            return true;
    return false;
}

static void cw_destroy(void *self)
{
    struct cw *cw = self;
    if (!cw)
        return;
    for (int i = 0; i < cw->ng; i++) {
        struct cw_group *g = &cw->g[i];
        for (int k = 0; k < g->nchunks; k++)
            free(g->chunks[k].token);
        free(g->chunks);
        free(g->q);
        free(g->wq);
        free(g->wire);
        free(g->mfirst);
        free(g->mcount);
        free(g->member);
        free(g->list_token);
    }
    free(cw->g);
    bt_awsgroups_free(&cw->ag);
    free(cw->settled);
    free(cw->settled_detail);
    free(cw->wire_of);
    free(cw->spell);
    free(cw->seen);
    free(cw->sets);
    free(cw->listing);
    free(cw->nodata);
    free(cw->err);
    free(cw->group_of);
    free(cw);
}

const struct bt_collector_ops bt_cloudwatch_collector = {
    .name = "cloudwatch",
    .create = cw_create,
    .tick = cw_tick,
    .next_due = cw_next_due,
    .busy = cw_busy,
    .destroy = cw_destroy,
};

void bt_cloudwatch_cost(void *self, double *metrics_per_poll, double *metrics_per_day)
{
    struct cw *cw = self;
    double fast = 0, detail = 0;
    for (int i = 0; cw && i < cw->ng; i++) {
        fast += cw->g[i].nfast + cw->g[i].nday;
        detail += cw->g[i].ndetail;
    }
    double iv = cw && cw->ctx->cfg->interval > 0 ? cw->ctx->cfg->interval : 60;
    double div = cw ? cw->ctx->cfg->detail_interval : 0;
    if (div < iv)
        div = iv; /* detail queries go with a poll, never more often */
    if (metrics_per_poll)
        *metrics_per_poll = fast + detail;
    if (metrics_per_day)
        *metrics_per_day = fast * 86400.0 / iv + detail * 86400.0 / div;
}

unsigned long bt_cloudwatch_requests(void *self)
{
    const struct cw *cw = self;
    return cw ? cw->requests : 0;
}


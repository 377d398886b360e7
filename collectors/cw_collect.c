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
#include "core/cadence.h"
#include "core/sanitize.h"
#include "net/http.h"

/* ---- the collector -------------------------------------------------------
 * Per (profile, Region) group: ListMetrics first (cache-metric spelling,
 * again every 6 hours), then each poll sends ceil(queries / 500)
 * GetMetricData requests concurrently, follows NextToken pages from the
 * callbacks, and when every request of the group is done marks per route
 * either OK (and the newest settled minute fetched) or the first error. */


/* Now on the tick's clock: the tick's time plus the wall-clock time since it (the
 * same as time(NULL) when the loop drives the collector; a test's simulated minutes
 * otherwise). */
static int64_t cw_clock(const struct cw *cw)
{
    int64_t wall = (int64_t)time(NULL);
    return cw->tick_wall ? cw->tick_now + (wall - cw->tick_wall) : wall;
}

static void cw_event(struct cw *cw, int route, enum bt_event_type type, const char *text)
{
    if (!cw->ctx->store)
        return;
    struct bt_event ev = {.t = cw_clock(cw), .type = type, .route = route,
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

/* --- polling --- */

/* What the poll asked for, per route whose poll was good and request: the signals,
 * the minutes [StartTime, EndTime) and which of them were settled when the request
 * was sent (minute end + lag <= poll_now: the request's time, not the answer's). */
static void record_coverage(struct cw_group *g)
{
    struct cw *cw = g->cw;
    if (!cw->ctx->store || !g->chunks)
        return;
    uint64_t *mask = bt_xcalloc((size_t)cw->nroutes + 1, sizeof *mask);
    double lag = cw->ctx->cfg->cw_lag;
    int64_t lag_s = lag > 0 ? (int64_t)ceil(lag) : 0;
    for (int k = 0; k < g->nchunks; k++) {
        const struct cw_chunk *c = &g->chunks[k];
        if (c->failed)
            continue; /* a failed day-sum request covers nothing */
        for (int w = c->first; w < c->first + c->count; w++)
            for (int m = g->mfirst[w]; m < g->mfirst[w] + g->mcount[w]; m++) {
                const struct bt_cw_query *x = &g->q[g->member[m]];
                if (x->route >= 0 && x->route < cw->nroutes && !cw->err[x->route][0])
                    mask[x->route] |= BT_SIG_BIT(x->signal);
            }
        for (int i = 0; i < g->ag->nroutes; i++) {
            int r = g->ag->routes[i];
            if (!mask[r])
                continue;
            struct bt_coverage cov = {.route = r, .signals = mask[r], .from = c->start,
                                      .to = c->end,
                                      .settled_to = bt_minute_floor(g->poll_now - lag_s),
                                      .asked = g->poll_now};
            bt_store_cover(cw->ctx->store, &cov, cw_clock(cw));
            mask[r] = 0;
        }
    }
    free(mask);
}

static void finish_poll(struct cw_group *g)
{
    struct cw *cw = g->cw;
    record_coverage(g);
    for (int i = 0; i < g->ag->nroutes; i++) {
        int r = g->ag->routes[i];
        if (cw->err[r][0]) {
            cw_event(cw, r, BT_EV_ERROR, cw->err[r]);
        } else {
            double lag = cw->ctx->cfg->cw_lag;
            cw->settled_throttle[r] =
                bt_cloudwatch_settle(g->poll_now, lag, g->poll_end, cw->settled_throttle[r]);
            if (g->detail_now)
                cw->settled_detail[r] = bt_cloudwatch_settle(g->poll_now, lag, g->poll_end,
                                                             cw->settled_detail[r]);
            if (!cw->due[r])
                continue; /* a calm route between its polls: only its throttles were asked */
            cw->settled[r] = bt_cloudwatch_settle(g->poll_now, lag, g->poll_end, cw->settled[r]);
            cw->minute_at[r] = g->poll_now;
            cw_event(cw, r, BT_EV_OK, NULL);
            /* who it polled as (never a key), a setting event when it changes */
            const char *who = cw->b.ag.prov[g->ag->provider].p.creds.source;
            if (cw->ctx->store && strcmp(cw->ctx->cfg->routes[r].identity, who) != 0) {
                struct bt_event ev = {.t = cw_clock(cw), .type = BT_EV_SETTING, .route = r,
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
    if (--c->g->outstanding == 0)
        finish_poll(c->g);
}

static void chunk_fail(struct cw_chunk *c, const char *why)
{
    struct cw_group *g = c->g;
    if (c->daysum) {
        /* the day's sums only: the minutes stay good, tokens today is then a lower
         * bound from the minutes covered (core/frame.c); asked again next poll */
        g->day_failed = true;
        c->failed = true;
        if (g->cw->ctx->verbose)
            fprintf(stderr, "bedtop: %s: the day's token sums failed (%s): tokens today is a "
                            "lower bound\n", g->label, why);
        chunk_done(c);
        return;
    }
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
    int w = cw->wire_of[cw_wire_slot(r, *sig, alt)];
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
    /* a result's datapoints come one after another under one Id string: looked up
     * once per result, not per datapoint */
    if (id != c->id_at) {
        c->id_w = wire_of_id(g, id, &c->id_s);
        c->id_at = id;
    }
    int s = c->id_s, w = c->id_w;
    /* only what this group asked for, inside the window asked for */
    if (w < 0 || w < c->first || w >= c->first + c->count || t < c->start || t >= c->end ||
        bt_signal_info[s].source != BT_SRC_CLOUDWATCH || !cw->ctx->store)
        return;
    if (bt_signal_daily((enum bt_signal)s)) {
        if (!c->daysum || !isfinite(v))
            return; /* a day sum outside a day-sum request; an absurd hour */
        c->daysum[w - c->first] += v; /* an hour since midnight: summed when all came */
        c->dayhas[w - c->first] = true;
        return;
    }
    for (int k = g->mfirst[w]; k < g->mfirst[w] + g->mcount[w]; k++)
        bt_store_add(cw->ctx->store,
                     &(struct bt_sample){.t = bt_minute_floor(t), .route = g->q[g->member[k]].route,
                                         .signal = (enum bt_signal)s, .value = v},
                     cw_clock(cw));
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

/* A day-sum request answered whole: each query's hourly datapoints from midnight to
 * the request's end, summed, is the day's figure through it, stored at the last
 * minute it covers (core adds the minutes after it: bt_store_day_sum). */
static void day_sums_done(struct cw_chunk *c)
{
    struct cw_group *g = c->g;
    struct cw *cw = g->cw;
    for (int i = 0; c->daysum && i < c->count; i++) {
        int w = c->first + i;
        if (!c->dayhas[i])
            continue;
        for (int k = g->mfirst[w]; k < g->mfirst[w] + g->mcount[w]; k++)
            bt_store_add(cw->ctx->store,
                         &(struct bt_sample){.t = bt_minute_floor(c->end - 60),
                                             .route = g->q[g->member[k]].route,
                                             .signal = g->q[g->wire[w]].signal, .value = c->daysum[i]},
                         cw_clock(cw));
    }
}

/* One GetMetricData page: its datapoints, statuses and messages into the chunk. */
static bool page_read(void *arg, const struct bt_http_resp *resp, char **next, char *err,
                      size_t errlen)
{
    struct cw_chunk *c = arg;
    struct bt_cw_sink sink = {on_sample, on_status, on_message, c};
    c->id_at = NULL; /* this page's strings are new: an old pointer may come again */
    return bt_cloudwatch_parse_page(resp->body, resp->body_len, &sink, next, err, errlen);
}

static void page_end(void *arg, enum bt_pages_end how, const struct bt_http_resp *resp,
                     const char *err)
{
    struct cw_chunk *c = arg;
    char why[224] = "";
    switch (how) {
    case BT_PAGES_DONE:
        day_sums_done(c);
        chunk_done(c);
        return;
    case BT_PAGES_RUNAWAY:
        chunk_fail(c, "GetMetricData pagination does not end (NextToken repeats)");
        return;
    case BT_PAGES_HTTP:
        bt_awsgroup_describe(resp, why, sizeof why);
        break;
    case BT_PAGES_PARSE:
        snprintf(why, sizeof why, "GetMetricData: %s (%s)", err, resp->url ? resp->url : "");
        break;
    }
    chunk_fail(c, why);
}

/* The chunk's GetMetricData body for the token its listing sends (c->pages.token,
 * kept until the answer): written when the request starts, not when it is queued, so
 * the requests waiting behind the running ones hold no bodies (at 20,000 routes, check
 * queued ~107 MB of them). The chunk's queries and window stay as they were at submit
 * until its answer. */
static void page_body(void *arg, struct bt_buf *out)
{
    struct cw_chunk *c = arg;
    struct cw_group *g = c->g;
    bt_cloudwatch_request_json_of(out, g->cw->ctx->cfg->routes, g->q, g->wire + c->first, c->count,
                               c->start, c->end, c->pages.token);
}

static void page_submit(void *arg, const char *token, bt_http_cb done, void *done_arg)
{
    struct cw_chunk *c = arg;
    struct cw_group *g = c->g;
    (void)token; /* c->pages.token: page_body reads it when the request starts */
    /* billed per metric requested: a summed figure costs each series it sums */
    unsigned metrics = 0;
    for (int w = c->first; w < c->first + c->count; w++)
        metrics += cw_billed(&g->q[g->wire[w]]);
    bt_api_cost_metrics(g->cw->ctx->api_cost, (int64_t)time(NULL), metrics);
    cw_submit(g, "GetMetricData", NULL, page_body, c, done, done_arg);
}

static const struct bt_pages_ops page_ops = {page_submit, page_read, page_end};

static void free_chunks(struct cw_group *g)
{
    for (int k = 0; g->chunks && k < g->nchunks; k++) {
        bt_pages_free(&g->chunks[k].pages);
        free(g->chunks[k].daysum);
        free(g->chunks[k].dayhas);
    }
    free(g->chunks);
    g->chunks = NULL;
}

/* Are the detail queries (latency percentiles, errors, time to first token) due?
 * Every detail_interval; every poll in check mode and backfills. */
static bool detail_due(const struct cw_group *g, int64_t now)
{
    const struct cw *cw = g->cw;
    double iv = cw->ctx->cfg->detail_interval;
    /* check: every run, unless its state file says when the last one asked */
    if ((cw->ctx->mode == BT_MODE_ONCE && !cw->resumed) || iv <= 0 || !g->detail_at)
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
        int x = bt_cloudwatch_query_weight(&g->q[g->wire[w]]);
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

/* The StartTime wire queries [from, to) need: the oldest unsettled minute of what
 * they ask (detail queries and a calm route's reach back to their own last settled
 * minute: the backfill); poll_end when the range is empty. */
static int64_t range_start(const struct cw_group *g, int from, int to, int64_t now, int back)
{
    const struct cw *cw = g->cw;
    int64_t start = g->poll_end;
    for (int w = from; w < to; w++) {
        for (int m = g->mfirst[w]; m < g->mfirst[w] + g->mcount[w]; m++) {
            const struct bt_cw_query *x = &g->q[g->member[m]];
            int64_t settled = bt_cloudwatch_signal_detail(x->signal) ? cw->settled_detail[x->route]
                              : x->signal == BT_SIG_THROTTLES ? cw->settled_throttle[x->route]
                                                              : cw->settled[x->route];
            int64_t st = cw->ctx->window_from ? cw->ctx->window_from
                                              : bt_cloudwatch_route_start(now, settled, back);
            if (st < start)
                start = st;
        }
    }
    return start;
}

static void cw_start_poll(struct cw_group *g, int64_t now)
{
    struct cw *cw = g->cw;
    const struct bt_config *cfg = cw->ctx->cfg;
    int back = bt_cloudwatch_backfill_minutes(now, cw->ctx->mode, cfg->history_minutes);
    for (int i = 0; i < g->ag->nroutes; i++) {
        int r = g->ag->routes[i];
        if (cw->err[r][0] || cw->nodata[r][0]) /* "" over "": no write, the page stays unused */
            bt_strlcpy(cw->err[r], cw->nodata[r], sizeof cw->err[r]);
    }
    g->poll_now = now;
    g->poll_end = cw->ctx->window_to ? cw->ctx->window_to : bt_cloudwatch_end(now);
    bool detail = detail_due(g, now);
    /* a calm route's per-minute signals: with the 5-minute tier, or 5 minutes on */
    for (int i = 0; i < g->ag->nroutes; i++) {
        int r = g->ag->routes[i];
        cw->due[r] = !cw->slow[r] || detail || !cw->minute_at[r] ||
                     now - cw->minute_at[r] >= BT_CADENCE_SLOW_S - 5;
    }
    cw_build_wire(g, detail, false);
    if (g->detail_now)
        g->detail_at = now;
    /* per-minute queries from the last poll on, backfilling ones and day sums go
     * in separate requests: one StartTime each */
    int *first = bt_xcalloc((size_t)g->nwire + 3, sizeof *first);
    int *count = bt_xcalloc((size_t)g->nwire + 3, sizeof *count);
    int nmin;
    if (range_start(g, 0, g->nwire_recent, now, back) ==
        range_start(g, g->nwire_recent, g->nwire_min, now, back)) {
        nmin = chunk_ranges(g, 0, g->nwire_min, first, count); /* the same window: together */
    } else {
        nmin = chunk_ranges(g, 0, g->nwire_recent, first, count);
        nmin += chunk_ranges(g, g->nwire_recent, g->nwire_min, first + nmin, count + nmin);
    }
    /* The day sums: check asks them to the poll's end (in the first minute of the
     * day there is no whole minute to sum yet). Live asks them once an hour, to the
     * hour, and keeps the minutes after it, where its history reaches back past the
     * hour (bt_cloudwatch_day_hourly): every poll they cost a metric per route and
     * signal for nothing. */
    int64_t midnight = now - now % 86400, day_end = g->poll_end;
    bool ask_day = now % 86400 >= 60;
    if (bt_cloudwatch_day_hourly(cw->ctx->mode, cfg->history_minutes)) {
        day_end = g->poll_end - g->poll_end % 3600;
        ask_day = day_end > midnight && (day_end != g->day_through || g->day_failed);
    }
    int nday = ask_day ? chunk_ranges(g, g->nwire_min, g->nwire, first + nmin, count + nmin) : 0;
    g->day_failed = false;
    free_chunks(g);
    g->nchunks = nmin + nday;
    g->chunks = bt_xcalloc((size_t)(g->nchunks ? g->nchunks : 1), sizeof *g->chunks);
    for (int k = 0; k < g->nchunks; k++) {
        struct cw_chunk *c = &g->chunks[k];
        bool day = k >= nmin;
        c->g = g;
        c->first = first[k];
        c->count = count[k];
        c->end = day ? day_end : g->poll_end;
        if (day) {
            /* UTC midnight, hourly datapoints summed (day_sums_done) */
            c->start = midnight;
            g->day_through = day_end;
            c->daysum = bt_xcalloc((size_t)c->count, sizeof *c->daysum);
            c->dayhas = bt_xcalloc((size_t)c->count, sizeof *c->dayhas);
            continue;
        }
        /* one StartTime per request: the oldest unsettled minute of what it asks;
         * detail queries reach back to their own last settled minute (backfill) */
        c->start = range_start(g, c->first, c->first + c->count, now, back);
    }
    free(first);
    free(count);
    if (g->nchunks == 0) {
        finish_poll(g); /* nothing to ask: every route says why */
        return;
    }
    g->polling = true;
    g->outstanding = g->nchunks;
    for (int k = 0; k < g->nchunks; k++) {
        struct cw_chunk *c = &g->chunks[k];
        bt_pages_start(&c->pages, &page_ops, c, MAX_PAGES);
    }
}

/* The query set built anew (the routes' spellings and series may have changed), then
 * the poll: after a listing (cw->listed), or in check mode without one. */
static void poll_anew(struct cw_group *g, int64_t now)
{
    cw_build_queries(g);
    cw_start_poll(g, now);
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

static const struct bt_collector_kind cw_kind;

static void *cw_create(struct bt_ctx *ctx)
{
    if (!ctx->http || ctx->cfg->nroutes == 0)
        return NULL;
    struct cw *cw = bt_xcalloc(1, sizeof *cw);
    cw->ctx = ctx;
    cw->listed = poll_anew;
    cw->nroutes = ctx->cfg->nroutes;
    cw->settled = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->settled);
    cw->settled_detail = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->settled_detail);
    cw->settled_throttle = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->settled_throttle);
    cw->slow = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->slow);
    cw->due = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->due);
    cw->minute_at = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->minute_at);
    cw->listed_at = bt_xcalloc((size_t)cw->nroutes, sizeof *cw->listed_at);
    /* adaptive cadence: live polling into a store, not a backfill window */
    if (ctx->mode == BT_MODE_LIVE && !ctx->window_to && ctx->store && ctx->cfg->adaptive_cadence)
        cw->adaptive = true;
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
    cw->g = bt_collector_base_init(&cw->b, &cw_kind, ctx);
    cw->ng = cw->b.ngroups;
    for (int i = 0; i < cw->ng; i++) {
        struct cw_group *g = &cw->g[i];
        g->cw = cw;
        for (int k = 0; k < g->ag->nroutes; k++) {
            cw->group_of[g->ag->routes[k]] = i;
            g->has_mantle = g->has_mantle || ctx->cfg->routes[g->ag->routes[k]].endpoint == BT_EP_MANTLE;
        }
        cw_build_queries(g);
    }
    return cw;
}

/* The adaptive cadence's decision for every route (core/cadence.c), from the store as
 * it stands; each group's cost counted again where it changed. */
static void cadence_update(struct cw *cw, int64_t now)
{
    if (!cw->adaptive || cw->nroutes <= 0)
        return;
    bool *was = bt_xcalloc((size_t)cw->nroutes, sizeof *was);
    memcpy(was, cw->slow, (size_t)cw->nroutes * sizeof *was);
    /* the figures alone (the rule reads no warning), in scratch: 9 kB a route kept
     * between polls was a fifth of serve's memory */
    struct bt_eval *ev = bt_xcalloc((size_t)cw->nroutes, sizeof *ev);
    struct bt_eval_groups *groups = bt_eval_groups_once(cw->ctx->cfg);
    bt_eval_all_with(cw->ctx->cfg, cw->ctx->store, now, groups, true, NULL, ev);
    bt_eval_groups_free(groups);
    bt_cadence_all(cw->ctx->cfg, cw->ctx->store, ev, now, cw->slow);
    free(ev);
    for (int i = 0; i < cw->ng; i++) {
        struct cw_group *g = &cw->g[i];
        bool changed = false;
        for (int k = 0; k < g->ag->nroutes && !changed; k++)
            changed = was[g->ag->routes[k]] != cw->slow[g->ag->routes[k]];
        if (changed && !g->polling && !g->listing)
            cw_count_cost(g);
    }
    free(was);
}

static void cw_tick(void *self, int64_t now)
{
    struct cw *cw = self;
    if (cw->ctx->mode == BT_MODE_ONCE && cw->b.started)
        return;
    cw->b.started = true;
    cw->tick_now = now;
    cw->tick_wall = (int64_t)time(NULL);
    cadence_update(cw, now);
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
        bool fresh = cw->resumed;
        for (int k = 0; k < g->ag->nroutes; k++) {
            int64_t at = cw->listed_at[g->ag->routes[k]];
            fresh = fresh && at && now - at < LIST_EVERY && at <= now;
        }
        if (cw->ctx->mode == BT_MODE_ONCE && cw->resumed && !fresh) {
            /* a state file: list once in full (then every 6 hours), so later runs ask
             * one cache spelling, or none where the model publishes none (both until a
             * listing answers), and know the reserved tier's series from the listing */
            for (int k = 0; k < g->ag->nroutes; k++)
                cw->spell[g->ag->routes[k]].both = true;
            cw_start_list(g, now, 0);
        } else if (cw->ctx->mode == BT_MODE_ONCE) {
            /* a state file's listing, else both cache spellings asked at once; then
             * ListMetrics only where it decides what is asked: the reserved tier's
             * series (runtime routes) and mantle's dimension sets */
            bool runtime = false;
            for (int k = 0; k < g->ag->nroutes; k++) {
                int r = g->ag->routes[k];
                if (fresh) {
                    cw_apply_seen(cw, r);
                } else {
                    cw->spell[r].both = true;
                    runtime = runtime || cw->ctx->cfg->routes[r].endpoint == BT_EP_RUNTIME;
                }
            }
            if (runtime || g->has_mantle)
                cw_start_list(g, now, runtime ? 0 : 1);
            else
                poll_anew(g, now);
        } else if (!g->listed || now - g->listed_at >= LIST_EVERY) {
            cw_start_list(g, now, 0);
        } else {
            cw_start_poll(g, now);
        }
    }
    cw->b.next = next_poll(cw, now);
}

/* a group's poll or listing is out */
static bool cw_busy(void *self)
{
    struct cw *cw = self;
    for (int i = 0; i < cw->ng; i++)
        if (cw->g[i].polling || cw->g[i].listing)
            return true;
    return false;
}

static void cw_free_group(void *group)
{
    struct cw_group *g = group;
    free_chunks(g);
    free(g->q);
    cw_free_queries(g);
    bt_pages_free(&g->list);
    cw_list_free(g);
}

static void cw_free(void *self)
{
    struct cw *cw = self;
    free(cw->settled);
    free(cw->settled_detail);
    free(cw->settled_throttle);
    free(cw->slow);
    free(cw->due);
    free(cw->minute_at);
    free(cw->listed_at);
    free(cw->wire_of);
    free(cw->spell);
    free(cw->seen);
    for (int r = 0; r < cw->nroutes && cw->sets; r++) {
        cw_sets_reset(&cw->sets[r]);
        cw_sets_reset(&cw->listing[r]);
    }
    free(cw->sets);
    free(cw->listing);
    free(cw->nodata);
    free(cw->err);
    free(cw->group_of);
}

static const struct bt_collector_kind cw_kind = {
    .service = "monitoring", .label = "cloudwatch",
    BT_COLLECTOR_GROUPS(struct cw_group, ag, label, polling), .busy = cw_busy,
    .free_group = cw_free_group, .free_self = cw_free,
};

static const struct bt_iam_need cw_iam[] = {
    {"cloudwatch:GetMetricData", NULL, false},
    {"cloudwatch:ListMetrics", NULL, false},
    {NULL, NULL, false},
};
const struct bt_collector_ops bt_cloudwatch_collector =
    BT_COLLECTOR_SKELETON("cloudwatch", cw_create, cw_tick, cw_iam);

void bt_cloudwatch_cost(void *self, double *metrics_per_poll, double *metrics_per_day)
{
    struct cw *cw = self;
    double fast = 0, slow = 0, detail = 0, day = 0;
    for (int i = 0; cw && i < cw->ng; i++) {
        fast += cw->g[i].nfast;
        slow += cw->g[i].nslow;
        detail += cw->g[i].ndetail;
        day += cw->g[i].nday;
    }
    /* the day sums: with every poll; live with history enough, once an hour */
    bool hourly = cw && bt_cloudwatch_day_hourly(cw->ctx->mode, cw->ctx->cfg->history_minutes);
    if (!hourly)
        fast += day;
    double iv = cw && cw->ctx->cfg->interval > 0 ? cw->ctx->cfg->interval : 60;
    double div = cw ? cw->ctx->cfg->detail_interval : 0;
    if (div < iv)
        div = iv; /* detail queries go with a poll, never more often */
    double siv = BT_CADENCE_SLOW_S > iv ? BT_CADENCE_SLOW_S : iv;
    if (metrics_per_poll)
        *metrics_per_poll = fast + slow + detail;
    if (metrics_per_day)
        *metrics_per_day = fast * 86400.0 / iv + slow * 86400.0 / siv + detail * 86400.0 / div +
                           (hourly ? day * 23 : 0); /* each hour but the day's first */
}

void bt_cloudwatch_resume_get(void *self, int route, struct bt_cw_resume *out)
{
    const struct cw *cw = self;
    memset(out, 0, sizeof *out);
    if (!cw || route < 0 || route >= cw->nroutes)
        return;
    int gi = cw->group_of[route];
    out->settled = cw->settled[route];
    out->settled_detail = cw->settled_detail[route];
    out->settled_throttle = cw->settled_throttle[route];
    out->detail_at = gi >= 0 ? cw->g[gi].detail_at : 0;
    out->listed_at = cw->listed_at[route];
    out->seen = cw->listed_at[route] ? cw->seen[route] : 0;
}

void bt_cloudwatch_resume_start(void *self)
{
    struct cw *cw = self;
    if (cw)
        cw->resumed = true;
}

void bt_cloudwatch_resume_set(void *self, int route, const struct bt_cw_resume *in)
{
    struct cw *cw = self;
    if (!cw || route < 0 || route >= cw->nroutes)
        return;
    cw->resumed = true;
    cw->settled[route] = in->settled;
    cw->settled_detail[route] = in->settled_detail;
    cw->settled_throttle[route] = in->settled_throttle;
    cw->listed_at[route] = in->listed_at;
    cw->seen[route] = in->seen & (SEEN_READ | SEEN_READ_ALT | SEEN_WRITE | SEEN_WRITE_ALT |
                                  SEEN_LEGACY | SEEN_TIER);
    /* the group's 5-minute tier is due when its oldest route's is */
    int gi = cw->group_of[route];
    if (gi >= 0) {
        struct cw_group *g = &cw->g[gi];
        bool first = true;
        for (int k = 0; k < g->ag->nroutes && g->ag->routes[k] != route; k++)
            first = false;
        if (first || in->detail_at < g->detail_at)
            g->detail_at = in->detail_at;
    }
}

unsigned long bt_cloudwatch_requests(void *self)
{
    const struct cw *cw = self;
    return cw ? cw->requests : 0;
}


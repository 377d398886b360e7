#include "collectors/promsource.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collectors/admission.h"
#include "collectors/skeleton.h"
#include "core/plausible.h"
#include "core/shares.h"
#include "net/http.h"
#include "net/loop.h"
#include "core/util.h"

#define RANGE_NAMES "bedtop_signal|bedtop_data_timestamp_seconds|bedtop_share_used_tokens_per_minute"
#define INSTANT_NAMES "bedtop_(quota_.*|source_last_.*|max_tokens|burndown)"
#define LIVE_BACKFILL (60 * 60)   /* seconds of history a live reader starts with */
#define ONCE_BACKFILL (15 * 60)   /* check: the minutes an evaluation reads (growth, staleness) */

bool bt_promsrc_parse(const char *src, char *base, size_t n)
{
    if (!src || strncmp(src, "prometheus+", 11) != 0)
        return false;
    return bt_adm_is_prometheus(src, base, n);
}

bool bt_promsrc_selector(const char *names, const char *matchers, char *out, size_t n)
{
    if (matchers && strpbrk(matchers, "{}\n\r"))
        return false;
    snprintf(out, n, "{__name__=~\"%s\"%s%s}", names, matchers && *matchers ? "," : "",
             matchers ? matchers : "");
    return true;
}

/* ---- ingestion (pure) ---- */

struct stamp {
    int route;
    int source;             /* BT_SRC_CLOUDWATCH or BT_SRC_ADMISSION */
    int64_t t;              /* evaluation step (ms, rounded) */
    int64_t minute;
};

static int stamp_cmp(const void *a, const void *b)
{
    const struct stamp *x = a, *y = b;
    if (x->route != y->route)
        return x->route < y->route ? -1 : 1;
    if (x->source != y->source)
        return x->source < y->source ? -1 : 1;
    return x->t < y->t ? -1 : x->t > y->t;
}

static int route_of(const struct bt_prom_series *s, const struct bt_config *cfg)
{
    const char *name = bt_prom_label(s, "route");
    return name ? bt_config_find_route(cfg, name) : -1;
}

static int source_of(const struct bt_prom_series *s)
{
    const char *src = bt_prom_label(s, "source");
    for (int i = 0; src && i < BT_SRC_COUNT; i++)
        if (!strcmp(src, bt_source_name((enum bt_source)i)))
            return i;
    return -1;
}

static int quota_source_of(const char *name)
{
    for (int i = 0; name && i <= BT_QS_DEFAULT; i++)
        if (!strcmp(name, bt_quota_source_name((enum bt_quota_source)i)))
            return i;
    return BT_QS_UNKNOWN;
}

static void quota_event(const struct bt_config *cfg, struct bt_store *st, int r,
                        enum bt_quota_kind kind, const struct bt_prom_series *s, int64_t at)
{
    struct bt_event ev = {.t = at, .type = BT_EV_QUOTA, .route = r,
                          .source = BT_SRC_QUOTAS, .quota_kind = kind, .value = s->value,
                          .quota_source = (enum bt_quota_source)quota_source_of(bt_prom_label(s, "source"))};
    const char *code = bt_prom_label(s, "code"), *name = bt_prom_label(s, "name");
    int mb = bt_quota_match_by_name(bt_prom_label(s, "matched_by"));
    ev.matched_by = mb < 0 ? BT_QM_NONE : (enum bt_quota_match)mb;
    bt_strlcpy(ev.code, code ? code : "", sizeof ev.code);
    bt_strlcpy(ev.text, name ? name : "", sizeof ev.text); /* BT_EV_QUOTA: the quota's name */
    /* every round reads the quotas again: only a change is an event (and a recorded line) */
    const struct bt_quota *q = &cfg->routes[r].quota[kind];
    if (q->value == ev.value && q->source == ev.quota_source && !strcmp(q->code, ev.code) &&
        !strcmp(q->name, ev.text) && cfg->routes[r].quota_match[kind] == ev.matched_by)
        return;
    bt_store_apply(st, &ev);
}

/* A route setting the poller reports, as the typed event a direct poll makes (so
 * a recording of --source replays as one of the poller would). */
static void setting_event(struct bt_store *st, int r, const struct bt_prom_series *s,
                          int64_t at, enum bt_setting k, const char *str)
{
    struct bt_event ev = {.t = at, .type = BT_EV_SETTING, .route = r,
                          .source = BT_SRC_QUOTAS, .setting = k, .value = s->value};
    bt_strlcpy(ev.str, str ? str : "", sizeof ev.str);
    bt_store_apply(st, &ev);
}

/* A route setting read back (max_tokens, burndown) holds to the bounds the
 * config does; one out of them is not used and the route's next OK says why. */
static bool setting_ok(const struct bt_prom_series *s, double max, struct bt_store *st, int r)
{
    char why[120], text[200];
    if (bt_setting_plausible(s->value, max, why, sizeof why))
        return true;
    snprintf(text, sizeof text, "implausible value: %s = %.9g: %s; not used", s->name, s->value,
             why);
    bt_store_refused(st, r, BT_SRC_CLOUDWATCH, text);
    return false;
}

/* Instant series: quotas, each source's last success/failure, route figures. */
static int ingest_instant(const struct bt_prom_series *s, const struct bt_config *cfg,
                          struct bt_store *st, int r, int64_t at)
{
    const struct bt_route *rt = &cfg->routes[r];
    const char *n = s->name;
    if (!strcmp(n, "bedtop_quota_tokens_per_minute")) {
        const char *kind = bt_prom_label(s, "kind");
        for (int k = 0; kind && k < BT_Q_COUNT; k++)
            if (!strcmp(kind, bt_quota_kind_name((enum bt_quota_kind)k)))
                quota_event(cfg, st, r, (enum bt_quota_kind)k, s, at);
    } else if (!strcmp(n, "bedtop_quota_tokens_per_day")) {
        quota_event(cfg, st, r, BT_Q_TPD, s, at);
    } else if (!strcmp(n, "bedtop_quota_requests_per_minute")) {
        quota_event(cfg, st, r, BT_Q_RPM, s, at);
    } else if (!strcmp(n, "bedtop_max_tokens")) {
        if (isnan(rt->max_tokens) && setting_ok(s, BT_MAX_TOKENS_SETTING, st, r))
            setting_event(st, r, s, at, BT_SET_MAX_TOKENS, NULL); /* the config's, else the poller's first */
    } else if (!strcmp(n, "bedtop_burndown")) {
        if (!setting_ok(s, BT_MAX_BURNDOWN, st, r))
            return 1;
        /* the poller's value and where it came from, unless this config sets one;
         * only a change is an event (every round reads it again) */
        const char *src = bt_prom_label(s, "source");
        const char *now = rt->burndown_source ? rt->burndown_source : "default";
        if (rt->endpoint == BT_EP_RUNTIME && strcmp(now, "config") != 0 &&
            (rt->burndown != s->value || strcmp(now, src ? src : "default") != 0))
            setting_event(st, r, s, at, BT_SET_BURNDOWN, src);
    } else {
        return 0;
    }
    return 1;
}

/* The poller's view of each source: OK at its last success, then an error at
 * its last failure when that is newer. */
static int ingest_status(const struct bt_prom_doc *doc, const struct bt_config *cfg,
                         struct bt_store *st)
{
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        const char *want = pass ? "bedtop_source_last_error_timestamp_seconds"
                                : "bedtop_source_last_success_timestamp_seconds";
        for (int i = 0; i < doc->nseries; i++) {
            const struct bt_prom_series *s = &doc->series[i];
            int r = route_of(s, cfg), src = source_of(s);
            int64_t t;
            if (strcmp(s->name, want) != 0 || r < 0 || src < 0 || !bt_time_from_double(s->value, &t))
                continue;
            struct bt_event ev = {.t = t, .type = pass ? BT_EV_ERROR : BT_EV_OK,
                                  .route = r, .source = (enum bt_source)src};
            if (pass) {
                char hm[8];
                bt_fmt_hhmm(ev.t, hm, sizeof hm);
                snprintf(ev.text, sizeof ev.text,
                         "failing since %s UTC as bedtop serve reports (its log says why)", hm);
            }
            bt_store_apply(st, &ev);
            n++;
        }
    }
    return n;
}

/* The quota_group label's value of each route (as serve writes it, core's one
 * rule for who shares a quota), sorted, for the share series' group label. */
struct group_of {
    char key[320];
    int route;
};

static int group_cmp(const void *a, const void *b)
{
    const struct group_of *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->route > y->route) - (x->route < y->route);
}

/* bedtop serve's team and tag shares, bedtop_share_used_tokens_per_minute{group,
 * by="team"|"tag",name}, read back as readings of the group's first route at its
 * admission scrape (the stamps), so core derives the group's shares from them
 * (bt_share_readback_id): a dashboard or check on --source shows who holds the quota
 * as serve does (no AWS call reads the tags here). Its unattributed is not read:
 * core takes it as the rest of the group's use. */
static int ingest_shares(const struct bt_prom_doc *doc, const struct bt_config *cfg,
                         struct bt_store *st, const struct stamp *stamps, int nst)
{
    struct group_of *g = NULL;
    int added = 0;
    for (int i = 0; i < doc->nseries; i++) {
        const struct bt_prom_series *s = &doc->series[i];
        if (strcmp(s->name, "bedtop_share_used_tokens_per_minute") != 0)
            continue;
        const char *by = bt_prom_label(s, "by"), *name = bt_prom_label(s, "name"),
                   *group = bt_prom_label(s, "group");
        int b = by ? bt_share_by_parse(by) : -1;
        if ((b != BT_SHARE_TEAM && b != BT_SHARE_TAG) || !name || !name[0] ||
            !group || !strcmp(name, BT_SHARE_UNATTRIBUTED) || !isfinite(s->value) || s->value < 0 ||
            !isfinite(s->time))
            continue;
        if (!g) {
            g = bt_xcalloc((size_t)cfg->nroutes + 1, sizeof *g);
            for (int r = 0; r < cfg->nroutes; r++) {
                bt_quota_group_key(&cfg->routes[r], g[r].key, sizeof g[r].key);
                if (g[r].key[0] == '|')
                    memmove(g[r].key, g[r].key + 1, strlen(g[r].key));
                g[r].route = r;
            }
            qsort(g, (size_t)cfg->nroutes, sizeof *g, group_cmp);
        }
        /* the group's first route: the lowest index with this key */
        int lo = 0, hi = cfg->nroutes;
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (strcmp(g[mid].key, group) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo >= cfg->nroutes || strcmp(g[lo].key, group) != 0)
            continue;
        int r = g[lo].route;
        /* at the admission scrape, else (no admission: tags) the CloudWatch minute,
         * where core reads them (core/shares.c readback_parts) */
        struct stamp key = {r, BT_SRC_ADMISSION, llround(s->time * 1000), 0};
        const struct stamp *at = bsearch(&key, stamps, (size_t)nst, sizeof *stamps, stamp_cmp);
        if (!at || !at->minute) {
            key.source = BT_SRC_CLOUDWATCH;
            at = bsearch(&key, stamps, (size_t)nst, sizeof *stamps, stamp_cmp);
        }
        if (!at || !at->minute)
            continue;
        struct bt_reading rd = {.route = r, .signal = BT_SIG_ADM_RESERVED_HELD,
                                .t = (double)at->minute, .value = s->value};
        if (!bt_share_readback_id((enum bt_share_by)b, name, rd.series, sizeof rd.series))
            continue;
        bt_store_reading(st, &rd, at->minute);
        added++;
    }
    free(g);
    return added;
}

int bt_promsrc_ingest(const struct bt_prom_doc *doc, const struct bt_config *cfg,
                      struct bt_store *st)
{
    int added = 0;
    int nst = 0;
    struct stamp *stamps = bt_xcalloc((size_t)doc->nseries + 1, sizeof *stamps);
    for (int i = 0; i < doc->nseries; i++) {
        const struct bt_prom_series *s = &doc->series[i];
        int r = route_of(s, cfg);
        int64_t at, minute;
        /* times from outside: a huge finite one is refused, not converted (UB) */
        if (r < 0 || r >= st->nroutes || !isfinite(s->value) || !bt_time_from_double(s->time, &at))
            continue;
        if (!strcmp(s->name, "bedtop_data_timestamp_seconds")) {
            int src = source_of(s);
            if ((src == BT_SRC_CLOUDWATCH || src == BT_SRC_ADMISSION) &&
                bt_time_from_double(s->value, &minute))
                stamps[nst++] = (struct stamp){r, src, llround(s->time * 1000), minute};
        } else {
            added += ingest_instant(s, cfg, st, r, at);
        }
    }
    qsort(stamps, (size_t)nst, sizeof *stamps, stamp_cmp);
    for (int i = 0; i < doc->nseries; i++) {
        const struct bt_prom_series *s = &doc->series[i];
        const char *name = bt_prom_label(s, "signal");
        int r = route_of(s, cfg);
        int sig = name ? bt_signal_by_name(name) : -1;
        int64_t arrival;
        if (strcmp(s->name, "bedtop_signal") != 0 || r < 0 || r >= st->nroutes || sig < 0)
            continue;
        bool adm = bt_signal_info[sig].source == BT_SRC_ADMISSION;
        if (!isfinite(s->value)) {
            /* bedtop serve leaves an unknown signal out, never NaN: a NaN or an
             * infinity is not "no traffic" (issue 37: all-NaN signals read as idle,
             * 100 %, exit 0). Refused as an implausible value is: the route's poll of
             * that source is an error, so its figures are unknown, not idle. */
            char why[160];
            snprintf(why, sizeof why, "not a number: bedtop_signal %s = %g from the source; not used",
                     bt_signal_info[sig].name, s->value);
            bt_store_refused(st, r, adm ? BT_SRC_ADMISSION : BT_SRC_CLOUDWATCH, why);
            continue;
        }
        if (!bt_time_from_double(s->time, &arrival))
            continue;
        struct stamp key = {r, adm ? BT_SRC_ADMISSION : BT_SRC_CLOUDWATCH, llround(s->time * 1000), 0};
        const struct stamp *at = bsearch(&key, stamps, (size_t)nst, sizeof *stamps, stamp_cmp);
        if (!at || !at->minute)
            continue;
        int64_t t = at->minute;
        if (bt_signal_daily((enum bt_signal)sig))
            t -= t % 86400; /* a day's sum sits at UTC midnight */
        struct bt_sample smp = {t, r, (enum bt_signal)sig, s->value};
        bt_store_add(st, &smp, arrival); /* refused there when dated after it arrived */
        added++;
    }
    added += ingest_shares(doc, cfg, st, stamps, nst);
    free(stamps);
    return added + ingest_status(doc, cfg, st);
}

/* ---- the collector ---- */

struct psrc;
struct psrc_req {
    struct psrc *p;
    bool range;
};

struct psrc {
    struct bt_collector_base b; /* first: the skeleton's (next; started: check mode's one
                                 * fetch is answered) */
    struct bt_ctx *ctx;
    char base[512];
    char shown[512];         /* base as messages and recordings show it (no password) */
    char range_sel[1024], instant_sel[1024];
    int64_t fetched_to;      /* end of the last successful range, 0 none */
    int inflight;
    bool failed;
    char err[224];
    struct psrc_req instant;
    struct psrc_req *range;  /* one per chunk of the window */
    int nrange;
    /* the chunks, asked once the instant answer (the quotas) is in: the share
     * series name a quota group, known from the quota (ingest_shares) */
    int64_t range_from, range_step, range_span, range_to;
    bool range_due;
};

static void fail_event(struct psrc *p)
{
    struct bt_event ev = {.t = (int64_t)time(NULL), .type = BT_EV_ERROR, .route = -1,
                          .source = BT_SRC_CLOUDWATCH};
    bt_fmt_cut(ev.text, sizeof ev.text, "prometheus %s: %s", p->shown, p->err);
    bt_store_apply(p->ctx->store, &ev);
}

static bool submit(struct psrc *p, struct psrc_req *q, const char *sel, int64_t from, int64_t to,
                   int64_t step);

static void submit_ranges(struct psrc *p)
{
    p->range_due = false;
    for (int k = 0; k < p->nrange; k++) {
        int64_t a = p->range_from + k * p->range_span;
        int64_t b = a + p->range_span < p->range_to ? a + p->range_span : p->range_to;
        p->range[k] = (struct psrc_req){p, true};
        submit(p, &p->range[k], p->range_sel, a, b, p->range_step);
    }
}

static void on_answer(void *arg, const struct bt_http_resp *resp)
{
    struct psrc_req *q = arg;
    struct psrc *p = q->p;
    p->inflight--;
    if (!q->range && p->range_due)
        p->inflight++; /* held: the chunks go out below, after the quotas are applied */
    if (resp->status != 200) {
        p->failed = true;
        if (resp->status == 0)
            bt_strlcpy_cut(p->err, resp->transport_error[0] ? resp->transport_error : "no answer",
                           sizeof p->err);
        else
            snprintf(p->err, sizeof p->err, "HTTP %ld %.160s", resp->status, resp->body);
    } else {
        struct bt_prom_doc doc;
        bt_prom_init(&doc);
        char err[200];
        if (bt_prom_parse_api(&doc, NULL, resp->body, resp->body_len, err, sizeof err))
            bt_promsrc_ingest(&doc, p->ctx->cfg, p->ctx->store);
        else {
            p->failed = true;
            snprintf(p->err, sizeof p->err, "%s", err);
        }
        bt_prom_free(&doc);
    }
    if (!q->range && p->range_due) {
        submit_ranges(p);
        p->inflight--;
    }
    if (p->inflight)
        return;
    if (p->failed)
        fail_event(p);
    p->b.started = true;
}

static bool submit(struct psrc *p, struct psrc_req *q, const char *sel, int64_t from, int64_t to,
                   int64_t step)
{
    struct bt_buf u = {0};
    bt_buf_printf(&u, "%s/api/v1/%s?query=", p->base, q->range ? "query_range" : "query");
    bt_http_url_escape(&u, sel);
    if (q->range) {
        bt_buf_printf(&u, "&start=%lld&end=%lld&step=%lld", (long long)from, (long long)to,
                      (long long)step);
    } else {
        bt_buf_printf(&u, "&time=%lld", (long long)to);
    }
    if (p->ctx->verbose)
        fprintf(stderr, "bedtop: prometheus %s %s\n", q->range ? "query_range" : "query", sel);
    struct bt_http_req req = {.method = "GET", .url = bt_buf_str(&u), .timeout = 10,
                              .max_attempts = 2, .label = "prometheus"};
    p->inflight++;
    bool sent = bt_http_submit(p->ctx->http, &req, on_answer, q) >= 0;
    if (!sent)
        p->inflight--;
    bt_buf_free(&u);
    return sent;
}

/* Work is out while a query is. */
static bool psrc_busy(void *self)
{
    return ((struct psrc *)self)->inflight > 0;
}

static void psrc_free(void *self)
{
    free(((struct psrc *)self)->range);
}

/* No AWS: the routes are not grouped. */
static const struct bt_collector_kind psrc_kind = {.free_self = psrc_free, .busy = psrc_busy};

static void *psrc_create(struct bt_ctx *ctx)
{
    char base[512];
    if (!ctx->http || !bt_promsrc_parse(ctx->source_url, base, sizeof base))
        return NULL;
    struct psrc *p = bt_xcalloc(1, sizeof *p);
    bt_collector_base_init(&p->b, &psrc_kind, ctx);
    p->ctx = ctx;
    bt_strlcpy(p->base, base, sizeof p->base);
    bt_url_redact(base, p->shown, sizeof p->shown);
    /* the share series by team, and by tag where attribute_by asks for one (by route
     * and project are derived again here) */
    struct bt_buf m = {0};
    bt_buf_puts(&m, ctx->cfg->attribute_tag[0] ? "by!~\"route|project\"" : "by!~\"route|project|tag\"");
    if (ctx->source_match && *ctx->source_match)
        bt_buf_printf(&m, ",%s", ctx->source_match);
    bt_promsrc_selector(RANGE_NAMES, bt_buf_str(&m), p->range_sel, sizeof p->range_sel);
    bt_buf_free(&m);
    bt_promsrc_selector(INSTANT_NAMES, ctx->source_match, p->instant_sel, sizeof p->instant_sel);
    p->instant = (struct psrc_req){p, false};
    return p;
}

static void psrc_tick(void *self, int64_t now)
{
    struct psrc *p = self;
    if (p->inflight || (p->ctx->mode == BT_MODE_ONCE && p->b.started))
        return;
    int64_t from, to = now;
    /* a window of minutes [from, to): minute m is exported from about m + 60 + lag
     * on, so the scrapes that carry the window's last minutes come after its end */
    if (p->ctx->window_to && p->ctx->window_to + 360 + (int64_t)p->ctx->cfg->cw_lag < now)
        to = p->ctx->window_to + 360 + (int64_t)p->ctx->cfg->cw_lag;
    if (p->ctx->window_from)
        from = p->ctx->window_from;
    else if (p->fetched_to && !p->failed)
        from = p->fetched_to - 120; /* overlap: a late scrape lands in a minute already read */
    else
        from = now - (p->ctx->mode == BT_MODE_ONCE ? ONCE_BACKFILL : LIVE_BACKFILL);
    p->failed = false;
    p->err[0] = '\0';
    /* every minute must be sampled (a step of at most 30 s), and one answer stays
     * under the parser's series bound: a long window goes in chunks */
    int64_t step = p->ctx->window_from ? 30 : BT_PROMSRC_STEP;
    /* a route's signals and data stamps, and at worst a group of its own with its
     * team (and tag) shares (top N, other, unattributed) */
    int top = p->ctx->cfg->share_top_n > 0 ? p->ctx->cfg->share_top_n : 10;
    int64_t per_route = (int64_t)BT_SIG_COUNT + 2 + (top + 2) * (p->ctx->cfg->attribute_tag[0] ? 2 : 1);
    int64_t points = (BT_PROM_MAX_SERIES * 9 / 10) / (per_route * (p->ctx->cfg->nroutes + 1));
    if (points > BT_PROMSRC_MAX_POINTS)
        points = BT_PROMSRC_MAX_POINTS;
    if (points < 10)
        points = 10;
    int64_t span = step * (points - 1);
    /* steps end exactly at `to`: the newest scrape is always read */
    from = to - (to - from + step - 1) / step * step;
    int n = (int)((to - from + span - 1) / span);
    if (n < 1)
        n = 1;
    free(p->range);
    p->range = bt_xcalloc((size_t)n, sizeof *p->range);
    p->nrange = n;
    p->range_from = from;
    p->range_to = to;
    p->range_step = step;
    p->range_span = span;
    p->range_due = true;
    p->inflight++; /* held until every request is queued */
    bool sent = submit(p, &p->instant, p->instant_sel, from, to, 0);
    if (p->range_due && !sent)
        submit_ranges(p); /* the instant query could not be sent: no answer to wait for */
    p->inflight--;
    p->fetched_to = to;
    double iv = p->ctx->cfg->interval > 0 ? p->ctx->cfg->interval : 60;
    p->b.next = now + (int64_t)iv;
}

const struct bt_collector_ops bt_promsource_collector =
    BT_COLLECTOR_SKELETON("prometheus", psrc_create, psrc_tick, NULL);

/* ---- discovery ---- */

/* Names already in cfg, for a linear dedupe: bt_config_find_route for each of
 * 40,000 answered routes took a minute (issue 37, with the memory of the routes). */
struct name_set {
    uint64_t *h;
    int *route;
    size_t cap;
};

static uint64_t name_hash(const char *p)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return h | 1; /* 0 marks an empty slot */
}

/* -1: not there (and slot set to where it goes) */
static int name_find(const struct name_set *ns, const struct bt_config *cfg, const char *name,
                     size_t *slot)
{
    uint64_t h = name_hash(name);
    size_t i = (size_t)h & (ns->cap - 1);
    for (; ns->h[i]; i = (i + 1) & (ns->cap - 1))
        if (ns->h[i] == h && !strcmp(cfg->routes[ns->route[i]].name, name))
            return ns->route[i];
    *slot = i;
    return -1;
}

int bt_promsrc_add_routes(const struct bt_prom_doc *doc, struct bt_config *cfg, const char *shown,
                          char *err, size_t errlen)
{
    struct name_set ns = {.cap = 64};
    while (ns.cap < 2 * ((size_t)cfg->nroutes + (size_t)doc->nseries) + 2)
        ns.cap *= 2;
    ns.h = bt_xcalloc(ns.cap, sizeof *ns.h);
    ns.route = bt_xcalloc(ns.cap, sizeof *ns.route);
    size_t slot;
    for (int r = 0; r < cfg->nroutes; r++)
        if (name_find(&ns, cfg, cfg->routes[r].name, &slot) < 0) {
            ns.h[slot] = name_hash(cfg->routes[r].name);
            ns.route[slot] = r;
        }
    int added = 0;
    for (int i = 0; i < doc->nseries; i++) {
        const struct bt_prom_series *s = &doc->series[i];
        const char *name = bt_prom_label(s, "route"), *model = bt_prom_label(s, "model_id");
        if (!name || !model || name_find(&ns, cfg, name, &slot) >= 0)
            continue;
        if (cfg->nroutes >= BT_PROMSRC_MAX_ROUTES) {
            /* a route is ~4 kB however short its name, and every one is evaluated:
             * an answer naming more is refused, not cut to an arbitrary part */
            snprintf(err, errlen,
                     "prometheus %s: more than %d routes in bedtop_route_status; narrow them "
                     "with --match", shown, BT_PROMSRC_MAX_ROUTES);
            added = -1;
            break;
        }
        int r = bt_config_add_route(cfg, name);
        ns.h[slot] = name_hash(name);
        ns.route[slot] = r;
        struct bt_route *rt = &cfg->routes[r];
        const char *region = bt_prom_label(s, "region"), *ep = bt_prom_label(s, "endpoint");
        const char *inf = bt_prom_label(s, "inference");
        bt_strlcpy(rt->model, model, sizeof rt->model);
        bt_strlcpy(rt->region, region ? region : "", sizeof rt->region);
        rt->endpoint = ep && !strcmp(ep, "mantle") ? BT_EP_MANTLE : BT_EP_RUNTIME;
        for (int k = BT_INF_ON_DEMAND; inf && k < BT_INF_COUNT; k++)
            if (!strcmp(inf, bt_inference_name((enum bt_inference)k))) {
                rt->inference = (enum bt_inference)k;
                rt->inference_set = true;
            }
        added++;
    }
    free(ns.h);
    free(ns.route);
    return added;
}

struct disc {
    bool done, ok;
    char err[224];
    struct bt_prom_doc doc;
};

static void disc_done(void *arg, const struct bt_http_resp *resp)
{
    struct disc *d = arg;
    d->done = true;
    if (resp->status != 200) {
        bt_strlcpy_cut(d->err, resp->status ? "the server answered an error" : resp->transport_error,
                       sizeof d->err);
        if (resp->status)
            snprintf(d->err, sizeof d->err, "HTTP %ld %.160s", resp->status, resp->body);
        return;
    }
    /* BT_PROMSRC_MAX_ROUTES routes are ~6 MB of answer; a tree is ~20 times its text,
     * so a larger answer is refused before it is parsed */
    if (resp->body_len > BT_PROMSRC_MAX_DISCOVERY) {
        snprintf(d->err, sizeof d->err,
                 "a discovery answer of %zu bytes (at most %d); narrow the routes with --match",
                 resp->body_len, BT_PROMSRC_MAX_DISCOVERY);
        return;
    }
    d->ok = bt_prom_parse_api(&d->doc, NULL, resp->body, resp->body_len, d->err, sizeof d->err);
}

static bool disc_finished(void *arg)
{
    return ((const struct disc *)arg)->done;
}

int bt_promsrc_discover(struct bt_ctx *ctx, struct bt_config *cfg, char *err, size_t errlen)
{
    char base[512], sel[1024], shown[512];
    bt_url_redact(ctx->source_url ? ctx->source_url : "", shown, sizeof shown);
    if (!bt_promsrc_parse(ctx->source_url, base, sizeof base)) {
        snprintf(err, errlen, "--source '%.200s' is not prometheus+http://HOST:PORT", shown);
        return -1;
    }
    bt_url_redact(base, shown, sizeof shown);
    if (!bt_promsrc_selector("bedtop_route_status", ctx->source_match, sel, sizeof sel)) {
        snprintf(err, errlen, "--match '%.200s': label matchers cannot hold { } or newlines",
                 ctx->source_match);
        return -1;
    }
    struct bt_buf u = {0};
    bt_buf_printf(&u, "%s/api/v1/query?query=", base);
    bt_http_url_escape(&u, sel);
    struct disc d = {0};
    bt_prom_init(&d.doc);
    struct bt_http_req req = {.method = "GET", .url = bt_buf_str(&u), .timeout = 10,
                              .max_attempts = 2, .label = "prometheus"};
    bt_http_submit(ctx->http, &req, disc_done, &d);
    bt_buf_free(&u);
    int sig = bt_loop_wait_http(ctx->http, disc_finished, &d);
    if (!d.done)
        bt_http_cancel(ctx->http, disc_done, &d); /* d is on this stack */
    if (sig && !d.done) {
        snprintf(err, errlen, "interrupted");
        bt_prom_free(&d.doc);
        return -1;
    }
    int added = -1;
    if (!d.done || !d.ok)
        snprintf(err, errlen, "prometheus %s: %s", shown, d.done ? d.err : "no answer");
    else
        added = bt_promsrc_add_routes(&d.doc, cfg, shown, err, errlen);
    bt_prom_free(&d.doc);
    return added;
}

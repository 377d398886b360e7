/* The admission collector: its sources, their rounds of scrapes or Prometheus
 * queries over the shared HTTP layer, and per-route ok/error events. What a
 * document says becomes readings in collectors/adm_ingest.c. */
#include "collectors/admission.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collectors/skeleton.h"
#include "net/http.h"
#include "core/util.h"

/* ---- the collector ----------------------------------------------------- */

struct adm;
struct adm_source;

/* The callback argument of one Prometheus query; lives in its source, so a
 * collector destroyed with queries in flight leaks nothing. */
struct api_req {
    struct adm_source *s;
    enum bt_signal sig;
};

struct adm_source {
    struct adm *a;
    char url[512];           /* scrape URL, or the Prometheus base URL */
    char shown[512];         /* url without user:password@, for messages */
    bool api;
    int route;               /* per-route source, -1 global or shared by several routes */
    int first;               /* the first route naming it (-1: the global URL only) */
    int only;                /* the one route naming it (-1: none, or several): the
                              * route of its series with neither label */
    bool *accept;            /* routes this source may write */
    bool *named;             /* routes naming this URL themselves: it speaks for them */
    bool *covered;           /* this round */
    bool *had;               /* covered by the last successful round */
    bool ever_ok;
    struct bt_adm_state *st;
    int inflight;
    bool failed;
    char err[224];
    char code[32];
    struct api_req q[BT_SIG_COUNT];
};

struct adm {
    struct bt_collector_base b; /* first: the skeleton's (next: the next round due, INT64_MAX
                                 * none or waiting; started: check mode's rounds are done) */
    struct bt_ctx *ctx;
    int nroutes;
    struct adm_source *src;
    int nsrc;
    double period;           /* seconds between rounds */
    double round_start;      /* wall time the current round began */
    int rounds_needed;       /* BT_MODE_ONCE: 2 with any scraped source, else 1 */
    int rounds_started, rounds_done;
    bool starting;           /* inside tick: a round is not over before all are queued */
};

#define NEVER INT64_MAX

static double now_real(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void add_source(struct adm *a, const char *url, int route)
{
    a->src = bt_xrealloc(a->src, (size_t)(a->nsrc + 1) * sizeof *a->src);
    struct adm_source *s = &a->src[a->nsrc++];
    memset(s, 0, sizeof *s);
    s->a = a;
    s->route = route;
    s->api = bt_adm_is_prometheus(url, s->url, sizeof s->url);
    if (!s->api)
        snprintf(s->url, sizeof s->url, "%s", url);
    bt_url_redact(url, s->shown, sizeof s->shown);
    size_t nr = (size_t)(a->nroutes ? a->nroutes : 1);
    s->accept = bt_xcalloc(nr, sizeof *s->accept);
    s->named = bt_xcalloc(nr, sizeof *s->named);
    s->covered = bt_xcalloc(nr, sizeof *s->covered);
    s->had = bt_xcalloc(nr, sizeof *s->had);
    s->st = bt_adm_state_new(a->nroutes);
}

static void event(struct adm *a, struct adm_source *s, int route, enum bt_event_type type,
                  const char *code, const char *text)
{
    struct bt_event ev = {.t = (int64_t)now_real(), .type = type, .route = route,
                          .source = BT_SRC_ADMISSION};
    bt_strlcpy(ev.code, code, sizeof ev.code);
    snprintf(ev.text, sizeof ev.text, "admission %.120s: %s", s->shown, text);
    bt_store_apply(a->ctx->store, &ev);
}

static void source_fail(struct adm_source *s, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void source_fail(struct adm_source *s, const char *code, const char *fmt, ...)
{
    if (s->failed)
        return; /* the first failure of a round explains it */
    s->failed = true;
    bt_strlcpy(s->code, code, sizeof s->code);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
}

static void round_check(struct adm *a);

/* The round of one source is over: report per route and account the round. */
static void source_done(struct adm_source *s)
{
    struct adm *a = s->a;
    for (int r = 0; r < a->nroutes; r++) {
        if (!s->accept[r])
            continue;
        if (s->failed) {
            /* only the routes this source speaks for go stale */
            bool mine = s->named[r] || s->had[r] || !s->ever_ok;
            if (mine)
                event(a, s, r, BT_EV_ERROR, s->code, s->err);
        } else if (s->covered[r]) {
            event(a, s, r, BT_EV_OK, "", "ok");
        } else if (s->named[r] || s->had[r]) {
            char msg[160];
            snprintf(msg, sizeof msg, "no bedrock_admission_* series for route %.64s",
                     a->ctx->cfg->routes[r].name);
            event(a, s, r, BT_EV_ERROR, "NoSeries", msg);
        }
    }
    if (!s->failed) {
        s->ever_ok = true;
        memcpy(s->had, s->covered, (size_t)a->nroutes * sizeof *s->had);
    }
    round_check(a);
}

static void round_check(struct adm *a)
{
    if (a->starting || a->rounds_done >= a->rounds_started)
        return;
    for (int i = 0; i < a->nsrc; i++)
        if (a->src[i].inflight)
            return;
    a->rounds_done++;
    if (a->ctx->mode == BT_MODE_ONCE) {
        a->b.started = a->rounds_done >= a->rounds_needed; /* busy until then */
        /* the second scrape is due a gap after the first began */
        int64_t due = (int64_t)ceil(a->round_start + a->period);
        int64_t now = (int64_t)now_real();
        a->b.next = a->rounds_started < a->rounds_needed ? (due > now ? due : now) : NEVER;
    }
}

static bool response_error(struct adm_source *s, const struct bt_http_resp *resp)
{
    if (resp->status == 0) {
        source_fail(s, "Transport", "%s",
                    resp->transport_error[0] ? resp->transport_error : "no answer");
        return true;
    }
    if (resp->status != 200) {
        source_fail(s, "HTTP", "HTTP %ld%s%.120s", resp->status,
                    resp->error_message[0] ? ": " : "", resp->error_message);
        return true;
    }
    if (resp->body_len > BT_ADM_MAX_BODY) {
        source_fail(s, "TooLarge", "answer larger than %u bytes", BT_ADM_MAX_BODY);
        return true;
    }
    return false;
}

static bool looks_json(const struct bt_http_resp *resp)
{
    if (strstr(resp->content_type, "json"))
        return true;
    for (size_t i = 0; i < resp->body_len; i++)
        if (!isspace((unsigned char)resp->body[i]))
            return resp->body[i] == '{';
    return false;
}

static void on_scrape(void *arg, const struct bt_http_resp *resp)
{
    struct adm_source *s = arg;
    struct adm *a = s->a;
    s->inflight--;
    if (!response_error(s, resp)) {
        struct bt_prom_doc doc;
        bt_prom_init(&doc);
        char err[200];
        bool json = looks_json(resp);
        bool ok = json ? bt_prom_parse_json(&doc, resp->body, resp->body_len, err, sizeof err)
                       : bt_prom_parse(&doc, resp->body, resp->body_len,
                                       bt_prom_format_of(resp->content_type), err, sizeof err);
        if (ok) {
            struct bt_adm_scope sc = {a->ctx->cfg->routes, a->nroutes, s->route, s->accept};
            bt_adm_ingest(s->st, &doc, &sc, now_real(), a->ctx->store, s->covered);
        } else {
            source_fail(s, "Parse", "%s", err);
        }
        bt_prom_free(&doc);
    }
    source_done(s);
}

static void on_query(void *arg, const struct bt_http_resp *resp)
{
    struct api_req *q = arg;
    struct adm_source *s = q->s;
    struct adm *a = s->a;
    s->inflight--;
    if (!response_error(s, resp)) {
        struct bt_prom_doc doc;
        bt_prom_init(&doc);
        char err[200];
        if (bt_prom_parse_api(&doc, bt_signal_info[q->sig].metric, resp->body, resp->body_len,
                              err, sizeof err)) {
            struct bt_adm_scope sc = {a->ctx->cfg->routes, a->nroutes, s->route, s->accept};
            bt_adm_ingest_api(&doc, q->sig, &sc, now_real(), a->ctx->store, s->covered);
        } else {
            source_fail(s, "Query", "%s: %s", bt_signal_info[q->sig].name, err);
        }
        bt_prom_free(&doc);
    }
    if (!s->inflight)
        source_done(s);
}

static void start_source(struct adm *a, struct adm_source *s)
{
    memset(s->covered, 0, (size_t)a->nroutes * sizeof *s->covered);
    s->failed = false;
    s->err[0] = s->code[0] = '\0';
    double timeout = a->period < 1 ? 1 : a->period > 10 ? 10 : a->period;
    struct bt_http_req req = {.method = "GET", .timeout = timeout, .max_attempts = 1,
                              .label = "admission"};
    if (!s->api) {
        static const struct bt_header accept = {
            "Accept", "application/openmetrics-text;version=1.0.0;q=0.9,"
                      "text/plain;version=0.0.4;q=0.5,application/json;q=0.4,*/*;q=0.1"};
        req.url = s->url;
        req.headers = &accept;
        req.nheaders = 1;
        s->inflight++;
        if (bt_http_submit(a->ctx->http, &req, on_scrape, s) < 0) {
            s->inflight--;
            source_fail(s, "Submit", "cannot queue the request");
            source_done(s);
        }
        return;
    }
    /* a Prometheus server: one instant query per admission signal */
    s->inflight++; /* held until every query is queued */
    for (int i = 0; i < BT_SIG_COUNT; i++) {
        char query[512];
        if (!bt_adm_query((enum bt_signal)i, query, sizeof query))
            continue;
        if (a->ctx->verbose)
            fprintf(stderr, "bedtop: admission query %s: %s\n", s->shown, query);
        struct bt_buf u = {0};
        bt_buf_printf(&u, "%s/api/v1/query?query=", s->url);
        bt_http_url_escape(&u, query);
        struct api_req *q = &s->q[i];
        *q = (struct api_req){s, (enum bt_signal)i};
        req.url = bt_buf_str(&u);
        s->inflight++;
        if (bt_http_submit(a->ctx->http, &req, on_query, q) < 0) {
            s->inflight--;
            source_fail(s, "Submit", "cannot queue the request");
        }
        bt_buf_free(&u);
    }
    s->inflight--;
    if (!s->inflight)
        source_done(s);
}

static bool adm_busy(void *self);
static void adm_free(void *self);
/* No AWS: the routes are not grouped; the sources are the instance's own. */
static const struct bt_collector_kind adm_kind = {.free_self = adm_free, .busy = adm_busy};

static void *adm_create(struct bt_ctx *ctx)
{
    const struct bt_config *cfg = ctx->cfg;
    int nr = cfg->nroutes < ctx->store->nroutes ? cfg->nroutes : ctx->store->nroutes;
    if (!ctx->http || nr <= 0)
        return NULL;
    struct adm *a = bt_xcalloc(1, sizeof *a);
    a->ctx = ctx;
    a->nroutes = nr;
    const char *global = ctx->admission_url && *ctx->admission_url ? ctx->admission_url
                                                                   : cfg->admission;
    bool any_left = false;
    for (int r = 0; r < nr; r++) {
        if (!cfg->routes[r].admission[0]) {
            any_left = true;
            continue;
        }
        /* one scrape per URL a round, whatever routes name it: a URL several routes
         * name speaks for each by its route (or model_id) labels */
        int k = 0;
        while (k < a->nsrc && strcmp(cfg->routes[a->src[k].first].admission, cfg->routes[r].admission) != 0)
            k++;
        if (k < a->nsrc) {
            a->src[k].route = -1; /* shared: no route is "the scraped one" */
            a->src[k].accept[r] = true;
            a->src[k].named[r] = true;
            a->src[k].only = -1;
            continue;
        }
        add_source(a, cfg->routes[r].admission, r);
        a->src[a->nsrc - 1].accept[r] = true;
        a->src[a->nsrc - 1].named[r] = true;
        a->src[a->nsrc - 1].first = r;
        a->src[a->nsrc - 1].only = r;
    }
    if (global && *global && any_left) {
        /* the global URL is one of the routes' own: that one scrape speaks for them
         * too (by their route or model_id labels), not a second scrape of it */
        int k = 0;
        while (k < a->nsrc && strcmp(cfg->routes[a->src[k].first].admission, global) != 0)
            k++;
        if (k == a->nsrc) {
            add_source(a, global, -1);
            a->src[k].first = a->src[k].only = -1;
        }
        /* a series with neither label stays the one naming route's, as it was on
         * its own URL; labelled ones go to the routes they name that it serves */
        a->src[k].route = a->src[k].only;
        for (int r = 0; r < nr; r++)
            if (!cfg->routes[r].admission[0])
                a->src[k].accept[r] = true;
    }
    if (!a->nsrc) {
        free(a);
        return NULL;
    }
    bt_collector_base_init(&a->b, &adm_kind, ctx);
    a->rounds_needed = 1;
    for (int i = 0; i < a->nsrc; i++)
        if (!a->src[i].api)
            a->rounds_needed = 2;
    if (ctx->mode == BT_MODE_ONCE)
        a->period = cfg->admission_gap > 0 ? cfg->admission_gap : 5;
    else
        a->period = cfg->interval > 0 && cfg->interval < BT_ADM_INTERVAL ? cfg->interval
                                                                        : BT_ADM_INTERVAL;
    a->b.next = 0;
    return a;
}

static void adm_tick(void *self, int64_t now)
{
    struct adm *a = self;
    if (a->ctx->mode == BT_MODE_ONCE) {
        if (now < a->b.next)
            return; /* the loop's first tick is forced: the gap still holds */
        if (a->rounds_started >= a->rounds_needed || a->rounds_done < a->rounds_started)
            return;
        a->b.next = NEVER; /* set again when this round is over */
    } else {
        /* an early (forced, e.g. refresh) tick scrapes now */
        a->b.next = now + (int64_t)ceil(a->period);
    }
    a->round_start = now_real();
    a->rounds_started++;
    a->starting = true;
    for (int i = 0; i < a->nsrc; i++) {
        struct adm_source *s = &a->src[i];
        if (s->inflight)
            continue; /* still waiting on the last round: that source goes stale */
        start_source(a, s);
    }
    a->starting = false;
    round_check(a);
}

/* Work is out while a source's scrape or query is. */
static bool adm_busy(void *self)
{
    struct adm *a = self;
    for (int i = 0; i < a->nsrc; i++)
        if (a->src[i].inflight)
            return true;
    return false;
}

static void adm_free(void *self)
{
    struct adm *a = self;
    for (int i = 0; i < a->nsrc; i++) {
        free(a->src[i].accept);
        free(a->src[i].named);
        free(a->src[i].covered);
        free(a->src[i].had);
        bt_adm_state_free(a->src[i].st);
    }
    free(a->src);
}

const struct bt_collector_ops bt_admission_collector =
    BT_COLLECTOR_SKELETON("admission", adm_create, adm_tick, NULL);

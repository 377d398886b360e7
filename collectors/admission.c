#include "collectors/admission.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/http.h"
#include "core/util.h"

/* ---- signals, from the BT_SIGNALS table ------------------------------- */

enum adm_kind { ADM_NONE, ADM_GAUGE, ADM_COUNTER, ADM_QUANTILE };

static enum adm_kind kind_of(enum bt_signal sig)
{
    const struct bt_signal_info *si = &bt_signal_info[sig];
    if (si->source != BT_SRC_ADMISSION || !si->metric)
        return ADM_NONE;
    if (si->stat)
        return ADM_QUANTILE;
    size_t n = strlen(si->metric);
    return n > 6 && strcmp(si->metric + n - 6, "_total") == 0 ? ADM_COUNTER : ADM_GAUGE;
}

/* "p50" -> 0.5, "p99" -> 0.99 */
static double quantile_of(enum bt_signal sig)
{
    const char *st = bt_signal_info[sig].stat;
    double q;
    if (!st || st[0] != 'p' || !bt_parse_double(st + 1, &q))
        return NAN;
    return q / 100.0;
}

/* The signal a series name reports; *bucket set for the histogram's _bucket. */
static int signal_of_name(const char *name, bool *bucket)
{
    *bucket = false;
    for (int i = 0; i < BT_SIG_COUNT; i++) {
        enum adm_kind k = kind_of((enum bt_signal)i);
        const char *m = bt_signal_info[i].metric;
        if (k == ADM_GAUGE || k == ADM_COUNTER) {
            if (strcmp(name, m) == 0)
                return i;
        } else if (k == ADM_QUANTILE) {
            size_t n = strlen(m);
            if (strncmp(name, m, n) == 0 && strcmp(name + n, "_bucket") == 0) {
                *bucket = true;
                return i;
            }
        }
    }
    return -1;
}

/* The identity without the label `skip` (a histogram's le), or with every label. */
static void series_id(const struct bt_prom_series *s, const char *skip, char *out, size_t n)
{
    /* Prometheus's identity of a series: its labels (here sorted by name, so the
     * order a worker prints them in does not matter) */
    struct bt_buf b = {0};
    const char *last = NULL;
    for (int k = 0; k < s->nlabels; k++) {
        const struct bt_prom_label *next = NULL;
        for (int i = 0; i < s->nlabels; i++) {
            const struct bt_prom_label *l = &s->labels[i];
            if ((!last || strcmp(l->name, last) > 0) && (!next || strcmp(l->name, next->name) < 0))
                next = l;
        }
        if (!next)
            break;
        last = next->name;
        if (skip && !strcmp(next->name, skip))
            continue;
        bt_buf_printf(&b, "%s%s=\"", b.len ? "," : "", next->name);
        for (const char *p = next->value; *p; p++) {
            if (*p == '"' || *p == '\\')
                bt_buf_putc(&b, '\\');
            if (*p == '\n')
                bt_buf_puts(&b, "\\n");
            else
                bt_buf_putc(&b, *p);
        }
        bt_buf_putc(&b, '"');
    }
    const char *id = bt_buf_str(&b);
    if (strlen(id) < n) {
        snprintf(out, n, "%s", id);
    } else {
        /* too long to keep whole: a 64-bit FNV-1a of it names the series */
        uint64_t h = 1469598103934665603ULL;
        for (const char *p = id; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        snprintf(out, n, "#%016llx", (unsigned long long)h);
    }
    bt_buf_free(&b);
}

void bt_adm_series_id(const struct bt_prom_series *s, char *out, size_t n)
{
    series_id(s, NULL, out, n);
}

int bt_adm_route_of(const struct bt_prom_series *s, const struct bt_adm_scope *sc)
{
    const char *r = bt_prom_label(s, "route");
    if (r && *r) {
        for (int i = 0; i < sc->nroutes; i++)
            if (strcmp(sc->routes[i].name, r) == 0)
                return i;
        return -1;
    }
    const char *m = bt_prom_label(s, "model_id");
    if (m && *m) {
        int sr = sc->scraped_route;
        if (sr >= 0 && sr < sc->nroutes && strcmp(sc->routes[sr].model, m) == 0)
            return sr;
        for (int i = 0; i < sc->nroutes; i++)
            if (strcmp(sc->routes[i].model, m) == 0)
                return i;
        return -1;
    }
    return sc->scraped_route < sc->nroutes ? sc->scraped_route : -1;
}

static int route_in_scope(const struct bt_prom_series *s, const struct bt_adm_scope *sc)
{
    int r = bt_adm_route_of(s, sc);
    if (r < 0 || (sc->accept && !sc->accept[r]))
        return -1;
    if (sc->scraped_route >= 0 && r != sc->scraped_route)
        return -1; /* a per-route URL speaks for its own route only */
    return r;
}

bool bt_adm_is_prometheus(const char *url, char *base, size_t n)
{
    static const char *const schemes[] = {"prometheus+http://", "prometheus+https://"};
    for (size_t i = 0; i < BT_ARRAY_LEN(schemes); i++) {
        size_t sl = strlen(schemes[i]);
        if (strncmp(url, schemes[i], sl) == 0) {
            snprintf(base, n, "%s", url + strlen("prometheus+"));
            size_t bl = strlen(base);
            while (bl && base[bl - 1] == '/')
                base[--bl] = '\0';
            return true;
        }
    }
    const char *q = strstr(url, "/api/v1/query");
    if (!q)
        return false;
    snprintf(base, n, "%.*s", (int)(q - url), url);
    return true;
}

bool bt_adm_query(enum bt_signal sig, char *out, size_t n)
{
    const char *m = bt_signal_info[sig].metric;
    switch (kind_of(sig)) {
    case ADM_COUNTER:
        snprintf(out, n, "sum by (route, model_id) (rate(%s[2m])) * 60", m);
        return true;
    case ADM_GAUGE:
        /* a fleet's allowance is the largest requested, not their sum */
        snprintf(out, n, "%s by (route, model_id) (%s)",
                 sig == BT_SIG_ADM_MAX_TOKENS ? "max" : "sum", m);
        return true;
    case ADM_QUANTILE:
        snprintf(out, n,
                 "histogram_quantile(%g, sum by (route, model_id, le) (rate(%s_bucket[5m])))",
                 quantile_of(sig), m);
        return true;
    case ADM_NONE:
        break;
    }
    return false;
}

/* ---- rate state and ingestion ----------------------------------------- */

struct adm_hist {
    struct bt_prom_bucket *b;
    size_t n, cap;
};

/* A route's histogram series (one per worker: the labels but le), cumulative. */
struct adm_hseries {
    char id[BT_SERIES_ID];
    struct adm_hist h;
};

struct adm_hset {
    struct adm_hseries *s;
    int n, cap;
};

static void hset_free(struct adm_hset *set)
{
    for (int i = 0; i < set->n; i++)
        free(set->s[i].h.b);
    free(set->s);
    *set = (struct adm_hset){0};
}

/* The series id of set (NULL when absent and !add). */
static struct adm_hist *hset_get(struct adm_hset *set, const char *id, bool add)
{
    for (int i = 0; i < set->n; i++)
        if (!strcmp(set->s[i].id, id))
            return &set->s[i].h;
    if (!add)
        return NULL;
    if (set->n == set->cap) {
        set->cap = set->cap ? set->cap * 2 : 4;
        set->s = bt_xrealloc(set->s, (size_t)set->cap * sizeof *set->s);
    }
    struct adm_hseries *e = &set->s[set->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->id, sizeof e->id, "%s", id);
    return &e->h;
}

struct adm_route_state {
    struct adm_hset prev;    /* each series' cumulative buckets at the previous scrape */
};

struct bt_adm_state {
    int nroutes;
    struct adm_route_state *r;
};

struct bt_adm_state *bt_adm_state_new(int nroutes)
{
    struct bt_adm_state *st = bt_xcalloc(1, sizeof *st);
    st->nroutes = nroutes;
    st->r = bt_xcalloc((size_t)(nroutes ? nroutes : 1), sizeof *st->r);
    return st;
}

void bt_adm_state_free(struct bt_adm_state *st)
{
    if (!st)
        return;
    for (int i = 0; i < st->nroutes; i++)
        hset_free(&st->r[i].prev);
    free(st->r);
    free(st);
}

static void hist_add(struct adm_hist *h, double le, double count)
{
    for (size_t i = 0; i < h->n; i++) {
        if (h->b[i].le == le) {
            h->b[i].count += count;
            return;
        }
    }
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 16;
        h->b = bt_xrealloc(h->b, h->cap * sizeof *h->b);
    }
    h->b[h->n++] = (struct bt_prom_bucket){le, count};
}

static int bucket_cmp(const void *a, const void *b)
{
    double x = ((const struct bt_prom_bucket *)a)->le, y = ((const struct bt_prom_bucket *)b)->le;
    return x < y ? -1 : x > y;
}

/* Per route, what one scrape's gauges and histogram series said. */
struct adm_acc {
    bool has[BT_SIG_COUNT];
    double v[BT_SIG_COUNT];
    struct adm_hset hist;
};

static void store(struct bt_store *s, int route, enum bt_signal sig, double v, double now)
{
    if (isnan(v))
        return; /* no value; an infinity is refused by the store, with the reason */
    int64_t t = (int64_t)floor(now);
    bt_store_add(s, &(struct bt_sample){.t = t, .route = route, .signal = sig, .value = v}, t);
}

/* Output-token quantiles: the buckets' increases since the previous scrape,
 * per series (a series that went down restarted: its buckets are its increase)
 * and summed, when calls completed in between; else the cumulative buckets
 * summed over the series (see admission.h). */
static int ingest_hist(struct adm_route_state *rs, struct adm_hset *set, int route, double now,
                       struct bt_store *s)
{
    struct adm_hist sum = {0}, inc = {0};
    bool recent = false;
    for (int k = 0; k < set->n; k++) {
        struct adm_hist *c = &set->s[k].h, *p = hset_get(&rs->prev, set->s[k].id, false);
        qsort(c->b, c->n, sizeof *c->b, bucket_cmp);
        for (size_t i = 0; i < c->n; i++)
            hist_add(&sum, c->b[i].le, c->b[i].count);
        if (!p || p->n != c->n || !c->n)
            continue; /* first seen, or its buckets changed: no increase of its own */
        bool same = true, reset = false;
        for (size_t i = 0; i < c->n && same; i++) {
            same = p->b[i].le == c->b[i].le;
            reset = reset || c->b[i].count < p->b[i].count;
        }
        double new_calls = c->b[c->n - 1].count - (reset ? 0 : p->b[c->n - 1].count);
        if (!same || new_calls <= 0)
            continue;
        for (size_t i = 0; i < c->n; i++)
            hist_add(&inc, c->b[i].le, c->b[i].count - (reset ? 0 : p->b[i].count));
        recent = true;
    }
    struct adm_hist *cur = recent ? &inc : &sum;
    qsort(cur->b, cur->n, sizeof *cur->b, bucket_cmp);
    struct bt_prom_bucket *use = cur->b;
    int added = 0;
    for (int i = 0; i < BT_SIG_COUNT; i++) {
        if (kind_of((enum bt_signal)i) != ADM_QUANTILE)
            continue;
        struct bt_prom_bucket *tmp = bt_xmalloc((cur->n ? cur->n : 1) * sizeof *tmp);
        if (cur->n)
            memcpy(tmp, use, cur->n * sizeof *tmp);
        double q = bt_prom_quantile(quantile_of((enum bt_signal)i), tmp, cur->n);
        free(tmp);
        if (isfinite(q)) {
            store(s, route, (enum bt_signal)i, q, now);
            added++;
        }
    }
    free(sum.b);
    free(inc.b);
    hset_free(&rs->prev);
    rs->prev = *set;
    *set = (struct adm_hset){0};
    return added;
}

int bt_adm_ingest(struct bt_adm_state *st, const struct bt_prom_doc *doc,
                  const struct bt_adm_scope *sc, double now, struct bt_store *s, bool *covered)
{
    int nread = 0;
    int nr = sc->nroutes < st->nroutes ? sc->nroutes : st->nroutes;
    struct adm_acc *acc = bt_xcalloc((size_t)(nr ? nr : 1), sizeof *acc);
    for (int i = 0; i < doc->nseries; i++) {
        const struct bt_prom_series *se = &doc->series[i];
        bool bucket;
        int sig = signal_of_name(se->name, &bucket);
        if (sig < 0 || isnan(se->value))
            continue;
        int r = route_in_scope(se, sc);
        if (r < 0 || r >= nr)
            continue;
        struct adm_acc *a = &acc[r];
        if (bucket) {
            const char *le = bt_prom_label(se, "le");
            double lev;
            if (!le)
                continue;
            if (strcmp(le, "+Inf") == 0 || strcmp(le, "Inf") == 0)
                lev = INFINITY;
            else if (!bt_parse_double(le, &lev))
                continue;
            char id[BT_SERIES_ID];
            series_id(se, "le", id, sizeof id);
            hist_add(hset_get(&a->hist, id, true), lev, se->value);
            covered[r] = true;
            continue;
        }
        covered[r] = true;
        if (kind_of((enum bt_signal)sig) == ADM_COUNTER) {
            /* a raw reading per series: core rates it per series, then sums */
            struct bt_reading rd = {.route = r, .signal = (enum bt_signal)sig,
                                    .t = se->has_time ? se->time : now, .value = se->value};
            bt_adm_series_id(se, rd.series, sizeof rd.series);
            bt_store_reading(s, &rd, (int64_t)floor(now));
            nread++;
            continue;
        }
        if (!a->has[sig]) {
            a->has[sig] = true;
            a->v[sig] = se->value;
        } else {
            /* gauges of one route's series (its workers) are summed at this scrape,
             * but max_tokens is the largest allowance any of them requests */
            a->v[sig] = sig == BT_SIG_ADM_MAX_TOKENS ? fmax(a->v[sig], se->value)
                                                    : a->v[sig] + se->value;
        }
    }
    int added = nread;
    for (int r = 0; r < nr; r++) {
        struct adm_acc *a = &acc[r];
        struct adm_route_state *rs = &st->r[r];
        if (!covered[r]) {
            hset_free(&a->hist);
            continue;
        }
        for (int i = 0; i < BT_SIG_COUNT; i++) {
            enum adm_kind k = kind_of((enum bt_signal)i);
            if (k == ADM_GAUGE && a->has[i]) {
                store(s, r, (enum bt_signal)i, a->v[i], now);
                added++;
            }
        }
        if (a->hist.n)
            added += ingest_hist(rs, &a->hist, r, now, s);
        hset_free(&a->hist);
    }
    free(acc);
    return added;
}

int bt_adm_ingest_api(const struct bt_prom_doc *doc, enum bt_signal sig,
                      const struct bt_adm_scope *sc, double now, struct bt_store *s,
                      bool *covered)
{
    enum adm_kind k = kind_of(sig);
    if (k == ADM_NONE)
        return 0;
    int nr = sc->nroutes;
    double *v = bt_xcalloc((size_t)(nr ? nr : 1), sizeof *v);
    bool *has = bt_xcalloc((size_t)(nr ? nr : 1), sizeof *has);
    for (int i = 0; i < doc->nseries; i++) {
        const struct bt_prom_series *se = &doc->series[i];
        int r = route_in_scope(se, sc);
        if (r < 0 || isnan(se->value))
            continue;
        bool sum = k == ADM_COUNTER || (k == ADM_GAUGE && sig != BT_SIG_ADM_MAX_TOKENS);
        v[r] = !has[r] ? se->value : sum ? v[r] + se->value : fmax(v[r], se->value);
        has[r] = true;
    }
    int added = 0;
    for (int r = 0; r < nr; r++) {
        if (!has[r])
            continue;
        covered[r] = true;
        store(s, r, sig, v[r], now);
        added++;
    }
    free(v);
    free(has);
    return added;
}

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
    int route;               /* per-route source, -1 global */
    bool *accept;            /* routes this source may write */
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
    struct bt_ctx *ctx;
    int nroutes;
    struct adm_source *src;
    int nsrc;
    double period;           /* seconds between rounds */
    int64_t next;            /* next round due (INT64_MAX: none / waiting) */
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
            bool mine = s->route >= 0 || s->had[r] || !s->ever_ok;
            if (mine)
                event(a, s, r, BT_EV_ERROR, s->code, s->err);
        } else if (s->covered[r]) {
            event(a, s, r, BT_EV_OK, "", "ok");
        } else if (s->route >= 0 || s->had[r]) {
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
        /* the second scrape is due a gap after the first began */
        int64_t due = (int64_t)ceil(a->round_start + a->period);
        int64_t now = (int64_t)now_real();
        a->next = a->rounds_started < a->rounds_needed ? (due > now ? due : now) : NEVER;
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
        add_source(a, cfg->routes[r].admission, r);
        a->src[a->nsrc - 1].accept[r] = true;
    }
    if (global && *global && any_left) {
        add_source(a, global, -1);
        for (int r = 0; r < nr; r++)
            a->src[a->nsrc - 1].accept[r] = !cfg->routes[r].admission[0];
    }
    if (!a->nsrc) {
        free(a);
        return NULL;
    }
    a->rounds_needed = 1;
    for (int i = 0; i < a->nsrc; i++)
        if (!a->src[i].api)
            a->rounds_needed = 2;
    if (ctx->mode == BT_MODE_ONCE)
        a->period = cfg->admission_gap > 0 ? cfg->admission_gap : 5;
    else
        a->period = cfg->interval > 0 && cfg->interval < BT_ADM_INTERVAL ? cfg->interval
                                                                        : BT_ADM_INTERVAL;
    a->next = 0;
    return a;
}

static void adm_tick(void *self, int64_t now)
{
    struct adm *a = self;
    if (a->ctx->mode == BT_MODE_ONCE) {
        if (now < a->next)
            return; /* the loop's first tick is forced: the gap still holds */
        if (a->rounds_started >= a->rounds_needed || a->rounds_done < a->rounds_started)
            return;
        a->next = NEVER; /* set again when this round is over */
    } else {
        /* an early (forced, e.g. refresh) tick scrapes now */
        a->next = now + (int64_t)ceil(a->period);
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

static int64_t adm_next_due(void *self)
{
    return ((struct adm *)self)->next;
}

static bool adm_busy(void *self)
{
    struct adm *a = self;
    if (a->ctx->mode == BT_MODE_ONCE && a->rounds_done < a->rounds_needed)
        return true;
    for (int i = 0; i < a->nsrc; i++)
        if (a->src[i].inflight)
            return true;
    return false;
}

static void adm_destroy(void *self)
{
    struct adm *a = self;
    if (!a)
        return;
    for (int i = 0; i < a->nsrc; i++) {
        free(a->src[i].accept);
        free(a->src[i].covered);
        free(a->src[i].had);
        bt_adm_state_free(a->src[i].st);
    }
    free(a->src);
    free(a);
}

const struct bt_collector_ops bt_admission_collector = {
    .name = "admission",
    .create = adm_create,
    .tick = adm_tick,
    .next_due = adm_next_due,
    .busy = adm_busy,
    .destroy = adm_destroy,
};

/* Admission documents to readings: which signal a series reports, its identity,
 * the route it speaks for, and the hand-off to core (counter readings per series,
 * gauges summed per route, output-token quantiles). The collector that fetches
 * the documents is collectors/adm_collect.c. */
#include "collectors/admission.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/shares.h"
#include "core/sanitize.h"
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
        bt_label_escape_buf(&b, next->value);
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
    if (sc->scraped_route >= 0 && !sc->accept && r != sc->scraped_route)
        return -1; /* a per-route URL speaks for its own route only (else: accept says) */
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

/* The in-flight and held gauges per series as well (the route's sum is a sample):
 * a team's calls in flight and reservations held are its own (core/shares.h). */
static void share_gauge(const struct bt_prom_series *se, int r, enum bt_signal sig, double now,
                        struct bt_store *s)
{
    if (!bt_signal_share_gauge(sig))
        return;
    struct bt_reading rd = {.route = r, .signal = sig, .t = se->has_time ? se->time : now,
                            .value = se->value};
    bt_adm_series_id(se, rd.series, sizeof rd.series);
    bt_store_reading(s, &rd, (int64_t)floor(now));
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
        share_gauge(se, r, (enum bt_signal)sig, now, s);
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

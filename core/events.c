/* The event log, derived from evaluations and store events (core/events.h). */
#include "core/events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dataminute.h"
#include "core/recording.h"
#include "core/util.h"

const char *bt_logkind_name(enum bt_logkind k)
{
    static const char *const names[BT_LOG_KIND_COUNT] = {"status", "raised", "cleared",
                                                         "failed", "recovered", "marker"};
    return k < BT_LOG_KIND_COUNT ? names[k] : "?";
}

void bt_evlog_init(struct bt_evlog *l, int nroutes)
{
    memset(l, 0, sizeof *l);
    l->nroutes = nroutes;
    size_t n = (size_t)(nroutes > 0 ? nroutes : 1);
    l->status = bt_xcalloc(n, sizeof *l->status);
    l->codes = bt_xcalloc(n, sizeof *l->codes);
    l->last_crit = bt_xcalloc(n, sizeof *l->last_crit);
    l->failing = bt_xcalloc(n * BT_SRC_COUNT, sizeof *l->failing);
}

static void free_texts(struct bt_evlog *l, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        free(l->e[i].text);
}

void bt_evlog_free(struct bt_evlog *l)
{
    free_texts(l, 0, l->n);
    free(l->e);
    free(l->status);
    free(l->codes);
    free(l->last_crit);
    free(l->failing);
    free(l->steps);
    free(l->ev_min_t);
    free(l->evals);
    bt_eval_groups_free(l->groups);
    if (l->cur)
        bt_replay_cursor_close(l->cur);
    free(l->cur);
    memset(l, 0, sizeof *l);
}

void bt_evlog_reset(struct bt_evlog *l)
{
    int n = l->nroutes;
    size_t max = l->max;
    bt_evlog_free(l);
    bt_evlog_init(l, n);
    l->max = max;
}

void bt_evlog_set_limit(struct bt_evlog *l, size_t max)
{
    l->max = max;
}

void bt_evlog_dropped_note(const struct bt_evlog *l, char *out, size_t n)
{
    if (!n)
        return;
    out[0] = '\0';
    if (!l->dropped)
        return;
    char iso[32];
    bt_fmt_iso(l->dropped_through, iso, sizeof iso);
    bt_fmt_cut(out, n, "%zu older events dropped (the log keeps its newest %zu; data minutes "
               "through %s are incomplete)", l->dropped, l->max, iso);
}

/* The first entry of data minute >= m (entries in minute order). */
static size_t first_at(const struct bt_evlog *l, int64_t m)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->e[mid].minute < m)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void bt_evlog_minute_range(const struct bt_evlog *l, int64_t from, int64_t to, size_t *lo,
                           size_t *hi)
{
    if (l->unordered || from > to) {
        *lo = 0;
        *hi = from > to ? 0 : l->n;
        return;
    }
    *lo = first_at(l, from);
    *hi = to == INT64_MAX ? l->n : first_at(l, to + 1);
}

static struct bt_logent *add(struct bt_evlog *l, enum bt_logkind kind, int route, int64_t at,
                             int64_t minute, enum bt_status severity)
{
    if (l->max && l->n >= l->max) { /* live: the oldest tenth goes, and is counted */
        size_t drop = l->max / 10 ? l->max / 10 : 1;
        if (drop > l->n)
            drop = l->n;
        if (drop && l->e[drop - 1].minute > l->dropped_through)
            l->dropped_through = l->e[drop - 1].minute;
        free_texts(l, 0, drop);
        memmove(l->e, l->e + drop, (l->n - drop) * sizeof *l->e);
        l->n -= drop;
        l->dropped += drop;
    }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->e = bt_xrealloc(l->e, l->cap * sizeof *l->e);
    }
    if (l->n && minute < l->e[l->n - 1].minute)
        l->unordered = true;
    struct bt_logent *e = &l->e[l->n++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->route = route;
    e->at = at;
    e->minute = minute;
    e->severity = severity;
    l->generation++;
    return e;
}

static const char *source_title(enum bt_source s)
{
    switch (s) {
    case BT_SRC_CLOUDWATCH: return "CloudWatch";
    case BT_SRC_QUOTAS: return "Service Quotas";
    default: return "admission counters";
    }
}

/* Marks (route, source) failing or not; true when that changed for any route. */
static bool set_failing(struct bt_evlog *l, int route, enum bt_source src, bool on)
{
    bool changed = false;
    for (int r = 0; r < l->nroutes; r++) {
        if (route >= 0 && r != route)
            continue;
        bool *f = &l->failing[(size_t)r * BT_SRC_COUNT + src];
        changed |= *f != on;
        *f = on;
    }
    return changed;
}

void bt_evlog_store_event(struct bt_evlog *l, const struct bt_config *cfg,
                          const struct bt_event *ev)
{
    int64_t m = bt_data_minute(cfg, ev->t);
    int route = ev->route >= 0 && ev->route < l->nroutes ? ev->route : -1;
    struct bt_logent *e;
    char tx[BT_LOGTEXT];
    switch (ev->type) {
    case BT_EV_MARKER:
        e = add(l, BT_LOG_MARKER, -1, ev->t, m, BT_ST_OK);
        snprintf(tx, sizeof tx, "marker: %s", ev->text);
        e->text = bt_xstrdup(tx);
        break;
    case BT_EV_ERROR:
        if (!set_failing(l, route, ev->source, true))
            break;
        e = add(l, BT_LOG_FAILED, route, ev->t, m, BT_ST_CRIT);
        e->source = ev->source;
        bt_fmt_cut(tx, sizeof tx, "%s failing%s%s", source_title(ev->source),
                   ev->text[0] ? ": " : "", ev->text);
        e->text = bt_xstrdup(tx);
        break;
    case BT_EV_OK:
        if (!set_failing(l, route, ev->source, false))
            break;
        e = add(l, BT_LOG_RECOVERED, route, ev->t, m, BT_ST_OK);
        e->source = ev->source;
        snprintf(tx, sizeof tx, "%s answers again", source_title(ev->source));
        e->text = bt_xstrdup(tx);
        break;
    default: break;
    }
}

void bt_evlog_store_events(struct bt_evlog *l, const struct bt_config *cfg,
                           const struct bt_store *st)
{
    if (st->nevents - l->store_seen > BT_EVENT_RING)
        l->store_seen = st->nevents - BT_EVENT_RING; /* the ring kept only these */
    for (; l->store_seen < st->nevents; l->store_seen++)
        bt_evlog_store_event(l, cfg, bt_store_event_at(st, l->store_seen));
}

static const struct bt_warning *find_warning(const struct bt_eval *e, int code)
{
    for (int w = 0; w < e->nwarn; w++)
        if ((int)e->warnings[w].code == code)
            return &e->warnings[w];
    return NULL;
}

void bt_evlog_observe(struct bt_evlog *l, const struct bt_config *cfg,
                      const struct bt_eval *evals, int64_t at)
{
    int64_t m = bt_data_minute(cfg, at);
    int n = cfg->nroutes < l->nroutes ? cfg->nroutes : l->nroutes;
    char tx[BT_LOGTEXT];
    for (int r = 0; r < n; r++) {
        const struct bt_eval *e = &evals[r];
        uint32_t now = bt_eval_warn_bits(e), before = l->primed ? l->codes[r] : 0;
        enum bt_status was = l->primed ? l->status[r] : BT_ST_OK;
        if (e->status != was) {
            struct bt_logent *x = add(l, BT_LOG_STATUS, r, at, m, e->status);
            x->from = was;
            x->to = e->status;
            if (!l->primed)
                snprintf(tx, sizeof tx, "status %s", bt_status_name(e->status));
            else
                snprintf(tx, sizeof tx, "status %s -> %s", bt_status_name(was),
                         bt_status_name(e->status));
            x->text = bt_xstrdup(tx);
        }
        for (int c = 0; c < BT_W_COUNT; c++) {
            uint32_t bit = 1u << c;
            if ((now & bit) && !(before & bit)) {
                const struct bt_warning *w = find_warning(e, c);
                struct bt_logent *x = add(l, BT_LOG_RAISED, r, at, m, w->severity);
                x->code = (enum bt_wcode)c;
                bt_fmt_cut(tx, sizeof tx, "%s raised: %s", bt_wcode_name(x->code),
                           w->message);
                x->text = bt_xstrdup(tx);
            } else if (!(now & bit) && (before & bit)) {
                struct bt_logent *x = add(l, BT_LOG_CLEARED, r, at, m, BT_ST_OK);
                x->code = (enum bt_wcode)c;
                snprintf(tx, sizeof tx, "%s cleared", bt_wcode_name(x->code));
                x->text = bt_xstrdup(tx);
            }
        }
        l->codes[r] = now;
        l->status[r] = e->status;
        if (e->status == BT_ST_CRIT)
            l->last_crit[r] = m;
    }
    l->primed = true;
}

int64_t bt_evlog_last_crit(const struct bt_evlog *l, int route)
{
    return route >= 0 && route < l->nroutes ? l->last_crit[route] : 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Every poll and every data minute's first instant, ascending, once each. */
static void plan(struct bt_evlog *l, const struct bt_replay *rp)
{
    int64_t first, last;
    bt_replay_minutes(rp, &first, &last);
    size_t nmin = last >= first ? (size_t)((last - first) / 60 + 1) : 0;
    l->steps = bt_xcalloc(rp->npolls + nmin + 1, sizeof *l->steps);
    size_t n = 0;
    for (size_t i = 0; i < rp->npolls; i++)
        l->steps[n++] = rp->polls[i];
    for (size_t k = 0; k < nmin; k++)
        l->steps[n++] = bt_replay_minute_instant(rp, first + (int64_t)k * 60);
    qsort(l->steps, n, sizeof *l->steps, cmp_i64);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || l->steps[i] != l->steps[u - 1])
            l->steps[u++] = l->steps[i];
    l->nsteps = u;
    l->step = l->next_event = 0;
    const struct bt_store *st = &rp->store;
    free(l->ev_min_t);
    l->ev_min_t = bt_xcalloc(st->nlog + 1, sizeof *l->ev_min_t);
    l->ev_min_t[st->nlog] = INT64_MAX;
    for (size_t i = st->nlog; i > 0; i--)
        l->ev_min_t[i - 1] = st->log[i - 1].t < l->ev_min_t[i] ? st->log[i - 1].t : l->ev_min_t[i];
    if (!l->evals)
        l->evals = bt_xcalloc((size_t)(rp->cfg.nroutes ? rp->cfg.nroutes : 1), sizeof *l->evals);
    if (l->cur && l->cur->rp != rp) {
        bt_replay_cursor_close(l->cur);
        free(l->cur);
        l->cur = NULL;
        l->evals_at = 0; /* another recording's: evaluated afresh */
    }
    if (!l->cur) {
        l->cur = bt_xcalloc(1, sizeof *l->cur);
        bt_replay_cursor_open(l->cur, rp);
    }
}

bool bt_evlog_replay_step_evals(struct bt_evlog *l, const struct bt_replay *rp, int64_t *at,
                                struct bt_eval **evals)
{
    if (!l->steps || !l->cur || l->cur->rp != rp)
        plan(l, rp);
    if (l->step >= l->nsteps)
        return false;
    int64_t t = l->steps[l->step++];
    struct bt_replay_cursor *c = l->cur;
    const struct bt_store *st = &rp->store;
    while (l->next_event < st->nlog && st->log[l->next_event].t <= t)
        bt_evlog_store_event(l, &c->cfg, &st->log[l->next_event++]);
    bt_replay_cursor_seek(c, t);
    /* a data minute's instant after its poll, nothing arrived between: the poll's
     * evaluation at the later instant (two evaluations a data minute were 43 % of an
     * export) */
    int nr = c->cfg.nroutes;
    if (l->evals_at && bt_replay_quiet(rp, l->evals_at, t) &&
        bt_eval_same_at(&c->cfg, &c->store, l->evals, l->evals_at, t)) {
        for (int r = 0; r < nr; r++)
            l->evals[r].now = t;
    } else {
        /* bt_eval_all, its groups keyed once while the routes key the same */
        l->groups = bt_eval_groups_renew(l->groups, &c->cfg);
        bt_eval_all_with(&c->cfg, &c->store, t, l->groups, false, NULL, l->evals);
    }
    l->evals_at = t;
    bt_evlog_observe(l, &c->cfg, l->evals, t);
    if (at)
        *at = t;
    if (evals)
        *evals = l->evals;
    return true;
}

int64_t bt_evlog_complete_before(const struct bt_evlog *l, const struct bt_replay *rp)
{
    if (!l->steps || l->step >= l->nsteps)
        return l->steps ? INT64_MAX : INT64_MIN;
    /* the next step's evaluation logs at its own data minute; a store event still to
     * take logs at its time's (the earliest of them, whatever the log's order) */
    int64_t m = bt_data_minute(&rp->cfg, l->steps[l->step]);
    int64_t et = l->ev_min_t[l->next_event];
    if (et != INT64_MAX && bt_data_minute(&rp->cfg, et) < m)
        m = bt_data_minute(&rp->cfg, et);
    return m;
}

const struct bt_replay_cursor *bt_evlog_cursor(const struct bt_evlog *l)
{
    return l->cur && l->cur->at ? l->cur : NULL;
}

bool bt_evlog_replay_step(struct bt_evlog *l, const struct bt_replay *rp, int64_t *upto)
{
    int64_t t;
    if (!bt_evlog_replay_step_evals(l, rp, &t, NULL)) {
        if (upto)
            *upto = rp->end;
        return false;
    }
    if (upto)
        *upto = t;
    return l->step < l->nsteps;
}

void bt_evlog_from_replay_window(struct bt_evlog *l, const struct bt_replay *rp, int64_t from,
                                 int64_t to)
{
    plan(l, rp);
    int64_t first, last;
    bt_replay_minutes(rp, &first, &last);
    int64_t before = bt_replay_minute_instant(rp, from - 60), end = bt_replay_minute_instant(rp, to);
    size_t prime = l->nsteps; /* the last step at or before the window: its evaluation */
    for (size_t i = 0; from > first && i < l->nsteps && l->steps[i] <= before; i++)
        prime = i;
    if (prime < l->nsteps) {
        const struct bt_store *st = &rp->store;
        l->next_event = 0;
        while (l->next_event < st->nlog && st->log[l->next_event].t <= l->steps[prime])
            bt_evlog_store_event(l, &rp->cfg, &st->log[l->next_event++]);
        l->step = prime;
        bt_evlog_replay_step(l, rp, NULL); /* observes the prime: the state, not entries */
        free_texts(l, 0, l->n);
        l->n = 0;
        l->dropped = 0;
        l->dropped_through = 0;
        l->unordered = false;
    }
    while (l->step < l->nsteps && l->steps[l->step] <= end)
        bt_evlog_replay_step(l, rp, NULL);
}

void bt_evlog_from_replay(struct bt_evlog *l, const struct bt_replay *rp)
{
    while (bt_evlog_replay_step(l, rp, NULL))
        ;
}

/* The figures of the incident write-up: every route evaluated at each data minute of
 * the window, as bedtop showed it, and the summary, the timeline and the ranked causes
 * derived from them (the quota request in core/reportcalc.c counts its coverage by
 * this file's rule). */
#include "core/incidentcalc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/eval_int.h"
#include "core/util.h"

_Static_assert(BT_W_COUNT <= 64, "a point holds one bit per warning code");

/* A minute of route r without a datapoint of sig is idle (0) only where a good poll
 * asked for it (coverage v4); for a route whose polls record no coverage, where its
 * CloudWatch poll was good when the minute was shown (polled_ok): a failed poll's
 * minutes are unknown (a gap in the charts, never 0 calls). The one rule for the
 * incident report and the quota request's coverage counts. */
bool bt_inc_unseen_idle(const struct bt_store *st, int r, enum bt_signal sig, int64_t m,
                        bool polled_ok)
{
    if (bt_store_cover_recorded(st, r))
        return bt_store_covered(st, r, sig, m) == BT_COV_SETTLED;
    return polled_ok;
}

enum bt_side bt_inc_side(bool mantle, int k)
{
    return mantle ? (k ? BT_SIDE_OUTPUT : BT_SIDE_INPUT) : (k ? BT_SIDE_RPM : BT_SIDE_TPM);
}

/* A CloudWatch signal of data minute m as recorded: a minute with no datapoint
 * after a poll that succeeded later is idle (0), else unknown. The evaluation at
 * m may show an older minute (a route picks its newest datapoint), so the
 * per-minute series are read here, and status and warnings from the evaluation. */
static double raw_at(const struct bt_store *st, const struct bt_eval *e, int r, enum bt_signal s,
                     int64_t m)
{
    double v = bt_store_at(st, r, s, m);
    if (!isnan(v))
        return v;
    return bt_inc_unseen_idle(st, r, s, m,
                       e->last_ok[BT_SRC_CLOUDWATCH] >= m + 60 && !e->failing[BT_SRC_CLOUDWATCH])
               ? 0
               : NAN;
}

static void point_of(const struct bt_store *st, const struct bt_eval *e, int r, int64_t m,
                     struct bt_inc_point *p, bool *admission)
{
    p->status = e->status;
    p->headroom_pct = e->headroom_pct;
    p->binding = e->binding;
    for (int k = 0; k < 2; k++) {
        const struct bt_side_fig *f = &e->side[bt_inc_side(e->mantle, k)];
        bool on = f->applies;
        p->side_pct[k] = on ? f->pct : NAN;
        p->side_used[k] = on ? f->group_used : NAN;
        p->side_quota[k] = on ? f->quota : NAN;
    }
    double inv = raw_at(st, e, r, BT_SIG_INVOCATIONS, m);
    /* mantle publishes no throttle metric: unknown there, not 0 */
    p->throttles = e->mantle ? NAN : raw_at(st, e, r, BT_SIG_THROTTLES, m);
    /* offered load: the admission boundary sees retries and refusals (read as the
     * evaluation read them); CloudWatch alone sees the accepted calls plus the
     * throttled ones */
    *admission = !isnan(e->admitted);
    if (*admission) {
        p->offered = e->admitted + bt_z(e->retries) + bt_z(e->rejected);
        p->accepted = e->completed;
    } else {
        /* mantle: with no throttle metric the offered load is not known */
        p->offered = e->mantle || (isnan(inv) && isnan(p->throttles)) ? NAN : bt_z(inv) + bt_z(p->throttles);
        p->accepted = inv;
    }
    p->lat_p50 = bt_store_at(st, r, BT_SIG_LATENCY_P50, m);
    p->lat_p99 = bt_store_at(st, r, BT_SIG_LATENCY_P99, m);
    p->headroom_q = e->headroom_q;
    for (int k = 0; k < BT_SIDE_COUNT; k++) {
        const struct bt_side_fig *f = &e->side[k];
        p->pct[k] = f->applies ? f->pct : NAN;
        p->pct_q[k] = f->applies ? f->headroom_q : BT_QL_UNKNOWN;
        p->quota[k] = f->applies ? f->quota : NAN;
    }
    p->warn = bt_eval_warn_bits(e);
}

/* Warnings about the data rather than the load: caveats, not causes. */
static bool caveat_code(enum bt_wcode c)
{
    return c == BT_W_STALE || c == BT_W_QUOTA_UNKNOWN || c == BT_W_QUOTA_DEFAULT ||
           c == BT_W_ESTIMATE_ONLY || c == BT_W_BURNDOWN_MISMATCH || c == BT_W_PARTIAL_GROUP;
}

/* A cause tallied per route until the affected routes are known. */
struct cause_acc {
    enum bt_wcode code;
    const char *action;
    enum bt_status severity;
    int *minutes, *crit;
    int64_t *first;
    char (*msg)[320];
};

struct builder {
    struct bt_incident *inc;
    int cap_tl;
    struct cause_acc acc[BT_INC_MAX_CAUSES];
    int nacc;
};

static struct bt_tl_entry *tl_add(struct builder *b, int64_t minute, enum bt_tl_kind kind, int route)
{
    struct bt_incident *inc = b->inc;
    if (inc->ntl == b->cap_tl) {
        b->cap_tl = b->cap_tl ? 2 * b->cap_tl : 64;
        inc->tl = bt_xrealloc(inc->tl, (size_t)b->cap_tl * sizeof *inc->tl);
    }
    struct bt_tl_entry *t = &inc->tl[inc->ntl++];
    *t = (struct bt_tl_entry){.minute = minute, .kind = kind, .route = route, .value = NAN,
                              .order = inc->ntl - 1};
    return t;
}

static void tally_causes(struct builder *b, const struct bt_eval *e, int r, int64_t m)
{
    int nr = b->inc->nroutes;
    for (int w = 0; w < e->nwarn; w++) {
        const struct bt_warning *wn = &e->warnings[w];
        if (wn->severity < BT_ST_WARN)
            continue;
        struct cause_acc *a = NULL;
        for (int k = 0; k < b->nacc && !a; k++)
            if (b->acc[k].code == wn->code && b->acc[k].action == wn->action)
                a = &b->acc[k];
        if (!a) {
            if (b->nacc == BT_INC_MAX_CAUSES)
                continue;
            a = &b->acc[b->nacc++];
            *a = (struct cause_acc){.code = wn->code, .action = wn->action, .severity = wn->severity,
                                    .minutes = bt_xcalloc((size_t)nr, sizeof(int)),
                                    .crit = bt_xcalloc((size_t)nr, sizeof(int)),
                                    .first = bt_xcalloc((size_t)nr, sizeof(int64_t)),
                                    .msg = bt_xcalloc((size_t)nr, sizeof *a->msg)};
        }
        a->severity = bt_status_worse(a->severity, wn->severity);
        if (!a->minutes[r]++) {
            a->first[r] = m;
            bt_strlcpy(a->msg[r], wn->message, sizeof a->msg[r]);
        }
        a->crit[r] += wn->severity == BT_ST_CRIT;
    }
}

/* The data changes of minute i the event log does not carry: throttling starting or
 * stopping, and a quota's new value. */
static void timeline_minute(struct builder *b, int r, int i, int64_t m)
{
    const struct bt_incident *inc = b->inc;
    const struct bt_inc_point *p = bt_inc_at(inc, r, i), *q = bt_inc_at(inc, r, i - 1);
    if (p->throttles > 0 && !(q->throttles > 0))
        tl_add(b, m, BT_TL_THROTTLE_ON, r)->value = p->throttles;
    if (!(p->throttles > 0) && q->throttles > 0)
        tl_add(b, m, BT_TL_THROTTLE_OFF, r);
    for (int s = 0; s < 2; s++) {
        double a = q->side_quota[s], v = p->side_quota[s];
        if (isnan(v) || (!isnan(a) && a == v))
            continue;
        struct bt_tl_entry *t = tl_add(b, m, BT_TL_QUOTA, r);
        t->value = v;
        t->side = s;
    }
}

/* "CODE raised: message" -> "message" (the log's line as events.c words it) */
static const char *after_prefix(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    return strncmp(text, prefix, n) == 0 ? text + n : text;
}

/* The event log's entries of the window, for the routes kept (and every route's). */
static void timeline_events(struct builder *b, const bool *keep)
{
    struct bt_incident *inc = b->inc;
    const struct bt_evlog *l = inc->log;
    static const enum bt_tl_kind kinds[BT_LOG_KIND_COUNT] = {
        [BT_LOG_STATUS] = BT_TL_STATUS,   [BT_LOG_RAISED] = BT_TL_WARN_ON,
        [BT_LOG_CLEARED] = BT_TL_WARN_OFF, [BT_LOG_FAILED] = BT_TL_FAILED,
        [BT_LOG_RECOVERED] = BT_TL_RECOVERED, [BT_LOG_MARKER] = BT_TL_MARKER};
    for (size_t i = 0; i < l->n; i++) {
        const struct bt_logent *e = &l->e[i];
        if (e->minute < inc->from || e->minute > inc->to ||
            (e->route >= 0 && keep && !keep[e->route]))
            continue;
        struct bt_tl_entry *t = tl_add(b, e->minute, kinds[e->kind], e->route);
        t->ev = e;
        t->from = e->from;
        t->to = e->to;
        t->code = e->code;
        t->severity = e->severity;
        char prefix[64];
        snprintf(prefix, sizeof prefix, "%s raised: ", bt_wcode_name(e->code));
        const char *text = e->kind == BT_LOG_MARKER   ? after_prefix(e->text, "marker: ")
                           : e->kind == BT_LOG_RAISED ? after_prefix(e->text, prefix)
                                                      : e->text;
        bt_strlcpy(t->text, text, sizeof t->text);
        if (e->kind == BT_LOG_MARKER && inc->nmarkers < (int)BT_ARRAY_LEN(inc->marker_minute)) {
            inc->marker_minute[inc->nmarkers] = e->minute;
            inc->marker_text[inc->nmarkers++] = after_prefix(e->text, "marker: ");
        }
    }
}

/* Time order; in a minute the markers, then route by route its events as logged,
 * throttling before them and a quota's value after. */
static int tl_rank(const struct bt_tl_entry *t)
{
    return t->kind == BT_TL_THROTTLE_ON || t->kind == BT_TL_THROTTLE_OFF ? 0 : t->kind == BT_TL_QUOTA ? 2 : 1;
}

static int cmp_tl(const void *a, const void *b)
{
    const struct bt_tl_entry *x = a, *y = b;
    if (x->minute != y->minute)
        return x->minute < y->minute ? -1 : 1;
    if (x->route != y->route)
        return x->route < y->route ? -1 : 1;
    if (tl_rank(x) != tl_rank(y))
        return tl_rank(x) - tl_rank(y);
    return x->order - y->order;
}

static int cmp_cause(const void *a, const void *b)
{
    const struct bt_inc_cause *x = a, *y = b;
    if (x->caveat != y->caveat)
        return x->caveat ? 1 : -1;
    if (x->standing != y->standing)
        return x->standing ? 1 : -1;
    if (x->crit_minutes != y->crit_minutes)
        return x->crit_minutes > y->crit_minutes ? -1 : 1;
    if (x->minutes != y->minutes)
        return x->minutes > y->minutes ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return (int)x->code - (int)y->code;
}

static void summarize_routes(struct bt_incident *inc, const bool *keep)
{
    for (int r = 0; r < inc->nroutes; r++) {
        struct bt_inc_route *ro = &inc->route[r];
        if (keep && !keep[r])
            continue;
        ro->start_status = bt_inc_at(inc, r, 0)->status;
        ro->worst = ro->start_status;
        ro->worst_pct = NAN;
        int last_bad = -1;
        for (int i = 0; i < inc->n; i++) {
            const struct bt_inc_point *p = bt_inc_at(inc, r, i);
            int64_t m = inc->from + 60 * (int64_t)i;
            ro->worst = bt_status_worse(ro->worst, p->status);
            if (!isnan(p->headroom_pct) && (isnan(ro->worst_pct) || p->headroom_pct < ro->worst_pct)) {
                ro->worst_pct = p->headroom_pct;
                ro->worst_minute = m;
                ro->worst_side = p->binding;
            }
            bool thr = p->throttles > 0;
            if (thr) {
                ro->throttled_minutes++;
                ro->throttles += p->throttles;
                if (!ro->first_throttle)
                    ro->first_throttle = m;
                ro->last_throttle = m;
            }
            if (thr || p->status > ro->start_status)
                last_bad = i;
        }
        ro->worsened = ro->worst > ro->start_status;
        ro->affected = ro->worsened || ro->throttled_minutes > 0;
        if (last_bad >= 0 && last_bad + 1 < inc->n)
            ro->recovered = inc->from + 60 * (int64_t)(last_bad + 1);
        inc->naffected += ro->affected;
    }
}

static void rank_causes(struct builder *b)
{
    struct bt_incident *inc = b->inc;
    for (int k = 0; k < b->nacc; k++) {
        struct cause_acc *a = &b->acc[k];
        struct bt_inc_cause c = {.code = a->code, .action = a->action, .severity = a->severity,
                                 .route = -1, .caveat = caveat_code(a->code)};
        for (int r = 0; r < inc->nroutes; r++) {
            if (!inc->route[r].affected || !a->minutes[r])
                continue;
            c.minutes += a->minutes[r];
            c.crit_minutes += a->crit[r];
            if (r < 64)
                c.routes |= (uint64_t)1 << r;
            if (c.route < 0 || a->first[r] < c.first) {
                c.first = a->first[r];
                c.route = r;
                bt_strlcpy(c.message, a->msg[r], sizeof c.message);
            }
        }
        c.standing = c.first == inc->from;
        if (c.minutes)
            inc->cause[inc->ncause++] = c;
        free(a->minutes);
        free(a->crit);
        free(a->first);
        free(a->msg);
    }
    qsort(inc->cause, (size_t)inc->ncause, sizeof *inc->cause, cmp_cause);
}

void bt_incident_build(const struct bt_replay *rp, int64_t from, int64_t to, const bool *keep,
                       struct bt_incident *out)
{
    const struct bt_config *cfg = &rp->cfg;
    *out = (struct bt_incident){.from = from, .to = to, .nroutes = cfg->nroutes};
    if (cfg->nroutes <= 0 || to < from)
        return;
    int n = (int)((to - from) / 60) + 1, nr = cfg->nroutes;
    out->n = n;
    out->pt = bt_xcalloc((size_t)nr * (size_t)n, sizeof *out->pt);
    out->route = bt_xcalloc((size_t)nr, sizeof *out->route);
    out->mantle = bt_xcalloc((size_t)nr, sizeof *out->mantle);
    out->shown = bt_xcalloc((size_t)nr, sizeof *out->shown);
    out->group = bt_xcalloc((size_t)nr, sizeof *out->group);
    for (int r = 0; r < nr; r++) {
        out->shown[r] = !keep || keep[r];
        out->nshown += out->shown[r];
    }
    struct bt_eval *evals = bt_xcalloc((size_t)nr, sizeof *evals);
    struct builder b = {.inc = out};
    struct bt_replay_cursor cur;
    bt_replay_cursor_open(&cur, rp);
    const struct bt_store *st = &cur.store;
    for (int i = 0; i < n; i++) {
        int64_t m = from + 60 * (int64_t)i;
        /* as on screen while m was the newest complete minute: export's rows and
         * replay --at use the same instant (core/dataminute.h) */
        int64_t shown = bt_replay_minute_instant(rp, m);
        bt_replay_cursor_seek(&cur, shown);
        bt_eval_all(&cur.cfg, st, shown, evals);
        for (int r = 0; r < nr; r++) {
            if (keep && !keep[r])
                continue;
            out->mantle[r] = evals[r].mantle;
            out->group[r] = evals[r].group.leader;
            bool adm;
            point_of(st, &evals[r], r, m, &out->pt[(size_t)r * (size_t)n + (size_t)i], &adm);
            out->route[r].admission |= adm;
            struct bt_inc_route *ro = &out->route[r];
            ro->coverage_inferred = !bt_store_cover_recorded(st, r);
            if (!isnan(raw_at(st, &evals[r], r, BT_SIG_INVOCATIONS, m))) {
                ro->covered_minutes++;
            } else {
                ro->first_unknown = ro->first_unknown ? ro->first_unknown : m;
                ro->last_unknown = m;
            }
            if (i > 0)
                timeline_minute(&b, r, i, m);
            tally_causes(&b, &evals[r], r, m);
        }
    }
    bt_replay_cursor_close(&cur);
    free(evals);
    /* the event log of the whole recording (so the window's first minute shows what
     * changed then, not what was already so), the one the dashboard's `e` shows */
    out->log = bt_xcalloc(1, sizeof *out->log);
    bt_evlog_init(out->log, nr);
    bt_evlog_from_replay(out->log, rp);
    timeline_events(&b, keep);
    if (out->ntl) /* qsort of NULL is undefined even for 0 elements (fuzz_incident) */
        qsort(out->tl, (size_t)out->ntl, sizeof *out->tl, cmp_tl);
    summarize_routes(out, keep);
    rank_causes(&b);
}

void bt_incident_free(struct bt_incident *inc)
{
    free(inc->pt);
    free(inc->route);
    free(inc->mantle);
    free(inc->shown);
    free(inc->group);
    free(inc->tl);
    if (inc->log)
        bt_evlog_free(inc->log);
    free(inc->log);
    *inc = (struct bt_incident){0};
}

#include "core/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/names.h"
#include "core/plausible.h"
#include "core/series.h"
#include "core/store_int.h"
#include "core/util.h"

struct bt_status_text {
    char error[BT_STATUS_ERROR_LEN];
    char implausible[BT_STATUS_IMPLAUSIBLE_LEN];
};

/* Points every status at its texts. */
static void status_link(struct bt_store *s)
{
    for (size_t i = 0; i < (size_t)s->slots * BT_SRC_COUNT; i++) {
        s->status[i].error = s->status_text[i].error;
        s->status[i].implausible = s->status_text[i].implausible;
    }
}

/* Every status empty, its texts "" (fresh zeroed pages: none is written before a
 * text is). */
static void status_reset(struct bt_store *s)
{
    size_t n = (size_t)(s->slots ? s->slots : 1) * BT_SRC_COUNT;
    memset(s->status, 0, n * sizeof *s->status);
    free(s->status_text);
    s->status_text = bt_xcalloc(n, sizeof *s->status_text);
    status_link(s);
}

void bt_store_init(struct bt_store *s, int nroutes, int history_minutes)
{
    memset(s, 0, sizeof *s);
    s->nroutes = nroutes;
    s->history = history_minutes > 2 ? history_minutes : 2;
    s->slots = nroutes;
    s->series = bt_xcalloc((size_t)(nroutes ? nroutes : 1) * BT_SIG_COUNT, sizeof *s->series);
    s->status = bt_xcalloc((size_t)(nroutes ? nroutes : 1) * BT_SRC_COUNT, sizeof *s->status);
    s->status_text = bt_xcalloc((size_t)(nroutes ? nroutes : 1) * BT_SRC_COUNT, sizeof *s->status_text);
    status_link(s);
}

/* Moves each signal's (or source's) run of `from` routes to its place in runs of `to`
 * (a new array of n * to, the rest zero). */
static void *relayout(void *a, size_t size, int n, int from, int to)
{
    char *b = bt_xcalloc((size_t)n * (size_t)(to ? to : 1), size);
    for (int k = 0; k < n && from > 0; k++)
        memcpy(b + (size_t)k * (size_t)to * size, (char *)a + (size_t)k * (size_t)from * size,
               (size_t)from * size);
    free(a);
    return b;
}

void bt_store_grow(struct bt_store *s, int slots)
{
    if (slots <= s->slots)
        return;
    s->series = relayout(s->series, sizeof *s->series, BT_SIG_COUNT, s->slots, slots);
    s->status = relayout(s->status, sizeof *s->status, BT_SRC_COUNT, s->slots, slots);
    s->status_text = relayout(s->status_text, sizeof *s->status_text, BT_SRC_COUNT, s->slots, slots);
    s->slots = slots;
    status_link(s);
}

static void memo_alloc(struct bt_store *s)
{
    free(s->sum_memo);
    free(s->newest_memo);
    s->sum_memo_routes = s->nroutes > 0 ? s->nroutes : 0;
    size_t n = (size_t)(s->sum_memo_routes ? s->sum_memo_routes : 1);
    s->sum_memo = bt_xcalloc(n * MEMO_SLOTS, sizeof *s->sum_memo);
    s->newest_memo = bt_xcalloc(n * BT_SIG_COUNT, sizeof *s->newest_memo);
}

void bt_store_clone(struct bt_store *d, const struct bt_store *s)
{
    *d = *s;
    d->tap = (struct bt_store_tap){0};
    d->log = NULL;
    d->nlog = d->caplog = 0;
    /* the rates are already samples; the series' last readings stay the original's
     * (shared, they were freed twice: plan on any admission counters crashed) */
    d->counters = NULL;
    d->series_store = NULL; /* the per-series values too (core/shares.c): the original's */
    /* replay's shared arrival offsets and running day sums are the original's: the
     * copy's series get their own offsets (bt_series_copy), and its sums are summed
     * afresh (the copy's series are about to change: none of the original's hold) */
    d->arr_pool = NULL;
    d->narr_pool = 0;
    d->sum_memo = NULL;
    d->newest_memo = NULL;
    d->sum_memo_routes = 0;
    size_t ns = (size_t)(s->slots ? s->slots : 1) * BT_SIG_COUNT;
    d->series = bt_xcalloc(ns, sizeof *d->series);
    for (size_t i = 0; i < ns && s->slots; i++)
        bt_series_copy(&d->series[i], &s->series[i]);
    size_t nst = (size_t)(s->slots ? s->slots : 1) * BT_SRC_COUNT;
    d->status = bt_xmalloc(nst * sizeof *d->status);
    memcpy(d->status, s->status, nst * sizeof *d->status);
    d->status_text = bt_xmalloc(nst * sizeof *d->status_text);
    memcpy(d->status_text, s->status_text, nst * sizeof *d->status_text);
    status_link(d);
    bt_copy_coverage(d, s);
}

void bt_store_view(struct bt_store *v, const struct bt_store *s)
{
    *v = *s;
    v->view = true;
    v->tap = (struct bt_store_tap){0};
    v->readings_free = NULL;
    /* its own horizon: nothing applied, the first seek rebuilds from the log */
    v->horizon = 0;
    v->hz_valid = false;
    v->hz_next = v->hz_nlog = 0;
    v->hz_gen = 0;
    v->hz_routes = v->hz_base = NULL;
    v->routes = NULL;
    size_t nst = (size_t)(s->slots ? s->slots : 1) * BT_SRC_COUNT;
    v->status = bt_xcalloc(nst, sizeof *v->status);
    v->status_text = bt_xcalloc(nst, sizeof *v->status_text);
    status_link(v);
    if (s->track_arrival) {
        v->cov = NULL; /* applied from the shared records up to each horizon */
        v->covlog_applied = 0;
    } else {
        bt_copy_coverage(v, s); /* no records to apply: s's coverage as it is, its own */
        free(v->cov_recorded);
        v->cov_recorded = s->cov_recorded; /* taken once, never by a horizon: s's */
    }
    v->sum_memo = NULL;
    v->newest_memo = NULL;
    v->sum_memo_routes = 0;
    if (s->sum_memo)
        memo_alloc(v);
}

/* What a view (bt_store_view) owns, freed; the rest is its original's. */
static void view_free(struct bt_store *v)
{
    bt_cov_free(v);
    free(v->status);
    free(v->status_text);
    free(v->sum_memo);
    free(v->newest_memo);
    memset(v, 0, sizeof *v);
}

void bt_store_track_arrival(struct bt_store *s)
{
    s->track_arrival = true;
    memo_alloc(s);
}

void bt_store_clear(struct bt_store *s)
{
    for (size_t i = 0; i < (size_t)s->slots * BT_SIG_COUNT; i++) {
        free(s->series[i].f);
        free(s->series[i].d);
        if (!s->series[i].arr_shared) {
            free(s->series[i].arr16);
            free(s->series[i].arr);
        }
        s->series[i] = (struct bt_series){0};
    }
    for (size_t i = 0; i < s->narr_pool; i++)
        free(s->arr_pool[i]);
    free(s->arr_pool);
    s->arr_pool = NULL;
    s->narr_pool = 0;
    free(s->log);
    s->log = NULL;
    s->nlog = s->caplog = 0;
    bt_cov_free(s);
    free(s->cov_recorded);
    s->cov_recorded = NULL;
    free(s->covlog);
    s->covlog = NULL;
    s->ncovlog = s->capcovlog = s->covlog_applied = 0;
    s->covlog_unsorted = false;
    if (s->readings_free)
        s->readings_free(s); /* bt_counters_free: core/counters.c's */
    if (s->sum_memo)
        memset(s->sum_memo, 0, (size_t)s->sum_memo_routes * MEMO_SLOTS * sizeof *s->sum_memo);
    if (s->newest_memo)
        memset(s->newest_memo, 0, (size_t)s->sum_memo_routes * BT_SIG_COUNT * sizeof *s->newest_memo);
    status_reset(s);
    s->nevents = 0;
    s->nsamples = 0;
    s->generation++;
}

void bt_store_free(struct bt_store *s)
{
    if (s->view) {
        view_free(s);
        return;
    }
    if (!s->series)
        return;
    bt_store_clear(s);
    free(s->series);
    free(s->status);
    free(s->status_text);
    s->status_text = NULL;
    free(s->sum_memo);
    free(s->newest_memo);
    s->sum_memo = NULL;
    s->newest_memo = NULL;
    s->sum_memo_routes = 0;
    s->series = NULL;
    s->status = NULL;
}

uint64_t bt_store_generation(const struct bt_store *s)
{
    return s->generation;
}

void bt_store_event(struct bt_store *s, const struct bt_event *ev)
{
    s->events[s->nevents % BT_EVENT_RING] = *ev;
    s->nevents++;
    s->generation++;
    if (s->track_arrival) {
        if (s->nlog == s->caplog) {
            s->caplog = s->caplog ? s->caplog * 2 : 256;
            s->log = bt_xrealloc(s->log, s->caplog * sizeof *s->log);
        }
        s->log[s->nlog++] = *ev;
    }
    if (s->tap.event)
        s->tap.event(s->tap.arg, ev);
}

const struct bt_event *bt_store_event_at(const struct bt_store *s, uint64_t i)
{
    if (i >= s->nevents || s->nevents - i > BT_EVENT_RING)
        return NULL;
    return &s->events[i % BT_EVENT_RING];
}

static void apply_event(struct bt_store *s, struct bt_route *routes, const struct bt_event *ev,
                        int64_t *defer);

static void apply_status(struct bt_store *s, int route, const struct bt_event *ev)
{
    struct bt_source_status *st = bt_store_status(s, route, ev->source);
    if (!st)
        return;
    if (ev->type == BT_EV_OK) {
        st->last_ok = ev->t;
        st->last_error = 0;
        if (st->error[0]) /* "" over "": unwritten, the text's page stays unused */
            st->error[0] = '\0';
    } else {
        st->last_error = ev->t;
        bt_strlcpy(st->error, ev->text, BT_STATUS_ERROR_LEN);
    }
}

/* A BT_EV_SETTING applied to its route; a value out of bounds is not taken. */
static void apply_setting(struct bt_route *r, const struct bt_event *ev)
{
    /* "measured": a poller's measured value read back (--source) */
    static const char *const bsrc[] = {"config", "measured", "table", "family", "default"};
    switch (ev->setting) {
    case BT_SET_MAX_TOKENS:
        if (bt_sample_plausible(BT_SIG_ADM_MAX_TOKENS, ev->value, NULL, 0) && ev->value > 0)
            r->max_tokens = ev->value;
        break;
    case BT_SET_BURNDOWN:
        if (r->endpoint == BT_EP_MANTLE || !isfinite(ev->value) || ev->value < 1 || ev->value > 1000)
            break; /* mantle has none */
        /* the catalogue's prior for the model learned at run time; a steady
         * measurement may still win (bt_route_burndown_settle) */
        r->burndown_prior = ev->value;
        r->burndown_prior_source = "default";
        for (size_t i = 0; i < BT_ARRAY_LEN(bsrc); i++)
            if (!strcmp(ev->str, bsrc[i]))
                r->burndown_prior_source = bsrc[i];
        /* the event's text names the table row it came from ("" for none) */
        bt_strlcpy(r->burndown_row, strcmp(r->burndown_prior_source, "default") ? ev->text : "",
                   sizeof r->burndown_row);
        r->burndown = r->burndown_prior;
        r->burndown_source = r->burndown_prior_source;
        r->burndown_verified = !strcmp(r->burndown_source, "table") || !strcmp(r->burndown_source, "measured");
        break;
    case BT_SET_BASE_MODEL:
        bt_strlcpy(r->base_model, ev->str, sizeof r->base_model);
        break;
    case BT_SET_INFERENCE: {
        int i = bt_inference_by_name(ev->str);
        if (i >= 0)
            r->inference = (enum bt_inference)i;
        break;
    }
    case BT_SET_IDENTITY:
        bt_strlcpy(r->identity, ev->str, sizeof r->identity);
        break;
    case BT_SET_LIFECYCLE:
        bt_strlcpy(r->lifecycle, !strcmp(ev->str, "ACTIVE") || !strcmp(ev->str, "LEGACY") ? ev->str : "",
                   sizeof r->lifecycle);
        bt_strlcpy(r->lifecycle_text, ev->text, sizeof r->lifecycle_text);
        break;
    case BT_SET_PROFILE:
        bt_strlcpy(r->profile_check, ev->str, sizeof r->profile_check);
        bt_strlcpy(r->profile_text, ev->text, sizeof r->profile_text);
        break;
    default:
        break;
    }
}

/* 1.x recordings only (BT_EVCODE_BASE_MODEL): the prose those files carry. */
static void apply_base_model(struct bt_route *r, const char *text)
{
    char model[192], inf[16];
    double burndown;
    if (sscanf(text, "base model %191[^,], %15[^,], burndown %lf", model, inf, &burndown) != 3 ||
        !isfinite(burndown) || burndown < 1 || burndown > 1000)
        return;
    int i = bt_inference_by_name(inf);
    if (i >= 0)
        r->inference = (enum bt_inference)i;
    bt_strlcpy(r->base_model, model, sizeof r->base_model);
    r->burndown = r->burndown_prior = burndown;
}

/* BT_EVCODE_TAG / BT_EVCODE_TAG_UNKNOWN: what the profile's tag says (core/shares.c). */
static void apply_tag(struct bt_route *r, const struct bt_event *ev)
{
    if (!strcmp(ev->code, BT_EVCODE_TAG)) {
        bt_strlcpy(r->tag, ev->text, sizeof r->tag);
        r->tag_reason[0] = '\0';
    } else if (!strcmp(ev->code, BT_EVCODE_TAG_UNKNOWN)) {
        r->tag[0] = '\0';
        bt_strlcpy(r->tag_reason, ev->text, sizeof r->tag_reason);
    }
}

static void record_apply(struct bt_store *s, struct bt_route *routes, const struct bt_event *ev)
{
    bt_store_event(s, ev);
    apply_event(s, routes, ev, NULL);
}

/* The error an OK becomes for route r when its poll brought a value out of
 * bounds; false when none did. */
static bool implausible_error(struct bt_store *s, int r, const struct bt_event *ok,
                              struct bt_event *err)
{
    struct bt_source_status *st = bt_store_status(s, r, ok->source);
    if (!st || !st->implausible[0])
        return false;
    *err = *ok;
    err->type = BT_EV_ERROR;
    err->route = r;
    bt_strlcpy(err->code, "Implausible", sizeof err->code);
    bt_strlcpy(err->text, st->implausible, sizeof err->text);
    st->implausible[0] = '\0';
    return true;
}

void bt_model_event(struct bt_store *s, struct bt_route *routes, const struct bt_event *ev)
{
    struct bt_event e;
    char why[160];
    /* a quota event of NAN says why the quota is unknown (collectors/quota_collect.c) */
    if (ev->type == BT_EV_QUOTA && ev->route >= 0 && !isnan(ev->value) &&
        !bt_quota_plausible(ev->quota_kind, ev->value, why, sizeof why)) {
        e = (struct bt_event){.t = ev->t, .type = BT_EV_ERROR, .route = ev->route,
                              .source = BT_SRC_QUOTAS};
        bt_strlcpy(e.code, "Implausible", sizeof e.code);
        snprintf(e.text, sizeof e.text, "implausible value: quota %s = %.9g: %s; not used",
                 bt_quota_kind_name(ev->quota_kind), ev->value, why);
        record_apply(s, routes, &e);
        return;
    }
    if (ev->type == BT_EV_OK && ev->route >= 0 && implausible_error(s, ev->route, ev, &e)) {
        record_apply(s, routes, &e);
        return;
    }
    if (ev->type == BT_EV_ERROR) {
        /* the poll failed anyway: that error is the reason, no later OK's */
        for (int r = ev->route < 0 ? 0 : ev->route; r < s->nroutes; r++) {
            struct bt_source_status *st = bt_store_status(s, r, ev->source);
            if (st && st->implausible[0])
                st->implausible[0] = '\0';
            if (ev->route >= 0)
                break;
        }
    }
    record_apply(s, routes, ev);
    if (ev->type == BT_EV_OK && ev->route < 0)
        for (int r = 0; r < s->nroutes; r++)
            if (implausible_error(s, r, ev, &e))
                record_apply(s, routes, &e);
}

/* Route r's steady burndown as a CloudWatch poll at t left it: measured from the
 * samples that had arrived by t, as apply_event does live. */
static void settle_at(struct bt_store *s, struct bt_route *routes, int r, int64_t t)
{
    int64_t hz = s->horizon;
    s->horizon = t;
    bt_route_burndown_settle(&routes[r], s, r, t);
    s->horizon = hz;
}

/* A seek's deferred settles (defer[r]: the time of route r's newest CloudWatch poll
 * not yet measured, 0 none). A settle rewrites all of the steady burndown from its
 * measurement and the route's prior, and only a setting or an info event changes the
 * prior: so of the settles between two of those only the last counts, and a seek
 * that applies a day of polls measures each route once, not once a poll. */
static void settle_deferred(struct bt_store *s, struct bt_route *routes, int64_t *defer, int r)
{
    if (defer && r >= 0 && r < s->nroutes && defer[r]) {
        settle_at(s, routes, r, defer[r]);
        defer[r] = 0;
    }
}

/* ev applied to routes; defer NULL: a CloudWatch poll's settle is measured now (live),
 * else it is deferred (a seek, settle_deferred) */
static void apply_event(struct bt_store *s, struct bt_route *routes, const struct bt_event *ev,
                        int64_t *defer)
{
    if (ev->type == BT_EV_INFO || ev->type == BT_EV_SETTING)
        settle_deferred(s, routes, defer, ev->route);
    switch (ev->type) {
    case BT_EV_QUOTA: {
        if (ev->route < 0 || ev->route >= s->nroutes || (unsigned)ev->quota_kind >= BT_Q_COUNT)
            break;
        struct bt_quota *q = &routes[ev->route].quota[ev->quota_kind];
        if (bt_quota_rank(ev->quota_source) < bt_quota_rank(q->source))
            break;
        q->value = ev->value;
        q->source = ev->quota_source;
        routes[ev->route].quota_adjustable[ev->quota_kind] = isnan(ev->value) ? BT_ADJ_UNKNOWN
                                                                              : ev->adjustable;
        routes[ev->route].quota_match[ev->quota_kind] = isnan(ev->value) ? BT_QM_NONE
                                                                         : ev->matched_by;
        bt_strlcpy(q->code, ev->code, sizeof q->code);
        bt_strlcpy(q->name, ev->text, sizeof q->name);
        break;
    }
    case BT_EV_INFO:
        if (ev->route >= 0 && ev->route < s->nroutes && !strcmp(ev->code, BT_EVCODE_BASE_MODEL))
            apply_base_model(&routes[ev->route], ev->text);
        if (ev->route >= 0 && ev->route < s->nroutes && !strcmp(ev->code, BT_EVCODE_LEGACY_MODEL))
            routes[ev->route].legacy_seen = true;
        if (ev->route >= 0 && ev->route < s->nroutes && !strcmp(ev->code, BT_EVCODE_UNSEEN_CALLERS)) {
            bt_strlcpy(routes[ev->route].unseen, ev->text, sizeof routes[ev->route].unseen);
            routes[ev->route].unseen_asked = true;
            routes[ev->route].unseen_failed[0] = '\0';
        }
        if (ev->route >= 0 && ev->route < s->nroutes && !strcmp(ev->code, BT_EVCODE_UNSEEN_FAILED))
            bt_strlcpy(routes[ev->route].unseen_failed, ev->text[0] ? ev->text : "failed",
                       sizeof routes[ev->route].unseen_failed);
        if (ev->route >= 0 && ev->route < s->nroutes)
            apply_tag(&routes[ev->route], ev);
        break;
    case BT_EV_SETTING:
        if (ev->route >= 0 && ev->route < s->nroutes)
            apply_setting(&routes[ev->route], ev);
        break;
    case BT_EV_OK:
    case BT_EV_ERROR:
        if (ev->route >= 0) {
            apply_status(s, ev->route, ev);
        } else {
            for (int r = 0; r < s->nroutes; r++)
                apply_status(s, r, ev);
        }
        /* a CloudWatch poll answered or failed: the steady burndown from the minutes
         * stored before it (the same whether the process saw the earlier polls or not) */
        for (int r = ev->route < 0 ? 0 : ev->route; ev->source == BT_SRC_CLOUDWATCH && r < s->nroutes; r++) {
            if (defer)
                defer[r] = ev->t;
            else
                bt_route_burndown_settle(&routes[r], s, r, ev->t);
            if (ev->route >= 0)
                break;
        }
        break;
    default:
        break;
    }
}

/* A seek's deferred settles: one time per route, none yet (NULL: no routes). */
static int64_t *defer_new(const struct bt_store *s)
{
    return s->nroutes > 0 ? bt_xcalloc((size_t)s->nroutes, sizeof(int64_t)) : NULL;
}

/* Every route's last deferred settle measured (in route order: each reads only its own
 * series), and the list freed. */
static void defer_flush(struct bt_store *s, struct bt_route *routes, int64_t *defer)
{
    for (int r = 0; defer && r < s->nroutes; r++)
        settle_deferred(s, routes, defer, r);
    free(defer);
}

void bt_store_set_horizon(struct bt_store *s, struct bt_route *routes,
                          const struct bt_route *base_routes, int64_t t)
{
    /* forward from the last horizon over a log in time order, with nothing else
     * changed since: the events in between continue the same sequence of applies */
    if (t && s->hz_valid && s->hz_sorted && s->horizon && t >= s->horizon &&
        s->generation == s->hz_gen && s->nlog == s->hz_nlog && s->hz_routes == routes &&
        s->hz_base == base_routes) {
        size_t i = s->hz_next;
        int64_t *defer = defer_new(s);
        for (; i < s->nlog && s->log[i].t <= t; i++) {
            s->horizon = s->log[i].t;
            apply_event(s, routes, &s->log[i], defer);
        }
        defer_flush(s, routes, defer);
        s->hz_next = i;
        s->horizon = t;
        bt_cov_to_horizon(s, t);
        s->generation++;
        s->hz_gen = s->generation;
        return;
    }
    s->horizon = t;
    status_reset(s);
    for (int r = 0; r < s->nroutes; r++) {
        memcpy(routes[r].quota, base_routes[r].quota, sizeof routes[r].quota);
        memcpy(routes[r].quota_match, base_routes[r].quota_match, sizeof routes[r].quota_match);
        /* what events change besides quotas: the settings learned at run time */
        bt_strlcpy(routes[r].base_model, base_routes[r].base_model, sizeof routes[r].base_model);
        bt_strlcpy(routes[r].identity, base_routes[r].identity, sizeof routes[r].identity);
        routes[r].inference = base_routes[r].inference;
        routes[r].burndown = base_routes[r].burndown;
        routes[r].burndown_source = base_routes[r].burndown_source;
        routes[r].burndown_prior = base_routes[r].burndown_prior;
        routes[r].burndown_prior_source = base_routes[r].burndown_prior_source;
        routes[r].burndown_verified = base_routes[r].burndown_verified;
        routes[r].burndown_steady = base_routes[r].burndown_steady;
        routes[r].burndown_steady_minutes = base_routes[r].burndown_steady_minutes;
        bt_strlcpy(routes[r].burndown_row, base_routes[r].burndown_row, sizeof routes[r].burndown_row);
        routes[r].max_tokens = base_routes[r].max_tokens;
        routes[r].legacy_seen = base_routes[r].legacy_seen;
        bt_strlcpy(routes[r].unseen, base_routes[r].unseen, sizeof routes[r].unseen);
        routes[r].unseen_asked = base_routes[r].unseen_asked;
        bt_strlcpy(routes[r].unseen_failed, base_routes[r].unseen_failed,
                   sizeof routes[r].unseen_failed);
        memcpy(routes[r].lifecycle, base_routes[r].lifecycle, sizeof routes[r].lifecycle);
        memcpy(routes[r].lifecycle_text, base_routes[r].lifecycle_text, sizeof routes[r].lifecycle_text);
        memcpy(routes[r].profile_check, base_routes[r].profile_check, sizeof routes[r].profile_check);
        memcpy(routes[r].profile_text, base_routes[r].profile_text, sizeof routes[r].profile_text);
    }
    /* each event sees the samples that had arrived when it did, as live: a steady
     * burndown (bt_route_burndown_settle) is measured from those, not later ones */
    bool sorted = true;
    size_t next = 0; /* with the log in time order: the first event after t */
    int64_t *defer = defer_new(s);
    for (size_t i = 0; i < s->nlog; i++) {
        if (i && s->log[i].t < s->log[i - 1].t)
            sorted = false;
        if (!t || s->log[i].t <= t) {
            s->horizon = s->log[i].t;
            apply_event(s, routes, &s->log[i], defer);
            if (sorted)
                next = i + 1;
        }
    }
    defer_flush(s, routes, defer);
    s->horizon = t;
    bt_cov_to_horizon(s, t);
    s->generation++;
    s->hz_valid = t != 0;
    s->hz_sorted = sorted;
    s->hz_next = next;
    s->hz_nlog = s->nlog;
    s->hz_gen = s->generation;
    s->hz_routes = routes;
    s->hz_base = base_routes;
}

void bt_store_bind_routes(struct bt_store *s, struct bt_route *routes)
{
    s->routes = routes;
}

void bt_store_apply(struct bt_store *s, const struct bt_event *ev)
{
    if (s->routes)
        bt_model_event(s, s->routes, ev);
    else
        bt_store_event(s, ev);
}

/* Shares of a quota group (core/shares.h): the per-series store behind the team
 * shares, and the shares themselves, derived from the evaluated frame. */
#include "core/shares.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/counters.h"
#include "core/eval_int.h"
#include "core/shares_int.h"
#include "core/sanitize.h"
#include "core/strmap.h"
#include "core/util.h"

/* ---- the per-series store ---- */

/* Every series gets a slot of its own in an inner store (a "route" of it): the same
 * rings, growth, arrivals and horizon as the routes' series. */
struct ss_slot {
    int route;
    uint64_t hash;
    char *id;
};
struct bt_series_store {
    struct bt_store st;
    struct ss_slot *slot;
    int n, cap;
    int **rslot;             /* per route of the outer store: its slots */
    int *per_route, *rcap;   /* how many, and room for */
    int *ht;                 /* open addressing on (route, hash): slot + 1, 0 empty */
    size_t htcap;
};

bool bt_signal_share_gauge(enum bt_signal sig)
{
    return sig == BT_SIG_ADM_IN_FLIGHT || sig == BT_SIG_ADM_RESERVED_HELD;
}

/* What the shares read per series: the two gauges and the token counters' rates. */
static bool kept(enum bt_signal sig)
{
    return bt_signal_share_gauge(sig) || sig == BT_SIG_ADM_SETTLED || sig == BT_SIG_ADM_RESERVED;
}

void bt_series_store_free(struct bt_store *s)
{
    struct bt_series_store *ss = s->series_store;
    if (!ss)
        return;
    for (int i = 0; i < ss->n; i++)
        free(ss->slot[i].id);
    for (int r = 0; r < s->nroutes; r++)
        free(ss->rslot[r]);
    free(ss->rslot);
    free(ss->slot);
    free(ss->per_route);
    free(ss->rcap);
    free(ss->ht);
    ss->st.nroutes = ss->cap;
    bt_store_free(&ss->st);
    free(ss);
    s->series_store = NULL;
}

int bt_series_store_count(const struct bt_store *s, int route)
{
    const struct bt_series_store *ss = s->series_store;
    return ss && route >= 0 && route < s->nroutes ? ss->per_route[route] : 0;
}

static size_t ht_pos(uint64_t h, int route, size_t cap)
{
    return (size_t)((h ^ ((uint64_t)(unsigned)route * 0x9e3779b97f4a7c15ULL)) & (cap - 1));
}

static void ht_insert(struct bt_series_store *ss, int k)
{
    size_t i = ht_pos(ss->slot[k].hash, ss->slot[k].route, ss->htcap);
    while (ss->ht[i])
        i = (i + 1) & (ss->htcap - 1);
    ss->ht[i] = k + 1;
}

/* The slot of (route, id), a new one when absent (-1: the route follows
 * BT_COUNTER_SERIES already). */
static int slot_of(struct bt_store *s, int route, const char *id)
{
    if (!s->series_store) {
        struct bt_series_store *n = bt_xcalloc(1, sizeof *n);
        bt_store_init(&n->st, 0, s->history);
        if (s->track_arrival)
            bt_store_track_arrival(&n->st);
        size_t nr = (size_t)(s->nroutes ? s->nroutes : 1);
        n->rslot = bt_xcalloc(nr, sizeof *n->rslot);
        n->per_route = bt_xcalloc(nr, sizeof *n->per_route);
        n->rcap = bt_xcalloc(nr, sizeof *n->rcap);
        n->htcap = 64;
        n->ht = bt_xcalloc(n->htcap, sizeof *n->ht);
        s->series_store = n;
    }
    struct bt_series_store *ss = s->series_store;
    uint64_t h = bt_str_hash(id);
    for (size_t i = ht_pos(h, route, ss->htcap); ss->ht[i]; i = (i + 1) & (ss->htcap - 1)) {
        const struct ss_slot *sl = &ss->slot[ss->ht[i] - 1];
        if (sl->route == route && sl->hash == h && !strcmp(sl->id, id))
            return ss->ht[i] - 1;
    }
    if (ss->per_route[route] >= BT_COUNTER_SERIES)
        return -1;
    if (ss->n == ss->cap) {
        int cap = ss->cap ? ss->cap * 2 : 16;
        ss->slot = bt_xrealloc(ss->slot, (size_t)cap * sizeof *ss->slot);
        bt_store_grow(&ss->st, cap);
        ss->cap = cap;
    }
    int k = ss->n;
    ss->slot[k] = (struct ss_slot){.route = route, .hash = h, .id = bt_xstrdup(id)};
    ss->st.nroutes = ++ss->n;
    if ((size_t)ss->n * 2 > ss->htcap) {
        free(ss->ht);
        ss->htcap *= 2;
        ss->ht = bt_xcalloc(ss->htcap, sizeof *ss->ht);
        for (int i = 0; i < ss->n; i++)
            ht_insert(ss, i);
    } else {
        ht_insert(ss, k);
    }
    if (ss->per_route[route] == ss->rcap[route]) {
        ss->rcap[route] = ss->rcap[route] ? ss->rcap[route] * 2 : 4;
        ss->rslot[route] = bt_xrealloc(ss->rslot[route], (size_t)ss->rcap[route] * sizeof **ss->rslot);
    }
    ss->rslot[route][ss->per_route[route]++] = k;
    return k;
}

void bt_series_store_put(struct bt_store *s, int route, const char *series, enum bt_signal sig,
                         double value, int64_t arrival)
{
    if (route < 0 || route >= s->nroutes || !isfinite(value) || !kept(sig))
        return;
    int k = slot_of(s, route, series);
    if (k < 0)
        return;
    struct bt_sample smp = {.t = arrival, .route = k, .signal = sig, .value = value};
    bt_store_add(&s->series_store->st, &smp, arrival);
}

/* Series k's value of sig at minute m, as the outer store would show it (its horizon). */
static double ss_at(const struct bt_store *s, int k, enum bt_signal sig, int64_t m)
{
    struct bt_series_store *ss = s->series_store;
    ss->st.horizon = s->horizon;
    return bt_store_at(&ss->st, k, sig, m);
}

bool bt_series_label(const char *series, const char *label, char *out, size_t n)
{
    size_t ll = strlen(label);
    const char *p = series;
    if (*p == '#')
        return false; /* the hash of a longer identity: no labels to read */
    while (*p) {
        const char *eq = strchr(p, '=');
        if (!eq || eq[1] != '"')
            return false;
        bool match = (size_t)(eq - p) == ll && !strncmp(p, label, ll);
        size_t o = 0;
        const char *q = eq + 2;
        for (; *q && *q != '"'; q++) {
            char c = *q;
            if (c == '\\' && q[1]) {
                q++;
                c = *q == 'n' ? '\n' : *q;
            }
            if (match && o + 1 < n)
                out[o++] = c;
        }
        if (match) {
            if (n)
                out[o] = '\0';
            return true;
        }
        if (*q != '"')
            return false;
        p = q + 1;
        if (*p == ',')
            p++;
    }
    return false;
}

/* ---- shares ---- */

static const char *const by_names[BT_SHARE_COUNT] = {"team", "tag", "project", "route"};

const char *bt_share_by_name(enum bt_share_by b)
{
    return (unsigned)b < BT_SHARE_COUNT ? by_names[b] : "?";
}

int bt_share_by_parse(const char *s)
{
    for (int i = 0; i < BT_SHARE_COUNT; i++)
        if (!strcmp(s, by_names[i]))
            return i;
    return -1;
}

void bt_shares_free(struct bt_share_list *l)
{
    free(l->s);
    l->s = NULL;
    l->n = l->cap = 0;
}

/* A new share named name, at 0 and known, without looking for one of that name. */
static struct bt_share *share_new(struct bt_share_list *l, const char *name, const char *source)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->s = bt_xrealloc(l->s, (size_t)l->cap * sizeof *l->s);
    }
    struct bt_share *s = &l->s[l->n++];
    memset(s, 0, sizeof *s);
    s->by = l->by;
    bt_strlcpy(s->name, name, sizeof s->name);
    s->used = 0;
    s->pct = NAN;
    s->quality = BT_QL_IDLE;
    s->source = source;
    return s;
}

/* The share named name (added at 0, known, when absent). */
struct bt_share *bt_share_of(struct bt_share_list *l, const char *name, const char *source)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->s[i].name, name))
            return &l->s[i];
    return share_new(l, name, source);
}

/* Adds a part of quality q to a share: an idle share and an exact part make an
 * exact one; a bound stays a bound. */
void bt_share_add(struct bt_share *s, double v, enum bt_quality q)
{
    if (isnan(v))
        q = BT_QL_LOWER;
    s->quality = s->quality == BT_QL_IDLE && q != BT_QL_IDLE ? q : bt_quality_add(s->quality, q);
    s->used += bt_z(v);
}

static void unattributed(struct bt_share_list *l, double v, enum bt_quality q, const char *why)
{
    struct bt_share *u = bt_share_of(l, BT_SHARE_UNATTRIBUTED, "unattributed");
    bt_share_add(u, v, q);
    /* every reason, while they fit whole (the first always) */
    size_t len = strlen(u->reason);
    if (why && !len)
        bt_strlcpy(u->reason, why, sizeof u->reason);
    else if (why && !strstr(u->reason, why) && len + 2 + strlen(why) < sizeof u->reason)
        bt_fmt_cut(u->reason + len, sizeof u->reason - len, "; %s", why); /* fits: checked */
}

/* Per team, one route's figures at its admission scrape: the settled tokens per
 * minute and the reservations held by its calls in flight (the held gauge, else
 * calls in flight x R), from each series' own rate and gauge. */
struct team_part {
    char name[96];
    double settled, held;
};

/* The route's admission scrape: the frame's, or the settled counter's when no
 * gauge or reservation counter came (the frame reads those). */
static int64_t adm_instant(const struct bt_store *st, const struct bt_eval *e)
{
    int64_t am = bt_store_newest(st, e->route, BT_SIG_ADM_SETTLED, e->now);
    return e->adm_minute > am ? e->adm_minute : am;
}

/* A share read back from bedtop serve through Prometheus (bt_share_readback_id),
 * not an admission series of the route's own. */
static bool is_readback(const char *id)
{
    return !strncmp(id, "__share=\"", 9);
}

bool bt_share_readback_id(enum bt_share_by by, const char *name, char *out, size_t n)
{
    struct bt_buf b = {0};
    bt_buf_printf(&b, "__share=\"%s\",name=\"", bt_share_by_name(by));
    bt_label_escape_buf(&b, name);
    bt_buf_putc(&b, '"');
    bool fits = b.len < n;
    if (fits)
        bt_strlcpy(out, bt_buf_str(&b), n);
    bt_buf_free(&b);
    return fits;
}

/* The shares by `by` (team, tag) of route r's readback series at its admission
 * scrape (else its minute), added to l (source "prometheus"); their sum. */
static double readback_parts(const struct bt_store *st, const struct bt_eval *e,
                             enum bt_share_by by_what, struct bt_share_list *l, bool *any)
{
    const struct bt_series_store *ss = st->series_store;
    /* where promsource put them: the admission scrape, else (a route without
     * admission: tags) the CloudWatch minute evaluated */
    int64_t am = adm_instant(st, e);
    if (!am)
        am = e->minute;
    double sum = 0;
    if (!ss || !am)
        return 0;
    for (int j = 0; j < ss->per_route[e->route]; j++) {
        int k = ss->rslot[e->route][j];
        char who[96], by[16];
        if (!is_readback(ss->slot[k].id) || !bt_series_label(ss->slot[k].id, "__share", by, sizeof by) ||
            strcmp(by, bt_share_by_name(by_what)) != 0 ||
            !bt_series_label(ss->slot[k].id, "name", who, sizeof who) || !who[0])
            continue;
        double v = ss_at(st, k, BT_SIG_ADM_RESERVED_HELD, am);
        if (isnan(v))
            continue;
        bt_share_add(bt_share_of(l, who, "prometheus"), v, BT_QL_KNOWN);
        sum += v;
        *any = true;
    }
    return sum;
}

static int team_parts(const struct bt_store *st, const struct bt_eval *e, const char *label,
                      bool *labelled_all, struct team_part **out)
{
    const struct bt_series_store *ss = st->series_store;
    int n = 0, cap = 0;
    *out = NULL;
    *labelled_all = true;
    int64_t am = adm_instant(st, e);
    if (!ss || !am)
        return 0;
    const int *sl = ss->rslot[e->route];
    int ns = ss->per_route[e->route];
    bool held_gauge = false;
    for (int j = 0; j < ns && !held_gauge; j++)
        held_gauge = !is_readback(ss->slot[sl[j]].id) &&
                     !isnan(ss_at(st, sl[j], BT_SIG_ADM_RESERVED_HELD, am));
    for (int j = 0; j < ns; j++) {
        int k = sl[j];
        if (is_readback(ss->slot[k].id))
            continue; /* the group's, read at the group (bt_shares_group) */
        double settled = ss_at(st, k, BT_SIG_ADM_SETTLED, am);
        double held = held_gauge ? ss_at(st, k, BT_SIG_ADM_RESERVED_HELD, am)
                                 : ss_at(st, k, BT_SIG_ADM_IN_FLIGHT, am) * e->reservation;
        if (isnan(settled) && isnan(held))
            continue;
        char name[96];
        if (!bt_series_label(ss->slot[k].id, label, name, sizeof name) || !name[0]) {
            *labelled_all = false;
            bt_strlcpy(name, BT_SHARE_UNATTRIBUTED, sizeof name);
        }
        int i = 0;
        while (i < n && strcmp((*out)[i].name, name))
            i++;
        if (i == n) {
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                *out = bt_xrealloc(*out, (size_t)cap * sizeof **out);
            }
            memset(&(*out)[n], 0, sizeof **out);
            bt_strlcpy((*out)[n].name, name, sizeof (*out)[n].name);
            n++;
        }
        (*out)[i].settled += bt_z(settled);
        (*out)[i].held += bt_z(held);
    }
    return n;
}

/* One route's use split by team: each team's own settled tokens and held
 * reservations; what the counters do not account for (CloudWatch's charge above
 * the counters', series without the label) is unattributed. When the counters say
 * more than the route's use (their scrape and CloudWatch's minute differ), the teams'
 * parts are scaled to the use and are estimates. */
static void route_by_team(const struct bt_store *st, const struct bt_eval *e, const char *route,
                          const char *label, struct bt_share_list *l)
{
    struct team_part *p;
    bool all;
    int n = team_parts(st, e, label, &all, &p);
    double used = e->used;
    enum bt_quality q = e->used_q == BT_QL_IDLE ? BT_QL_IDLE : e->used_q;
    bool held_in = e->token_side != BT_SIDE_OUTPUT; /* the output side holds nothing */
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += p[i].settled + (held_in ? p[i].held : 0);
    char why[224];
    if (!n) {
        snprintf(why, sizeof why, "%s: no admission series with a %s label", route, label);
        unattributed(l, used, q, why);
        return;
    }
    double scale = sum > used && sum > 0 ? used / sum : 1;
    enum bt_quality tq = scale < 1 && (q == BT_QL_KNOWN) ? BT_QL_ESTIMATE
                         : q == BT_QL_IDLE && sum > 0 ? BT_QL_KNOWN : q;
    for (int i = 0; i < n; i++) {
        double v = (p[i].settled + (held_in ? p[i].held : 0)) * scale;
        if (!strcmp(p[i].name, BT_SHARE_UNATTRIBUTED)) {
            snprintf(why, sizeof why, "admission series without a %s label", label);
            unattributed(l, v, tq, why);
        } else {
            bt_share_add(bt_share_of(l, p[i].name, "admission"), v, tq);
        }
    }
    double rest = used - sum * scale;
    if (rest > 0.5 || isnan(used)) {
        snprintf(why, sizeof why, "use the admission counters do not account for (CloudWatch's "
                 "charge above the counters', callers without admission)");
        unattributed(l, rest, isnan(used) ? BT_QL_UNKNOWN : q, why);
    }
    free(p);
}

/* The read-back team shares against the group's use as this reader evaluates it:
 * of its quality (a bound stays one), scaled to it when they say more (estimates),
 * and what they do not name unattributed, as serve had it. */
static void readback_finish(struct bt_share_list *l, double sum)
{
    double scale = sum > l->group_used && sum > 0 ? l->group_used / sum : 1;
    enum bt_quality q = l->group_q == BT_QL_IDLE ? BT_QL_KNOWN : l->group_q;
    if (scale < 1 && q == BT_QL_KNOWN)
        q = BT_QL_ESTIMATE;
    for (int i = 0; i < l->n; i++) {
        struct bt_share *s = &l->s[i];
        if (s->source && !strcmp(s->source, "prometheus")) {
            s->used *= scale;
            s->quality = q;
        }
    }
    double rest = l->group_used - sum * scale;
    char why[160];
    snprintf(why, sizeof why, "use the %s shares read from Prometheus do not name (bedtop "
             "serve's unattributed)", bt_share_by_name(l->by));
    if (rest > 0.5)
        unattributed(l, rest, q, why);
}

static int cmp_share(const void *a, const void *b)
{
    const struct bt_share *x = a, *y = b;
    /* other, unattributed, then outside the config, after every named share */
    int rx = x->outside ? 3 : !strcmp(x->name, BT_SHARE_UNATTRIBUTED) ? 2 : !strcmp(x->name, BT_SHARE_OTHER),
        ry = y->outside ? 3 : !strcmp(y->name, BT_SHARE_UNATTRIBUTED) ? 2 : !strcmp(y->name, BT_SHARE_OTHER);
    if (rx != ry)
        return rx - ry;
    double ux = isnan(x->used) ? -1 : x->used, uy = isnan(y->used) ? -1 : y->used;
    if (ux != uy)
        return ux > uy ? -1 : 1;
    return strcmp(x->name, y->name);
}

void bt_shares_finish(struct bt_share_list *l)
{
    qsort(l->s, (size_t)l->n, sizeof *l->s, cmp_share);
    for (int i = 0; i < l->n; i++) {
        struct bt_share *s = &l->s[i];
        s->pct = !isnan(s->used) && l->group_used > 0 ? 100 * s->used / l->group_used
                 : !isnan(s->used) && l->group_used == 0 ? 0 : NAN;
    }
}

void bt_shares_group(const struct bt_config *cfg, const struct bt_store *st,
                     const struct bt_eval *evals, const struct bt_group *g, enum bt_share_by by,
                     const char *label, struct bt_share_list *out)
{
    out->n = 0;
    out->by = by;
    out->group = g->leader;
    out->group_used = 0;
    out->group_q = BT_QL_IDLE;
    if (!label)
        label = cfg->share_label;
    const char *unseen = NULL;
    /* the team (tag) shares bedtop serve exported, read back through Prometheus
     * (--source): the group's own, so the routes' use is not split again */
    bool readback = false;
    double rb_sum = 0;
    for (int i = 0; (by == BT_SHARE_TEAM || (by == BT_SHARE_TAG && cfg->attribute_tag[0])) && i < g->n; i++)
        if (!isnan(evals[g->members[i]].used))
            rb_sum += readback_parts(st, &evals[g->members[i]], by, out, &readback);
    for (int i = 0; i < g->n; i++) {
        const struct bt_eval *e = &evals[g->members[i]];
        const struct bt_route *rt = &cfg->routes[e->route];
        if (isnan(e->used)) {
            char why[224];
            snprintf(why, sizeof why, "%s's use is unknown", rt->name);
            out->group_q = bt_quality_add(out->group_q, BT_QL_UNKNOWN);
            unattributed(out, NAN, BT_QL_UNKNOWN, why);
            continue;
        }
        out->group_used += e->used;
        out->group_q = out->group_q == BT_QL_IDLE ? e->used_q : bt_quality_add(out->group_q, e->used_q);
        if (rt->unseen[0] && !unseen)
            unseen = rt->unseen;
        switch (by) {
        case BT_SHARE_TEAM:
            if (!readback)
                route_by_team(st, e, rt->name, label, out);
            break;
        case BT_SHARE_TAG:
            if (readback)
                break;
            if (rt->tag[0] && cfg->attribute_tag[0]) {
                bt_share_add(bt_share_of(out, rt->tag, "tags"), e->used, e->used_q);
            } else {
                char why[224];
                if (!cfg->attribute_tag[0])
                    snprintf(why, sizeof why, "no attribute_by = tag:KEY in the config");
                else if (rt->tag_reason[0])
                    bt_fmt_cut(why, sizeof why, "%s: %s", rt->name, rt->tag_reason);
                else
                    bt_fmt_cut(why, sizeof why, "%s: no tag %s read (not an application inference "
                               "profile, or not asked yet)", rt->name, cfg->attribute_tag);
                unattributed(out, e->used, e->used_q, why);
            }
            break;
        case BT_SHARE_PROJECT:
            if (rt->project[0]) {
                bt_share_add(bt_share_of(out, rt->project, "config"), e->used, e->used_q);
            } else {
                char why[224];
                snprintf(why, sizeof why, "%s names no mantle Project", rt->name);
                unattributed(out, e->used, e->used_q, why);
            }
            break;
        default:
            /* route names are unique in a config ("defined twice" is refused), so a
             * member's share is new unless a route bears a name the shares keep for
             * themselves: no search, which made a group of N routes N^2/2 compares
             * (8,000 routes on one quota: 0.46 s against 0.05 s on as many quotas) */
            if (strcmp(rt->name, BT_SHARE_UNATTRIBUTED) && strcmp(rt->name, BT_SHARE_OUTSIDE) &&
                strcmp(rt->name, BT_SHARE_OTHER))
                bt_share_add(share_new(out, rt->name, "route"), e->used, e->used_q);
            else
                bt_share_add(bt_share_of(out, rt->name, "route"), e->used, e->used_q);
            break;
        }
    }
    if (readback)
        readback_finish(out, rb_sum);
    if (unseen) {
        /* the ModelIds Metrics Insights finds on the quota: their use is not in the
         * group's (the config does not name them), so beside the sum, never in it */
        struct bt_share *o = bt_share_of(out, BT_SHARE_OUTSIDE, "metrics-insights");
        o->outside = true;
        o->used = NAN;
        o->quality = BT_QL_UNKNOWN;
        bt_strlcpy(o->reason, unseen, sizeof o->reason);
    }
    bt_shares_finish(out);
}

void bt_shares_of_route(const struct bt_config *cfg, const struct bt_store *st,
                        const struct bt_eval *evals, int r, enum bt_share_by by,
                        const char *label, struct bt_share_list *out)
{
    int n = 0, cap = 8;
    int *m = bt_xmalloc((size_t)cap * sizeof *m);
    for (int k = bt_group_leader(evals, r); k >= 0;
         k = bt_group_next(evals, k)) {
        if (n == cap) {
            cap *= 2;
            m = bt_xrealloc(m, (size_t)cap * sizeof *m);
        }
        m[n++] = k;
    }
    struct bt_group g = {.leader = m[0], .n = n, .members = m};
    bt_shares_group(cfg, st, evals, &g, by, label, out);
    free(m);
}

void bt_shares_shown(const struct bt_config *cfg, const struct bt_store *st,
                     const struct bt_eval *evals, int r, enum bt_share_by by,
                     struct bt_share_list *out)
{
    bt_shares_of_route(cfg, st, evals, r, by, NULL, out);
    if (by == BT_SHARE_ROUTE)
        return;
    for (int k = 0; k < out->n; k++)
        if (out->s[k].outside)
            out->s[k--] = out->s[--out->n];
}

/* The memo's slots [from, from + n) freed, none computed. */
static void memo_drop(struct bt_share_memo *m, size_t from, size_t n)
{
    for (size_t i = from; i < from + n; i++) {
        bt_shares_free(&m->lists[i]);
        m->have[i] = false;
    }
}

const struct bt_share_list *bt_share_memo_get(struct bt_share_memo *m,
                                              const struct bt_config *cfg,
                                              const struct bt_store *st,
                                              const struct bt_eval *evals, int r,
                                              enum bt_share_by by,
                                              struct bt_share_list *scratch)
{
    int leader = bt_group_leader(evals, r);
    if (!m || bt_eval_nshared(&evals[r]) <= 0 || leader < 0 || leader >= cfg->nroutes) {
        bt_shares_shown(cfg, st, evals, r, by, scratch);
        return scratch;
    }
    if (m->n != cfg->nroutes) {
        bt_share_memo_free(m);
        m->n = cfg->nroutes;
        m->lists = bt_xcalloc((size_t)m->n * BT_SHARE_COUNT, sizeof *m->lists);
        m->have = bt_xcalloc((size_t)m->n * BT_SHARE_COUNT, sizeof *m->have);
    }
    size_t i = (size_t)leader * BT_SHARE_COUNT + (size_t)by;
    if (!m->have[i]) {
        bt_shares_shown(cfg, st, evals, r, by, &m->lists[i]);
        m->have[i] = true;
    }
    return &m->lists[i];
}

void bt_share_memo_done(struct bt_share_memo *m, const struct bt_eval *evals, int r)
{
    int leader = bt_group_leader(evals, r);
    if (m && m->n && leader >= 0 && leader < m->n && bt_group_next(evals, r) < 0)
        memo_drop(m, (size_t)leader * BT_SHARE_COUNT, BT_SHARE_COUNT);
}

void bt_share_memo_reset(struct bt_share_memo *m)
{
    if (m && m->n)
        memo_drop(m, 0, (size_t)m->n * BT_SHARE_COUNT);
}

void bt_share_memo_free(struct bt_share_memo *m)
{
    if (!m)
        return;
    bt_share_memo_reset(m);
    free(m->lists);
    free(m->have);
    *m = (struct bt_share_memo){0};
}

void bt_shares_top(struct bt_share_list *l, int n)
{
    int named = 0;
    for (int i = 0; i < l->n; i++)
        named += !l->s[i].outside && strcmp(l->s[i].name, BT_SHARE_UNATTRIBUTED);
    if (named <= n)
        return;
    struct bt_share other = {.by = l->by, .used = 0, .quality = BT_QL_IDLE, .source = "admission"};
    bt_strlcpy(other.name, BT_SHARE_OTHER, sizeof other.name);
    int w = 0, kept = 0, folded = 0;
    for (int i = 0; i < l->n; i++) {
        struct bt_share *s = &l->s[i];
        bool is_named = !s->outside && strcmp(s->name, BT_SHARE_UNATTRIBUTED);
        if (is_named && kept >= n) {
            bt_share_add(&other, s->used, s->quality);
            other.source = s->source;
            folded++;
            continue;
        }
        kept += is_named;
        l->s[w++] = *s;
    }
    l->n = w;
    snprintf(other.reason, sizeof other.reason, "%d smaller holders", folded);
    struct bt_share *o = bt_share_of(l, BT_SHARE_OTHER, other.source);
    *o = other;
    bt_shares_finish(l);
}

void bt_shares_holders(const struct bt_config *cfg, const struct bt_store *st,
                       const struct bt_eval *evals, const struct bt_group *g, int most, char *out,
                       size_t n)
{
    struct bt_share_list l = {0};
    out[0] = '\0';
    bt_shares_group(cfg, st, evals, g, BT_SHARE_TEAM, NULL, &l);
    bool teams = false;
    for (int i = 0; i < l.n; i++)
        teams = teams || (!l.s[i].outside && strcmp(l.s[i].name, BT_SHARE_UNATTRIBUTED));
    if (!teams)
        bt_shares_group(cfg, st, evals, g, BT_SHARE_ROUTE, NULL, &l);
    struct bt_buf b = {0};
    int said = 0;
    for (int i = 0; i < l.n && said < most; i++) {
        const struct bt_share *s = &l.s[i];
        if (s->outside || isnan(s->pct) || s->used <= 0 || !strcmp(s->name, BT_SHARE_UNATTRIBUTED))
            continue; /* a holder is named: what cannot be told apart is not one */
        bt_buf_printf(&b, "%s%s %s%.0f%%", said ? ", " : "", s->name,
                      s->quality == BT_QL_LOWER ? ">=" : s->quality == BT_QL_UPPER ? "<=" : "",
                      s->pct);
        said++;
    }
    if (said)
        bt_fmt_cut(out, n, "%s: %s", teams ? "by team" : "by route", bt_buf_str(&b));
    bt_buf_free(&b);
    bt_shares_free(&l);
}

void bt_shares_say_holders(const struct bt_config *cfg, const struct bt_store *st,
                           struct bt_eval *evals, const struct bt_group *g)
{
    char h[200] = "";
    int most = 3, made = 0; /* h holds the `made` biggest holders (0: not yet asked) */
    for (int i = 0; i < g->n; i++) {
        struct bt_eval *e = &evals[g->members[i]];
        for (int w = 0; w < e->nwarn; w++) {
            struct bt_warning *wr = &e->warnings[w];
            if (wr->code != BT_W_SHARED_QUOTA)
                continue;
            size_t len = strlen(wr->message);
            /* three holders, else as many as fit the message whole; the group's
             * holders are asked once for each count, not again for every member (a
             * group with no holder to name asked them again for each: quadratic) */
            for (; most > 0; most--) {
                if (made != most) {
                    bt_shares_holders(cfg, st, evals, g, most, h, sizeof h);
                    made = most;
                }
                if (!h[0] || len + strlen(h) + 24 < sizeof wr->message)
                    break;
            }
            if (h[0] && most > 0)
                snprintf(wr->message + len, sizeof wr->message - len, "; the biggest holders %s", h);
        }
    }
}


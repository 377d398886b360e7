/* The route list: evaluation per store change or minute, filter, sort, selection (moved, its
 * sort said, its detail opened: what the key dispatcher and the panes share). */
#include "tui/view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/figures.h"
#include "core/util.h"

const struct tui_sort tui_sort_info[SORT_COUNT] = {
    [SORT_STATUS] = {"status", BT_COL_STATUS},     [SORT_HEADROOM] = {"headroom", BT_COL_HEADPCT},
    [SORT_USED] = {"used", BT_COL_BAR},            [SORT_THROTTLES] = {"throttles", BT_COL_THR},
    [SORT_P99] = {"p99", BT_COL_P99},              [SORT_INFLIGHT] = {"in-flight", BT_COL_INFL},
    [SORT_NAME] = {"name", BT_COL_NAME},           [SORT_CONFIG] = {"config", BT_COL_COUNT},
};

int tui_sev_rank(enum bt_status s)
{
    switch (s) {
    case BT_ST_CRIT: return 4;
    case BT_ST_WARN: return 3;
    case BT_ST_UNKNOWN: return 2;
    default: return 1;
    }
}

bool tui_contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++)
        if (!strncasecmp(p, needle, n))
            return true;
    return n == 0;
}

static bool matches(const struct bt_tui *t, int r)
{
    if (!t->filter[0])
        return true;
    const struct bt_route *rt = &t->host->cfg->routes[r];
    const struct bt_eval *e = &t->evals[r];
    if (tui_contains(rt->name, t->filter) || tui_contains(rt->model, t->filter) ||
        tui_contains(rt->region, t->filter) || tui_contains(bt_endpoint_name(rt->endpoint), t->filter) ||
        tui_contains(bt_inference_name(rt->inference), t->filter) ||
        tui_contains(bt_status_name(bt_eval_status(e)), t->filter))
        return true;
    for (int w = 0; w < bt_eval_nwarn(e); w++)
        if (tui_contains(bt_wcode_name(bt_eval_warning(e, w)->code), t->filter))
            return true;
    return false;
}

/* What the USED/QUOTA bar draws, one place for the bar and its sort: the segments
 * settled, estimated and the whole quota group's use (so the bar matches HEAD%),
 * against the quota. */
enum bt_side tui_bar_values(const struct bt_eval *e, double v[BT_SEG_COUNT], double *total)
{
    /* Where a side other than the token side binds (rpm, daily, concurrent), HEAD% is
     * that side's: the bar draws its group's use against its quota, one segment (the
     * accepted requests, the day's tokens, the calls in flight), so bar and percentage
     * are of one side (issue 34), not TPM tokens beside an rpm %. */
    enum bt_side bs = bt_figure_side(&bt_figures[BT_FIG_HEADROOM_PCT], e);
    if (bs != bt_figure_side(&bt_figures[BT_FIG_HEADROOM_TPM], e)) {
        v[BT_SEG_SETTLED] = bt_eval_side(e, bs)->group_used;
        v[BT_SEG_ESTIMATED] = v[BT_SEG_RESERVED] = NAN;
        *total = bt_eval_side(e, bs)->quota;
        return bs;
    }
    v[BT_SEG_SETTLED] = bt_fig(e, BT_FIG_SETTLED);
    v[BT_SEG_ESTIMATED] = bt_fig(e, BT_FIG_ESTIMATED);
    v[BT_SEG_RESERVED] = bt_fig(e, BT_FIG_GROUP_USED);
    *total = bt_fig(e, BT_FIG_QUOTA);
    return BT_SIDE_COUNT;
}

/* The fraction of its quota the bar draws (its longest segment over the quota):
 * USED/QUOTA sorts by it. A quota of 0 is full (infinite: nothing fits), NAN without a
 * quota known. */
double tui_bar_fraction(const struct bt_eval *e)
{
    double v[BT_SEG_COUNT], total, top = NAN;
    tui_bar_values(e, v, &total);
    for (int k = 0; k < BT_SEG_COUNT; k++)
        if (!isnan(v[k]) && (isnan(top) || v[k] > top))
            top = v[k];
    if (isnan(total) || total < 0)
        return NAN;
    if (total == 0)
        return INFINITY;
    return isnan(top) ? 0 : top / total;
}

static const struct bt_tui *sort_ctx;

/* NAN sorts last whatever the direction. */
static int cmp_num(double a, double b, bool desc)
{
    if (isnan(a) || isnan(b))
        return isnan(a) - isnan(b);
    if (a == b)
        return 0;
    return (a < b) == desc ? 1 : -1;
}

/* Headroom, least first; a route with none known (no quota, or a quota of 0) is the
 * most urgent of all, not the last: it sorts first, crit before the rest. */
static int cmp_headroom(const struct bt_eval *ea, const struct bt_eval *eb)
{
    double ha = bt_fig(ea, BT_FIG_HEADROOM_PCT), hb = bt_fig(eb, BT_FIG_HEADROOM_PCT);
    if (isnan(ha) || isnan(hb)) {
        int c = isnan(hb) - isnan(ha);
        return c ? c : tui_sev_rank(bt_eval_status(eb)) - tui_sev_rank(bt_eval_status(ea));
    }
    return cmp_num(ha, hb, false);
}

static int cmp_routes(const void *pa, const void *pb)
{
    const struct bt_tui *t = sort_ctx;
    int a = *(const int *)pa, b = *(const int *)pb;
    const struct bt_eval *ea = &t->evals[a], *eb = &t->evals[b];
    int c = 0;
    switch (t->sort) {
    case SORT_STATUS:
        c = tui_sev_rank(bt_eval_status(eb)) - tui_sev_rank(bt_eval_status(ea));
        if (!c)
            c = cmp_headroom(ea, eb);
        break;
    case SORT_HEADROOM: c = cmp_headroom(ea, eb); break;
    case SORT_USED: /* the fraction the bar draws, not tokens: 1.0M of 30M is not fuller than 900k of 1M */
        c = cmp_num(tui_bar_fraction(ea), tui_bar_fraction(eb), true);
        break;
    case SORT_THROTTLES: c = cmp_num(bt_fig(ea, BT_FIG_THROTTLES), bt_fig(eb, BT_FIG_THROTTLES),
                                     true); break;
    case SORT_P99: c = cmp_num(bt_fig(ea, BT_FIG_LAT_P99), bt_fig(eb, BT_FIG_LAT_P99), true); break;
    case SORT_INFLIGHT: c = cmp_num(bt_fig(ea, BT_FIG_IN_FLIGHT), bt_fig(eb, BT_FIG_IN_FLIGHT),
                                    true); break;
    case SORT_NAME:
        c = strcmp(t->host->cfg->routes[a].name, t->host->cfg->routes[b].name);
        break;
    default: break;
    }
    if (t->sort_rev)
        c = -c;
    return c ? c : a - b;
}

void tui_evaluate(struct bt_tui *t)
{
    const struct bt_config *cfg = t->host->cfg;
    int n = cfg->nroutes;
    /* An evaluation depends on the store and the minute only: the clock ticking
     * each second redraws without evaluating every route again. */
    int64_t minute = bt_minute_floor(t->host->now);
    if (!t->evals || t->e_gen != bt_store_generation(t->host->store) || t->e_minute != minute ||
        t->e_n != n) {
        /* the array is kept from one evaluation to the next: core writes every field
         * it reads (clearing ~4.6 MB of evaluations for 500 routes was a fifth of a
         * frame) */
        if (!t->evals || t->e_n != n) {
            free(t->evals);
            t->evals = bt_xcalloc((size_t)n + 1, sizeof *t->evals);
        }
        /* bt_eval_all, its grouping kept while the routes key the same groups (their
         * keys' snprintf and sorts were a fifth of a frame after a data change) */
        if (n > 0) {
            t->groups = bt_eval_groups_renew(t->groups, cfg);
            bt_eval_all_with(cfg, t->host->store, t->host->now, t->groups, false, NULL, t->evals);
        }
        t->e_gen = bt_store_generation(t->host->store);
        t->e_minute = minute;
        t->e_n = n;
        t->e_serial++;
        tui_feed_log(t); /* live: what was shown goes into the event log */
    }
    /* the rows, filtered and sorted, again only when the evaluation, the filter or the
     * sort changed (a key that scrolls redraws the same order) */
    if (!t->order || t->o_serial != t->e_serial || t->o_sort != t->sort || t->o_rev != t->sort_rev ||
        strcmp(t->o_filter, t->filter)) {
        free(t->order);
        t->order = bt_xcalloc((size_t)n + 1, sizeof *t->order);
        t->nvis = 0;
        for (int r = 0; r < n; r++)
            if (matches(t, r))
                t->order[t->nvis++] = r;
        sort_ctx = t;
        qsort(t->order, (size_t)t->nvis, sizeof *t->order, cmp_routes);
        sort_ctx = NULL;
        t->o_serial = t->e_serial;
        t->o_version++;
        t->o_sort = t->sort;
        t->o_rev = t->sort_rev;
        bt_strlcpy(t->o_filter, t->filter, sizeof t->o_filter);
    }
    bool found = false;
    for (int i = 0; i < t->nvis; i++)
        found |= t->order[i] == t->sel_route;
    if (!found)
        t->sel_route = t->nvis ? t->order[0] : -1;
}

int tui_sel_pos(const struct bt_tui *t)
{
    for (int i = 0; i < t->nvis; i++)
        if (t->order[i] == t->sel_route)
            return i;
    return 0;
}

void tui_move_sel(struct bt_tui *t, int delta)
{
    if (!t->nvis)
        return;
    int pos = tui_sel_pos(t) + delta;
    if (pos < 0)
        pos = 0;
    if (pos >= t->nvis)
        pos = t->nvis - 1;
    t->sel_route = t->order[pos];
}

/* Moves the selection; says so at either end. */
void tui_select_by(struct bt_tui *t, int delta)
{
    if (!t->nvis) {
        snprintf(t->msg, sizeof t->msg, "no routes to select");
        return;
    }
    int before = t->sel_route;
    tui_move_sel(t, delta);
    if (t->sel_route == before && delta)
        snprintf(t->msg, sizeof t->msg, delta < 0 ? "first route" : "last route");
}

/* The sort just chosen, and why the rows may not seem to follow it. */
void tui_sort_msg(struct bt_tui *t)
{
    enum bt_col c = tui_sort_info[t->sort].col;
    bool shown = c == BT_COL_COUNT || bt_layout_has_col(&t->lay, c, NULL, NULL);
    snprintf(t->msg, sizeof t->msg, "sort by %s%s%s", tui_sort_info[t->sort].name,
             t->sort_rev ? " (inverted)" : "",
             shown ? "" : " (its column is hidden at this width)");
}

void tui_open_detail(struct bt_tui *t)
{
    if (t->sel_route < 0) {
        snprintf(t->msg, sizeof t->msg, "no route to open");
        return;
    }
    t->view = BT_VIEW_DETAIL;
    t->dsc.pos = 0;
}

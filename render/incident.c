/* bedtop report incident: report.md and the charts beside it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/format.h"
#include "core/sanitize.h"
#include "render/reportdoc.h"

static const char *const chart_files[BT_CHART_COUNT] = {"headroom", "throttles", "traffic",
                                                        "latency"};
static const char *const chart_titles[BT_CHART_COUNT] = {
    "Headroom per side, % of the quota (0 % = at the quota)", "Throttled requests per minute",
    "Offered and accepted calls per minute", "Latency p99 (InvocationLatency)"};

const char *bt_inc_chart_file(enum bt_inc_chart k)
{
    return chart_files[k];
}

/* Most affected first: a status that got worse in the window before a standing
 * one, then the worst status, then throttled minutes, then config order (b goes
 * strictly before a). */
static bool charted_before(const struct bt_inc_route *b, const struct bt_inc_route *a)
{
    if (b->worsened != a->worsened)
        return b->worsened;
    if (b->worst != a->worst)
        return b->worst > a->worst;
    return b->throttled_minutes > a->throttled_minutes;
}

int bt_inc_charted(const struct bt_incident *inc, int *routes, int max)
{
    int *all = bt_xcalloc((size_t)(inc->nroutes > 0 ? inc->nroutes : 1), sizeof *all), n = 0;
    for (int r = 0; r < inc->nroutes; r++)
        if (inc->route[r].affected)
            all[n++] = r;
    for (int i = 1; i < n; i++) { /* insertion sort, stable: config order among equals */
        int r = all[i], j = i;
        while (j > 0 && charted_before(&inc->route[r], &inc->route[all[j - 1]])) {
            all[j] = all[j - 1];
            j--;
        }
        all[j] = r;
    }
    n = n < max ? n : max;
    memcpy(routes, all, (size_t)n * sizeof *routes);
    free(all);
    return n;
}

static const char *side_label(const struct bt_incident *inc, int r, int side)
{
    return bt_side_name(bt_inc_side(inc->mantle[r], side));
}

/* The first side is always followed; the second where it is a limit of the route
 * in some minute (an RPM quota listed, mantle's output). */
static bool side_applies(const struct bt_incident *inc, int r, int s)
{
    for (int i = 0; i < inc->n && s; i++)
        if (!isnan(bt_inc_at(inc, r, i)->side_quota[s]))
            return true;
    return s == 0;
}

/* The figures a chart draws, one per minute of a route's points. */
enum field { F_SIDE, F_THROTTLES, F_OFFERED, F_ACCEPTED, F_LAT_P99 };

static double field_of(const struct bt_inc_point *p, enum field f, enum bt_side side)
{
    switch (f) {
    case F_SIDE: return p->pct[side];
    case F_THROTTLES: return p->throttles;
    case F_OFFERED: return p->offered;
    case F_ACCEPTED: return p->accepted;
    default: return p->lat_p99 / 1000; /* seconds: one unit on the axis */
    }
}

static unsigned char bound_of(enum bt_quality q)
{
    return q == BT_QL_UPPER ? BT_CHART_AT_MOST : q == BT_QL_LOWER ? BT_CHART_AT_LEAST : BT_CHART_KNOWN;
}

/* One series of route r: its colour and symbol are the route's (style: its place
 * among the charted routes, the same in every chart), its dash the figure's. */
static void add_series(struct bt_chart *c, const char *label, const struct bt_incident *inc,
                       int r, int style, int line, enum field f, enum bt_side side)
{
    if (c->nseries >= BT_CHART_MAX_SERIES)
        return;
    struct bt_chart_series *s = &c->series[c->nseries++];
    bt_strlcpy(s->label, label, sizeof s->label);
    s->style = style + 1;
    s->line = line + 1;
    s->v = bt_xcalloc((size_t)(inc->n ? inc->n : 1), sizeof *s->v);
    for (int i = 0; i < inc->n; i++)
        s->v[i] = field_of(bt_inc_at(inc, r, i), f, side);
    if (f != F_SIDE)
        return;
    s->bound = bt_xcalloc((size_t)(inc->n ? inc->n : 1), 1);
    for (int i = 0; i < inc->n; i++)
        s->bound[i] = bound_of(bt_inc_at(inc, r, i)->pct_q[side]);
}

/* The sides a route's headroom chart follows, in this order: its token side (tpm, mantle
 * input), its second (RPM where listed, mantle output), then every other side that bound
 * it in some minute of the window (the daily quota, a reserved tier): the side that binds
 * is always drawn. Dash: solid, dashed, dotted, dash-dot in that order. */
static int route_sides(const struct bt_incident *inc, int r, enum bt_side *out, int *binds)
{
    int n = 0;
    enum bt_side first[2] = {bt_inc_side(inc->mantle[r], 0), bt_inc_side(inc->mantle[r], 1)};
    for (int k = 0; k < BT_SIDE_COUNT; k++)
        binds[k] = 0;
    bool applies[BT_SIDE_COUNT] = {false};
    for (int i = 0; i < inc->n; i++) {
        const struct bt_inc_point *p = bt_inc_at(inc, r, i);
        if (p->binding >= 0 && p->binding < BT_SIDE_COUNT && !isnan(p->headroom_pct))
            binds[p->binding]++;
        for (int k = 0; k < BT_SIDE_COUNT; k++)
            applies[k] |= !isnan(p->pct[k]);
    }
    out[n++] = first[0];
    if (applies[first[1]] || binds[first[1]])
        out[n++] = first[1];
    for (int k = 0; k < BT_SIDE_COUNT; k++)
        if (binds[k] && k != (int)first[0] && k != (int)first[1])
            out[n++] = (enum bt_side)k;
    return n;
}

/* Headroom is the quota group's, the same for each of its routes: one series per
 * group and side, named after its first charted route ("triage, triage-app" when another
 * route shares it, "triage +2 sharing" for more), in that route's colour. */
static void headroom_series(const struct bt_incident *inc, const struct bt_config *cfg,
                            const int *routes, int nr, struct bt_chart *c)
{
    for (int i = 0; i < nr; i++) {
        int r = routes[i], more = 0;
        bool first = true;
        for (int j = 0; j < i; j++)
            first &= inc->group[routes[j]] != inc->group[r];
        if (!first)
            continue;
        int other = -1;
        for (int o = 0; o < inc->nroutes; o++) {
            if (o != r && inc->shown[o] && inc->group[o] == inc->group[r]) {
                more++;
                other = o;
            }
        }
        /* the route sharing the quota by name ("triage, triage-app"), or how many */
        char plus[80] = "";
        if (more == 1)
            bt_fmt_cut(plus, sizeof plus, ", %s", cfg->routes[other].name); /* whole characters */
        else if (more)
            snprintf(plus, sizeof plus, " +%d sharing", more);
        enum bt_side sides[BT_SIDE_COUNT];
        int binds[BT_SIDE_COUNT];
        int ns = route_sides(inc, r, sides, binds);
        for (int k = 0; k < ns; k++) {
            enum bt_side sd = sides[k];
            double quota = NAN;
            for (int m = inc->n - 1; m >= 0 && isnan(quota); m--) {
                const struct bt_inc_point *p = bt_inc_at(inc, r, m);
                for (int q = 0; q < 2; q++)
                    if (bt_inc_side(inc->mantle[r], q) == sd)
                        quota = p->side_quota[q];
                if (isnan(quota) && !isnan(p->quota[sd]))
                    quota = p->quota[sd];
            }
            char q[BT_FMT_SHORT], b[48] = "";
            char l[sizeof cfg->routes[r].name + sizeof plus + sizeof q + sizeof b + 64]; /* whole */
            bt_fmt_tokens(quota, q, sizeof q);
            if (binds[sd] && binds[sd] < inc->n)
                snprintf(b, sizeof b, "; binds %d of %d min", binds[sd], inc->n);
            else if (binds[sd])
                snprintf(b, sizeof b, "; binds");
            snprintf(l, sizeof l, "%s%s %s (quota %s%s%s)", cfg->routes[r].name, plus,
                     bt_side_name(sd), q,
                     sd == BT_SIDE_DAILY || sd == BT_SIDE_DAILY_ACCOUNT ? "/day"
                     : sd == BT_SIDE_CONCURRENT                       ? " in flight"
                     : sd == BT_SIDE_RPM                              ? " req/min"
                                                                      : "/min",
                     b);
            add_series(c, l, inc, r, i, k, F_SIDE, sd);
        }
    }
}

void bt_inc_chart_build(const struct bt_incident *inc, const struct bt_config *cfg,
                        enum bt_inc_chart k, struct bt_chart *c)
{
    *c = (struct bt_chart){.from = inc->from, .n = inc->n, .zero_based = true,
                           .markers = inc->marker_minute, .nmarkers = inc->nmarkers,
                           .marker_notes = inc->marker_text};
    bt_strlcpy(c->title, chart_titles[k], sizeof c->title);
    /* the same routes, in the same colours and symbols, in every chart */
    int routes[BT_CHART_STYLES];
    int nr = bt_inc_charted(inc, routes, BT_CHART_STYLES);
    char l[96];
    for (int i = 0; i < nr; i++) {
        int r = routes[i];
        const char *name = cfg->routes[r].name;
        switch (k) {
        case BT_CHART_HEADROOM:
            break; /* below: one series per quota group and side */
        case BT_CHART_THROTTLES:
            /* a line along 0 for every route never throttled only hides the others */
            if (inc->route[r].throttled_minutes > 0)
                add_series(c, name, inc, r, i, 0, F_THROTTLES, BT_SIDE_TPM);
            break;
        case BT_CHART_TRAFFIC:
            snprintf(l, sizeof l, "%s offered%s", name,
                     inc->route[r].admission ? " (admission)"
                     : inc->mantle[r]        ? ""
                                             : " (accepted + throttled)");
            add_series(c, l, inc, r, i, 1, F_OFFERED, BT_SIDE_TPM);
            snprintf(l, sizeof l, "%s accepted", name);
            add_series(c, l, inc, r, i, 0, F_ACCEPTED, BT_SIDE_TPM);
            break;
        default:
            add_series(c, name, inc, r, i, 0, F_LAT_P99, BT_SIDE_TPM);
            break;
        }
    }
    if (k == BT_CHART_HEADROOM)
        headroom_series(inc, cfg, routes, nr, c);
    for (int s = 0; s < c->nseries; s++) {
        bool known = false, gap = false, bound = false;
        for (int i = 0; i < c->n; i++) {
            bool v = !isnan(c->series[s].v[i]);
            known |= v;
            gap |= !v;
            bound |= v && c->series[s].bound && c->series[s].bound[i] != BT_CHART_KNOWN;
        }
        size_t len = strlen(c->series[s].label);
        /* in the legend, so its absence is not read as a line hidden behind others */
        if (!known)
            snprintf(c->series[s].label + len, sizeof c->series[s].label - len, ": no known value");
        else if (gap || bound)
            snprintf(c->series[s].label + len, sizeof c->series[s].label - len, "%s%s%s",
                     gap ? ", gaps: unknown" : "", bound ? ", " : "", bound ? "bounds marked" : "");
    }
    switch (k) {
    case BT_CHART_HEADROOM:
        bt_strlcpy(c->unit, "% of quota", sizeof c->unit);
        c->zero_based = true;
        c->pct = true;
        c->hline[c->nhline++] = (struct bt_chart_hline){"quota: 0 % left", 0};
        if (cfg->warn.pct) {
            struct bt_chart_hline *h = &c->hline[c->nhline++];
            snprintf(h->label, sizeof h->label, "warn %g %%", cfg->warn.value);
            h->value = cfg->warn.value;
        }
        if (cfg->crit.pct) {
            struct bt_chart_hline *h = &c->hline[c->nhline++];
            snprintf(h->label, sizeof h->label, "crit %g %%", cfg->crit.value);
            h->value = cfg->crit.value;
        }
        break;
    case BT_CHART_THROTTLES:
        bt_strlcpy(c->unit, "requests/min", sizeof c->unit);
        break;
    case BT_CHART_TRAFFIC:
        bt_strlcpy(c->unit, "calls/min", sizeof c->unit);
        break;
    default:
        bt_strlcpy(c->unit, "seconds", sizeof c->unit);
        break;
    }
}

static void hhmm(int64_t m, char *out, size_t n)
{
    char iso[32];
    bt_fmt_iso(m, iso, sizeof iso);
    snprintf(out, n, "%.5s", iso + 11);
}

/* "10:13" within a day's window, "11-29 10:13" across days */
static void when(const struct bt_incident *inc, int64_t m, char *out, size_t n)
{
    char iso[32];
    bt_fmt_iso(m, iso, sizeof iso);
    if (inc->to - inc->from >= 86400)
        snprintf(out, n, "%.5s %.5s", iso + 5, iso + 11);
    else
        hhmm(m, out, n);
}

static void md(struct bt_buf *b, const char *s)
{
    bt_san_md_buf(b, s);
}

static const char *route_name(const struct bt_replay *rp, int r)
{
    return r >= 0 && r < rp->cfg.nroutes ? rp->cfg.routes[r].name : "";
}


/* How many of the window's route-minutes bedtop knew (coverage v4): the rest are unknown,
 * never idle, and every figure above leaves them out. */
static void coverage_line(const struct bt_incident *inc, const struct bt_replay *rp,
                          struct bt_buf *b)
{
    int known = 0, all = 0, inferred = 0, shown = 0;
    char w[32], x[32];
    for (int r = 0; r < inc->nroutes; r++) {
        if (!inc->shown[r])
            continue;
        known += inc->route[r].covered_minutes;
        all += inc->n;
        inferred += inc->route[r].coverage_inferred;
    }
    bt_buf_printf(b, "- **Coverage:** %d of %d route-minutes known (asked for and settled by a "
                     "good CloudWatch poll)", known, all);
    for (int r = 0; r < inc->nroutes; r++) {
        const struct bt_inc_route *ro = &inc->route[r];
        if (!inc->shown[r] || ro->covered_minutes == inc->n)
            continue;
        bt_buf_puts(b, shown++ ? "; " : "; unknown: ");
        md(b, route_name(rp, r));
        when(inc, ro->first_unknown, w, sizeof w);
        when(inc, ro->last_unknown, x, sizeof x);
        bt_buf_printf(b, " %d min (%s to %s)", inc->n - ro->covered_minutes, w, x);
    }
    bt_buf_puts(b, inferred ? ". The recording carries no coverage records for some routes: a "
                              "minute after a good poll counts as asked there.\n"
                            : ".\n");
}

static void summary(const struct bt_incident *inc, const struct bt_replay *rp, struct bt_buf *b)
{
    char w[32], x[32], p[BT_FMT_SHORT];
    bt_buf_puts(b, "## Summary\n\n");
    bt_buf_printf(b, "- **Routes affected:** %d of %d", inc->naffected, inc->nshown);
    int shown = 0;
    for (int r = 0; r < inc->nroutes; r++) {
        if (!inc->route[r].affected)
            continue;
        bt_buf_puts(b, shown++ ? ", " : ": ");
        md(b, route_name(rp, r));
        bt_buf_printf(b, " (%s)", bt_status_name(inc->route[r].worst));
    }
    bt_buf_puts(b, ". A route is affected when its status got worse than at the window's start, "
                   "or it was throttled.\n");
    int worst = -1;
    for (int r = 0; r < inc->nroutes; r++) {
        const struct bt_inc_route *ro = &inc->route[r];
        if (ro->affected && !isnan(ro->worst_pct) &&
            (worst < 0 || ro->worst_pct < inc->route[worst].worst_pct))
            worst = r;
    }
    if (worst >= 0) {
        const struct bt_inc_route *ro = &inc->route[worst];
        when(inc, ro->worst_minute, w, sizeof w);
        bt_buf_printf(b, "- **Worst headroom:** %s%% on ", bt_fmt_pct(ro->worst_pct, p, sizeof p));
        md(b, route_name(rp, worst));
        bt_buf_printf(b, " (%s side) at %s.\n", bt_side_name(ro->worst_side), w);
    } else {
        bt_buf_puts(b, "- **Worst headroom:** unknown (no affected route had a known headroom).\n");
    }
    int tm = 0;
    double tr = 0;
    for (int r = 0; r < inc->nroutes; r++) {
        tm += inc->route[r].throttled_minutes;
        tr += inc->route[r].throttles;
    }
    char c[BT_FMT_LONG];
    bt_buf_printf(b, "- **Throttling:** %d route-minutes, %s requests throttled", tm,
                  bt_fmt_grouped(tr, c, sizeof c));
    shown = 0;
    for (int r = 0; r < inc->nroutes; r++) {
        const struct bt_inc_route *ro = &inc->route[r];
        if (!ro->throttled_minutes)
            continue;
        when(inc, ro->first_throttle, w, sizeof w);
        when(inc, ro->last_throttle, x, sizeof x);
        bt_buf_puts(b, shown++ ? "; " : ": ");
        md(b, route_name(rp, r));
        bt_buf_printf(b, " %d min (%s to %s)", ro->throttled_minutes, w, x);
    }
    bt_buf_puts(b, ".\n- **Recovered:** ");
    shown = 0;
    for (int r = 0; r < inc->nroutes; r++) {
        const struct bt_inc_route *ro = &inc->route[r];
        if (!ro->affected)
            continue;
        bt_buf_puts(b, shown++ ? "; " : "");
        md(b, route_name(rp, r));
        if (ro->recovered) {
            when(inc, ro->recovered, w, sizeof w);
            bt_buf_printf(b, " at %s", w);
        } else {
            bt_buf_puts(b, " not within the window");
        }
    }
    bt_buf_puts(b, shown ? ".\n" : "no route was affected.\n");
    coverage_line(inc, rp, b);
}

static void causes(const struct bt_incident *inc, const struct bt_replay *rp, struct bt_buf *b)
{
    bt_buf_puts(b, "\n### Causes, ranked by the evidence\n\n"
                   "As bedtop's warnings named them on the affected routes: those that began in "
                   "the window first, then by critical minutes, route-minutes and the earliest; "
                   "standing conditions (named from the window's start) after them.\n\n");
    int k = 0;
    char w[32];
    for (int i = 0; i < inc->ncause; i++) {
        const struct bt_inc_cause *c = &inc->cause[i];
        if (c->caveat)
            continue;
        when(inc, c->first, w, sizeof w);
        bt_buf_printf(b, "%d. **%s** (%s): %s, %d route-minute%s", ++k, bt_wcode_name(c->code),
                      bt_status_name(c->severity), bt_wcode_title(c->code), c->minutes,
                      c->minutes == 1 ? "" : "s");
        if (c->crit_minutes)
            bt_buf_printf(b, " (%d critical)", c->crit_minutes);
        if (c->standing)
            bt_buf_puts(b, ", standing (named from the window's start)");
        bt_buf_printf(b, ", first at %s on ", w);
        md(b, route_name(rp, c->route));
        bt_buf_puts(b, ": ");
        md(b, c->message);
        if (c->action) {
            bt_buf_puts(b, "  \n    *Remedy:* ");
            md(b, c->action);
        }
        bt_buf_putc(b, '\n');
    }
    if (!k)
        bt_buf_puts(b, "No warning named a cause on an affected route.\n");
    bool head = false;
    for (int i = 0; i < inc->ncause; i++) {
        const struct bt_inc_cause *c = &inc->cause[i];
        if (!c->caveat)
            continue;
        if (!head)
            bt_buf_puts(b, "\nCaveats about the data (not causes):\n\n");
        head = true;
        bt_buf_printf(b, "- **%s** on ", bt_wcode_name(c->code));
        md(b, route_name(rp, c->route));
        bt_buf_printf(b, " (%d route-minutes): ", c->minutes);
        md(b, c->message);
        bt_buf_putc(b, '\n');
    }
}

/* The quota each side of the route drew from in the window's last minute. */
static void quota_cell(const struct bt_incident *inc, int r, struct bt_buf *b)
{
    const struct bt_inc_point *p = bt_inc_at(inc, r, inc->n - 1);
    for (int s = 0; s < 2; s++) {
        char v[BT_FMT_LONG];
        if (!side_applies(inc, r, s))
            continue;
        if (s)
            bt_buf_puts(b, ", ");
        if (isnan(p->side_quota[s]))
            bt_buf_printf(b, "%s unknown", side_label(inc, r, s));
        else
            bt_buf_printf(b, "%s %s/min", side_label(inc, r, s), bt_fmt_grouped(p->side_quota[s], v, sizeof v));
    }
}

static void routes_table(const struct bt_incident *inc, const struct bt_replay *rp, struct bt_buf *b)
{
    bt_buf_puts(b, "\n## Routes\n\n| route | model | endpoint | quota at the end | at start | worst "
                   "| lowest headroom | throttled min | throttled requests | recovered |\n"
                   "|---|---|---|---|---|---|---|---|---|---|\n");
    for (int r = 0; r < inc->nroutes; r++) {
        const struct bt_inc_route *ro = &inc->route[r];
        const struct bt_route *rt = &rp->cfg.routes[r];
        char p[BT_FMT_SHORT], w[32], c[BT_FMT_LONG];
        if (!inc->shown[r])
            continue;
        bt_buf_puts(b, "| ");
        md(b, rt->name);
        if (ro->affected)
            bt_buf_puts(b, " (affected)");
        bt_buf_puts(b, " | ");
        md(b, rt->model);
        bt_buf_printf(b, " | %s %s | ", bt_endpoint_name(rt->endpoint), bt_inference_name(rt->inference));
        quota_cell(inc, r, b);
        bt_buf_printf(b, " | %s | %s | ", bt_status_name(ro->start_status), bt_status_name(ro->worst));
        if (isnan(ro->worst_pct)) {
            bt_buf_puts(b, "unknown");
        } else {
            when(inc, ro->worst_minute, w, sizeof w);
            bt_buf_printf(b, "%s%% (%s, %s)", bt_fmt_pct(ro->worst_pct, p, sizeof p),
                          bt_side_name(ro->worst_side), w);
        }
        bt_buf_printf(b, " | %d | %s | ", ro->throttled_minutes, bt_fmt_grouped(ro->throttles, c, sizeof c));
        if (!ro->affected)
            bt_buf_puts(b, "-");
        else if (ro->recovered) {
            when(inc, ro->recovered, w, sizeof w);
            bt_buf_puts(b, w);
        } else
            bt_buf_puts(b, "not in the window");
        bt_buf_puts(b, " |\n");
    }
}

static void timeline(const struct bt_incident *inc, const struct bt_replay *rp, struct bt_buf *b)
{
    bt_buf_puts(b, "\n## Timeline\n\nStatus changes, warnings, collector failures and markers as the "
                   "dashboard's event log (`e`) has them, and throttling, on the CloudWatch data-minute "
                   "clock (UTC).\n\n");
    const struct bt_evlog *log = inc->log;
    if (log && log->dropped && log->dropped_through >= inc->from) {
        char w[32];
        when(inc, log->dropped_through, w, sizeof w);
        bt_buf_printf(b, "The event log keeps its newest %zu entries: %zu older ones were dropped, so "
                         "events through %s are missing here (narrow the window with --from).\n\n",
                      log->max, log->dropped, w);
    }
    bt_buf_puts(b, "| data minute | route | event |\n|---|---|---|\n");
    int marker = 0;
    for (int i = 0; i < inc->ntl; i++) {
        const struct bt_tl_entry *t = &inc->tl[i];
        char w[32], v[BT_FMT_LONG];
        when(inc, t->minute, w, sizeof w);
        bt_buf_printf(b, "| %s | ", w);
        if (t->route >= 0)
            md(b, route_name(rp, t->route));
        else
            bt_buf_puts(b, "(all)");
        bt_buf_puts(b, " | ");
        switch (t->kind) {
        case BT_TL_STATUS:
            if (t->ev && !strstr(t->ev->text, " -> ")) /* the log's first look */
                bt_buf_printf(b, "status **%s** (when the recording starts)", bt_status_name(t->to));
            else
                bt_buf_printf(b, "status **%s** -> **%s**", bt_status_name(t->from), bt_status_name(t->to));
            break;
        case BT_TL_FAILED:
            bt_buf_puts(b, "**");
            md(b, t->text);
            bt_buf_puts(b, "**");
            break;
        case BT_TL_RECOVERED:
            md(b, t->text);
            break;
        case BT_TL_WARN_ON:
            bt_buf_printf(b, "**%s** (%s): ", bt_wcode_name(t->code), bt_status_name(t->severity));
            md(b, t->text);
            break;
        case BT_TL_WARN_OFF:
            bt_buf_printf(b, "%s cleared", bt_wcode_name(t->code));
            break;
        case BT_TL_MARKER:
            bt_buf_printf(b, "marker **M%d**: ", ++marker);
            md(b, t->text);
            break;
        case BT_TL_QUOTA:
            bt_buf_printf(b, "quota (%s) now %s", side_label(inc, t->route, t->side),
                          bt_fmt_grouped(t->value, v, sizeof v));
            break;
        case BT_TL_THROTTLE_ON:
            bt_buf_printf(b, "throttling starts: %s throttled requests/min",
                          bt_fmt_grouped(t->value, v, sizeof v));
            break;
        case BT_TL_THROTTLE_OFF:
            bt_buf_puts(b, "throttling stops");
            break;
        }
        bt_buf_puts(b, " |\n");
    }
    if (!inc->ntl)
        bt_buf_puts(b, "| | | nothing changed in the window |\n");
}

static void charts(const struct bt_incident *inc, const struct bt_replay *rp, bool png, struct bt_buf *b)
{
    bt_buf_puts(b, "\n## Charts\n\nOne time axis for every chart (the same minutes at the same "
                   "place); markers are the dark red dashed verticals, numbered as in the timeline. "
                   "Each route has one colour and symbol in every chart, and each figure of it "
                   "its own dash (a route's sides: solid, dashed, dotted, dash-dot in the order "
                   "listed; offered dashed, accepted solid), so the charts read in monochrome "
                   "print. A minute bedtop did not know is a gap, never 0; a bound is marked "
                   "with an arrow (down: at most, up: at least); every side that bound a route "
                   "in the window is drawn; the markers' notes are printed under each chart.\n");
    int routes[BT_CHART_STYLES];
    int nr = bt_inc_charted(inc, routes, BT_CHART_STYLES);
    int naff = 0;
    for (int r = 0; r < inc->nroutes; r++)
        naff += inc->route[r].affected;
    if (naff > nr)
        bt_buf_printf(b, "\nThe charts show the %d most affected routes of %d; `--route` picks "
                         "others.\n", nr, naff);
    for (int k = 0; k < BT_CHART_COUNT; k++) {
        struct bt_chart c;
        bt_inc_chart_build(inc, &rp->cfg, (enum bt_inc_chart)k, &c);
        bt_buf_printf(b, "\n### %s\n\n![%s](%s.svg)\n", c.title, c.title, chart_files[k]);
        if (png)
            bt_buf_printf(b, "\n(PNG: [%s.png](%s.png))\n", chart_files[k], chart_files[k]);
        bt_buf_puts(b, "\n| series | line | colour |\n|---|---|---|\n");
        for (int s = 0; s < c.nseries; s++) {
            const char *hex, *dash, *sym;
            bt_chart_series_look(&c, s, &hex, &dash, &sym);
            bt_buf_puts(b, "| ");
            md(b, c.series[s].label);
            bt_buf_printf(b, " | %s, %s | %s |\n", dash, sym, hex);
        }
        if (!c.nseries)
            bt_buf_puts(b, k == BT_CHART_THROTTLES ? "| (no route was throttled) | | |\n"
                                                   : "| (no affected route) | | |\n");
        if (k == BT_CHART_THROTTLES)
            bt_buf_puts(b, "\nRoutes never throttled in the window are left out of this chart.\n");
        bt_chart_free(&c);
    }
}

void bt_incident_render_md(const struct bt_incident *inc, const struct bt_replay *rp, bool png,
                           struct bt_buf *out)
{
    char f[32], t[32];
    bt_fmt_iso(inc->from, f, sizeof f);
    bt_fmt_iso(inc->to, t, sizeof t);
    bt_buf_printf(out, "# Incident report: %s to %s\n\n", f, t);
    bt_buf_puts(out, "From the recording `");
    const char *base = strrchr(rp->path, '/');
    md(out, base ? base + 1 : rp->path);
    bt_buf_puts(out, "` (");
    md(out, rp->mode); /* the recording's header: from outside */
    bt_buf_puts(out, ", ");
    md(out, rp->created_by);
    bt_buf_printf(out, "): %d data minutes, %d route%s%s, %d marker%s. A data minute is the minute "
                       "the CloudWatch data describe; bedtop showed it from about %d s after it "
                       "ended. Every figure is bedtop's evaluation as the dashboard showed it then.\n\n",
                  inc->n, inc->nshown, inc->nshown == 1 ? "" : "s",
                  inc->nshown < inc->nroutes ? " (chosen with --route)" : "", inc->nmarkers,
                  inc->nmarkers == 1 ? "" : "s",
                  (int)rp->cfg.cw_lag);
    summary(inc, rp, out);
    causes(inc, rp, out);
    routes_table(inc, rp, out);
    timeline(inc, rp, out);
    charts(inc, rp, png, out);
}

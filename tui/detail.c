/* The route detail: identity, headroom, graphs and every warning with its action. */
#include "tui/view.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/burndown.h"
#include "core/figures.h"
#include "render/spend.h"
#include "core/format.h"
#include "core/plan.h"
#include "core/util.h"

/* " at most" before a headroom that is an upper bound, " at least" a lower one */
static const char *tui_bound_word(enum bt_quality q)
{
    return q == BT_QL_UPPER      ? " at most"
           : q == BT_QL_LOWER    ? " at least"
           : q == BT_QL_ESTIMATE ? " about"
                                 : "";
}

int tui_detail_warnings(struct bt_tui *t, int r, int width, struct wline *lines)
{
    const struct bt_eval *e = &t->evals[r];
    int n = 0;
    if (bt_eval_stale(e) && bt_eval_stale_reason(e)[0]) {
        char buf[300];
        snprintf(buf, sizeof buf, "STALE data: %s", bt_eval_stale_reason(e));
        tui_wrap(lines, &n, buf, width, 0, BT_ROLE_CRIT);
    }
    for (int rank = 4; rank >= 1; rank--)
        for (int w = 0; w < bt_eval_nwarn(e); w++) {
            const struct bt_warning *wa = bt_eval_warning(e, w);
            if (tui_sev_rank(wa->severity) != rank)
                continue;
            char buf[400];
            snprintf(buf, sizeof buf, "%-4s %s: %s", tui_sev_label(wa->severity),
                     bt_wcode_name(wa->code), bt_wcode_title(wa->code));
            tui_add_wline(lines, &n, BT_ROLE_KEY, buf, 4, tui_sev_role(wa->severity));
            tui_wrap(lines, &n, wa->message, width, 5, BT_ROLE_NORMAL);
            snprintf(buf, sizeof buf, "-> %s", wa->action ? wa->action : bt_wcode_action(wa->code));
            tui_wrap(lines, &n, buf, width, 5, BT_ROLE_INFO);
        }
    return n;
}

/* Every figure of the route with where it comes from, one a line (the identity
 * lines above are cut at narrow widths; here nothing is). */
/* "burndown 5 (table, verified, measured 4.98)", "burndown 10 (measured over 6 min,
 * verified; prior table 5)", "burndown 5 (family floor, unverified)", or "no
 * burndown" for a mantle route: core/burndown.c decides, this only words it */
static void burndown_words(const struct bt_route *rt, const struct bt_eval *e, char *out, size_t n)
{
    char meas[48] = ""; /* the one EstimatedTPMQuotaUsage implies, where measured */
    double m = bt_fig(e, BT_FIG_BURNDOWN_MEASURED);
    if (!isnan(m))
        snprintf(meas, sizeof meas, ", measured %.2f", m);
    const char *src = rt->burndown_source ? rt->burndown_source : "default";
    const char *prior = rt->burndown_prior_source ? rt->burndown_prior_source : "default";
    const char *ver = rt->burndown_verified ? "verified" : "unverified";
    if (!strcmp(src, "none"))
        snprintf(out, n, "no burndown%s", meas);
    else if (!strcmp(src, "measured"))
        snprintf(out, n, "burndown %g (measured over %d min, %s; prior %s %g)", rt->burndown,
                 rt->burndown_steady_minutes, ver, !strcmp(prior, "family") ? "family floor" : prior,
                 rt->burndown_prior);
    else
        snprintf(out, n, "burndown %g (%s, %s%s)", rt->burndown,
                 !strcmp(src, "family") ? "family floor" : src, ver, meas);
}

/* A figure of the table as the detail words it: its value (tokens format) into a,
 * and its source ("unknown" when none); returns the figure, for its name. */
static const struct bt_figure *tui_fig(const struct bt_eval *e, enum bt_fig_id id, char *a,
                                       size_t n, const char **src)
{
    bt_fmt_tokens(bt_fig(e, id), a, n);
    *src = bt_fig_source(e, id, "unknown");
    return &bt_figures[id];
}

int tui_detail_figures(struct bt_tui *t, int r, int width, struct wline *lines)
{
    const struct bt_route *rt = &t->host->cfg->routes[r];
    const struct bt_eval *e = &t->evals[r];
    char a[16], b[16], c[16], v[300];
    int n = 0;
#define FIG(name, ...)                                                         \
    do {                                                                       \
        bt_fmt_cut(v, sizeof v, __VA_ARGS__); /* a long reason shows its cut */ \
        tui_entry(lines, &n, width, name, v, BT_ROLE_NORMAL);                  \
    } while (0)
    /* one side per number: the percentage beside its own side's headroom and quota
     * (the figure table's sides); the token side's apart when another side binds */
    enum bt_side bs = bt_figure_side(&bt_figures[BT_FIG_HEADROOM_PCT], e);
    const struct bt_side_fig *bf = bt_eval_side(e, bs);
    bool own = bs == bt_figure_side(&bt_figures[BT_FIG_HEADROOM_TPM], e);
    enum bt_quality hq = bt_fig_quality(e, BT_FIG_HEADROOM_PCT);
    bt_fmt_tokens(own ? bt_fig(e, BT_FIG_HEADROOM_TPM) : bf->headroom, a, sizeof a);
    bt_fmt_tokens(own ? bt_fig(e, BT_FIG_QUOTA) : bf->quota, b, sizeof b);
    bt_fmt_pct(bt_fig(e, BT_FIG_HEADROOM_PCT), c, sizeof c);
    FIG("headroom", "%s%s of %s %s, %s%% (%s), binding side %s", tui_bound_word(hq),
        a, b, own ? "TPM" : bt_side_unit(bs), c, bt_quality_name(hq),
        bt_side_binding_name(bt_eval_binding(e)));
    bt_fmt_count(bt_figure_value(&bt_figures[BT_FIG_FITS], e), a, sizeof a);
    if (own)
        FIG("fits", "%s more calls (%s side)", a, bt_side_binding_name(bt_eval_binding(e)));
    else
        FIG("fits", "%s more %s (%s side)", a, bt_side_fits_word(bs),
            bt_side_binding_name(bt_eval_binding(e)));
    struct bt_forecast fc; /* beside headroom when under an hour (core/plan.h) */
    bt_plan_forecast(t->host->cfg, t->host->store, r, t->host->now, &fc);
    if (fc.minutes < BT_FORECAST_SHOW && bt_plan_forecast_text(&fc, v, sizeof v))
        tui_entry(lines, &n, width, "forecast", v, BT_ROLE_WARN);
    bt_fmt_tokens(bt_fig(e, BT_FIG_USED), a, sizeof a);
    bt_fmt_tokens(bt_fig(e, BT_FIG_GROUP_USED), b, sizeof b);
    FIG("used", "%s TPM (%s); the quota group %s (%s)", a,
        bt_quality_name(bt_fig_quality(e, BT_FIG_USED)), b,
        bt_quality_name(bt_fig_quality(e, BT_FIG_GROUP_USED)));
    char em[8] = "-", am[8] = "-";
    if (bt_eval_cw_minute(e))
        bt_fmt_hhmm(bt_eval_cw_minute(e), em, sizeof em);
    if (bt_eval_adm_at(e))
        bt_fmt_hhmm(bt_eval_adm_at(e), am, sizeof am);
    FIG("frame", "CloudWatch minute %s UTC (%s), admission read at %s UTC", em,
        bt_frame_state_name(bt_eval_state(e)), am);
    for (int k = 0; k < BT_SIDE_COUNT; k++) {
        const struct bt_side_fig *sf = bt_eval_side(e, k);
        if (!sf->applies || k == BT_SIDE_TPM)
            continue;
        char qa[16], ua[16], ha[16], pa[BT_FMT_SHORT];
        bt_fmt_tokens(sf->quota, qa, sizeof qa);
        bt_fmt_tokens(sf->group_used, ua, sizeof ua);
        bt_fmt_tokens(sf->headroom, ha, sizeof ha);
        bt_fmt_pct(sf->pct, pa, sizeof pa);
        FIG(bt_side_name((enum bt_side)k), "used %s (%s) of %s %s; headroom%s %s, %s%%%s", ua,
            bt_quality_name(sf->group_q), qa, bt_side_unit((enum bt_side)k),
            tui_bound_word(sf->headroom_q), ha, pa, (int)bt_eval_binding(e) == k ? ", binds" : "");
    }
    /* use is accepted; offered beside it, never the use */
    if (bt_eval_side(e, BT_SIDE_RPM)->applies) {
        bt_fmt_count(bt_fig(e, BT_FIG_REQUESTS), a, sizeof a);
        bt_fmt_count(bt_eval_offered(e), b, sizeof b);
        FIG("requests", "%s accepted/min (the rpm side's use, %s); %s offered (accepted + "
            "throttled)", a, bt_fig_source(e, BT_FIG_REQUESTS, "unknown"), b);
    }
    if (bt_eval_mantle(e))
        FIG("throttles", "not published (no mantle throttle metric; its errors omit 429s)");
    double share = bt_fig(e, BT_FIG_TIER_SHARE);
    if (!isnan(share))
        FIG("tiers", "%.0f%% of calls served by the reserved tier (taken out of on-demand use), "
            "%.0f%% on-demand", 100 * share, 100 * (1 - share));
    bt_fmt_tokens(bt_fig(e, BT_FIG_SETTLED), a, sizeof a);
    bt_fmt_tokens(bt_fig(e, BT_FIG_ESTIMATED), b, sizeof b);
    FIG("settled", "%s TPM (CloudWatch token counts); estimated %s (EstimatedTPMQuotaUsage)",
        a, b);
    /* the figure table's held, in flight and R: name, value and source */
    const char *src;
    const struct bt_figure *f = tui_fig(e, BT_FIG_HELD, a, sizeof a, &src);
    FIG(f->name, "%s tokens (%s)", a, src);
    f = tui_fig(e, BT_FIG_IN_FLIGHT, a, sizeof a, &src);
    bt_fmt_count(f->of(e), b, sizeof b); /* the concurrency limit it is counted out of */
    FIG(f->name, "%s (%s), limit %s", a, src, b);
    const struct bt_figure *rf = tui_fig(e, BT_FIG_RESERVATION, a, sizeof a, &src);
    double bound = bt_burndown_hold_bound(bt_figure_value(rf, e), bt_fig(e, BT_FIG_MAX_TOKENS),
                                          rt->burndown);
    char hb[160] = "";
    if (!isnan(bound)) {
        bt_fmt_tokens(bound, b, sizeof b);
        snprintf(hb, sizeof hb, "; input + max_tokens x %g = %s if holds grow during generation "
                 "(not documented; headroom uses R)", rt->burndown, b);
    }
    FIG(rf->name, "%s tokens (%s)%s", a, src, hb);
    const struct bt_figure *qf = tui_fig(e, BT_FIG_QUOTA, a, sizeof a, &src);
    enum bt_quota_match qm = rt->quota_match[bt_eval_mantle(e) ? BT_Q_INPUT_TPM : BT_Q_TPM];
    const char *mb = qm == BT_QM_CONFIG ? NULL : bt_quota_match_name(qm); /* "from config" says it */
    const char *code = bt_eval_quota_code(e);
    FIG(qf->name, "%s TPM from %s%s%s%s%s%s", a, src, code[0] ? " " : "", code,
        mb ? ", matched by " : "", mb ? mb : "",
        bt_eval_nshared(e) ? ", shared with other routes" : "");
    struct bt_ceiling ce; /* beside the quota, when throttled in the hour (core/ceiling.h) */
    bt_ceiling_of(t->host->cfg, t->host->store, e, &ce);
    if (ce.throttled_minutes && ce.tokens > 0) {
        char hm[8];
        bt_fmt_tokens(ce.tokens, a, sizeof a);
        bt_fmt_hhmm(ce.tokens_minute, hm, sizeof hm);
        bt_fmt_pct(ce.pct_of_quota, c, sizeof c);
        FIG("ceiling", "at least %s TPM accepted while throttled (%s UTC; %d of %d min throttled), "
            "%s%% of the quota%s%s", a, hm, ce.throttled_minutes, BT_CEILING_WINDOW, c,
            ce.points_to ? ": points to " : "", ce.points_to ? ce.why : "");
    }
    bt_fmt_tokens(bt_fig(e, BT_FIG_MAX_TOKENS), a, sizeof a);
    bt_fmt_tokens(bt_fig(e, BT_FIG_AVG_OUTPUT), c, sizeof c);
    char bd[128];
    burndown_words(rt, e, bd, sizeof bd);
    FIG("max_tokens", "%s per call; observed mean output %s; %s", a, c, bd);
    if (strcmp(rt->burndown_source ? rt->burndown_source : "", "table") != 0 && rt->burndown_row[0])
        FIG("burndown row", "%s", rt->burndown_row); /* the row the value used is not */
    if (rt->lifecycle[0] || rt->lifecycle_text[0])
        FIG("lifecycle", "%s%s%s", rt->lifecycle[0] ? rt->lifecycle : "unknown",
            rt->lifecycle_text[0] ? ": " : "", rt->lifecycle_text);
    if (rt->profile_check[0])
        FIG("profile", "%s: %s", rt->profile_check, rt->profile_text);
    char spend[320];
    bt_spend_line(e, spend, sizeof spend); /* list prices: an estimate (render/spend.c) */
    FIG("cost", "%s", spend);
#undef FIG
    return n;
}

void tui_draw_detail(struct bt_tui *t, const struct bt_layout *l, int nw,
                        const enum gkind *gk)
{
    int r = t->sel_route;
    tui_draw_header(t, l);
    if (l->banner.h)
        tui_draw_banner(t, l, r);
    const struct bt_route *rt = &t->host->cfg->routes[r];
    const struct bt_eval *e = &t->evals[r];
    char line[512], mt[16], q[16];
    int y = l->info.y;
    tui_fill(y, 0, l->cols, A(t, BT_ROLE_NORMAL));
    /* the document below the identity: graphs then warnings, scrolled as one */
    struct tui_scroll *sc = &t->dsc;
    sc->lines = l->doc_h;
    sc->page = l->body.h > 1 ? l->body.h - 1 : 1;
    sc->max = l->doc_h > l->body.h ? l->doc_h - l->body.h : 0;
    if (sc->pos > sc->max)
        sc->pos = sc->max;
    if (sc->pos < 0)
        sc->pos = 0;
    int tag_w = 0;
    char pos[48];
    tui_scroll_pos(sc, l->body.h, pos, sizeof pos);
    if (pos[0]) {
        /* where the document is, at the right of the identity line */
        char tag[64];
        snprintf(tag, sizeof tag, " %s %s", pos, sc->pos < sc->max ? "PgDn" : "PgUp");
        int w = tui_width(tag);
        tui_text(l->info.y, l->cols - w, w, tag, A(t, BT_ROLE_TITLE));
        tag_w = w;
    }
    int x = tui_text(y, 1, l->cols - 1, rt->name, A(t, BT_ROLE_KEY)) + 2;
    enum bt_status status = bt_eval_status(e);
    x += tui_text(y, x, 5, tui_status_label(status), A(t, tui_status_role(status))) + 1;
    if (bt_eval_stale(e)) {
        /* stale is explicit state: how old the newest data is, before anything else */
        char age[16], st[48];
        tui_fmt_age(t->host->now - (bt_eval_data_minute(e) + 60), age, sizeof age);
        snprintf(st, sizeof st, bt_eval_data_minute(e) ? "STALE %s old" : "STALE no data", age);
        x += tui_text(y, x, l->cols - x, st, A(t, BT_ROLE_STALE)) + 1;
    }
    if (rt->identity[0]) /* the AWS identity the route is polled as (never a key) */
        x += tui_text(y, x, l->cols - x - tag_w, rt->identity, A(t, BT_ROLE_STATUS)) + 2;
    bt_fmt_tokens(bt_fig(e, BT_FIG_MAX_TOKENS), mt, sizeof mt);
    char bd[128];
    burndown_words(rt, e, bd, sizeof bd);
    snprintf(line, sizeof line, "%s  %s  %s  %s  %s  max_tokens %s  %s",
             rt->model, rt->region, bt_endpoint_name(rt->endpoint),
             bt_inference_name(rt->inference), rt->priority == BT_PRIO_OFFLINE ? "offline"
                                                                             : "online",
             mt, bd);
    tui_text_cut(y, x, l->cols - x - tag_w, line, A(t, BT_ROLE_NORMAL));
    char hd[16], used[16], fits[16];
    bt_fmt_tokens(bt_fig(e, BT_FIG_HEADROOM_TPM), hd, sizeof hd);
    bt_fmt_tokens(bt_fig(e, BT_FIG_QUOTA), q, sizeof q);
    bt_fmt_tokens(bt_fig(e, BT_FIG_USED), used, sizeof used);
    bt_fmt_count(bt_fig(e, BT_FIG_FITS), fits, sizeof fits);
    char pv[BT_FMT_SHORT], pct[BT_FMT_SHORT + 1], held[16], infl[16], res[16];
    bt_fmt_tokens(bt_fig(e, BT_FIG_HELD), held, sizeof held);
    bt_fmt_tokens(bt_fig(e, BT_FIG_RESERVATION), res, sizeof res);
    bt_fmt_tokens(bt_fig(e, BT_FIG_IN_FLIGHT), infl, sizeof infl);
    bt_fmt_pct(bt_fig(e, BT_FIG_HEADROOM_PCT), pv, sizeof pv);
    snprintf(pct, sizeof pct, "%s%s", pv, isnan(bt_fig(e, BT_FIG_HEADROOM_PCT)) ? "" : "%");
    /* one side per number: where a side other than the token side binds, its own
     * headroom and quota go beside its percentage, and the token side's after */
    char side_hd[200] = "";
    const char *unit = "TPM", *fits_word = "in flight";
    enum bt_side bs = bt_figure_side(&bt_figures[BT_FIG_HEADROOM_PCT], e);
    if (bs != bt_figure_side(&bt_figures[BT_FIG_HEADROOM_TPM], e)) {
        enum bt_side ts = bt_eval_token_side(e);
        const struct bt_side_fig *bf = bt_eval_side(e, bs), *tf = bt_eval_side(e, ts);
        char th[16], tq[16], tp[BT_FMT_SHORT];
        bt_fmt_tokens(bt_fig(e, BT_FIG_HEADROOM_TPM), th, sizeof th);
        bt_fmt_tokens(bt_fig(e, BT_FIG_QUOTA), tq, sizeof tq);
        bt_fmt_pct(tf->pct, tp, sizeof tp);
        snprintf(side_hd, sizeof side_hd, "  %s%s %s of %s TPM (%s%s)",
                 bt_side_binding_name(ts), tui_bound_word(tf->headroom_q), th, tq, tp,
                 isnan(tf->pct) ? "" : "%");
        bt_fmt_tokens(bf->headroom, hd, sizeof hd);
        bt_fmt_tokens(bf->quota, q, sizeof q);
        unit = bt_side_unit(bs);
        fits_word = bt_side_fits_word(bs);
    }
    /* every figure with its source (docs/headroom.md); the figures section below
     * repeats them one a line, for widths that cut this line */
    enum bt_side binding = bt_eval_binding(e);
    const char *code = bt_eval_quota_code(e);
    snprintf(line, sizeof line, " headroom%s %s of %s %s (%s%s%s)  fits %s more %s%s  used %s%s  "
             "held %s (%s)  in flight %s (%s)  R %s (%s)  quota: %s%s%s%s",
             tui_bound_word(bt_fig_quality(e, BT_FIG_HEADROOM_PCT)),
             hd, q, unit, pct, binding != BT_SIDE_TPM ? ", " : "",
             binding != BT_SIDE_TPM ? bt_side_binding_name(binding) : "", fits, fits_word,
             side_hd, used,
             bt_fig_quality(e, BT_FIG_USED) == BT_QL_UPPER   ? " (upper bound)"
             : bt_fig_quality(e, BT_FIG_USED) == BT_QL_LOWER ? " (at least)"
                                        : "", held,
             bt_fig_source(e, BT_FIG_HELD, "-"), infl,
             bt_fig_source(e, BT_FIG_IN_FLIGHT, "-"), res,
             bt_fig_source(e, BT_FIG_RESERVATION, "-"),
             bt_fig_source(e, BT_FIG_QUOTA, "-"), code[0] ? " " : "", code,
             bt_eval_nshared(e) ? " shared" : "");
    tui_fill(y + 1, 0, l->cols, A(t, BT_ROLE_NORMAL));
    tui_text_cut(y + 1, 0, l->cols, line, A(t, tui_status_role(status)));
    tui_clip(l->body.y, l->body.y + l->body.h, sc->pos - l->body.y);
    for (int i = 0; i < l->ngraphs; i++)
        tui_draw_graph(t, r, gk[i], l->graph[i]);
    char title[sizeof rt->name + 48]; /* the name and the words whole */
    snprintf(title, sizeof title, "Figures for %s and where each comes from", rt->name);
    struct tui_scroll all = {0};
    tui_draw_wlines(t, l->figures, title, t->fig_lines, l->figures.h - 1, &all, false);
    snprintf(title, sizeof title, "Warnings for %s: what was seen, what to do", rt->name);
    if (nw == 0)
        snprintf(title, sizeof title, "No warnings for %s", rt->name);
    tui_draw_wlines(t, l->warnings, title, t->lines, nw, &all, false);
    tui_unclip();
    tui_draw_status(t, l);
}

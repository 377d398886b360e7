/* The spend and cross-model day overlay ($): per Region the spend at list prices, the
 * day's settled tokens against the account-wide cross-model daily quota, its run-out
 * at trend, the models holding it and the biggest spenders. core computes
 * (core/cost.h, core/ledger.h); this only words and draws it. */
#include "tui/view.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cost.h"
#include "core/format.h"
#include "core/ledger.h"
#include "core/sanitize.h"
#include "core/util.h"
#include "render/spend.h"

static void add(struct bt_tui *t, int *n, int width, enum bt_role role, int route,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void add(struct bt_tui *t, int *n, int width, enum bt_role role, int route,
                const char *fmt, ...)
{
    char s[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s, sizeof s, fmt, ap);
    va_end(ap);
    int before = *n;
    tui_wrap(t->ev_lines, n, s, width, 2, role);
    for (int k = before; k < *n; k++) {
        t->ev_lines[k].route = route;
        t->ev_lines[k].first = k == before;
        t->ev_lines[k].lead = 0;
    }
}

struct spender {
    int route;
    double usd;
};

static int cmp_spender(const void *a, const void *b)
{
    const struct spender *x = a, *y = b;
    if (x->usd != y->usd)
        return x->usd < y->usd ? 1 : -1;
    return x->route - y->route;
}

static int build(struct bt_tui *t, int width)
{
    const struct bt_config *cfg = t->host->cfg;
    int n = 0;
    struct bt_spend_sum *sums = NULL;
    int ns = bt_spend_by_region(cfg, t->evals, NULL, &sums);
    struct bt_ledger *ls = NULL;
    int nl = bt_ledger_build(cfg, t->host->store, t->evals, &ls);
    for (int k = 0; k < ns && n < MAX_WLINES - 8; k++) {
        const struct bt_spend_sum *s = &sums[k];
        char h[32], d[32];
        bt_fmt_usd(s->usd_per_hour, h, sizeof h);
        bt_fmt_usd(s->usd_today, d, sizeof d);
        if (s->quality == BT_QL_UNKNOWN)
            add(t, &n, width, BT_ROLE_KEY, -1, "%s  spend unknown (no route of it priced)", s->key);
        else
            add(t, &n, width, BT_ROLE_KEY, -1, "%s  spend %s%s/h, %s%s today%s", s->key,
                s->unpriced ? "at least " : "", h, s->quality == BT_QL_LOWER ? "at least " : "",
                d, s->unpriced ? " (routes without a price row not counted)" : "");
        for (int j = 0; j < nl; j++) {
            const struct bt_ledger *l = &ls[j];
            if (strcmp(l->region, s->key))
                continue;
            char tk[16], q[16], when[8];
            bt_fmt_tokens(l->tokens_today, tk, sizeof tk);
            bt_fmt_tokens(l->quota, q, sizeof q);
            const char *lb = l->used_q == BT_QL_LOWER ? "at least " : "";
            /* two accounts (or profiles) in the Region: whose day */
            char who[112] = "";
            if (l->who[0]) {
                char w[96];
                bt_san_term(w, sizeof w, l->who);
                snprintf(who, sizeof who, " of %s", w);
            }
            if (isnan(l->quota))
                add(t, &n, width, BT_ROLE_NORMAL, -1,
                    "cross-model day%s: %s%s settled tokens; no Cross-Model Max Tokens Per Day listed",
                    who, lb, tk);
            else
                add(t, &n, width, BT_ROLE_NORMAL, -1,
                    "cross-model day%s: %s%s of %s tokens (%.1f%%, an estimate: AWS weights by price)",
                    who, lb, tk, q, l->pct);
            if (!isnan(l->quota) && l->runout) {
                bt_fmt_hhmm(l->runout, when, sizeof when);
                add(t, &n, width, BT_ROLE_WARN, -1,
                    "runs out %s UTC at the trend (%d-minute fit); the reset at 00:00 UTC is assumed",
                    when, l->fit_minutes);
            } else if (!isnan(l->quota)) {
                add(t, &n, width, BT_ROLE_NORMAL, -1, "%s",
                    l->fit_minutes < BT_LEDGER_FIT_MIN ? "no trend yet (not enough data)"
                                                       : "lasts to the assumed reset at the trend");
            }
            if (l->used_q == BT_QL_LOWER && l->used_why[0]) {
                char why[224];
                bt_san_term(why, sizeof why, l->used_why);
                add(t, &n, width, BT_ROLE_NORMAL, -1, "a lower bound: %s", why);
            }
            if (l->onset) {
                char on[8], c[16];
                bt_fmt_hhmm(l->onset, on, sizeof on);
                bt_fmt_tokens(l->ceiling, c, sizeof c);
                add(t, &n, width, BT_ROLE_WARN, -1,
                    "observed ceiling: %s tokens today when %d route%s throttled from %s UTC, each "
                    "under half its per-minute quota (\"Too many tokens per day\")",
                    c, l->onset_routes, l->onset_routes == 1 ? "" : "s", on);
            }
            for (int m = 0; m < l->nmodels && m < 5; m++) {
                char mt[16], usd[32], model[192];
                bt_fmt_tokens(l->models[m].tokens_today, mt, sizeof mt);
                bt_fmt_usd(l->models[m].usd_today, usd, sizeof usd);
                bt_san_term(model, sizeof model, l->models[m].model); /* a ModelId: outside text */
                add(t, &n, width, BT_ROLE_NORMAL, -1, "  %-44.44s %8s %3.0f%% %s", model, mt,
                    100 * l->models[m].share, usd);
            }
        }
        /* the Region's biggest spenders per hour */
        struct spender *sp = bt_xcalloc((size_t)(cfg->nroutes ? cfg->nroutes : 1), sizeof *sp);
        int np = 0;
        for (int r = 0; r < cfg->nroutes; r++)
            if (!strcmp(cfg->routes[r].region,
                        s->key) && !isnan(bt_eval_spend(&t->evals[r])->usd_per_hour))
                sp[np++] = (struct spender){r, bt_eval_spend(&t->evals[r])->usd_per_hour};
        qsort(sp, (size_t)np, sizeof *sp, cmp_spender);
        for (int i = 0; i < np && i < 5; i++) {
            const struct bt_eval *e = &t->evals[sp[i].route];
            bt_fmt_usd(bt_eval_spend(e)->usd_per_hour, h, sizeof h);
            bt_fmt_usd(bt_eval_spend(e)->usd_today, d, sizeof d);
            bool spike = bt_eval_has(e, BT_W_SPEND_SPIKE);
            add(t, &n, width, spike ? BT_ROLE_WARN : BT_ROLE_NORMAL, sp[i].route,
                "  %-20.20s %10s/h %10s today%s", cfg->routes[sp[i].route].name, h, d,
                spike ? "  SPEND_SPIKE" : "");
        }
        free(sp);
        add(t, &n, width, BT_ROLE_NORMAL, -1, " ");
    }
    struct bt_spend_team *tm = NULL;
    int nt = bt_spend_by_team(cfg, t->host->store, t->evals, NULL, &tm);
    if (nt)
        add(t, &n, width, BT_ROLE_KEY, -1, "by team (each route's spend split by the team's share)");
    for (int k = 0; k < nt && k < 8 && n < MAX_WLINES - 4; k++) {
        char h[32], d[32];
        bt_fmt_usd(tm[k].usd_per_hour, h, sizeof h);
        bt_fmt_usd(tm[k].usd_today, d, sizeof d);
        const char *lb = tm[k].quality == BT_QL_LOWER   ? "  (at least)"
                         : tm[k].quality == BT_QL_UPPER ? "  (at most)"
                                                        : "";
        double bud = bt_spend_team_budget(cfg, tm[k].name);
        char bs[48] = "";
        if (!isnan(bud)) {
            char bu[32];
            bt_fmt_usd(bud, bu, sizeof bu);
            snprintf(bs, sizeof bs, "  budget %s", bu);
        }
        char nm[64];
        bt_san_term(nm, sizeof nm, tm[k].name); /* an admission label: outside text */
        add(t, &n, width, BT_ROLE_NORMAL, tm[k].top, "  %-20.20s %10s/h %10s today%s%s", nm, h, d,
            bs, lb);
    }
    if (nt)
        add(t, &n, width, BT_ROLE_NORMAL, -1, " ");
    free(tm);
    add(t, &n, width, BT_ROLE_HELP, -1,
        "List prices (data/prices.conf, the Price List API's cache, [prices]): estimates, no "
        "discounts or credits. Routes whose model has no price row are unknown, never $0.");
    free(sums);
    bt_ledger_free(ls, nl);
    return n;
}

void tui_draw_ledger(struct bt_tui *t, const struct bt_layout *l)
{
    int w = l->cols - 2 < 110 ? l->cols - 2 : 110;
    struct bt_rect h = {(l->cols - w) / 2, 1, w, l->rows - 2};
    if (h.w < 20 || h.h < 3)
        return;
    int n = build(t, w - 4);
    attr_t a = A(t, BT_ROLE_HELP);
    tui_box(t, h, " spend and the cross-model day, per Region ($) Esc closes ", a);
    struct bt_rect body = {h.x + 2, h.y + 1, h.w - 4, h.h - 2};
    tui_draw_lines(t, body, t->ev_lines, n, &t->lsc);
    tui_box_scroll_tag(h, &t->lsc, body.h, "PgDn/PgUp", a);
}

/* Scrolls by delta lines within the pane (the key dispatcher calls into this file, so
 * this file calls none of its functions back). */
static void pane_scroll(struct tui_scroll *sc, int delta)
{
    long to = (long)sc->pos + delta;
    sc->pos = (int)(to > sc->max ? sc->max : to < 0 ? 0 : to);
}

/* Keys while it is open: scroll, Esc/$/q close, Q quits. */
void tui_ledger_key(struct bt_tui *t, int c)
{
    struct tui_scroll *sc = &t->lsc;
    int page = sc->page > 1 ? sc->page : 1;
    if (c == KEY_UP || c == 'k')
        pane_scroll(sc, -1);
    else if (c == KEY_DOWN || c == 'j')
        pane_scroll(sc, 1);
    else if (c == KEY_PPAGE)
        pane_scroll(sc, -page);
    else if (c == KEY_NPAGE || c == ' ')
        pane_scroll(sc, page);
    else if (c == KEY_HOME)
        sc->pos = 0;
    else if (c == KEY_END)
        sc->pos = sc->max;
    else if (c == 27 || c == '$' || c == 'q' || c == KEY_LEFT)
        t->ledger_open = false;
    else if (c == 'Q' || c == KEY_F(10))
        t->quit = true;
    else if (c != KEY_MOUSE)
        snprintf(t->msg, sizeof t->msg, "spend: Up/Down/PgUp/PgDn scroll, Esc closes");
}

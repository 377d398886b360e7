#include "render/spend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/cost.h"
#include "core/ledger.h"
#include "core/sanitize.h"
#include "core/format.h"
#include "core/util.h"

void bt_fmt_usd(double usd, char *out, size_t n)
{
    if (isnan(usd) || isinf(usd)) {
        bt_strlcpy(out, "?", n);
        return;
    }
    if (usd >= 1000) {
        char g[BT_FMT_LONG];
        snprintf(out, n, "$%s", bt_fmt_grouped(round(usd), g, sizeof g));
    } else if (usd > 0 && usd < 1) {
        snprintf(out, n, "$%.4f", usd);
    } else {
        snprintf(out, n, "$%.2f", usd);
    }
}

static void add_usd(cJSON *o, const char *k, double v)
{
    bt_json_add_round(o, k, v, 4);
}

static void add_opt_str(cJSON *o, const char *k, const char *v)
{
    bt_json_add_str(o, k, v);
}

void bt_spend_route_json(const struct bt_report *r, int i, struct bt_jw *c)
{
    const struct bt_spend *sp = bt_eval_spend(&r->evals[i]);
    const struct bt_route *rt = &r->cfg->routes[i];
    bt_jw_obj(c, "cost");
    bt_jw_round(c, "usd_per_hour", sp->usd_per_hour, 4); /* add_usd's */
    bt_jw_round(c, "usd_today", sp->usd_today, 4);
    bt_jw_str(c, "quality", bt_quality_name(sp->quality));
    bt_jw_str(c, "usd_today_quality", bt_quality_name(sp->today_q));
    bt_jw_str_or_null(c, "source", sp->row ? sp->row->source : NULL);
    bt_jw_str_or_null(c, "price_date", sp->row ? sp->row->date : NULL);
    char row[256] = "";
    if (sp->row)
        bt_price_row_text(sp->row, row, sizeof row);
    bt_jw_str_or_null(c, "price_row", row);
    bt_jw_str(c, "tier", bt_tier_name((enum bt_tier)rt->tier));
    bt_jw_str_or_null(c, "reason", sp->reason);
    bt_jw_end(c);
}

static cJSON *sum_json(const struct bt_report *r, const struct bt_spend_sum *s, const char *key)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, key, s->key);
    add_usd(o, "usd_per_hour", s->usd_per_hour);
    add_usd(o, "usd_today", s->usd_today);
    cJSON_AddStringToObject(o, "quality", bt_quality_name(s->quality));
    cJSON_AddNumberToObject(o, "routes", s->routes);
    cJSON_AddNumberToObject(o, "unpriced", s->unpriced);
    add_opt_str(o, "top_route", s->top >= 0 ? r->cfg->routes[s->top].name : NULL);
    return o;
}

/* The cross-model daily ledger of every Region with runtime routes (core/ledger.h). */
static void ledger_json(const struct bt_report *r, cJSON *root)
{
    struct bt_ledger *ls = NULL;
    int nl = bt_ledger_build(r->cfg, r->store, r->evals, &ls);
    cJSON *arr = cJSON_AddArrayToObject(root, "ledger");
    for (int k = 0; k < nl; k++) {
        const struct bt_ledger *l = &ls[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "region", l->region);
        /* whose day: the routes' account, else their profile (null: none set) */
        add_opt_str(o, "account", l->account);
        add_opt_str(o, "profile", l->profile);
        add_usd(o, "quota", l->quota);
        add_opt_str(o, "quota_code", l->quota_code);
        add_usd(o, "tokens_today", l->tokens_today);
        cJSON_AddStringToObject(o, "used_quality", bt_quality_name(l->used_q));
        add_usd(o, "pct", isnan(l->pct) ? NAN : bt_round_to(l->pct, 2));
        add_usd(o, "usd_today", l->usd_today);
        add_usd(o, "rate_tokens_per_min", isnan(l->rate) ? NAN : round(l->rate));
        add_usd(o, "rate_change_per_min", isnan(l->slope) ? NAN : round(l->slope));
        cJSON_AddNumberToObject(o, "fit_minutes", l->fit_minutes);
        bt_json_add_time(o, "runout_at", l->runout);
        bt_json_add_time(o, "reset_at", l->reset);
        cJSON_AddBoolToObject(o, "reset_assumed", true);
        cJSON_AddBoolToObject(o, "outside_callers", l->outside);
        add_opt_str(o, "used_quality_reason", l->used_why);
        if (l->onset) {
            cJSON *c = cJSON_AddObjectToObject(o, "observed_ceiling");
            bt_json_add_time(c, "onset", l->onset);
            add_usd(c, "tokens", l->ceiling);
            cJSON_AddStringToObject(c, "quality", "estimate");
            cJSON_AddNumberToObject(c, "routes_throttled", l->onset_routes);
            add_usd(c, "throttles", l->onset_throttles);
            cJSON_AddStringToObject(c, "basis",
                                    "the first minute today when every runtime route of the "
                                    "Region that was called throttled, each under half its "
                                    "per-minute quota (\"Too many tokens per day\"): the day's "
                                    "settled tokens before it");
        } else {
            cJSON_AddNullToObject(o, "observed_ceiling");
        }
        cJSON *ms = cJSON_AddArrayToObject(o, "models");
        for (int j = 0; j < l->nmodels; j++) {
            cJSON *m = cJSON_CreateObject();
            cJSON_AddStringToObject(m, "model", l->models[j].model);
            add_usd(m, "tokens_today", l->models[j].tokens_today);
            add_usd(m, "usd_today", l->models[j].usd_today);
            add_usd(m, "share", bt_round_to(l->models[j].share, 4));
            cJSON_AddNumberToObject(m, "routes", l->models[j].routes);
            cJSON_AddItemToArray(ms, m);
        }
        cJSON_AddItemToArray(arr, o);
    }
    bt_ledger_free(ls, nl);
}

void bt_spend_json_head(const struct bt_report *r, cJSON *sp)
{
    cJSON_AddStringToObject(sp, "basis", "list prices, no discounts or credits: an estimate");
    add_opt_str(sp, "prices_note", r->cfg->prices_note);
    struct bt_spend_sum *sums = NULL;
    int ns = bt_spend_by_region(r->cfg, r->evals, r->keep, &sums);
    cJSON *regs = cJSON_AddArrayToObject(sp, "regions");
    for (int k = 0; k < ns; k++)
        cJSON_AddItemToArray(regs, sum_json(r, &sums[k], "region"));
    free(sums);
}

cJSON *bt_spend_group_json(const struct bt_report *r, int i)
{
    if ((r->keep && !r->keep[i]) || bt_eval_group_first(&r->evals[i]) != i)
        return NULL;
    struct bt_spend_sum g;
    bt_spend_of_group(r->cfg, r->evals, i, &g);
    return sum_json(r, &g, "group");
}

void bt_spend_json(const struct bt_report *r, cJSON *root)
{
    cJSON *sp = cJSON_AddObjectToObject(root, "spend");
    bt_spend_json_head(r, sp);
    cJSON *groups = cJSON_AddArrayToObject(sp, "groups");
    for (int i = 0; i < r->n; i++) {
        cJSON *g = bt_spend_group_json(r, i);
        if (g)
            cJSON_AddItemToArray(groups, g);
    }
    bt_spend_json_rest(r, sp);
}

void bt_spend_json_rest(const struct bt_report *r, cJSON *sp)
{
    struct bt_spend_team *tm = NULL;
    int nt = bt_spend_by_team(r->cfg, r->store, r->evals, r->keep, &tm);
    cJSON *teams = cJSON_AddArrayToObject(sp, "teams");
    for (int k = 0; k < nt; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "team", tm[k].name);
        add_usd(o, "usd_per_hour", tm[k].usd_per_hour);
        add_usd(o, "usd_today", tm[k].usd_today);
        cJSON_AddStringToObject(o, "quality", bt_quality_name(tm[k].quality));
        cJSON_AddNumberToObject(o, "routes", tm[k].routes);
        add_opt_str(o, "top_route", tm[k].top >= 0 ? r->cfg->routes[tm[k].top].name : NULL);
        double b = bt_spend_team_budget(r->cfg, tm[k].name);
        add_usd(o, "budget_usd_per_day", b);
        cJSON_AddItemToArray(teams, o);
    }
    free(tm);
    if (nt)
        cJSON_AddStringToObject(sp, "teams_basis",
                                "each route's spend split by the team's share of its use (the "
                                "admission counters' team label, now); the day's likewise");
    ledger_json(r, sp);
}

/* The ledger in check's text: per Region the day's tokens against the cross-model
 * quota (an estimate), the run-out at trend and the three biggest holders. */
static void ledger_text(const struct bt_report *r, struct bt_buf *b)
{
    struct bt_ledger *ls = NULL;
    int nl = bt_ledger_build(r->cfg, r->store, r->evals, &ls);
    if (nl)
        bt_buf_puts(b, "\ncross-model day (settled tokens; AWS weights them by price: an estimate):\n");
    for (int k = 0; k < nl; k++) {
        const struct bt_ledger *l = &ls[k];
        char t[16], q[16], when[8], rs[8], reg[64];
        bt_san_term(reg, sizeof reg, l->region);
        if (l->who[0]) { /* two ledgers in this Region: whose, on a line of its own */
            char who[96];
            bt_san_term(who, sizeof who, l->who);
            bt_buf_printf(b, "  %s, %s:\n", reg, who);
            reg[0] = '\0';
        }
        bt_fmt_tokens(l->tokens_today, t, sizeof t);
        bt_fmt_tokens(l->quota, q, sizeof q);
        bt_fmt_hhmm(l->reset, rs, sizeof rs);
        bool lower = l->used_q == BT_QL_LOWER;
        if (isnan(l->quota))
            bt_buf_printf(b, "  %-14s %s%s tokens today; no cross-model quota listed\n",
                          reg, lower ? "at least " : "", t);
        else
            bt_buf_printf(b, "  %-14s %s%s of %s tokens (%.1f%%)\n", reg,
                          lower ? "at least " : "", t, q, l->pct);
        if (!isnan(l->quota) && l->runout) {
            bt_fmt_hhmm(l->runout, when, sizeof when);
            bt_buf_printf(b, "  %-14s runs out %s UTC at trend (%d-min fit); reset %s UTC "
                          "assumed\n", "", when, l->fit_minutes, rs);
        } else if (!isnan(l->quota)) {
            bt_buf_printf(b, "  %-14s %s\n", "",
                          l->fit_minutes < BT_LEDGER_FIT_MIN
                              ? "no trend (not enough data)"
                              : "lasts to the assumed reset at the trend");
        }
        if (lower && l->used_why[0]) {
            /* why, in lines of 80 columns under the figures */
            char why[224];
            bt_san_term(why, sizeof why, l->used_why);
            const char *p = why;
            for (bool first = true; *p; first = false) {
                size_t len = strlen(p), w = first ? 46 : 63;
                if (len > w) {
                    size_t cut = w;
                    while (cut > 0 && p[cut] != ' ')
                        cut--;
                    len = cut ? cut : w;
                }
                bt_buf_printf(b, "  %-14s %s%.*s\n", "", first ? "a lower bound: " : "",
                              (int)len, p);
                p += len;
                while (*p == ' ')
                    p++;
            }
        }
        if (l->onset) {
            char on[8], c[16];
            bt_fmt_hhmm(l->onset, on, sizeof on);
            bt_fmt_tokens(l->ceiling, c, sizeof c);
            bt_buf_printf(b, "  %-14s observed ceiling %s tokens: throttled from %s UTC\n", "", c,
                          on);
        }
        for (int j = 0; j < l->nmodels && j < 3; j++) {
            char mt[16], usd[32], name[41]; /* 80 columns with the figures */
            bt_fmt_tokens(l->models[j].tokens_today, mt, sizeof mt);
            bt_fmt_usd(l->models[j].usd_today, usd, sizeof usd);
            bt_san_term(name, sizeof name, l->models[j].model);
            bt_buf_printf(b, "  %-14s %-40s %7s %3.0f%% %s\n", j ? "" : "holders", name, mt,
                          100 * l->models[j].share, usd);
        }
    }
    bt_ledger_free(ls, nl);
}

/* Spend per team (core/cost.h), where the admission counters name teams. */
static void teams_text(const struct bt_report *r, struct bt_buf *b)
{
    struct bt_spend_team *tm = NULL;
    int nt = bt_spend_by_team(r->cfg, r->store, r->evals, r->keep, &tm);
    if (nt)
        bt_buf_puts(b, "\nspend by team (each route's spend split by the team's share):\n");
    for (int k = 0; k < nt && k < 8; k++) {
        char h[32], d[32], name[40], top[40] = "";
        bt_fmt_usd(tm[k].usd_per_hour, h, sizeof h);
        bt_fmt_usd(tm[k].usd_today, d, sizeof d);
        bt_san_term(name, sizeof name, tm[k].name);
        if (tm[k].top >= 0)
            bt_san_term(top, sizeof top, r->cfg->routes[tm[k].top].name);
        const char *lb = tm[k].quality == BT_QL_LOWER   ? "at least "
                         : tm[k].quality == BT_QL_UPPER ? "at most "
                                                        : "";
        bt_buf_printf(b, "  %-14.14s %s%s/h, %s%s today%s%.24s\n", name, lb, h, lb, d,
                      top[0] ? "; most on " : "", top);
    }
    if (nt > 8)
        bt_buf_printf(b, "  %d more teams\n", nt - 8);
    free(tm);
}

void bt_spend_text(const struct bt_report *r, struct bt_buf *b)
{
    struct bt_spend_sum *sums = NULL;
    int ns = bt_spend_by_region(r->cfg, r->evals, r->keep, &sums);
    if (!ns) {
        free(sums);
        return;
    }
    bt_buf_puts(b, "\nspend (list prices, no discounts or credits: an estimate):\n");
    for (int k = 0; k < ns; k++) {
        const struct bt_spend_sum *s = &sums[k];
        char h[32], d[32], reg[64];
        bt_fmt_usd(s->usd_per_hour, h, sizeof h);
        bt_fmt_usd(s->usd_today, d, sizeof d);
        bt_san_term(reg, sizeof reg, s->key); /* names from outside reach no terminal raw */
        if (s->quality == BT_QL_UNKNOWN)
            bt_buf_printf(b, "  %-14s unknown\n", reg);
        else
            bt_buf_printf(b, "  %-14s %s%s/h, %s%s today\n", reg,
                          s->unpriced ? "at least " : "", h,
                          s->quality == BT_QL_LOWER ? "at least " : "", d);
        if (s->top < 0 && !s->unpriced)
            continue;
        bt_buf_printf(b, "  %-14s", "");
        if (s->top >= 0) {
            bt_fmt_usd(s->top_usd_per_hour, h, sizeof h);
            char name[40];
            bt_san_term(name, sizeof name, r->cfg->routes[s->top].name);
            bt_buf_printf(b, " most: %s %s/h%s", name, h, s->unpriced ? ";" : "");
        }
        if (s->unpriced)
            bt_buf_printf(b, " %d of %d routes unpriced (no price row)", s->unpriced, s->routes);
        bt_buf_putc(b, '\n');
    }
    free(sums);
    teams_text(r, b);
    ledger_text(r, b);
}

void bt_spend_line(const struct bt_eval *e, char *out, size_t n)
{
    const struct bt_spend *sp = bt_eval_spend(e);
    char h[32], d[32];
    bt_fmt_usd(sp->usd_per_hour, h, sizeof h);
    bt_fmt_usd(sp->usd_today, d, sizeof d);
    if (!sp->row) {
        bt_fmt_cut(out, n, "unknown: %s", sp->reason);
        return;
    }
    char row[200];
    bt_price_row_text(sp->row, row, sizeof row);
    bt_fmt_cut(out, n, "%s/h, %s%s today (estimate, list prices: %s)%s%s", h,
               sp->today_q == BT_QL_LOWER ? "at least " : "", d, row, sp->reason[0] ? "; " : "",
               sp->reason);
}

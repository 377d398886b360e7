#include "render/spend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cost.h"
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
    if (isnan(v) || isinf(v))
        cJSON_AddNullToObject(o, k);
    else
        cJSON_AddNumberToObject(o, k, bt_round_to(v, 4));
}

static void add_opt_str(cJSON *o, const char *k, const char *v)
{
    if (v && *v)
        cJSON_AddStringToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

void bt_spend_route_json(const struct bt_report *r, int i, cJSON *o)
{
    const struct bt_spend *sp = &r->evals[i].spend;
    const struct bt_route *rt = &r->cfg->routes[i];
    cJSON *c = cJSON_AddObjectToObject(o, "cost");
    add_usd(c, "usd_per_hour", sp->usd_per_hour);
    add_usd(c, "usd_today", sp->usd_today);
    cJSON_AddStringToObject(c, "quality", bt_quality_name(sp->quality));
    cJSON_AddStringToObject(c, "usd_today_quality", bt_quality_name(sp->today_q));
    add_opt_str(c, "source", sp->row ? sp->row->source : NULL);
    add_opt_str(c, "price_date", sp->row ? sp->row->date : NULL);
    char row[256] = "";
    if (sp->row)
        bt_price_row_text(sp->row, row, sizeof row);
    add_opt_str(c, "price_row", row);
    cJSON_AddStringToObject(c, "tier", bt_tier_name((enum bt_tier)rt->tier));
    add_opt_str(c, "reason", sp->reason);
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

void bt_spend_json(const struct bt_report *r, cJSON *root)
{
    cJSON *sp = cJSON_AddObjectToObject(root, "spend");
    cJSON_AddStringToObject(sp, "basis", "list prices, no discounts or credits: an estimate");
    add_opt_str(sp, "prices_note", r->cfg->prices_note);
    struct bt_spend_sum *sums = NULL;
    int ns = bt_spend_by_region(r->cfg, r->evals, r->keep, &sums);
    cJSON *regs = cJSON_AddArrayToObject(sp, "regions");
    for (int k = 0; k < ns; k++)
        cJSON_AddItemToArray(regs, sum_json(r, &sums[k], "region"));
    free(sums);
    cJSON *groups = cJSON_AddArrayToObject(sp, "groups");
    for (int i = 0; i < r->n; i++) {
        if ((r->keep && !r->keep[i]) || r->evals[i].group_leader != i)
            continue;
        struct bt_spend_sum g;
        bt_spend_of_group(r->cfg, r->evals, i, &g);
        cJSON_AddItemToArray(groups, sum_json(r, &g, "group"));
    }
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
        char h[32], d[32];
        bt_fmt_usd(s->usd_per_hour, h, sizeof h);
        bt_fmt_usd(s->usd_today, d, sizeof d);
        bt_buf_printf(b, "  %-14s %s%s/h, %s%s today\n", s->key, s->unpriced ? "at least " : "",
                      h, s->quality == BT_QL_LOWER ? "at least " : "", d);
        if (s->top < 0 && !s->unpriced)
            continue;
        bt_buf_printf(b, "  %-14s", "");
        if (s->top >= 0) {
            bt_fmt_usd(s->top_usd_per_hour, h, sizeof h);
            char name[40];
            bt_fmt_cut(name, sizeof name, "%s", r->cfg->routes[s->top].name);
            bt_buf_printf(b, " most: %s %s/h%s", name, h, s->unpriced ? ";" : "");
        }
        if (s->unpriced)
            bt_buf_printf(b, " %d of %d routes unpriced (no price row)", s->unpriced, s->routes);
        bt_buf_putc(b, '\n');
    }
    free(sums);
}

void bt_spend_line(const struct bt_eval *e, char *out, size_t n)
{
    const struct bt_spend *sp = &e->spend;
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

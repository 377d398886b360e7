/* The shares of a quota group as JSON and as check --by's table (render/shares.h). */
#include "render/shares.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/format.h"
#include "core/json.h"
#include "core/sanitize.h"

static void num_or_null(struct bt_jw *o, const char *k, double v, int digits)
{
    if (!isfinite(v))
        bt_jw_null(o, k);
    else
        bt_jw_num(o, k, digits ? bt_round_to(v, digits) : round(v));
}

static void add_list(struct bt_jw *o, const struct bt_share_list *l)
{
    for (int k = 0; k < l->n; k++) {
        const struct bt_share *s = &l->s[k];
        bt_jw_obj(o, NULL);
        bt_jw_str(o, "by", s->outside ? "outside" : bt_share_by_name(s->by));
        bt_jw_str(o, "name", s->name);
        num_or_null(o, "used", s->used, 0);
        num_or_null(o, "pct", s->pct, 2);
        bt_jw_str(o, "quality", bt_quality_name(s->quality));
        bt_jw_str(o, "source", s->source ? s->source : "unattributed");
        if (s->reason[0])
            bt_jw_str(o, "reason", s->reason);
        bt_jw_end(o);
    }
}

void bt_shares_json(struct bt_jw *arr, const struct bt_report *r, int i)
{
    bt_jw_arr(arr, "shares");
    struct bt_share_list scratch = {0};
    const struct bt_eval *e = &r->evals[i];
    static const enum bt_share_by order[] = {BT_SHARE_TEAM, BT_SHARE_TAG, BT_SHARE_PROJECT,
                                             BT_SHARE_ROUTE};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
        if (order[k] == BT_SHARE_PROJECT && !bt_eval_mantle(e))
            continue; /* the Project dimension is mantle's */
        if (order[k] == BT_SHARE_TAG && !r->cfg->attribute_tag[0])
            continue; /* no attribute_by: no tag asked */
        add_list(arr, bt_share_memo_get(r->share_memo, r->cfg, r->store, r->evals, i, order[k],
                                        &scratch));
    }
    bt_jw_end(arr);
    bt_shares_free(&scratch);
    bt_share_memo_done(r->share_memo, r->evals, i);
}

bool bt_shares_parse_by(const struct bt_config *cfg, const char *s, enum bt_share_by *by,
                        char *why, size_t n)
{
    if (!strncmp(s, "tag:", 4) || !strcmp(s, "tag")) {
        /* the one tag the profiles are asked for */
        if (!cfg->attribute_tag[0]) {
            snprintf(why, n, "'%s': the config names no tag (attribute_by = tag:KEY in [bedtop])", s);
            return false;
        }
        if (s[3] == ':' && strcmp(s + 4, cfg->attribute_tag) != 0) {
            snprintf(why, n, "'%s': bedtop reads the tag attribute_by names (tag:%s)", s,
                     cfg->attribute_tag);
            return false;
        }
        *by = BT_SHARE_TAG;
        return true;
    }
    int b = bt_share_by_parse(s);
    if (b == BT_SHARE_TAG)
        b = -1;
    if (b >= 0) {
        *by = (enum bt_share_by)b;
        return true;
    }
    snprintf(why, n, "'%s' is not a share; use team, tag:KEY, project or route", s);
    return false;
}

static void cell(struct bt_buf *b, const char *s, int w)
{
    char clean[128];
    bt_san_term(clean, sizeof clean, s);
    bt_buf_printf(b, "%-*s ", w, clean);
}

void bt_shares_render_table(const struct bt_report *r, enum bt_share_by by, const char *label,
                            struct bt_buf *out)
{
    bt_buf_printf(out, "%-16s %-12s %-7s %-24s %9s %7s  %-12s %s\n", "GROUP", "QUOTA", "BY", "NAME",
                  "USED/MIN", "SHARE", "QUALITY", "SOURCE");
    struct bt_share_list l = {0};
    for (int i = 0; i < r->n; i++) {
        const struct bt_eval *e = &r->evals[i];
        int leader = bt_group_leader(r->evals, i);
        if (leader != i) {
            /* each group once, at its first member shown */
            bool earlier = false;
            for (int m = leader; m >= 0 && m < i && !earlier; m = bt_group_next(r->evals, m))
                earlier = bt_report_shows(r, m);
            if (earlier)
                continue;
        }
        if (!bt_report_shows(r, i))
            continue;
        bt_shares_of_route(r->cfg, r->store, r->evals, i, by, label, &l);
        const char *group = r->cfg->routes[leader].name;
        for (int k = 0; k < l.n; k++) {
            const struct bt_share *s = &l.s[k];
            char used[32], pct[16];
            if (isnan(s->used))
                bt_strlcpy(used, "-", sizeof used);
            else
                bt_fmt_si(s->used, used, sizeof used);
            if (isnan(s->pct))
                bt_strlcpy(pct, "-", sizeof pct);
            else
                snprintf(pct, sizeof pct, "%.1f%%", s->pct);
            cell(out, group, 16);
            cell(out, bt_eval_quota_code(e)[0] ? bt_eval_quota_code(e) : "-", 12);
            cell(out, s->outside ? "outside" : bt_share_by_name(s->by), 7);
            cell(out, s->name, 24);
            bt_buf_printf(out, "%9s %7s  ", used, pct);
            cell(out, bt_quality_name(s->quality), 12);
            char src[256];
            bt_san_term(src, sizeof src, s->source ? s->source : "");
            bt_buf_puts(out, src);
            if (s->reason[0]) {
                char why[256];
                bt_san_term(why, sizeof why, s->reason);
                bt_buf_printf(out, " (%s)", why);
            }
            bt_buf_putc(out, '\n');
        }
        char u[32];
        if (isnan(l.group_used))
            bt_strlcpy(u, "-", sizeof u);
        else
            bt_fmt_si(l.group_used, u, sizeof u);
        cell(out, group, 16);
        cell(out, bt_eval_quota_code(e)[0] ? bt_eval_quota_code(e) : "-", 12);
        cell(out, "total", 7);
        cell(out, "", 24);
        bt_buf_printf(out, "%9s %7s  %s\n", u, l.group_used > 0 ? "100.0%" : "-", bt_quality_name(l.group_q));
    }
    bt_shares_free(&l);
}

void bt_shares_budgets_json(const struct bt_config *cfg, int r, int64_t now,
                            const struct bt_share_budgets *b, struct bt_buf *out)
{
    cJSON *o = cJSON_CreateObject();
    char at[32];
    bt_fmt_iso(now, at, sizeof at);
    cJSON_AddStringToObject(o, "policy", "bedtop per-holder token budgets");
    cJSON_AddStringToObject(o, "generated_at", at);
    cJSON_AddStringToObject(o, "route", cfg->routes[r].name);
    cJSON_AddStringToObject(o, "by", bt_share_by_name(b->by));
    if (b->by == BT_SHARE_TEAM)
        cJSON_AddStringToObject(o, "label", cfg->share_label);
    else if (b->by == BT_SHARE_TAG)
        cJSON_AddStringToObject(o, "tag", cfg->attribute_tag);
    struct bt_jw w;
    bt_jw_tree(&w, o);
    num_or_null(&w, "quota_tpm", b->quota, 0);
    num_or_null(&w, "reserve_tpm", b->reserve, 0);
    num_or_null(&w, "unattributed_tpm", b->unattributed, 0);
    num_or_null(&w, "available_tpm", b->available, 0);
    num_or_null(&w, "cap_tpm", b->cap, 0);
    bt_jw_arr(&w, "budgets");
    for (int i = 0; i < b->n; i++) {
        bt_jw_obj(&w, NULL);
        bt_jw_str(&w, "name", b->b[i].name);
        num_or_null(&w, "demand_tpm", b->b[i].demand, 0);
        num_or_null(&w, "budget_tpm", b->b[i].budget, 0);
        bt_jw_str(&w, "demand_quality", bt_quality_name(b->b[i].quality));
        bt_jw_end(&w);
    }
    bt_jw_end(&w);
    cJSON_AddStringToObject(o, "basis", isnan(b->cap)
        ? "the demands fit: each holder's use now plus an equal part of what is left"
        : "oversubscribed: one cap for every holder (max-min fair); smaller demands kept whole");
    char *text = bt_json_print(o, true);
    bt_san_json_text(out, text);
    bt_buf_putc(out, '\n');
    cJSON_free(text);
    cJSON_Delete(o);
}

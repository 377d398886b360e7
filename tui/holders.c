/* The quota group view (H): who holds how much of the selected route's quota now, and
 * on average over the last hour, by team, tag, project or route (b cycles). Core
 * computes the shares (core/shares.h); this only draws them. */
#include "tui/view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/figures.h"
#include "core/format.h"
#include "core/sanitize.h"
#include "core/shares.h"
#include "core/util.h"

#define HOUR_MIN 60

/* The view's state, one per process (one dashboard, one overlay). */
static struct {
    bool open;
    enum bt_share_by by;
    /* the last hour's means, recomputed when the route, the grouping, the data or the
     * minute changed */
    struct bt_share_list hour;
    int hour_minutes;
    int h_route;
    enum bt_share_by h_by;
    uint64_t h_gen;
    int64_t h_now;
    int pos;
} hv = {.h_route = -1};

bool tui_holders_open(void)
{
    return hv.open;
}

void tui_holders_toggle(struct bt_tui *t)
{
    hv.open = !hv.open;
    hv.pos = 0;
    if (hv.open && t->sel_route < 0)
        snprintf(t->msg, sizeof t->msg, "quota holders: select a route first");
}

static void next_by(const struct bt_tui *t)
{
    for (int k = 0; k < BT_SHARE_COUNT; k++) {
        hv.by = (enum bt_share_by)((hv.by + 1) % BT_SHARE_COUNT);
        if (hv.by == BT_SHARE_TAG && !t->host->cfg->attribute_tag[0])
            continue;
        return;
    }
}

void tui_holders_key(struct bt_tui *t, int c)
{
    if (c == 'b' || c == '\t')
        next_by(t), hv.pos = 0;
    else if (c == KEY_DOWN || c == 'j')
        hv.pos++;
    else if ((c == KEY_UP || c == 'k') && hv.pos > 0)
        hv.pos--;
    else if (c == 27 || c == 'H' || c == 'q' || c == KEY_LEFT)
        hv.open = false;
    else if (c == 'Q' || c == KEY_F(10))
        t->quit = true;
    else if (c != KEY_MOUSE)
        snprintf(t->msg, sizeof t->msg, "quota holders: b by team/tag/project/route, Up/Down scroll, "
                 "Esc closes");
}

static const struct bt_share *find(const struct bt_share_list *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->s[i].name, name))
            return &l->s[i];
    return NULL;
}

static void fmt_used(double v, enum bt_quality q, char *out, size_t n)
{
    char si[24];
    if (isnan(v)) {
        bt_strlcpy(out, "-", n);
        return;
    }
    bt_fmt_si(v, si, sizeof si);
    snprintf(out, n, "%s%s", q == BT_QL_LOWER ? ">=" : q == BT_QL_UPPER ? "<=" : "", si);
}

/* A bar of w cells, pct of it filled. */
static void bar(int y, int x, int w, double pct, attr_t on, attr_t off)
{
    int fill = isnan(pct) ? 0 : (int)lround(pct / 100 * w);
    fill = fill < 0 ? 0 : fill > w ? w : fill;
    for (int i = 0; i < w; i++)
        tui_glyph(y, x + i, i < fill ? 0x2588 : 0x00b7, i < fill ? on : off);
}

void tui_draw_holders(struct bt_tui *t, const struct bt_layout *l)
{
    const struct bt_tui_host *host = t->host;
    int r = t->sel_route;
    if (r < 0 || r >= host->cfg->nroutes || !t->evals)
        return;
    if (hv.by == BT_SHARE_TAG && !host->cfg->attribute_tag[0])
        hv.by = BT_SHARE_TEAM;
    int w = l->cols - 2 < 100 ? l->cols - 2 : 100;
    struct bt_rect h = {(l->cols - w) / 2, 1, w, l->rows - 2};
    if (h.w < 40 || h.h < 6)
        return;
    struct bt_share_list now = {0};
    bt_shares_of_route(host->cfg, host->store, t->evals, r, hv.by, NULL, &now);
    if (hv.h_route != r || hv.h_by != hv.by || hv.h_gen != bt_store_generation(host->store) ||
        hv.h_now != bt_minute_floor(host->now)) {
        hv.hour_minutes = bt_shares_history(host->cfg, host->store, host->now, r, hv.by, HOUR_MIN,
                                            &hv.hour);
        hv.h_route = r;
        hv.h_by = hv.by;
        hv.h_gen = bt_store_generation(host->store);
        hv.h_now = bt_minute_floor(host->now);
    }
    const struct bt_eval *e = &t->evals[r];
    attr_t a = A(t, BT_ROLE_HELP);
    char title[200], name[64];
    bt_san_term(name, sizeof name, host->cfg->routes[bt_group_leader(t->evals, r)].name);
    snprintf(title, sizeof title, " who holds quota %s (group of %s, %d route%s), by %s  b: by  Esc closes ",
             bt_eval_quota_code(e)[0] ? bt_eval_quota_code(e) : "-", name, bt_eval_nshared(e) + 1,
             bt_eval_nshared(e) ? "s" : "",
             bt_share_by_name(hv.by));
    tui_box(t, h, title, a);
    int x = h.x + 2, y = h.y + 1, cw = h.w - 4;
    int bw = cw - 24 - 2 * 18 - 4;
    bw = bw < 10 ? 10 : bw > 30 ? 30 : bw;
    char line[256], u[32], hu[32], p[16], hp[16];
    fmt_used(now.group_used, now.group_q, u, sizeof u);
    fmt_used(hv.hour.group_used, hv.hour.group_q, hu, sizeof hu);
    snprintf(line, sizeof line, "group use now %s TPM of %s; last hour mean %s over %d minute%s", u,
             isnan(bt_fig(e, BT_FIG_QUOTA)) ? "unknown" : "", hu, hv.hour_minutes, hv.hour_minutes == 1 ? "" : "s");
    if (!isnan(bt_fig(e, BT_FIG_QUOTA))) {
        char q[32];
        bt_fmt_si(bt_fig(e, BT_FIG_QUOTA), q, sizeof q);
        snprintf(line, sizeof line, "group use now %s of %s TPM; last hour mean %s over %d minute%s", u,
                 q, hu, hv.hour_minutes, hv.hour_minutes == 1 ? "" : "s");
    }
    if (hv.hour_minutes && hv.hour.told < hv.hour_minutes) {
        /* the hour's mean is of every minute: where no holder was told apart (the
         * per-series readings start later) its use counts as unattributed */
        size_t len = strlen(line);
        snprintf(line + len, sizeof line - len, " (%s told apart in %d)",
                 hv.by == BT_SHARE_TEAM ? "teams" : "holders", hv.hour.told);
    }
    tui_text(y++, x, cw, line, a);
    y++;
    snprintf(line, sizeof line, "%-24s %9s %6s  %-*s  %9s %6s", "HOLDER", "NOW", "SHARE", bw, "",
             "LAST HOUR", "SHARE");
    tui_text(y++, x, cw, line, A(t, BT_ROLE_COLHEAD));
    int rows = h.y + h.h - 1 - y - 2;
    /* every holder of now, then those of the hour no longer holding */
    int total = now.n;
    for (int i = 0; i < hv.hour.n; i++)
        total += !find(&now, hv.hour.s[i].name);
    if (hv.pos > total - rows)
        hv.pos = total - rows > 0 ? total - rows : 0;
    int k = 0;
    for (int i = 0; i < now.n + hv.hour.n && y < h.y + h.h - 3; i++) {
        const struct bt_share *s = i < now.n ? &now.s[i] : &hv.hour.s[i - now.n];
        if (i >= now.n && find(&now, s->name))
            continue;
        if (k++ < hv.pos)
            continue;
        const struct bt_share *hs = i < now.n ? find(&hv.hour, s->name) : s;
        char nm[32];
        bt_san_term(nm, sizeof nm, s->name);
        if (i < now.n) {
            fmt_used(s->used, s->quality, u, sizeof u);
            snprintf(p, sizeof p, isnan(s->pct) ? "-" : "%.1f%%", s->pct);
        } else {
            bt_strlcpy(u, "0", sizeof u);
            bt_strlcpy(p, "0.0%", sizeof p);
        }
        fmt_used(hs ? hs->used : NAN, hs ? hs->quality : BT_QL_UNKNOWN, hu, sizeof hu);
        snprintf(hp, sizeof hp, hs && !isnan(hs->pct) ? "%.1f%%" : "-", hs ? hs->pct : 0.0);
        bool unattr = !strcmp(s->name, BT_SHARE_UNATTRIBUTED) || s->outside;
        attr_t ra = unattr ? A(t, BT_ROLE_DIM) | (a & A_COLOR) : a;
        snprintf(line, sizeof line, "%-24s %9s %6s", nm, u, s->outside ? "" : p);
        tui_text(y, x, cw, line, ra);
        if (!s->outside && i < now.n)
            bar(y, x + 42, bw, s->pct, A(t, unattr ? BT_ROLE_EMPTY : BT_ROLE_RESERVED), A(t, BT_ROLE_EMPTY));
        snprintf(line, sizeof line, "%9s %6s", hu, hp);
        tui_text(y, x + 42 + bw + 2, cw - 42 - bw - 2, line, ra);
        y++;
    }
    /* why the unattributed part cannot be told apart, and the outside callers */
    y = h.y + h.h - 3;
    for (int i = 0; i < now.n; i++) {
        const struct bt_share *s = &now.s[i];
        if (!s->reason[0] || y > h.y + h.h - 2)
            continue;
        char why[340];
        bt_fmt_cut(why, sizeof why, "%s: %s", s->outside ? "outside the config" : s->name, s->reason);
        char clean[340];
        bt_san_term(clean, sizeof clean, why);
        tui_text_cut(y++, x, cw, clean, A(t, BT_ROLE_DIM) | (a & A_COLOR));
    }
    bt_shares_free(&now);
}

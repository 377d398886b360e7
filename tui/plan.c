/* The detail view's `w`: what-if and the limits to set, as an overlay. The figures
 * are core/plan.c's and the text is bedtop plan's (render/plan.c), so the overlay
 * and the command say the same; above them, output tokens per second and time to
 * first token over the last hour as two sparklines. */
#include "tui/view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/format.h"
#include "core/plan.h"
#include "core/sanitize.h"
#include "core/speed.h"
#include "core/util.h"
#include "render/plan.h"

struct tui_plan {
    int route;
    char input[96];
    char err[160];
    struct bt_plan_change change;
    uint64_t gen;            /* computed for this store generation and time */
    int64_t now;
    bool stale;              /* recompute at the next draw */
    struct wline lines[MAX_WLINES];
    int n;
    struct tui_scroll sc;
};

void tui_plan_close(struct bt_tui *t)
{
    free(t->plan);
    t->plan = NULL;
}

void tui_plan_open(struct bt_tui *t)
{
    if (t->sel_route < 0) {
        snprintf(t->msg, sizeof t->msg, "select a route first");
        return;
    }
    tui_plan_close(t);
    t->plan = bt_xcalloc(1, sizeof *t->plan);
    t->plan->route = t->sel_route;
    bt_plan_change_none(&t->plan->change);
    t->plan->stale = true;
}

/* One sparkline of the last hour of a per-minute series, scaled to its own maximum. */
static void sparkline(const struct bt_tui *t, const double *v, int n, char *out, size_t size)
{
    static const uint32_t bars[] = {0x2581, 0x2582, 0x2583, 0x2584, 0x2585, 0x2586, 0x2587, 0x2588};
    static const char ascii[] = "_.-:=+*#";
    double max = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i]))
            max = fmax(max, v[i]);
    size_t len = 0;
    for (int i = 0; i < n && len + 8 < size; i++) {
        if (!isfinite(v[i]) || max <= 0) {
            out[len++] = ' ';
            continue;
        }
        int k = (int)floor(v[i] / max * 7.999);
        k = k < 0 ? 0 : k > 7 ? 7 : k;
        if (t->utf8)
            len += (size_t)bt_utf8_encode(bars[k], out + len);
        else
            out[len++] = ascii[k];
    }
    out[len] = '\0';
}

#define SPARK_MINUTES 60

static void speed_lines(struct bt_tui *t, struct tui_plan *p, int64_t minute, int width)
{
    const struct bt_store *st = t->host->store;
    double otps[SPARK_MINUTES], ttft[SPARK_MINUTES];
    int n = width - 24 < SPARK_MINUTES ? width - 24 : SPARK_MINUTES;
    if (n < 10 || !minute)
        return;
    for (int i = 0; i < n; i++) {
        int64_t m = minute - 60 * (int64_t)(n - 1 - i);
        otps[i] = bt_otps_at(st, p->route, m);
        ttft[i] = bt_store_at(st, p->route, BT_SIG_TTFT_AVG, m);
    }
    char sp[SPARK_MINUTES * 4 + 1], line[400], a[BT_FMT_SHORT];
    sparkline(t, otps, n, sp, sizeof sp);
    double last = otps[n - 1];
    snprintf(line, sizeof line, "output tok/s %s %s", sp, isfinite(last) ? bt_fmt_count(last, a, sizeof a) : "-");
    tui_add_wline(p->lines, &p->n, BT_ROLE_HELP, line, 0, BT_ROLE_HELP);
    sparkline(t, ttft, n, sp, sizeof sp);
    snprintf(line, sizeof line, "first token  %s %s", sp, bt_fmt_latency(ttft[n - 1], a, sizeof a));
    tui_add_wline(p->lines, &p->n, BT_ROLE_HELP, line, 0, BT_ROLE_HELP);
    tui_add_wline(p->lines, &p->n, BT_ROLE_HELP, "", 0, BT_ROLE_HELP);
}

/* A line of the plan's text in the box: whole when it fits, else wrapped at words
 * under its own indent (+2), never cut mid-word. */
static void add_wrapped(struct tui_plan *p, const char *line, int width)
{
    if (tui_width(line) <= width) {
        tui_add_wline(p->lines, &p->n, BT_ROLE_HELP, line, 0, BT_ROLE_HELP);
        return;
    }
    int lead = (int)strspn(line, " ");
    if (lead > width / 2)
        lead = width / 2;
    int first = p->n;
    tui_wrap(p->lines, &p->n, line + lead, width, lead + 2, BT_ROLE_HELP);
    if (first < p->n) /* the first line at its own indent */
        memmove(p->lines[first].s, p->lines[first].s + 2, strlen(p->lines[first].s + 2) + 1);
}

/* bedtop plan's text for the route at the host's time, one wline a line. */
static void compute(struct bt_tui *t, struct tui_plan *p, int width)
{
    const struct bt_tui_host *h = t->host;
    struct bt_whatif *w = bt_xcalloc(1, sizeof *w);
    struct bt_limits *lim = bt_xcalloc(1, sizeof *lim);
    struct bt_forecast f;
    struct bt_ceiling ce;
    char why[160];
    p->n = 0;
    if (!bt_plan_whatif(h->cfg, h->store, p->route, h->now, &p->change, w, why, sizeof why)) {
        snprintf(p->err, sizeof p->err, "%s", why);
        bt_plan_change_none(&p->change);
        bt_plan_whatif(h->cfg, h->store, p->route, h->now, &p->change, w, why, sizeof why);
    }
    bt_plan_forecast(h->cfg, h->store, p->route, h->now, &f);
    bt_ceiling_of(h->cfg, h->store, &w->before, &ce);
    bt_plan_limits(h->cfg, h->store, p->route, h->now, lim);
    speed_lines(t, p, bt_eval_cw_minute(&w->before), width);
    struct bt_plan_view v = {.cfg = h->cfg, .mode = h->mode, .now = h->now, .change = &p->change,
                             .w = w, .forecast = &f, .ceiling = &ce, .limits = lim,
                             .width = width};
    struct bt_buf out = {0};
    bt_plan_render_text(&v, &out);
    const char *s = bt_buf_str(&out);
    while (*s) {
        size_t len = strcspn(s, "\n");
        char line[400];
        snprintf(line, sizeof line, "%.*s", (int)len, s);
        for (char *c = line; *c; c++)
            if (*c == '\t')
                *c = ' '; /* the policy JSON's indentation */
        add_wrapped(p, line, width);
        s += len + (s[len] == '\n');
    }
    bt_buf_free(&out);
    free(lim);
    free(w);
    p->gen = bt_store_generation(h->store);
    p->now = h->now;
    p->stale = false;
}

void tui_plan_draw(struct bt_tui *t, const struct bt_layout *l)
{
    struct tui_plan *p = t->plan;
    int w = l->cols - 2 < 84 ? l->cols - 2 : 84;
    int hh = l->rows - 2;
    struct bt_rect h = {(l->cols - w) / 2, 1, w, hh};
    if (h.w < 20 || h.h < 5)
        return;
    if (p->stale || p->gen != bt_store_generation(t->host->store) || p->now != t->host->now)
        compute(t, p, w - 4);
    attr_t a = A(t, BT_ROLE_HELP);
    char title[128];
    bt_san_term(title, sizeof title, t->host->cfg->routes[p->route].name);
    char head[sizeof title + 64]; /* the name and the keys whole */
    snprintf(head, sizeof head, " what if: %s (Enter applies, Up/Down scroll, Esc closes) ", title);
    tui_box(t, h, head, a);
    for (int y = h.y + 1; y < h.y + h.h - 1; y++)
        tui_fill(y, h.x + 1, h.w - 2, a);
    char prompt[200];
    snprintf(prompt, sizeof prompt, "change: %s_", p->input);
    tui_text(h.y + 1, h.x + 2, h.w - 4, prompt, A(t, BT_ROLE_STATUS));
    const char *hint = p->err[0] ? p->err
                       : "e.g. max_tokens 768, concurrency 20, traffic x2, retries off, tier flex, "
                         "region us-west-2";
    tui_text_word(h.y + 2, h.x + 2, h.w - 4, hint, A(t, p->err[0] ? BT_ROLE_WARN : BT_ROLE_AXIS));
    struct bt_rect body = {h.x + 2, h.y + 3, h.w - 4, h.h - 4};
    tui_draw_lines(t, body, p->lines, p->n, &p->sc);
    char pos[48];
    tui_scroll_pos(&p->sc, body.h, pos, sizeof pos);
    if (pos[0]) {
        char tag[80];
        snprintf(tag, sizeof tag, " %s  PgDn/PgUp ", pos);
        int tw = tui_width(tag);
        tui_text(h.y + h.h - 1, h.x + h.w - tw - 2, tw, tag, a | A_BOLD);
    }
}

void tui_plan_key(struct bt_tui *t, int c)
{
    struct tui_plan *p = t->plan;
    size_t len = strlen(p->input);
    if (c == 27) {
        tui_plan_close(t);
    } else if (c == 'Q' && !len) {
        t->quit = true;
    } else if (c == '\n' || c == '\r' || c == KEY_ENTER) {
        struct bt_plan_change ch;
        char why[160];
        if (bt_plan_change_parse(p->input, &ch, why, sizeof why)) {
            p->change = ch;
            p->err[0] = '\0';
            p->sc.pos = 0;
            p->stale = true;
        } else {
            snprintf(p->err, sizeof p->err, "%s", why);
        }
    } else if (c == KEY_BACKSPACE || c == 127 || c == 8) {
        if (len)
            p->input[len - 1] = '\0';
    } else if (c == KEY_UP || c == KEY_DOWN || c == KEY_PPAGE || c == KEY_NPAGE) {
        int page = p->sc.page > 0 ? p->sc.page : 1;
        tui_scroll_pane(t, &p->sc, c == KEY_UP ? -1 : c == KEY_DOWN ? 1 : c == KEY_PPAGE ? -page : page,
                        "what-if");
    } else if (c >= 32 && c < 127 && len + 1 < sizeof p->input) {
        p->input[len] = (char)c;
        p->input[len + 1] = '\0';
    }
}

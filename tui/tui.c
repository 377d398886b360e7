#include "tui/tui.h"

#include <curses.h>
#include <langinfo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "core/headroom.h"
#include "core/util.h"
#include "tui/graph.h"
#include "tui/keys.h"
#include "tui/layout.h"
#include "tui/theme.h"

enum color_mode { CM_MONO, CM_8, CM_256, CM_DIRECT };

enum sort_key { SORT_STATUS, SORT_HEADROOM, SORT_USED, SORT_THROTTLES, SORT_P99, SORT_INFLIGHT,
                SORT_NAME, SORT_CONFIG, SORT_COUNT };
static const struct {
    const char *name;
    enum bt_col col;
} sort_info[SORT_COUNT] = {
    [SORT_STATUS] = {"status", BT_COL_STATUS},     [SORT_HEADROOM] = {"headroom", BT_COL_HEADPCT},
    [SORT_USED] = {"used", BT_COL_BAR},            [SORT_THROTTLES] = {"throttles", BT_COL_THR},
    [SORT_P99] = {"p99", BT_COL_P99},              [SORT_INFLIGHT] = {"in-flight", BT_COL_INFL},
    [SORT_NAME] = {"name", BT_COL_NAME},           [SORT_CONFIG] = {"config", BT_COL_COUNT},
};

#define MAX_THEMES 32
#define MAX_WLINES 160

struct wline {
    char s[400];
    enum bt_role role;
    int lead;              /* the first lead bytes drawn in lead_role */
    enum bt_role lead_role;
};

struct bt_tui {
    struct bt_tui_host *host;
    SCREEN *scr;
    bool active;
    bool utf8;
    enum color_mode cm;
    bool color_allowed;
    struct bt_theme theme;
    char themes[MAX_THEMES][64];
    int nthemes, theme_idx;
    attr_t attr[BT_ROLE_COUNT];

    enum bt_view view;
    bool help;
    bool filtering;
    char filter[64];
    enum sort_key sort;
    bool sort_rev;
    int sel_route;         /* selected route index (config order), -1 none */
    int scroll;
    bool quit;
    char msg[160];
    /* a one-line prompt in the status bar: go to a time (replay), a marker's note (live) */
    enum { PR_NONE, PR_GOTO, PR_MARKER } prompt;
    char input[96];
    bool markers_open;     /* replay: the markers list overlay */
    int marker_sel;

    struct bt_eval *evals;
    uint64_t e_gen;        /* evals were computed for this store generation, */
    int64_t e_minute;      /* this minute */
    int e_n;               /* and this many routes */
    int *order;            /* visible routes, sorted */
    int nvis;

    /* what the screen shows now: redraw only when one of these changes */
    bool drawn;
    uint64_t d_gen;
    bool d_recfail;
    int64_t d_now, d_next_poll;
    int d_cols, d_rows;
    bool d_paused;
    double d_interval;
    unsigned state, d_state;
    unsigned d_rversion;
};

static bool g_curses_on;

/* ---------- small drawing helpers ---------- */

static attr_t A(const struct bt_tui *t, enum bt_role r)
{
    return t->attr[r];
}

/* Draws s (at most w columns): bytes outside printable ASCII become '?', so
 * outside text (route names, error strings) can never emit escape sequences. */
static int text(int y, int x, int w, const char *s, attr_t a)
{
    int n = 0;
    if (y < 0 || y >= LINES || x < 0)
        return 0;
    if (x + w > COLS)
        w = COLS - x;
    attrset(a);
    for (; s && s[n] && n < w; n++) {
        unsigned char c = (unsigned char)s[n];
        mvaddch(y, x + n, (c < 32 || c > 126) ? '?' : c);
    }
    attrset(A_NORMAL);
    return n;
}

static void fill(int y, int x, int w, attr_t a)
{
    if (y < 0 || y >= LINES)
        return;
    if (x + w > COLS)
        w = COLS - x;
    attrset(a);
    for (int i = 0; i < w; i++)
        mvaddch(y, x + i, ' ');
    attrset(A_NORMAL);
}

static void glyph(int y, int x, uint32_t cp, attr_t a)
{
    if (y < 0 || y >= LINES || x < 0 || x >= COLS)
        return;
    if (cp < 128) {
        attrset(a);
        mvaddch(y, x, cp ? (chtype)cp : ' ');
        attrset(A_NORMAL);
        return;
    }
    cchar_t cc;
    wchar_t w[2] = {(wchar_t)cp, 0};
    setcchar(&cc, w, a & ~A_COLOR, (short)PAIR_NUMBER(a), NULL);
    mvadd_wch(y, x, &cc);
}

static void rule(const struct bt_tui *t, int y, int x, int w, const char *title)
{
    uint32_t h = t->utf8 ? 0x2500 : '-';
    for (int i = 0; i < w; i++)
        glyph(y, x + i, h, A(t, BT_ROLE_RULE));
    if (title && *title && w > 4) {
        text(y, x + 1, 1, " ", A(t, BT_ROLE_TITLE));
        int n = text(y, x + 2, w - 4, title, A(t, BT_ROLE_TITLE));
        text(y, x + 2 + n, 1, " ", A(t, BT_ROLE_TITLE));
    }
}

static void blit(const struct bt_tui *t, const struct bt_canvas *cv, int y, int x)
{
    for (int cy = 0; cy < cv->h; cy++)
        for (int cx = 0; cx < cv->w; cx++) {
            const struct bt_cell *c = bt_canvas_get(cv, cx, cy);
            if (c->ch)
                glyph(y + cy, x + cx, c->ch, A(t, (enum bt_role)c->role));
        }
}

/* ---------- colors ---------- */

static const int ansi_rgb[16] = {0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd,
                                 0x00cdcd, 0xe5e5e5, 0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00,
                                 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff};

static int term_color(const struct bt_tui *t, int c)
{
    if (c == BT_COLOR_DEFAULT)
        return -1;
    switch (t->cm) {
    case CM_DIRECT:
        if (c & BT_COLOR_RGB)
            return c & 0xffffff;
        if (c < 16)
            return ansi_rgb[c];
        if (c < 232) {
            static const int cube[6] = {0, 95, 135, 175, 215, 255};
            int k = c - 16;
            return cube[k / 36] << 16 | cube[(k / 6) % 6] << 8 | cube[k % 6];
        }
        return (8 + (c - 232) * 10) * 0x010101;
    case CM_256:
        return bt_color_to_256(c);
    case CM_8: {
        int k = bt_color_to_8(c);
        return k;
    }
    default:
        return -1;
    }
}

static void apply_theme(struct bt_tui *t)
{
    for (int r = 0; r < BT_ROLE_COUNT; r++) {
        const struct bt_style *s = &t->theme.role[r];
        attr_t a = A_NORMAL;
        if (s->attrs & BT_ATTR_BOLD)
            a |= A_BOLD;
        if (s->attrs & BT_ATTR_DIM)
            a |= A_DIM;
        if (s->attrs & BT_ATTR_REVERSE)
            a |= A_REVERSE;
        if (s->attrs & BT_ATTR_UNDERLINE)
            a |= A_UNDERLINE;
        if (t->cm == CM_MONO) {
            /* without color a background is the only thing reverse video can say */
            if (s->bg != BT_COLOR_DEFAULT)
                a |= A_REVERSE;
        } else if (s->fg != BT_COLOR_DEFAULT || s->bg != BT_COLOR_DEFAULT) {
            int pair = r + 1;
            int fg = term_color(t, s->fg), bg = term_color(t, s->bg);
            if (t->cm == CM_DIRECT)
                init_extended_pair(pair, fg, bg);
            else
                init_pair((short)pair, (short)fg, (short)bg);
            a |= COLOR_PAIR(pair);
            /* 8-color terminals: bright names are bold of the base color */
            if (t->cm == CM_8 && s->fg >= 8 && s->fg < 16)
                a |= A_BOLD;
        }
        t->attr[r] = a;
    }
}

static void load_theme(struct bt_tui *t, const char *name)
{
    char err[400];
    if (!bt_theme_load(&t->theme, name, err, sizeof err)) {
        bt_theme_default(&t->theme);
        snprintf(t->msg, sizeof t->msg, "%s; using the default theme", err);
    }
}

/* ---------- evaluation, filter, sort ---------- */

static int sev_rank(enum bt_status s)
{
    switch (s) {
    case BT_ST_CRIT: return 4;
    case BT_ST_WARN: return 3;
    case BT_ST_UNKNOWN: return 2;
    default: return 1;
    }
}

static bool contains(const char *hay, const char *needle)
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
    if (contains(rt->name, t->filter) || contains(rt->model, t->filter) ||
        contains(rt->region, t->filter) || contains(bt_endpoint_name(rt->endpoint), t->filter) ||
        contains(bt_inference_name(rt->inference), t->filter) ||
        contains(bt_status_name(e->status), t->filter))
        return true;
    for (int w = 0; w < e->nwarn; w++)
        if (contains(bt_wcode_name(e->warnings[w].code), t->filter))
            return true;
    return false;
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

static int cmp_routes(const void *pa, const void *pb)
{
    const struct bt_tui *t = sort_ctx;
    int a = *(const int *)pa, b = *(const int *)pb;
    const struct bt_eval *ea = &t->evals[a], *eb = &t->evals[b];
    int c = 0;
    switch (t->sort) {
    case SORT_STATUS:
        c = sev_rank(eb->status) - sev_rank(ea->status);
        if (!c)
            c = cmp_num(ea->headroom_pct, eb->headroom_pct, false);
        break;
    case SORT_HEADROOM: c = cmp_num(ea->headroom_pct, eb->headroom_pct, false); break;
    case SORT_USED: c = cmp_num(ea->used, eb->used, true); break;
    case SORT_THROTTLES: c = cmp_num(ea->throttles, eb->throttles, true); break;
    case SORT_P99: c = cmp_num(ea->lat_p99, eb->lat_p99, true); break;
    case SORT_INFLIGHT: c = cmp_num(ea->in_flight, eb->in_flight, true); break;
    case SORT_NAME:
        c = strcmp(t->host->cfg->routes[a].name, t->host->cfg->routes[b].name);
        break;
    default: break;
    }
    if (t->sort_rev)
        c = -c;
    return c ? c : a - b;
}

static void evaluate(struct bt_tui *t)
{
    const struct bt_config *cfg = t->host->cfg;
    int n = cfg->nroutes;
    /* An evaluation depends on the store and the minute only: the clock ticking
     * each second redraws without evaluating every route again. */
    int64_t minute = bt_minute_floor(t->host->now);
    if (!t->evals || t->e_gen != t->host->store->generation || t->e_minute != minute ||
        t->e_n != n) {
        free(t->evals);
        t->evals = bt_xcalloc((size_t)n + 1, sizeof *t->evals);
        bt_eval_all(cfg, t->host->store, t->host->now, t->evals); /* quota groups together */
        t->e_gen = t->host->store->generation;
        t->e_minute = minute;
        t->e_n = n;
    }
    free(t->order);
    t->order = bt_xcalloc((size_t)n + 1, sizeof *t->order);
    t->nvis = 0;
    for (int r = 0; r < n; r++)
        if (matches(t, r))
            t->order[t->nvis++] = r;
    sort_ctx = t;
    qsort(t->order, (size_t)t->nvis, sizeof *t->order, cmp_routes);
    sort_ctx = NULL;
    bool found = false;
    for (int i = 0; i < t->nvis; i++)
        found |= t->order[i] == t->sel_route;
    if (!found)
        t->sel_route = t->nvis ? t->order[0] : -1;
}

static int sel_pos(const struct bt_tui *t)
{
    for (int i = 0; i < t->nvis; i++)
        if (t->order[i] == t->sel_route)
            return i;
    return 0;
}

/* ---------- formatting ---------- */

static void fmt_ms(double ms, char *o, size_t n)
{
    if (isnan(ms))
        snprintf(o, n, "-");
    else if (ms < 1000)
        snprintf(o, n, "%.0fms", ms);
    else if (ms < 10000)
        snprintf(o, n, "%.1fs", ms / 1000);
    else
        snprintf(o, n, "%.0fs", ms / 1000);
}

static void fmt_age(int64_t s, char *o, size_t n)
{
    if (s < 0)
        s = 0;
    /* ten-second steps: an idle screen over a slow link changes once in ten seconds */
    if (s < 10)
        snprintf(o, n, "<10s");
    else if (s < 120)
        snprintf(o, n, "%llds", (long long)(s / 10 * 10));
    else if (s < 7200)
        snprintf(o, n, "%lldm", (long long)(s / 60));
    else
        snprintf(o, n, "%lldh", (long long)(s / 3600));
}

static const char *status_label(enum bt_status s)
{
    switch (s) {
    case BT_ST_OK: return "OK";
    case BT_ST_WARN: return "WARN";
    case BT_ST_CRIT: return "CRIT";
    default: return "UNKN";
    }
}

static enum bt_role status_role(enum bt_status s)
{
    switch (s) {
    case BT_ST_OK: return BT_ROLE_OK;
    case BT_ST_WARN: return BT_ROLE_WARN;
    case BT_ST_CRIT: return BT_ROLE_CRIT;
    default: return BT_ROLE_UNKNOWN;
    }
}

static enum bt_role sev_role(enum bt_status s)
{
    return s == BT_ST_OK ? BT_ROLE_INFO : status_role(s);
}

static const char *sev_label(enum bt_status s)
{
    return s == BT_ST_OK ? "INFO" : status_label(s);
}

static const char *quota_src_short(enum bt_quota_source s)
{
    switch (s) {
    case BT_QS_SERVICE_QUOTAS: return "acct";
    case BT_QS_CONFIG: return "cfg";
    case BT_QS_DEFAULT: return "dflt";
    default: return "none";
    }
}

static bool route_has_estimate_only(const struct bt_eval *e)
{
    return bt_eval_has(e, BT_W_ESTIMATE_ONLY);
}

/* ---------- header, banner, status ---------- */

static void draw_header(struct bt_tui *t, const struct bt_layout *l)
{
    const struct bt_tui_host *h = t->host;
    fill(l->header.y, 0, l->cols, A(t, BT_ROLE_HEADER));
    char ts[32], line[256];
    bt_fmt_iso(h->now, ts, sizeof ts);
    int cnt[4] = {0};
    for (int i = 0; i < t->nvis; i++)
        cnt[t->evals[t->order[i]].status]++;
    snprintf(line, sizeof line, " bedtop  %s  %s  %d route%s", h->mode ? h->mode : "live", ts,
             t->nvis, t->nvis == 1 ? "" : "s");
    int x = text(l->header.y, 0, l->cols, line, A(t, BT_ROLE_HEADER));
    static const enum bt_status order[] = {BT_ST_CRIT, BT_ST_WARN, BT_ST_UNKNOWN, BT_ST_OK};
    bool first = true;
    for (size_t i = 0; i < BT_ARRAY_LEN(order); i++) {
        if (!cnt[order[i]])
            continue;
        char part[32];
        snprintf(part, sizeof part, "%d %s", cnt[order[i]], bt_status_name(order[i]));
        x += text(l->header.y, x, l->cols - x, first ? ": " : " ", A(t, BT_ROLE_HEADER));
        x += text(l->header.y, x, l->cols - x, part, A(t, status_role(order[i])));
        first = false;
    }
    if (t->filter[0]) {
        char f[96];
        snprintf(f, sizeof f, "  filter \"%s\"", t->filter);
        x += text(l->header.y, x, l->cols - x, f, A(t, BT_ROLE_HEADER));
    }
    const char *right = h->paused ? "PAUSED " : "";
    if (h->replay && h->replay->playing)
        right = "PLAYING ";
    int rw = (int)strlen(right);
    if (rw && l->cols - rw > x)
        text(l->header.y, l->cols - rw, rw, right, A(t, BT_ROLE_STALE));
}

static void draw_banner(struct bt_tui *t, const struct bt_layout *l, int only_route)
{
    if (!l->banner.h)
        return;
    char names[160] = "";
    int n = 0;
    for (int i = 0; i < t->nvis; i++) {
        int r = t->order[i];
        if ((only_route >= 0 && r != only_route) || !route_has_estimate_only(&t->evals[r]))
            continue;
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, "%s%s", n ? ", " : "",
                 t->host->cfg->routes[r].name);
        n++;
    }
    /* the longest wording that fits: the why matters as much as the what */
    static const char *const variants[] = {
        " ESTIMATE ONLY: %s. Headroom rests on EstimatedTPMQuotaUsage alone, which counts "
        "completed tokens; Bedrock throttles on input + max_tokens reservations it never sees. "
        "Set max_tokens or expose admission counters.",
        " ESTIMATE ONLY: %s. Headroom rests on EstimatedTPMQuotaUsage alone; Bedrock throttles "
        "on input + max_tokens reservations it never sees.",
        " ESTIMATE ONLY %s: EstimatedTPMQuotaUsage misses max_tokens reservations",
        " ESTIMATE ONLY %s: blind to max_tokens reservations",
        " ESTIMATE ONLY %s",
    };
    char line[512];
    for (size_t i = 0; i < BT_ARRAY_LEN(variants); i++) {
        snprintf(line, sizeof line, variants[i], names);
        if ((int)strlen(line) <= l->cols)
            break;
    }
    fill(l->banner.y, 0, l->cols, A(t, BT_ROLE_BANNER));
    text(l->banner.y, 0, l->cols, line, A(t, BT_ROLE_BANNER));
}

/* The right end of the status bar: a message answering the last key, else the hint. */
static void status_hint(struct bt_tui *t, const struct bt_layout *l, int x)
{
    int y = l->status.y;
    /* a message answers the key just pressed, so it may cover the right of the bar */
    const char *hint = t->msg[0] ? t->msg : "? help  q quit";
    int hw = (int)strlen(hint) + 2;
    if (t->msg[0] && hw > l->cols)
        hw = l->cols;
    if (t->msg[0] || l->cols - hw > x) {
        fill(y, l->cols - hw, hw, A(t, BT_ROLE_STATUS));
        text(y, l->cols - hw + 1, hw - 1, hint, A(t, t->msg[0] ? BT_ROLE_KEY : BT_ROLE_STATUS));
    }
}

/* Replay: the recorded time and speed instead of the poll schedule and cost. */
static void draw_replay_status(struct bt_tui *t, const struct bt_layout *l, int x)
{
    const struct bt_tui_host *h = t->host;
    const struct bt_tui_replay *rp = h->replay;
    int y = l->status.y;
    char part[160], hm[16];
    bt_fmt_hhmm(h->now, hm, sizeof hm);
    snprintf(part, sizeof part, " %s:%02d %s %gx |", hm, (int)(((h->now % 60) + 60) % 60),
             rp->playing ? "playing" : "paused", rp->speed);
    x += text(y, x, l->cols - x, part, A(t, BT_ROLE_STATUS));
    x += text(y, x, l->cols - x, " REPLAY", A(t, BT_ROLE_STATUS));
    if (rp->problem) {
        snprintf(part, sizeof part, " %s", rp->problem);
        x += text(y, x, l->cols - x, part, A(t, BT_ROLE_STALE));
    }
    if (rp->note) {
        snprintf(part, sizeof part, " %s", rp->note);
        x += text(y, x, l->cols - x, part, A(t, BT_ROLE_WARN));
    }
    status_hint(t, l, x);
}

static void draw_status(struct bt_tui *t, const struct bt_layout *l)
{
    const struct bt_tui_host *h = t->host;
    int y = l->status.y;
    fill(y, 0, l->cols, A(t, BT_ROLE_STATUS));
    if (t->filtering) {
        char line[128];
        snprintf(line, sizeof line, " filter: %s_   (Enter keeps, Esc clears)", t->filter);
        text(y, 0, l->cols, line, A(t, BT_ROLE_STATUS));
        return;
    }
    if (t->prompt != PR_NONE) {
        char line[192];
        if (t->prompt == PR_GOTO)
            snprintf(line, sizeof line, " go to: %s_   (14:32, -30m, +5m, ISO time; Enter goes, "
                     "Esc cancels)", t->input);
        else
            snprintf(line, sizeof line, " marker note: %s_   (Enter adds, Esc cancels)", t->input);
        text(y, 0, l->cols, line, A(t, BT_ROLE_STATUS));
        return;
    }
    int x = 0;
    static const struct {
        enum bt_source src;
        const char *tag;
    } srcs[] = {{BT_SRC_CLOUDWATCH, "CW"}, {BT_SRC_QUOTAS, "SQ"}, {BT_SRC_ADMISSION, "ADM"}};
    for (size_t s = 0; s < BT_ARRAY_LEN(srcs); s++) {
        int64_t last_ok = 0;
        int errors = 0, seen = 0;
        for (int r = 0; r < h->cfg->nroutes; r++) {
            const struct bt_source_status *st = bt_store_status_c(h->store, r, srcs[s].src);
            if (st->last_ok || st->last_error)
                seen++;
            if (st->last_ok > last_ok)
                last_ok = st->last_ok;
            if (st->last_error && st->last_error >= st->last_ok)
                errors++;
        }
        if (!seen)
            continue;
        char part[96], age[16];
        fmt_age(h->now - last_ok, age, sizeof age);
        if (last_ok)
            snprintf(part, sizeof part, " %s %s", srcs[s].tag, age);
        else
            snprintf(part, sizeof part, " %s never", srcs[s].tag);
        x += text(y, x, l->cols - x, part, A(t, BT_ROLE_STATUS));
        if (srcs[s].src == BT_SRC_CLOUDWATCH) {
            int64_t newest = 0;
            for (int r = 0; r < h->cfg->nroutes; r++)
                if (t->evals[r].minute > newest)
                    newest = t->evals[r].minute;
            if (newest) {
                fmt_age(h->now - (newest + 60), age, sizeof age);
                snprintf(part, sizeof part, " lag %s", age);
                x += text(y, x, l->cols - x, part, A(t, BT_ROLE_STATUS));
            }
        }
        if (errors) {
            snprintf(part, sizeof part, " STALE %d", errors);
            x += text(y, x, l->cols - x, part, A(t, BT_ROLE_STALE));
        }
        x += text(y, x, l->cols - x, " |", A(t, BT_ROLE_STATUS));
    }
    char part[128];
    if (h->replay) {
        draw_replay_status(t, l, x);
        return;
    }
    if (h->paused) {
        snprintf(part, sizeof part, " paused |");
    } else if (h->next_poll > 0) {
        char age[16];
        fmt_age(h->next_poll - h->now, age, sizeof age);
        snprintf(part, sizeof part, " next poll %s |", age);
    } else {
        snprintf(part, sizeof part, " next poll - |");
    }
    x += text(y, x, l->cols - x, part, A(t, BT_ROLE_STATUS));
    snprintf(part, sizeof part, " every %.0fs |", h->interval);
    x += text(y, x, l->cols - x, part, A(t, BT_ROLE_STATUS));
    char si[16];
    if (isnan(h->metrics_per_day)) {
        snprintf(part, sizeof part, " ? metrics/day |");
    } else {
        bt_fmt_si(h->metrics_per_day, si, sizeof si);
        if (isnan(h->metrics_per_min) || isnan(h->usd_per_day)) {
            snprintf(part, sizeof part, " %s metrics/day |", si);
        } else { /* measured: GetMetricData is billed per metric requested */
            char pm[16];
            bt_fmt_si(h->metrics_per_min, pm, sizeof pm);
            snprintf(part, sizeof part, " %s metrics/min %s/day $%.2f/day |", pm, si, h->usd_per_day);
        }
    }
    x += text(y, x, l->cols - x, part, A(t, BT_ROLE_STATUS));
    snprintf(part, sizeof part, " %s", h->mode ? h->mode : "live");
    x += text(y, x, l->cols - x, part, A(t, BT_ROLE_STATUS));
    if (h->recording) {
        snprintf(part, sizeof part, h->recording_failed ? " REC FAILED (lines dropped) %s" : " REC %s",
                 h->recording);
        x += text(y, x, l->cols - x, part, A(t, BT_ROLE_STALE));
    }
    status_hint(t, l, x);
}

/* ---------- overview ---------- */

static void cell_text(int y, const struct bt_layout *l, enum bt_col c, const char *s, attr_t a)
{
    int x, w;
    if (!bt_layout_has_col(l, c, &x, &w))
        return;
    int len = (int)strlen(s);
    if (bt_col_info[c].right && len < w)
        x += w - len;
    if (len > w && !bt_col_info[c].right && w > 1) {
        /* cut text shows it was cut */
        text(y, x, w - 1, s, a);
        text(y, x + w - 1, 1, "~", a);
        return;
    }
    text(y, x, w, s, a);
}

static void draw_row(struct bt_tui *t, const struct bt_layout *l, int y, int r, bool sel)
{
    const struct bt_route *rt = &t->host->cfg->routes[r];
    const struct bt_eval *e = &t->evals[r];
    attr_t base = sel ? A(t, BT_ROLE_SELECTED) : A(t, BT_ROLE_NORMAL);
    fill(y, 0, l->cols, base);
    char b[128];
    cell_text(y, l, BT_COL_NAME, rt->name, sel ? base : base | A_BOLD);
    cell_text(y, l, BT_COL_MODEL, rt->model, base);
    cell_text(y, l, BT_COL_REGION, rt->region, base);
    cell_text(y, l, BT_COL_EP, bt_endpoint_name(rt->endpoint), base);
    cell_text(y, l, BT_COL_INF, bt_inference_name(rt->inference), base);
    cell_text(y, l, BT_COL_STATUS, status_label(e->status), A(t, status_role(e->status)));
    if (isnan(e->headroom_pct))
        snprintf(b, sizeof b, "-");
    else
        snprintf(b, sizeof b, "%.1f", e->headroom_pct);
    cell_text(y, l, BT_COL_HEADPCT, b, A(t, status_role(e->status)));
    int bx, bw;
    if (bt_layout_has_col(l, BT_COL_BAR, &bx, &bw)) {
        struct bt_canvas cv;
        bt_canvas_init(&cv, bw, 1);
        /* core's figures follow the mantle side that binds: nothing to choose here;
         * the last segment is the whole quota group's use, so the bar matches HEAD% */
        double v[BT_SEG_COUNT] = {e->settled, e->estimated, e->group_used};
        double total = e->quota;
        static const unsigned char roles[BT_SEG_COUNT] = {BT_ROLE_SETTLED, BT_ROLE_ESTIMATED,
                                                          BT_ROLE_RESERVED};
        if (bt_graph_hbar(&cv, 0, 0, bw, v, total, roles, BT_ROLE_EMPTY, BT_ROLE_CRIT, t->utf8)) {
            blit(t, &cv, y, bx);
        } else {
            char used[16];
            bt_fmt_si(e->used, used, sizeof used);
            if (bw >= 24)
                snprintf(b, sizeof b, "%s used, no quota known", used);
            else
                snprintf(b, sizeof b, "no quota");
            cell_text(y, l, BT_COL_BAR, b, A(t, BT_ROLE_UNKNOWN));
        }
        bt_canvas_free(&cv);
    }
    bt_fmt_si(e->settled, b, sizeof b);
    cell_text(y, l, BT_COL_SETTLED, b, sel ? base : A(t, BT_ROLE_SETTLED));
    bt_fmt_si(e->estimated, b, sizeof b);
    cell_text(y, l, BT_COL_ESTIMATED, b, sel ? base : A(t, BT_ROLE_ESTIMATED));
    bt_fmt_si(e->held, b, sizeof b);
    cell_text(y, l, BT_COL_RESERVED, b, sel ? base : A(t, BT_ROLE_RESERVED));
    char q[16];
    bt_fmt_si(e->quota, q, sizeof q);
    if (isnan(e->quota))
        snprintf(b, sizeof b, "? none");
    else
        snprintf(b, sizeof b, "%s %s", q, quota_src_short(e->quota_source));
    enum bt_role qr = e->quota_source == BT_QS_SERVICE_QUOTAS ? BT_ROLE_NORMAL
                      : e->quota_source == BT_QS_UNKNOWN      ? BT_ROLE_UNKNOWN
                                                              : BT_ROLE_WARN;
    cell_text(y, l, BT_COL_QUOTA, b, qr == BT_ROLE_NORMAL ? base : A(t, qr));
    bt_fmt_si(e->invocations, b, sizeof b);
    cell_text(y, l, BT_COL_RPM, b, base);
    bt_fmt_si(e->throttles, b, sizeof b);
    cell_text(y, l, BT_COL_THR, b, e->throttles > 0 ? A(t, BT_ROLE_CRIT) : base);
    fmt_ms(e->lat_p50, b, sizeof b);
    cell_text(y, l, BT_COL_P50, b, base);
    fmt_ms(e->lat_p99, b, sizeof b);
    cell_text(y, l, BT_COL_P99, b, base);
    if (isnan(e->in_flight))
        snprintf(b, sizeof b, "-");
    else if (isnan(e->conc_limit))
        snprintf(b, sizeof b, "%.0f", e->in_flight);
    else
        snprintf(b, sizeof b, "%.0f/%.0f", e->in_flight, e->conc_limit);
    cell_text(y, l, BT_COL_INFL, b,
              e->in_flight > e->conc_limit ? A(t, BT_ROLE_WARN) : base);
    int wx, ww;
    if (bt_layout_has_col(l, BT_COL_WARN, &wx, &ww)) {
        /* worst first, so a cut list still shows what matters; " +N" counts the rest */
        char codes[256] = "";
        int shown = 0;
        for (int rank = 4; rank >= 1 && shown >= 0; rank--)
            for (int w = 0; w < e->nwarn; w++) {
                if (sev_rank(e->warnings[w].severity) != rank)
                    continue;
                const char *c = bt_wcode_name(e->warnings[w].code);
                size_t len = strlen(codes);
                int need = (int)(len + strlen(c)) + (shown ? 1 : 0) +
                           (shown + 1 < e->nwarn ? 3 : 0);
                if (shown && need > ww) {
                    snprintf(codes + len, sizeof codes - len, " +%d", e->nwarn - shown);
                    shown = -1;
                    break;
                }
                snprintf(codes + len, sizeof codes - len, "%s%s", shown ? " " : "", c);
                shown++;
            }
        cell_text(y, l, BT_COL_WARN, codes, e->nwarn ? A(t, sev_role(e->status)) : base);
    }
}

static void add_wline(struct wline *lines, int *n, enum bt_role role, const char *s, int lead,
                      enum bt_role lead_role)
{
    if (*n >= MAX_WLINES)
        return;
    struct wline *w = &lines[(*n)++];
    bt_strlcpy(w->s, s, sizeof w->s);
    w->role = role;
    w->lead = lead;
    w->lead_role = lead_role;
}

/* Word-wraps s at width w into lines indented by indent. */
static void wrap(struct wline *lines, int *n, const char *s, int w, int indent, enum bt_role role)
{
    int avail = w - indent;
    if (avail < 10)
        avail = 10;
    const char *p = s;
    while (*p) {
        int len = (int)strlen(p);
        int cut = len;
        if (len > avail) {
            cut = avail;
            while (cut > 0 && p[cut] != ' ')
                cut--;
            if (cut == 0)
                cut = avail;
        }
        char buf[400];
        snprintf(buf, sizeof buf, "%*s%.*s", indent, "", cut, p);
        add_wline(lines, n, role, buf, 0, role);
        p += cut;
        while (*p == ' ')
            p++;
    }
}

/* Overview: one line per warning over the visible routes, worst first. */
static int overview_warnings(struct bt_tui *t, struct wline *lines)
{
    int n = 0;
    for (int rank = 4; rank >= 1; rank--)
        for (int i = 0; i < t->nvis; i++) {
            int r = t->order[i];
            const struct bt_eval *e = &t->evals[r];
            for (int w = 0; w < e->nwarn; w++) {
                const struct bt_warning *wa = &e->warnings[w];
                if (sev_rank(wa->severity) != rank)
                    continue;
                char buf[400];
                snprintf(buf, sizeof buf, "%-4s %-11s %s: %s", sev_label(wa->severity),
                         t->host->cfg->routes[r].name, bt_wcode_name(wa->code), wa->message);
                add_wline(lines, &n, BT_ROLE_NORMAL, buf, 4, sev_role(wa->severity));
            }
        }
    return n;
}

static void draw_wlines(struct bt_tui *t, struct bt_rect area, const char *title,
                        const struct wline *lines, int n)
{
    if (area.h <= 0)
        return;
    rule(t, area.y, area.x, area.w, title);
    int rows = area.h - 1;
    for (int i = 0; i < n && i < rows; i++) {
        int y = area.y + 1 + i;
        if (i == rows - 1 && n > rows) {
            char more[96];
            if (t->view == BT_VIEW_DETAIL)
                snprintf(more, sizeof more, " ... %d more lines (a taller terminal shows "
                         "them)", n - rows + 1);
            else
                snprintf(more, sizeof more, " ... %d more (Enter on a route shows all of its "
                         "warnings)", n - rows + 1);
            text(y, area.x, area.w, more, A(t, BT_ROLE_DIM));
            break;
        }
        int x = area.x + 1;
        const struct wline *w = &lines[i];
        if (w->lead) {
            char lead[16];
            snprintf(lead, sizeof lead, "%.*s", w->lead, w->s);
            x += text(y, x, area.w - 1, lead, A(t, w->lead_role));
        }
        text(y, x, area.x + area.w - x, w->s + w->lead, A(t, w->role));
    }
}

static struct wline g_lines[MAX_WLINES];

/* The bar's glyphs explained in its own heading. */
static void bar_legend(const struct bt_tui *t, int y, int x, int w, attr_t a)
{
    static const char *const names[] = {"settled", "est", "used"};
    int end = x + w;
    for (int k = 0; k < BT_SEG_COUNT; k++) {
        glyph(y, x, bt_graph_seg_glyph((enum bt_seg)k, t->utf8), a);
        x += 1 + text(y, x + 1, end - x - 1, names[k], a) + 1;
    }
    text(y, x, end - x, "/quota", a);
}

static void draw_overview(struct bt_tui *t, const struct bt_layout *l, int nw)
{
    draw_header(t, l);
    draw_banner(t, l, -1);
    /* column headings, the sort column marked */
    int y = l->table.y;
    fill(y, 0, l->cols, A(t, BT_ROLE_COLHEAD));
    for (int i = 0; i < l->ncols; i++) {
        enum bt_col c = l->col[i];
        bool sorted = sort_info[t->sort].col == c;
        attr_t a = A(t, sorted ? BT_ROLE_SORT : BT_ROLE_COLHEAD);
        if (sorted)
            fill(y, l->col_x[c], l->col_w[c], a);
        if (c == BT_COL_BAR && l->col_w[c] >= 32)
            bar_legend(t, y, l->col_x[c], l->col_w[c], a);
        else
            cell_text(y, l, c, bt_col_info[c].title, a);
    }
    int rows = l->table.h - 1;
    int pos = sel_pos(t);
    if (pos < t->scroll)
        t->scroll = pos;
    if (rows > 0 && pos >= t->scroll + rows)
        t->scroll = pos - rows + 1;
    if (t->scroll > t->nvis - rows)
        t->scroll = t->nvis - rows > 0 ? t->nvis - rows : 0;
    for (int i = 0; i < rows; i++) {
        int k = t->scroll + i;
        if (k >= t->nvis) {
            if (t->nvis == 0 && i == 0)
                text(y + 1, 1, l->cols - 1,
                     t->filter[0] ? "no route matches the filter (Esc clears it)"
                                  : "no routes configured",
                     A(t, BT_ROLE_DIM));
            break;
        }
        draw_row(t, l, y + 1 + i, t->order[k], t->order[k] == t->sel_route);
    }
    char title[64];
    snprintf(title, sizeof title, "Warnings (%d)", nw);
    if (nw == 0)
        snprintf(title, sizeof title, "Warnings: none");
    draw_wlines(t, l->warnings, title, g_lines, nw);
    draw_status(t, l);
}

/* ---------- detail ---------- */

enum gkind { G_TOKENS, G_MANTLE_OUT, G_THROTTLES, G_LATENCY, G_INFLIGHT, G_OPPOINT };

static int detail_graphs(const struct bt_tui *t, int r, enum gkind *g)
{
    const struct bt_eval *e = &t->evals[r];
    const struct bt_store *st = t->host->store;
    int n = 0;
    g[n++] = G_TOKENS;
    if (e->mantle)
        g[n++] = G_MANTLE_OUT;
    else {
        g[n++] = G_THROTTLES;
        g[n++] = G_LATENCY;
    }
    int64_t am = bt_store_newest(st, r, BT_SIG_ADM_IN_FLIGHT, t->host->now);
    if (am || !isnan(e->in_flight))
        g[n++] = G_INFLIGHT;
    if (am && bt_store_newest(st, r, BT_SIG_ADM_COMPLETED, t->host->now))
        g[n++] = G_OPPOINT;
    return n;
}

/* A per-minute value of a derived series at minute m. */
enum skind { S_SETTLED, S_ESTIMATED, S_RESERVED, S_THROTTLES, S_P50, S_P99, S_INFLIGHT,
             S_COMPLETED, S_INPUT, S_OUTPUT };

static double series_at(const struct bt_tui *t, int r, enum skind k, int64_t m)
{
    const struct bt_store *st = t->host->store;
    struct bt_minute_fig f;
    switch (k) {
    case S_SETTLED:
    case S_ESTIMATED:
    case S_RESERVED:
        /* core computes each minute's figures (docs/headroom.md); S_RESERVED draws used */
        bt_minute_figures(t->host->cfg, st, r, m, &f);
        return k == S_SETTLED ? f.settled : k == S_ESTIMATED ? f.estimated : f.used;
    case S_THROTTLES: return bt_store_at(st, r, BT_SIG_THROTTLES, m);
    case S_P50: return bt_store_at(st, r, BT_SIG_LATENCY_P50, m);
    case S_P99: return bt_store_at(st, r, BT_SIG_LATENCY_P99, m);
    case S_INFLIGHT: return bt_store_at(st, r, BT_SIG_ADM_IN_FLIGHT, m);
    case S_COMPLETED: return bt_store_at(st, r, BT_SIG_ADM_COMPLETED, m);
    case S_INPUT: return bt_store_at(st, r, BT_SIG_INPUT_TOKENS, m);
    case S_OUTPUT: return bt_store_at(st, r, BT_SIG_OUTPUT_TOKENS, m);
    }
    return NAN;
}

static void fill_series(const struct bt_tui *t, int r, enum skind k, int64_t end, int n, double *v)
{
    for (int i = 0; i < n; i++)
        v[i] = series_at(t, r, k, end - (int64_t)(n - 1 - i) * 60);
}

/* Rounds an axis maximum up to two significant digits (350.8 -> 360). */
static double axis_max(double v)
{
    if (!(v > 0) || isinf(v))
        return 1;
    double step = pow(10, floor(log10(v)) - 1);
    return ceil(v / step - 1e-9) * step;
}

static double vmax(const double *v, int n, double m)
{
    for (int i = 0; i < n; i++)
        if (!isnan(v[i]) && v[i] > m)
            m = v[i];
    return m;
}

/* Draws "label value" legend items after a graph title; returns the new x. */
static int legend(const struct bt_tui *t, int y, int x, int xmax, enum bt_role role,
                  uint32_t g, const char *label)
{
    if (x + 3 + (int)strlen(label) >= xmax)
        return x;
    glyph(y, x, g, A(t, role));
    x += 1;
    x += text(y, x, xmax - x, label, A(t, BT_ROLE_TITLE));
    return x + 1;
}

/* Frame common to line/bar graphs: title rule, y labels, x axis; returns the plot area. */
static struct bt_rect graph_frame(const struct bt_tui *t, struct bt_rect a, const char *title,
                                  double ymax, int64_t start, int64_t end, bool time_axis)
{
    rule(t, a.y, a.x, a.w, title);
    struct bt_rect p = {a.x + 7, a.y + 1, a.w - 8, a.h - 2};
    ymax = axis_max(ymax);
    char lab[16];
    bt_fmt_si(ymax, lab, sizeof lab);
    text(p.y, a.x, 6, lab, A(t, BT_ROLE_AXIS));
    text(p.y + p.h - 1, a.x, 6, "0", A(t, BT_ROLE_AXIS));
    int ay = a.y + a.h - 1;
    if (time_axis) {
        char s1[16], s2[16];
        bt_fmt_hhmm(start, s1, sizeof s1);
        bt_fmt_hhmm(end, s2, sizeof s2);
        text(ay, p.x, 5, s1, A(t, BT_ROLE_AXIS));
        if (p.w > 12)
            text(ay, p.x + p.w - 5, 5, s2, A(t, BT_ROLE_AXIS));
    }
    return p;
}

static void draw_graph(struct bt_tui *t, int r, enum gkind g, struct bt_rect a)
{
    const struct bt_eval *e = &t->evals[r];
    int64_t end = e->minute ? e->minute : bt_minute_floor(t->host->now) - 120;
    if (g == G_INFLIGHT || g == G_OPPOINT)
        end = e->adm_minute ? bt_minute_floor(e->adm_minute) : end;
    int pw = a.w - 8;
    if (pw < 4 || a.h < 3)
        return;
    int npts = bt_graph_points(pw, t->utf8);
    if (npts > t->host->cfg->history_minutes)
        npts = t->host->cfg->history_minutes;
    if (npts < 1)
        npts = 1;
    int64_t start = end - (int64_t)(npts - 1) * 60;
    double *v1 = bt_xcalloc((size_t)npts, sizeof(double));
    double *v2 = bt_xcalloc((size_t)npts, sizeof(double));
    double *v3 = bt_xcalloc((size_t)npts, sizeof(double));
    struct bt_canvas cv;
    char title[160], s1[16], s2[16], s3[16];
    struct bt_rect p;
    uint32_t lg = t->utf8 ? 0x2501 : '*';
    switch (g) {
    case G_TOKENS: {
        double quota = e->mantle ? e->in_quota : e->quota;
        /* mantle: core's minute figures are the input side */
        fill_series(t, r, S_SETTLED, end, npts, v1);
        fill_series(t, r, S_ESTIMATED, end, npts, v2);
        fill_series(t, r, S_RESERVED, end, npts, v3);
        double ymax = vmax(v1, npts, vmax(v2, npts, vmax(v3, npts, isnan(quota) ? 1 : quota)));
        ymax = axis_max(ymax * 1.1);
        snprintf(title, sizeof title, e->mantle ? "input tokens/min" : "tokens/min");
        p = graph_frame(t, a, title, ymax, start, end, true);
        bt_canvas_init(&cv, p.w, p.h);
        struct bt_plot_series s[] = {
            {BT_SER_LEVEL, NULL, 0, quota, BT_ROLE_QUOTA, '-'},
            {BT_SER_LINE, v3, npts, 0, BT_ROLE_RESERVED, 'x'},
            {BT_SER_LINE, v2, npts, 0, BT_ROLE_ESTIMATED, '+'},
            {BT_SER_LINE, v1, npts, 0, BT_ROLE_SETTLED, '*'},
        };
        bt_graph_plot(&cv, 0, 0, p.w, p.h, s, 4, ymax, t->utf8);
        int x = a.x + 4 + (int)strlen(title) + 1, xm = a.x + a.w - 1;
        bt_fmt_si(e->mantle ? e->input_tokens : e->settled, s1, sizeof s1);
        bt_fmt_si(e->estimated, s2, sizeof s2);
        bt_fmt_si(e->mantle ? e->in_used : e->used, s3, sizeof s3);
        char lab[64];
        snprintf(lab, sizeof lab, "%s %s", e->mantle ? "input" : "settled", s1);
        x = legend(t, a.y, x, xm, BT_ROLE_SETTLED, t->utf8 ? lg : '*', lab);
        if (!e->mantle) {
            snprintf(lab, sizeof lab, "est %s", s2);
            x = legend(t, a.y, x, xm, BT_ROLE_ESTIMATED, t->utf8 ? lg : '+', lab);
        }
        snprintf(lab, sizeof lab, "used %s", s3);
        x = legend(t, a.y, x, xm, BT_ROLE_RESERVED, t->utf8 ? lg : 'x', lab);
        bt_fmt_si(quota, s1, sizeof s1);
        snprintf(lab, sizeof lab, "quota %s", s1);
        legend(t, a.y, x, xm, BT_ROLE_QUOTA, '-', lab);
        break;
    }
    case G_MANTLE_OUT: {
        fill_series(t, r, S_OUTPUT, end, npts, v1);
        double ymax = axis_max(vmax(v1, npts, isnan(e->out_quota) ? 1 : e->out_quota) * 1.1);
        bt_fmt_si(e->out_quota, s1, sizeof s1);
        bt_fmt_si(e->out_used, s2, sizeof s2);
        snprintf(title, sizeof title, "output tokens/min %s vs output quota %s", s2, s1);
        p = graph_frame(t, a, title, ymax, start, end, true);
        bt_canvas_init(&cv, p.w, p.h);
        struct bt_plot_series s[] = {
            {BT_SER_LEVEL, NULL, 0, e->out_quota, BT_ROLE_QUOTA, '-'},
            {BT_SER_LINE, v1, npts, 0, BT_ROLE_SETTLED, '*'},
        };
        bt_graph_plot(&cv, 0, 0, p.w, p.h, s, 2, ymax, t->utf8);
        break;
    }
    case G_THROTTLES: {
        int nb = pw < t->host->cfg->history_minutes ? pw : t->host->cfg->history_minutes;
        start = end - (int64_t)(nb - 1) * 60;
        fill_series(t, r, S_THROTTLES, end, nb, v1);
        double ymax = axis_max(vmax(v1, nb, 1));
        bt_fmt_si(e->throttles, s1, sizeof s1);
        snprintf(title, sizeof title, "throttles/min %s", s1);
        p = graph_frame(t, a, title, ymax, start, end, true);
        bt_canvas_init(&cv, p.w, p.h);
        bt_graph_bars(&cv, 0, 0, p.w, p.h, v1, nb, ymax, BT_ROLE_THROTTLE, t->utf8);
        break;
    }
    case G_LATENCY: {
        fill_series(t, r, S_P50, end, npts, v1);
        fill_series(t, r, S_P99, end, npts, v2);
        double ymax = axis_max(vmax(v2, npts, vmax(v1, npts, 1)) * 1.1);
        snprintf(title, sizeof title, "latency ms");
        p = graph_frame(t, a, title, ymax, start, end, true);
        bt_canvas_init(&cv, p.w, p.h);
        struct bt_plot_series s[] = {
            {BT_SER_LINE, v2, npts, 0, BT_ROLE_P99, '*'},
            {BT_SER_LINE, v1, npts, 0, BT_ROLE_P50, 'o'},
        };
        bt_graph_plot(&cv, 0, 0, p.w, p.h, s, 2, ymax, t->utf8);
        int x = a.x + 4 + (int)strlen(title) + 1, xm = a.x + a.w - 1;
        char lab[32];
        fmt_ms(e->lat_p50, s1, sizeof s1);
        snprintf(lab, sizeof lab, "p50 %s", s1);
        x = legend(t, a.y, x, xm, BT_ROLE_P50, t->utf8 ? lg : 'o', lab);
        fmt_ms(e->lat_p99, s1, sizeof s1);
        snprintf(lab, sizeof lab, "p99 %s", s1);
        legend(t, a.y, x, xm, BT_ROLE_P99, t->utf8 ? lg : '*', lab);
        break;
    }
    case G_INFLIGHT: {
        fill_series(t, r, S_INFLIGHT, end, npts, v1);
        double lim = e->conc_limit;
        double ymax = axis_max(vmax(v1, npts, isnan(lim) ? 1 : lim) * 1.2);
        bt_fmt_si(e->in_flight, s1, sizeof s1);
        bt_fmt_si(lim, s2, sizeof s2);
        snprintf(title, sizeof title, "in flight %s vs limit %s", s1, s2);
        p = graph_frame(t, a, title, ymax, start, end, true);
        bt_canvas_init(&cv, p.w, p.h);
        struct bt_plot_series s[] = {
            {BT_SER_LEVEL, NULL, 0, lim, BT_ROLE_LIMIT, '-'},
            {BT_SER_LINE, v1, npts, 0, BT_ROLE_INFLIGHT, '*'},
        };
        bt_graph_plot(&cv, 0, 0, p.w, p.h, s, 2, ymax, t->utf8);
        break;
    }
    case G_OPPOINT: {
        /* every minute of the history window: completions against calls in flight */
        int hist = t->host->cfg->history_minutes;
        double *xs = bt_xcalloc((size_t)hist + 1, sizeof(double));
        double *ys = bt_xcalloc((size_t)hist + 1, sizeof(double));
        int n = 0;
        double xmax = 1, ymx = 1;
        for (int i = 0; i < hist; i++) {
            int64_t m = end - (int64_t)i * 60;
            double x = series_at(t, r, S_INFLIGHT, m), yv = series_at(t, r, S_COMPLETED, m);
            if (isnan(x) || isnan(yv))
                continue;
            xs[n] = x;
            ys[n] = yv;
            n++;
            xmax = x > xmax ? x : xmax;
            ymx = yv > ymx ? yv : ymx;
        }
        /* knee: the least concurrency whose mean completions reach 95% of the best level */
        double best = 0, knee = NAN;
        int levels = (int)xmax + 1;
        double *sum = bt_xcalloc((size_t)levels + 1, sizeof(double));
        int *cnt = bt_xcalloc((size_t)levels + 1, sizeof(int));
        for (int i = 0; i < n; i++) {
            int k = (int)lround(xs[i]);
            if (k >= 0 && k <= levels) {
                sum[k] += ys[i];
                cnt[k]++;
            }
        }
        for (int k = 0; k <= levels; k++)
            if (cnt[k] && sum[k] / cnt[k] > best)
                best = sum[k] / cnt[k];
        for (int k = 0; k <= levels && isnan(knee); k++)
            if (cnt[k] && sum[k] / cnt[k] >= 0.95 * best)
                knee = k;
        bool plateau = !isnan(knee) && knee < (int)lround(xmax) - 1;
        if (plateau)
            snprintf(title, sizeof title, "operating point: completions/min vs in flight; "
                     "flat beyond %.0f in flight", knee);
        else
            snprintf(title, sizeof title, "operating point: completions/min vs in flight; "
                     "no plateau seen");
        xmax = axis_max(xmax * 1.1);
        ymx = axis_max(ymx * 1.15);
        p = graph_frame(t, a, title, ymx, 0, 0, false);
        char lab[32];
        bt_fmt_si(xmax, lab, sizeof lab);
        int ay = a.y + a.h - 1;
        text(ay, p.x, 1, "0", A(t, BT_ROLE_AXIS));
        if (p.w > 20) {
            char axis[48];
            snprintf(axis, sizeof axis, "in flight %s", lab);
            text(ay, p.x + p.w - (int)strlen(axis), (int)strlen(axis), axis, A(t, BT_ROLE_AXIS));
        }
        bt_canvas_init(&cv, p.w, p.h);
        bt_graph_scatter(&cv, 0, 0, p.w, p.h, xs, ys, n, xmax, ymx, BT_ROLE_SETTLED,
                         plateau ? knee : NAN, BT_ROLE_KNEE, t->utf8);
        free(sum);
        free(cnt);
        free(xs);
        free(ys);
        break;
    }
    default:
        free(v1);
        free(v2);
        free(v3);
        return;
    }
    blit(t, &cv, p.y, p.x);
    bt_canvas_free(&cv);
    free(v1);
    free(v2);
    free(v3);
}

static int detail_warnings(struct bt_tui *t, int r, int width, struct wline *lines)
{
    const struct bt_eval *e = &t->evals[r];
    int n = 0;
    if (e->stale && e->stale_reason[0]) {
        char buf[300];
        snprintf(buf, sizeof buf, "STALE data: %s", e->stale_reason);
        wrap(lines, &n, buf, width, 0, BT_ROLE_CRIT);
    }
    for (int rank = 4; rank >= 1; rank--)
        for (int w = 0; w < e->nwarn; w++) {
            const struct bt_warning *wa = &e->warnings[w];
            if (sev_rank(wa->severity) != rank)
                continue;
            char buf[400];
            snprintf(buf, sizeof buf, "%-4s %s: %s", sev_label(wa->severity),
                     bt_wcode_name(wa->code), bt_wcode_title(wa->code));
            add_wline(lines, &n, BT_ROLE_KEY, buf, 4, sev_role(wa->severity));
            wrap(lines, &n, wa->message, width, 5, BT_ROLE_NORMAL);
            snprintf(buf, sizeof buf, "-> %s", wa->action ? wa->action : bt_wcode_action(wa->code));
            wrap(lines, &n, buf, width, 5, BT_ROLE_INFO);
        }
    return n;
}

static void draw_detail(struct bt_tui *t, const struct bt_layout *l, int nw,
                        const enum gkind *gk)
{
    int r = t->sel_route;
    draw_header(t, l);
    draw_banner(t, l, r);
    const struct bt_route *rt = &t->host->cfg->routes[r];
    const struct bt_eval *e = &t->evals[r];
    char line[512], mt[16], q[16];
    int y = l->info.y;
    fill(y, 0, l->cols, A(t, BT_ROLE_NORMAL));
    int x = text(y, 1, l->cols - 1, rt->name, A(t, BT_ROLE_KEY)) + 2;
    x += text(y, x, 5, status_label(e->status), A(t, status_role(e->status))) + 1;
    if (rt->identity[0]) /* the AWS identity the route is polled as (never a key) */
        x += text(y, x, l->cols - x, rt->identity, A(t, BT_ROLE_STATUS)) + 2;
    bt_fmt_si(e->max_tokens, mt, sizeof mt);
    char meas[32] = "";
    if (!isnan(e->burndown_measured))
        snprintf(meas, sizeof meas, ", measured %.2f", e->burndown_measured);
    snprintf(line, sizeof line, "%s  %s  %s  %s  %s  max_tokens %s  burndown %g (%s%s)",
             rt->model, rt->region, bt_endpoint_name(rt->endpoint),
             bt_inference_name(rt->inference), rt->priority == BT_PRIO_OFFLINE ? "offline"
                                                                             : "online",
             mt, rt->burndown, rt->burndown_source ? rt->burndown_source : "default", meas);
    text(y, x, l->cols - x, line, A(t, BT_ROLE_NORMAL));
    char hd[16], used[16], fits[16];
    bt_fmt_si(e->headroom_tpm, hd, sizeof hd);
    bt_fmt_si(e->quota, q, sizeof q);
    bt_fmt_si(e->used, used, sizeof used);
    bt_fmt_si(e->fits_more, fits, sizeof fits);
    char pct[16], held[16], infl[16], res[16];
    bt_fmt_si(e->held, held, sizeof held);
    bt_fmt_si(e->reservation, res, sizeof res);
    if (isnan(e->in_flight))
        snprintf(infl, sizeof infl, "-");
    else
        snprintf(infl, sizeof infl, "%.2g", e->in_flight);
    if (isnan(e->headroom_pct))
        snprintf(pct, sizeof pct, "-");
    else
        snprintf(pct, sizeof pct, "%.1f%%", e->headroom_pct);
    /* every figure with its source (docs/headroom.md) */
    snprintf(line, sizeof line, " headroom %s of %s TPM (%s%s%s)  fits %s more in flight  used %s%s  "
             "held %s (%s)  in flight %s (%s)  R %s (%s)  quota: %s%s%s%s", hd, q, pct,
             e->mantle ? ", " : "", e->mantle ? bt_side_name(e->binding) : "", fits, used,
             e->upper_bound ? " (upper bound)" : "", held,
             e->held_source ? e->held_source : "-", infl,
             e->in_flight_source ? e->in_flight_source : "-", res,
             e->reservation_source ? e->reservation_source : "-",
             bt_quota_source_name(e->quota_source), e->quota_code[0] ? " " : "", e->quota_code,
             e->nshared ? " shared" : "");
    fill(y + 1, 0, l->cols, A(t, BT_ROLE_NORMAL));
    text(y + 1, 0, l->cols, line, A(t, status_role(e->status)));
    for (int i = 0; i < l->ngraphs; i++)
        draw_graph(t, r, gk[i], l->graph[i]);
    char title[96];
    snprintf(title, sizeof title, "Warnings for %s: what was seen, what to do", rt->name);
    if (nw == 0)
        snprintf(title, sizeof title, "No warnings for %s", rt->name);
    draw_wlines(t, l->warnings, title, g_lines, nw);
    draw_status(t, l);
}

/* ---------- replay: timeline and markers ---------- */

enum { TL_UNSCANNED, TL_QUIET, TL_EVENT, TL_MARKER };

/* Column of time v on a bar of w columns over [a, b]. */
static int tl_col(int64_t v, int64_t a, int64_t b, int w)
{
    if (b <= a || v <= a)
        return 0;
    if (v >= b)
        return w - 1;
    int c = (int)((double)(v - a) * w / (double)(b - a));
    return c >= w ? w - 1 : c;
}

/* One row: start time, the span scaled to the width with a mark for each minute
 * where a warning or throttling started and for each marker, the position, end time. */
static void draw_timeline(struct bt_tui *t, const struct bt_layout *l)
{
    const struct bt_tui_replay *rp = t->host->replay;
    struct bt_rect r = l->timeline;
    if (!rp || r.h < 1)
        return;
    fill(r.y, 0, r.w, A(t, BT_ROLE_NORMAL));
    char a[16], b[16];
    bt_fmt_hhmm(rp->start, a, sizeof a);
    bt_fmt_hhmm(rp->end, b, sizeof b);
    int x0 = 1 + (int)strlen(a) + 2, w = r.w - x0 - (int)strlen(b) - 3;
    text(r.y, 1, (int)strlen(a), a, A(t, BT_ROLE_AXIS));
    text(r.y, x0 + w + 2, (int)strlen(b), b, A(t, BT_ROLE_AXIS));
    if (w < 4)
        return;
    unsigned char *col = bt_xcalloc((size_t)w, 1);
    /* whole minutes, so a recording that ended a second later scales the same */
    int64_t t0 = bt_minute_floor(rp->start), t1 = bt_minute_floor(rp->end) + 60;
    int64_t span = t1 - t0;
    for (int c = 0; c < w; c++) {
        /* the minutes this column covers: not all scanned yet shows as such */
        int64_t ta = t0 + (int64_t)((double)span * c / w);
        int64_t tb = t0 + (int64_t)((double)span * (c + 1) / w) - 1;
        if (tb < ta)
            tb = ta;
        col[c] = TL_QUIET;
        if (!rp->minutes || !rp->nminutes) {
            col[c] = TL_UNSCANNED;
            continue;
        }
        for (int64_t m = bt_minute_floor(ta); m <= tb; m += 60) {
            int64_t k = (m - rp->minute0) / 60;
            if (k < 0 || (size_t)k >= rp->nminutes)
                continue;
            if (rp->minutes[k] == 0)
                col[c] = TL_UNSCANNED;
        }
    }
    /* one mark per minute where something started, at the minute's middle */
    for (size_t k = 0; rp->minutes && k < rp->nminutes; k++)
        if (rp->minutes[k] == 2)
            col[tl_col(rp->minute0 + (int64_t)k * 60 + 30, t0, t1, w)] = TL_EVENT;
    for (size_t i = 0; i < rp->nmarkers; i++)
        col[tl_col(rp->markers[i].t, t0, t1, w)] = TL_MARKER;
    int cur = tl_col(t->host->now, t0, t1, w);
    for (int c = 0; c < w; c++) {
        uint32_t g;
        enum bt_role role;
        switch (col[c]) {
        case TL_UNSCANNED: g = t->utf8 ? 0x00B7 : '.'; role = BT_ROLE_DIM; break;
        case TL_EVENT: g = '!'; role = BT_ROLE_WARN; break;
        case TL_MARKER: g = 'M'; role = BT_ROLE_KEY; break;
        default: g = t->utf8 ? 0x2500 : '-'; role = BT_ROLE_RULE; break;
        }
        if (c == cur) {
            g = t->utf8 ? 0x25C6 : '#';
            role = BT_ROLE_SELECTED;
        }
        glyph(r.y, x0 + c, g, A(t, role));
    }
    glyph(r.y, x0 - 1, t->utf8 ? 0x251C : '[', A(t, BT_ROLE_RULE));
    glyph(r.y, x0 + w, t->utf8 ? 0x2524 : ']', A(t, BT_ROLE_RULE));
    free(col);
}

/* A bordered box with a title, drawn over the other panes (help, markers). */
static void draw_box(const struct bt_tui *t, struct bt_rect h, const char *title, attr_t a)
{
    for (int y = 0; y < h.h; y++)
        fill(h.y + y, h.x, h.w, a);
    uint32_t hz = t->utf8 ? 0x2500 : '-', vt = t->utf8 ? 0x2502 : '|';
    uint32_t c[4] = {'+', '+', '+', '+'};
    if (t->utf8) {
        c[0] = 0x250C, c[1] = 0x2510, c[2] = 0x2514, c[3] = 0x2518;
    }
    for (int x = 1; x < h.w - 1; x++) {
        glyph(h.y, h.x + x, hz, a);
        glyph(h.y + h.h - 1, h.x + x, hz, a);
    }
    for (int y = 1; y < h.h - 1; y++) {
        glyph(h.y + y, h.x, vt, a);
        glyph(h.y + y, h.x + h.w - 1, vt, a);
    }
    glyph(h.y, h.x, c[0], a);
    glyph(h.y, h.x + h.w - 1, c[1], a);
    glyph(h.y + h.h - 1, h.x, c[2], a);
    glyph(h.y + h.h - 1, h.x + h.w - 1, c[3], a);
    text(h.y, h.x + 2, h.w - 4, title, a | A_BOLD);
}

/* The recording's markers, one a line, the selected one highlighted. */
static void draw_markers(struct bt_tui *t, const struct bt_layout *l)
{
    const struct bt_tui_replay *rp = t->host->replay;
    int n = (int)rp->nmarkers;
    int w = l->cols - 2 < 76 ? l->cols - 2 : 76;
    int rows = l->rows - 4;
    int hh = (n ? n : 1) + 2;
    if (hh > rows + 2)
        hh = rows + 2;
    struct bt_rect h = {(l->cols - w) / 2, (l->rows - hh) / 2, w, hh};
    if (h.w < 10 || h.h < 3)
        return;
    attr_t a = A(t, BT_ROLE_HELP);
    draw_box(t, h, " markers (Enter jumps, Esc closes) ", a);
    if (!n) {
        text(h.y + 1, h.x + 2, h.w - 4, "no markers in this recording", a);
        return;
    }
    int vis = h.h - 2;
    if (t->marker_sel >= n)
        t->marker_sel = n - 1;
    int first = t->marker_sel >= vis ? t->marker_sel - vis + 1 : 0;
    for (int i = 0; i < vis && first + i < n; i++) {
        int k = first + i;
        char line[300], ts[32];
        bt_fmt_iso(rp->markers[k].t, ts, sizeof ts);
        snprintf(line, sizeof line, "%s  %s", ts, rp->markers[k].text ? rp->markers[k].text : "");
        attr_t la = k == t->marker_sel ? A(t, BT_ROLE_SELECTED) : a;
        fill(h.y + 1 + i, h.x + 1, h.w - 2, la);
        text(h.y + 1 + i, h.x + 2, h.w - 4, line, la);
    }
}

/* ---------- help, too small ---------- */

static void draw_help(struct bt_tui *t, const struct bt_layout *l)
{
    struct bt_rect h = l->help;
    if (h.w < 10 || h.h < 3)
        return;
    char lines[64][96];
    int n = bt_keys_help_mode(lines, 64, t->host->replay ? BT_CTX_REPLAY : BT_CTX_LIVE);
    attr_t a = A(t, BT_ROLE_HELP);
    draw_box(t, h, t->host->replay ? " bedtop replay keys (Esc or ? closes) "
                                   : " bedtop keys (Esc or ? closes) ", a);
    for (int i = 0; i < n && i < h.h - 2; i++) {
        int y = h.y + 1 + i;
        if (i == h.h - 3 && n > h.h - 2) {
            text(y, h.x + 2, h.w - 4, "... (a taller terminal shows every key)", a);
            break;
        }
        text(y, h.x + 2, 13, lines[i], A(t, BT_ROLE_KEY));
        text(y, h.x + 16, h.w - 17, lines[i] + 14, a);
    }
}

static void draw_too_small(struct bt_tui *t, int cols, int rows)
{
    char l1[64], l2[64];
    snprintf(l1, sizeof l1, "need %dx%d", BT_LAYOUT_MIN_COLS, BT_LAYOUT_MIN_ROWS);
    snprintf(l2, sizeof l2, "have %dx%d", cols, rows);
    const char *lines[] = {"terminal too small:", l1, l2};
    int y0 = rows / 2 - 1;
    if (y0 < 0)
        y0 = 0;
    for (int i = 0; i < 3; i++) {
        int len = (int)strlen(lines[i]);
        int x = (cols - len) / 2;
        if (x < 0)
            x = 0;
        text(y0 + i, x, cols - x, lines[i], A(t, i == 0 ? BT_ROLE_WARN : BT_ROLE_NORMAL));
    }
}

static void draw(struct bt_tui *t)
{
    evaluate(t);
    erase();
    int cols = COLS, rows = LINES;
    struct bt_layout_opts lo = {.view = t->view, .nroutes = t->nvis};
    enum gkind gk[BT_LAYOUT_MAX_GRAPHS];
    char help[64][96];
    lo.help = t->help;
    lo.help_lines = bt_keys_help_mode(help, 64, t->host->replay ? BT_CTX_REPLAY : BT_CTX_LIVE);
    lo.timeline = t->host->replay != NULL;
    if (t->view == BT_VIEW_DETAIL && t->sel_route < 0)
        t->view = BT_VIEW_OVERVIEW;
    lo.view = t->view;
    int nw;
    if (t->view == BT_VIEW_DETAIL) {
        lo.banner = route_has_estimate_only(&t->evals[t->sel_route]);
        nw = detail_warnings(t, t->sel_route, cols - 2, g_lines);
        lo.ngraphs = detail_graphs(t, t->sel_route, gk);
    } else {
        for (int i = 0; i < t->nvis; i++)
            lo.banner |= route_has_estimate_only(&t->evals[t->order[i]]);
        nw = overview_warnings(t, g_lines);
    }
    lo.nwarn_lines = nw;
    struct bt_layout l;
    bt_layout_compute(cols, rows, &lo, &l);
    if (l.too_small)
        draw_too_small(t, cols, rows);
    else if (t->view == BT_VIEW_DETAIL)
        draw_detail(t, &l, nw, gk);
    else
        draw_overview(t, &l, nw);
    if (!l.too_small)
        draw_timeline(t, &l);
    if (!l.too_small && t->markers_open && t->host->replay)
        draw_markers(t, &l);
    if (!l.too_small && t->help)
        draw_help(t, &l);
    wnoutrefresh(stdscr);
    doupdate();
}

/* ---------- input ---------- */

static void move_sel(struct bt_tui *t, int delta)
{
    if (!t->nvis)
        return;
    int pos = sel_pos(t) + delta;
    if (pos < 0)
        pos = 0;
    if (pos >= t->nvis)
        pos = t->nvis - 1;
    t->sel_route = t->order[pos];
}

static const double intervals[] = {5, 10, 15, 30, 60, 120, 300, 600};

static void step_interval(struct bt_tui *t, int dir)
{
    struct bt_tui_host *h = t->host;
    double cur = h->interval, next = cur;
    int n = (int)BT_ARRAY_LEN(intervals);
    if (dir > 0) {
        for (int i = 0; i < n; i++)
            if (intervals[i] > cur) {
                next = intervals[i];
                break;
            }
    } else {
        for (int i = n - 1; i >= 0; i--)
            if (intervals[i] < cur) {
                next = intervals[i];
                break;
            }
    }
    if (next != cur && h->set_interval)
        h->set_interval(h->arg, next);
    snprintf(t->msg, sizeof t->msg, "interval %.0fs", next);
}

static const double speeds[] = {1, 2, 5, 10, 30, 100, 300, 1000};

static void step_speed(struct bt_tui *t, int dir)
{
    struct bt_tui_replay *rp = t->host->replay;
    int n = (int)BT_ARRAY_LEN(speeds), k = 0;
    for (int i = 0; i < n; i++)
        if (speeds[i] <= rp->speed)
            k = i;
    k += dir;
    k = k < 0 ? 0 : k >= n ? n - 1 : k;
    rp->set_speed(rp->arg, speeds[k]);
    snprintf(t->msg, sizeof t->msg, "speed %gx", speeds[k]);
}

static void replay_seek(struct bt_tui *t, int64_t to)
{
    struct bt_tui_replay *rp = t->host->replay;
    if (to < rp->start)
        to = rp->start;
    if (to > rp->end)
        to = rp->end;
    rp->seek(rp->arg, to);
}

/* One poll forward or back from the current time; stepping pauses. */
static void step_poll(struct bt_tui *t, int dir)
{
    struct bt_tui_replay *rp = t->host->replay;
    int64_t now = t->host->now, to = 0;
    if (rp->playing)
        rp->set_playing(rp->arg, false);
    if (dir > 0) {
        for (size_t i = 0; i < rp->npolls && !to; i++)
            if (rp->polls[i] > now)
                to = rp->polls[i];
    } else {
        for (size_t i = rp->npolls; i > 0 && !to; i--)
            if (rp->polls[i - 1] < now)
                to = rp->polls[i - 1];
    }
    if (!to) {
        snprintf(t->msg, sizeof t->msg, dir > 0 ? "at the last poll" : "at the first poll");
        return;
    }
    replay_seek(t, to);
}

static void find_event(struct bt_tui *t, int dir)
{
    struct bt_tui_replay *rp = t->host->replay;
    char what[120] = "";
    int64_t to = rp->find(rp->arg, t->host->now, dir, what, sizeof what);
    if (!to) {
        snprintf(t->msg, sizeof t->msg, "no %s warning or throttle", dir > 0 ? "later" : "earlier");
        return;
    }
    replay_seek(t, to);
    snprintf(t->msg, sizeof t->msg, "%s", what);
}

/* Replay's own actions; false when a is not one. */
static bool act_replay(struct bt_tui *t, enum bt_action a)
{
    struct bt_tui_replay *rp = t->host->replay;
    if (!rp)
        return false;
    switch (a) {
    case BT_ACT_PLAY: rp->set_playing(rp->arg, !rp->playing); break;
    case BT_ACT_STEP_FWD: step_poll(t, 1); break;
    case BT_ACT_STEP_BACK: step_poll(t, -1); break;
    case BT_ACT_SPEED_UP: step_speed(t, 1); break;
    case BT_ACT_SPEED_DOWN: step_speed(t, -1); break;
    case BT_ACT_GOTO:
        t->prompt = PR_GOTO;
        t->input[0] = '\0';
        break;
    case BT_ACT_NEXT_EVENT: find_event(t, 1); break;
    case BT_ACT_PREV_EVENT: find_event(t, -1); break;
    case BT_ACT_REPLAY_START: replay_seek(t, rp->start); break;
    case BT_ACT_REPLAY_END: replay_seek(t, rp->end); break;
    case BT_ACT_MARKERS:
        t->markers_open = true;
        /* the marker at or before the current time is the likely one wanted */
        t->marker_sel = 0;
        for (size_t i = 0; i < rp->nmarkers; i++)
            if (rp->markers[i].t <= t->host->now)
                t->marker_sel = (int)i;
        break;
    default: return false;
    }
    return true;
}

static void act(struct bt_tui *t, enum bt_action a)
{
    if (act_replay(t, a))
        return;
    struct bt_tui_host *h = t->host;
    int page = LINES > 6 ? LINES - 6 : 1;
    switch (a) {
    case BT_ACT_QUIT: t->quit = true; break;
    case BT_ACT_BACK:
        if (t->help)
            t->help = false;
        else if (t->view == BT_VIEW_DETAIL)
            t->view = BT_VIEW_OVERVIEW;
        else
            t->filter[0] = '\0';
        break;
    case BT_ACT_HELP: t->help = !t->help; break;
    case BT_ACT_UP: move_sel(t, -1); break;
    case BT_ACT_DOWN: move_sel(t, 1); break;
    case BT_ACT_PGUP: move_sel(t, -page); break;
    case BT_ACT_PGDN: move_sel(t, page); break;
    case BT_ACT_HOME: move_sel(t, -t->nvis); break;
    case BT_ACT_END: move_sel(t, t->nvis); break;
    case BT_ACT_OPEN:
        if (t->sel_route >= 0)
            t->view = BT_VIEW_DETAIL;
        break;
    case BT_ACT_PREV_ROUTE: move_sel(t, -1); break;
    case BT_ACT_NEXT_ROUTE: move_sel(t, 1); break;
    case BT_ACT_SORT_NEXT:
        t->sort = (enum sort_key)((t->sort + 1) % SORT_COUNT);
        snprintf(t->msg, sizeof t->msg, "sort by %s", sort_info[t->sort].name);
        break;
    case BT_ACT_SORT_PREV:
        t->sort = (enum sort_key)((t->sort + SORT_COUNT - 1) % SORT_COUNT);
        snprintf(t->msg, sizeof t->msg, "sort by %s", sort_info[t->sort].name);
        break;
    case BT_ACT_SORT_REVERSE:
        t->sort_rev = !t->sort_rev;
        snprintf(t->msg, sizeof t->msg, "sort by %s%s", sort_info[t->sort].name,
                 t->sort_rev ? " (inverted)" : "");
        break;
    case BT_ACT_FILTER: t->filtering = true; break;
    case BT_ACT_PAUSE:
        if (h->set_paused)
            h->set_paused(h->arg, !h->paused);
        else
            h->paused = !h->paused;
        break;
    case BT_ACT_SLOWER: step_interval(t, 1); break;
    case BT_ACT_FASTER: step_interval(t, -1); break;
    case BT_ACT_THEME:
        t->nthemes = bt_theme_list(t->themes, MAX_THEMES);
        if (t->nthemes > 0) {
            int cur = 0;
            for (int i = 0; i < t->nthemes; i++)
                if (!strcmp(t->themes[i], t->theme.name))
                    cur = i;
            t->theme_idx = (cur + 1) % t->nthemes;
            t->msg[0] = '\0';
            load_theme(t, t->themes[t->theme_idx]);
            apply_theme(t);
            if (!t->msg[0])
                snprintf(t->msg, sizeof t->msg, "theme %s", t->theme.name);
        }
        break;
    case BT_ACT_REFRESH:
        if (h->refresh_now)
            h->refresh_now(h->arg);
        snprintf(t->msg, sizeof t->msg, "refreshing");
        break;
    case BT_ACT_MARKER:
        if (h->add_marker && h->recording) {
            t->prompt = PR_MARKER;
            t->input[0] = '\0';
        } else {
            snprintf(t->msg, sizeof t->msg, "markers need --record FILE");
        }
        break;
    case BT_ACT_REDRAW: clearok(curscr, TRUE); break;
    default: break;
    }
}

static void filter_key(struct bt_tui *t, int c)
{
    size_t len = strlen(t->filter);
    if (c == 27) {
        t->filter[0] = '\0';
        t->filtering = false;
    } else if (c == '\n' || c == '\r' || c == KEY_ENTER) {
        t->filtering = false;
    } else if (c == KEY_BACKSPACE || c == 127 || c == 8) {
        if (len)
            t->filter[len - 1] = '\0';
    } else if (c >= 32 && c < 127 && len + 1 < sizeof t->filter) {
        t->filter[len] = (char)c;
        t->filter[len + 1] = '\0';
    }
}

/* Enter on the prompt: go to the time typed, or write the marker. */
static void prompt_done(struct bt_tui *t)
{
    struct bt_tui_host *h = t->host;
    int kind = t->prompt;
    t->prompt = PR_NONE;
    if (kind == PR_MARKER) {
        const char *note = t->input[0] ? t->input : "marker";
        h->add_marker(h->arg, note);
        snprintf(t->msg, sizeof t->msg, "marker added: %.60s", note);
        return;
    }
    struct bt_tui_replay *rp = h->replay;
    int64_t to;
    if (!t->input[0])
        return;
    if (!rp->parse_time(rp->arg, t->input, h->now, &to)) {
        snprintf(t->msg, sizeof t->msg, "'%.40s' is not a time (14:32, -30m, +5m, ISO)", t->input);
        return;
    }
    if (to < rp->start || to > rp->end)
        snprintf(t->msg, sizeof t->msg, "%.40s is outside the recording: at its %s", t->input,
                 to < rp->start ? "start" : "end");
    replay_seek(t, to);
}

static void prompt_key(struct bt_tui *t, int c)
{
    size_t len = strlen(t->input);
    if (c == 27) {
        t->prompt = PR_NONE;
    } else if (c == '\n' || c == '\r' || c == KEY_ENTER) {
        prompt_done(t);
    } else if (c == KEY_BACKSPACE || c == 127 || c == 8) {
        if (len)
            t->input[len - 1] = '\0';
    } else if (c >= 32 && c < 127 && len + 1 < sizeof t->input) {
        t->input[len] = (char)c;
        t->input[len + 1] = '\0';
    }
}

/* The markers overlay: move, Enter jumps to the selected marker, Esc closes. */
static void markers_key(struct bt_tui *t, int c)
{
    struct bt_tui_replay *rp = t->host->replay;
    int n = (int)rp->nmarkers;
    if (c == KEY_UP || c == 'k') {
        if (t->marker_sel > 0)
            t->marker_sel--;
    } else if (c == KEY_DOWN || c == 'j') {
        if (t->marker_sel + 1 < n)
            t->marker_sel++;
    } else if (c == '\n' || c == '\r' || c == KEY_ENTER) {
        t->markers_open = false;
        if (n) {
            const struct bt_tui_marker *m = &rp->markers[t->marker_sel];
            replay_seek(t, m->t);
            snprintf(t->msg, sizeof t->msg, "marker: %.100s", m->text ? m->text : "");
        }
    } else if (c == 27 || c == 'M' || c == 'm') {
        t->markers_open = false;
    } else if (c == 'q') {
        t->quit = true;
    }
}

void bt_tui_input(struct bt_tui *t)
{
    if (!t || !t->active)
        return;
    int c;
    for (int guard = 0; guard < 4096; guard++) {
        c = getch();
        if (c == ERR)
            break;
        t->state++;
        if (c == KEY_RESIZE)
            continue;
        if (t->msg[0])
            t->msg[0] = '\0';
        if (t->filtering) {
            filter_key(t, c);
            continue;
        }
        if (t->prompt != PR_NONE) {
            prompt_key(t, c);
            continue;
        }
        if (t->markers_open && t->host->replay) {
            markers_key(t, c);
            if (t->quit)
                break;
            continue;
        }
        unsigned ctx = t->help ? BT_CTX_HELP
                       : t->view == BT_VIEW_DETAIL ? BT_CTX_DETAIL : BT_CTX_OVERVIEW;
        if (t->host->replay)
            ctx <<= 3; /* the replay's contexts sit three bits up (tui/keys.h) */
        act(t, bt_key_action(c, ctx));
        if (t->quit)
            break;
    }
}

/* ---------- lifecycle ---------- */

struct bt_tui *bt_tui_new(const struct bt_tui_opts *o, struct bt_tui_host *host, char *err,
                          size_t errlen)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        snprintf(err, errlen, "the dashboard needs a terminal (try `bedtop check`)");
        return NULL;
    }
    struct bt_tui *t = bt_xcalloc(1, sizeof *t);
    t->host = host;
    t->sel_route = -1;
    const char *cs = nl_langinfo(CODESET);
    t->utf8 = !o->ascii && cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8"));
    const char *nc = getenv("NO_COLOR");
    t->color_allowed = !o->no_color && !(nc && *nc);
    const char *theme = o->theme && *o->theme ? o->theme
                        : host->cfg->theme[0] ? host->cfg->theme : "default";
    load_theme(t, theme);
    t->scr = newterm(NULL, stdout, stdin);
    if (!t->scr) {
        const char *term = getenv("TERM");
        snprintf(err, errlen, "cannot initialise the terminal (TERM=%s)", term ? term : "unset");
        free(t);
        return NULL;
    }
    set_term(t->scr);
    t->active = true;
    g_curses_on = true;
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    leaveok(stdscr, TRUE);
    t->cm = CM_MONO;
    if (t->color_allowed && has_colors()) {
        start_color();
        use_default_colors();
        if (COLORS >= 0x1000000)
            t->cm = CM_DIRECT;
        else if (COLORS >= 256)
            t->cm = CM_256;
        else if (COLORS >= 8)
            t->cm = CM_8;
        if (COLOR_PAIRS < BT_ROLE_COUNT + 1)
            t->cm = CM_MONO;
    }
    apply_theme(t);
    return t;
}

void bt_tui_update(struct bt_tui *t)
{
    if (!t || !t->active)
        return;
    const struct bt_tui_host *h = t->host;
    if (t->drawn && t->d_gen == h->store->generation && t->d_now == h->now &&
        t->d_next_poll == h->next_poll && t->d_cols == COLS && t->d_rows == LINES &&
        t->d_paused == h->paused && t->d_interval == h->interval && t->d_state == t->state &&
        t->d_recfail == h->recording_failed &&
        (!h->replay || t->d_rversion == h->replay->version))
        return;
    draw(t);
    t->drawn = true;
    t->d_gen = h->store->generation;
    t->d_now = h->now;
    t->d_next_poll = h->next_poll;
    t->d_cols = COLS;
    t->d_rows = LINES;
    t->d_paused = h->paused;
    t->d_interval = h->interval;
    t->d_state = t->state;
    t->d_recfail = h->recording_failed;
    t->d_rversion = h->replay ? h->replay->version : 0;
}

void bt_tui_resize(struct bt_tui *t)
{
    if (!t || !t->active)
        return;
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0)
        resize_term(ws.ws_row, ws.ws_col);
    t->state++;
}

bool bt_tui_quit(const struct bt_tui *t)
{
    return t && t->quit;
}

int bt_tui_next_wakeup_ms(const struct bt_tui *t)
{
    if (!t || !t->active)
        return -1;
    const struct bt_tui_replay *rp = t->host->replay;
    if (rp) {
        if (!rp->playing)
            return -1;
        /* one redraw per recorded second, at most ten a second at high speed */
        int ms = rp->speed > 0 ? (int)(1000 / rp->speed) : 1000;
        return ms < 100 ? 100 : ms;
    }
    if (t->host->paused)
        return -1;
    /* the status bar counts seconds: wake at the next wall-clock second */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return 1000 - (int)(ts.tv_nsec / 1000000);
}

void bt_tui_free(struct bt_tui *t)
{
    if (!t)
        return;
    if (t->active && g_curses_on) {
        endwin();
        g_curses_on = false;
    }
    if (t->scr)
        delscreen(t->scr);
    free(t->evals);
    free(t->order);
    free(t);
}

void bt_tui_emergency_restore(void)
{
    if (g_curses_on) {
        g_curses_on = false;
        endwin();
    }
}

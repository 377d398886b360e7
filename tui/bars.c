/* The header, the ESTIMATE ONLY banner and the status bar. */
#include "tui/view.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dataminute.h"
#include "core/format.h"
#include "core/util.h"
#include "tui/keys.h"

/* The one clock (core/dataminute.h): the data minute on screen, and beside it the
 * clock it is seen at, "data 10:13 · now 10:16" (replay: the recorded instant,
 * "seen"); full: the data minute in ISO 8601 and the clock to the second. */
void tui_clock_label(const struct bt_tui *t, bool full, char *out, size_t n)
{
    const struct bt_tui_host *h = t->host;
    int64_t m = bt_data_minute(h->cfg, h->now);
    char dm[32], now[32];
    const char *sep = t->utf8 ? " \xc2\xb7 " : ", ";
    if (full) {
        bt_fmt_iso(m, dm, sizeof dm);
        bt_fmt_hhmm(h->now, now, sizeof now);
        snprintf(now + strlen(now), sizeof now - strlen(now), ":%02d", (int)(((h->now % 60) + 60) % 60));
    } else {
        bt_fmt_hhmm(m, dm, sizeof dm);
        bt_fmt_hhmm(h->now, now, sizeof now);
    }
    snprintf(out, n, "data %s%s%s %s", dm, sep, h->replay ? "seen" : "now", now);
}

/* The header: mode, the moment shown, routes, then the crit/warn counts (kept at every
 * width: the identity parts shorten first), filter; at the right REC (always while
 * recording) and PAUSED/PLAYING. */
void tui_draw_header(struct bt_tui *t, const struct bt_layout *l)
{
    const struct bt_tui_host *h = t->host;
    tui_fill(l->header.y, 0, l->cols, A(t, BT_ROLE_HEADER));
    char ts[80], hm[48], dm[24], line[256];
    tui_clock_label(t, true, ts, sizeof ts);
    tui_clock_label(t, false, hm, sizeof hm);
    /* where even that is too long: the data minute alone (the status bar and the
     * terminal have the clock) */
    char dhm[8];
    bt_fmt_hhmm(bt_data_minute(h->cfg, h->now), dhm, sizeof dhm);
    snprintf(dm, sizeof dm, "data %s", dhm);
    /* the counts are of every route, filtered or not: a filter narrows the rows, it does
     * not rewrite the status ("13 routes: 2 crit ... · 2 shown") */
    int cnt[4] = {0}, nall = h->cfg->nroutes;
    for (int r = 0; r < nall; r++)
        cnt[bt_eval_status(&t->evals[r])]++;
    static const enum bt_status order[] = {BT_ST_CRIT, BT_ST_WARN, BT_ST_UNKNOWN, BT_ST_OK};
    char counts[96] = "";
    for (size_t i = 0; i < BT_ARRAY_LEN(order); i++) {
        if (!cnt[order[i]])
            continue;
        size_t len = strlen(counts);
        snprintf(counts + len, sizeof counts - len, "%s%d %s", len ? " " : ": ", cnt[order[i]],
                 bt_status_name(order[i]));
    }
    const char *right = h->paused ? "PAUSED " : "";
    if (h->replay && h->replay->playing)
        right = "PLAYING ";
    const char *rec = h->recording ? (h->recording_failed ? "REC FAILED " : "REC ") : "";
    int rw = (int)strlen(right) + (int)strlen(rec);
    const char *mode = h->mode ? h->mode : "live";
    char range[48] = "";
    int shown = l->table.h - 1;
    if (t->view == BT_VIEW_OVERVIEW && shown > 0 && t->nvis > shown) /* which rows are on screen */
        snprintf(range, sizeof range, " (%d-%d shown)", t->scroll + 1,
                 t->scroll + shown < t->nvis ? t->scroll + shown : t->nvis);
    char nshown[80] = ""; /* a filter: how many of them match (and which are on screen) */
    if (t->filter[0]) {
        size_t len = (size_t)snprintf(nshown, sizeof nshown, "%s %d shown", t->utf8 ? " \u00b7" : " -",
                                      t->nvis);
        if (range[0] && len < sizeof nshown)
            snprintf(nshown + len, sizeof nshown - len, " (%d-%d)", t->scroll + 1,
                     t->scroll + shown < t->nvis ? t->scroll + shown : t->nvis);
        range[0] = '\0';
    }
    /* a Region failing (core/frame.c: its routes are stale) is counted here, beside the
     * routes it leaves unknown */
    char reg[64] = "";
    int *all = bt_xcalloc((size_t)nall + 1, sizeof *all);
    for (int r = 0; r < nall; r++)
        all[r] = r;
    struct bt_region_count rc = bt_region_count(h->cfg, t->evals, all, nall);
    free(all);
    if (rc.failing)
        snprintf(reg, sizeof reg, " %d region%s, %d failing,", rc.regions, rc.regions == 1 ? "" : "s",
                 rc.failing);
    char filt[96] = "";
    if (t->filter[0])
        snprintf(filt, sizeof filt, "  filter \"%s\"", t->filter);
    /* the longest form that leaves the counts, the filter and the right marks whole */
    int room = l->cols - rw - (int)strlen(counts) - tui_width(nshown) - tui_width(filt) - 1;
    snprintf(line, sizeof line, " bedtop  %s  %s %s %d route%s%s", mode, ts, reg, nall,
             nall == 1 ? "" : "s", range);
    if ((int)strlen(line) > room)
        snprintf(line, sizeof line, " %s %s%s %d route%s%s", mode, hm, reg, nall,
                 nall == 1 ? "" : "s", range);
    if ((int)strlen(line) > room)
        snprintf(line, sizeof line, " %s %s%s %d route%s%s", mode, dm, reg, nall,
                 nall == 1 ? "" : "s", range);
    if ((int)strlen(line) > room)
        snprintf(line, sizeof line, " %s %s%s %d route%s", mode, dm, reg, nall, nall == 1 ? "" : "s");
    if ((int)strlen(line) > room && reg[0]) /* the Regions go before the mode */
        snprintf(line, sizeof line, " %s %s %d route%s", mode, dm, nall, nall == 1 ? "" : "s");
    if ((int)strlen(line) > room) /* the mode goes before the word routes */
        snprintf(line, sizeof line, " %s %d route%s", dm, nall, nall == 1 ? "" : "s");
    if ((int)strlen(line) > room) /* then the word data: the minute is still the data minute */
        snprintf(line, sizeof line, " %s %d route%s", dhm, nall, nall == 1 ? "" : "s");
    if ((int)strlen(line) > room)
        snprintf(line, sizeof line, " %s %d", dhm, nall);
    int x = tui_text_cut(l->header.y, 0, l->cols - rw, line, A(t, BT_ROLE_HEADER));
    bool first = true;
    for (size_t i = 0; i < BT_ARRAY_LEN(order); i++) {
        if (!cnt[order[i]])
            continue;
        char part[32];
        snprintf(part, sizeof part, "%d %s", cnt[order[i]], bt_status_name(order[i]));
        x += tui_text(l->header.y, x, l->cols - x - rw, first ? ": " : " ", A(t, BT_ROLE_HEADER));
        x += tui_text_cut(l->header.y, x, l->cols - x - rw, part, A(t, tui_status_role(order[i])));
        first = false;
    }
    if (nshown[0])
        x += tui_text_cut(l->header.y, x, l->cols - x - rw - 1, nshown, A(t, BT_ROLE_HEADER));
    if (filt[0])
        x += tui_text_cut(l->header.y, x, l->cols - x - rw - 1, filt, A(t, BT_ROLE_HEADER));
    if (rw && l->cols - rw >= x) {
        int rx = l->cols - rw;
        rx += tui_text(l->header.y, rx, (int)strlen(rec), rec, A(t, BT_ROLE_CRIT) | A_BOLD);
        tui_text(l->header.y, rx, (int)strlen(right), right, A(t, BT_ROLE_STALE));
    }
}

void tui_draw_banner(struct bt_tui *t, const struct bt_layout *l, int only_route)
{
    if (!l->banner.h)
        return;
    char names[160] = "";
    int n = 0;
    for (int i = 0; i < t->nvis; i++) {
        int r = t->order[i];
        if ((only_route >= 0 && r != only_route) || !tui_estimate_only(&t->evals[r]))
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
    tui_fill(l->banner.y, 0, l->cols, A(t, BT_ROLE_BANNER));
    tui_text(l->banner.y, 0, l->cols, line, A(t, BT_ROLE_BANNER));
}

/* The key line, at every size: the F-key bar (htop's) from BT_LAYOUT_FBAR_COLS, else
 * "? help  q quit" and the keys an on-call engineer needs first; the answer to the
 * last key sits at its right (never over the status bar's position text) and
 * shortens the optional hints, never "? help  q quit". */
void tui_draw_fbar(struct bt_tui *t, const struct bt_layout *l)
{
    t->nfbar_x = 0;
    if (!l->fbar.h)
        return;
    int y = l->fbar.y, x = 0;
    tui_fill(y, 0, l->cols, A(t, BT_ROLE_NORMAL));
    bool detail = t->view == BT_VIEW_DETAIL;
    if (l->cols >= BT_LAYOUT_FBAR_COLS) {
        for (size_t i = 0; i < bt_nfbar && i + 1 < BT_ARRAY_LEN(t->fbar_x); i++) {
            if (bt_fbar[i].key == KEY_F(5) && t->host->replay)
                continue;
            char k[16]; /* "F" and any int */
            snprintf(k, sizeof k, "F%d", bt_fbar[i].key - KEY_F(0));
            t->fbar_x[t->nfbar_x] = x;
            t->fbar_key[t->nfbar_x++] = bt_fbar[i].key;
            x += tui_text(y, x, l->cols - x, k, A(t, BT_ROLE_KEY));
            x += tui_text(y, x, l->cols - x, bt_fbar[i].label, A(t, BT_ROLE_STATUS));
            x += tui_text(y, x, l->cols - x, "  ", A(t, BT_ROLE_NORMAL));
        }
        t->fbar_x[t->nfbar_x] = x;
    }
    /* key, what; the first two always */
    static const char *const ov[][2] = {{"?", "help"}, {"q", "quit"}, {"Enter", "detail"},
                                        {"Tab", "warnings"}, {"e", "events"}, {"/", "filter"},
                                        {"s", "sort"}};
    static const char *const det[][2] = {{"?", "help"}, {"q", "back"}, {"Tab", "next route"},
                                         {"e", "events"}, {"+/-", "zoom"}, {"[/]", "pan"}};
    static const char *const rp[][2] = {{"?", "help"}, {"q", "quit"}, {"Space", "play"},
                                        {"g", "go to"}, {"n/N", "next/prev"}, {"e", "events"}};
    const char *const(*keys)[2] = detail ? det : t->host->replay ? rp : ov;
    size_t nk = detail ? BT_ARRAY_LEN(det) : t->host->replay ? BT_ARRAY_LEN(rp) : BT_ARRAY_LEN(ov);
    int msg_w = t->msg[0] ? tui_width(t->msg) + 2 : 0;
    if (l->cols < BT_LAYOUT_FBAR_COLS) {
        x = 0;
        for (size_t i = 0; i < nk; i++) {
            int need = (int)strlen(keys[i][0]) + 1 + (int)strlen(keys[i][1]) + 3;
            if (i >= 2 && x + need + msg_w > l->cols)
                break;
            x += i ? 2 : 1; /* "? help  q quit": two spaces between keys */
            x += tui_text(y, x, l->cols - x, keys[i][0], A(t, BT_ROLE_KEY)) + 1;
            x += tui_text(y, x, l->cols - x, keys[i][1], A(t, BT_ROLE_STATUS));
        }
        x += 2;
    }
    if (t->msg[0] && l->cols - x > 2) {
        int w = msg_w < l->cols - x ? msg_w : l->cols - x;
        tui_fill(y, l->cols - w, w, A(t, BT_ROLE_STATUS));
        tui_text_cut(y, l->cols - w + 1, w - 1, t->msg, A(t, BT_ROLE_KEY));
    }
}

/* The status bar as parts, each with how long it stays as the width shrinks (0 last):
 * a part that does not fit whole goes, never half a word; what goes is still in the
 * help (? shows the status bar whole). */
#define SB_PARTS 16
struct sbar {
    struct {
        char s[200];
        enum bt_role role;
        int keep; /* 0 goes last */
    } p[SB_PARTS];
    int n;
};

static void sb_add(struct sbar *sb, int keep, enum bt_role role, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void sb_add(struct sbar *sb, int keep, enum bt_role role, const char *fmt, ...)
{
    if (sb->n >= SB_PARTS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sb->p[sb->n].s, sizeof sb->p[sb->n].s, fmt, ap);
    va_end(ap);
    sb->p[sb->n].role = role;
    sb->p[sb->n].keep = keep;
    sb->n++;
}

/* Replay: the recorded time and speed instead of the poll schedule and cost. */
static void replay_status(const struct bt_tui *t, struct sbar *sb)
{
    const struct bt_tui_host *h = t->host;
    const struct bt_tui_replay *rp = h->replay;
    char hm[16], dm[16];
    bt_fmt_hhmm(h->now, hm, sizeof hm);
    bt_fmt_hhmm(bt_data_minute(h->cfg, h->now), dm, sizeof dm);
    sb_add(sb, 0, BT_ROLE_STATUS, " data %s seen %s:%02d %s %gx |", dm, hm,
           (int)(((h->now % 60) + 60) % 60), rp->playing ? "playing" : "paused", rp->speed);
    sb_add(sb, 2, BT_ROLE_STATUS, " REPLAY");
    if (rp->problem)
        sb_add(sb, 0, BT_ROLE_STALE, " %s", rp->problem);
    if (rp->note)
        sb_add(sb, 1, BT_ROLE_WARN, " %s", rp->note);
}

/* Every part of the status bar, in order (the help prints them whole). */
static void status_parts(const struct bt_tui *t, struct sbar *sb)
{
    const struct bt_tui_host *h = t->host;
    sb->n = 0;
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
        char age[16];
        tui_fmt_age(h->now - last_ok, age, sizeof age);
        if (last_ok)
            sb_add(sb, 0, BT_ROLE_STATUS, " %s %s", srcs[s].tag, age);
        else
            sb_add(sb, 0, BT_ROLE_STATUS, " %s never", srcs[s].tag);
        if (srcs[s].src == BT_SRC_CLOUDWATCH) {
            int64_t newest = 0;
            for (int r = 0; r < h->cfg->nroutes; r++)
                if (bt_eval_cw_minute(&t->evals[r]) > newest)
                    newest = bt_eval_cw_minute(&t->evals[r]);
            if (newest) {
                tui_fmt_age(h->now - (newest + 60), age, sizeof age);
                sb_add(sb, 1, BT_ROLE_STATUS, " lag %s", age);
            }
        }
        if (errors)
            sb_add(sb, 0, BT_ROLE_STALE, " STALE %d", errors);
        sb_add(sb, 0, BT_ROLE_STATUS, " |");
    }
    if (h->replay) {
        replay_status(t, sb);
        return;
    }
    if (h->paused) {
        sb_add(sb, 1, BT_ROLE_STATUS, " paused |");
    } else if (h->next_poll > 0) {
        char age[16];
        tui_fmt_age(h->next_poll - h->now, age, sizeof age);
        sb_add(sb, 1, BT_ROLE_STATUS, " next poll %s |", age);
    } else {
        sb_add(sb, 1, BT_ROLE_STATUS, " next poll - |");
    }
    sb_add(sb, 4, BT_ROLE_STATUS, " every %.0fs |", h->interval); /* the countdown implies it */
    char si[16];
    if (isnan(h->metrics_per_day)) {
        sb_add(sb, 3, BT_ROLE_STATUS, " metrics/day n/a |"); /* not "? ...": that reads as a key */
    } else {
        bt_fmt_count(h->metrics_per_day, si, sizeof si);
        if (isnan(h->metrics_per_min) || isnan(h->usd_per_day)) {
            sb_add(sb, 3, BT_ROLE_STATUS, " %s metrics/day |", si);
        } else { /* measured: GetMetricData is billed per metric requested */
            char pm[16];
            bt_fmt_count(h->metrics_per_min, pm, sizeof pm);
            sb_add(sb, 3, BT_ROLE_STATUS, " %s metrics/min %s/day $%.2f/day |", pm, si,
                   h->usd_per_day);
        }
    }
    sb_add(sb, 2, BT_ROLE_STATUS, " %s", h->mode ? h->mode : "live");
    if (h->recording)
        sb_add(sb, 0, BT_ROLE_STALE,
               h->recording_failed ? " REC FAILED (lines dropped) %s" : " REC %s", h->recording);
}

/* The go-to and marker prompts: the input, then the longest hint that fits whole (the
 * help's g line has every form). */
static void tui_draw_prompt(struct bt_tui *t, const struct bt_layout *l)
{
    static const char *const go[] = {
        "(14:32, -30m from the end, +5m from the start, ISO; Enter goes, Esc cancels)",
        "(14:32, -30m, +5m or ISO; Enter goes, Esc cancels)",
        "(14:32, -30m, +5m; Enter, Esc)",
        "(Enter, Esc)",
    };
    static const char *const mark[] = {"(Enter adds, Esc cancels)", "(Enter, Esc)"};
    bool g = t->prompt == PR_GOTO;
    const char *const *hints = g ? go : mark;
    size_t nh = g ? BT_ARRAY_LEN(go) : BT_ARRAY_LEN(mark);
    char line[256];
    int y = l->status.y;
    size_t i = 0;
    for (;; i++) {
        snprintf(line, sizeof line, " %s: %s_   %s", g ? "go to" : "marker note", t->input,
                 i < nh ? hints[i] : "");
        if (i >= nh || tui_width(line) <= l->cols)
            break;
    }
    tui_text_cut(y, 0, l->cols, line, A(t, BT_ROLE_STATUS));
}

/* The status bar whole, for the help (the bar itself drops parts at 80 columns). */
void tui_status_text(const struct bt_tui *t, char *out, size_t n)
{
    struct sbar sb;
    status_parts(t, &sb);
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < sb.n && o < n; i++)
        o += (size_t)snprintf(out + o, n - o, "%s", sb.p[i].s + (i ? 0 : 1));
}

void tui_draw_status(struct bt_tui *t, const struct bt_layout *l)
{
    int y = l->status.y;
    tui_fill(y, 0, l->cols, A(t, BT_ROLE_STATUS));
    if (t->filtering) {
        char line[128];
        snprintf(line, sizeof line, " filter: %s_   (Enter keeps, Esc clears)", t->filter);
        tui_text(y, 0, l->cols, line, A(t, BT_ROLE_STATUS));
        return;
    }
    if (t->searching) {
        char line[128];
        snprintf(line, sizeof line, " search: %s_   (F3 or Down: next match, Enter or Esc ends)",
                 t->search);
        tui_text_word(y, 0, l->cols, line, A(t, BT_ROLE_STATUS));
        return;
    }
    if (t->prompt != PR_NONE) {
        tui_draw_prompt(t, l);
        return;
    }
    struct sbar sb;
    status_parts(t, &sb);
    /* the parts that fit, dropped by how long they stay (the last of a rank first) */
    bool on[SB_PARTS];
    int width = 0, cut = 0;
    for (int i = 0; i < sb.n; i++) {
        on[i] = true;
        width += tui_width(sb.p[i].s);
    }
    for (int keep = 4; keep >= 1 && width > l->cols; keep--)
        for (int i = sb.n - 1; i >= 0 && width > l->cols; i--)
            if (on[i] && sb.p[i].keep == keep) {
                on[i] = false;
                width -= tui_width(sb.p[i].s);
                cut++;
            }
    int x = 0;
    for (int i = 0; i < sb.n; i++) {
        if (!on[i])
            continue;
        /* a " |" left last by what went is dropped too */
        if (!strcmp(sb.p[i].s, " |") || sb.p[i].s[strlen(sb.p[i].s) - 1] == '|') {
            bool more = false;
            for (int j = i + 1; j < sb.n; j++)
                more |= on[j];
            if (!more && cut) {
                char trim[200];
                bt_strlcpy(trim, sb.p[i].s, sizeof trim);
                trim[strlen(trim) - (strlen(trim) > 1 ? 2 : 1)] = '\0';
                x += tui_text_word(y, x, l->cols - x, trim, A(t, sb.p[i].role));
                continue;
            }
        }
        x += tui_text_word(y, x, l->cols - x, sb.p[i].s, A(t, sb.p[i].role));
    }
    if (cut && x + 2 <= l->cols) /* more in the help */
        tui_glyph(y, x + 1, t->utf8 ? 0x2026 : '~', A(t, BT_ROLE_DIM));
}

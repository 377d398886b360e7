/* The header, the ESTIMATE ONLY banner and the status bar. */
#include "tui/view.h"

#include <math.h>
#include <stdio.h>
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
    int cnt[4] = {0};
    for (int i = 0; i < t->nvis; i++)
        cnt[t->evals[t->order[i]].status]++;
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
    /* a Region failing (core/frame.c: its routes are stale) is counted here, beside the
     * routes it leaves unknown */
    char reg[64] = "";
    struct bt_region_count rc = bt_region_count(h->cfg, t->evals, t->order, t->nvis);
    if (rc.failing)
        snprintf(reg, sizeof reg, " %d region%s, %d failing,", rc.regions, rc.regions == 1 ? "" : "s",
                 rc.failing);
    char filt[96] = "";
    if (t->filter[0])
        snprintf(filt, sizeof filt, "  filter \"%s\"", t->filter);
    /* the longest form that leaves the counts, the filter and the right marks whole */
    int room = l->cols - rw - (int)strlen(counts) - tui_width(filt) - 1;
    snprintf(line, sizeof line, " bedtop  %s  %s %s %d route%s%s", mode, ts, reg, t->nvis,
             t->nvis == 1 ? "" : "s", range);
    if ((int)strlen(line) > room)
        snprintf(line, sizeof line, " %s %s%s %d route%s%s", mode, hm, reg, t->nvis,
                 t->nvis == 1 ? "" : "s", range);
    if ((int)strlen(line) > room)
        snprintf(line, sizeof line, " %s %s%s %d route%s%s", mode, dm, reg, t->nvis,
                 t->nvis == 1 ? "" : "s", range);
    if ((int)strlen(line) > room)
        snprintf(line, sizeof line, " %s %s%s %d route%s", mode, dm, reg, t->nvis, t->nvis == 1 ? "" : "s");
    if ((int)strlen(line) > room && reg[0]) /* the Regions go before the mode */
        snprintf(line, sizeof line, " %s %s %d route%s", mode, dm, t->nvis, t->nvis == 1 ? "" : "s");
    if ((int)strlen(line) > room)
        snprintf(line, sizeof line, " %s %d", dm, t->nvis);
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

/* Replay: the recorded time and speed instead of the poll schedule and cost. */
static void draw_replay_status(struct bt_tui *t, const struct bt_layout *l, int x)
{
    const struct bt_tui_host *h = t->host;
    const struct bt_tui_replay *rp = h->replay;
    int y = l->status.y;
    char part[160], hm[16], dm[16];
    bt_fmt_hhmm(h->now, hm, sizeof hm);
    bt_fmt_hhmm(bt_data_minute(h->cfg, h->now), dm, sizeof dm);
    snprintf(part, sizeof part, " data %s seen %s:%02d %s %gx |", dm, hm,
             (int)(((h->now % 60) + 60) % 60), rp->playing ? "playing" : "paused", rp->speed);
    x += tui_text(y, x, l->cols - x, part, A(t, BT_ROLE_STATUS));
    x += tui_text(y, x, l->cols - x, " REPLAY", A(t, BT_ROLE_STATUS));
    if (rp->problem) {
        snprintf(part, sizeof part, " %s", rp->problem);
        x += tui_text(y, x, l->cols - x, part, A(t, BT_ROLE_STALE));
    }
    if (rp->note) {
        snprintf(part, sizeof part, " %s", rp->note);
        tui_text(y, x, l->cols - x, part, A(t, BT_ROLE_WARN));
    }
}

void tui_draw_status(struct bt_tui *t, const struct bt_layout *l)
{
    const struct bt_tui_host *h = t->host;
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
        tui_text(y, 0, l->cols, line, A(t, BT_ROLE_STATUS));
        return;
    }
    if (t->prompt != PR_NONE) {
        char line[192];
        if (t->prompt == PR_GOTO)
            snprintf(line, sizeof line, " go to: %s_   (14:32, -30m from the end, +5m from the start, ISO; Enter goes, "
                     "Esc cancels)", t->input);
        else
            snprintf(line, sizeof line, " marker note: %s_   (Enter adds, Esc cancels)", t->input);
        tui_text(y, 0, l->cols, line, A(t, BT_ROLE_STATUS));
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
        tui_fmt_age(h->now - last_ok, age, sizeof age);
        if (last_ok)
            snprintf(part, sizeof part, " %s %s", srcs[s].tag, age);
        else
            snprintf(part, sizeof part, " %s never", srcs[s].tag);
        x += tui_text(y, x, l->cols - x, part, A(t, BT_ROLE_STATUS));
        if (srcs[s].src == BT_SRC_CLOUDWATCH) {
            int64_t newest = 0;
            for (int r = 0; r < h->cfg->nroutes; r++)
                if (t->evals[r].minute > newest)
                    newest = t->evals[r].minute;
            if (newest) {
                tui_fmt_age(h->now - (newest + 60), age, sizeof age);
                snprintf(part, sizeof part, " lag %s", age);
                x += tui_text(y, x, l->cols - x, part, A(t, BT_ROLE_STATUS));
            }
        }
        if (errors) {
            snprintf(part, sizeof part, " STALE %d", errors);
            x += tui_text(y, x, l->cols - x, part, A(t, BT_ROLE_STALE));
        }
        x += tui_text(y, x, l->cols - x, " |", A(t, BT_ROLE_STATUS));
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
        tui_fmt_age(h->next_poll - h->now, age, sizeof age);
        snprintf(part, sizeof part, " next poll %s |", age);
    } else {
        snprintf(part, sizeof part, " next poll - |");
    }
    x += tui_text(y, x, l->cols - x, part, A(t, BT_ROLE_STATUS));
    snprintf(part, sizeof part, " every %.0fs |", h->interval);
    x += tui_text(y, x, l->cols - x, part, A(t, BT_ROLE_STATUS));
    char si[16];
    if (isnan(h->metrics_per_day)) {
        snprintf(part, sizeof part, " metrics/day n/a |"); /* not "? ...": that reads as a key */
    } else {
        bt_fmt_count(h->metrics_per_day, si, sizeof si);
        if (isnan(h->metrics_per_min) || isnan(h->usd_per_day)) {
            snprintf(part, sizeof part, " %s metrics/day |", si);
        } else { /* measured: GetMetricData is billed per metric requested */
            char pm[16];
            bt_fmt_count(h->metrics_per_min, pm, sizeof pm);
            snprintf(part, sizeof part, " %s metrics/min %s/day $%.2f/day |", pm, si,
                     h->usd_per_day);
        }
    }
    x += tui_text(y, x, l->cols - x, part, A(t, BT_ROLE_STATUS));
    snprintf(part, sizeof part, " %s", h->mode ? h->mode : "live");
    x += tui_text(y, x, l->cols - x, part, A(t, BT_ROLE_STATUS));
    if (h->recording) {
        snprintf(part, sizeof part, h->recording_failed ? " REC FAILED (lines dropped) %s" : " REC %s",
                 h->recording);
        tui_text(y, x, l->cols - x, part, A(t, BT_ROLE_STALE));
    }
}

/* The header, the ESTIMATE ONLY banner and the status bar. */
#include "tui/view.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/dataminute.h"
#include "core/format.h"
#include "core/util.h"
#include "tui/keys.h"

void tui_draw_header(struct bt_tui *t, const struct bt_layout *l)
{
    const struct bt_tui_host *h = t->host;
    tui_fill(l->header.y, 0, l->cols, A(t, BT_ROLE_HEADER));
    char ts[40], line[256];
    if (h->replay) { /* the one clock: the data minute on screen */
        char iso[32];
        bt_fmt_iso(bt_data_minute(h->cfg, h->now), iso, sizeof iso);
        snprintf(ts, sizeof ts, "data %s", iso);
    } else {
        bt_fmt_iso(h->now, ts, sizeof ts);
    }
    int cnt[4] = {0};
    for (int i = 0; i < t->nvis; i++)
        cnt[t->evals[t->order[i]].status]++;
    snprintf(line, sizeof line, " bedtop  %s  %s  %d route%s", h->mode ? h->mode : "live", ts,
             t->nvis, t->nvis == 1 ? "" : "s");
    int shown = l->table.h - 1;
    if (t->view == BT_VIEW_OVERVIEW && shown > 0 && t->nvis > shown) {
        /* the route list scrolls too: which of them are on screen */
        size_t len = strlen(line);
        snprintf(line + len, sizeof line - len, " (%d-%d shown)", t->scroll + 1,
                 t->scroll + shown < t->nvis ? t->scroll + shown : t->nvis);
    }
    int x = tui_text_cut(l->header.y, 0, l->cols, line, A(t, BT_ROLE_HEADER));
    static const enum bt_status order[] = {BT_ST_CRIT, BT_ST_WARN, BT_ST_UNKNOWN, BT_ST_OK};
    bool first = true;
    for (size_t i = 0; i < BT_ARRAY_LEN(order); i++) {
        if (!cnt[order[i]])
            continue;
        char part[32];
        snprintf(part, sizeof part, "%d %s", cnt[order[i]], bt_status_name(order[i]));
        x += tui_text(l->header.y, x, l->cols - x, first ? ": " : " ", A(t, BT_ROLE_HEADER));
        x += tui_text_cut(l->header.y, x, l->cols - x, part, A(t, tui_status_role(order[i])));
        first = false;
    }
    if (t->filter[0]) {
        char f[96];
        snprintf(f, sizeof f, "  filter \"%s\"", t->filter);
        x += tui_text(l->header.y, x, l->cols - x, f, A(t, BT_ROLE_HEADER));
    }
    const char *right = h->paused ? "PAUSED " : "";
    if (h->replay && h->replay->playing)
        right = "PLAYING ";
    int rw = (int)strlen(right);
    if (rw && l->cols - rw > x)
        tui_text(l->header.y, l->cols - rw, rw, right, A(t, BT_ROLE_STALE));
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

/* The F-key bar of wide terminals (htop's): "F1Help  F3Search ... F10Quit". */
void tui_draw_fbar(struct bt_tui *t, const struct bt_layout *l)
{
    t->nfbar_x = 0;
    if (!l->fbar.h)
        return;
    int y = l->fbar.y, x = 0;
    tui_fill(y, 0, l->cols, A(t, BT_ROLE_NORMAL));
    for (size_t i = 0; i < bt_nfbar && i + 1 < BT_ARRAY_LEN(t->fbar_x); i++) {
        if (bt_fbar[i].key == KEY_F(5) && t->host->replay)
            continue;
        char k[8];
        snprintf(k, sizeof k, "F%d", bt_fbar[i].key - KEY_F(0));
        t->fbar_x[t->nfbar_x] = x;
        t->fbar_key[t->nfbar_x++] = bt_fbar[i].key;
        x += tui_text(y, x, l->cols - x, k, A(t, BT_ROLE_KEY));
        x += tui_text(y, x, l->cols - x, bt_fbar[i].label, A(t, BT_ROLE_STATUS));
        x += tui_text(y, x, l->cols - x, "  ", A(t, BT_ROLE_NORMAL));
    }
    t->fbar_x[t->nfbar_x] = x;
}

/* The right end of the status bar: a message answering the last key, else the hint
 * (in the detail, which rows of its document are shown). */
static void status_hint(struct bt_tui *t, const struct bt_layout *l, int x)
{
    int y = l->status.y;
    const char *hint = t->view == BT_VIEW_DETAIL ? "? help  q back" : "? help  q quit";
    /* a message answers the key just pressed, so it may cover the right of the bar */
    if (t->msg[0])
        hint = t->msg;
    int hw = tui_width(hint) + 2;
    if (t->msg[0] && hw > l->cols)
        hw = l->cols;
    if (t->msg[0] || l->cols - hw > x) {
        tui_fill(y, l->cols - hw, hw, A(t, BT_ROLE_STATUS));
        tui_text(y, l->cols - hw + 1, hw - 1, hint, A(t, t->msg[0] ? BT_ROLE_KEY : BT_ROLE_STATUS));
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
        x += tui_text(y, x, l->cols - x, part, A(t, BT_ROLE_WARN));
    }
    status_hint(t, l, x);
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
        snprintf(part, sizeof part, " ? metrics/day |");
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
        x += tui_text(y, x, l->cols - x, part, A(t, BT_ROLE_STALE));
    }
    status_hint(t, l, x);
}

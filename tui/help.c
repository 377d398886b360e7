/* The help overlay (from the key table) and the too-small screen. */
#include "tui/view.h"

#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "tui/keys.h"

/* A legend entry "glyph name, glyph name ...", the glyphs as drawn (UTF-8 or ASCII). */
static void legend(struct bt_tui *t, int *n, int width, const char *head, const uint32_t *g,
                   const char *const *names, int k)
{
    char line[1024]; /* every glyph of the graphs (TUI_NPAT of them) */
    int len = 0;
    for (int i = 0; i < k && len < (int)sizeof line - 64; i++) {
        char enc[8];
        enc[bt_utf8_encode(g[i], enc)] = '\0';
        len += snprintf(line + len, sizeof line - (size_t)len, "%s %s%s", enc, names[i],
                        i + 1 < k ? ", " : "");
    }
    tui_entry(t->help_lines, n, width, head, line, BT_ROLE_HELP);
}

/* What every column heading, mark and status-bar field means: the legend, the
 * help's first page. */
static const struct {
    enum bt_col col;
    const char *text;
} col_legend[] = {
    {BT_COL_NAME, "the route's name (config or discovered)"},
    {BT_COL_MODEL, "model or inference profile ID"},
    {BT_COL_REGION, "AWS Region"},
    {BT_COL_EP, "endpoint: runtime (InvokeModel/Converse) or mantle (OpenAI-compatible)"},
    {BT_COL_INF, "inference: on-demand, cross-region or global profile"},
    {BT_COL_STATUS, "status: OK, WARN, CRIT, UNKN (not enough known); * after it: crit in the "
                    "last 15 minutes (e lists when)"},
    {BT_COL_HEADPCT, "headroom: quota left, % of the quota, coloured by the warn/crit "
                     "thresholds alone; a stale row shows the age of its data (old 4m)"},
    {BT_COL_BAR, "the quota group's use against its quota (glyphs below); \"quota 0\": known "
                 "to be 0, \"quota ?\": not known"},
    {BT_COL_FITS, "more calls that fit now, and the side that limits them: tpm, rpm, in and "
                  "out (mantle), r-in and r-out (reserved tier), day, acct (daily quotas), conc "
                  "(concurrent requests)"},
    {BT_COL_SETTLED, "settled tokens/min: charged at completion (input + cache write + "
                     "output x burndown)"},
    {BT_COL_ESTIMATED, "EstimatedTPMQuotaUsage: CloudWatch's estimate, blind to reservations"},
    {BT_COL_RESERVED, "held tokens/min: max_tokens reservations of the calls in flight"},
    {BT_COL_QUOTA, "the TPM quota and where it comes from: acct (Service Quotas, this "
                   "account), cfg (config), dflt (AWS default), ? none known"},
    {BT_COL_RPM, "invocations per minute (CloudWatch Invocations: calls accepted); the rpm "
                "quota's use is the detail's rpm line"},
    {BT_COL_THR, "throttles per minute (InvocationThrottles)"},
    {BT_COL_P50, "median latency"},
    {BT_COL_P99, "99th-percentile latency"},
    {BT_COL_INFL, "calls in flight / the concurrency limit (INFL 40/25: over it)"},
    {BT_COL_TREND, "wide terminals: the route's used tokens/min, one bar a minute up to the "
                   "data minute on screen, against its quota (full height: the quota)"},
    {BT_COL_WARN, "warning codes, worst first (+N: more)"},
};

static void legend_page(struct bt_tui *t, int *n, int width)
{
    tui_add_wline(t->help_lines, n, BT_ROLE_KEY, "Legend: columns, marks, the status bar", 0,
                  BT_ROLE_KEY);
    for (size_t i = 0; i < BT_ARRAY_LEN(col_legend); i++)
        tui_entry(t->help_lines, n, width, bt_col_info[col_legend[i].col].title,
                  col_legend[i].text, BT_ROLE_HELP);
    tui_entry(t->help_lines, n, width, "do ...", "the line above the warnings: the worst "
              "route's worst warning and what to do about it", BT_ROLE_HELP);
    tui_entry(t->help_lines, n, width, "CW SQ ADM", "status bar: CloudWatch, Service Quotas, "
              "admission counters: time since each last answered (never: not yet)", BT_ROLE_HELP);
    tui_entry(t->help_lines, n, width, "lag", "status bar: how far the newest CloudWatch "
              "minute trails the clock (publishing delay + polling)", BT_ROLE_HELP);
    tui_entry(t->help_lines, n, width, "STALE n", "status bar: routes whose source fails; "
              "their rows are dimmed", BT_ROLE_HELP);
    tui_entry(t->help_lines, n, width, "metrics", "status bar: CloudWatch metrics requested "
              "(GetMetricData is billed per metric) and their price; n/a: not measured yet",
              BT_ROLE_HELP);
    tui_entry(t->help_lines, n, width, "regions", "header, \"2 regions, 1 failing\": a Region "
              "whose CloudWatch or Service Quotas calls fail; its routes are UNKN (STALE)",
              BT_ROLE_HELP);
    tui_entry(t->help_lines, n, width, "REC", "header: recording to the file named in the "
              "status bar (REC FAILED: writes fail, lines dropped)", BT_ROLE_HELP);
    if (t->host->replay)
        tui_entry(t->help_lines, n, width, "data HH:MM", "replay: the CloudWatch data minute on "
                  "screen (every time the replay names is one); seen: the recorded instant",
                  BT_ROLE_HELP);
    tui_add_wline(t->help_lines, n, BT_ROLE_HELP, "", 0, BT_ROLE_HELP);
}

/* The help: every key of this mode from the key table first (wrapped at word
 * boundaries), the mouse, the status bar whole (at 80 columns the bar drops parts),
 * then the legend and what each glyph means. Returns the number of lines. */
int tui_help_build(struct bt_tui *t, int width)
{
    char keys[64][96];
    int nk = bt_keys_help_mode(keys, 64, t->host->replay ? BT_CTX_REPLAY : BT_CTX_LIVE);
    int n = 0;
    tui_add_wline(t->help_lines, &n, BT_ROLE_KEY, "Keys (the legend follows them)", 0, BT_ROLE_KEY);
    for (int i = 0; i < nk; i++) {
        char name[16];
        snprintf(name, sizeof name, "%.13s", keys[i]);
        for (int k = (int)strlen(name); k > 0 && name[k - 1] == ' '; k--)
            name[k - 1] = '\0';
        tui_entry(t->help_lines, &n, width, name, keys[i] + 14, BT_ROLE_HELP);
    }
    tui_add_wline(t->help_lines, &n, BT_ROLE_HELP, "", 0, BT_ROLE_HELP);
    tui_entry(t->help_lines, &n, width, "mouse", "click a row (or one of its warnings) to select it, "
          "double-click for its detail; "
          "click a column heading to sort by it (again inverts); the wheel scrolls what is "
          "under the pointer; the F-key bar is clickable", BT_ROLE_HELP);
    char status[1024];
    tui_status_text(t, status, sizeof status);
    tui_entry(t->help_lines, &n, width, "status now", status, BT_ROLE_HELP);
    tui_add_wline(t->help_lines, &n, BT_ROLE_HELP, "", 0, BT_ROLE_HELP);
    legend_page(t, &n, width);
    uint32_t bar[BT_SEG_COUNT + 2];
    for (int k = 0; k <= BT_SEG_COUNT; k++)
        bar[k] = bt_graph_seg_glyph((enum bt_seg)k, t->utf8);
    bar[BT_SEG_COUNT + 1] = '!';
    static const char *const bar_names[] = {"settled", "estimated", "used (the quota group's, "
                                            "held reservations included)", "free quota",
                                            "over the quota"};
    legend(t, &n, width, "USED/QUOTA", bar, bar_names, BT_SEG_COUNT + 2);
    uint32_t ser[TUI_NPAT];
    const char *ser_names[TUI_NPAT];
    for (int k = 0; k < TUI_NPAT; k++) {
        ser[k] = t->utf8 ? tui_patterns[k].utf8 : tui_patterns[k].ascii;
        ser_names[k] = tui_patterns[k].name;
    }
    legend(t, &n, width, "graphs", ser, ser_names, TUI_NPAT);
    if (t->host->replay) {
        uint32_t tl[4] = {t->utf8 ? 0x25C6 : '#', '!', 'M', t->utf8 ? 0x00B7 : '.'};
        static const char *const tl_names[] = {"now", "a warning or throttling started",
                                               "a marker", "not scanned yet"};
        legend(t, &n, width, "timeline", tl, tl_names, 4);
    }
    tui_entry(t->help_lines, &n, width, "stale row", "dimmed, HEAD% shows the age of its newest data",
              BT_ROLE_HELP);
    return n;
}

/* The help overlay: scrolls (Up/Down, PgUp/PgDn, Home/End, wheel), its position in
 * the bottom border. */
void tui_draw_help(struct bt_tui *t, const struct bt_layout *l, int n)
{
    struct bt_rect h = l->help;
    if (h.w < 10 || h.h < 3)
        return;
    attr_t a = A(t, BT_ROLE_HELP);
    tui_box(t, h, t->host->replay ? " bedtop replay keys (Esc or ? closes) "
                                   : " bedtop keys (Esc or ? closes) ", a);
    struct bt_rect body = {h.x + 2, h.y + 1, h.w - 4, h.h - 2};
    tui_draw_lines(t, body, t->help_lines, n, &t->hsc);
    tui_box_scroll_tag(h, &t->hsc, body.h, "PgDn/PgUp, wheel", a);
}

void tui_draw_too_small(struct bt_tui *t, int cols, int rows)
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
        tui_text(y0 + i, x, cols - x, lines[i], A(t, i == 0 ? BT_ROLE_WARN : BT_ROLE_NORMAL));
    }
}

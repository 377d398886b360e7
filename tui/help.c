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
    char line[400];
    int len = 0;
    for (int i = 0; i < k && len < (int)sizeof line - 64; i++) {
        char enc[8];
        enc[bt_utf8_encode(g[i], enc)] = '\0';
        len += snprintf(line + len, sizeof line - (size_t)len, "%s %s%s", enc, names[i],
                        i + 1 < k ? ", " : "");
    }
    tui_entry(t->help_lines, n, width, head, line, BT_ROLE_HELP);
}

/* The help: every key of this mode from the key table (wrapped at word boundaries),
 * the mouse, then what each glyph means. Returns the number of lines. */
int tui_help_build(struct bt_tui *t, int width)
{
    char keys[64][96];
    int nk = bt_keys_help_mode(keys, 64, t->host->replay ? BT_CTX_REPLAY : BT_CTX_LIVE);
    int n = 0;
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
    uint32_t bar[BT_SEG_COUNT + 2];
    for (int k = 0; k <= BT_SEG_COUNT; k++)
        bar[k] = bt_graph_seg_glyph((enum bt_seg)k, t->utf8);
    bar[BT_SEG_COUNT + 1] = '!';
    static const char *const bar_names[] = {"settled", "estimated", "reserved", "free quota",
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
    char pos[48];
    tui_scroll_pos(&t->hsc, body.h, pos, sizeof pos);
    if (pos[0]) {
        char tag[80];
        snprintf(tag, sizeof tag, " %s  PgDn/PgUp, wheel ", pos);
        int w = tui_width(tag);
        tui_text(h.y + h.h - 1, h.x + h.w - w - 2, w, tag, a | A_BOLD);
    }
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
